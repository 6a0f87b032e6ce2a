"""Writing results: the summary as text, and per-user tables written whole or not at all."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import sys
import tempfile

import duckdb

from .. import interrupts, objectstore, outcome
from ..errors import InputError
from ..sqltext import literal
from ..metrics import is_metric

OUTPUT_FORMATS = {".parquet": "(FORMAT parquet)", ".csv": "(FORMAT csv, HEADER true)",
                  ".json": "(FORMAT json, ARRAY true)", ".jsonl": "(FORMAT json)",
                  ".ndjson": "(FORMAT json)"}


def check_output_path(path: str) -> None:
    """Fail before any work if `path` cannot be written: unknown extension or no directory."""
    target = Path(path)
    if target.suffix.lower() not in OUTPUT_FORMATS:
        raise InputError(f"cannot tell the format of output file {path}: use one of "
                         f"{', '.join(OUTPUT_FORMATS)}", usage=True)
    if objectstore.is_url(path):
        objectstore.check_output(path, f"output file {path}")
        return
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"the directory of output file {path} does not exist: create {folder} "
                         f"first", usage=True)
    if target.is_dir():
        raise InputError(f"output file {path} is a directory", usage=True)


def write_table(table, path: str) -> None:
    """Write an Arrow table to `path` (format from its extension) through a temporary file in the
    same directory, renamed over `path` only when complete."""
    _write_whole(lambda local, options: _copy(table, local, options), path)


def write_query(con, query: str, path: str) -> None:
    """Write the rows of `query` (SQL that `con` runs) to `path` as write_table writes a table:
    format from the extension, through a temporary file renamed only when complete."""
    def copy(local, options):
        with interrupts.watching(con):
            con.execute(f"COPY ({query}) TO {literal(str(local))} {options}")
    _write_whole(copy, path)


def _write_whole(copy, path: str) -> None:
    """copy(local path, COPY options) in the format of `path`'s extension, as write_whole."""
    check_output_path(path)
    options = OUTPUT_FORMATS[Path(path).suffix.lower()]
    write_whole(lambda local: copy(local, options), path)


def write_whole(write, path, what: str = "output file", said=None) -> None:
    """Every output file's rule: write(local path) to a temporary file beside `path` (or, for an
    s3:// URL, in a temporary directory, then put as one object, named `what PATH`), renamed over
    `path` when complete; a failure is 'cannot write SAID: why' (said: `path` by default)."""
    target = Path(path)
    said = path if said is None else said
    if objectstore.is_url(str(path)):  # written whole here, then put as one object
        with tempfile.TemporaryDirectory(prefix="ndcg-duck-") as folder:
            local = Path(folder) / target.name
            _written(lambda: write(local), said)
            objectstore.put(str(local), str(path), f"{what} {path}")
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        _written(lambda: (write(tmp), os.replace(tmp, target)), said)
    finally:
        if tmp.exists():
            tmp.unlink()


def _written(write, path: str) -> None:
    """Run write(), its failure said as 'cannot write PATH: why'."""
    try:
        write()
    except (duckdb.Error, OSError) as exc:
        raise InputError(cannot_write(path, exc)) from None


def cannot_write(path, exc: Exception) -> str:
    """Every engine's message for an output file it could not write (a DuckDB or OS error)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
        str(exc).strip().splitlines()[0]
    return f"cannot write {path}: {reason}"


def _copy(table, path, options: str) -> None:
    con = duckdb.connect()
    try:
        with interrupts.watching(con):
            con.register("ndcg_out", table)
            con.execute(f"COPY ndcg_out TO {literal(str(path))} {options}")
    finally:
        con.close()


STDOUT_FORMATS = {"csv": ".csv", "json": ".json"}


def write_stdout(table, fmt: str, stream=None) -> None:
    """The per-user table on stdout: CSV (for --format csv or table, the default), or a JSON
    array (--format json); the same text a .csv or .json --per-user file gets."""
    through_file(lambda tmp: _copy(table, tmp, OUTPUT_FORMATS[tmp.suffix]), fmt, stream)


def through_file(write, fmt: str, stream=None) -> None:
    """Writes the per-user table with write(path) to a temporary file named for --format (.csv,
    or .json for json), then copies that file to stream (stdout) in chunks: the same text a
    --per-user file gets, whichever engine wrote it, with bounded memory."""
    stream = stream or sys.stdout
    suffix = STDOUT_FORMATS.get(fmt, ".csv")
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    tmp = folder / f"ndcg-duck-{os.getpid()}-per-user{suffix}"
    try:
        write(tmp)
        with open(tmp, encoding="utf-8") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), ""):
                stream.write(chunk)
        stream.flush()
    except (duckdb.Error, OSError) as exc:
        raise InputError(f"cannot write the per-user table to stdout: "
                         f"{str(exc).strip().splitlines()[0]}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


WITHOUT = "users_without_"  # + a metric's name ('users_without_ild@10'): its users without a value


def format_summary(summary: dict, fmt: str, missing: str, empty: str = "zero",
                   ci=None, judged: bool = True) -> str:
    """The summary as 'table' (for people), 'json' (one object) or 'csv' (metric,value rows).
    With ci (--ci: {'values': {metric: (low, high)}, 'info': ..., 'line': ...}, cli/eval.py),
    each interval beside its mean: in the table's third column and a line saying how they were
    made; in JSON an object 'intervals' (info's level, method and clipped metrics, and each
    metric's [low, high]); in CSV the columns ci_low and ci_high. judged: false without
    judgments (no relevance file), whose summary has no counts of users by them."""
    if fmt == "json":
        shown = summary if ci is None else dict(summary, intervals={
            **ci["info"], **{m: list(pair) for m, pair in ci["values"].items()}})
        return json.dumps(shown) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if ci is None:
            writer.writerow(["metric", "value"])
            writer.writerows(summary.items())
        else:
            writer.writerow(["metric", "value", "ci_low", "ci_high"])
            writer.writerows([name, value, *["" if v is None else v for v in
                                             ci["values"].get(name, (None, None))]]
                             for name, value in summary.items())
        return out.getvalue()
    rows = [(name, _readable(value), interval(*ci["values"][name]) if ci and
             name in ci["values"] else "") for name, value in summary.items() if is_metric(name)]
    rows.append(("users", str(summary["users"]), ""))
    width = max(len(name) for name, _, _ in rows)
    shown = max(len(value) for _, value, _ in rows)
    lines = [f"{name:<{width}}  {value:<{shown}}  {pair}".rstrip() for name, value, pair in rows]
    if ci:
        lines.append(ci["line"])
    unranked = summary.get("users_without_recommendations")
    if unranked:
        fate = "scored 0" if missing == "zero" else "left out"
        lines.append(f"without recommendations: {_users(unranked)}, {fate}")
    unjudged = summary.get("users_only_in_recommendations")
    if unjudged:
        lines.append(f"only in recommendations: {_users(unjudged)}, not evaluated")
    nothing = summary.get("users_with_zero_ideal_dcg")
    if nothing:
        fate = "scored 0" if empty == "zero" else "left out"
        lines.append(f"ideal DCG 0 (nothing relevant): {_users(nothing)}, {fate}")
    for name, count in summary.items():  # the beyond-accuracy metrics' users without a value
        if name.startswith(WITHOUT) and is_metric(name[len(WITHOUT):]) and count:
            metric = name[len(WITHOUT):].partition("@")[0]
            why = {"ild": " (no recommendations, or fewer than two items)",
                   "novelty": " (no recommendations, or with --novelty-unseen skip only items "
                              "unseen in train)",
                   "popularity": " (no recommendations, or with --popularity-unseen skip only "
                                 "items unseen in train)"}.get(metric, " (no recommendations)")
            lines.append(f"{name[len(WITHOUT):]} without a value: {_users(count)}{why}, "
                         f"left out of its mean")
    counted = outcome.beyond_counted(summary, missing, empty, judged)
    if counted:
        lines.append(counted)
    return "\n".join(lines) + "\n"


def interval(low, high) -> str:
    """An interval as the tables show it: [low, high] to 4 decimals; '-' when there is none
    (fewer than two users)."""
    return "-" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


def _users(count: int) -> str:
    return f"{count} user" if count == 1 else f"{count} users"


def _readable(value) -> str:
    """A metric's value: '-' for none, counts (num_rel) as integers, the rest to 4 decimals."""
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.4f}"
