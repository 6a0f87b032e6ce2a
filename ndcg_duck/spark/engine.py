"""Spark's driver for one evaluation: checks the inputs as the default engine does (on empty
tables of their schemas: _plan), sends each bucket of users to a worker (scoring.bucket_scorer),
adds up the workers' exact sums (scoring.summed_up) and makes the whole-dataset checks and
warnings from them (outcome's texts, as the default engine's). `run` is ndcg_duck.spark.evaluate
in the command line's words."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import duckdb
import pyarrow as pa

from .. import metrics as metric_names, options as registry, outcome
from ..errors import InputError
from ..evaluation import beyond, inputs
from ..evaluation.evaluate import LIMITS, no_overlap, recs_item_type
from ..options import Options
from ..sqlfiles import register
from . import beyond_accuracy as spark_beyond
from .columns import col
from .driver import connection as driver_connection
from .exact import schema as sums_schema
from .files import own_names
from .refusals import refusals
from .scoring import BUCKET, FLAGS, bucket_scorer, score_users, summed_up

TASK_BYTES = 64 * 2**20  # input bytes (as Spark's plan estimates them) per task
BUCKETS_PER_TASK = 4  # smaller groups for the workers' memory, and tasks of even size


class SparkEvaluation(NamedTuple):
    """summary: as ndcg_duck.evaluate's (means, users and coverage); per_user: a Spark DataFrame
    with one row per evaluated user (None with per_user=False)."""

    summary: dict
    per_user: object


def _arrow_schema(df) -> pa.Schema:
    """df's schema as the workers receive its rows in Arrow: a timestamp in the session's time
    zone (TIMESTAMP WITH TIME ZONE to DuckDB, as the default engine reads it from the file)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema,
                           timezone=df.sparkSession.conf.get("spark.sql.session.timeZone"))


def _plan(recs, rels, cols, options, measures, recs_what, rels_what, driver=None) -> tuple:
    """Check the columns and layouts as the default engine does, on empty tables with the inputs'
    schemas, by running the worker's own steps; returns (Loaded, the per-user Arrow schema, and
    with beyond-accuracy measures the beyond_accuracy.Driver that `driver(item type)` makes, or
    None)."""
    con = driver_connection()
    made = None
    try:
        register(con)
        empty_recs = _arrow_schema(recs).empty_table()
        empty_rels = _arrow_schema(rels).empty_table()
        loaded = inputs.load(con, empty_recs, empty_rels, cols, require_rows=False)
        loaded = loaded._replace(recs_what=recs_what, rels_what=rels_what)
        if metric_names.accuracy(measures) != measures:
            made = driver(recs_item_type(con, loaded.layout))
        schema = score_users(con, options, measures, loaded, cols.user,
                             made.empty if made else None).schema
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
    return loaded, schema, made


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


def refuse_leaks(exclude_seen: bool = False, per_item: bool = False) -> None:
    """--exclude-seen and --per-item are not on Spark: the workers hold no train rows and
    gather no per-item counts."""
    said = "--exclude-seen" if exclude_seen else "--per-item" if per_item else None
    if said:
        raise InputError(f"{said} is not on --engine spark (its workers do not read --train's "
                         f"rows or gather the counts per item): use --engine duckdb",
                         usage=True)


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
                     buckets=None, recs_what="recommendations (DataFrame)",
                     rels_what="relevance (DataFrame)", lists=None, ranked=False,
                     **given) -> SparkEvaluation:
    """evaluate() with its messages in the command line's words. lists: a dict that, with
    per-run beyond-accuracy measures, receives 'driver' (the run's beyond_accuracy.Driver),
    'tops' (a DataFrame of the evaluated users' ids and lists, TOPS) and 'scored' (the
    persisted rows it comes from), for per-segment values: the caller closes the driver and
    unpersists the rows. ranked=True keeps in the per-user rows the flag FLAGS[1] (whether the
    user has recommendations), for compare."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    if rels is None:
        raise InputError(outcome.SPARK_NEEDS_JUDGMENTS, usage=True)
    options, measures, settings = outcome.plan(k, given)
    refuse_leaks(options.exclude_seen)
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
    try:
        with refusals(recs_what, rels_what):
            loaded, schema, driver = _plan(
                recs, rels, cols, options, measures, recs_what, rels_what,
                lambda item_type: spark_beyond.Driver(spark, options, measures, settings, cols,
                                                      item_type))
        # the beyond-accuracy measures read each user's lists from the per-user rows (TOPS)
        rows_kept = per_user or driver is not None
        with refusals(recs_what, rels_what, driver and driver.given):
            recs = _columns(recs, cols, "recommendations", loaded.layout)
            rels = _columns(rels, cols, "relevance", loaded.layout)
            user_type = from_arrow_schema(pa.schema([schema.field(0)]))[0].dataType
            if buckets is None and batch_users is not None:
                (users,), = recs.agg(F.approx_count_distinct(col(cols.user))).collect()
                buckets = max(1, math.ceil(users / batch_users))
            count = buckets or bucket_count(spark, recs, rels)

            tasks = math.ceil(count / BUCKETS_PER_TASK)

            def bucketed(df):
                # both sides hash-partitioned alike by bucket, so the cogroup adds no shuffle
                bucket = F.pmod(F.hash(col(cols.user).cast(user_type)), F.lit(count))
                return df.withColumn(BUCKET, bucket).repartition(tasks, BUCKET).groupBy(BUCKET)

            means = tuple(m for m in measures if not metric_names.per_run(m.metric))
            scored = bucketed(recs).cogroup(bucketed(rels)).applyInArrow(
                bucket_scorer(options, measures, cols, schema, duckdb_settings,
                               summed=not rows_kept, shipped=driver and driver.shipped),
                from_arrow_schema(schema if rows_kept else sums_schema()))
            if rows_kept:
                scored = scored.persist(StorageLevel.DISK_ONLY)
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
                spark_beyond.TOPS, spark_beyond.LACKING)
            rows = evaluated.drop(*hidden) if per_user else None
            notes = _notes(rels, cols, options, loaded, users)
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
    finally:
        if driver is not None:
            driver.close()
    return SparkEvaluation(summary, rows), notes


def _notes(rels, cols, options: Options, loaded: inputs.Loaded, users: dict) -> list:
    """The run's warnings (outcome.run_notes) from what Spark has counted: how many judged
    users have recommendations; the gain map levels found in the judgments (one pass over
    them, only with a gain map)."""
    def found(levels):
        if cols.item not in rels.columns or cols.relevance not in rels.columns:
            return {1.0}  # every judgment counts 1
        relevance = col(cols.relevance).cast("double")
        return {row[0] for row in rels.select(relevance.alias("r"))
                .where(relevance.isin(levels)).distinct().collect()}
    return outcome.run_notes(options, loaded,
                             lambda: (users["judged"] - users["unranked"], users["judged"]),
                             found)


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
