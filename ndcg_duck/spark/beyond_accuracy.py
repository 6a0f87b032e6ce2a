"""The beyond-accuracy metrics on Spark: evaluation/beyond.py's steps, shared between the driver
and the workers, each step the default engine's.

Driver: reads --train and --items with DuckDB as the default engine does (beyond.load: the same
checks, messages and notes) and makes the per-item tables (beyond.prepare: the catalogue, and
with their checks the popularity and the features). The two the workers read go to every
worker as Arrow (a Spark broadcast), loaded once into each worker process's DuckDB.
Workers: each bucket's evaluated users' top_k lists (beyond.add_tops), their per-user metrics
by the same macros (beyond.per_user), beside the other metrics; the lists themselves go in the
hidden column TOPS of the per-user rows.
Per-run metrics and the items outside the catalogue: each partition counts the exposure of its
users' lists with ndcg_beyond_exposure; Spark adds the counts per cutoff and item; the driver
runs ndcg_beyond_run_of and ndcg_beyond_outside_of over the sums (beyond.per_run). Per segment,
the same with the segment in the key (ndcg_beyond_run_at).
"""

from __future__ import annotations

import uuid
from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from .. import sqltext
from ..cutoffs import at_k
from ..errors import InputError
from ..evaluation import beyond
from ..evaluation.evaluate import recs_item_type, with_beyond
from ..options import Options
from ..sqlfiles import register
from .driver import connection as driver_connection

TOPS = "__ndcg_tops"  # per user: the top_k lists, [{k, top}], for the per-run metrics
LACKING = "__ndcg_lacking"  # with ild: the bucket's shown items without features (as text)
SHIPPED = ("ndcg_popularity_", "ndcg_features_")  # beyond.prepare's tables the workers read


class Shipped(NamedTuple):
    """What a worker needs for the beyond-accuracy metrics: the driver's Inputs (as_text), a
    token naming this run's tables, and {table name: Spark broadcast of Arrow IPC bytes, or an
    Arrow table}."""

    given: beyond.Inputs
    token: str
    tables: dict


_LOADED = {}  # worker process: {connection key: the token of the tables it holds}


def _load(con, shipped: Shipped, key=None) -> None:
    """Create the shipped tables in `con` (once per token for a cached connection `key`)."""
    if key is not None and _LOADED.get(key) == shipped.token:
        return
    for name, table in shipped.tables.items():
        if not isinstance(table, pa.Table):
            table = pa.ipc.open_stream(table.value).read_all()
        con.register("ndcg_shipped_in", table)
        try:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS FROM ndcg_shipped_in")
        finally:
            con.unregister("ndcg_shipped_in")
    if key is not None:
        _LOADED[key] = shipped.token


def score(con, options: Options, measures: tuple, layout: str, shipped: Shipped,
          key=None) -> str:
    """On a worker, after the bucket's users are scored (evaluate.score_users into ndcg_all, the
    view ndcg_result of the evaluated users): their top_k lists (ndcg_tops_) and per-user
    beyond-accuracy metrics (ndcg_beyond_users), as the default engine's run makes them.
    Returns the relation of per-user rows with those metrics (evaluate.with_beyond)."""
    _load(con, shipped, key)
    beyond.start_tops(con, shipped.given, recs_item_type(con, layout))
    beyond.add_tops(con, options, layout, "ndcg_recs", "ndcg_rels", measures)
    beyond.evaluated_tops(con, "ndcg_result", measures)
    if not any(m.metric == "ild" for m in measures):
        return with_beyond(con, beyond.per_user(con, options, measures))
    # ild's check counts the shown items without features over every bucket (the driver's
    # check_lacking): a bucket that has some leaves ild out
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_lacking_ AS "
                "WITH true_ AS (FROM ndcg_beyond_at('ndcg_tops_', 'ndcg_features_', true)), "
                "false_ AS (FROM ndcg_beyond_at('ndcg_tops_', 'ndcg_features_', false)) "
                "SELECT item_id::VARCHAR AS item_id "
                "FROM ndcg_beyond_missing('true_', 'ndcg_features_', true) UNION "
                "SELECT item_id::VARCHAR FROM ndcg_beyond_missing('false_', 'ndcg_features_', "
                "false)")
    if not con.sql("SELECT 1 FROM ndcg_lacking_ LIMIT 1").fetchall():
        return with_beyond(con, beyond.per_user(con, options, measures))
    columns = beyond.per_user(con, options, tuple(m for m in measures if m.metric != "ild"))
    con.execute("ALTER TABLE ndcg_beyond_users ADD COLUMN ild DOUBLE")
    return with_beyond(con, columns + ("ild",))


LACKING_SQL = "(SELECT list(item_id ORDER BY item_id) FROM ndcg_lacking_)"  # LACKING's value


TOPS_SQL = ("(SELECT user_id, list({'k': k, 'top': top} ORDER BY k NULLS LAST) AS tops "
            "FROM ndcg_tops_ GROUP BY user_id)")  # the TOPS column's values, per user


class Driver:
    """The driver's side of a run's beyond-accuracy metrics: its DuckDB (the per-item tables),
    what the workers need (shipped) and the per-run steps. close() when done."""

    def __init__(self, spark, options: Options, measures: tuple, settings: dict, cols,
                 item_type: str):
        """Read and check train and items (settings' train and items) as the default engine
        does, for recommended item ids of SQL type `item_type`, and make the per-item tables;
        raises InputError with the default engine's messages."""
        self.measures, self.con, self.exposed = measures, driver_connection(), None
        try:
            register(self.con)
            self.given = beyond.load(self.con, measures, settings["train"], settings["items"],
                                     cols, item_type)
            try:
                beyond.prepare(self.con, options, measures, self.given)
            except duckdb.Error as exc:
                raise InputError(beyond.check_message(exc, self.given)) from None
            tables = {}
            for name in SHIPPED:
                if self.con.sql(f"SELECT count(*) FROM duckdb_tables() WHERE temporary AND "
                                f"table_name = '{name}'").fetchall()[0][0]:
                    tables[name] = self.con.sql(f"FROM {name}").to_arrow_table()
            self.empty = Shipped(self.given, "plan", {name: table.schema.empty_table()
                                                       for name, table in tables.items()})
            shipped = {}
            for name, table in tables.items():
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
                shipped[name] = spark.sparkContext.broadcast(sink.getvalue().to_pybytes())
            self.shipped = Shipped(self.given, uuid.uuid4().hex, shipped)
        except BaseException:
            self.con.close()
            raise

    def close(self) -> None:
        """Closes the driver's DuckDB. The broadcasts stay (not destroyed): the per-user rows,
        if Spark recomputes them, read them again."""
        self.con.close()

    def check_lacking(self, rows) -> None:
        """ild's check over every bucket (ndcg_beyond_missing_check): stops, as the default
        engine does, when shown items lack features, naming how many (distinct over the
        buckets' LACKING lists of the per-user `rows`) and the smallest as text."""
        from pyspark.sql import functions as F

        if LACKING not in rows.columns:
            return
        (n, example), = (rows.select(F.explode(LACKING).alias("item")).distinct()
                         .agg(F.count("item"), F.min("item")).collect())
        if not n:
            return
        try:
            self.con.execute(f"SELECT ndcg_beyond_missing_check({int(n)}, "
                             f"{sqltext.literal(example)}, (SELECT cosine FROM "
                             f"ndcg_beyond_cosine_mode('ndcg_features_')))")
        except duckdb.Error as exc:
            raise InputError(beyond.check_message(exc, self.given)) from None

    def per_run(self, tops) -> tuple[dict, list]:
        """The per-run measures and the notes (beyond.per_run) of the lists in `tops` (a Spark
        DataFrame with the column TOPS, a row per evaluated user)."""
        self._exposure(tops)
        self.exposed = tops  # per_run_found reads the same exposure again for every user
        self.con.execute("CREATE OR REPLACE TEMP VIEW ndcg_exposure_ AS "
                         "SELECT k.k AS k, item_id, c FROM ndcg_exposure_in "
                         "WHERE item_id IS NOT NULL")
        self.con.execute("CREATE OR REPLACE TEMP VIEW ndcg_keys_ AS "
                         "SELECT k.k AS k, c AS users FROM ndcg_exposure_in "
                         "WHERE item_id IS NULL")
        return beyond.per_run(self.con, self.measures, self.given)

    def per_run_found(self, tops, segment: Optional[str] = None,
                      everyone: bool = False) -> dict:
        """{segment (None: every user; without `segment` only it): {'users': how many users'
        lists count, 'values': {'coverage@10': value, ...}}}, as comparison.compare's
        _per_run_values (and segments' per_run_by_segment) find them in a default engine's
        run: `tops` has TOPS and the segment column `segment`. everyone: every user's too, with
        segments (their exposure added up over the segments)."""
        found: dict = {}
        if segment is not None or self.exposed is None:
            self._exposure(tops, segment)
            self.exposed = None
        if segment is not None and everyone:
            self._add_everyone()
        for group, k, *values, users in self.con.sql(
                f"WITH exposure_ AS (SELECT k, item_id, c FROM ndcg_exposure_in "
                "                   WHERE item_id IS NOT NULL), "
                f"keys_ AS (SELECT k, c AS users FROM ndcg_exposure_in WHERE item_id IS NULL) "
                f"SELECT k.segment, k.k, {', '.join(beyond.PER_RUN)}, users "
                f"FROM ndcg_beyond_run_as_('exposure_', 'keys_')").fetchall():
            into = found.setdefault(group, {"users": 0, "values": {}})
            into["users"] = max(into["users"], users)  # every user has a list at every k
            for metric, value in zip(beyond.PER_RUN, values):
                into["values"][at_k(metric, k)] = value
        return found

    def _add_everyone(self) -> None:
        """Adds to ndcg_exposure_in every user's rows (segment NULL): each item's exposure, the
        users and the shown items added up over the segments."""
        self.con.execute("INSERT INTO ndcg_exposure_in SELECT {'k': k.k, 'segment': "
                         "NULL::VARCHAR}, item_id, sum(c)::BIGINT, sum(shown)::BIGINT "
                         "FROM ndcg_exposure_in GROUP BY k.k, item_id")

    def _exposure(self, tops, segment: Optional[str] = None) -> None:
        """ndcg_exposure_in in the driver's DuckDB: k, item_id and c, the exposure of the lists
        in `tops` added up over the partitions (_exposure_of), k {k, segment}; and for every k
        a row with item_id NULL, c the users and shown the items of its lists."""
        from pyspark.sql import functions as F
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        element = tops.schema[TOPS].dataType.elementType["top"].dataType.elementType
        schema = StructType([StructField("segment", StringType()), StructField("k", LongType()),
                             StructField("item_id", element), StructField("c", LongType()),
                             StructField("shown", LongType())])
        columns = [TOPS] + ([segment] if segment else [])
        summed = (tops.select(*columns)
                  .mapInArrow(_exposure_of(segment, to_arrow_schema(schema)), schema)
                  .groupBy("segment", "k", "item_id")
                  .agg(F.sum("c").alias("c"), F.sum("shown").alias("shown")))
        self.con.register("ndcg_exposure_arrow", summed.toArrow())
        self.con.execute("CREATE OR REPLACE TEMP TABLE ndcg_exposure_in AS "
                         "SELECT {'k': k, 'segment': segment} AS k, item_id, c, shown "
                         "FROM ndcg_exposure_arrow")
        self.con.unregister("ndcg_exposure_arrow")


def _exposure_of(segment: Optional[str], schema: pa.Schema):
    """mapInArrow function over rows with TOPS (and the column `segment`): per batch, the rows
    (segment, k, item_id, c, shown) of ndcg_beyond_exposure over its lists, per segment, and
    for each (segment, k) a row with item_id NULL, c its users and shown the items of their
    lists; in `schema`."""
    def partial(batches):
        from .workers import connection

        con = connection(())
        group = sqltext.ident(segment) + "::VARCHAR" if segment else "NULL::VARCHAR"
        for batch in batches:
            con.register("ndcg_tops_batch", batch)
            try:
                con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_tops_in AS "
                            f"SELECT {{'k': t.k, 'segment': g}} AS k, t.top "
                            f"FROM (SELECT {group} AS g, unnest({TOPS}) AS t "
                            f"      FROM ndcg_tops_batch WHERE {TOPS} IS NOT NULL)")
                table = con.sql("SELECT k.segment AS segment, k.k AS k, item_id, c, "
                                "NULL AS shown FROM ndcg_beyond_exposure('ndcg_tops_in') "
                                "UNION ALL SELECT k.segment, k.k, NULL, count(*), "
                                "sum(len(top))::BIGINT FROM ndcg_tops_in GROUP BY k"
                                ).to_arrow_table().cast(schema)
            finally:
                con.unregister("ndcg_tops_batch")
            yield from table.to_batches()
    return partial
