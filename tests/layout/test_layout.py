"""The package's layout (README, "For developers: the package's layout"): imports run one way,
from the command line down to the SQL files, and no two modules import each other, even inside
a function. And the tests' own (README, "For developers: the tests"): one folder per subject,
one naming rule, and nothing in the repository that points outside it."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

import ndcg_duck
from conftest import ROOT

PACKAGE = Path(ndcg_duck.__file__).parent

# Lowest first: a module may import from its own layer or the ones before it.
LAYERS = [
    {"errors", "sqlfiles", "sqltext", "interrupts", "means"},
    {"cutoffs"},
    {"metrics"},
    {"options"},
    {"statements"},
    {"outcome"},
    {"evaluation"},
    {"report"},
    {"comparison"},
    {"spark"},
    {"cli"},
    {"__init__"},
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _package_of(name: str, path: Path) -> list:
    """The package a module's relative imports start from, as parts."""
    parts = name.split(".") if name != "__init__" else []
    return parts if path.name == "__init__.py" else parts[:-1]


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> set:
    """The package's modules that `name` imports, anywhere in its text."""
    path = MODULES[name]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = _target(name, path, node)
            if target is None:
                continue
            candidates = [".".join(target + [alias.name]) for alias in node.names]
            for candidate in candidates:
                if candidate in MODULES:
                    found.add(candidate)
                elif ".".join(target) in MODULES:
                    found.add(".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ndcg_duck."):
                    found.add(alias.name.removeprefix("ndcg_duck."))
    found.discard(name)
    found.discard("__init__")  # a subpackage's own __init__ is reached by its submodules
    return {m for m in found if m in MODULES}


def _layer(name: str) -> int:
    return LAYER[name.split(".")[0]]


def test_every_module_has_a_layer():
    assert {name.split(".")[0] for name in MODULES} <= set(LAYER)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_down_the_layers(name):
    upward = [m for m in _imports(name) if _layer(m) > _layer(name)]
    assert not upward, f"{name} imports {upward}, a layer above it"


def _circle(graph: dict) -> list:
    """One import circle of `graph` (module -> modules it imports) as a path, or []."""
    state: dict = {}
    path: list = []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = "done"
        return []

    for name in sorted(graph):
        if name not in state:
            found = visit(name)
            if found:
                return found
    return []


def test_no_import_circles():
    circle = _circle({name: _imports(name) for name in MODULES})
    assert not circle, "import circle: " + " -> ".join(circle)


def test_the_checker_sees_imports_inside_functions_and_circles():
    assert "spark" in _imports("cli.eval")  # imported inside eval's command, on --engine spark
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) == []


def _bound_modules(name: str, tree) -> dict:
    """{local name: module} for the package's modules that `name` imports as a whole, as in
    `from ..evaluation import inputs` or `from .. import options as registry`."""
    path = MODULES[name]
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _target(name, path, node)
            for alias in node.names if target is not None else ():
                module = ".".join(target + [alias.name])
                if module in MODULES:
                    bound[alias.asname or alias.name] = module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = alias.name.removeprefix("ndcg_duck.")
                if alias.name.startswith("ndcg_duck.") and alias.asname and module in MODULES:
                    bound[alias.asname] = module
    return bound


def _target(name: str, path: Path, node: ast.ImportFrom):
    """The parts of the package module an ImportFrom reads from, or None outside the package."""
    if node.level:
        base = _package_of(name, path)
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        return base + (node.module.split(".") if node.module else [])
    if node.module and (node.module + ".").startswith("ndcg_duck."):
        return node.module.split(".")[1:]
    return None


def _private(attr: str) -> bool:
    return attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def _borrowed(name: str) -> list:
    """Another module's private names (`_name`) that `name` uses: imported by name, or read as
    an attribute of a module it imported."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    bound = _bound_modules(name, tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _target(name, path, node) is not None:
            source = ".".join(_target(name, path, node)) or "__init__"
            found += [f"{source}.{alias.name}" for alias in node.names
                      if _private(alias.name) and source != name]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id in bound and _private(node.attr)):
            found.append(f"{bound[node.value.id]}.{node.attr}")
    return sorted(set(found))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_uses_another_modules_private_names(name):
    borrowed = _borrowed(name)
    assert not borrowed, (f"{name} uses {borrowed}: another module's private names; make them "
                          f"public in their module (no leading _)")


# --- the tests' layout ---------------------------------------------------------------------------

TESTS = ROOT / "tests"
SUBJECTS = {
    "sql": "the macros, in DuckDB and through the duckdb shell, and the plans DuckDB makes of them",
    "oracles": "the numbers against an independent source, the oracle that names the file",
    "doors": "the ways in: the CLI, the Python API, compare, the options, packaging, the README",
    "errors": "what a wrong input gets: bad input, traps, no-clobber, types, interrupts",
    "spark": "the Spark engine against the default one",
    "layout": "the package's layers and the tests' layout",
}
# The oracles a file of tests/oracles/ starts with: trec_eval's own test outputs, pytrec_eval, the
# plain-Python references of tests/reference/, the test vectors and worked examples.
ORACLES = ("trec_eval", "pytrec_eval", "reference", "worked_examples")
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
        "(trec_eval, pytrec_eval, reference, worked_examples)",
        "doors/test_metrics_cli.py: the subject comes first (test_cli_...)",
        "test_beyond.py: in two folders",
        "helpers.py: a module beside conftest.py; helpers go in a package (tests/reference/)"]
    # doors/Test_api.py is not a test file to pytest: it is not named test_*.py


def test_every_subject_folder_is_on_pytests_path(pytestconfig):
    # pyproject.toml's pythonpath: a test imports `reference` or another test file's helpers by name
    folders = {Path(p).resolve() for p in pytestconfig.getini("pythonpath")}
    assert folders == {TESTS} | {TESTS / subject for subject in SUBJECTS}


def tracked_text() -> dict:
    """{path relative to the repository: text} of every tracked text file; skips outside git."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an sdist): no list of tracked files")
    texts = {}
    for name in filter(None, listed):
        try:
            texts[name] = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
    return texts


# Paths a user of the repository cannot follow: the machine it was written on, documents beside it.
OUTSIDE = re.compile(r"\.\./shared|shared/docs|(?<![\w.])/(work|home|root|Users)/|ndcg-variants")


def test_no_tracked_file_points_outside_the_repository():
    found = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()}"
             for name, text in tracked_text().items() if name != "tests/layout/test_layout.py"
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
    """Paths such as tests/doors/test_cli.py (and ::test_name) in the README, the code's comments,
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
