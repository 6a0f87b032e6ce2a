"""The DuckDB connection each Spark worker process keeps: made once, with the macros, and
reused for every bucket (and every partition the plot's bins read)."""

from __future__ import annotations

import duckdb

from .. import sqltext
from ..sqlfiles import register

_CONNECTION = {}


def connection(settings: tuple):
    """One DuckDB connection per worker process, with the macros, reused for every bucket."""
    con = _CONNECTION.get(settings)
    if con is None:
        con = duckdb.connect()
        for name, value in settings:
            con.execute(f"SET {name} = {sqltext.literal(str(value))}")
        register(con)
        _CONNECTION[settings] = con
    return con
