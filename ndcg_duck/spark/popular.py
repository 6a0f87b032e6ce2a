"""eval --by item-popularity on Spark: the default engine's rows (report/popularity.py) from
exact sums the workers send back; no per-user row reaches the driver.

The driver groups the items by their train popularity with the default engine's macros
(popularity.item_groups_of, on DuckDB: a small per-item table) and ships that table to every
worker, as ild's features are shipped. Each worker scores each group of its bucket's users with
the default engine's own steps (popularity.score_in: the accuracy measures over the judgments of
the group's items) and counts each group's top-k places (popularity.exposure_sql); it sends back
per group the users, each metric's exact sum (and sum of squares, for --ci) and the places. The
driver adds those up and divides (exact.Sums), as segments' exactly rounded means.

compare --by item-popularity on Spark pairs each group's users, so there the same pass sends
back each group's per-user rows instead of its sums (group_scorer with `rows`: rows_schema),
with the same groups found and top-k places; spark/compare.py pairs the rows.
"""

from __future__ import annotations

from typing import NamedTuple

import duckdb
import pyarrow as pa

from ..errors import InputError
from ..evaluation import beyond, inputs
from ..evaluation import intervals as ci
from ..evaluation.evaluate import recs_item_type
from ..options import Options
from ..report import popularity as popular
from ..sqlfiles import register
from .columns import arrow_name, col
from .driver import connection as driver_connection
from .exact import Sums, schema as sums_schema
from .extras import segment_sums, spread_intervals
from .workers import connection as worker_connection

FOUND = "found"  # Sums key: the group has a judged item in the bucket (popularity.score_in)
PLACES = "places|"  # Sums key prefix, then the cutoff: the group's top-k places
USER, GROUP = "__ndcg_user", "__ndcg_group"  # rows_schema's user and group columns


class Grouped(NamedTuple):
    """What a run's popularity groups added up to: the groups of the items (listed), the group
    of unlisted items (unplaced), the accuracy metrics that are means (names), the cutoffs, and
    the workers' sums (per group: users 'u', each metric, FOUND, PLACES + k)."""

    listed: list
    unplaced: str
    names: list
    ks: tuple
    sums: Sums


def item_groups(empty_recs: pa.Table, empty_rels: pa.Table, cols: inputs.Columns,
                settings: dict, options: Options, popularity) -> tuple:
    """On the driver, the default engine's item groups (popularity.item_groups_of: its checks and
    messages on --train) for judgments of the rels' schema (empty_rels; cols: the names they are
    read under): (the table item_id, segment as Arrow, the group of unlisted items, whether ids
    compare as text)."""
    con = driver_connection()
    try:
        register(con)
        inputs.load(con, empty_recs, empty_rels, cols, require_rows=False)
        unplaced, as_text = popular.item_groups_of(con, popularity, settings, options)
        table = con.sql("FROM ndcg_item_groups").to_arrow_table()
    finally:
        con.close()
    return table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type)
                                          else f.type) for f in table.schema])), unplaced, as_text


def rows_schema(per_user: pa.Schema, measures: tuple) -> pa.Schema:
    """The rows group_scorer sends back for compare: the user (USER, typed as the per-user rows'
    first column), the group (GROUP), each averaged metric typed as in the per-user rows
    `per_user`, then exact.schema()'s columns. A user's row has those last columns null; a
    bucket's sums rows (FOUND, PLACES: Grouped's keys) have the others null."""
    fields = [pa.field(USER, per_user.field(0).type), pa.field(GROUP, pa.string())]
    fields += [per_user.field(name) for name in popular.averaged(measures)]
    return pa.schema(fields + list(sums_schema()))


def group_scorer(options: Options, measures: tuple, cols: inputs.Columns, settings: tuple,
                 groups: pa.Table, unplaced: str, as_text: bool, rows: pa.Schema = None):
    """The function Spark runs on each bucket (recommendations, judgments with --train's rows):
    the bucket's exact.Sums rows per popularity group (Grouped's keys); with rows (compare: a
    rows_schema), each group's per-user rows instead of its users' sums, then the sums rows of
    the groups found and their top-k places."""
    from .scoring import BUCKET, split_train

    given = dict(options._values)  # Options does not pickle: the worker makes its own
    names = popular.averaged(measures)

    def score(recs: pa.Table, rels: pa.Table) -> pa.Table:
        options = Options(**given)
        con = worker_connection(settings)
        recs, rels = recs.drop_columns([BUCKET]), rels.drop_columns([BUCKET])
        rels, train = split_train(rels, cols)
        con.register("ndcg_item_groups_src", groups)
        try:
            loaded = inputs.load(con, recs, rels, cols, require_rows=False)
            if train is not None:  # --exclude-seen reads it, as on the default engine
                beyond.load(con, (), train, None, cols, recs_item_type(con, loaded.layout))
            con.execute("CREATE OR REPLACE TEMP TABLE ndcg_item_groups AS "
                        "FROM ndcg_item_groups_src")
            found = popular.score_in(con, options, measures, loaded.layout, unplaced, as_text)
            wide = con.sql("FROM ndcg_pop_wide").to_arrow_table()
            places = con.sql(f"SELECT k, segment, shown FROM ("
                             f"{popular.exposure_sql(options, loaded.layout, as_text, unplaced)})"
                             ).fetchall()
        except duckdb.Error as exc:
            raise RuntimeError(str(exc).strip().splitlines()[0]) from None
        except InputError as exc:
            raise RuntimeError(f"ndcg-duck: {exc}") from None
        finally:
            for name in ("ndcg_recs_src", "ndcg_rels_src", "ndcg_item_groups_src"):
                con.unregister(name)
        sums = Sums()
        for group in found:
            sums.count(group, FOUND, 1)
        for k, group, shown in places:
            sums.count(group, f"{PLACES}{k}", int(shown))
        if rows is not None:
            return _with_sums(wide, sums.batch(), rows)
        wide = wide.rename_columns([arrow_name(n) for n in wide.schema.names])
        batches = list(segment_sums(names, "segment", spread=True)(wide.to_batches()))
        return pa.Table.from_batches(batches + [sums.batch()])
    return score


def _with_sums(wide: pa.Table, sums: pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """A bucket's per-user rows of each group (ndcg_pop_wide: user_id, segment, the metrics)
    followed by its sums rows, in `schema` (rows_schema: each part's other columns null)."""
    fields = list(schema)
    head = len(fields) - len(sums_schema())
    source = {USER: "user_id", GROUP: "segment"}
    users = pa.Table.from_arrays(
        [wide.column(source.get(field.name, field.name)).cast(field.type)
         if source.get(field.name, field.name) in wide.schema.names  # none: no group found
         else pa.nulls(wide.num_rows, field.type) for field in fields[:head]]
        + [pa.nulls(wide.num_rows, field.type) for field in fields[head:]], schema=schema)
    added = pa.Table.from_arrays(
        [pa.nulls(sums.num_rows, field.type) for field in fields[:head]]
        + [sums.column(field.name) for field in fields[head:]], schema=schema)
    return pa.concat_tables([users, added])


def split_rows(found, schema: pa.Schema) -> tuple:
    """group_scorer's rows with rows=schema (rows_schema), a DataFrame: persisted, then (its
    sums rows, as Sums reads them; its users' rows: USER, GROUP, the metrics; the persisted
    rows, for the caller to unpersist), all DataFrames."""
    from pyspark import StorageLevel

    found = found.persist(StorageLevel.DISK_ONLY)
    summed = sums_schema().names
    sums = found.where(col(summed[1]).isNotNull()).select(*[col(name) for name in summed])
    users = found.where(col(summed[1]).isNull()).select(
        *[col(name) for name in schema.names if name not in summed])
    return sums, users, found


def added(rows, listed: list, unplaced: str, measures: tuple, ks) -> Grouped:
    """The workers' rows added up (Grouped)."""
    names = popular.averaged(measures)
    return Grouped(listed, unplaced, names, tuple(ks), Sums.added(rows))


def rows(grouped: Grouped, summary: dict, spec=None) -> tuple:
    """The rows of --by item-popularity (popularity.rows' on the default engine) from the sums:
    '(all)' the run's summary, each group's users, means and exposure@K, with spec (--ci) the
    groups' t intervals. Returns (rows, what the intervals said)."""
    sums, names = grouped.sums, grouped.names
    found = [g for g in sorted(sums.groups()) if sums.n(g, FOUND)]
    every = every_group(grouped)
    counts = {g: sums.n(g, "u") for g in every}
    means = {(g, m): sums.mean(g, m) for g in every for m in names if sums.n(g, "u")}
    out, centres = popular.listed(every, counts, summary, means, names, grouped.unplaced)
    told = ci.said()
    if spec is not None and found:
        averaged = ci.averaged(names)
        intervals, told = spread_intervals(sums, [g for g in every if sums.n(g, "u")], names,
                                           centres, spec)
        popular.with_intervals(out, intervals, averaged)
    popular.with_exposure(out, shares(grouped), grouped.ks)
    return out, told


def every_group(grouped: Grouped) -> list:
    """Every group listed (popularity.groups' rule on the default engine): the groups of the
    items, then the others the judgments have an item in (the group of unlisted items)."""
    found = [g for g in sorted(grouped.sums.groups()) if grouped.sums.n(g, FOUND)]
    return list(dict.fromkeys([*grouped.listed, *found]))


def shares(grouped: Grouped) -> dict:
    """exposure@K of each group from the buckets' top-k places (popularity.exposures' on the
    default engine): {(k, group): its share of every top-k place}; a group never shown has
    none."""
    sums, out = grouped.sums, {}
    for k in grouped.ks:
        key = f"{PLACES}{k}"
        total = sum(sums.n(g, key) for g in sums.groups())
        out.update({(k, g): sums.n(g, key) / total for g in sums.groups()
                    if total and sums.has(g, key)})
    return out
