"""What compare decides on every engine: the checks of a call (its runs, their pairs, compare's
options), the loop over the runs and their warnings, the paired users' columns and keys, the
exactly rounded means in the aggregates, the stop when no user is shared, the tidy rows (their
fields, notes, intervals, which test each row gets and what its result says) and the correction
of the p-values.

The default engine (compare.py) and the Spark engine (spark/compare.py) call these and keep only
what differs: how the runs' users are scored, paired and summed, and how a resampling test
draws (`resample`, below).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

from .. import means, metrics as metric_names, options as registry, outcome
from ..errors import InputError
from ..sqltext import ident, literal
from . import stats

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
                       "2^m <= --n-resamples for m users with a nonzero difference "
                       "(docs/compare.md)")


# the note of a bootstrap whose resamples were too many to draw (stats.BOOTSTRAP_DRAWS)
NORMAL_BOOTSTRAP = ("bootstrap in its normal-theory form, as where users x resamples exceed "
                    f"{stats.BOOTSTRAP_DRAWS:,} (docs/compare.md)")


# the note of a metric that is one value per run (coverage, gini, entropy)
PER_RUN = "one value per run (not a mean over users): no interval or test"
# ... under --test bootstrap, which draws none for them (docs/compare.md)
PER_RUN_BOOTSTRAP = ("one value per run (not a mean over users): interval: none (a distinct "
                     "count's bootstrap is biased: docs/compare.md), no test")


def no_shared_user(names) -> str:
    """The message when no user has recommendations in every run (under any --missing)."""
    return (f"no user has recommendations in every run ({', '.join(names)}): there is no user to "
            f"compare the runs on; check that the runs are for the same users, with the same ids")


# the note of a row whose t interval (of the mean, or of the difference) left the metric's range
# and was clipped to it (means.within; metrics.bounds)
CLIPPED = "t interval clipped to the metric's range (docs/compare.md)"


# --- the checks of a call -----------------------------------------------------------------------

def checked(runs, own: dict, segments, by, plot) -> tuple:
    """Everything compare checks before it reads a file, on any engine: the extras it needs,
    the runs (checked_runs), their pairs (run_pairs), compare's own options (`own`: the values
    of options.group('compare')) with --segments and --by, and the plot's path. Returns (runs
    as (name, recs) pairs, their names, the pairs)."""
    stats.require("scipy", "compare")
    if plot is not None:
        stats.require("matplotlib", "--plot")
    runs = checked_runs(runs)
    names = [name for name, _ in runs]
    pairs = run_pairs(names, own["baseline"], own["all_pairs"])
    check_options(own, segments, by)
    if plot is not None:
        from ..report import plot as plotting

        plotting.check_path(plot)
    return runs, names, pairs


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


def check_options(own: dict, segments, by) -> None:
    """compare's own options (`own`), by their registry Params' checks (options.py), and
    --segments with --by."""
    for name in ("test", "correction", "n_resamples", "min_users", "seed", "alpha", "ci"):
        registry.BY_NAME[name].checked(own[name])
    registry.check_segments(segments, by)


# --- scoring the runs ---------------------------------------------------------------------------

class Run(NamedTuple):
    """One run scored by an engine: its per-user table and that table's column names, its
    summary, its warnings and its per-run values (per_run_found)."""

    per_user: object
    columns: list
    summary: dict
    said: list
    per_run: dict


class Scored(NamedTuple):
    """The runs scored, in order: their per-user tables, summaries and per-run values, their
    warnings each named by its run, and the metrics compared (the first run's per-user columns
    its summary has, in their order)."""

    tables: list
    summaries: list
    per_run_found: list
    notes: list
    metrics: list


def scored_runs(runs: list, score: Callable[..., Run]) -> Scored:
    """Each run of `runs` ((name, ...) tuples, in order) scored by the engine's score(*run)."""
    done = []
    notes: list = []
    for run in runs:
        done.append(score(*run))
        outcome.add_run_notes(notes, run[0], done[-1].said)
        refuse_geometric(done[0].summary)
    metrics = [column for column in done[0].columns if column in done[0].summary]
    return Scored([run.per_user for run in done], [run.summary for run in done],
                  [run.per_run for run in done], notes, metrics)


def refuse_geometric(summary: dict) -> None:
    """Stop on gm_map or gm_bpref (after the first run is scored: its summary names the
    measures): a geometric mean over users, which compare's differences of means and their tests
    do not cover."""
    for name in summary:
        if metric_names.is_metric(name) and metric_names.geometric(name.partition("@")[0]):
            base = name.removeprefix("gm_")
            raise InputError(f"compare does not take {name}: it is a geometric mean over users "
                             f"(trec_eval's), and compare's differences and tests are of "
                             f"arithmetic means; compare {base}, the per-user values it is the "
                             f"geometric mean of", usage=True)


def per_run_found(everyone: Optional[dict], by_segment: dict) -> dict:
    """A run's per-run values as per_run_rows reads them: {ALL: every user's ({'users',
    'values'}; none found: no users, no values), then each segment's}."""
    empty = {"users": 0, "values": {}}
    return {ALL: everyone if everyone is not None else empty, **by_segment}


# --- by item popularity ------------------------------------------------------------------------

def group_metrics(averaged: list, ks) -> set:
    """--by item-popularity: the metrics a popularity group has rows of (group_rows): the
    accuracy metrics averaged over its users (popularity.averaged's names) and exposure@K, one
    value per run, for each cutoff in ks."""
    from ..report.popularity import exposure_name

    return {*averaged, *map(exposure_name, ks)}


def with_group_exposure(found: dict, summary: dict, groups: list, ks, shares: dict) -> dict:
    """--by item-popularity: put in a run's per-run values `found` (per_run_found's) each
    group's exposure@K (shares {(k, group): its share of the run's top-k places}, as
    popularity.exposures gives them; a group never shown: 0), 1 in ALL (every item), and the
    run's users where no per-run metric counted them. Returns the run's summary with exposure@K
    (1), which makes it one of the metrics compare shows per run (finish_rows)."""
    from ..report.popularity import exposure_name

    summary = dict(summary)
    users = summary.get("users")
    for group in [ALL, *groups]:
        values = found.setdefault(group, {"users": users, "values": {}})
        if group == ALL and not values["values"]:
            values["users"] = users
        for k in ks:
            name = exposure_name(k)
            values["values"][name] = 1.0 if group == ALL else shares.get((k, group), 0.0)
            summary[name] = 1.0
    return summary


def group_rows(rows: list, metrics: set) -> list:
    """--by item-popularity: compare's rows without those of a group for a metric not scored per
    group (`metrics`: group_metrics'; novelty, coverage, ...: their ALL rows only)."""
    return [row for row in rows if row["segment"] == ALL or row_metric(row) in metrics]


# --- pairing the users --------------------------------------------------------------------------

def value_column(run: int, metric: str) -> str:
    """The paired users' column of run `run`'s values of `metric` (as the engines name it)."""
    return f"{run}:{metric}"


def spread_key(run: int, metric: str) -> str:
    """The aggregates' key of run `run`'s spread of `metric` (ndcg_spread's fields: users, mean,
    var)."""
    return f"s|{run}|{metric}"


def paired_key(i: int, j: int, metric: str) -> str:
    """The aggregates' key of pair (i, j)'s paired aggregates of `metric`, run j against run i
    (ndcg_paired's fields: users, mean, var, base_mean, base_var, diff_mean, diff_var, wins,
    ties, losses)."""
    return f"p|{i}|{j}|{metric}"


def put_means(values: dict, runs: int, pairs: list, metrics: list,
              spread_mean: Callable[[int, str], Optional[float]],
              diff_mean: Callable[[int, int, str], Optional[float]]) -> None:
    """Put the exactly rounded means (means.py's rule) in one segment's aggregates `values`:
    each run's mean of each metric (spread_mean(run, metric)), and in each pair's aggregates the
    means of its run and of its reference run (the same) and the mean of the per-user
    differences (diff_mean(i, j, metric): of the differences, not the difference of means)."""
    for m in metrics:
        for run in range(runs):
            values[spread_key(run, m)]["mean"] = spread_mean(run, m)
        for i, j in pairs:
            values[paired_key(i, j, m)].update(mean=values[spread_key(j, m)]["mean"],
                                               base_mean=values[spread_key(i, m)]["mean"],
                                               diff_mean=diff_mean(i, j, m))


def check_shared(shared: int, names: list) -> None:
    """Stop when no paired user (`shared` of them) has recommendations in every run: with
    --missing skip no user is paired; with --missing zero each is scored 0 by some run."""
    if not shared:
        raise InputError(no_shared_user(names))


def per_user_order(user: str, with_segments: bool) -> str:
    """The order of compare's per-user table (SQL over its columns): by user, then with segments
    the user's ALL row first (--by item-popularity: a row per user and group) and the rest by
    segment."""
    return ident(user) + (f", segment <> {literal(ALL)}, segment" if with_segments else "")


def per_user_columns(names: list, pairs: list, metrics: list) -> list:
    """The per-user table's columns after the user (and the segment, with segments): per metric
    each run's value, named 'METRIC RUN', then each pair's difference, named 'METRIC
    RUN-REFERENCE', as (name, metric, run, reference run or None)."""
    columns = []
    for m in metrics:
        columns += [(f"{m} {name}", m, run, None) for run, name in enumerate(names)]
        columns += [(f"{m} {names[j]}-{names[i]}", m, j, i) for i, j in pairs]
    return columns


# --- the rows -----------------------------------------------------------------------------------

class Resample(NamedTuple):
    """A compared row whose test (randomization or bootstrap) an engine draws: the row, run j
    against run i on `metric` in `segment`, its users, mean difference and its variance."""

    row: dict
    i: int
    j: int
    metric: str
    segment: str
    users: int
    diff: float
    var: Optional[float]


class Drawn(NamedTuple):
    """A resampling test's result: the p-value, with the bootstrap its percentile interval of the
    difference (else None), and how many differences it drew on (the randomization test: the
    nonzero ones), which says whether it was exact or normal-theory."""

    p_value: float
    low: Optional[float]
    high: Optional[float]
    count: int


def comparison_rows(aggregates: list, scored: Scored, names: list, pairs: list, paired: int,
                    everyone: int, own: dict, by,
                    resample: Callable[[list, dict], list]) -> tuple:
    """compare's rows and info on any engine, from the aggregates ([(segment, {key: fields})],
    ALL first: spread_key's and paired_key's) of the `paired` users of `everyone`: the metrics'
    rows (their tests drawn by resample(wanted: [Resample], info) -> [Drawn]), the per-run
    metrics' rows, and the correction of every p-value. Returns (rows, info)."""
    info = outcome.compare_info(names, scored.summaries, pairs, paired, everyone, scored.metrics,
                                dict(own, by=by))
    rows = metric_rows(aggregates, names, pairs, scored.metrics, info, resample)
    finish_rows(rows, names, pairs, info, scored.summaries, scored.per_run_found, aggregates,
                own["correction"])
    return rows, info


def split_metric(name: str):
    """'ndcg@10' -> ('ndcg', '10'); 'mrr' -> ('mrr', None)."""
    metric, _, cutoff = name.partition("@")
    return metric, (cutoff or None)


def row_metric(row: dict) -> str:
    """The metric's name of a tidy row, split_metric undone: 'ndcg@10', 'mrr'."""
    return row["metric"] + (f"@{row['cutoff']}" if row["cutoff"] else "")


def metric_rows(aggregates, names, pairs, metrics, info,
                resample: Callable[[list, dict], list]) -> list:
    """The rows of the metrics that are means over users: per metric, segment and run (and with
    all_pairs per pair) the mean, its interval and, against the reference run, the paired
    comparison; the randomization and bootstrap tests drawn by the engine's resample."""
    level = info["ci"]
    rows, wanted = [], []
    for m in metrics:
        metric, cutoff = split_metric(m)
        for segment, values in aggregates:
            small = segment != ALL and values[spread_key(0, m)]["users"] < info["min_users"]
            note = (f"fewer than {info['min_users']} users: means only, not tested"
                    if small else None)
            for run, name in enumerate(names):
                spread = values[spread_key(run, m)]
                row = _row(metric, cutoff, segment, name, None, spread, level, small, note, info)
                own = [i for i, j in pairs if j == run] if info["baseline"] is not None else []
                if own:  # against a baseline: the run's row carries the comparison
                    i = own[0]
                    _compare(row, values[paired_key(i, run, m)], names[i], (i, run, m), segment,
                             small, info, wanted)
                rows.append(row)
            if info["baseline"] is None:  # every pair: a row per pair after the runs' own rows
                for i, j in pairs:
                    row = _row(metric, cutoff, segment, names[j], names[i], None, level, small,
                               note, info)
                    _compare(row, values[paired_key(i, j, m)], names[i], (i, j, m), segment,
                             small, info, wanted)
                    rows.append(row)
    if wanted:
        for want, drawn in zip(wanted, resample(wanted, info)):
            _drawn(want.row, drawn, info)
    return rows


def _row(metric, cutoff, segment, run, against, spread, level, small, note, info) -> dict:
    row = dict.fromkeys(ROW_FIELDS)
    row.update(metric=metric, cutoff=cutoff, segment=segment, run=run, baseline=against,
               tested=False, note=note, test=info["test"],
               users_without_recommendations=info["runs"][run].get("users_without_recommendations"))
    if spread is not None:
        row.update(users=spread["users"], mean=spread["mean"])
        if not small:
            _clip(row, "ci_low", "ci_high", stats.t_interval(spread["mean"], spread["var"],
                                                             spread["users"], level), False, info)
    return row


def _clip(row: dict, low: str, high: str, interval: tuple, difference: bool, info: dict) -> None:
    """Put the t interval `interval` in row's fields low and high, clipped to the range of the
    row's metric (metrics.bounds; a difference's: [a - b, b - a]). When it was, info's 'clipped'
    names the metric (for the notes) and the row's note says so unless it says something else."""
    bounds = metric_names.bounds(row["metric"])
    if bounds is not None and difference:
        bounds = (bounds[0] - bounds[1], bounds[1] - bounds[0])
    row[low], row[high], changed = means.within(*interval, bounds)
    if changed:
        info.setdefault("clipped", []).append(row_metric(row))
        if row["note"] is None:
            row["note"] = CLIPPED


def _compare(row, paired, against, key, segment, small, info, wanted: list) -> None:
    """Fill row's comparison with the run `against` from the paired aggregates; a randomization
    or bootstrap test joins `wanted` (Resample), for the engine to draw."""
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
    _clip(row, "diff_ci_low", "diff_ci_high", stats.t_interval(diff, var, n, info["ci"]), True,
          info)
    if diff == 0 and not var:  # no test can tell runs apart that score each user the same
        row["note"] = ALL_ZERO
        return
    test = info["test"]
    if test == "none":
        return
    if test == "t":
        row["p_value"] = stats.t_test(diff, var, n)
    elif test == "randomization" or (n >= 2 and var):
        i, j, m = key
        wanted.append(Resample(row, i, j, m, segment, n, diff, var))
        return
    _tested(row)


def _drawn(row: dict, drawn: Drawn, info: dict) -> None:
    """Put a resampling test's result in its row, with the note of an exact randomization test or
    of a normal-theory bootstrap."""
    row["p_value"] = drawn.p_value
    if info["test"] == "bootstrap":
        row["diff_ci_low"], row["diff_ci_high"] = drawn.low, drawn.high
        if stats.bootstrap_is_normal(drawn.count, info["n_resamples"]):
            row["note"] = NORMAL_BOOTSTRAP
    elif stats.is_exact(drawn.count, info["n_resamples"]):
        row["note"] = EXACT_RANDOMIZATION
    _tested(row)


def _tested(row: dict) -> None:
    if row["p_value"] is None:
        row["note"] = f"every per-user difference is {row['diff']:+.6g}: no test"
    else:
        row["tested"] = True


def per_run_rows(names, pairs, info, found: dict, segments: list, asked: list) -> list:
    """The rows of the metrics that are one value per run (`asked`, e.g. ['coverage@10']; found:
    per run, per_run_found's), per segment: each run's value and, against the baseline (or per
    pair), the difference; no test and no interval (under --test bootstrap the note says why:
    PER_RUN_BOOTSTRAP)."""
    level = info["ci"]
    note = PER_RUN_BOOTSTRAP if info["test"] == "bootstrap" else PER_RUN

    def part(run, segment, key):
        return found.get(run, {}).get(segment, {}).get(key, {})
    rows = []
    for name in asked:
        metric, cutoff = split_metric(name)
        for segment in segments:
            def row(run, against):
                value = part(run, segment, "values").get(name)
                out = _row(metric, cutoff, segment, run, against, None, level, True, note, info)
                out.update(mean=value, users=found.get(run, {}).get(segment, {}).get("users"))
                if against is not None:
                    base = part(against, segment, "values").get(name)
                    if value is not None and base is not None:
                        out.update(diff=value - base, rel_diff=(value - base) / base
                                   if base else None)
                return out
            against = {names[j]: names[i] for i, j in pairs} if info["baseline"] is not None \
                else {}
            rows += [row(run, against.get(run)) for run in names]
            if info["baseline"] is None:
                rows += [row(names[j], names[i]) for i, j in pairs]
    return rows


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
