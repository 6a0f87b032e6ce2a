"""SQL text: names and values quoted for the SQL the package writes, one definition each.

DuckDB: identifiers ("name"), string literals ('text'), list and map literals. Spark: a column
name in backticks, as Spark's column expressions read it."""

from __future__ import annotations

from typing import Iterable, Optional


def ident(name: str) -> str:
    """A DuckDB identifier: "name", any " in it doubled."""
    return '"' + name.replace('"', '""') + '"'


def literal(text) -> str:
    """A SQL string literal of str(text): 'text', any ' in it doubled."""
    return "'" + str(text).replace("'", "''") + "'"


def text_list(texts: Iterable) -> str:
    """A list literal of string literals: ['a', 'b']."""
    return "[" + ", ".join(literal(text) for text in texts) + "]"


def bigint_list(values: Iterable[Optional[int]]) -> str:
    """A BIGINT[] literal; None is NULL (a cutoff None: 'all')."""
    return "[" + ", ".join("NULL" if v is None else str(int(v)) for v in values) + "]::BIGINT[]"


def double_map(pairs) -> str:
    """A MAP(DOUBLE, DOUBLE) literal of (key, value) pairs, or NULL for None."""
    if pairs is None:
        return "NULL"
    keys = ", ".join(repr(key) for key, _ in pairs)
    values = ", ".join(repr(value) for _, value in pairs)
    return f"MAP([{keys}]::DOUBLE[], [{values}]::DOUBLE[])"


def spark_name(name: str) -> str:
    """A column name as Spark's column expressions read it: `name`, any ` in it doubled (a dot
    or space in it stays part of the name)."""
    return "`" + name.replace("`", "``") + "`"
