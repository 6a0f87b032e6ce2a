"""The dbt package (integrations/dbt) in the example dbt project (examples/dbt), run by dbt-duckdb:
`dbt build` passes, and its tests check the models against the CLI's results on the same files,
computed here first. Needs the dbt extra: pip install -e '.[dbt]'."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT
from ndcg_duck.cli import cli

pytest.importorskip("dbt.adapters.duckdb",
                    reason="dbt-duckdb is not installed: pip install -e '.[dbt]' to run dbt build")

pytestmark = [pytest.mark.dbt, pytest.mark.xdist_group("dbt")]

PROJECT = ROOT / "examples" / "dbt"
EXAMPLES = ROOT / "examples"


def metrics_of_the_macro() -> str:
    """Every measure ndcg_metrics_mean gives (the metrics_mean model's macro), for the CLI's -m:
    the model and the CLI must agree on each, whatever measures the SQL adds."""
    con = duckdb.connect()
    ndcg_duck.register(con)
    for table, name in (("recs", "recs_long.csv"), ("rels", "relevance.csv")):
        con.execute(f"CREATE TABLE {table} AS FROM read_csv('{EXAMPLES / name}')")
    names = con.sql("SELECT metric FROM ndcg_metrics_mean_ranks('recs', 'rels', k := 10)")
    names = names.fetchall()
    return ",".join(name for (name,) in names)


# Runs dbt commands one after the other in one process (dbt's own programmatic runner), so that
# dbt is imported once: a line `=== ok` or `=== failed` ends each command's output.
RUNNER = """
import json, sys
from dbt.cli.main import dbtRunner

for args in json.loads(sys.argv[1]):
    result = dbtRunner().invoke(args)
    print("=== " + ("ok" if result.success else "failed"), flush=True)
"""


def dbt(tmp_path, *commands) -> list:
    """Each dbt command (a list of its words, and a dict of vars last if it has its own) on the
    example project, in tmp_path (where its database file goes, under target/, as profiles.yml
    says) with its logs and artifacts there too. A command but deps without vars of its own
    gets cli_dir (where cli_results writes); the same vars let a command reuse the parse of the
    one before. Returns each one's (ok, its output on one line)."""
    runs = []
    for command in commands:
        variables = {"cli_dir": str(tmp_path / "cli")}
        if isinstance(command[-1], dict):
            *command, variables = command
        words = [*command, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT),
                 "--log-path", str(tmp_path / "logs")]
        if command[0] != "deps":
            words += ["--target-path", str(tmp_path / "target"), "--vars", json.dumps(variables)]
        runs.append(words)
    done = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(runs)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, DO_NOT_TRACK="1"))
    parts = re.split(r"^=== (ok|failed)\n", done.stdout, flags=re.MULTILINE)
    found = [(parts[i + 1] == "ok", " ".join(parts[i].split()))
             for i in range(0, len(parts) - 1, 2)]
    assert len(found) == len(commands), done.stdout + done.stderr
    return found


def cli_results(folder):
    """What the CLI computes on the files the project's seeds are: per_user.csv, summary.json
    and mean.json of eval, and compare.csv and compare.json of compare (the dbt tests read them)."""
    folder.mkdir()
    recs, new, rels = (str(EXAMPLES / name) for name in
                       ("recs_long.csv", "recs_new_long.csv", "relevance.csv"))
    runs = [["eval", recs, rels, "-k", "10", "--per-user", str(folder / "per_user.csv")],
            ["eval", recs, rels, "-k", "10", "-m", metrics_of_the_macro(), "--format", "json"],
            ["eval", recs, rels, "-k", "5", "--gain", "exponential", "--gain-map", "3=10",
             "--judged-only", "--missing", "skip", "--format", "json"],
            ["compare", rels, "--run", f"old={recs}", "--run", f"new={new}", "-k", "10",
             "--per-user", str(folder / "compare.csv"), "--format", "json"]]
    printed = []
    for args in runs:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        printed.append(result.output)
    (folder / "summary.json").write_text(printed[1])
    (folder / "mean.json").write_text(printed[2])
    (folder / "compare.json").write_text(printed[3])


def macros(con):
    """Each ndcg_ macro's name and parameters."""
    return con.sql("SELECT DISTINCT function_name, parameters FROM duckdb_functions() "
                   "WHERE function_name LIKE 'ndcg_%' ORDER BY ALL").fetchall()


def test_dbt_build_matches_the_cli(tmp_path):
    cli_results(tmp_path / "cli")
    per_user = "{{ ndcg_duck.per_user(ref('recs_long'), ref('relevance'), %s) }}"
    (deps, _), (built, output), (_, unknown), (_, layout), (found, missing) = dbt(
        tmp_path, ["deps"], ["build"],
        ["compile", "--inline", per_user % "layout='ranks', cutoff=10"],
        ["compile", "--inline", per_user % "layout='long'"],
        ["run-operation", "ndcg_duck.register", {"ndcg_duck_sql": f"{tmp_path}/ndcg.sql"}])
    assert deps and built, output
    # every test ran and passed, those against the CLI's files among them
    assert "ERROR=0 SKIP=0" in output, output
    for name in ("per_user_matches_the_cli", "mean_matches_the_cli", "metrics_mean_matches_the_cli",
                 "compare_matches_the_cli", "compare_summary_matches_the_cli",
                 "baseline_is_the_per_user_model"):
        assert f" PASS {name} " in output, (name, output)
    # the hook ran sql/ndcg.sql as `ndcg-duck sql --persistent` prints it, and so the database
    # has its macros
    hook = (tmp_path / "target" / "compiled" / "ndcg_duck" / "dbt_project.yml" / "hooks" /
            "ndcg_duck-on-run-start-0.sql")
    assert hook.read_text(encoding="utf-8") == ndcg_duck.script(persistent=True)
    database = tmp_path / "target" / "ndcg_duck_example.duckdb"
    with duckdb.connect(str(database), read_only=True) as con:
        built_macros = macros(con)
    with duckdb.connect() as con:
        con.execute(ndcg_duck.script())
        assert built_macros == macros(con)
    # an option the SQL macro does not take, or a layout it has no form for, stops the compile
    # naming it and what there is
    assert ("ndcg_duck: ndcg_per_user_ranks has no option cutoff; its options: k, gain, missing, "
            "idcg_cutoff, empty, max_depth, gain_map, judged_only, min_relevance") in unknown
    assert ("ndcg_duck: layout=long is not one of lists, ranks, scores (recs: user_id, items / "
            "item_id, rank / item_id, score)") in layout
    # without the SQL file, the hook says where it looked and what to set
    assert not found
    assert (f"ndcg_duck: no file {tmp_path}/ndcg.sql: set the var ndcg_duck_sql to the path of "
            "sql/ndcg.sql (in the ndcg-duck repository, or written by `ndcg-duck sql > "
            "ndcg.sql`)") in missing
