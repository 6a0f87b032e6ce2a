"""The dbt package (integrations/dbt) in the example dbt project (examples/dbt), run by dbt-duckdb:
`dbt build` passes, and its tests check the models against the CLI's results on the same files,
computed here first. Needs the dbt extra: pip install -e '.[dbt]'."""

import json
import os
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
METRICS = "ndcg,dcg,idcg,cg,P,recall,hit_rate,mrr@10,map@10,r_precision,num_rel,num_rel_ret"


def dbt(tmp_path, *args, check=True):
    """dbt ARGS on the example project, in tmp_path (where its database file goes, under
    target/, as profiles.yml says) with its logs and artifacts there too."""
    command = [str(Path(sys.executable).parent / "dbt"), *args, "--project-dir", str(PROJECT),
               "--profiles-dir", str(PROJECT), "--log-path", str(tmp_path / "logs")]
    if args[0] != "deps":
        command += ["--target-path", str(tmp_path / "target")]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, DO_NOT_TRACK="1"))
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def cli_results(folder):
    """What the CLI computes on the files the project's seeds are: per_user.csv, summary.json
    and mean.json of eval, and compare.csv and compare.json of compare (the dbt tests read them)."""
    folder.mkdir()
    recs, new, rels = (str(EXAMPLES / name) for name in
                       ("recs_long.csv", "recs_new_long.csv", "relevance.csv"))
    runs = [["eval", recs, rels, "-k", "10", "--per-user", str(folder / "per_user.csv")],
            ["eval", recs, rels, "-k", "10", "-m", METRICS, "--format", "json"],
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
    dbt(tmp_path, "deps")
    built = dbt(tmp_path, "build", "--vars", json.dumps({"cli_dir": str(tmp_path / "cli")}))
    # every test ran and passed, those against the CLI's files among them
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    tests = {r["unique_id"].split(".")[2]: r["status"] for r in results
             if r["unique_id"].startswith("test.")}
    for name in ("per_user_matches_the_cli", "mean_matches_the_cli", "metrics_mean_matches_the_cli",
                 "compare_matches_the_cli", "compare_summary_matches_the_cli",
                 "baseline_is_the_per_user_model"):
        assert tests.get(name) == "pass", (name, tests, built.stdout)
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
    # an option the SQL macro does not take stops the compile naming it and those it takes
    done = dbt(tmp_path, "compile", "--inline",
               "{{ ndcg_duck.per_user(ref('recs_long'), ref('relevance'), layout='ranks', "
               "cutoff=10) }}", check=False)
    assert done.returncode != 0
    assert ("ndcg_duck: ndcg_per_user_ranks has no option cutoff; its options: k, gain, missing, "
            "idcg_cutoff, empty, max_depth, gain_map, judged_only, min_relevance") in done.stdout
