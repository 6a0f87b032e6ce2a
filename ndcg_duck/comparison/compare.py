"""compare(): score several runs on the same users and compare them, overall and by segment.

Each run is scored by `evaluate` (the same macros, options and checks as `ndcg-duck eval`). The
per-user tables are joined on the user in DuckDB, which also computes every variance and count
(sql/ndcg_compare.sql) and the exact sums of every mean (means.py); `stats` turns those into
intervals and p-values. What compare decides on every engine (the checks, the loop over the runs,
the rows, notes and tests, the correction) is common.py's: this module keeps how the default
engine scores, pairs and sums the users and draws the resampling tests.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Optional

from .. import interrupts, means, objectstore, options as registry, outcome
from ..report import segments as segmenting
from ..report.clashes import Input, Output, refuse_clashes
from . import common, stats
from .common import ALL, Comparison, paired_key, spread_key
from ..evaluation import beyond
from ..evaluation.evaluate import own_connection, running
from ..sqltext import ident, literal
from ..sqlfiles import register

if TYPE_CHECKING:  # pyarrow loads on first use (see evaluate.py)
    import pyarrow as pa


def compare(rels, runs, k=registry.BY_NAME["k"].default, **settings) -> Comparison:
    """Compare the runs (a {name: recs} mapping, or (name, recs) pairs, in order; recs as
    `evaluate` takes them) on the judgments `rels` (None: only beyond-accuracy metrics, each
    run's over every user of its lists, as evaluate's).

    Every run is scored on the same users (with missing='skip', the users every run has). The
    first run (or `baseline`) is compared with each other run; all_pairs=True compares every
    pair. test: 't' (paired t-test), 'randomization' (paired sign flip, n_resamples, seed),
    'bootstrap' or 'none'; correction: 'holm' (the default for more than one test),
    'bonferroni' or 'none', over every test made. ci is the level of the intervals, alpha that
    of `significant`. segments (a path or table with a user column and the column `by`) breaks
    every result down by segment (or, without segments, by='user-activity' with train and
    groups=N or activity_cuts=[5, 20, 100]: by the users' number of train interactions; or
    by='item-popularity' with train, and head_share or groups=N: each accuracy metric over the
    relevant items of each popularity group, the users paired within each group); a
    segment with fewer than min_users users gets means but no test. per_user=True returns
    each user's values and differences; plot='out.png' draws the sorted per-user differences
    and the per-segment differences. Other keyword arguments (k,
    gain, missing, user_col, ...) are evaluate's. Raises InputError for bad input or options
    and warns (NdcgWarning) as evaluate does. Needs scipy (pip install 'ndcg-duck[compare]').
    """
    def call():
        checked = common.checked_runs(runs)
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
            memory_limit=None, temp_dir=None, s3_endpoint=None, groups=None,
            activity_cuts=None, **options) -> tuple:
    """compare() with its messages in the command line's words: returns the comparison and the
    notes (warnings) of the runs' evaluations. by='user-activity' (with train, and groups or
    activity_cuts) breaks every result down by activity cohort (segments.Cohorts);
    by='item-popularity' by popularity group (segments.Popularity, _with_groups)."""
    segments = segmenting.source(segments, by, options.get("train"), groups, activity_cuts)
    # --by item-popularity: each group scored per user as eval scores it (popularity.py), the
    # users paired within each group; the groups' rows sit beside every user's (ALL) in one table
    popular = segments if isinstance(segments, segmenting.Popularity) else None
    own = dict(baseline=baseline, all_pairs=all_pairs, test=test, correction=correction,
               n_resamples=n_resamples, seed=seed, alpha=alpha, ci=ci, min_users=min_users)
    runs, names, pairs = common.checked(runs, own, segments, by, plot)
    con = own_connection()
    with interrupts.watching(con):
        register(con)
        user_col = registry.user_col(options)
        where = None
        if segments is not None and popular is None:
            where = segmenting.attach(con, segments, by, user_col, segments_format)
        unranked = []
        grouped = {}  # with --by item-popularity: _with_groups' unplaced, groups, metrics

        def score(name, recs):
            with running(recs, rels, k, con=con, per_user=True, threads=threads,
                         memory_limit=memory_limit, temp_dir=temp_dir, s3_endpoint=s3_endpoint,
                         **options) as ran:
                # the judged users the run has no recommendations for (usually few; none
                # without judgments, when every user of the run's lists counts)
                unranked.append(ran.cursor.sql(
                    "SELECT DISTINCT user_id FROM ndcg_all "
                    "WHERE has_judgments AND NOT has_ranking" if rels is not None else
                    "SELECT user_id FROM ndcg_result WHERE false").to_arrow_table())
                found = _per_run_values(ran.cursor, None if popular else segments, by,
                                        user_col, segments_format)
                per_user, summary = ran.evaluation.per_user, ran.evaluation.summary
                if popular is not None:
                    per_user, summary = _with_groups(ran, per_user, popular, dict(options, k=k),
                                                     grouped, found)
            return common.Run(per_user, ran.evaluation.per_user.column_names, summary,
                              ran.notes, found)
        scored = common.scored_runs(runs, score)
        metrics = scored.metrics
        if popular is not None:  # the group _aggregates lists last ('tail' or 'cold')
            con.execute("CREATE OR REPLACE TEMP TABLE ndcg_segments_unplaced AS "
                        f"SELECT {literal(grouped['unplaced'])} AS segment")
        paired, everyone = _pair_users(con, scored.tables, metrics, where, popular is not None)
        common.check_shared(_shared(con, unranked, popular is not None), names)
        aggregates = _aggregates(con, len(runs), pairs, metrics, segments is not None,
                                 popular is not None and grouped["groups"])
        rows, info = common.comparison_rows(aggregates, scored, names, pairs, paired, everyone,
                                            own, by, _resampler(con, popular is not None))
        if popular is not None:  # a group's rows: the metrics scored per group (none tested)
            rows = common.group_rows(rows, grouped["metrics"])
        table = _per_user(con, names, pairs, metrics, user_col, segments is not None) if per_user else None
        if plot is not None:
            _plot(con, rows, names, pairs, metrics, info, plot, popular is not None)
        return Comparison(rows, table, info), scored.notes


def _plot(con, rows, names, pairs, metrics, info, path, grouped: bool) -> None:
    """compare --plot (plot.draw_compare): per metric, the per-user differences against the
    reference run, sorted (left), and the mean difference with its interval overall and per
    segment (right)."""
    from ..report import plot as plotting

    once = _everyone(grouped)
    (users,), = con.sql(f"SELECT count(*) FROM ndcg_cmp_paired{once}").fetchall()
    points = plotting.curve_points(users)
    curves = {}
    for name in metrics:
        for i, j in pairs:
            (curve,), = con.sql(f"SELECT ndcg_sorted_sample({_column(j, name)} - "
                                f"{_column(i, name)}, {points}) FROM ndcg_cmp_paired"
                                f"{once}").fetchall()
            curves[(name, i, j)] = curve or []
    plotting.draw_compare(curves, users, rows, names, pairs, metrics, info, path)


def _column(run: int, metric: str) -> str:
    return ident(common.value_column(run, metric))


def _pair_users(con, tables, metrics, segments: Optional[str], grouped: bool = False) -> dict:
    """Join the runs' per-user tables into ndcg_cmp_paired: the users every run has, their
    segment, and each run's metrics; grouped (--by item-popularity): the tables have a segment
    column (ALL: every user's values, or a group's: _with_groups) and users pair within it.
    Returns (how many users are paired, how many any run has)."""
    views = []
    for run, table in enumerate(tables):
        con.register(f"ndcg_cmp_arrow{run}", table)
        user = ident(table.column_names[0])
        values = ", ".join(f"{ident(m)} AS {_column(run, m)}" for m in metrics)
        group = "segment, " if grouped else ""
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_cmp_run{run} AS SELECT {user} AS user_id, "
                    f"{group}{values} FROM ndcg_cmp_arrow{run}")
        views.append(f"ndcg_cmp_run{run}")
    on = "(user_id, segment)" if grouped else "(user_id)"
    joined = " JOIN ".join(f"{view}" + ("" if i == 0 else f" USING {on}")
                           for i, view in enumerate(views))
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_cmp_joined AS SELECT * FROM {joined}")
    if grouped:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_cmp_paired AS FROM ndcg_cmp_joined")
        con.execute("CREATE OR REPLACE TEMP VIEW ndcg_cmp_everyone AS SELECT * EXCLUDE (segment) "
                    f"FROM ndcg_cmp_joined WHERE segment = {literal(ALL)}")
        (paired,), = con.sql("SELECT count(*) FROM ndcg_cmp_everyone").fetchall()
        (everyone,), = con.sql(" UNION ".join(f"SELECT user_id FROM {v} WHERE segment = "
                                              f"{literal(ALL)}" for v in views)
                               .join(("SELECT count(*) FROM (", ")"))).fetchall()
        return paired, everyone
    if segments is None:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_cmp_paired AS FROM ndcg_cmp_joined")
    else:
        segmenting.join(con, "ndcg_cmp_joined", "ndcg_cmp_paired", segments)
    (paired,), = con.sql("SELECT count(*) FROM ndcg_cmp_paired").fetchall()
    (everyone,), = con.sql(" UNION ".join(f"SELECT user_id FROM {v}" for v in views)
                           .join(("SELECT count(*) FROM (", ")"))).fetchall()
    return paired, everyone


def _everyone(grouped: bool) -> str:
    """The clause that keeps each paired user once: with --by item-popularity (grouped: each
    user has a row per group beside their row of every user's values) that row; else nothing."""
    return f" WHERE segment = {literal(ALL)}" if grouped else ""


def _with_groups(ran, per_user, popular, settings: dict, grouped: list, found: dict) -> tuple:
    """--by item-popularity: the run's per-user table `per_user` (user, then the metrics) with a
    segment column, ALL on every user's row, followed by a row per user and popularity group
    with a relevant item in it (popularity.score_groups, eval's rule: the accuracy metrics over
    the group's judgments; the others NULL). Puts in `grouped` (once) the group of unlisted items
    ('unplaced'), every group's name ('groups') and the metrics a group has ('metrics': the
    accuracy metrics averaged over users, exposure@K), and in the per-run values `found` (per_run_found's) each group's
    exposure@K (popularity.exposures: a share of the run's top k, one value per run). Returns
    the table and the run's summary with exposure@K (1: every item)."""
    from ..report import popularity

    con = ran.cursor
    scored = popularity.score_groups(ran, settings, popular)
    if not grouped:
        grouped.update(unplaced=scored.unplaced, groups=popularity.groups(con, scored),
                       metrics=common.group_metrics(scored.names, scored.options.k))
    user = per_user.column_names[0]
    con.register("ndcg_cmp_everyone_arrow", per_user)
    values = per_user.column_names[1:]
    kept = set(scored.names)
    group_values = ", ".join((ident(m) if m in kept else "NULL::DOUBLE") + f" AS {ident(m)}"
                             for m in values)
    every = ", ".join(ident(m) for m in values)
    table = con.sql(f"SELECT {ident(user)}, {literal(ALL)} AS segment, {every} "
                    f"FROM ndcg_cmp_everyone_arrow UNION ALL BY NAME "
                    f"SELECT user_id AS {ident(user)}, segment, {group_values} "
                    f"FROM ndcg_pop_wide").to_arrow_table()
    con.unregister("ndcg_cmp_everyone_arrow")
    summary = common.with_group_exposure(found, ran.evaluation.summary, grouped["groups"],
                                         scored.options.k, popularity.exposures(ran, scored))
    return table, summary


def _shared(con, unranked: list, grouped: bool) -> int:
    """How many paired users have recommendations in every run (`unranked`: per run, the judged
    users it has no recommendations for): with --missing zero the others are scored 0 by some
    run."""
    lacking = []
    for run, table in enumerate(unranked):
        if table.num_rows:
            con.register(f"ndcg_cmp_unranked{run}", table)
            lacking.append(f"SELECT user_id FROM ndcg_cmp_unranked{run}")
    # --by item-popularity: every user's row, once
    joined = "ndcg_cmp_everyone" if grouped else "ndcg_cmp_joined"
    if lacking:
        query = (f"SELECT count(*) FROM {joined} ANTI JOIN ({' UNION ALL '.join(lacking)}) "
                 f"USING (user_id)")
    else:
        query = f"SELECT count(*) FROM {joined}"
    (shared,), = con.sql(query).fetchall()
    return shared


def _aggregates(con, runs: int, pairs, metrics, with_segments: bool, groups=None) -> list:
    """One SQL pass over the paired users: each run's spread and each pair's paired aggregates
    per metric, overall and per segment. groups (--by item-popularity: every group's name): the
    paired users' segment holds ALL too (a user is in every group they have a relevant item in),
    and a group without a paired user is listed with none. Returns (segment, {key: struct})
    rows, overall first."""
    columns = []
    for m in metrics:
        for run in range(runs):
            columns.append(f"ndcg_spread({_column(run, m)}) AS {ident(spread_key(run, m))}")
        for i, j in pairs:
            columns.append(f"ndcg_paired({_column(j, m)}, {_column(i, m)}) "
                           f"AS {ident(paired_key(i, j, m))}")
    if not columns:  # only per-run metrics: still one row per segment, not one per user
        columns.append("count(*) AS ndcg_users_")
    if groups:
        query = (f"SELECT segment, {', '.join(columns)} FROM ndcg_cmp_paired GROUP BY segment")
    elif with_segments:
        query = (f"SELECT CASE WHEN grouping(segment) = 1 THEN {literal(ALL)} ELSE segment END, "
                 f"{', '.join(columns)} FROM ndcg_cmp_paired GROUP BY GROUPING SETS ((), (segment))")
    else:
        query = f"SELECT {literal(ALL)}, {', '.join(columns)} FROM ndcg_cmp_paired"
    result = con.sql(query)
    names = result.columns
    found = {row[0]: dict(zip(names[1:], row[1:])) for row in result.fetchall()}
    if groups:  # a group without a paired user: its aggregates over no users
        for group in groups:
            if group not in found:
                found[group] = _no_users(con, columns)
    unknown = segmenting.unplaced(con) if with_segments else None
    rows = [(name, found[name])
            for name in [ALL] + segmenting.in_order([n for n in found if n != ALL], unknown)]
    _exact(con, rows, runs, pairs, metrics, with_segments, bool(groups))
    return rows


def _no_users(con, columns: list) -> dict:
    """The aggregates `columns` over no users (a popularity group no paired user is in)."""
    result = con.sql(f"SELECT {', '.join(columns)} FROM ndcg_cmp_paired WHERE false")
    return dict(zip(result.columns, result.fetchall()[0]))


def _exact(con, aggregates, runs: int, pairs, metrics, with_segments: bool,
           grouped: bool = False) -> None:
    """Put in every mean of the aggregates the exactly rounded mean of its users' values
    (means.py, the rule eval's means follow): each run's mean, and each pair's means and mean
    difference (of the per-user differences)."""
    columns = {}
    for m in metrics:
        columns.update({spread_key(run, m): _column(run, m) for run in range(runs)})
        columns.update({f"d|{i}|{j}|{m}": f"{_column(j, m)} - {_column(i, m)}" for i, j in pairs})
    found = {} if grouped else {
        (ALL, *key): mean
        for key, mean in means.exact_means(con, "ndcg_cmp_paired", columns).items()}
    if with_segments:  # grouped: ALL is one of the segments
        found.update(means.exact_means(con, "ndcg_cmp_paired", columns, groups=("segment",)))
    for segment, values in aggregates:
        common.put_means(values, runs, pairs, metrics,
                         lambda run, m: found.get((segment, spread_key(run, m))),
                         lambda i, j, m: found.get((segment, f"d|{i}|{j}|{m}")))


def _per_run_values(con, segments, by, user_col: str, fmt) -> dict:
    """In a run's cursor: the metrics that are one value per run, as common.per_run_found gives
    them ({segment (ALL first): {'users': how many users' lists count, 'values': {'coverage@10':
    value, ...}}}); {} when the run has none."""
    if not beyond.kept_lists(con):
        return {}

    def of(tops):
        (users,), = con.sql(f"SELECT count(DISTINCT user_id) FROM {tops}").fetchall()
        return {"users": users, "values": beyond.per_run_values(con, tops)}
    everyone = of("ndcg_tops_")
    by_segment = {}
    if segments is not None:
        for segment in segmenting.segment_lists(con, segments, by, user_col, fmt):
            by_segment[segment] = of("ndcg_tops_segment")
    return common.per_run_found(everyone, by_segment)


def _resampler(con, grouped: bool = False):
    """common.comparison_rows' resample for the default engine: each wanted row's test on its
    users' differences, read in user order from the paired users (grouped: --by
    item-popularity, whose paired users' segment holds ALL too)."""
    def resample(wanted: list, info: dict) -> list:
        out = []
        for want in wanted:
            randomization = info["test"] == "randomization"
            diffs = _differences(con, (want.i, want.j, want.metric), want.segment,
                                 nonzero=randomization, grouped=grouped)
            if randomization:
                drawn = (stats.randomization(diffs, info["n_resamples"], info["seed"]), None,
                         None)
            else:
                drawn = stats.bootstrap(diffs, info["n_resamples"], info["seed"], info["ci"])
            out.append(common.Drawn(*drawn, len(diffs)))
        return out
    return resample


def _differences(con, key, segment: str, nonzero: bool, grouped: bool = False):
    i, j, m = key
    d = f"{_column(j, m)} - {_column(i, m)}"
    where = [] if segment == ALL and not grouped else [f"segment = {literal(segment)}"]
    if nonzero:
        where.append(f"{d} <> 0")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    # in user order: which random sign goes to which user must not depend on threads
    return con.sql(f"SELECT {d} AS d FROM ndcg_cmp_paired{clause} ORDER BY user_id").fetchnumpy()["d"]


def _per_user(con, names, pairs, metrics, user_col: str, with_segments: bool) -> pa.Table:
    """Each paired user: the user id, the segment, then common.per_user_columns (with --by
    item-popularity a row per user and segment: ALL, then each group they are in)."""
    columns = [f"user_id AS {ident(user_col)}"] + (["segment"] if with_segments else [])
    for name, m, run, reference in common.per_user_columns(names, pairs, metrics):
        value = (_column(run, m) if reference is None
                 else f"{_column(run, m)} - {_column(reference, m)}")
        columns.append(f"{value} AS {ident(name)}")
    return con.sql(f"SELECT {', '.join(columns)} FROM ndcg_cmp_paired ORDER BY "
                   f"{common.per_user_order('user_id', with_segments)}").to_arrow_table()
