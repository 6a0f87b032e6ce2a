import os
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent


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


JAVA = shutil.which("java") or (os.environ.get("JAVA_HOME") and
                                Path(os.environ["JAVA_HOME"], "bin", "java").exists())


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every test that needs one (spark/, doors/test_docs_examples.py);
    skips where no Java runtime is installed."""
    if not JAVA:
        pytest.skip("no Java runtime (java on PATH or JAVA_HOME): Spark cannot start here")
    from pyspark.sql import SparkSession

    # the workers run this interpreter (whose packages hold ndcg_duck), not the python on PATH,
    # so a venv need not be activated; pyspark reads it as the session starts, and it is put
    # back then, as ndcg_duck/spark/launch.py does (the tests' subprocesses keep their own)
    before = os.environ.get("PYSPARK_PYTHON")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        session = (SparkSession.builder.master("local[2]").appName("ndcg-duck tests")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.default.parallelism", "2")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .getOrCreate())
    finally:
        if before is None:
            os.environ.pop("PYSPARK_PYTHON", None)
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


def pytest_collection_modifyitems(items):
    """Mark every test that starts Spark (the `spark` fixture, the folder spark/, or a run with
    --engine spark in a subprocess: test names ending in spark_run) with `spark`, so that CI's
    second pass (.ci/run, duckdb 1.5) can choose among them, and put them in one xdist group:
    one worker runs them all, with one Spark session."""
    for item in items:
        if ("spark" in getattr(item, "fixturenames", ()) or item.path.parent.name == "spark"
                or item.name.endswith("spark_run")):
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.xdist_group("spark"))
