"""The tests' own layout (docs/developers.md, "The tests"): one folder per subject, one
naming rule, every folder on pytest's path; every test path the repository names exists, and
nothing in the repository points outside it. (The package's layout is test_layout.py's.)"""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT


TESTS = ROOT / "tests"
SUBJECTS = {
    "sql": "the macros, in DuckDB and through the duckdb shell, and the plans DuckDB makes of them",
    "oracles": "the numbers against an independent source, the oracle that names the file",
    "doors": "the ways in: the CLI, the Python API, compare, the options, packaging, the docs",
    "errors": "what a wrong input gets: bad input, traps, no-clobber, types, interrupts",
    "spark": "the Spark engine against the default one",
    "layout": "the package's layers and the tests' layout",
}
# The oracles a file of tests/oracles/ starts with: trec_eval's own test outputs, pytrec_eval, the
# plain-Python references of tests/reference/, the test vectors and worked examples, and a peer
# library's own code (test_peer_<peer>.py, run in a CI environment apart: .ci/run).
ORACLES = ("trec_eval", "pytrec_eval", "ir_measures", "reference", "worked_examples", "peer")
NAME = re.compile(r"test_[a-z0-9]+(_[a-z0-9]+)*\.py")


def misplaced(paths: list) -> list:
    """What breaks the tests' layout among `paths` (relative to tests/): a test file outside a
    subject folder, a name outside the rule, an oracle file not named for its oracle, a subject
    after the aspect (test_metrics_cli.py beside test_cli.py), a name used in two folders (pytest
    imports them by name), a module at the top beside conftest.py."""
    found = []
    tests = [p for p in paths if p.name.startswith("test_") or p.stem.endswith("_test")]
    subjects = {p.stem.removeprefix("test_") for p in tests} | set(ORACLES)
    for path in tests:
        stem = path.stem.removeprefix("test_")
        if len(path.parts) != 2 or path.parts[0] not in SUBJECTS:
            found.append(f"{path}: not in a subject folder ({', '.join(sorted(SUBJECTS))})")
        elif not NAME.fullmatch(path.name):
            found.append(f"{path}: not test_<subject>[_<aspect>].py in lower case")
        elif path.parts[0] == "oracles" and not stem.startswith(ORACLES):
            found.append(f"{path}: an oracle's file starts with its oracle ({', '.join(ORACLES)})")
        found += [f"{path}: the subject comes first (test_{other}_...)" for other in subjects
                  if other != stem and stem.endswith("_" + other)]
    names = [p.name for p in tests]
    found += [f"{name}: in two folders"
              for name in sorted({n for n in names if names.count(n) > 1})]
    found += [f"{p}: a module beside conftest.py; helpers go in a package (tests/reference/)"
              for p in paths if len(p.parts) == 1 and p.suffix == ".py"
              and p.name != "conftest.py" and p not in tests]
    return found


def test_every_test_file_is_in_its_subject_folder_and_named_by_the_rule():
    paths = [p.relative_to(TESTS) for p in TESTS.rglob("*.py") if "data" not in p.parts]
    assert not misplaced(paths)


def test_the_layout_check_sees_each_break():
    assert misplaced([Path(p) for p in ("doors/test_cli.py", "doors/test_cli_metrics.py",
                                        "oracles/test_trec_eval_ndcg.py")]) == []
    assert misplaced([Path(p) for p in (
        "test_cli.py", "doors/Test_api.py", "oracles/test_means.py", "doors/test_metrics_cli.py",
        "doors/test_beyond.py", "sql/test_beyond.py", "helpers.py")]) == [
        "test_cli.py: not in a subject folder (doors, errors, layout, oracles, spark, sql)",
        "oracles/test_means.py: an oracle's file starts with its oracle "
        "(trec_eval, pytrec_eval, ir_measures, reference, worked_examples, peer)",
        "doors/test_metrics_cli.py: the subject comes first (test_cli_...)",
        "test_beyond.py: in two folders",
        "helpers.py: a module beside conftest.py; helpers go in a package (tests/reference/)"]
    # doors/Test_api.py is not a test file to pytest: it is not named test_*.py


def test_every_subject_folder_is_on_pytests_path(pytestconfig):
    # pyproject.toml's pythonpath: a test imports `reference` or another test file's helpers by name
    folders = {Path(p).resolve() for p in pytestconfig.getini("pythonpath")}
    assert folders == {TESTS} | {TESTS / subject for subject in SUBJECTS}


def tracked_text() -> dict:
    """{path relative to the repository: text} of every tracked text file, and of every page of
    the docs (docs/*.md, committed or not yet); skips outside git."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an sdist): no list of tracked files")
    pages = [p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")]
    texts = {}
    for name in dict.fromkeys(filter(None, listed + pages)):
        try:
            texts[name] = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
    return texts


# Paths a user of the repository cannot follow: the machine it was written on, documents beside it.
OUTSIDE = re.compile(r"\.\./shared|shared/docs|(?<![\w.])/(work|home|root|Users)/|ndcg-variants")


def test_no_tracked_file_points_outside_the_repository():
    found = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()}"
             for name, text in tracked_text().items()
             if name != "tests/layout/test_layout_tests.py"
             for match in OUTSIDE.finditer(text)]
    assert not found, ("name the source (\"trec_eval 10.0's test outputs\") or copy it into "
                       f"tests/data: {found}")


def test_the_outside_check_sees_each_kind():
    for text in ("../shared/docs/x.md", "see /work/main/x", "/home/me/x", "ndcg-variants.md"):
        assert OUTSIDE.search(text), text
    for text in ("tests/data/trec_eval", "~/trec_eval/trec_eval", "s3a://bucket/path",
                 "benchmarks/work/x"):
        assert not OUTSIDE.search(text), text


def test_every_test_file_the_repository_names_exists():
    """Paths such as tests/doors/test_cli.py (and ::test_name) in the docs, the code's comments,
    CI and the tests follow the files when they move; benchmarks/reports are records of past runs,
    named as they were."""
    named = re.compile(r"tests/[\w/]+\.py(?:::(\w+))?")
    found = []
    for name, text in tracked_text().items():
        if name.startswith("benchmarks/reports/"):
            continue
        for match in named.finditer(text):
            path = ROOT / match.group().split("::")[0]
            if not path.exists():
                found.append(f"{name}: {match.group()}")
            elif match.group(1) and f"def {match.group(1)}(" not in path.read_text():
                found.append(f"{name}: {match.group()} (no such test)")
    assert not found
