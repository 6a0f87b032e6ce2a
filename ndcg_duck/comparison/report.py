"""How a comparison is shown: a table for people (the difference and its interval first), or
tidy rows (one per metric x cutoff x segment x run) as JSON, CSV or Parquet."""

from __future__ import annotations

import csv
import io
import json

from ..report import tables
from ..report.segments import shown as shown_segment
from .common import (CLIPPED, EXACT_RANDOMIZATION, NORMAL_BOOTSTRAP, PER_RUN,
                      PER_RUN_BOOTSTRAP, ROW_FIELDS, row_metric)

TEST_NAMES = {"t": "paired t-test", "randomization": "paired randomization test (sign flips)",
              "bootstrap": "paired bootstrap test", "none": "no test, intervals only"}


def rows_table(rows):
    """The tidy rows as an Arrow table (the column types fixed, whatever the values)."""
    import pyarrow as pa
    types = {"users": pa.int64(), "wins": pa.int64(), "ties": pa.int64(), "losses": pa.int64(),
             "family": pa.int64(), "users_without_recommendations": pa.int64(),
             "significant": pa.bool_(), "tested": pa.bool_()}
    text = {"metric", "cutoff", "segment", "run", "baseline", "note", "test", "correction"}
    schema = pa.schema([(name, pa.string() if name in text else types.get(name, pa.float64()))
                        for name in ROW_FIELDS])
    return pa.Table.from_pylist([{k: row[k] for k in ROW_FIELDS} for row in rows], schema=schema)


def render(rows, info, fmt: str):
    """The comparison in format `fmt`: text for table, json, csv, markdown and latex (a table
    for a paper: report/tables.py); bytes for parquet."""
    if fmt in tables.FORMATS:
        return tables.compare_table(rows, info, fmt)
    if fmt == "json":
        return json.dumps([{k: row[k] for k in ROW_FIELDS} for row in rows]) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(ROW_FIELDS)
        writer.writerows([["" if row[k] is None else row[k] for k in ROW_FIELDS] for row in rows])
        return out.getvalue()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        sink = io.BytesIO()
        pq.write_table(rows_table(rows), sink)
        return sink.getvalue()
    return table(rows, info)


def _signed(x, digits=4):
    return "" if x is None else f"{x:+.{digits}f}"


def _plain(x, digits=4):
    return "" if x is None else f"{x:.{digits}f}"


def _interval(low, high, signed):
    if low is None or high is None:
        return ""
    shown = _signed if signed else _plain
    return f"[{shown(low)}, {shown(high)}]"


def _p(p):
    if p is None:
        return ""
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def _users(count):
    return f"{count} user" if count == 1 else f"{count} users"


def table(rows, info) -> str:
    """Per metric: one line per segment and run, leading with the difference against the
    baseline and its interval, then the notes (users, lacking users, segments not tested)."""
    level = f"{info['ci'] * 100:g}%"
    correction = info["correction"]
    adjusted = f"p {correction}" if correction != "none" else "p adj"
    head = ["segment", "run", "users", "difference", f"{level} interval", "relative", "d_z",
            "wins/ties/losses", "p", adjusted, "mean", f"{level} interval"]
    if info["baseline"] is None:
        head[1:2] = ["run", "against"]
    lines = [_title(info)]
    for name in info["metrics"]:
        metric, _, cutoff = name.partition("@")
        block = [row for row in rows if row["metric"] == metric and (row["cutoff"] or "") == cutoff]
        cells = []
        for row in block:
            against = [row["baseline"] or ""] if info["baseline"] is None else []
            mark = "*" if row["significant"] else ""
            wtl = ("" if row["wins"] is None
                   else f"{row['wins']}/{row['ties']}/{row['losses']}")
            rel = "" if row["rel_diff"] is None else f"{row['rel_diff'] * 100:+.1f}%"
            show_mean = info["baseline"] is not None or row["baseline"] is None
            cells.append([shown_segment(row["segment"]), row["run"]] + against + [
                str(row["users"]), _signed(row["diff"]),
                _interval(row["diff_ci_low"], row["diff_ci_high"], True), rel,
                _plain(row["d_z"], 2), wtl, _p(row["p_value"]), _p(row["p_adjusted"]) + mark,
                _plain(row["mean"]) if show_mean else "",
                _interval(row["ci_low"], row["ci_high"], False) if show_mean else ""])
        lines += ["", name] + _aligned(head, cells)
    lines += [""] + _notes(rows, info)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _title(info) -> str:
    pairs = info["pairs"]
    if info["baseline"] is None:
        what = "every pair of " + ", ".join(dict.fromkeys(n for pair in pairs for n in pair))
    else:
        others = [run for _, run in pairs]
        what = f"{', '.join(others)} against {info['baseline']} (baseline)"
    test = TEST_NAMES[info["test"]]
    if info["test"] in ("randomization", "bootstrap"):
        test += f", {info['n_resamples']} resamples, seed {info['seed']}"
    correction = info["correction"]
    family = info["family"]
    tests = f"{family} test" if family == 1 else f"{family} tests"
    if not family:
        if info["test"] == "none":
            return f"compare: {what}; {test}"
        return f"compare: {what}; {test}, no test made" + (
            ": every per-user difference is 0" if info.get("all_zero") else "")
    fix = "no correction" if correction == "none" else f"{correction.capitalize()} correction"
    return f"compare: {what}; {test}; {fix} over {tests}"


def _aligned(head, cells) -> list:
    numeric = {"users", "difference", "relative", "d_z", "p", "mean"}
    widths = [max(len(str(c)) for c in column) for column in zip(head, *cells)]

    def line(values, is_head=False):
        parts = []
        for value, width, name in zip(values, widths, head):
            right = name in numeric or name.startswith("p ") and not is_head
            parts.append(f"{value:>{width}}" if right and not is_head else f"{value:<{width}}")
        return "  ".join(parts)

    return [line(head, True)] + [line(row) for row in cells]


def _notes(rows, info) -> list:
    notes = [f"users: {info['users']}, the same for every run"]
    for name, counts in info["runs"].items():
        lacking = counts.get("users_without_recommendations") or 0
        if lacking:
            notes.append(f"{name}: {_users(lacking)} without recommendations, "
                         + ("scored 0" if not info["users_left_out"] else "left out"))
    if info["users_left_out"]:
        notes.append(f"left out: {_users(info['users_left_out'])} that not every run scores "
                     f"(--missing skip)")
    small = list(dict.fromkeys(shown_segment(row["segment"]) for row in rows
                               if row["note"] and row["note"].startswith("fewer")))
    if small:
        notes.append(f"segments with fewer than {info['min_users']} users (--min-users), means "
                     f"only, not tested: {', '.join(small)}")
    same = {}
    for row in rows:
        if row["note"] and row["note"].startswith("every per-user difference"):
            pair = f"{row['run']} against {row['baseline']}"
            where = "" if row["segment"] == "(all)" else f" in {shown_segment(row['segment'])}"
            metric = row_metric(row)
            same.setdefault(row["note"].split(":")[0], []).append(f"{pair} ({metric}{where})")
    for note in (PER_RUN, PER_RUN_BOOTSTRAP):
        per_run = [row_metric(row) for row in rows if row["note"] == note]
        if per_run:
            notes.append(f"{', '.join(dict.fromkeys(per_run))}: {note}")
    for note in (NORMAL_BOOTSTRAP, EXACT_RANDOMIZATION):
        if any(row["note"] == note for row in rows):
            notes.append(note)
    if info.get("clipped"):
        notes.append(f"{', '.join(dict.fromkeys(info['clipped']))}: {CLIPPED}")
    for why, cases in same.items():
        notes.append(f"no test where {why}: {', '.join(dict.fromkeys(cases))}")
    if info["family"]:
        notes.append(f"* {'p' if info['correction'] == 'none' else 'p ' + info['correction']} "
                     f"< {info['alpha']:g}")
    return notes
