"""Where the macro SQL lives, and how it gets into a DuckDB connection.

`sql/` at the top of the repository is the one source of the macros. A wheel ships the same
files as `ndcg_duck/sql/`; a source checkout or editable install reads them from the repository.
"""

from __future__ import annotations

from pathlib import Path

ENTRY = "ndcg.sql"


def sql_dir() -> Path:
    """The directory that holds ndcg.sql and the files it reads."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if (candidate / ENTRY).is_file():
            return candidate
    raise FileNotFoundError(f"ndcg-duck: cannot find {ENTRY} next to {here}")


def script() -> str:
    """The whole macro script: ndcg.sql with each `.read sql/FILE` line replaced by that file."""
    folder = sql_dir()
    parts = []
    for line in (folder / ENTRY).read_text(encoding="utf-8").splitlines():
        if line.startswith(".read "):
            name = Path(line.split(maxsplit=1)[1].strip()).name
            parts.append(f"-- {name}\n" + (folder / name).read_text(encoding="utf-8").rstrip() + "\n")
        else:
            parts.append(line + "\n")
    return "".join(parts)


def register(con) -> None:
    """Define every ndcg_ macro (as TEMP macros) in the DuckDB connection `con`."""
    con.execute(script())
