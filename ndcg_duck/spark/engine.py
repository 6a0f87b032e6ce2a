"""Spark's driver for one evaluation: checks the inputs as the default engine does (on empty
tables of their schemas: _plan), sends each bucket of users to a worker (scoring.bucket_scorer),
adds up the workers' exact sums (scoring.summed_up) and makes the whole-dataset checks and
warnings from them (outcome's texts, as the default engine's). `run` is ndcg_duck.spark.evaluate
in the command line's words."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import NamedTuple

import duckdb
import pyarrow as pa

from .. import metrics as metric_names, options as registry, outcome, sqltext, statements
from ..errors import InputError
from ..evaluation import beyond, inputs, leaks
from ..evaluation.evaluate import LIMITS, no_overlap, recs_item_type
from ..options import Options
from ..sqlfiles import register
from . import beyond_accuracy as spark_beyond
from .columns import col
from .driver import connection as driver_connection
from .exact import schema as sums_schema
from .files import own_names
from .refusals import refusals
from .scoring import (BUCKET, FLAGS, ITEM_COUNTS, NOTED, TRAIN_COLUMNS, TRAIN_ROW,
                      bucket_scorer, score_users, summed_up)

TASK_BYTES = 64 * 2**20  # input bytes (as Spark's plan estimates them) per task
BUCKETS_PER_TASK = 4  # smaller groups for the workers' memory, and tasks of even size


class _Evaluated(NamedTuple):
    summary: dict
    per_user: object


class SparkEvaluation(_Evaluated):
    """summary: as ndcg_duck.evaluate's (means, users and coverage); per_user: a Spark DataFrame
    with one row per evaluated user (None with per_user=False). It unpacks as (summary,
    per_user); per_item, an attribute: with per_item=True the per-item view (an Arrow table,
    ndcg_duck.evaluate's), else None."""

    per_item = None
    grouped = None  # with popularity: popular.Grouped, the sums of each popularity group
    group_rows = None  # with group_rows: each popularity group's per-user rows (popular.py)
    persisted = ()  # what per_user and group_rows are read from, on the workers' disks

    def with_items(self, table, grouped=None, group_rows=None,
                   persisted=()) -> "SparkEvaluation":
        self.per_item, self.grouped, self.group_rows = table, grouped, group_rows
        self.persisted = tuple(persisted)
        return self

    def unpersist(self) -> "SparkEvaluation":
        """Frees the rows per_user (and group_rows) are read from, persisted on the workers'
        disks; unpersisting per_user itself frees nothing (it is a view of those rows)."""
        for rows in self.persisted:
            rows.unpersist()
        return self


def _arrow_schema(df) -> pa.Schema:
    """df's schema as the workers receive its rows in Arrow: a timestamp in the session's time
    zone (TIMESTAMP WITH TIME ZONE to DuckDB, as the default engine reads it from the file)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema,
                           timezone=df.sparkSession.conf.get("spark.sql.session.timeZone"))


def _plan(recs, rels, cols, options, measures, recs_what, rels_what, driver=None,
          train=None, train_of=None, per_item=False) -> tuple:
    """Check the columns and layouts as the default engine does, on empty tables with the inputs'
    schemas, by running the worker's own steps; and --train (`train` as given) with DuckDB as
    the default engine reads it (beyond.load: the same checks and messages; leaks.check for
    --exclude-seen); train_of(): its rows as Spark reads them (train_frame), once checked.
    Returns (Loaded, the per-user Arrow schema, with beyond-accuracy measures the
    beyond_accuracy.Driver that `driver(item type)` makes, or None, how messages name train
    (or None), the depth of the rankings as shown, for the warnings, train_of()'s
    DataFrame, or None, and the recommended items' SQL type). per_item: the per-user rows
    carry the per-item counts (scoring.ITEM_COUNTS)."""
    con = driver_connection()
    made = None
    try:
        register(con)
        empty_recs = _arrow_schema(recs).empty_table()
        empty_rels = _arrow_schema(rels).empty_table()
        loaded = inputs.load(con, empty_recs, empty_rels, cols, require_rows=False)
        loaded = loaded._replace(recs_what=recs_what, rels_what=rels_what)
        item_type = recs_item_type(con, loaded.layout)
        given = beyond.load(con, (), train, None, cols, item_type) if train is not None else None
        train_what = given and given.train
        leaks.check(con, options, loaded.layout, train_what)
        for view in ("ndcg_train", "ndcg_train_src"):  # the workers' steps make their own
            con.execute(f"DROP VIEW IF EXISTS {view}")
        if metric_names.accuracy(measures) != measures:
            made = driver(item_type)
        train_df = train_of() if train is not None else None
        empty_train = None if train_df is None else \
            _arrow_schema(train_df).empty_table().rename_columns([cols.user, cols.item])
        schema = score_users(con, options, measures, loaded, cols.user,
                             made.empty if made else None, train=empty_train, cols=cols,
                             per_item=per_item).schema
        (depth,), = con.sql(f"SELECT {statements.shown_depth(options)}").fetchall()
    except InputError as exc:  # named as the input the caller gave, not as the empty table
        if made is not None:
            made.close()
        text = str(exc)
        for generic, what in (("recommendations (Table)", recs_what),
                              ("relevance (Table)", rels_what)):
            if text.startswith(generic):
                text = what + text[len(generic):]
        raise InputError(text, usage=exc.usage) from None
    except duckdb.Error as exc:
        if made is not None:
            made.close()
        raise InputError(f"cannot evaluate these inputs: {str(exc).strip().splitlines()[0]}") \
            from None
    finally:
        con.close()
    # strings as Spark hands them over (DuckDB may give string views)
    schema = pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type)
                                 else f.type) for f in schema])
    return loaded, schema, made, train_what, depth, train_df, item_type


def train_frame(spark, train, cols: inputs.Columns):
    """--train's user and item columns as Spark reads them (a path; a table in memory, as
    ndcg_duck.spark.evaluate takes it, as the driver's DuckDB reads it), under the names
    TRAIN_COLUMNS; None without train."""
    from .files import read

    if train is None:
        return None
    if isinstance(train, (str, os.PathLike)):
        df = read(spark, train, None, "train", cols)
    else:  # a table in memory (checked by beyond.load): its two columns as DuckDB reads them
        con = driver_connection()
        try:
            inputs.attach_source(con, train, "ndcg_train_src", None, "train")
            table = con.sql(f"SELECT {sqltext.ident(cols.user)}, {sqltext.ident(cols.item)} "
                            f"FROM ndcg_train_src").to_arrow_table()
        finally:
            con.close()
        df = spark.createDataFrame(table.cast(pa.schema([
            pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
            for f in table.schema])))
    return df.select(col(cols.user).alias(TRAIN_COLUMNS[0]),
                     col(cols.item).alias(TRAIN_COLUMNS[1]))


def _columns(df, cols: inputs.Columns, role: str, layout: str):
    """Only the columns the macros read (Parquet reads no others)."""
    names = set(df.columns)
    if role == "recommendations":
        wanted = {"lists": [cols.user, cols.items], "ranks": [cols.user, cols.item, cols.rank],
                  "scores": [cols.user, cols.item, cols.score]}[layout]
    elif cols.item in names:
        wanted = [cols.user, cols.item] + ([cols.relevance] if cols.relevance in names else [])
    else:
        wanted = [cols.user, cols.items]
    return df.select(*[col(name) for name in wanted])


def bucket_count(spark, recs, rels) -> int:
    """Buckets sized from the data: BUCKETS_PER_TASK for every TASK_BYTES of input, as Spark's
    plan estimates the input's size, and at least one task per task slot (core) Spark has."""
    slots = max(1, spark.sparkContext.defaultParallelism)
    size = 0
    for df in (recs, rels):
        try:
            size += int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
        except Exception:  # no estimate: a task per slot
            return BUCKETS_PER_TASK * slots
    return BUCKETS_PER_TASK * max(slots, math.ceil(size / TASK_BYTES))


def refuse_beyond_users(given) -> None:
    """--beyond-users recommended (or a --beyond-as preset that sets it; `given`: the run's
    options, as given or as Options) is not on Spark: its workers keep the top_k lists of the
    evaluated users only (each bucket's users scored from their recommendations and judgments
    together)."""
    chosen = (given.beyond_users if isinstance(given, Options)
              else registry.beyond_settings(given)["beyond_users"])
    if chosen == "recommended":
        raise InputError("--beyond-users recommended (set by --beyond-as rectools, evidently and "
                         "msrec) is not on --engine spark: its workers keep the lists of the "
                         "evaluated users only; use --engine duckdb, or give --beyond-users "
                         "evaluated", usage=True)


def run(spark, recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True,
                     per_item=False, buckets=None, recs_what="recommendations (DataFrame)",
                     rels_what="relevance (DataFrame)", lists=None, ranked=False,
                     popularity=None, group_rows=False, **given) -> SparkEvaluation:
    """evaluate() with its messages in the command line's words. lists: a dict that, with
    per-run beyond-accuracy measures, receives 'driver' (the run's beyond_accuracy.Driver),
    'tops' (a DataFrame of the evaluated users' ids and lists, TOPS) and 'scored' (the
    persisted rows it comes from), for per-segment values: the caller closes the driver and
    unpersists the rows. ranked=True keeps in the per-user rows the flag FLAGS[1] (whether the
    user has recommendations), for compare. popularity (--by item-popularity,
    segments.Popularity): each popularity group scored on the workers too (popular.py), its
    sums in the result's attribute grouped; with group_rows=True (compare) the groups' found
    and top-k places only, and their per-user rows in the attribute group_rows (a Spark
    DataFrame, persisted: popular.split_rows)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    if rels is None:
        raise InputError(outcome.SPARK_NEEDS_JUDGMENTS, usage=True)
    options, measures, settings = outcome.plan(k, given)
    registry.flag("per_item", per_item)
    refuse_beyond_users(options)
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int)
                                or buckets < 1):  # batch_users: checked by the registry
        raise InputError(f"buckets {buckets!r}: give a whole number >= 1", usage=True)
    cols = inputs.Columns.given(**settings)
    recs = own_names(recs, cols, "recommendations", recs_what)
    rels = own_names(rels, cols, "relevance", rels_what)
    cols = replace(cols, own=())  # read under the shared names from here on
    batch_users = settings["batch_users"]
    # each worker's DuckDB limits, as the default engine sets them; one thread by default
    duckdb_settings = tuple((setting, value) for setting, value in (
        (setting, settings[option] or (1 if option == "threads" else None))
        for option, setting in LIMITS.items()) if value is not None)
    beyond.require(measures, settings["train"], settings["items"])
    driver = None
    kept = []  # the persisted rows the result reads (SparkEvaluation.unpersist)
    try:
        with refusals(recs_what, rels_what):
            loaded, schema, driver, train_what, depth, train_df, item_type = _plan(
                recs, rels, cols, options, measures, recs_what, rels_what,
                lambda item_type: spark_beyond.Driver(spark, options, measures, settings, cols,
                                                      item_type),
                settings["train"], lambda: train_frame(spark, settings["train"], cols), per_item)
        # the beyond-accuracy measures read each user's lists from the per-user rows (TOPS)
        rows_kept = per_user or per_item or driver is not None
        with refusals(recs_what, rels_what, driver and driver.given):
            recs = _columns(recs, cols, "recommendations", loaded.layout)
            rels = _columns(rels, cols, "relevance", loaded.layout)
            user_type = from_arrow_schema(pa.schema([schema.field(0)]))[0].dataType
            sent = rels  # with --train, its rows too (scoring.split_train parts them)
            if train_df is not None:
                sent = rels.withColumn(TRAIN_ROW, F.lit(False)).unionByName(
                    train_df.withColumn(TRAIN_ROW, F.lit(True)), allowMissingColumns=True)
            if buckets is None and batch_users is not None:
                (users,), = recs.agg(F.approx_count_distinct(col(cols.user))).collect()
                buckets = max(1, math.ceil(users / batch_users))
            count = buckets or bucket_count(spark, recs, rels)

            tasks = math.ceil(count / BUCKETS_PER_TASK)

            def bucketed(df):
                # both sides hash-partitioned alike by bucket, so the cogroup adds no shuffle;
                # a train row goes with its user's (its id as the user ids are typed; a text
                # id that is no number, such as 'u1' with integer users, matches no user)
                user = col(cols.user).cast(user_type)
                if TRAIN_ROW in df.columns:
                    user = F.when(col(TRAIN_ROW), col(TRAIN_COLUMNS[0]).try_cast(user_type)) \
                        .otherwise(user)
                bucket = F.pmod(F.hash(user), F.lit(count))
                return df.withColumn(BUCKET, bucket).repartition(tasks, BUCKET).groupBy(BUCKET)

            means = tuple(m for m in measures if not metric_names.per_run(m.metric))
            scored = bucketed(recs).cogroup(bucketed(sent)).applyInArrow(
                bucket_scorer(options, measures, cols, schema, duckdb_settings,
                               summed=not rows_kept, shipped=driver and driver.shipped,
                               per_item=per_item),
                from_arrow_schema(schema if rows_kept else sums_schema()))
            if rows_kept:
                scored = scored.persist(StorageLevel.DISK_ONLY)
                kept.append(scored)
            summary, users, counts = summed_up(scored, means, summed=not rows_kept)
            # whole-dataset checks, on the sums of every bucket's users
            problem = next((outcome.no_rows(what) for what, side in
                            ((recs_what, "ranked"), (rels_what, "judged")) if not users[side]),
                           None)
            if problem is None and users["judged"] == users["unranked"]:
                problem = _no_common_user(recs, rels, cols, user_type, loaded)
            if problem is not None:
                if rows_kept:
                    scored.unpersist()
                raise InputError(problem)
            if driver is not None and users["lacking"]:
                try:
                    driver.check_lacking(scored)
                except InputError:
                    scored.unpersist()
                    raise
            evaluated = scored.filter(col(FLAGS[2])) if rows_kept else None
            hidden = tuple(flag for flag in FLAGS if not (ranked and flag == FLAGS[1])) + (
                spark_beyond.TOPS, spark_beyond.LACKING, ITEM_COUNTS) + NOTED
            rows = evaluated.drop(*hidden) if per_user else None
            notes = _notes(rels, cols, options, loaded, users, train_what, depth)
            items = item_view(scored, settings["train"], cols, item_type) if per_item else None
            grouped = users_of_groups = None
            if popularity is not None:
                grouped, users_of_groups = _by_popularity(
                    recs, rels, sent, bucketed, cols, settings, options, measures,
                    duckdb_settings, popularity, schema if group_rows else None, kept)
            if driver is not None:
                values, said = driver.per_run(evaluated)
                summary = outcome.beyond_summary(summary, measures, values, summary, counts)
                notes += said
                if lists is not None and set(values):
                    lists.update(driver=driver, tops=evaluated.select(
                        col(cols.user), spark_beyond.TOPS), scored=scored)
                    driver = None  # the caller's now
                elif not per_user:
                    scored.unpersist()
            elif per_item and not per_user:
                scored.unpersist()
    finally:
        if driver is not None:
            driver.close()
    return SparkEvaluation(summary, rows).with_items(items, grouped, users_of_groups,
                                                     kept), notes


def _by_popularity(recs, rels, sent, bucketed, cols, settings: dict, options: Options, measures,
                   duckdb_settings: tuple, popularity, per_user: pa.Schema = None,
                   kept: list = None) -> tuple:
    """--by item-popularity: the item groups made on the driver (popular.item_groups), each
    group scored per user on the workers by the default engine's steps (popular.group_scorer),
    the buckets' sums added up (popular.Grouped). With per_user (compare: the per-user rows'
    schema), the groups' per-user rows too (popular.split_rows), the persisted rows they are read
    from added to `kept`. Returns (Grouped, those rows or None)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from . import popular

    accuracy = metric_names.accuracy(measures)
    groups, unplaced, as_text = popular.item_groups(
        _arrow_schema(recs).empty_table(), _arrow_schema(rels).empty_table(), cols, settings,
        options, popularity)
    listed = list(dict.fromkeys(groups.column("segment").to_pylist()))
    rows = None if per_user is None else popular.rows_schema(per_user, accuracy)
    found = bucketed(recs).cogroup(bucketed(sent)).applyInArrow(
        popular.group_scorer(options, accuracy, cols, duckdb_settings, groups, unplaced,
                             as_text, rows), from_arrow_schema(rows or sums_schema()))
    users = None
    if rows is not None:
        found, users, persisted = popular.split_rows(found, rows)
        kept.append(persisted)
    return popular.added(found.collect(), listed, unplaced, accuracy, options.k), users


def item_view(scored, train, cols: inputs.Columns, item_type: str) -> pa.Table:
    """The per-item view (leaks.view_sql, as the default engine's): the per-item counts of every
    bucket (the column ITEM_COUNTS of the per-user rows `scored`) added up per cutoff and item
    on Spark (one row per cutoff and item reaches the driver), with train's popularity
    (`train` as given, read on the driver by beyond.load, or None)."""
    from pyspark.sql import functions as F

    counts = scored.select(F.explode(col(ITEM_COUNTS)).alias("c")).select("c.*")
    summed = counts.groupBy("k", "item_id").agg(
        *[F.sum(name).cast("long").alias(name) for name in ("shown", "relevant", "hits")])
    con = driver_connection()
    try:
        register(con)
        con.register("ndcg_item_sums", summed.toArrow())
        if train is not None:
            beyond.load(con, (), train, None, cols, item_type)
        return con.sql(leaks.view_sql(con, "ndcg_item_sums", train is not None, cols.item)
                       ).to_arrow_table()
    finally:
        con.close()


def _notes(rels, cols, options: Options, loaded: inputs.Loaded, users: dict,
           train_what=None, depth=None) -> list:
    """The run's warnings (outcome.run_notes) from what Spark has counted: how many judged
    users have recommendations; the gain map levels found in the judgments (one pass over
    them, only with a gain map); the items seen in train (with train: train_what names it)
    and the tied scores, added up from every bucket's counts (scoring.summed_up), within the
    rankings' first `depth` items."""
    def found(levels):
        if cols.item not in rels.columns or cols.relevance not in rels.columns:
            return {1.0}  # every judgment counts 1
        relevance = col(cols.relevance).cast("double")
        return {row[0] for row in rels.select(relevance.alias("r"))
                .where(relevance.isin(levels)).distinct().collect()}
    return outcome.run_notes(options, loaded,
                             lambda: (users["judged"] - users["unranked"], users["judged"]),
                             found,
                             (lambda: (users["seen"], depth, train_what)) if train_what else None,
                             lambda: (users["tied"], depth))


def _no_common_user(recs, rels, cols, user_type, loaded) -> str:
    """The default engine's message, with the smallest user id of each side."""
    from pyspark.sql import functions as F

    lowest = [df.agg(F.min(col(cols.user).cast(user_type))).collect()[0][0]
              for df in (recs, rels)]
    con = driver_connection()
    try:
        con.register("ndcg_recs", pa.table({"user_id": [lowest[0]]}))
        for name in ("ndcg_judged", "ndcg_rels"):
            con.register(name, pa.table({"user_id": [lowest[1]]}))
        return no_overlap(con, loaded)
    finally:
        con.close()
