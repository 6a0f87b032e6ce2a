"""Tables for papers: `--format markdown` and `--format latex` of eval and compare.

One row per run (eval: the run; compare: each run, the baseline first), one column per metric,
each value to 4 decimals (counts as integers). In compare, the best value of each accuracy
metric (the highest, as shown) is in bold, and each value that differs significantly from the
baseline's (the corrected p-value below alpha) carries a dagger; a caption says which test and
correction made the daggers. The beyond-accuracy metrics have no best (more coverage or less
popularity is a choice, not a rule) and get no bold. eval's one row has nothing to be best
against: no bold. With --ci (eval), each value is followed by its interval. Markdown tables are
GitHub's (pipe tables; the caption a line below, as pandoc's `Table:`); LaTeX ones use booktabs
(\\toprule, \\midrule, \\bottomrule: \\usepackage{booktabs}).
"""

from __future__ import annotations

from pathlib import Path

from .. import metrics as metric_names

FORMATS = ("markdown", "latex")
# the extensions a run's file name loses in its row's name
SUFFIXES = {".parquet", ".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".txt", ".run", ".gz",
            ".zst", ".trec"}
TEST_NAMES = {"t": "paired t-test", "randomization": "paired randomization test",
              "bootstrap": "paired bootstrap test"}


def run_name(recs) -> str:
    """eval's row name: the file or directory name of RECS without its extensions
    ('runs/bm25.run.gz' -> 'bm25'), or 'run' for a table given in Python."""
    if not isinstance(recs, (str, Path)):
        return "run"
    path = Path(str(recs).rstrip("/"))
    name = path.name
    while Path(name).suffix.lower() in SUFFIXES:
        name = Path(name).stem
    return name or str(recs)


def _value(value) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _escape(text: str, fmt: str) -> str:
    """Text as a cell: markdown's pipes escaped; LaTeX's special characters escaped."""
    if fmt == "markdown":
        return text.replace("|", "\\|")
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
               "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
               "^": r"\textasciicircum{}", "†": r"$^\dagger$"}
    return "".join(special.get(c, c) for c in text)


def _bold(text: str, fmt: str) -> str:
    return f"**{text}**" if fmt == "markdown" else f"\\textbf{{{text}}}"


def render(names: list, rows: list, caption: str, fmt: str) -> str:
    """A table of `rows` ([run name, cell, ...], the cells already marked) under the metric
    `names`, with `caption`, in `fmt`."""
    head = ["run"] + names
    if fmt == "markdown":
        lines = ["| " + " | ".join(_escape(h, fmt) for h in head) + " |",
                 "|:---|" + "---:|" * len(names)]
        lines += ["| " + " | ".join([_escape(row[0], fmt)] + row[1:]) + " |" for row in rows]
        return "\n".join(lines) + f"\n\nTable: {caption}\n"
    lines = [r"\begin{table}", r"  \centering", f"  \\caption{{{_escape(caption, fmt)}}}",
             f"  \\begin{{tabular}}{{l{'r' * len(names)}}}", r"    \toprule",
             "    " + " & ".join(_escape(h, fmt) for h in head) + r" \\", r"    \midrule"]
    lines += ["    " + " & ".join([_escape(row[0], fmt)] + row[1:]) + r" \\" for row in rows]
    lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def eval_table(summary: dict, name: str, fmt: str, ci=None) -> str:
    """eval's summary as a table for a paper: one row, the run `name`; with ci (--ci, as
    output.format_summary's) each mean's interval after it and the caption says how they
    were made."""
    names = [key for key in summary if metric_names.is_metric(key)]
    cells = []
    for key in names:
        cell = _value(summary[key])
        if ci and key in ci["values"]:
            low, high = ci["values"][key]
            if low is not None and high is not None:
                cell += f" [{low:.4f}, {high:.4f}]"
        cells.append(_escape(cell, fmt))
    users = summary["users"]
    caption = f"Means over {users} user{'' if users == 1 else 's'}."
    if ci:
        caption += " " + ci["line"][0].upper() + ci["line"][1:] + "."
    return render(names, [[name] + cells], caption, fmt)


def compare_table(rows: list, info: dict, fmt: str) -> str:
    """compare's every-user rows (segment '(all)') as a table for a paper: a row per run (the
    baseline first), a column per metric, the best of each accuracy metric in bold, a dagger
    on each value significantly different from the baseline's."""
    names = list(info["metrics"])
    runs = list(dict.fromkeys([info["baseline"]] + [run for _, run in info["pairs"]]))
    found = {(row["run"], _name(row)): row for row in rows if row["segment"] == "(all)"}
    shown = {(run, m): _value(found[(run, m)]["mean"]) if (run, m) in found else "-"
             for run in runs for m in names}
    table = []
    for run in runs:
        cells = []
        for m in names:
            cell = shown[(run, m)]
            best = [shown[(other, m)] for other in runs if shown[(other, m)] != "-"]
            if (len(runs) > 1 and cell != "-" and not metric_names.beyond(_measure(m))
                    and cell == max(best, key=float)):
                cell = _bold(cell, fmt)
            row = found.get((run, m))
            if row is not None and row["baseline"] is not None and row["significant"]:
                cell += _escape("†", fmt)
            cells.append(cell)
        table.append([run] + cells)
    return render(names, table, _caption(info), fmt)


def _name(row) -> str:
    return row["metric"] + (f"@{row['cutoff']}" if row["cutoff"] else "")


def _measure(name: str):
    metric, _, cutoff = name.partition("@")
    return metric_names.Measure(metric, cutoff or None)


def _caption(info: dict) -> str:
    users = info["users"]
    text = f"Means over the {users} user{'' if users == 1 else 's'} every run scores."
    best = " Bold: the best of each accuracy metric."
    if info["test"] == "none" or not info.get("family"):
        return text + best + " No test made."
    test = TEST_NAMES[info["test"]]
    if info["test"] in ("randomization", "bootstrap"):
        test += f" ({info['n_resamples']} resamples, seed {info['seed']})"
    correction = info["correction"]
    fix = "no correction" if correction == "none" else f"{correction.capitalize()} correction"
    tests = f"{info['family']} test" if info["family"] == 1 else f"{info['family']} tests"
    return (f"{text}{best} †: differs from {info['baseline']} (the baseline) by a {test}, "
            f"p < {info['alpha']:g} after {fix} over {tests}.")
