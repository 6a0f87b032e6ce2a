"""The DuckDB connections the Spark engine's driver opens: to check the inputs and plan the run,
to read the segment table, to copy the per-user rows into one file."""

from __future__ import annotations

import duckdb


def connection():
    """A DuckDB connection without DuckDB's progress bar, which it prints to stdout (terminal or
    not) for a query that runs over two seconds: stdout may carry the run's result (`--format
    json`, `--per-user -`)."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    return con
