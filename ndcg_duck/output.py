"""Writing results: the summary as text, and per-user tables written whole or not at all."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import duckdb

from .errors import InputError
from .inputs import literal

OUTPUT_FORMATS = {".parquet": "(FORMAT parquet)", ".csv": "(FORMAT csv, HEADER true)",
                  ".json": "(FORMAT json, ARRAY true)", ".jsonl": "(FORMAT json)",
                  ".ndjson": "(FORMAT json)"}


def check_output_path(path: str) -> None:
    """Fail before any work if `path` cannot be written: unknown extension or no directory."""
    target = Path(path)
    if target.suffix.lower() not in OUTPUT_FORMATS:
        raise InputError(f"cannot tell the format of output file {path}: use one of "
                         f"{', '.join(OUTPUT_FORMATS)}", usage=True)
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"the directory of output file {path} does not exist: create {folder} "
                         f"first", usage=True)
    if target.is_dir():
        raise InputError(f"output file {path} is a directory", usage=True)


def write_table(table, path: str) -> None:
    """Write an Arrow table to `path` (format from its extension) through a temporary file in the
    same directory, renamed over `path` only when complete."""
    check_output_path(path)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    con = duckdb.connect()
    try:
        con.register("ndcg_out", table)
        con.execute(f"COPY ndcg_out TO {literal(str(tmp))} {OUTPUT_FORMATS[target.suffix.lower()]}")
        os.replace(tmp, target)
    except duckdb.Error as exc:
        raise InputError(f"cannot write {path}: {str(exc).strip().splitlines()[0]}") from None
    finally:
        con.close()
        if tmp.exists():
            tmp.unlink()


# the summary's keys that count users; every other key is a metric
USER_COUNTS = ("users", "users_without_recommendations", "users_only_in_recommendations")


def format_summary(summary: dict, fmt: str, missing: str) -> str:
    """The summary as 'table' (for people), 'json' (one object) or 'csv' (metric,value rows)."""
    if fmt == "json":
        return json.dumps(summary) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["metric", "value"])
        writer.writerows(summary.items())
        return out.getvalue()
    rows = [(name, _readable(value)) for name, value in summary.items() if name not in USER_COUNTS]
    rows.append(("users", str(summary["users"])))
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    unranked = summary["users_without_recommendations"]
    if unranked:
        fate = "scored 0" if missing == "zero" else "left out"
        lines.append(f"without recommendations: {_users(unranked)}, {fate}")
    unjudged = summary["users_only_in_recommendations"]
    if unjudged:
        lines.append(f"only in recommendations: {_users(unjudged)}, not evaluated")
    return "\n".join(lines) + "\n"


def _users(count: int) -> str:
    return f"{count} user" if count == 1 else f"{count} users"


def _readable(value) -> str:
    """A metric's value: '-' for none, counts (num_rel) as integers, the rest to 4 decimals."""
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.4f}"
