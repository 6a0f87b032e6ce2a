import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def con():
    """A DuckDB connection with every ndcg_ macro registered."""
    import ndcg_duck

    connection = duckdb.connect()
    ndcg_duck.register(connection)
    yield connection
    connection.close()


def row(con, sql):
    """The single row a query returns (works on duckdb 1.5 and 2.0 alike)."""
    rows = con.sql(sql).fetchall()
    assert len(rows) == 1, rows
    return rows[0]
