"""compare(): score several runs on the same users and compare them, overall and by segment.

Each run is scored by `evaluate` (the same macros, options and checks as `ndcg-duck eval`). The
per-user tables are joined on the user in DuckDB, which also computes every variance and count
(sql/ndcg_compare.sql) and the exact sums of every mean (means.py); `stats` turns those into
intervals and p-values.
"""

from __future__ import annotations

import math
import signal
from typing import TYPE_CHECKING, NamedTuple, Optional

import duckdb

from .. import interrupts, means, objectstore, options as registry, outcome
from ..report import segments as segmenting
from ..report.clashes import Input, Output, refuse_clashes
from . import stats
from ..errors import InputError
from ..evaluation import beyond
from ..evaluation.evaluate import run as evaluate_run
from ..sqltext import ident, literal
from ..sqlfiles import register

if TYPE_CHECKING:  # pyarrow loads on first use (see evaluate.py)
    import pyarrow as pa

ALL = "(all)"


class Comparison(NamedTuple):
    """rows: one dict per metric x segment x run (and, with several baselines, per pair), as
    ROW_FIELDS; per_user: a table of each paired user's values per run and the differences (or
    None); info: what was compared and how (baseline, pairs, test, correction, family, users,
    runs, notes)."""

    rows: list
    per_user: Optional[pa.Table]
    info: dict


ROW_FIELDS = ("metric", "cutoff", "segment", "run", "baseline", "users", "mean", "ci_low",
              "ci_high", "diff", "diff_ci_low", "diff_ci_high", "rel_diff", "d_z", "wins", "ties",
              "losses", "p_value", "p_adjusted", "significant", "tested", "note", "test",
              "correction", "family", "users_without_recommendations")


# the note of a comparison whose per-user differences are all 0: why it has no test (whatever the
# test: there is no difference to test) and a zero-width interval
ALL_ZERO = "every per-user difference is 0 (the runs score each user the same): no test"


# the note of a randomization test that enumerated every sign assignment (stats.is_exact)
EXACT_RANDOMIZATION = ("randomization p-value exact: every sign assignment enumerated, as where "
                       "2^m <= --n-resamples for m users with a nonzero difference (README, "
                       "compare)")


def no_shared_user(names) -> str:
    """The message when no user has recommendations in every run (under any --missing)."""
    return (f"no user has recommendations in every run ({', '.join(names)}): there is no user to "
            f"compare the runs on; check that the runs are for the same users, with the same ids")


# the note of a bootstrap whose resamples were too many to draw (stats.BOOTSTRAP_DRAWS)
NORMAL_BOOTSTRAP = ("bootstrap in its normal-theory form, as where users x resamples exceed "
                    f"{stats.BOOTSTRAP_DRAWS:,} (README, compare)")


def compare(rels, runs, k=registry.BY_NAME["k"].default, **settings) -> Comparison:
    """Compare the runs (a {name: recs} mapping, or (name, recs) pairs, in order; recs as
    `evaluate` takes them) on the judgments `rels`.

    Every run is scored on the same users (with missing='skip', the users every run has). The
    first run (or `baseline`) is compared with each other run; all_pairs=True compares every
    pair. test: 't' (paired t-test), 'randomization' (paired sign flip, n_resamples, seed),
    'bootstrap' or 'none'; correction: 'holm' (the default for more than one test),
    'bonferroni' or 'none', over every test made. ci is the level of the intervals, alpha that
    of `significant`. segments (a path or table with a user column and the column `by`) breaks
    every result down by segment; a segment with fewer than min_users users gets means but no
    test. per_user=True returns each user's values and differences; plot='out.png' draws the
    sorted per-user differences and the per-segment differences. Other keyword arguments (k,
    gain, missing, user_col, ...) are evaluate's. Raises InputError for bad input or options
    and warns (NdcgWarning) as evaluate does. Needs scipy (pip install 'ndcg-duck[compare]').
    """
    def call():
        checked = checked_runs(runs)
        with objectstore.using(settings.get("s3_endpoint")):
            refuse_clashes([Output("plot=", settings.get("plot"), "the plot")],
                           [Input("relevance", "rels=", rels),
                            *(Input("recommendations", f"runs[{name!r}]", recs)
                              for name, recs in checked),
                            *(Input(name, f"{name}=", settings.get(name))
                              for name in ("segments", "train", "items"))])
            with interrupts.stoppable(signals=(signal.SIGINT,)):
                return compare_runs(rels, checked, k, **settings)
    return outcome.in_python(call)


@objectstore.within
def compare_runs(rels, runs, k=registry.BY_NAME["k"].default, *, baseline=None, all_pairs=False, test="t", correction=None,
            n_resamples=10000, seed=42, alpha=0.05, ci=0.95, segments=None, by=None,
            segments_format=None, min_users=30, per_user=False, plot=None, threads=None,
            memory_limit=None, temp_dir=None, s3_endpoint=None, **options) -> tuple:
    """compare() with its messages in the command line's words: returns the comparison and the
    notes (warnings) of the runs' evaluations."""
    stats.require("scipy", "compare")
    if plot is not None:
        stats.require("matplotlib", "--plot")
    runs = checked_runs(runs)
    names = [name for name, _ in runs]
    pairs = run_pairs(names, baseline, all_pairs)
    check_options(test, correction, n_resamples, seed, alpha, ci, min_users, segments, by)
    if plot is not None:
        from ..report import plot as plotting

        plotting.check_path(plot)
    con = duckdb.connect()
    with interrupts.watching(con):
        register(con)
        user_col = options.get("user_col") or registry.USER_COL
        where = None
        if segments is not None:
            where = segmenting.attach(con, segments, by, user_col, segments_format)
        tables, summaries, notes, per_run_found, unranked = [], [], [], [], []
        for name, recs in runs:
            found = {}

            def after(work, found=found):
                # the judged users the run has no recommendations for (usually few)
                unranked.append(work.sql("SELECT DISTINCT user_id FROM ndcg_all "
                                         "WHERE has_judgments AND NOT has_ranking").to_arrow_table())
                found.update(_per_run_values(work, segments, by, user_col, segments_format,
                                             n_resamples if test == "bootstrap" else 0, seed))
            result, said = evaluate_run(recs, rels, k, con=con, per_user=True, threads=threads,
                                        memory_limit=memory_limit, temp_dir=temp_dir,
                                        s3_endpoint=s3_endpoint, after=after, **options)
            per_run_found.append(found)
            tables.append(result.per_user)
            summaries.append(result.summary)
            outcome.add_run_notes(notes, name, said)
        metrics = [c for c in tables[0].column_names if c in summaries[0]]
        users = _pair_users(con, tables, metrics, where)
        _check_shared(con, unranked, names)
        aggregates = _aggregates(con, len(runs), pairs, metrics, segments is not None)
        info = outcome.compare_info(
            names, summaries, pairs, users["paired"], users["paired"] + users["left_out"],
            metrics, dict(all_pairs=all_pairs, test=test, ci=ci, alpha=alpha,
                          min_users=min_users, n_resamples=n_resamples, seed=seed, by=by))
        rows = metric_rows(con, aggregates, names, pairs, metrics, info)
        finish_rows(rows, names, pairs, info, summaries, per_run_found, aggregates, correction)
        table = _per_user(con, names, pairs, metrics, user_col, segments is not None) if per_user else None
        if plot is not None:
            from ..report import plot as plotting

            plotting.compare_figure(con, rows, names, pairs, metrics, info, plot)
        return Comparison(rows, table, info), notes


def finish_rows(rows: list, names: list, pairs: list, info: dict, summaries: list,
                per_run_found: list, aggregates: list, correction) -> None:
    """The last steps of compare on any engine: after the metric rows `rows`, the rows of the
    per-run metrics asked for (per_run_rows, from each run's per_run_found, in the order of
    the summaries), info's metrics with theirs, and the correction of every p-value."""
    asked = [name for name in summaries[0] if name in per_run_found[0].get(ALL, {}).get(
        "values", {})]  # the per-run metrics asked for, in their order
    per_run = per_run_rows(names, pairs, info, dict(zip(names, per_run_found)),
                           [segment for segment, _ in aggregates], asked)
    rows += per_run
    info["metrics"] = info["metrics"] + list(dict.fromkeys(row_metric(row) for row in per_run))
    apply_correction(rows, correction, info["alpha"], info)


def checked_runs(runs) -> list:
    items = list(runs.items()) if isinstance(runs, dict) else [tuple(run) for run in runs]
    names = [name for name, _ in items]
    if len(items) < 2:
        raise InputError("compare needs at least two runs: give --run NAME=PATH twice or more",
                         usage=True)
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"run name {name!r}: give each run a name, as in --run base=recs.parquet",
                             usage=True)
        if names.count(name) > 1:
            raise InputError(f"run name {name!r} is given twice: give each run its own name",
                             usage=True)
    return items


def run_pairs(names: list, baseline, all_pairs: bool) -> list:
    """The (reference, run) index pairs to compare: the baseline against every other run, or every
    pair in the order given."""
    if all_pairs:
        if baseline is not None:
            raise InputError("--baseline and --all-pairs do not go together: --all-pairs compares "
                             "every pair", usage=True)
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline is None:
        base = 0
    elif baseline in names:
        base = names.index(baseline)
    else:
        raise InputError(f"--baseline {baseline!r} is not one of the runs: "
                         f"{', '.join(names)}", usage=True)
    return [(base, j) for j in range(len(names)) if j != base]


def check_options(test, correction, n_resamples, seed, alpha, ci, min_users, segments, by) -> None:
    """compare's own options, by their registry Params' checks (options.py), and --segments with
    --by."""
    for name, value in (("test", test), ("correction", correction),
                        ("n_resamples", n_resamples), ("min_users", min_users), ("seed", seed),
                        ("alpha", alpha), ("ci", ci)):
        registry.BY_NAME[name].checked(value)
    registry.check_segments(segments, by)


def _column(run: int, metric: str) -> str:
    return ident(f"{run}:{metric}")


def _pair_users(con, tables, metrics, segments: Optional[str]) -> dict:
    """Join the runs' per-user tables into ndcg_cmp_paired: the users every run has, their
    segment, and each run's metrics. Returns the paired users and how many were left out."""
    views = []
    for run, table in enumerate(tables):
        con.register(f"ndcg_cmp_arrow{run}", table)
        user = ident(table.column_names[0])
        values = ", ".join(f"{ident(m)} AS {_column(run, m)}" for m in metrics)
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_cmp_run{run} AS SELECT {user} AS user_id, "
                    f"{values} FROM ndcg_cmp_arrow{run}")
        views.append(f"ndcg_cmp_run{run}")
    joined = " JOIN ".join(f"{view}" + ("" if i == 0 else " USING (user_id)")
                           for i, view in enumerate(views))
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_cmp_joined AS SELECT * FROM {joined}")
    if segments is None:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_cmp_paired AS FROM ndcg_cmp_joined")
    else:
        segmenting.join(con, "ndcg_cmp_joined", "ndcg_cmp_paired", segments)
    (paired,), = con.sql("SELECT count(*) FROM ndcg_cmp_paired").fetchall()
    (everyone,), = con.sql(" UNION ".join(f"SELECT user_id FROM {v}" for v in views)
                           .join(("SELECT count(*) FROM (", ")"))).fetchall()
    return {"paired": paired, "left_out": everyone - paired}


def _check_shared(con, unranked: list, names: list) -> None:
    """Stop when no paired user has recommendations in every run: with --missing skip no user is
    paired; with --missing zero each is scored 0 by some run (`unranked`: per run, the judged
    users it has no recommendations for)."""
    lacking = []
    for run, table in enumerate(unranked):
        if table.num_rows:
            con.register(f"ndcg_cmp_unranked{run}", table)
            lacking.append(f"SELECT user_id FROM ndcg_cmp_unranked{run}")
    if lacking:
        query = (f"SELECT count(*) FROM ndcg_cmp_joined ANTI JOIN ({' UNION ALL '.join(lacking)}) "
                 f"USING (user_id)")
    else:
        query = "SELECT count(*) FROM ndcg_cmp_joined"
    (shared,), = con.sql(query).fetchall()
    if not shared:
        raise InputError(no_shared_user(names))


def _aggregates(con, runs: int, pairs, metrics, with_segments: bool) -> list:
    """One SQL pass over the paired users: each run's spread and each pair's paired aggregates
    per metric, overall and per segment. Returns (segment, {key: struct}) rows, overall first."""
    columns = []
    for m in metrics:
        for run in range(runs):
            columns.append(f"ndcg_spread({_column(run, m)}) AS {ident(f's|{run}|{m}')}")
        for i, j in pairs:
            columns.append(f"ndcg_paired({_column(j, m)}, {_column(i, m)}) "
                           f"AS {ident(f'p|{i}|{j}|{m}')}")
    if with_segments:
        query = (f"SELECT CASE WHEN grouping(segment) = 1 THEN {literal(ALL)} ELSE segment END, "
                 f"{', '.join(columns)} FROM ndcg_cmp_paired GROUP BY GROUPING SETS ((), (segment)) "
                 f"ORDER BY grouping(segment) DESC, segment = ndcg_unknown_segment(), segment")
    else:
        query = f"SELECT {literal(ALL)}, {', '.join(columns)} FROM ndcg_cmp_paired"
    result = con.sql(query)
    names = result.columns
    rows = [(row[0], dict(zip(names[1:], row[1:]))) for row in result.fetchall()]
    _exact(con, rows, runs, pairs, metrics, with_segments)
    return rows


def _exact(con, aggregates, runs: int, pairs, metrics, with_segments: bool) -> None:
    """Put in every mean of the aggregates the exactly rounded mean of its users' values
    (means.py, the rule eval's means follow): each run's mean, and each pair's means and mean
    difference (of the per-user differences)."""
    columns = {}
    for m in metrics:
        columns.update({f"s|{run}|{m}": _column(run, m) for run in range(runs)})
        columns.update({f"d|{i}|{j}|{m}": f"{_column(j, m)} - {_column(i, m)}" for i, j in pairs})
    found = {(ALL, *key): mean
             for key, mean in means.exact_means(con, "ndcg_cmp_paired", columns).items()}
    if with_segments:
        found.update(means.exact_means(con, "ndcg_cmp_paired", columns, groups=("segment",)))
    for segment, values in aggregates:
        for m in metrics:
            for run in range(runs):
                values[f"s|{run}|{m}"]["mean"] = found.get((segment, f"s|{run}|{m}"))
            for i, j in pairs:
                paired = values[f"p|{i}|{j}|{m}"]
                paired.update(mean=found.get((segment, f"s|{j}|{m}")),
                              base_mean=found.get((segment, f"s|{i}|{m}")),
                              diff_mean=found.get((segment, f"d|{i}|{j}|{m}")))


def split_metric(name: str):
    """'ndcg@10' -> ('ndcg', '10'); 'mrr' -> ('mrr', None)."""
    metric, _, cutoff = name.partition("@")
    return metric, (cutoff or None)


def row_metric(row: dict) -> str:
    """The metric's name of a tidy row, split_metric undone: 'ndcg@10', 'mrr'."""
    return row["metric"] + (f"@{row['cutoff']}" if row["cutoff"] else "")


def metric_rows(con, aggregates, names, pairs, metrics, info) -> list:
    level, test = info["ci"], info["test"]
    rows = []
    for m in metrics:
        metric, cutoff = split_metric(m)
        for segment, values in aggregates:
            small = segment != ALL and values[f"s|0|{m}"]["users"] < info["min_users"]
            note = (f"fewer than {info['min_users']} users: means only, not tested"
                    if small else None)
            for run, name in enumerate(names):
                spread = values[f"s|{run}|{m}"]
                row = _row(metric, cutoff, segment, name, None, spread, level, small, note, info)
                own = [i for i, j in pairs if j == run] if info["baseline"] is not None else []
                if own:  # against a baseline: the run's row carries the comparison
                    i = own[0]
                    _compare(con, row, values[f"p|{i}|{run}|{m}"], names[i], (i, run, m), segment,
                             level, test, small, info)
                rows.append(row)
            if info["baseline"] is None:  # every pair: a row per pair after the runs' own rows
                for i, j in pairs:
                    row = _row(metric, cutoff, segment, names[j], names[i], None, level, small,
                               note, info)
                    _compare(con, row, values[f"p|{i}|{j}|{m}"], names[i], (i, j, m), segment,
                             level, test, small, info)
                    rows.append(row)
    return rows


# the note of a metric that is one value per run (coverage, gini, entropy)
PER_RUN = "one value per run (not a mean over users): no interval or test"
PER_RUN_BOOTSTRAP = ("one value per run (not a mean over users): Poisson bootstrap intervals "
                     "over users, no test")
PER_RUN_TOO_MANY = ("one value per run (not a mean over users): no interval (users x resamples x "
                    f"items over {stats.BOOTSTRAP_DRAWS:,}), no test")


def _per_run_values(con, segments, by, user_col: str, fmt, n_resamples: int, seed: int) -> dict:
    """In a run's cursor: {segment (ALL first): {'users': how many users' lists count, 'values':
    {'coverage@10': value, ...}, 'resampled': beyond.resampled_values(...) or {}}} for the
    metrics that are one value per run; {} when the run has none. n_resamples 0: none."""
    if not beyond.kept_lists(con):
        return {}

    def of(tops):
        (users,), = con.sql(f"SELECT count(DISTINCT user_id) FROM {tops}").fetchall()
        return {"users": users, "values": beyond.per_run_values(con, tops),
                "resampled": beyond.resampled_values(con, tops, n_resamples, seed,
                                                     stats.BOOTSTRAP_DRAWS)
                if n_resamples else {}}
    out = {ALL: of("ndcg_tops_")}
    if segments is not None:
        for segment in segmenting.segment_lists(con, segments, by, user_col, fmt):
            out[segment] = of("ndcg_tops_segment")
    return out


def per_run_rows(names, pairs, info, found: dict, segments: list, asked: list) -> list:
    """The rows of the metrics that are one value per run (`asked`, e.g. ['coverage@10']; found:
    per run, _per_run_values'), per segment: each run's value and, against the baseline (or per pair), the difference; no
    test. Under --test bootstrap, percentile intervals of the value and of the difference over
    the resamples both runs have (a resample that draws no user has none)."""
    import numpy as np

    level = info["ci"]
    bounds = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]

    def interval(values):
        if not values:
            return None, None
        low, high = np.percentile(values, bounds)
        return float(low), float(high)

    def part(run, segment, key):
        return found.get(run, {}).get(segment, {}).get(key, {})
    rows = []
    for name in asked:
        metric, cutoff = split_metric(name)
        for segment in segments:
            def row(run, against):
                draws = part(run, segment, "resampled")
                note = (PER_RUN if not draws else PER_RUN_TOO_MANY if draws.get("too many")
                        else PER_RUN_BOOTSTRAP)
                value = part(run, segment, "values").get(name)
                out = _row(metric, cutoff, segment, run, against, None, level, True, note, info)
                out.update(mean=value, users=found.get(run, {}).get(segment, {}).get("users"))
                mine = draws.get(name, {}) if note == PER_RUN_BOOTSTRAP else {}
                out["ci_low"], out["ci_high"] = interval(list(mine.values()))
                if against is not None:
                    base = part(against, segment, "values").get(name)
                    if value is not None and base is not None:
                        out.update(diff=value - base, rel_diff=(value - base) / base
                                   if base else None)
                    theirs = part(against, segment, "resampled").get(name, {}) if mine else {}
                    out["diff_ci_low"], out["diff_ci_high"] = interval(
                        [mine[b] - theirs[b] for b in sorted(mine) if b in theirs])
                return out
            against = {names[j]: names[i] for i, j in pairs} if info["baseline"] is not None \
                else {}
            rows += [row(run, against.get(run)) for run in names]
            if info["baseline"] is None:
                rows += [row(names[j], names[i]) for i, j in pairs]
    return rows


def _row(metric, cutoff, segment, run, against, spread, level, small, note, info) -> dict:
    row = dict.fromkeys(ROW_FIELDS)
    row.update(metric=metric, cutoff=cutoff, segment=segment, run=run, baseline=against,
               tested=False, note=note, test=info["test"],
               users_without_recommendations=info["runs"][run].get("users_without_recommendations"))
    if spread is not None:
        row.update(users=spread["users"], mean=spread["mean"])
        if not small:
            row["ci_low"], row["ci_high"] = stats.t_interval(spread["mean"], spread["var"],
                                                             spread["users"], level)
    return row


def _compare(con, row, paired, against, key, segment, level, test, small, info) -> None:
    """Fill row's comparison with the run `against` from the paired aggregates (and, for the
    resampling tests, the per-user differences)."""
    n, diff, var = paired["users"], paired["diff_mean"], paired["diff_var"]
    row.update(baseline=against, users=n, diff=diff, wins=paired["wins"], ties=paired["ties"],
               losses=paired["losses"])
    if row["mean"] is None:
        row["mean"] = paired["mean"]
    base = paired["base_mean"]
    row["rel_diff"] = diff / base if base else None
    if small or n == 0:
        return
    row["d_z"] = diff / math.sqrt(var) if var else None
    row["diff_ci_low"], row["diff_ci_high"] = stats.t_interval(diff, var, n, level)
    if diff == 0 and not var:  # no test can tell runs apart that score each user the same
        row["note"] = ALL_ZERO
        return
    if test == "none":
        return
    if test == "t":
        row["p_value"] = stats.t_test(diff, var, n)
    else:
        diffs = _differences(con, key, segment, nonzero=test == "randomization")
        if test == "randomization":
            row["p_value"] = stats.randomization(diffs, info["n_resamples"], info["seed"])
            if stats.is_exact(len(diffs), info["n_resamples"]):
                row["note"] = EXACT_RANDOMIZATION
        elif n >= 2 and var:
            row["p_value"], row["diff_ci_low"], row["diff_ci_high"] = stats.bootstrap(
                diffs, info["n_resamples"], info["seed"], level)
            if stats.bootstrap_is_normal(len(diffs), info["n_resamples"]):
                row["note"] = NORMAL_BOOTSTRAP
    if row["p_value"] is None:
        row["note"] = f"every per-user difference is {diff:+.6g}: no test"
    else:
        row["tested"] = True


def _differences(con, key, segment: str, nonzero: bool):
    i, j, m = key
    d = f"{_column(j, m)} - {_column(i, m)}"
    where = [] if segment == ALL else [f"segment = {literal(segment)}"]
    if nonzero:
        where.append(f"{d} <> 0")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    # in user order: which random sign goes to which user must not depend on threads
    return con.sql(f"SELECT {d} AS d FROM ndcg_cmp_paired{clause} ORDER BY user_id").fetchnumpy()["d"]


def apply_correction(rows, correction, alpha, info) -> None:
    tested = [row for row in rows if row["tested"]]
    if correction is None:
        correction = "holm" if len(tested) > 1 else "none"
    adjusted = stats.adjust([row["p_value"] for row in tested], correction)
    for row, p in zip(tested, adjusted):
        row["p_adjusted"] = p
        row["significant"] = p < alpha
    for row in rows:
        row.update(correction=correction, family=len(tested))
    compared = [row for row in rows if row["diff"] is not None]
    info.update(correction=correction, family=len(tested),
                all_zero=bool(compared) and all(row["note"] == ALL_ZERO for row in compared))


def _per_user(con, names, pairs, metrics, user_col: str, with_segments: bool) -> pa.Table:
    """Each paired user: the user id, the segment, then per metric each run's value and each
    pair's difference, named 'METRIC RUN' and 'METRIC RUN-REFERENCE'."""
    columns = [f"user_id AS {ident(user_col)}"] + (["segment"] if with_segments else [])
    for m in metrics:
        columns += [f"{_column(run, m)} AS {ident(f'{m} {name}')}" for run, name in enumerate(names)]
        columns += [f"{_column(j, m)} - {_column(i, m)} AS {ident(f'{m} {names[j]}-{names[i]}')}"
                    for i, j in pairs]
    return con.sql(f"SELECT {', '.join(columns)} FROM ndcg_cmp_paired ORDER BY user_id").to_arrow_table()
