"""Segments and plots on the command line: the checks of --segments, --by and --plot
(common.py's options, compare's too) before any work, and eval's output with the per-segment
rows that the engine's result object gives (report/result.py)."""

from __future__ import annotations

import csv
import io
import json

from ..comparison import stats
from ..errors import InputError
from ..evaluation.inputs import TABLE, table_name
from ..report.clashes import Input
from ..options import check_segments, group

# eval's options that break the results down and draw them, after the evaluation (compare's
# too): the registry's group 'extras' (options.PARAMS)
EVAL_EXTRAS = group("extras")


def with_segments(shown: str, summary: dict, rows: list, metrics: list, by: str, fmt,
                  ci=None) -> str:
    """eval's output `shown` with the per-segment rows (segments.rows') in `fmt`; with ci
    (--ci: output.format_summary's), each row's intervals (row['intervals']) too: in JSON as
    the row's object 'intervals', in CSV as the columns METRIC_ci_low and METRIC_ci_high after
    each metric's, in the table beside each mean."""
    from ..report.output import interval
    from ..report.segments import shown as shown_segment

    if fmt == "json":
        whole = summary if ci is None else dict(summary, intervals={
            **ci["info"], **{m: list(pair) for m, pair in ci["values"].items()}})
        return json.dumps(dict(whole, segments=rows)) + "\n"

    def pair(row, m):
        return row.get("intervals", {}).get(m) if ci else None

    with_ci = [m for m in metrics if ci and m in rows[0].get("intervals", {})]
    if fmt == "csv":  # quoted as CSV needs (a segment may hold commas, quotes, line breaks)
        head = ["segment", "users"] + [name for m in metrics for name in
                                       ([m, f"{m}_ci_low", f"{m}_ci_high"] if m in with_ci
                                        else [m])]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(head)
        writer.writerows([[row["segment"], row["users"]] + [
            "" if v is None else v for m in metrics
            for v in ([row[m], *pair(row, m)] if m in with_ci else [row[m]])] for row in rows])
        return out.getvalue()
    head = ["segment", "users"] + metrics
    cells = [[shown_segment(row["segment"]), str(row["users"])]
             + [("-" if row[m] is None else f"{row[m]:.4f}")
                + (" " + interval(*pair(row, m)) if m in with_ci else "") for m in metrics]
             for row in rows]
    widths = [max(len(c) for c in column) for column in zip(head, *cells)]
    lines = ["  ".join(f"{v:<{w}}" if i == 0 else f"{v:>{w}}" for i, (v, w) in
                       enumerate(zip(values, widths))) for values in [head] + cells]
    return shown + "\n" + f"by {by}:\n" + "\n".join(lines) + "\n"


def beside_inputs(segments, settings: dict) -> list:
    """The files eval and compare read besides the rankings and judgments (report/clashes.py)."""
    return [Input("segments", "--segments", segments),
            Input("train", "--train", settings.get("train")),
            Input("items", "--items", settings.get("items"))]


DRIVER_READS = ("--segments", "--train", "--items")  # read with DuckDB on Spark's driver too


def refuse_tables(given, engine: str) -> None:
    """Tables of Spark's catalog (table:NAME) among the inputs and outputs `given` as (the
    caller's words, value) pairs: --engine spark reads them as RECS, RELEVANCE and --run and
    writes --per-user as one; any other place (the default engine, the inputs read on the
    driver, --plot) is a usage error that says what to give."""
    for said, value in given:
        name = table_name(value)
        if name is None:
            continue
        if not name:
            raise InputError(f"{said} {value}: name the table after {TABLE}, as in "
                             f"{TABLE}db.recs", usage=True)
        if said == "--plot":
            raise InputError(f"{said} {value}: {said} writes a PNG file, not a table: give a "
                             f"path", usage=True)
        if engine != "spark":
            raise InputError(f"{said} {value}: {TABLE}NAME names a table of Spark's catalog, "
                             f"which only --engine spark reads and writes: add --engine spark, "
                             f"or give a file", usage=True)
        if said in DRIVER_READS:
            raise InputError(f"{said} {value}: {said} is read on Spark's driver from a file, not "
                             f"from a table: write the table out as Parquet and give its path",
                             usage=True)


def check_eval_extras(segments, by, plot) -> None:
    """Before any work: the options go together and what they need is installed."""
    check_segments(segments, by)
    if plot:
        stats.require("matplotlib", "--plot")
        from ..report import plot as plotting

        plotting.check_path(plot)
