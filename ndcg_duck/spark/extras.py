"""eval --segments and --plot on Spark: the same rows and picture as the default engine's
(report/segments.py, report/plot.py), from aggregates Spark computes over the per-user rows;
only those few numbers reach the driver, never every user.

Segments: the segment table is small; the driver loads and checks it with the default engine's
macros (segments.attach), and Spark joins it, broadcast, to the per-user rows. Each partition
adds, per segment and metric, the exact sum of the values and how many users there are; the
driver adds those up and divides (mean_of), as by_segment's exactly rounded means.
Plot: Spark finds each metric's range; the workers bin their users with the macro ndcg_bin.
compare --plot's curves of sorted differences: Spark sorts the values and only the few the
curve draws reach the driver (sorted_samples).
"""

from __future__ import annotations

import pyarrow as pa

from .. import metrics as metric_names, sqltext
from ..evaluation import intervals as ci
from ..outcome import add_per_run, shown_metrics
from ..report import plot as plotting
from ..report import segments as segmenting
from ..sqlfiles import register
from .exact import Sums, schema as sums_schema
from .columns import arrow_name, col, for_arrow
from .workers import connection
from .driver import connection as driver_connection


def segment_sums(metrics: list, segment: str, spread: bool = False):
    """mapInArrow function: per partition, an exact.Sums by segment: the users (key 'u') and,
    per metric (its name), how many have a value and the exact sum of the values; with spread
    (--ci), the sum of their squares too and how many lie outside the metric's bounds (key
    'METRIC|outside'), for the t interval (evaluation/intervals.py)."""
    def partial(batches):
        import numpy as np
        import pyarrow.compute as pc

        sums = Sums()
        for batch in batches:
            names = batch.column(segment)
            for name in pc.unique(names).to_pylist():
                rows = batch.filter(pc.equal(names, name))
                sums.count(name, "u", rows.num_rows)
                for metric in metrics:
                    values = rows.column(arrow_name(metric)).drop_null().cast(pa.float64())
                    values = values.to_numpy(zero_copy_only=False)
                    sums.add(name, metric, values, squares=spread)
                    bounds = metric_names.bounds(metric)
                    if spread and bounds:
                        sums.count(name, f"{metric}|outside", np.count_nonzero(
                            (values < bounds[0]) | (values > bounds[1])))
        yield sums.batch()

    return partial


def spread_intervals(sums: Sums, groups: list, metrics: list, centres: dict, spec) -> tuple:
    """--ci's t intervals from segment_sums' exact sums (with spread) of each group (None:
    every user) and the means shown (centres: {(group, metric): mean}): as
    intervals.intervals_in's, ({(group, metric): (low, high)}, said)."""
    found, told = {}, ci.said()
    for group in groups:
        for m in ci.averaged(metrics):
            ci.record(found, told, (group, m), centres.get((group, m)), sums.variance(group, m),
                      sums.n(group, m), sums.n(group, f"{m}|outside"), spec)
    return found, told


def intervals(per_user, summary: dict, spec) -> tuple:
    """--ci on Spark: the t interval of each mean of the summary over the per-user DataFrame
    (SparkResult.intervals' result)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    metrics = ci.averaged(shown_metrics(per_user.columns, summary))
    values = per_user.select(*[col(m) for m in metrics], F.lit("").alias("__segment"))
    sums = Sums.added(for_arrow(values).mapInArrow(segment_sums(metrics, "__segment",
                                                                  spread=True),
                                        from_arrow_schema(sums_schema())).collect(),
                      everyone=True)
    found, told = spread_intervals(sums, [None], metrics,
                                   {(None, m): summary[m] for m in metrics}, spec)
    return {m: found[(None, m)] for m in metrics}, told


def segment_table(spark, segments, by: str, user_col: str, examples: bool = False) -> tuple:
    """The segment table, loaded and checked on the driver with the default engine's macros
    (segments.attach), as a small Spark DataFrame (user_id, segment); with how messages name
    it, a user id of it placed in a segment (None without; with examples, instead
    segments.example_id's for segments.check_placed: (as typed, as text)) and the name of the
    unknown segment."""
    con = driver_connection()
    try:
        register(con)
        what = segmenting.attach(con, segments, by, user_col)
        table = con.sql("FROM ndcg_segments").to_arrow_table()
        if examples:
            theirs = (segmenting.example_id(con), segmenting.example_id(con, as_text=True))
        else:
            (theirs,), = con.sql(f"SELECT min(user_id)::VARCHAR FROM ndcg_segments WHERE "
                                 f"segment <> {sqltext.literal(segmenting.unplaced(con))}"
                                 ).fetchall()
        unknown = segmenting.unplaced(con)
    finally:
        con.close()
    table = table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type)
                                           else f.type) for f in table.schema]))
    return spark.createDataFrame(table), what, theirs, unknown


def as_text(values, seg) -> bool:
    """Whether the user ids of `values` (__ndcg_user) and of the segment table are compared as
    text: they are typed differently (as segments.join does)."""
    return values.schema["__ndcg_user"].dataType != seg.schema["user_id"].dataType


def join_segments(values, seg, unknown: str):
    """`values` (a DataFrame with the user column __ndcg_user) with each user's segment in
    __segment, the segment table broadcast; ids typed differently on the two sides are
    compared as text (as_text), and __ndcg_user is then text."""
    from pyspark.sql import functions as F

    ours, theirs_id = F.col("__ndcg_user"), F.col("user_id")
    if as_text(values, seg):
        ours, theirs_id = ours.cast("string"), theirs_id.cast("string")
    values = values.withColumn("__ndcg_user", ours)
    seg = seg.select(theirs_id.alias("__ndcg_seg_user"), F.col("segment").alias("__ndcg_segment"))
    return (values.join(F.broadcast(seg), F.col("__ndcg_user") == F.col("__ndcg_seg_user"), "left")
            .withColumn("__segment", F.coalesce(F.col("__ndcg_segment"), F.lit(unknown)))
            .drop("__ndcg_seg_user", "__ndcg_segment"))


def check_placed(joined, placed: int, everyone: int, theirs, what: str) -> None:
    """segments.check_placed for the users of `joined` (join_segments' result), naming the
    lowest of their ids."""
    from pyspark.sql import functions as F

    segmenting.check_placed(what, everyone, placed, theirs,
                            lambda: str(joined.agg(F.min("__ndcg_user")).collect()[0][0]))


def by_segment(spark, per_user, summary: dict, segments, by: str, user_col: str,
               spec=None) -> tuple:
    """segments.means_in for a per-user Spark DataFrame: each partition adds its users and
    exact sums per segment, the driver adds those up (segments.rows); with spec (--ci) each
    row's t intervals (row['intervals']). Returns (rows, said: intervals.said's)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    seg, what, theirs, unknown = segment_table(spark, segments, by, user_col, examples=True)
    metrics = shown_metrics(per_user.columns, summary)
    values = per_user.select(col(user_col).alias("__ndcg_user"), *[col(m) for m in metrics])
    theirs = theirs[as_text(values, seg)]
    placed_users = join_segments(values, seg, unknown)
    joined = placed_users.select(*[col(m) for m in metrics], "__segment")
    sums = Sums.added(for_arrow(joined).mapInArrow(segment_sums(metrics, "__segment",
                                                                  spec is not None),
                                        from_arrow_schema(sums_schema())).collect(),
                      everyone=True)
    everyone = sums.n(None, "u")
    check_placed(placed_users, everyone - sums.n(unknown, "u"), everyone, theirs, what)
    groups = [None] + list(sums.groups())
    # the mean of the users with a value, exactly rounded (Sums.mean), as means_in's
    means = {(name, m): sums.mean(name, m) for name in groups for m in metrics}
    rows = segmenting.rows({name: sums.n(name, "u") for name in groups}, means, metrics,
                           unknown)
    told = ci.said()
    if spec is not None:  # around the means shown (a geometric one's: segments.rows)
        centres = {(None if row["segment"] == segmenting.ALL else row["segment"], m): row[m]
                   for row in rows for m in metrics}
        found, told = spread_intervals(sums, groups, metrics, centres, spec)
        for row in rows:
            key = None if row["segment"] == segmenting.ALL else row["segment"]
            row["intervals"] = {m: found[(key, m)] for m in ci.averaged(metrics)}
    return rows, told


def per_run_by_segment(spark, lists: dict, rows: list, summary: dict, segments, by: str,
                       user_col: str) -> None:
    """Adds to by_segment's `rows` the per-run metrics of the summary (coverage, gini,
    entropy) of each segment's users, as the default engine's eval --segments: the summary's
    value for everyone, each segment's from its users' lists (lists: engine.run's, with the
    driver and the evaluated users' lists), '-' (None) for a segment without lists."""
    from .beyond_accuracy import TOPS

    seg, _, _, unknown = segment_table(spark, segments, by, user_col)
    tops = lists["tops"].select(col(user_col).alias("__ndcg_user"), TOPS)
    try:
        found = lists["driver"].per_run_found(join_segments(tops, seg, unknown), "__segment")
    finally:
        lists["scored"].unpersist()
    add_per_run(rows, summary, {segment: values.get("values", {})
                                for segment, values in found.items()}, segmenting.ALL)


def _bins(metrics: list, ranges: list):
    """mapInArrow function: per partition, (metric index, bin, users) by the macro ndcg_bin."""
    def partial(batches):
        con = connection(())
        counts = {}
        for batch in batches:
            con.register("ndcg_plot_batch", pa.Table.from_batches([batch]))
            for i, (metric, (low, high)) in enumerate(zip(metrics, ranges)):
                sql = plotting.bins_sql(sqltext.ident(arrow_name(metric)), low, high,
                                        "ndcg_plot_batch")
                for b, users in con.sql(sql).fetchall():
                    counts[(i, b)] = counts.get((i, b), 0) + users
            con.unregister("ndcg_plot_batch")
        yield pa.RecordBatch.from_pydict({"metric": [i for i, _ in counts],
                                          "bin": [b for _, b in counts],
                                          "users": list(counts.values())},
                                         schema=_bins_schema())
    return partial


def _bins_schema() -> pa.Schema:
    return pa.schema([("metric", pa.int64()), ("bin", pa.int64()), ("users", pa.int64())])


def plot(per_user, summary: dict, path) -> None:
    """eval --plot from a per-user Spark DataFrame: plot.eval_plot, each metric's extremes
    found by Spark and its bins counted by the workers."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    metrics = shown_metrics(per_user.columns, summary)
    aggregates = []
    for m in metrics:
        aggregates += [F.min(col(m)), F.max(col(m)), F.count(F.when(col(m) == 0, 1)),
                       F.count(col(m))]
    (row,) = per_user.agg(*aggregates).collect()

    def bin_counts(ranges):
        data = for_arrow(per_user.select(*[col(m) for m in metrics]))
        parts = data.mapInArrow(_bins(metrics, ranges), from_arrow_schema(_bins_schema())) \
            .groupBy("metric", "bin").agg(F.sum("users").alias("users")).collect()
        return [{r["bin"]: r["users"] for r in parts if r["metric"] == i}
                for i in range(len(metrics))]
    plotting.eval_plot(metrics, summary, [tuple(row[4 * i: 4 * i + 4])
                                          for i in range(len(metrics))], bin_counts, path)


def sorted_samples(df, columns: list, points: int) -> list:
    """The macro ndcg_sorted_sample(x, points) of each column expression in `columns` over the
    rows of `df` (a list of values per column, [] where no row has a value), without bringing
    the rows to the driver: Spark sorts the values (range partitioning, on the workers), counts
    each partition's, and the workers send back only the values at the ranks quantile_disc
    takes (sorted_sample_ranks)."""
    from pyspark.sql import functions as F

    pairs = F.array(*[F.struct(F.lit(k).alias("k"), column.cast("double").alias("x"))
                      for k, column in enumerate(columns)])
    values = (df.select(F.explode(pairs).alias("v")).select("v.k", "v.x")
              .where(F.col("x").isNotNull()))
    ordered = (values.orderBy("k", "x").select("k", "x", F.spark_partition_id().alias("p"))
               .persist())
    try:
        counts = sorted((p, k, n) for p, k, n in ordered.groupBy("p", "k").count().collect())
        totals = [sum(n for _, key, n in counts if key == k) for k in range(len(columns))]
        ranks = [set(sorted_sample_ranks(n, points)) if n else set() for n in totals]
        wanted, seen = {}, [0] * len(columns)  # (partition, column): (first rank there, ranks)
        for p, k, n in counts:  # partitions in order: their ranks follow each other
            wanted[(p, k)] = (seen[k], sorted(r for r in ranks[k] if seen[k] <= r < seen[k] + n))
            seen[k] += n
        found = ordered.mapInArrow(_ranked(wanted), "k long, r long, x double").collect()
    finally:
        ordered.unpersist()
    at = {(row["k"], row["r"]): row["x"] for row in found}
    return [[at[(k, r)] for r in sorted_sample_ranks(n, points)] if n else []
            for k, n in enumerate(totals)]


def sorted_sample_ranks(n: int, points: int) -> list:
    """The ranks (from 0, in sorted order) of the n values that ndcg_sorted_sample(x, points)
    returns: DuckDB's quantile_disc at q = i / (points - 1) takes the value of rank
    max(1, n - floor(n - n q)) - 1 (tests/spark/test_spark.py checks it against DuckDB)."""
    import math

    return [max(1, n - math.floor(n - n * (i / max(points - 1, 1)))) - 1 for i in range(points)]


def _ranked(wanted: dict):
    """mapInArrow function over the sorted (k, x, p) rows: the rows of the ranks `wanted`
    names per (partition, column), as (k, r, x)."""
    def partial(batches):
        import numpy as np

        seen = {}
        for batch in batches:
            if batch.num_rows == 0:
                continue
            p = batch.column("p")[0].as_py()
            ks, xs = batch.column("k").to_numpy(), batch.column("x").to_numpy()
            for k in np.unique(ks):
                local = xs[ks == k]
                first, ranks = wanted.get((p, int(k)), (0, []))
                start = first + seen.get(int(k), 0)
                chosen = [r for r in ranks if start <= r < start + len(local)]
                seen[int(k)] = seen.get(int(k), 0) + len(local)
                if chosen:
                    yield pa.RecordBatch.from_pydict(
                        {"k": [int(k)] * len(chosen), "r": chosen,
                         "x": [float(local[r - start]) for r in chosen]},
                        schema=pa.schema([("k", pa.int64()), ("r", pa.int64()),
                                          ("x", pa.float64())]))
    return partial
