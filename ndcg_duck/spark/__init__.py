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

`ndcg-duck eval --engine spark` runs through SparkResult, the default engine's result object
(report/result.py) on Spark: the command line has one path for both engines.

Needs the `spark` extra (pyspark >= 4.0) and Java 17 or newer.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from .. import sqltext, statements
from ..evaluation import inputs
from ..report import output
from ..report.result import Result
from .. import options as registry, outcome
from ..errors import InputError
from .. import metrics as metric_names
from ..evaluation import beyond
from ..evaluation.evaluate import (core_computes, recs_item_type, no_overlap, wide_sql,
                                   score_users as score_all, user_flags_sql, LIMITS)
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
    judged, ranked, evaluated and of zero ideal DCG (evaluate.user_flags_sql's flags), and
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
    return con.sql(
        f"WITH wide AS ({wide_sql(measures, '__ndcg_user', relation)}), "
        f"users AS ({user_flags_sql(options)}) "
        f"SELECT u.user_id AS {sqltext.ident(user_col)}, u.judged AS {judged}, "
        f"       u.ranked AS {ranked}, w.__ndcg_user IS NOT NULL AS {evaluated}, "
        f"       u.zero_ideal AS {zero}, "
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
    summary["users"] = sums.n(None, "evaluated")
    summary.update(outcome.user_counts(users_of["unranked"], sums.n(None, "unjudged"),
                                       sums.n(None, "zero")))
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
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int)
                                or buckets < 1):  # batch_users: checked by the registry
        raise InputError(f"buckets {buckets!r}: give a whole number >= 1", usage=True)
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
                _bucket_scorer(options, measures, cols, schema, duckdb_settings,
                               summed=not rows_kept, shipped=driver and driver.shipped),
                from_arrow_schema(schema if rows_kept else sums_schema()))
            if rows_kept:
                scored = scored.persist(StorageLevel.DISK_ONLY)
            summary, users, counts = _summary(scored, means, summed=not rows_kept)
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
        named = outcome.named_input(text, recs_what, rels_what, given)
        if named is not None:
            raise InputError(named) from None
        missing = re.search(r"No module named '(duckdb|ndcg_duck|pyarrow)", text)
        if missing:
            raise InputError(SHIP.format(module=missing.group(1))) from None
        errors = re.findall(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception): .*)$", text, re.M)
        raise InputError(f"Spark failed: {errors[-1] if errors else _first_line(text)}") from None


class SparkResult(Result):
    """An eval run on Spark for the command line (report/result.py's interface): the session
    (launch.cli_session: master, conf_pairs as --spark-conf gives them, show_progress: Spark's
    progress bar, else its log in a temporary file) stays up until close. per_user: keep the
    per-user rows (for --per-user, --segments and --plot); by_segment: keep, with per-run
    metrics, the evaluated users' lists for --segments."""

    def __init__(self, recs, rels, settings: dict, *, per_user: bool, show_progress: bool,
                 by_segment: bool = False, master: str = "local[*]", conf_pairs=()):
        self.recs, self.rels, self.per_user, self.show = recs, rels, per_user, show_progress
        self.master, self.conf_pairs, self.by_segment = master, conf_pairs, by_segment
        super().__init__(settings)

    check_output = staticmethod(check_output)

    def open(self, stack) -> None:
        settings = self.settings
        conf = parse_conf(self.conf_pairs)
        beyond.require(outcome.measured({name: value for name, value in settings.items()
                                         if registry.BY_NAME[name].group == "metric"},
                                        None)[1],  # fail fast, before Spark starts
                       settings["train"], settings["items"])
        self.spark = stack.enter_context(cli_session(self.master, conf, self.show))
        self.lists = {} if self.by_segment else None  # the per-run metrics per segment
        stack.callback(self._drop_lists)
        cols = inputs.Columns.given(**settings)
        recs = read(self.spark, self.recs, settings["recs_format"], "recommendations", cols)
        rels = read(self.spark, self.rels, settings["rels_format"], "relevance", cols)
        self.names = (described("recommendations", self.recs),
                      described("relevance", self.rels))
        with refusals(*self.names):
            check_one_file_per_user(recs, self.names[0], self.user_col)
        self.result, self._notes = evaluate_for_cli(
            self.spark, recs, rels, per_user=self.per_user, recs_what=self.names[0],
            rels_what=self.names[1], lists=self.lists, **settings)

    def _drop_lists(self) -> None:
        if self.lists:
            self.lists["driver"].close()

    def summary(self) -> dict:
        return self.result.summary

    def notes(self) -> list:
        return self._notes

    def write_per_user(self, path: str, fmt: str) -> None:
        """The per-user rows to `path` (a file, or part files in a directory), or to stdout
        for '-' (in `fmt`)."""
        rows = self.result.per_user
        with refusals(*self.names):
            if path == "-":
                output.through_file(lambda tmp: write_per_user(rows, str(tmp), self.user_col),
                                    fmt)
            else:
                write_per_user(rows, path, self.user_col)

    def plot(self, path) -> None:
        from .extras import plot as draw

        with refusals(*self.names):
            draw(self.result.per_user, self.result.summary, path)

    def segments(self, segments, by: str) -> list:
        from .extras import by_segment, per_run_by_segment

        with refusals(*self.names):
            rows = by_segment(self.spark, self.result.per_user, self.result.summary, segments,
                              by, self.user_col)
            if self.lists:
                per_run_by_segment(self.spark, self.lists, rows, self.result.summary,
                                   segments, by, self.user_col)
        return rows
