"""`ndcg-duck compare --engine spark`: runs scored on Spark, paired on users on Spark, compared
with the t-test, the randomization test or the bootstrap, overall and per segment.

Each run is scored as eval --engine spark scores it (the macros on the workers). Spark joins the
runs' per-user rows on the user; each partition adds, per segment, run and metric, exact sums of
the values and of their squares, and per pair the same of the per-user differences with the
wins, ties and losses; only those sums reach the driver. Means and variances are those exact
sums rounded once (exact.mean_of, exact.variance_of), and the rows, intervals, p-values and the
correction are compare's on every engine (comparison.common, comparison.stats), so `compare`
prints the same table. --segments: the segment table is read and checked on the driver
(extras.segment_table) and joined, broadcast, to the paired users; the driver adds the sums per
segment and for everyone.

The resampling tests run on the workers, on users in STRATA strata by a hash of their id, each
stratum's vectors of per-resample sums made by one task in user order and added on the driver
in stratum order (_resamples): the randomization test flips signs with a stream per stratum
(and segment); the bootstrap is a Poisson bootstrap (stats.poisson_sums: each user's weight in
resample b is a Poisson(1) draw from a stream of the seed and the user's hash), not the default
engine's multinomial resampling, so its interval and p-value agree with the default engine's
within Monte Carlo error, not draw for draw. Beyond stats.BOOTSTRAP_DRAWS users x resamples,
both engines take the bootstrap's normal-theory form, from the exact mean and variance.

--by item-popularity: each run is scored with its popularity groups (eval --engine spark's
pass, popular.py), whose workers send back each group's per-user rows; a run's rows are its
users' own (group ALL) and theirs, and the runs are joined on the user and the group, as the
default engine pairs them: the sums, rows and tests are then those of the segments, with ALL
the users' own rows (not every row added up), and each group's exposure@K one value per run
from the workers' top-k places (popular.shares; common.with_group_exposure).

--per-user writes the default engine's per-user table from the joined runs, as eval --engine
spark writes its per-user rows (write_per_user). --plot draws the default engine's picture
(plot.draw_compare): its curves of sorted per-user differences are found by a Spark sort, and
only the values the curves draw (500 at most) reach the driver (extras.sorted_samples).
"""

from __future__ import annotations

import pyarrow as pa

from ..comparison import common
from ..comparison.common import paired_key, spread_key, value_column
from ..evaluation import inputs
from .. import options as registry
from ..options import group
from ..sqlfiles import register
from .columns import arrow_name, col, for_arrow
from .exact import Sums, schema as sums_schema
from ..report.segments import in_order
from .scoring import FLAGS
from .files import write_per_user
from .driver import connection as driver_connection
from .popular import GROUP

STRATA = 32  # resampling tests: users fall into this many strata by a hash of their id, each
# stratum's sums made by one task in user order; the randomization test draws from a stream per
# stratum (numpy's SeedSequence of (seed, stratum)), the bootstrap from a stream per user: the
# result depends on the seed and the users, never on how Spark partitions them
COMPARE_OPTIONS = group("compare")  # compare's own options (options.PARAMS): baseline, ...


SEGMENT = "__segment"  # the joined users' segment column (extras.join_segments), with --segments


def _ranked(run: int) -> str:
    """The joined column of whether run `run` has recommendations for the user."""
    return f"{run}:__ranked"


def _pieces(batch):
    """A batch as (segment, rows) pieces: one per segment with --segments; with --by
    item-popularity one per group (GROUP) and the users' own rows (ALL) as None, every user's;
    else (None, batch)."""
    import pyarrow.compute as pc

    column = SEGMENT if SEGMENT in batch.schema.names else GROUP \
        if GROUP in batch.schema.names else None
    if column is None:
        return [(None, batch)]
    names = batch.column(column)
    return [(None if column == GROUP and name == common.ALL else name,
             batch.filter(pc.equal(names, name))) for name in pc.unique(names).to_pylist()]


def _sums(runs: int, pairs: list, metrics: list, margin: float):
    """mapInArrow function: per partition, an exact.Sums by segment (None without --segments):
    the users (key 'u'), for each run and metric (key 's|RUN|METRIC') and each pair and metric
    (key 'p|I|J|METRIC': the differences run J - run I) the count and the exact sums of the
    values and of their squares, the pairs' wins, ties and losses (keys 'p|I|J|METRIC|wins',
    ...), and (key 'r') the users every run has recommendations for."""
    def partial(batches):
        import numpy as np

        sums = Sums()
        for segment, batch in _pieces_of(batches):
            def values(run, metric):
                column = batch.column(arrow_name(value_column(run, metric))).cast(pa.float64())
                return column.to_numpy(zero_copy_only=False)

            sums.count(segment, "u", batch.num_rows)
            ranked = np.ones(batch.num_rows, dtype=bool)
            for run in range(runs):
                ranked &= batch.column(arrow_name(_ranked(run))).to_numpy(
                    zero_copy_only=False).astype(bool)
            sums.count(segment, "r", int(ranked.sum()))
            for m in metrics:
                columns = [values(run, m) for run in range(runs)]
                for run, x in enumerate(columns):
                    sums.add(segment, spread_key(run, m), x[~np.isnan(x)], squares=True)
                for i, j in pairs:
                    key = paired_key(i, j, m)
                    d = columns[j] - columns[i]  # as DuckDB's x - base: one rounding
                    d = d[~np.isnan(d)]
                    sums.add(segment, key, d, squares=True)
                    sums.count(segment, f"{key}|wins", np.sum(d > margin))
                    sums.count(segment, f"{key}|ties", np.sum(np.abs(d) <= margin))
                    sums.count(segment, f"{key}|losses", np.sum(d < -margin))
        yield sums.batch()
    return partial


def _pieces_of(batches):
    for batch in batches:
        yield from _pieces(batch)


def aggregates(sums: Sums, runs: int, pairs: list, metrics: list, unknown=None,
               groups=()) -> list:
    """The partitions' sums added up (Sums.added with everyone), as comparison.compare's
    aggregates (ndcg_spread and ndcg_paired's fields): [('(all)', {key: {...}})], then with
    --segments one per segment by name, `unknown` last (groups: --by item-popularity's every
    group, listed with no users when none is paired in it); every mean and variance from exact
    sums, rounded once (Sums.mean, Sums.variance)."""
    return [(common.ALL if group is None else group,
             _values(sums, group, runs, pairs, metrics))
            for group in [None] + in_order(sums.groups() | set(groups), unknown)]


def _values(sums: Sums, group, runs: int, pairs: list, metrics: list) -> dict:
    """One group's aggregates ({key: ndcg_spread's or ndcg_paired's fields}) from its sums."""
    values = {}
    for m in metrics:
        for run in range(runs):
            key = spread_key(run, m)
            values[key] = {"users": sums.n(group, key), "var": sums.variance(group, key)}
        for i, j in pairs:
            key = paired_key(i, j, m)
            d = sums.has(group, key)
            values[key] = {"users": sums.n(group, key), "var": values[spread_key(j, m)]["var"],
                           "base_var": values[spread_key(i, m)]["var"],
                           "diff_var": sums.variance(group, key) if d else None,
                           **{name: sums.n(group, f"{key}|{name}")
                              for name in ("wins", "ties", "losses")}}
    common.put_means(values, runs, pairs, metrics,
                     lambda run, m: sums.mean(group, spread_key(run, m)),
                     lambda i, j, m: (sums.mean(group, paired_key(i, j, m))
                                      if sums.has(group, paired_key(i, j, m)) else None))
    return values


def compare(spark, rels, runs, settings: dict, compare_options: dict, rels_what,
            segments=None, by=None, per_user=None, plot=None) -> tuple:
    """compare_runs on Spark: (Comparison, notes). `runs` is [(name, Spark DataFrame, what)],
    `rels` the judgments DataFrame; settings are eval's options, compare_options compare's own
    (baseline, all_pairs, test, correction, n_resamples, seed, alpha, ci, min_users).
    segments and by: the segment table (a path) and its segment column, as the default
    engine's. per_user: where to write the per-user table (a file, or a directory of part
    files: write_per_user). plot: the PNG compare --plot draws."""
    results: list = []  # each run's SparkEvaluation: its per-user rows persisted
    try:
        return _compare(spark, rels, runs, settings, compare_options, rels_what, segments, by,
                        per_user, plot, results)
    finally:
        for result in results:
            result.unpersist()


def _compare(spark, rels, runs, settings: dict, compare_options: dict, rels_what, segments,
             by, per_user, plot, results: list) -> tuple:
    """compare, each run's result added to `results` as it is scored."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from .engine import run as evaluate_run
    from .refusals import refusals
    from .extras import check_placed, join_segments, segment_table
    from ..report.segments import Popularity

    o = compare_options
    names = [name for name, _, _ in runs]
    pairs = common.run_pairs(names, o["baseline"], o["all_pairs"])
    user_col = registry.user_col(settings)
    unknown = None
    popular = segments if isinstance(segments, Popularity) else None
    by_users = segments is not None and popular is None  # a segment table: users' segments
    if by_users:  # read and checked before any run is scored, as the default engine
        seg, what, theirs, unknown = segment_table(spark, segments, by, user_col)
    grouped: dict = {}  # --by item-popularity: _with_groups' groups, unplaced and metrics

    def score(name, recs, what_run):
        lists = {}
        result, said = evaluate_run(spark, recs, rels, per_user=True, recs_what=what_run,
                                        rels_what=rels_what, lists=lists, ranked=True,
                                        popularity=popular, group_rows=popular is not None,
                                        **settings)
        results.append(result)
        with refusals(what_run, rels_what):
            found = (_per_run_values(lists, user_col, seg if by_users else None, unknown)
                     if lists else {})
        table, summary = result.per_user, result.summary
        if popular is not None:
            table, summary = _with_groups(result, found, grouped)
        return common.Run(table, result.per_user.columns, summary, said, found)
    scored = common.scored_runs(runs, score)
    metrics = scored.metrics
    if popular is not None:
        unknown = grouped["unplaced"]
    joined = None
    on = ["__ndcg_user"] + ([GROUP] if popular is not None else [])
    for run, table in enumerate(scored.tables):
        side = table.select(col(user_col).alias("__ndcg_user"),
                            *[col(m).alias(value_column(run, m)) for m in metrics],
                            col(FLAGS[1]).alias(_ranked(run)),
                            *([col(GROUP)] if popular is not None else []))
        joined = side if joined is None else joined.join(side, on)
    if by_users:
        joined = join_segments(joined, seg, unknown)
    con = driver_connection()
    try:
        register(con)
        (margin,), = con.sql("SELECT ndcg_tie_margin()").fetchall()
    finally:
        con.close()
    with refusals(runs[0][2], rels_what):
        # with --by item-popularity, group None holds the users' own rows (_pieces), not all
        sums = Sums.added(for_arrow(joined.drop("__ndcg_user")).mapInArrow(
            _sums(len(names), pairs, metrics, margin), from_arrow_schema(sums_schema()))
            .collect(), everyone=popular is None)
        own = [table if popular is None else table.where(col(GROUP) == common.ALL)
               for table in scored.tables]  # each user once
        users = own[0].select(col(user_col).alias("u"))
        for table in own[1:]:
            users = users.union(table.select(col(user_col).alias("u")))
        (everyone,), = users.agg(F.count_distinct("u")).collect()
        paired = sums.n(None, "u")
        common.check_shared(sums.n(None, "r"), names)
        if by_users:
            placed = paired - sums.n(unknown, "u")
            check_placed(joined, placed, paired, theirs, what)
    found = aggregates(sums, len(names), pairs, metrics, unknown, grouped.get("groups", ()))

    def resample(wanted: list, info: dict) -> list:
        with refusals(runs[0][2], rels_what):
            return _resample(joined, wanted, pairs, metrics, info)
    rows, info = common.comparison_rows(found, scored, names, pairs, paired, everyone, o, by,
                                        resample)
    if popular is not None:  # a group's rows: the metrics scored per group (none tested)
        rows = common.group_rows(rows, grouped["metrics"])
    if per_user:
        with refusals(runs[0][2], rels_what):
            write_per_user(per_user_rows(joined, names, pairs, metrics, user_col), per_user,
                           user_col, common.per_user_order(user_col, segments is not None))
    if plot is not None:
        with refusals(runs[0][2], rels_what):
            curves(joined if popular is None else joined.where(col(GROUP) == common.ALL),
                   rows, names, pairs, metrics, info, plot)
    return common.Comparison(rows, None, info), scored.notes


def _with_groups(result, found: dict, grouped: dict) -> tuple:
    """--by item-popularity: a run's per-user rows (result.per_user, its users' own: GROUP ALL)
    followed by its groups' (result.group_rows: engine.run's with group_rows; the metrics not
    scored per group null), and its summary with exposure@K (common.with_group_exposure, from
    the workers' top-k places: popular.shares), as the default engine's _with_groups. Puts in
    `grouped` (once, from the first run) every group (popular.every_group), the group of
    unlisted items ('unplaced') and the metrics a group has (common.group_metrics)."""
    from pyspark.sql import functions as F

    from . import popular

    sums = result.grouped
    if not grouped:
        grouped.update(groups=popular.every_group(sums), unplaced=sums.unplaced,
                       metrics=common.group_metrics(sums.names, sums.ks))
    own = result.per_user
    user = own.columns[0]
    kept = set(sums.names)
    types = dict(own.dtypes)
    theirs = result.group_rows.select(
        col(popular.USER).alias(user),
        *[col(name) if name in kept else F.lit(None).cast(types[name]).alias(name)
          for name in own.columns[1:]], col(GROUP))
    table = own.withColumn(GROUP, F.lit(common.ALL)).unionByName(theirs)
    summary = common.with_group_exposure(found, result.summary, grouped["groups"], sums.ks,
                                         popular.shares(sums))
    return table, summary


def _per_run_values(lists: dict, user_col: str, seg, unknown) -> dict:
    """A run's per-run metrics on Spark, as common.per_run_found gives them (lists:
    engine.run's, with its driver and the evaluated users' lists; seg: the segment table,
    or None); the driver closes."""
    from .beyond_accuracy import TOPS
    from .extras import join_segments

    driver = lists["driver"]
    try:
        tops = lists["tops"].select(col(user_col).alias("__ndcg_user"), TOPS)
        if seg is None:
            found = driver.per_run_found(tops)
        else:  # every user's from the segments' exposure, added up
            found = driver.per_run_found(join_segments(tops, seg, unknown), "__segment",
                                         everyone=True)
        return common.per_run_found(found.pop(None, None), found)
    finally:
        driver.close()


def curves(joined, rows, names, pairs, metrics, info, path) -> dict:
    """compare --plot: the default engine's picture (plot.draw_compare), its curves of sorted
    per-user differences found on Spark (extras.sorted_samples); returns the curves
    {(metric, I, J): values}."""
    from ..report import plot as plotting
    from .extras import sorted_samples

    keys = [(m, i, j) for m in metrics for i, j in pairs]
    found = sorted_samples(joined, [col(value_column(j, m)) - col(value_column(i, m))
                                    for m, i, j in keys], plotting.curve_points(info["users"]))
    drawn = dict(zip(keys, found))
    plotting.draw_compare(drawn, info["users"], rows, names, pairs, metrics, info, path)
    return drawn


def per_user_rows(joined, names, pairs, metrics, user_col: str):
    """compare's per-user table as a Spark DataFrame (unordered: write_per_user orders it by
    user): the user, the segment with --segments, then common.per_user_columns."""
    columns = [col("__ndcg_user").alias(user_col)]
    for name in (SEGMENT, GROUP):  # --segments' or --by item-popularity's
        if name in joined.columns:
            columns.append(col(name).alias("segment"))
    for name, m, run, reference in common.per_user_columns(names, pairs, metrics):
        value = col(value_column(run, m))
        columns.append((value if reference is None
                        else value - col(value_column(reference, m))).alias(name))
    return joined.select(*columns)


def _resamples(keys: list, n_resamples: int, seed: int, test: str):
    """mapInArrow function over the paired users sorted by stratum and user: per stratum, group
    (every user: None; each segment with --segments) and (pair, metric) key, the count, sum and
    absolute sum of its differences and, as float64 bytes, per resample:
    - randomization: the sign-flip sums of its nonzero differences (stats.sign_flips with the
      stratum's own stream, and the segment's), and the differences themselves when a stratum
      has few (for the exact test of the default engine when there are few in all);
    - bootstrap: the sums of weight x difference and of the weights (stats.poisson_sums: each
      user's Poisson weights from a stream of the seed and the user's hash)."""
    def partial(batches):
        import zlib

        import numpy as np

        from ..comparison import stats

        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0:
            return
        strata = table.column("__ndcg_stratum").to_numpy()
        out = {name: [] for name in RESAMPLES.names}
        for stratum in np.unique(strata):
            part = table.filter(pa.array(strata == stratum))
            groups = _pieces(part)  # and with --segments every user's
            if SEGMENT in part.schema.names:
                groups = [(None, part)] + groups
            for segment, piece in groups:
                stream = [seed, int(stratum)] + (
                    [] if segment is None else [zlib.crc32(segment.encode())])
                users = piece.column("__ndcg_hash").to_numpy().view(np.uint64)
                for key, (i, j, m) in enumerate(keys):
                    x = piece.column(arrow_name(value_column(j, m))).to_numpy(
                        zero_copy_only=False)
                    base = piece.column(arrow_name(value_column(i, m))).to_numpy(
                        zero_copy_only=False)
                    d = (x.astype(float) - base.astype(float))
                    keep = ~np.isnan(d) & ((d != 0) if test == "randomization" else True)
                    d = d[keep]
                    if test == "randomization":
                        sums = stats.sign_flips(d, n_resamples, stream)
                        weights = np.zeros(0)
                    else:
                        sums, weights = stats.poisson_sums(d, users[keep], n_resamples, seed)
                    out["key"].append(key)
                    out["segment"].append(segment)
                    out["stratum"].append(int(stratum))
                    out["count"].append(int(d.size))
                    out["total"].append(float(d.sum()))
                    out["absolute"].append(float(np.abs(d).sum()))
                    out["sums"].append(sums.astype(np.float64).tobytes())
                    out["weights"].append(weights.astype(np.float64).tobytes())
                    out["values"].append(d.tolist() if d.size < 63 and test == "randomization"
                                         else [])
        yield pa.RecordBatch.from_pydict(out, schema=RESAMPLES)
    return partial


RESAMPLES = pa.schema([("key", pa.int64()), ("segment", pa.string()), ("stratum", pa.int64()),
                       ("count", pa.int64()), ("total", pa.float64()),
                       ("absolute", pa.float64()), ("sums", pa.binary()),
                       ("weights", pa.binary()), ("values", pa.list_(pa.float64()))])


def _resampled(joined, keys: list, n_resamples: int, seed: int, test: str) -> dict:
    """The workers' _resamples: {(segment or None, key index): [parts, in stratum order]}."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    stratum = F.pmod(F.hash(F.col("__ndcg_user")), F.lit(STRATA)).alias("__ndcg_stratum")
    user = F.xxhash64(F.col("__ndcg_user")).alias("__ndcg_hash")
    parts = (for_arrow(joined.select("*", stratum, user).repartition("__ndcg_stratum")
                       .sortWithinPartitions("__ndcg_stratum", "__ndcg_user"))
             .mapInArrow(_resamples(keys, n_resamples, seed, test),
                         from_arrow_schema(RESAMPLES)).collect())
    by_key = {}
    for part in sorted(parts, key=lambda r: r["stratum"]):
        by_key.setdefault((part["segment"], part["key"]), []).append(part)
    return by_key


def _added(parts: list, field: str, n_resamples: int):
    """The strata's vectors of `field` added up, in stratum order (the same sums on any
    partitioning)."""
    import numpy as np

    total = np.zeros(n_resamples)
    for part in parts:
        total += np.frombuffer(part[field], dtype=np.float64)
    return total


def _resample(joined, wanted: list, pairs: list, metrics: list, info: dict) -> list:
    """common.comparison_rows' resample on Spark: the randomization or bootstrap test of each
    wanted row (common.Resample) as a common.Drawn, from per-stratum vectors the workers compute
    (_resamples), added up on the driver.

    Randomization: with fewer than 63 nonzero differences in all and 2**m <= n_resamples, the
    exact test of the default engine on those few differences (stats.exact_randomization).
    Bootstrap: the p-value and percentile interval of the Poisson bootstrap
    (stats.bootstrap_of_sums); where users x resamples exceed stats.BOOTSTRAP_DRAWS, the
    default engine's normal-theory form from the exact mean and variance (the same numbers),
    with no Spark job."""
    from ..comparison import stats

    test, n_resamples, level = info["test"], info["n_resamples"], info["ci"]
    out: dict = {}
    drawn = list(range(len(wanted)))
    if test == "bootstrap":
        for index, want in enumerate(wanted):
            n = want.users
            if stats.bootstrap_is_normal(n, n_resamples):
                out[index] = common.Drawn(*stats.bootstrap_normal_of(
                    n, want.diff, want.var * (n - 1) / n, n_resamples, level), n)
        drawn = [index for index in drawn if index not in out]
    if drawn:
        keys = [(i, j, m) for m in metrics for i, j in pairs]
        by_key = _resampled(joined, keys, n_resamples, info["seed"], test)
    for index in drawn:
        want = wanted[index]
        segment = None if want.segment == common.ALL else want.segment
        parts = by_key.get((segment, keys.index((want.i, want.j, want.metric))), [])
        count = sum(part["count"] for part in parts)
        if test == "bootstrap":
            out[index] = common.Drawn(*stats.bootstrap_of_sums(
                want.diff, sum(part["absolute"] for part in parts) / count,
                _added(parts, "sums", n_resamples), _added(parts, "weights", n_resamples),
                level), want.users)
        elif stats.is_exact(count, n_resamples):  # every sign assignment: exact
            out[index] = common.Drawn(stats.exact_randomization(
                [v for part in parts for v in part["values"]]), None, None, count)
        else:
            null = _added(parts, "sums", n_resamples)
            observed = abs(sum(part["total"] for part in parts))
            scale = sum(part["absolute"] for part in parts)
            out[index] = common.Drawn((stats.count_extreme(null, observed, scale) + 1)
                                      / (n_resamples + 1), None, None, count)
    return [out[index] for index in range(len(wanted))]


def run_cli(relevance, runs, master: str, conf_pairs, show_progress: bool, settings: dict,
            compare_options: dict, segments, by, per_user, plot) -> tuple:
    """ndcg-duck compare --engine spark: (Comparison, notes)."""
    from .refusals import refusals
    from .engine import refuse_beyond_users
    from ..evaluation.inputs import described as what
    from .files import check_one_file_per_user, check_table_output, read
    from .launch import cli_session, parse_conf

    common.checked(runs, compare_options, segments, by, plot)
    refuse_beyond_users(settings)  # fail fast, before Spark starts
    conf = parse_conf(conf_pairs)
    cols = inputs.Columns.given(**settings)
    with cli_session(master, conf, show_progress) as spark:
        check_table_output(spark, per_user)
        rels_df = read(spark, relevance, settings["rels_format"], "relevance", cols)
        frames = []
        for name, path in runs:
            recs_df = read(spark, path, settings["recs_format"], "recommendations", cols)
            if inputs.table_name(path) is None:  # a table's files are one dataset
                with refusals(what("recommendations", path), what("relevance", relevance)):
                    check_one_file_per_user(recs_df, what("recommendations", path),
                                            cols.of("recommendations").user)
            frames.append((name, recs_df, what("recommendations", path)))
        return compare(spark, rels_df, frames, settings, compare_options,
                       what("relevance", relevance), segments, by, per_user, plot)
