"""Your own measures, in SQL (--metrics-sql FILE, metrics_sql=): a file of DuckDB macros named
`ndcg_metric_<name>`, each a scalar macro over one user's edge at one cutoff (the columns of
EDGE, which sql/ndcg_metrics.sql's ndcg_user_metrics hands over as its column `edge`) that returns
a number or NULL. Then `-m <name>@K` computes it like a built-in measure.

This module reads the file and checks it once (in a DuckDB of its own, with the ndcg_ macros):
the SQL runs, every ndcg_metric_ macro has a valid name that is no built-in metric's, declares
only parameters named in EDGE (any of them, in any order: they are passed by position in the
macro's own order), and binds to a number. The text itself travels with the options (Spark's
workers run it too); `load` defines the macros in a run's connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, duckdb_message
from .sqltext import literal
from .sqlfiles import register

PREFIX = "ndcg_metric_"
FLAG = "--metrics-sql"
# The parameters a macro may declare: ndcg_user_gains' per-user columns and the cutoff, with a
# typed example value each (the macro is bound to them when the file is read).
EDGE = {
    "gains": "[3.0, 0.0, 1.0]::DOUBLE[]",  # the gain at each position, 0 beyond the ranking
    "relevant_ranks": "[1, 3]::BIGINT[]",  # the ranks of the relevant ranked items, ascending
    "judged_ranks": "[1, 2, 3]::BIGINT[]",  # the ranks of the judged ranked items, ascending
    "num_relevant": "2::BIGINT",  # R, the user's relevant judgments, ranked or not
    "ideal": "[3.0, 1.0, 0.0]::DOUBLE[]",  # the user's positive gains, best first
    "length": "3::BIGINT",  # the ranking's length
    "k": "10::BIGINT",  # the cutoff (NULL: none, the whole ranking)
    "depth": "10::BIGINT",  # k, or the largest BIGINT when there is no cutoff
}
# a CREATE statement of a macro, made CREATE OR REPLACE TEMP MACRO: the run's connection keeps
# the macros no longer than the run, and defines them again per batch (and per Spark bucket)
CREATE = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:MACRO|FUNCTION)\b",
                    re.IGNORECASE)
NAME = re.compile(r"[a-z][a-z0-9_]*")
NUMBER = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)"
                    r"|\"NULL\"|NULL")


@dataclass(frozen=True)
class MetricsSql:
    """A checked --metrics-sql file: its name as given, its text, and each measure it defines:
    (name, the parameters its macro declares, in order)."""

    file: str
    text: str
    measures: tuple

    def names(self) -> tuple:
        return tuple(name for name, _ in self.measures)

    def params(self, name: str) -> tuple:
        return dict(self.measures)[name]


def check(value, reserved: frozenset = frozenset()):
    """The checked value of --metrics-sql: None, or a MetricsSql (a path is read and checked;
    a MetricsSql, as Spark's workers get it, is kept). `reserved`: the names a measure may not
    take (the built-in metrics' names and spellings)."""
    if value is None or isinstance(value, MetricsSql):
        return value
    if not isinstance(value, (str, Path)):
        raise InputError(f"{FLAG} {value!r} is not a file name", usage=True)
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else \
            getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"{FLAG} {str(value)!r}: cannot read it ({reason})", usage=True) \
            from None
    text = CREATE.sub("CREATE OR REPLACE TEMP MACRO", text)
    return MetricsSql(str(value), text, _measures(str(value), text, reserved))


def _measures(file: str, text: str, reserved: frozenset) -> tuple:
    import duckdb

    def fail(what: str):
        raise InputError(f"{FLAG} {file}: {what}", usage=True)

    con = duckdb.connect()
    try:
        register(con)
        before = dict(con.sql(_MACROS).fetchall())
        try:
            con.execute(text)
        except duckdb.Error as exc:
            fail(f"the SQL fails: {duckdb_message(exc)}")
        after = con.sql(_MACROS).fetchall()
        for name, definition in after:
            if name in before and before[name] != definition:
                fail(f"it redefines {name}, a macro of ndcg-duck: name yours otherwise")
            if name not in before and name.startswith("ndcg_") and not name.startswith(PREFIX):
                fail(f"{name}: only measures take names starting ndcg_ (ndcg_metric_<name>); "
                     f"name other macros otherwise")
        found = con.sql(
            f"SELECT function_name, function_type, list(parameters) FROM duckdb_functions() "
            f"WHERE starts_with(function_name, '{PREFIX}') GROUP BY ALL ORDER BY 1").fetchall()
        found = [row for row in found if row[0] not in before]  # ndcg-duck's own: ndcg_metric_name
        if not found:
            fail(f"defines no macro named {PREFIX}<name>: write "
                 f"CREATE MACRO {PREFIX}<name>(gains, k) AS ...")
        return tuple(_measure(con, fail, name, kind, overloads, reserved)
                     for name, kind, overloads in found)
    finally:
        con.close()


_MACROS = ("SELECT function_name, any_value(macro_definition) FROM duckdb_functions() "
           "WHERE function_type IN ('macro', 'table_macro') GROUP BY ALL")


def _measure(con, fail, macro: str, kind: str, overloads: list, reserved: frozenset) -> tuple:
    import duckdb

    name = macro[len(PREFIX):]
    if not NAME.fullmatch(name):
        fail(f"{macro}: a measure's name is a lowercase letter, then letters, digits or _")
    if name in reserved or name.startswith("users"):
        fail(f"{macro}: {name} is a built-in metric's name (or starts with users): name yours "
             f"otherwise")
    if kind != "macro":
        fail(f"{macro} is a table macro: a measure is a scalar macro returning a number")
    if len(overloads) > 1:
        fail(f"{macro} is defined {len(overloads)} times, with different parameters: keep one")
    params = tuple(overloads[0])
    for param in params:
        if param not in EDGE:
            fail(f"{macro} has parameter {param!r}: name its parameters from "
                 f"{', '.join(EDGE)}")
    if len(set(params)) < len(params):
        fail(f"{macro} names a parameter twice")
    try:
        (kind_of,) = con.sql(f"SELECT {macro}({', '.join(EDGE[p] for p in params)})").types
    except duckdb.Error as exc:
        fail(f"{macro} fails: {duckdb_message(exc)}")
    if not NUMBER.fullmatch(str(kind_of)):
        fail(f"{macro} returns {kind_of}, not a number: return a DOUBLE (or NULL)")
    return name, params


def load(con, metrics_sql) -> None:
    """Define the file's macros in a run's connection (nothing without a file)."""
    if metrics_sql is not None:
        con.execute(metrics_sql.text)


def call(metrics_sql: MetricsSql, name: str, edge: str = "edge", user: str = "user_id",
         k: str = "k") -> str:
    """The SQL of measure `name`'s value: its macro over the struct `edge` (ndcg_user_metrics'
    edge column), checked by ndcg_own_checked (a finite number or NULL, as a DOUBLE)."""

    args = ", ".join(f"{edge}.{param}" for param in metrics_sql.params(name))
    return (f"ndcg_own_checked({PREFIX}{name}({args}), {literal(PREFIX + name)}, "
            f"{literal(metrics_sql.file)}, {user}, {k})")
