"""The Spark engine: the same macros beyond one machine.

Spark reads the inputs and gives every user a bucket, a hash of the user id modulo a number of
buckets sized from the data. `groupBy(bucket).cogroup(...).applyInArrow` moves each bucket's
recommendations and judgments to one worker as two Arrow tables; the worker loads them into an
in-process DuckDB (inputs.load, as the default engine does) and scores their users with the
ndcg_ macros, checks included. There is no second implementation of the metric: Spark only
reads, moves, writes and adds up.

Means are exact sums: each partition adds its users' values as integers (a double is an integer
times a power of two), the driver adds those few partial sums and divides the exact total by the
number of users, rounding once (means.mean_of_sum: every door's rule), so a mean does not
depend on the number of buckets, partitions or workers. Only the partial sums and counts reach the driver; the per-user rows stay in Spark.

Needs the `spark` extra (pyspark >= 4.0) and Java 17 or newer.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from .. import sqltext, statements
from ..evaluation import inputs
from ..report import output, trec
from .. import options as registry, outcome
from ..errors import InputError
from .. import metrics as metric_names
from ..evaluation import beyond
from ..evaluation.evaluate import (core_computes, recs_item_type, no_overlap, wide_sql,
                                   score_users as score_all)
from ..options import Options
from ..sqlfiles import register
from .exact import SCALE, Sums, exact_sum, schema as sums_schema  # noqa: F401 (the API)
from . import beyond_accuracy as spark_beyond
from .columns import col
from .workers import connection as _connection
from .driver import connection as driver_connection
from .files import (check_one_file_per_user, check_output, described, read,  # noqa: F401
                    write_per_user)
from .launch import (INSTALL, cli_session, first_line as _first_line,  # noqa: F401
                      parse_conf)

SHIP = ("Spark's Python workers cannot import {module}: they run another Python than "
        "ndcg-duck's. Give them ndcg-duck's environment, e.g. venv-pack -o ndcg-env.tar.gz, "
        "then --spark-conf spark.archives=ndcg-env.tar.gz#env --spark-conf "
        "spark.pyspark.python=./env/bin/python (README: Beyond one machine)")
BUCKET = "__ndcg_bucket"
FLAGS = ("__ndcg_judged", "__ndcg_ranked", "__ndcg_evaluated", "__ndcg_zero_ideal")
# (worker-only columns)
TASK_BYTES = 64 * 2**20  # input bytes (as Spark's plan estimates them) per task
BUCKETS_PER_TASK = 4  # smaller groups for the workers' memory, and tasks of even size


class SparkEvaluation(NamedTuple):
    """summary: as ndcg_duck.evaluate's (means, users and coverage); per_user: a Spark DataFrame
    with one row per evaluated user (None with per_user=False)."""

    summary: dict
    per_user: object


# --- the worker: one bucket of users, scored by the macros --------------------------------------

def score_users(con, options: Options, measures: tuple, loaded: inputs.Loaded,
                user_col: str, shipped=None, key=None) -> pa.Table:
    """Every user of the loaded inputs (views ndcg_recs, ndcg_rels): the user id, whether they are
    judged, ranked, evaluated and of zero ideal DCG (as evaluate._zero_ideal counts them), and
    the default engine's per-user columns of `measures` (metrics.per_user_columns; NULL unless
    evaluated). The default engine's per-batch step (evaluate.score_users, with the metrics
    macros beyond NDCG) and its ndcg_evaluated, without the whole-dataset steps. `options` has
    the cutoffs the measures need (metrics.cutoffs), as evaluate.run makes them. With the
    beyond-accuracy measures, `shipped` (beyond_accuracy.Shipped) has the per-item tables
    they read (kept in the worker's connection `key`), the per-user ones are columns too, the
    column TOPS has each evaluated user's top_k lists (beyond_accuracy.score) and, with ild,
    LACKING the shown items without features."""
    accuracy = metric_names.accuracy(measures)
    score_all(con, options, loaded.layout, "ndcg_recs", "ndcg_rels", "ndcg_all",
              measures=accuracy)
    evaluated = "ndcg_evaluated" if core_computes(accuracy) else "ndcg_metrics_evaluated"
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result AS "
                f"FROM {evaluated}('ndcg_all', {statements.evaluated_args(options)})")
    relation, tops, lists = "ndcg_result", "", ""
    if shipped is not None:
        relation = spark_beyond.score(con, options, measures, loaded.layout, shipped, key)
        tops = f", t.tops AS {sqltext.ident(spark_beyond.TOPS)}"
        lists = f" LEFT JOIN {spark_beyond.TOPS_SQL} AS t ON t.user_id = u.user_id"
        if any(m.metric == "ild" for m in measures):
            tops += f", {spark_beyond.LACKING_SQL} AS {sqltext.ident(spark_beyond.LACKING)}"
    judged, ranked, evaluated, zero = (sqltext.ident(flag) for flag in FLAGS)
    keep = "" if options.missing == "zero" else " AND has_ranking"
    return con.sql(
        f"WITH wide AS ({wide_sql(measures, '__ndcg_user', relation)}), "
        f"users AS (SELECT user_id, bool_or(has_judgments) AS j, bool_or(has_ranking) AS r, "
        f"          bool_or(has_judgments{keep} AND idcg = 0) AS z "
        f"          FROM ndcg_all GROUP BY user_id) "
        f"SELECT u.user_id AS {sqltext.ident(user_col)}, u.j AS {judged}, u.r AS {ranked}, "
        f"       w.__ndcg_user IS NOT NULL AS {evaluated}, u.z AS {zero}, "
        f"       w.* EXCLUDE (__ndcg_user){tops} "
        f"FROM users AS u LEFT JOIN wide AS w ON w.__ndcg_user = u.user_id{lists}"
    ).to_arrow_table()


def _bucket_scorer(options: Options, measures: tuple, cols: inputs.Columns, schema: pa.Schema,
                   settings: tuple, summed: bool = False, shipped=None):
    """The function Spark runs on each bucket: (recommendations, judgments) -> per-user rows, or
    with summed, the bucket's one row of partial sums (_partial_sums: no per-user row leaves the
    worker, and no second pass reads them). shipped: as score_users takes it."""
    given = dict(options._values)  # Options does not pickle: the worker makes its own
    partial = _partial_sums(measures) if summed else None

    def score(recs: pa.Table, rels: pa.Table) -> pa.Table:
        options = Options(**given)
        con = _connection(settings)
        recs, rels = recs.drop_columns([BUCKET]), rels.drop_columns([BUCKET])
        try:
            loaded = inputs.load(con, recs, rels, cols, require_rows=False)
            table = score_users(con, options, measures, loaded, cols.user, shipped, settings)
        except duckdb.Error as exc:
            # the macros' own message, one line; the driver names the input it came from
            raise RuntimeError(str(exc).strip().splitlines()[0]) from None
        finally:
            for name in ("ndcg_recs_src", "ndcg_rels_src"):
                con.unregister(name)
        table = table.cast(schema)
        return pa.Table.from_batches(list(partial(table.to_batches()))) if summed else table
    return score


# --- exact sums ---------------------------------------------------------------------------------

def _partial_sums(measures: tuple):
    """mapInArrow function: one partition's exact.Sums (group None): its coverage counts
    (COUNTS) and, per measure (key 'm|NAME'), how many users have a value and their exact sum."""
    import pyarrow.compute as pc

    names = [measure.name for measure in measures]

    def partial(batches):
        sums = Sums()
        for name in COUNTS:
            sums.count(None, name, 0)
        for batch in batches:
            j, r = batch.column(FLAGS[0]), batch.column(FLAGS[1])
            for name, flags in (("judged", j), ("ranked", r),
                                ("unranked", pc.and_(j, pc.invert(r))),
                                ("unjudged", pc.and_(r, pc.invert(j))),
                                ("zero", batch.column(FLAGS[3])),
                                ("evaluated", batch.column(FLAGS[2]))):
                sums.count(None, name, pc.sum(flags).as_py() or 0)
            if spark_beyond.LACKING in batch.schema.names:  # ild's items without features
                sums.count(None, "lacking",
                           batch.num_rows - batch.column(spark_beyond.LACKING).null_count)
            for name in names:
                values = batch.column(name).drop_null().cast(pa.float64())
                sums.add(None, f"m|{name}", values.to_numpy(zero_copy_only=False))
        yield sums.batch()

    return partial


COUNTS = ("judged", "ranked", "unranked", "unjudged", "zero", "evaluated", "lacking")


def _summary(scored, measures: tuple, summed: bool = False) -> tuple:
    """Adds up the partial sums of the per-user rows `scored` (or, with summed, the partial sums
    `scored` already holds): (summary dict, {'judged': users, 'ranked': .., 'unranked': ..},
    {measure name: how many users have a value})."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if not summed:
        scored = scored.mapInArrow(_partial_sums(measures), from_arrow_schema(sums_schema()))
    sums = Sums.added(scored.collect())
    users_of = {name: sums.n(None, name) for name in ("judged", "ranked", "unranked", "lacking")}
    summary, counts = {}, {}
    for measure in measures:
        key = f"m|{measure.name}"
        counts[measure.name] = sums.n(None, key)
        if metric_names.counts(measure.metric):  # summed over users, as trec_eval does
            summary[measure.name] = sums.whole(None, key)
        else:
            summary[measure.name] = sums.mean(None, key)
    summary.update(users=sums.n(None, "evaluated"),
                   users_without_recommendations=users_of["unranked"],
                   users_only_in_recommendations=sums.n(None, "unjudged"),
                   users_with_zero_ideal_dcg=sums.n(None, "zero"))
    return summary, users_of, counts


# --- the driver ---------------------------------------------------------------------------------

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


def evaluate(spark, recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True,
             buckets=None, **options) -> SparkEvaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`, two Spark DataFrames in
    the layouts ndcg_duck.evaluate reads (nested lists, or long rows with a rank or a score), on
    the Spark session `spark`. The keyword options are ndcg_duck.evaluate's (gain=, ties=,
    judged_only=, user_col=, ...; threads, memory_limit and temp_dir apply to each worker's
    DuckDB, one thread by default since Spark runs a task per core; batch_users sets about how
    many users a worker scores at once). The beyond-accuracy metrics' train= and items= are
    read on the driver, as ndcg_duck.evaluate reads them (paths or in-memory tables, not Spark
    DataFrames), and their per-item tables are broadcast to the workers.

    Returns the summary (a dict, as ndcg_duck.evaluate's) and the per-user rows as a Spark
    DataFrame (persisted on the workers' disks: unpersist it when done), or None with
    per_user=False. buckets sets how many groups of users the workers score, BUCKETS_PER_TASK to
    a Spark task (default: sized from the data). Raises InputError for bad input or options,
    with the message ndcg_duck.evaluate gives.
    """
    return outcome.in_python(lambda: evaluate_for_cli(spark, recs, rels, k, per_user=per_user,
                                                      buckets=buckets, **options))


def evaluate_for_cli(spark, recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True,
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

    options, measures, settings = outcome.plan(k, given)
    cols = inputs.Columns.given(**settings)
    batch_users = settings["batch_users"]
    for name, value in (("buckets", buckets), ("batch_users", batch_users)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise InputError(f"{name} {value!r}: give a whole number >= 1", usage=True)
    duckdb_settings = tuple((name, value) for name, value in (
        ("threads", settings["threads"] or 1), ("memory_limit", settings["memory_limit"]),
        ("temp_directory", settings["temp_dir"])) if value is not None)
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
                _bucket_scorer(options, measures, cols, schema, duckdb_settings,
                               summed=not rows_kept, shipped=driver and driver.shipped),
                from_arrow_schema(schema if rows_kept else sums_schema()))
            if rows_kept:
                scored = scored.persist(StorageLevel.DISK_ONLY)
            summary, users, counts = _summary(scored, means, summed=not rows_kept)
            # whole-dataset checks, on the sums of every bucket's users
            problem = next((f"{what} has no rows: nothing to evaluate" for what, side in
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
    """The default engine's warnings (evaluate._notes), from what Spark has counted: ids
    compared as text, with how many judged users have recommendations; gain map levels that
    never occur in the judgments (one pass over them, only with a gain map)."""
    notes = []
    if loaded.as_text:
        notes.append(outcome.as_text_note(loaded.as_text, loaded.recs_what, loaded.rels_what,
                                          users["judged"] - users["unranked"], users["judged"]))
    if options.gain_map:
        levels = [level for level, _ in options.gain_map]
        if cols.item in rels.columns and cols.relevance in rels.columns:
            relevance = col(cols.relevance).cast("double")
            found = {row[0] for row in rels.select(relevance.alias("r"))
                     .where(relevance.isin(levels)).distinct().collect()}
        else:  # every judgment counts 1
            found = {1.0}
        unseen = outcome.unseen_levels_note(levels, found, loaded.rels_what)
        notes += [unseen] if unseen else []
    return notes


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


@contextlib.contextmanager
def refusals(recs_what: str, rels_what: str, given: Optional[beyond.Inputs] = None):
    """A check that stopped a worker reaches the caller as the default engine's one-line
    message, naming the input (given: how the beyond-accuracy inputs are named); any other
    Spark failure as its first line."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        text = str(exc)
        named = outcome.named_check(text, {"recommendations": recs_what, "relevance": rels_what,
                                           "items": given and given.items,
                                           "train": given and given.train})
        if named is not None:
            raise InputError(named) from None
        missing = re.search(r"No module named '(duckdb|ndcg_duck|pyarrow)", text)
        if missing:
            raise InputError(SHIP.format(module=missing.group(1))) from None
        errors = re.findall(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception): .*)$", text, re.M)
        raise InputError(f"Spark failed: {errors[-1] if errors else _first_line(text)}") from None


def run_cli(recs, rels, per_user: Optional[str], master: str, conf_pairs,
            show_progress: bool, settings: dict, segments=None, by=None, plot=None,
            fmt: str = "table") -> tuple:
    """ndcg-duck eval --engine spark: read, evaluate, write the per-user rows (to stdout, in the
    format fmt names, for per_user "-"), draw --plot; the
    summary, the notes (warnings) of the run and the --segments rows (None without)."""
    conf = parse_conf(conf_pairs)
    if per_user and per_user != "-":
        check_output(per_user)
    beyond.require(outcome.measured({name: value for name, value in settings.items()  # fail fast
                             if registry.BY_NAME[name].group == "metric"}, None)[1],
                   settings["train"], settings["items"])
    with cli_session(master, conf, show_progress) as spark:
        lists = {} if segments is not None else None  # the per-run metrics per segment
        try:
            return _eval_cli(spark, recs, rels, per_user, settings, segments, by, plot, fmt,
                             lists)
        finally:
            if lists:
                lists["driver"].close()


def _eval_cli(spark, recs, rels, per_user, settings, segments, by, plot, fmt, lists) -> tuple:
    """run_cli's work in the session `spark`."""
    cols = inputs.Columns.given(**settings)
    recs_df = read(spark, recs, settings["recs_format"], "recommendations", cols)
    rels_df = read(spark, rels, settings["rels_format"], "relevance", cols)
    recs_what, rels_what = described("recommendations", recs), described("relevance", rels)
    with refusals(recs_what, rels_what):
        check_one_file_per_user(recs_df, recs_what, settings["user_col"]
                                or registry.BY_NAME["user_col"].shown)
    result, notes = evaluate_for_cli(spark, recs_df, rels_df,
                                     per_user=bool(per_user or segments or plot),
                                     recs_what=recs_what, rels_what=rels_what, lists=lists,
                                     **settings)
    user_col = settings["user_col"] or registry.BY_NAME["user_col"].shown
    rows = None
    with refusals(recs_what, rels_what):
        if per_user == "-" and fmt == "trec":  # trec_eval -q's lines (report/trec.py)
            ordered = result.per_user.orderBy(col(user_col).cast("string")).toLocalIterator()
            names = [name for name in result.summary if metric_names.is_metric(name)]
            for text in trec.per_query_lines((row.asDict() for row in ordered), user_col,
                                             names, settings):
                sys.stdout.write(text)
            sys.stdout.flush()
        elif per_user == "-":
            output.through_file(
                lambda tmp: write_per_user(result.per_user, str(tmp), user_col), fmt)
        elif per_user:
            write_per_user(result.per_user, per_user, user_col)
        if plot:
            from .extras import plot as draw

            draw(result.per_user, result.summary, plot)
        if segments is not None:
            from .extras import by_segment, per_run_by_segment

            rows = by_segment(spark, result.per_user, result.summary, segments, by, user_col)
            if lists:
                per_run_by_segment(spark, lists, rows, result.summary, segments, by, user_col)
    return result.summary, notes, rows
