"""eval --by item-popularity on Spark: the default engine's rows (report/popularity.py) from
exact sums the workers send back; no per-user row reaches the driver.

The driver groups the items by their train popularity with the default engine's macros
(popularity.item_groups_of, on DuckDB: a small per-item table) and ships that table to every
worker, as ild's features are shipped. Each worker scores each group of its bucket's users with
the default engine's own steps (popularity.score_in: the accuracy measures over the judgments of
the group's items) and counts each group's top-k places (popularity.exposure_sql); it sends back
per group the users, each metric's exact sum (and sum of squares, for --ci) and the places. The
driver adds those up and divides (exact.Sums), as segments' exactly rounded means.
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
from .columns import arrow_name
from .driver import connection as driver_connection
from .exact import Sums
from .extras import segment_sums, spread_intervals
from .workers import connection as worker_connection

FOUND = "found"  # Sums key: the group has a judged item in the bucket (popularity.score_in)
PLACES = "places|"  # Sums key prefix, then the cutoff: the group's top-k places


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


def group_scorer(options: Options, measures: tuple, cols: inputs.Columns, settings: tuple,
                 groups: pa.Table, unplaced: str, as_text: bool):
    """The function Spark runs on each bucket (recommendations, judgments with --train's rows):
    the bucket's exact.Sums rows per popularity group (Grouped's keys)."""
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
        wide = wide.rename_columns([arrow_name(n) for n in wide.schema.names])
        batches = list(segment_sums(names, "segment", spread=True)(wide.to_batches()))
        sums = Sums()
        for group in found:
            sums.count(group, FOUND, 1)
        for k, group, shown in places:
            sums.count(group, f"{PLACES}{k}", int(shown))
        return pa.Table.from_batches(batches + [sums.batch()])
    return score


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
    every = list(dict.fromkeys([*grouped.listed, *found]))
    counts = {g: sums.n(g, "u") for g in every}
    means = {(g, m): sums.mean(g, m) for g in every for m in names if sums.n(g, "u")}
    out, centres = popular.listed(every, counts, summary, means, names, grouped.unplaced)
    told = ci.said()
    if spec is not None and found:
        averaged = ci.averaged(names)
        intervals, told = spread_intervals(sums, [g for g in every if sums.n(g, "u")], names,
                                           centres, spec)
        popular.with_intervals(out, intervals, averaged)
    shares = {}
    for k in grouped.ks:
        key = f"{PLACES}{k}"
        total = sum(sums.n(g, key) for g in sums.groups())
        shares.update({(k, g): sums.n(g, key) / total for g in sums.groups()
                       if total and sums.has(g, key)})
    popular.with_exposure(out, shares, grouped.ks)
    return out, told
