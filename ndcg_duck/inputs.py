"""Load recommendations and relevance judgments into a DuckDB connection as canonical views.

After loading, `ndcg_recs` holds the recommendations in one of three layouts (user_id, items),
(user_id, item_id, rank) or (user_id, item_id, score), and `ndcg_rels` holds the judgments as
(user_id, item_id, relevance). Column names are the user's; ids keep their types unless the two
inputs disagree, in which case both sides are compared as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import duckdb

from .errors import InputError

FORMATS = ("parquet", "csv", "json", "trec")
EXTENSIONS = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "csv",
    ".json": "json", ".jsonl": "json", ".ndjson": "json",
}
READERS = {"parquet": "read_parquet", "csv": "read_csv", "json": "read_json"}
# TREC text files: a run (recommendations) or qrels (relevance), read by the macros of
# sql/ndcg_trec.sql into user_id, item_id and score or relevance.
TREC_READERS = {"recommendations": ("ndcg_trec_run", "score"),
                "relevance": ("ndcg_trec_qrels", "relevance")}
TEXT_TYPES = ("VARCHAR",)
NUMBER = re.compile(r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL.*|BOOLEAN)$")


@dataclass(frozen=True)
class Columns:
    """The column names in the user's files; one name serves both files."""

    user: str = "user_id"
    item: str = "item_id"
    items: str = "items"
    rank: str = "rank"
    score: str = "score"
    relevance: str = "relevance"


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _is_list(sql_type: str) -> bool:
    return re.search(r"\[\d*\]$", sql_type) is not None


def _element(sql_type: str) -> str:
    return re.sub(r"\[\d*\]$", "", sql_type)


FORMAT_FLAGS = {"recommendations": "--recs-format", "relevance": "--rels-format"}


def format_of(path: str, fmt: str | None, role: str) -> str:
    if fmt:
        return fmt
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() not in (".gz", ".zst")]
    fmt = EXTENSIONS.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {role} file {path} from its extension; "
            f"use a .parquet, .csv or .json name, or {FORMAT_FLAGS[role]}", usage=True)
    return fmt


def _has_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def attach_source(con, source, name: str, fmt: str | None, role: str,
                  cols: Columns = Columns()) -> tuple[str, bool]:
    """Make `source` (a path, DuckDB relation, Arrow table or pandas/polars DataFrame) the view
    or table `name` in `con`. A TREC file's columns get the names in `cols`. Returns a
    description of the source for messages, and whether its rows can be counted without
    parsing it (Parquet, or data in memory)."""
    if isinstance(source, (str, Path)):
        path = str(source)
        if not _has_glob(path) and not Path(path).exists():
            raise InputError(f"{role} file {path} does not exist")
        fmt = format_of(path, fmt, role)
        if fmt == "trec":
            reader, value = TREC_READERS[role]
            select = (f"user_id AS {ident(cols.user)}, item_id AS {ident(cols.item)}, "
                      f"{value} AS {ident(getattr(cols, value))}")
        else:
            reader, select = READERS[fmt], "*"
        try:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {select} "
                        f"FROM {reader}({literal(path)})")
        except duckdb.Error as exc:
            raise InputError(f"cannot read {role} file {path}: {_first_line(exc)}") from None
        return f"{role} file {path}", fmt == "parquet"
    try:
        if isinstance(source, duckdb.DuckDBPyRelation):
            source = source.to_arrow_table()
        elif type(source).__module__.split(".")[0] == "polars":
            source = source.to_arrow()
        con.register(name, source)
    except Exception as exc:  # duckdb raises several types for objects it cannot scan
        raise InputError(f"cannot use {role} of type {type(source).__name__}: pass a path, a "
                         f"DuckDB relation, an Arrow table or a pandas/polars DataFrame") from None
    return f"{role} ({type(source).__name__})", True


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


def _schema(con, name: str, what: str) -> dict:
    try:
        return {row[0]: row[1] for row in con.sql(f"DESCRIBE {name}").fetchall()}
    except duckdb.Error as exc:
        raise InputError(f"cannot read {what}: {_first_line(exc)}") from None


def _need(schema: dict, column: str, what: str, flag: str) -> None:
    if column not in schema:
        found = ", ".join(schema) or "none"
        if len(schema) == 1 and any(sep in found for sep in ",;\t|"):
            raise InputError(f"{what}: its rows could not be split into columns (one column "
                             f"found: {found}); check that every row has the same number of "
                             f"fields")
        raise InputError(f"{what}: no column {column!r} (columns found: {found}); "
                         f"name it with {flag}")


def _need_number(schema: dict, column: str, what: str) -> None:
    if not NUMBER.match(schema[column]):
        raise InputError(f"{what}: column {column!r} is {schema[column]}, not a number; "
                         f"convert it, or name another column")


def recs_layout(schema: dict, cols: Columns, what: str) -> str:
    """Which layout the recommendations are in: 'lists', 'ranks' or 'scores'."""
    _need(schema, cols.user, what, "--user-col")
    if cols.items in schema:
        if not _is_list(schema[cols.items]):
            raise InputError(f"{what}: column {cols.items!r} is {schema[cols.items]}, not a list "
                             f"of item ids; give lists, or long rows with --item-col and "
                             f"--rank-col or --score-col")
        return "lists"
    if cols.item not in schema:
        found = ", ".join(schema)
        raise InputError(f"{what}: no column {cols.items!r} (a list of item ids) or {cols.item!r} "
                         f"(one item per row) (columns found: {found}); name it with "
                         f"--items-col or --item-col")
    for layout, column in (("ranks", cols.rank), ("scores", cols.score)):
        if column in schema:
            _need_number(schema, column, what)
            return layout
    raise InputError(f"{what}: long rows need a column {cols.rank!r} or {cols.score!r} "
                     f"(columns found: {', '.join(schema)}); name it with --rank-col or --score-col")


def rels_layout(schema: dict, cols: Columns, what: str) -> str:
    """Which layout the judgments are in: 'long' (with or without relevance) or 'lists'."""
    _need(schema, cols.user, what, "--user-col")
    if cols.item in schema:
        if cols.relevance in schema:
            _need_number(schema, cols.relevance, what)
        return "long"
    if cols.items in schema and _is_list(schema[cols.items]):
        return "lists"
    raise InputError(f"{what}: no column {cols.item!r} (one judged item per row) or "
                     f"{cols.items!r} (a list of relevant items) (columns found: "
                     f"{', '.join(schema)}); name it with --item-col or --items-col")


class Loaded(NamedTuple):
    layout: str  # of the recommendations: 'lists', 'ranks' or 'scores'
    recs_what: str  # how messages name the recommendations, e.g. "recommendations file x.csv"
    rels_what: str
    recs_countable: bool  # Parquet or in memory: counting its rows costs next to nothing


def load(con, recs, rels, cols: Columns, recs_format=None, rels_format=None,
         require_rows: bool = True) -> Loaded:
    """Create the views ndcg_recs and ndcg_rels over the inputs, checking their columns.
    require_rows=False accepts an input without rows (the Spark engine's share of a worker)."""
    recs_what, countable = attach_source(con, recs, "ndcg_recs_src", recs_format,
                                         "recommendations", cols)
    rels_what, _ = attach_source(con, rels, "ndcg_rels_src", rels_format, "relevance", cols)
    for name, what in (("ndcg_recs_src", recs_what), ("ndcg_rels_src", rels_what)):
        try:
            empty = not con.sql(f"SELECT 1 FROM {name} LIMIT 1").fetchall()
        except duckdb.Error as exc:
            raise InputError(f"cannot read {what}: {_first_line(exc)}") from None
        if empty and require_rows:
            raise InputError(f"{what} has no rows: nothing to evaluate")
    recs_schema = _schema(con, "ndcg_recs_src", recs_what)
    rels_schema = _schema(con, "ndcg_rels_src", rels_what)
    layout = recs_layout(recs_schema, cols, recs_what)
    rels_kind = rels_layout(rels_schema, cols, rels_what)

    recs_item = (_element(recs_schema[cols.items]) if layout == "lists"
                 else recs_schema[cols.item])
    rels_item = (rels_schema[cols.item] if rels_kind == "long"
                 else _element(rels_schema[cols.items]))
    user_text = _as_text(recs_schema[cols.user], rels_schema[cols.user])
    item_text = _as_text(recs_item, rels_item)

    user = _id(cols.user, user_text)
    if layout == "lists":
        items = ident(cols.items) + ("::VARCHAR[]" if item_text else "")
        body = f"{user} AS user_id, {items} AS items"
    else:
        order = cols.rank if layout == "ranks" else cols.score
        body = (f"{user} AS user_id, {_id(cols.item, item_text)} AS item_id, "
                f"{ident(order)} AS {layout[:-1]}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs AS SELECT {body} FROM ndcg_recs_src")

    if rels_kind == "long":
        relevance = ident(cols.relevance) if cols.relevance in rels_schema else "1"
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels AS SELECT {user} AS user_id, "
                    f"{_id(cols.item, item_text)} AS item_id, {relevance} AS relevance "
                    f"FROM ndcg_rels_src")
    else:
        items = ident(cols.items) + ("::VARCHAR[]" if item_text else "")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_lists AS SELECT {user} AS user_id, "
                    f"{items} AS items FROM ndcg_rels_src")
        con.execute("CREATE OR REPLACE TEMP VIEW ndcg_rels AS "
                    "FROM ndcg_judged_lists('ndcg_rels_lists')")
    return Loaded(layout, recs_what, rels_what, countable)


def _as_text(left: str, right: str) -> bool:
    """Compare ids as text when one side is text and the other is not."""
    return left != right and (left in TEXT_TYPES or right in TEXT_TYPES)


def _id(column: str, as_text: bool) -> str:
    return ident(column) + ("::VARCHAR" if as_text else "")
