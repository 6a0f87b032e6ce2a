"""--engine spark reading tables of the session's catalog by name (table:NAME) for RECS,
RELEVANCE and compare's --run: the same output as the default engine on the files the tables were
saved from (a local warehouse in tmp_path), and the refusals of table: where it is not read."""

import json

import pyarrow.parquet as pq
import pytest

from test_reference_ndcg import recs_table, rels_table
from test_spark import assert_same_rows, dataset, invoke

EXAMPLES = "examples/recs.parquet", "examples/relevance.csv"


@pytest.fixture
def warehouse(spark, tmp_path):
    """The database `runs`, stored in tmp_path: tables recs (three part files, each user's rows
    spread over them), rels and other, saved from the Parquet files beside them."""
    rankings, judgments = dataset(11, users=120)
    other, _ = dataset(12, users=120)
    pq.write_table(recs_table(rankings, "ranks"), tmp_path / "recs.parquet")
    pq.write_table(rels_table(judgments), tmp_path / "rels.parquet")
    pq.write_table(recs_table(other, "lists"), tmp_path / "other.parquet")
    spark.sql(f"CREATE DATABASE runs LOCATION '{tmp_path / 'warehouse' / 'runs.db'}'")
    try:
        for name, parts in (("recs", 3), ("rels", 1), ("other", 2)):
            (spark.read.parquet(str(tmp_path / f"{name}.parquet")).repartition(parts)
             .write.saveAsTable(f"runs.{name}"))
        yield tmp_path
    finally:
        spark.sql("DROP DATABASE runs CASCADE")


def test_eval_reads_catalog_tables_as_the_default_engine_reads_their_files(warehouse):
    args = ["-k", "3,10", "-m", "ndcg,P@3,mrr,num_rel", "--format", "json"]
    want = invoke("eval", warehouse / "recs.parquet", warehouse / "rels.parquet", *args,
                  "--per-user", warehouse / "want.csv")
    # a table's users may lie in several of its files (one dataset, not a glob of runs)
    got = invoke("eval", "table:runs.recs", "table:runs.rels", *args, "--engine", "spark",
                 "--per-user", warehouse / "got.csv")
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    assert got.output == want.output
    assert (warehouse / "got.csv").read_text() == (warehouse / "want.csv").read_text()


def test_per_user_rows_as_a_new_table(spark, warehouse):
    args = ["-k", "3,10", "-m", "ndcg,num_rel"]
    want = invoke("eval", warehouse / "recs.parquet", warehouse / "rels.parquet", *args,
                  "--per-user", warehouse / "want.parquet")
    got = invoke("eval", "table:runs.recs", "table:runs.rels", *args, "--engine", "spark",
                 "--per-user", "table:runs.per_user")
    assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
    rows = spark.table("runs.per_user").toPandas().sort_values("user_id", ignore_index=True)
    assert rows.to_dict("records") == pq.read_table(warehouse / "want.parquet").to_pylist()


def test_compare_reads_catalog_tables_and_files_together(spark, warehouse):
    args = ["-k", "3,10", "-m", "ndcg,P@3", "--format", "json"]
    want = invoke("compare", warehouse / "rels.parquet", "--run",
                  f"a={warehouse / 'recs.parquet'}", "--run", f"b={warehouse / 'other.parquet'}",
                  *args, "--per-user", warehouse / "want.parquet")
    got = invoke("compare", "table:runs.rels", "--run", "a=table:runs.recs", "--run",
                 f"b={warehouse / 'other.parquet'}", *args, "--engine", "spark",
                 "--per-user", "table:runs.pairs")
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    assert_same_rows(json.loads(got.output), json.loads(want.output))
    rows = spark.table("runs.pairs").toPandas().sort_values("user_id", ignore_index=True)
    assert_same_rows(rows.to_dict("records"), pq.read_table(warehouse / "want.parquet").to_pylist())


@pytest.mark.parametrize("args, code, message", [
    (["table:runs.recs", "table:runs.missing", "--engine", "spark"], 1,
     "Error: relevance table runs.missing: no such table in the Spark session's catalog; see the "
     "tables with SHOW TABLES IN DATABASE in spark-sql, or spark.catalog.listTables('DATABASE') "
     "in pyspark\n"),
    (["table:runs.recs", "table:runs.rels", "--engine", "spark", "--per-user", "table:runs.rels"],
     2, "Error: --per-user table:runs.rels: table runs.rels exists: drop it or name another "
     "table\n"),
    (["table:runs.recs", "table:runs.rels", "--engine", "spark", "--recs-format", "parquet"], 2,
     "Error: --recs-format parquet: recommendations table runs.recs is a table, whose columns the "
     "catalog gives: leave out --recs-format\n"),
])
def test_eval_table_errors_on_spark(warehouse, args, code, message):
    result = invoke("eval", *args)
    assert result.exit_code == code and result.output.endswith(message), result.output


@pytest.mark.parametrize("args, message", [
    (["eval", "table:runs.recs", EXAMPLES[1]],
     "RECS table:runs.recs: table:NAME names a table of Spark's catalog, which only --engine "
     "spark reads and writes: add --engine spark, or give a file"),
    (["compare", EXAMPLES[1], "--run", "a=table:runs.recs"],
     "--run a table:runs.recs: table:NAME names a table of Spark's catalog, which only --engine "
     "spark reads and writes: add --engine spark, or give a file"),
    (["eval", "table:", EXAMPLES[1], "--engine", "spark"],
     "RECS table:: name the table after table:, as in table:db.recs"),
    (["eval", *EXAMPLES, "--engine", "spark", "--segments", "table:runs.groups", "--by", "g"],
     "--segments table:runs.groups: --segments is read on Spark's driver from a file, not from "
     "a table: write the table out as Parquet and give its path"),
    (["eval", *EXAMPLES, "--engine", "spark", "--plot", "table:runs.out"],
     "--plot table:runs.out: --plot writes a PNG file, not a table: give a path"),
    (["eval", *EXAMPLES, "--per-user", "table:runs.out"],
     "--per-user table:runs.out: table:NAME names a table of Spark's catalog, which only "
     "--engine spark reads and writes: add --engine spark, or give a file"),
])
def test_table_refusals_before_any_work(args, message, monkeypatch):
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    result = invoke(*args)
    assert result.exit_code == 2 and result.output.endswith(f"Error: {message}\n"), result.output
