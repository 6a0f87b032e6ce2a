"""docs/cohorts.md (--by user-activity, issue 33): each command prints what the page shows, its
Python and SQL blocks run (until the docs' own test runs every page)."""

import re
import shlex
import subprocess

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from test_shell import duckdb_binary

PAGE = (ROOT / "docs" / "cohorts.md").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"```sh\n(ndcg-duck [^\n]*)\n```\n```text\n(.*?)```", PAGE, re.S)


def test_the_page_has_its_examples():
    assert len(EXAMPLES) == 3


@pytest.mark.parametrize("command, printed", EXAMPLES, ids=["eval", "compare", "items"])
def test_each_command_prints_what_the_page_shows(command, printed, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert result.stdout == printed


def test_the_python_and_sql_blocks_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    for block in re.findall(r"```python\n(.*?)```", PAGE, re.S):
        exec(compile(block, "docs/cohorts.md", "exec"), {})
    for block in re.findall(r"```sql\n(.*?)```", PAGE, re.S):
        done = subprocess.run([duckdb_binary(), "-csv"], cwd=ROOT, capture_output=True,
                              text=True, input=".read sql/ndcg.sql\n" + block, timeout=60)
        assert done.returncode == 0 and not done.stderr, done.stderr
        assert "ana,5+" in done.stdout and "ana,4+" in done.stdout
