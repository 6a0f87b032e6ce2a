"""DuckDB's limits (threads, memory, spill directory) and the progress display."""

import io

import duckdb
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT, row
from ndcg_duck import progress as progress_module
from ndcg_duck.cli import cli

RECS = str(ROOT / "examples" / "recs.parquet")
RELS = str(ROOT / "examples" / "relevance.csv")


def test_limits_are_set_on_the_connection(tmp_path):
    con = duckdb.connect()
    ndcg_duck.evaluate(RECS, RELS, threads=1, memory_limit="512MB", temp_dir=str(tmp_path),
                       con=con)
    assert row(con, "SELECT current_setting('threads')") == (1,)
    assert row(con, "SELECT current_setting('temp_directory')") == (str(tmp_path),)
    limit, = row(con, "SELECT current_setting('memory_limit')")
    assert limit.replace(" ", "") in ("512.0MiB", "488.2MiB", "512.0MB", "488.2MB")


def test_bad_memory_limit_is_a_usage_error():
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--memory-limit", "lots"])
    assert result.exit_code == 2
    assert "memory_limit 'lots'" in result.output


def test_progress_appears_after_the_delay_and_is_cleared(monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    stream = io.StringIO()
    con = duckdb.connect()
    with progress_module.progress(con, enabled=True, stream=stream):
        con.sql("SELECT count(*) FROM (SELECT i % 100003 AS g, sum(i) FROM range(20000000) t(i) "
                "GROUP BY g)").fetchall()
    text = stream.getvalue()
    assert text.startswith("\rndcg-duck: ")
    assert text.endswith("\r" + " " * 60 + "\r")


def test_no_progress_when_disabled_or_quick():
    stream = io.StringIO()
    con = duckdb.connect()
    with progress_module.progress(con, enabled=False, stream=stream):
        con.sql("SELECT 1").fetchall()
    with progress_module.progress(con, enabled=True, stream=stream):  # done before the delay
        con.sql("SELECT 1").fetchall()
    assert stream.getvalue() == ""


def test_cli_prints_no_progress_when_stderr_is_not_a_terminal():
    result = CliRunner().invoke(cli, ["eval", RECS, RELS])
    assert result.exit_code == 0
    assert "ndcg-duck:" not in result.output
