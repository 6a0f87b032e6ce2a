"""The README's examples run as shown."""

import subprocess
from pathlib import Path

import duckdb
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from test_shell import duckdb_binary

README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language):
    """The fenced blocks of the README in `language` ('' for plain ones), in order."""
    found, current, lang = [], None, None
    for line in README.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, lang = [], line[3:].strip()
            else:
                if lang == language:
                    found.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return found


def test_every_sql_block_runs_in_the_shell():
    for block in blocks("sql"):
        script = block if block.lstrip().startswith(".read") else ".read sql/ndcg.sql\n" + block
        done = subprocess.run([duckdb_binary(), "-csv"], input=script, text=True, cwd=ROOT,
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and not done.stderr, (block, done.stderr)


def test_the_printed_example_output_is_what_the_cli_prints():
    command, printed = blocks("sh")[0], blocks("")[0]
    args = command.split("ndcg-duck ", 1)[1].split()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    assert result.output == printed


def test_every_python_block_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    for block in blocks("python"):
        exec(compile(block, "README.md", "exec"), {})


def test_the_readme_states_the_defaults_and_gain_maps_as_checked():
    # the defaults are trec_eval -c (tests/oracles/test_trec_eval_ndcg.py: "-c" needs no
    # --missing flag, the plain run needs --missing skip); ir_measures' gains match --gain-map
    # only without negative gains, where trec_eval -m ndcg.L=G does
    text = " ".join(README.split())
    assert "The defaults are trec_eval's `ndcg_cut` run with `-c`" in text
    assert "`--missing skip` is trec_eval without `-c`" in text
    assert "`gains={...}` is `--gain-map` only while every gain is >= 0" in text
    assert "The defaults follow trec_eval's `ndcg_cut`;" not in text


def test_the_split_example_prints_what_the_readme_shows(tmp_path, monkeypatch):
    """The README's `ndcg-duck split` example prints what its block shows (issue 33), and writes
    the two files it names."""
    import shutil

    args, printed = example("## Splitting interactions")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.output) == (0, printed)
    assert (tmp_path / "train.csv").is_file() and (tmp_path / "test.csv").is_file()


# --- every command of the README runs -----------------------------------------------------------

def commands(language="sh"):
    """The ndcg-duck commands of the README's `language` blocks: continuation lines joined, one
    command per `&&` part. Set-up steps (venv, pip) are CI's (.ci/run), and synopses (with
    [options] or placeholders such as RECS) and cluster paths (s3a://) cannot run here; the
    s3:// examples run against a local S3 server in tests/doors/test_s3.py, catalog tables
    (table:NAME) against a local Spark warehouse in tests/spark/test_spark_tables.py."""
    found = []
    for block in blocks(language):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("ndcg-duck ") and not any(
                        mark in part for mark in ("[", "RECS", "s3a://", "s3://", "...",
                                                  "table:")):
                    found.append(part)
    return found


def test_every_command_block_runs(tmp_path):
    """Each command of the README's sh blocks, run by the shell in a copy of the files it
    reads, exits 0 (the Spark blocks run in tests/spark/test_spark.py)."""
    import os
    import shutil
    import sys

    for folder in ("examples", "tests/data"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ndcg-duck"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c "
                    f"'from ndcg_duck.cli import main; main()' \"$@\"\n")
    shim.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path),
               PATH=os.pathsep.join([str(bin_dir), str(Path(duckdb_binary()).parent),
                                     os.environ.get("PATH", "")]))
    ran = commands()
    assert len(ran) >= 6, ran  # the first example, eval's, compare's
    for command in ran:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)


# --- what the README claims of the Spark engine --------------------------------------------------

def example(section: str, prints: str = "prints") -> tuple:
    """The first `ndcg-duck` command of a README section (its words after `ndcg-duck`) and the
    block after the line `prints`: (args, printed)."""
    text = README.split(section, 1)[1]
    command = text.split("```sh\n", 1)[1].split("\n", 1)[0]
    printed = text.split(f"{prints}\n\n```\n", 1)[1].split("```", 1)[0]
    return command.split("ndcg-duck ", 1)[1].split(), printed


def spark_claim():
    """The README's sentence that every eval option works with --engine spark."""
    text = " ".join(README.split())
    return ("With `--engine spark`, every `eval` option but `--s3-endpoint` works as with the "
            "default engine" in text)


def eval_options():
    """{click option name (the first flag, e.g. '--gain-map'): its Python name} of eval."""
    from ndcg_duck.cli import cli as group

    return {p.opts[-1] if p.opts[0] == "-m" else p.opts[0]: p.name
            for p in group.commands["eval"].params if p.opts[0].startswith("-")}


# refused with --engine spark, in the caller's words (tests/errors/test_traps.py's table)
NOT_ON_SPARK = ("--s3-endpoint", "--exclude-seen", "--per-item")


def test_every_option_is_tested_with_spark():
    """The README says every eval option works with --engine spark: each is exercised with the
    Spark engine against the default engine, in tests/spark/test_spark.py or below."""
    assert spark_claim(), "the README's sentence on what works with --engine spark"
    tested = ((ROOT / "tests" / "spark" / "test_spark.py").read_text()
              + " ".join(SPARK_RUN + SPARK_SCORES))
    untested = [flag for flag, name in eval_options().items()
                if flag not in tested and f"{name}=" not in tested and flag not in NOT_ON_SPARK]
    assert not untested, f"claimed to work with --engine spark but never run with it: {untested}"


SPARK_RUN = ["-k", "3,10", "--user-col", "who", "--item-col", "what", "--rank-col", "place",
             "--relevance-col", "grade", "--min-relevance", "2", "--rels-format", "csv",
             "--threads", "1", "--memory-limit", "1GB", "--temp-dir", "{tmp}", "--quiet",
             "--format", "json"]
SPARK_SCORES = ["-k", "5", "--score-col", "points", "--ties", "average", "--format", "csv"]


def test_the_options_beside_test_spark_work_with_spark(spark, tmp_path):
    con = duckdb.connect()
    con.execute(f"COPY (SELECT user_id AS who, item_id AS what, rank AS place, "
                f"-(rank // 2) AS points FROM '{ROOT / 'examples/recs_long.csv'}') "
                f"TO '{tmp_path / 'recs.parquet'}'")
    con.execute(f"COPY (SELECT user_id AS who, item_id AS what, relevance AS grade "
                f"FROM '{ROOT / 'examples/relevance.csv'}') TO '{tmp_path / 'rels.txt'}' "
                f"(FORMAT csv, HEADER)")
    con.close()
    for extra in (SPARK_RUN, SPARK_SCORES + ["--user-col", "who", "--item-col", "what",
                                             "--relevance-col", "grade", "--rels-format", "csv"]):
        args = ["eval", tmp_path / "recs.parquet", tmp_path / "rels.txt",
                *[a.format(tmp=tmp_path) for a in extra]]
        want = CliRunner().invoke(cli, [str(a) for a in args + ["--per-user", tmp_path / "w.csv"]])
        got = CliRunner().invoke(cli, [str(a) for a in args + ["--per-user", tmp_path / "g.csv",
                                                                "--engine", "spark"]])
        assert want.exit_code == 0 and got.exit_code == 0, (want.output, got.output)
        assert got.output == want.output
        assert (tmp_path / "g.csv").read_text() == (tmp_path / "w.csv").read_text()


# --- the dbt section shows the example project's own files ---------------------------------------

def test_the_dbt_section_shows_the_example_project():
    """The README's packages.yml entry and model are examples/dbt's files (which CI builds, in
    tests/doors/test_dbt.py), word for word."""
    project = ROOT / "examples" / "dbt"
    assert blocks("yaml") == [(project / "packages.yml").read_text(encoding="utf-8")]
    assert blocks("jinja") == [(project / "models" / "ndcg_per_user.sql").read_text(encoding="utf-8")]


def test_the_interval_and_table_examples_print_what_the_readme_shows(monkeypatch):
    # "Intervals of means" and "Tables for papers": the command, and the block after "prints"
    import shlex

    monkeypatch.chdir(ROOT)
    for title in ("### Intervals of means", "### Tables for papers"):
        part = README.split(title, 1)[1].split("```sh\n", 1)[1]
        command = part.split("\n", 1)[0]
        printed = part.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
        result = CliRunner().invoke(cli, shlex.split(command)[1:])
        assert (result.exit_code, result.output) == (0, printed), command
