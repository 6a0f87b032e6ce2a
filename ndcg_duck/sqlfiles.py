"""Where the macro SQL lives, and how it gets into a DuckDB connection.

The sources are the files `sql/ndcg_*.sql` at the top of the repository, one per concern.
`sql/ndcg.sql` is all of them as one self-contained script (so that `.read path/to/ndcg.sql`
works from any directory): it is generated, and tests/sql/test_shell.py checks that it is in
sync. After editing a source file, regenerate it from the repository root with

    ndcg-duck sql > sql/ndcg.sql

A wheel ships the same files as `ndcg_duck/sql/`; a source checkout or editable install reads
them from the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

ENTRY = "ndcg.sql"
# The order the files define their macros in: a macro must be defined after those it uses.
# Files not listed here (new concerns) follow, in name order.
ORDER = ("ndcg_checks.sql", "ndcg_params.sql", "ndcg_means.sql", "ndcg_input.sql",
         "ndcg_core.sql", "ndcg_tables.sql", "ndcg_lists.sql", "ndcg_trec.sql")
HEADER = """\
-- ndcg-duck: NDCG and its parts as DuckDB macros, in one self-contained script.
-- In the duckdb shell, from any directory:   .read path/to/ndcg.sql
-- GENERATED from the files sql/ndcg_*.sql (one per concern, each named below): edit those,
-- then run `ndcg-duck sql > sql/ndcg.sql` from the repository root.
"""
TEMP = re.compile(r"^CREATE OR REPLACE TEMP MACRO ", re.MULTILINE)
# A macro with typed parameters, which a database file of DuckDB's default storage cannot keep,
# followed by the line `-- persistent: ...` that the persistent script has in its place.
TYPED = re.compile(r"^CREATE OR REPLACE TEMP MACRO [^;]*;\n-- persistent: (.*)$", re.MULTILINE)


def sql_dir() -> Path:
    """The directory that holds the macro files."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if (candidate / ENTRY).is_file():
            return candidate
    raise FileNotFoundError(f"ndcg-duck: cannot find {ENTRY} next to {here}")


def sources(folder: Path | None = None) -> list:
    """The per-concern files, in the order they are read."""
    folder = folder or sql_dir()
    found = sorted(path.name for path in folder.glob("ndcg_*.sql"))
    names = [name for name in ORDER if name in found]
    names += [name for name in found if name not in ORDER]
    return [folder / name for name in names]


def script(persistent: bool = False) -> str:
    """The whole macro script: every source file, in order, each under a line naming it. With
    `persistent`, the macros are CREATE OR REPLACE MACRO (kept in a database file) instead of
    TEMP (gone when the session ends)."""
    parts = [HEADER]
    for path in sources():
        parts.append(f"\n-- {path.name}\n" + path.read_text(encoding="utf-8").rstrip() + "\n")
    text = "".join(parts)
    if not persistent:
        return text
    return TEMP.sub("CREATE OR REPLACE MACRO ", TYPED.sub(lambda found: found.group(1), text))


def register(con) -> None:
    """Define every ndcg_ macro (as TEMP macros) in the DuckDB connection `con`."""
    con.execute(script())

