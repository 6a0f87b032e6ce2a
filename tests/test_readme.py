"""The README's examples run as shown."""

import subprocess

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
    # the defaults are trec_eval -c (tests/test_trec_eval.py: "-c" needs no --missing flag, the
    # plain run needs --missing skip); ir_measures' gains match --gain-map only without
    # negative gains, where trec_eval -m ndcg.L=G does
    text = " ".join(README.split())
    assert "The defaults are trec_eval's `ndcg_cut` run with `-c`" in text
    assert "`--missing skip` is trec_eval without `-c`" in text
    assert "`gains={...}` is `--gain-map` only while every gain is >= 0" in text
    assert "The defaults follow trec_eval's `ndcg_cut`;" not in text
