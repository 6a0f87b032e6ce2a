"""Pictures (matplotlib, the `compare` extra): per-user distributions for `eval --plot`, and for
`compare --plot` the sorted per-user differences and the per-segment differences with intervals.
What is drawn is computed in SQL (bins, sorted samples), so a plot of a million users is as
quick as one of a hundred. Sizes are fixed in pixels: DPI x the inches below."""

from __future__ import annotations

import math
from pathlib import Path

from .. import metrics as metric_names, objectstore
from ..errors import InputError
from ..sqltext import ident
from . import output

DPI = 100
PANEL = (5.0, 3.2)  # inches per panel
BINS = 20
CURVE_POINTS = 500  # sorted differences drawn per curve, at most


def check_path(path) -> None:
    """Fail before any work if the plot cannot be written to `path`."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise InputError(f"--plot {path}: the plot is a PNG image, name it with .png", usage=True)
    if objectstore.is_url(str(path)):
        objectstore.check_output(str(path), f"plot file {path}")
    elif not target.parent.is_dir():
        raise InputError(f"the directory of plot file {path} does not exist: create "
                         f"{target.parent} first", usage=True)


def size(panels_wide: int, panels_high: int) -> tuple:
    """The image size in pixels of a grid of panels."""
    return (round(PANEL[0] * panels_wide * DPI), round(PANEL[1] * panels_high * DPI))


def _figure(wide: int, high: int):
    from matplotlib.figure import Figure

    width, height = size(wide, high)
    return Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")


def _save(fig, path) -> None:
    """Write the figure as every output file is written (output.write_whole)."""
    output.write_whole(lambda local: fig.savefig(local, format="png", dpi=DPI), path,
                       "plot file", f"plot {path}")


def eval_plot(metrics: list, summary: dict, extremes: list, bin_counts, path) -> None:
    """eval --plot's picture however an engine counts the per-user values: extremes, per metric
    (the smallest and largest value, the users at 0, the users with a value); bin_counts(ranges)
    gives per metric {bin: users} (bins_sql's) over each metric's range [(low, high)]. A
    histogram of each metric, from 0 (or below) to its largest value (range_top), titled with
    the summary's mean (a count's sum over the users with a value) and the share at 0."""
    ranges = [(min(low, 0) if low is not None else 0,
               range_top(name, max(top, 1e-12) if top is not None else 1e-12))
              for name, (low, top, _, _) in zip(metrics, extremes)]
    counts = bin_counts(ranges)
    panels = []
    for name, (low, high_value), (_, _, zeros, users), found in zip(metrics, ranges, extremes,
                                                                     counts):
        mean = summary[name]
        if users and mean is not None and metric_names.counts(name.partition("@")[0]):
            mean = mean / users
        shown = name
        if mean is not None and metric_names.geometric(name.partition("@")[0]):
            # per user ln(max(x, 0.00001)): the histogram of the logs, and their mean
            shown, mean = f"{name} (ln)", math.log(mean)
        panels.append((shown, low, high_value, zeros, users, mean, found))
    draw_eval(panels, path)


def plot_in(con, per_user: str, metrics: list, summary: dict, path) -> None:
    """eval --plot of the relation `per_user` (a column per metric) in `con`, the run's own
    connection (the macros registered): eval_plot, counted by DuckDB."""
    extremes = []
    for name in metrics:
        column = ident(name)
        extremes += con.sql(f"SELECT min({column}), max({column}), count(*) FILTER (WHERE "
                            f"{column} = 0), count({column}) FROM {per_user}").fetchall()
    eval_plot(metrics, summary, extremes, lambda ranges: [
        dict(con.sql(bins_sql(ident(name), low, high_value, per_user)).fetchall())
        for name, (low, high_value) in zip(metrics, ranges)], path)


def range_top(name: str, high_value: float) -> float:
    """The top of a histogram's range: NDCG's goes to 1 at least."""
    return max(high_value, 1.0) if name.startswith("ndcg") else high_value


def bins_sql(column: str, low: float, high_value: float, table: str) -> str:
    """(bin, users) of the non-NULL values of `column` in `table`, BINS bins from low to high."""
    return (f"SELECT ndcg_bin({column}, {low!r}, {high_value!r}, {BINS}), count(*) "
            f"FROM {table} WHERE {column} IS NOT NULL GROUP BY ALL")


def draw_eval(panels: list, path) -> None:
    """eval --plot's picture from each metric's (name, low, high, users at 0, users with a value,
    mean, {bin: users}), however they were counted (DuckDB here, Spark's workers with
    --engine spark)."""
    wide = min(3, len(panels))
    high = math.ceil(len(panels) / wide)
    fig = _figure(wide, high)
    axes = fig.subplots(high, wide, squeeze=False).ravel()
    for ax, (name, low, high_value, zeros, users, mean, counts) in zip(axes, panels):
        width = (high_value - low) / BINS
        ax.bar([low + b * width for b in range(BINS)], [counts.get(b, 0) for b in range(BINS)],
               width=width, align="edge", color="#4c72b0", edgecolor="white")
        share = zeros / users if users else 0.0
        ax.set_title(f"{name}: mean {mean or 0:.4f}, {share:.0%} of users at 0", fontsize=10)
        ax.set_xlabel(f"{name} per user")
        ax.set_ylabel("users")
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    _save(fig, path)


def curve_points(users: int) -> int:
    """How many sorted differences a curve of compare --plot draws for this many users."""
    return max(2, min(users, CURVE_POINTS))


def draw_compare(curves: dict, users: int, rows, names, pairs, metrics, info, path) -> None:
    """compare --plot's picture from each (metric, reference run, run) curve of sorted
    per-user differences (ndcg_sorted_sample's values), however they were found (DuckDB here,
    Spark with --engine spark), and the rows."""
    fig = _figure(2, len(metrics))
    axes = fig.subplots(len(metrics), 2, squeeze=False)
    level = f"{info['ci'] * 100:g}%"
    for (left, right), name in zip(axes, metrics):
        for i, j in pairs:
            curve = curves[(name, i, j)]
            share = [k / max(len(curve) - 1, 1) for k in range(len(curve))]
            left.plot(share, curve, drawstyle="steps-mid", label=f"{names[j]} - {names[i]}")
        left.axhline(0, color="grey", linewidth=0.8)
        left.set_title(f"{name}: per-user difference, sorted ({users} users)", fontsize=10)
        left.set_xlabel("share of users")
        left.set_ylabel("difference")
        left.legend(fontsize=8)
        _segment_panel(right, rows, name, pairs, names, level)
    _save(fig, path)


def _segment_panel(ax, rows, name, pairs, names, level) -> None:
    metric, _, cutoff = name.partition("@")
    mine = [row for row in rows if row["metric"] == metric and (row["cutoff"] or "") == cutoff
            and row["baseline"] is not None]
    segments = list(dict.fromkeys(row["segment"] for row in mine))
    offsets = {(names[i], names[j]): (k - (len(pairs) - 1) / 2) * 0.25
               for k, (i, j) in enumerate(pairs)}
    for k, (i, j) in enumerate(pairs):
        ys, xs, lows, highs, open_ys, open_xs = [], [], [], [], [], []
        for row in mine:
            if (row["baseline"], row["run"]) != (names[i], names[j]) or row["diff"] is None:
                continue
            y = segments.index(row["segment"]) + offsets[(names[i], names[j])]
            if row["diff_ci_low"] is None:  # not tested: the mean difference alone
                open_ys.append(y)
                open_xs.append(row["diff"])
                continue
            ys.append(y)
            xs.append(row["diff"])
            lows.append(row["diff"] - row["diff_ci_low"])
            highs.append(row["diff_ci_high"] - row["diff"])
        color = f"C{k}"
        ax.errorbar(xs, ys, xerr=[lows, highs], fmt="o", color=color, capsize=3,
                    label=f"{names[j]} - {names[i]}")
        ax.plot(open_xs, open_ys, "o", markerfacecolor="none", color=color,
                label="not tested" if open_xs else None)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(segments)))
    ax.set_yticklabels(segments)
    ax.invert_yaxis()
    ax.set_title(f"{name}: mean difference, {level} interval", fontsize=10)
    ax.set_xlabel("difference")
    ax.legend(fontsize=8)
