"""Every page of the documentation (README.md and docs/*.md, found by glob: a new page is covered
without a change here) runs as shown, by these conventions (docs/index.md states them):
- a ```sh block holding one `ndcg-duck ...` command (or a one-line chain whose last `&&` part is
  one), whose next fenced block is a ```text block: the command, run through click's CliRunner
  from the repository root, prints exactly that text (stdout and stderr as a terminal shows them,
  or stdout then stderr);
- every ```python block runs from the repository root, per page, in order, in one namespace;
- every ```sql block runs in the duckdb shell after `.read sql/ndcg.sql`;
- every other `ndcg-duck` command of a ```sh block exits 0, run by the shell.
"Run from the repository root" is run in a scratch copy of it (examples/, docs/ and tests/data
copied, everything else linked), so an example that writes a file (--per-user, --plot,
--out-train) leaves the checkout as it was. `mkdocs build --strict` builds the pages with no
warning (a broken link or anchor), and the README's own links lead to files that exist."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from test_shell import duckdb_binary


def pages() -> list:
    """Every documentation page, relative to the repository root: README.md, docs/*.md."""
    return ["README.md"] + sorted(p.relative_to(ROOT).as_posix()
                                  for p in (ROOT / "docs").glob("*.md"))


def page(name: str = "README.md") -> str:
    """The text of one page ('README.md', 'docs/cli.md')."""
    return (ROOT / name).read_text(encoding="utf-8")


def fenced(text: str) -> list:
    """The fenced blocks of a page, in order: [(info string, body)]."""
    found, current, info = [], None, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, info = [], line[3:].strip()
            else:
                found.append((info, "".join(current)))
                current = None
        elif current is not None:
            current.append(line)
    return found


def blocks(language: str, name=None) -> list:
    """The bodies of the blocks in `language` ('' for plain ones) of one page, or of every page
    when `name` is None, in order."""
    return [body for each in ([name] if name else pages())
            for info, body in fenced(page(each)) if info == language]


def example(section: str, name: str, prints: str = "prints") -> tuple:
    """The first `ndcg-duck` command of a page's section (its words after `ndcg-duck`) and the
    text block after the line `prints`: (args, printed)."""
    text = page(name).split(section, 1)[1]
    command = text.split("```sh\n", 1)[1].split("\n", 1)[0]
    printed = text.split(f"{prints}\n\n```text\n", 1)[1].split("```", 1)[0]
    return shlex.split(command.split("ndcg-duck ", 1)[1]), printed


def checked_pairs(name: str, text=None) -> list:
    """The (command, printed text) pairs of a page (or of `text`): a sh block of one line whose
    last `&&` part is an `ndcg-duck` command, and the text block that is the next fenced block."""
    found, seen = [], fenced(page(name) if text is None else text)
    for (info, body), (next_info, printed) in zip(seen, seen[1:]):
        lines = body.replace("\\\n", " ").strip().splitlines()
        if info == "sh" and next_info == "text" and len(lines) == 1:
            command = lines[0].split("&&")[-1].strip()
            if command.startswith("ndcg-duck "):
                found.append((command, printed))
    return found


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A scratch repository root: examples/, docs/ and tests/data copied, every other entry of
    the checkout linked; what an example writes stays here."""
    root = tmp_path_factory.mktemp("root")
    copied = ("examples", "docs")
    for entry in ROOT.iterdir():
        if entry.name.startswith(".") or entry.name == "tests":
            continue
        if entry.name in copied:
            shutil.copytree(entry, root / entry.name, ignore=shutil.ignore_patterns(
                "dbt_packages", "target", "logs"))
        else:
            (root / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "tests" / "data", root / "tests" / "data")
    return root


def test_every_page_is_found():
    assert {"README.md", "docs/index.md", "docs/cli.md"} <= set(pages())


@pytest.mark.parametrize("name", pages())
def test_every_shown_command_prints_what_its_page_shows(name, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    for command, printed in checked_pairs(name):
        result = CliRunner().invoke(cli, shlex.split(command)[1:])
        # as a terminal shows it, or stdout then stderr (a page may show warnings last)
        shown = printed if printed == result.stdout + result.stderr else result.output
        assert (result.exit_code, shown) == (0, printed), (name, command)


@pytest.mark.parametrize("name", pages())
def test_every_python_block_runs(name, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    names = {"__name__": "__docs__"}
    for block in blocks("python", name):
        exec(compile(block, name, "exec"), names)


@pytest.mark.parametrize("name", pages())
def test_every_sql_block_runs_in_the_shell(name, scratch):
    for block in blocks("sql", name):
        script = block if block.lstrip().startswith(".read") else ".read sql/ndcg.sql\n" + block
        done = subprocess.run([duckdb_binary(), "-csv"], input=script, text=True, cwd=scratch,
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and not done.stderr, (name, block, done.stderr)


def test_the_checks_see_the_conventions():
    """A page's checked pairs, as the tests read them: the set-up chain's last command, a
    command with its text block; not a synopsis, nor a block followed by something else."""
    text = ("```sh\npython3 -m venv .venv && ndcg-duck eval a b\n```\nprints\n\n```text\nX\n```\n"
            "```sh\nndcg-duck eval c d\n```\n```sql\nSELECT 1;\n```\n```text\nY\n```\n"
            "```sh\nndcg-duck eval e f\nndcg-duck eval g h\n```\n```text\nZ\n```\n")
    assert checked_pairs("x.md", text) == [("ndcg-duck eval a b", "X\n")]


# --- the README, the front page ------------------------------------------------------------------

def test_the_readme_shows_the_two_set_up_commands():
    """Install and evaluate (checked above with its printed text), and the test command that CI
    runs, word for word (.ci/run)."""
    install, tests = blocks("sh", "README.md")[:2]
    assert install.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . && "
                              "ndcg-duck eval examples/recs.parquet")
    assert checked_pairs("README.md")[0][0] == install.split("&&")[-1].strip()
    command = "pip install -e '.[test,dbt]' && pytest"
    assert tests == f"python3 -m venv .venv && . .venv/bin/activate && {command}\n"
    if (ROOT / ".ci" / "run").exists():  # a checkout, not an sdist
        assert f"\n{command}\n" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_links_lead_to_files():
    """The README is not built by mkdocs: its relative links and its own anchors are checked
    here, and its contents link every page of docs/."""
    text = page("README.md")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 10
    assert not [link for link in links if "://" not in link and not (ROOT / link).exists()]
    headings = {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in text.splitlines() if line.startswith("#")}
    assert not [anchor for anchor in re.findall(r"\]\(#([^)]+)\)", text) if anchor not in headings]
    assert not [name for name in pages()[1:] if f"]({name})" not in text]


def test_the_readme_states_the_defaults_and_gain_maps_as_checked():
    # the defaults are trec_eval -c (tests/oracles/test_trec_eval_ndcg.py: "-c" needs no
    # --missing flag, the plain run needs --missing skip); ir_measures' gains match --gain-map
    # only without negative gains, where trec_eval -m ndcg.L=G does
    readme = " ".join(page("README.md").split())
    tools = " ".join(page("docs/from-other-tools.md").split())
    assert "The defaults are trec_eval's `ndcg_cut` run with `-c`" in readme
    assert "`--missing skip` is trec_eval without `-c`" in readme
    assert "`gains={...}` is `--gain-map` only while every gain is >= 0" in tools
    assert "The defaults follow trec_eval's `ndcg_cut`;" not in readme


# --- the site ------------------------------------------------------------------------------------

def test_the_site_builds_without_a_warning(tmp_path):
    """mkdocs build --strict: a broken link or anchor, or a page missing from mkdocs.yml's nav,
    fails it."""
    pytest.importorskip("mkdocs")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site"), "--config-file", str(ROOT / "mkdocs.yml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "cli" / "index.html").is_file()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert not [name for name in pages()[1:] if f" {Path(name).name}\n" not in nav]


def test_the_split_example_writes_the_files_it_names(tmp_path, monkeypatch):
    """docs/splitting.md's `ndcg-duck split` example prints what its block shows (issue 33), and
    writes the two files it names."""
    args, printed = example("# Splitting interactions", "docs/splitting.md")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.output) == (0, printed)
    assert (tmp_path / "train.csv").is_file() and (tmp_path / "test.csv").is_file()


# --- every command of every page runs ------------------------------------------------------------

def commands(language="sh"):
    """The ndcg-duck commands of every page's `language` blocks, each once: continuation lines
    joined, one command per `&&` part, those checked with their printed text above left out.
    Set-up steps (venv, pip) are CI's (.ci/run), and synopses (with [options] or placeholders
    such as RECS) and cluster paths (s3a://) cannot run here; the s3:// examples run against a
    local S3 server in tests/doors/test_s3.py, catalog tables (table:NAME) against a local
    Spark warehouse in tests/spark/test_spark_tables.py."""
    checked = {command for name in pages() for command, _ in checked_pairs(name)}
    found = []
    for block in blocks(language):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("ndcg-duck ") and not any(
                        mark in part for mark in ("[", "RECS", "s3a://", "s3://", "...",
                                                  "table:")) \
                        and part not in checked and part not in found:
                    found.append(part)
    return found


def test_every_command_block_runs(tmp_path):
    """Each command of the pages' sh blocks, run by the shell in a copy of the files it reads,
    exits 0 (the Spark blocks run in tests/spark/test_spark.py)."""
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
    assert len(ran) >= 3, ran  # eval's examples, the trec_eval run
    for command in ran:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)


# --- what docs/spark.md claims of the Spark engine -----------------------------------------------

def spark_claim():
    """docs/spark.md's sentence that every eval option works with --engine spark."""
    text = " ".join(page("docs/spark.md").split())
    return ("With `--engine spark`, every `eval` option but `--s3-endpoint` works as with the "
            "default engine" in text)


def eval_options():
    """{click option name (the first flag, e.g. '--gain-map'): its Python name} of eval."""
    from ndcg_duck.cli import cli as group

    return {p.opts[-1] if p.opts[0] == "-m" else p.opts[0]: p.name
            for p in group.commands["eval"].params if p.opts[0].startswith("-")}


# refused with --engine spark, in the caller's words (tests/errors/test_traps.py's table;
# --beyond-users with its value recommended only, evaluated is Spark's one way)
NOT_ON_SPARK = ("--s3-endpoint", "--beyond-users")


def test_every_option_is_tested_with_spark():
    """docs/spark.md says every eval option works with --engine spark: each is exercised with the
    Spark engine against the default engine, in tests/spark/test_spark.py or below."""
    assert spark_claim(), "docs/spark.md's sentence on what works with --engine spark"
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


# --- the dbt blocks show the example project's own files -----------------------------------------

def test_the_dbt_blocks_show_the_example_project():
    """Every packages.yml entry and model a page shows is examples/dbt's file (which CI builds,
    in tests/doors/test_dbt.py), word for word."""
    project = ROOT / "examples" / "dbt"
    models = {p.read_text(encoding="utf-8") for p in (project / "models").glob("*.sql")}
    assert blocks("yaml", "docs/dbt.md") == [(project / "packages.yml").read_text(encoding="utf-8")]
    assert blocks("jinja", "docs/dbt.md")
    assert not [block for block in blocks("jinja") if block not in models]
    assert not [block for block in blocks("yaml")
                if block != (project / "packages.yml").read_text(encoding="utf-8")]
