"""DuckDB's limits (threads, memory, spill directory) and the progress display."""

import importlib
import io

import duckdb
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT, row
from ndcg_duck.cli import common as cli_module
from ndcg_duck.evaluation import progress as progress_module
from ndcg_duck.cli import cli

evaluate_module = importlib.import_module("ndcg_duck.evaluation.evaluate")
RECS = str(ROOT / "examples" / "recs.parquet")
RELS = str(ROOT / "examples" / "relevance.csv")


def test_limits_hold_during_the_run_and_the_callers_connection_is_left_as_it_was(
        tmp_path, monkeypatch):
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute("SET memory_limit = '3GB'")
    con.execute("CREATE TEMP VIEW ndcg_recs AS SELECT 'mine' AS owner")  # named like one of ours
    con.execute("CREATE TABLE ndcg_all AS SELECT 42 AS answer")
    con.execute("CREATE TEMP MACRO ndcg_gain(relevance, gain) AS 'mine'")
    settings = ("threads", "memory_limit", "temp_directory", "enable_progress_bar",
                "block_allocator_memory")
    before = [row(con, f"SELECT current_setting('{name}')") for name in settings]
    objects = ("SELECT count(*) FROM (SELECT view_name FROM duckdb_views() WHERE NOT internal "
               "UNION ALL SELECT table_name FROM duckdb_tables() UNION ALL SELECT function_name "
               "FROM duckdb_functions() WHERE NOT internal)")
    (count_before,) = row(con, objects)
    seen = []
    real_run = evaluate_module._run

    def spy(work, *args, **kwargs):
        seen.extend(row(work, f"SELECT current_setting('{name}')")[0] for name in settings[:3])
        return real_run(work, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "_run", spy)
    result = ndcg_duck.evaluate(RECS, RELS, threads=1, memory_limit="512MB",
                                temp_dir=str(tmp_path), con=con)
    assert result.summary["users"] == 5
    assert seen[0] == 1 and seen[2] == str(tmp_path)
    assert seen[1].replace(" ", "") in ("488.2MiB", "488.2MB")  # 512MB, as DuckDB shows it
    assert [row(con, f"SELECT current_setting('{name}')") for name in settings] == before
    assert row(con, "FROM ndcg_recs") == ("mine",)
    assert row(con, "FROM ndcg_all") == (42,)
    assert row(con, "SELECT ndcg_gain(1, 'linear')") == ("mine",)
    assert row(con, objects) == (count_before,)
    ndcg_duck.evaluate(RECS, RELS, con=con)  # and with nothing set, nothing changes either
    assert [row(con, f"SELECT current_setting('{name}')") for name in settings] == before
    assert row(con, objects) == (count_before,)


def test_a_run_of_its_own_keeps_freed_blocks_up_to_its_memory_limit(monkeypatch):
    seen = []
    real_run = evaluate_module._run

    def spy(work, *args, **kwargs):
        seen.append(row(work, "SELECT current_setting('block_allocator_memory'), "
                              "current_setting('memory_limit')"))
        return real_run(work, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "_run", spy)
    assert ndcg_duck.evaluate(RECS, RELS).summary["users"] == 5
    (blocks, limit), = seen  # as DuckDB shows them ('18.7 GiB'): the last decimal may differ
    (blocks, unit), (limit, limit_unit) = blocks.split(), limit.split()
    assert unit == limit_unit and float(blocks) > 0 and abs(float(limit) - float(blocks)) < 0.11


def test_a_failed_run_leaves_the_connection_as_it_was_too():
    con = duckdb.connect()
    con.execute("SET threads = 2")
    with pytest.raises(ndcg_duck.InputError):
        ndcg_duck.evaluate(RECS, "nowhere.csv", threads=1, con=con)
    assert row(con, "SELECT current_setting('threads')") == (2,)
    assert row(con, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == (0,)


@pytest.mark.parametrize("args, output", [
    (["--memory-limit", "lots"],
     "Error: --memory-limit 'lots': Memory must have a number (e.g. 1GB)\n"),
    (["--temp-dir", "/no/such/dir"],
     "Error: Invalid value for '--temp-dir': '/no/such/dir' is not an existing directory: create "
     "it first\n"),
    (["--threads", "0"],
     "Error: Invalid value for '--threads': 0 is not in the range "
     "1<=x<=9223372036854775807.\n"),
])
def test_bad_limits_are_usage_errors(args, output):
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, *args], prog_name="ndcg-duck")
    assert result.exit_code == 2
    assert result.output == USAGE + output


@pytest.mark.parametrize("options, message", [
    ({"memory_limit": "lots"}, "memory_limit='lots': Memory must have a number (e.g. 1GB)"),
    ({"temp_dir": "/no/such/dir"},
     "temp_dir='/no/such/dir' is not an existing directory: create it first"),
])
def test_bad_limits_in_python_words(options, message):
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.evaluate(RECS, RELS, **options)
    assert str(raised.value) == message


USAGE = "Usage: ndcg-duck eval [OPTIONS] RECS [RELEVANCE]\nTry 'ndcg-duck eval --help' for help.\n\n"


# --- progress -----------------------------------------------------------------------------------

def progress_lines(text):
    return [line.strip() for line in text.split("\r") if line.strip()]


def test_progress_shows_the_step_and_the_batches_with_the_time_left(monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(cli_module, "stderr_is_terminal", lambda: True)
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--batch-users", "2"])
    assert result.exit_code == 0, result.output
    # On a loaded machine the ticking thread may show "starting" before the first step is named.
    lines = [line for line in progress_lines(result.stderr)
             if not line.startswith("ndcg-duck: starting, ")]
    assert lines[0].startswith("ndcg-duck: reading the inputs, ")
    batch = [line for line in lines if line.startswith("ndcg-duck: scoring users, batch")]
    assert batch[0].startswith("ndcg-duck: scoring users, batch 1 of 3 (0% done), ")
    assert any(line.startswith("ndcg-duck: scoring users, batch 2 of 3 (33% done), ")
               and line.endswith(" left") for line in batch)
    assert any(line.startswith("ndcg-duck: scoring users, batch 3 of 3 (100% done), ")
               for line in batch)
    assert result.stderr.endswith("\r" + " " * progress_module.WIDTH + "\r")  # cleared
    assert result.stdout == CliRunner().invoke(cli, ["eval", RECS, RELS]).stdout


@pytest.mark.parametrize("terminal, quiet", [(False, []), (True, ["--quiet"])])
def test_no_progress_when_stderr_is_not_a_terminal_or_quiet(monkeypatch, terminal, quiet):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)  # would show at once, if it showed at all
    monkeypatch.setattr(cli_module, "stderr_is_terminal", lambda: terminal)
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--batch-users", "2", *quiet])
    assert result.exit_code == 0
    assert result.stderr == ""


def test_no_progress_before_the_delay():
    stream = io.StringIO()
    with progress_module.shown(enabled=True, stream=stream):
        progress_module.step("scoring users")
        for _ in progress_module.batches(["a", "b"]):
            pass
    assert stream.getvalue() == ""


def test_time_left_is_the_mean_batch_time_times_the_batches_left(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    display = progress_module.Display(io.StringIO())  # started at 100
    display.step_name, display.total, display.batches_started = "scoring users", 4, 100.0
    now[0], display.done = 110.0, 1  # one batch in 10 s: three left
    assert display.line() == "ndcg-duck: scoring users, batch 2 of 4 (25% done), 10s, about 30s left"
    now[0], display.done = 130.0, 2  # two in 30 s: two left
    assert display.line() == "ndcg-duck: scoring users, batch 3 of 4 (50% done), 30s, about 30s left"
