"""The package's layout (docs/developers.md, "The package's layout"): imports run one way,
from the command line down to the SQL files, and no two modules import each other, even inside
a function."""

import ast
import inspect
from pathlib import Path

import pytest

import ndcg_duck

PACKAGE = Path(ndcg_duck.__file__).parent

# Lowest first: a module may import from its own layer or the ones before it.
LAYERS = [
    {"errors", "sqlfiles", "sqltext", "interrupts", "means", "objectstore"},
    {"cutoffs"},
    {"metrics", "metrics_sql"},
    {"options"},
    {"statements"},
    {"outcome"},
    {"evaluation"},
    {"report"},
    {"splitting"},
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


def test_spark_compare_takes_compares_decisions_from_the_engine_neutral_module():
    """Both engines' compare take what they share from comparison.common; the Spark engine does
    not borrow it from the default engine (comparison.compare)."""
    assert "comparison.common" in _imports("spark.compare")
    assert "comparison.compare" not in _imports("spark.compare")


def test_the_spark_package_keeps_only_its_public_evaluate():
    """spark/__init__.py is the public door; each concern of the engine is a module of its own."""
    tree = ast.parse(MODULES["spark"].read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
    assert defined == ["evaluate"]


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


def test_every_engine_gives_eval_one_result_interface():
    """cli/eval.py has one path for every engine: each engine's result object (docs/developers.md)
    has the same public methods, taking the same arguments."""
    from ndcg_duck.report.result import DuckDBResult, Result
    from ndcg_duck.spark import SparkResult

    def methods(cls):
        return {name: list(inspect.signature(getattr(cls, name)).parameters)
                for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))}
    assert issubclass(SparkResult, Result) and issubclass(DuckDBResult, Result)
    assert methods(DuckDBResult) == methods(SparkResult)
    assert {"summary", "notes", "write_per_user", "per_user_rows", "plot", "segments", "close",
            "check_output"} <= set(methods(DuckDBResult))
