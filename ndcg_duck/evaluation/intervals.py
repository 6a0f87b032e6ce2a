"""Intervals of eval's means (`--ci LEVEL`, `--ci-method t|bootstrap`; Python's ci=): for each
metric averaged over users, from its per-user values in a DuckDB relation, overall and per
segment.

The rules are means.py's, the same for every door: Student's t from the count and the sample
variance (means.t_interval), or scipy's percentile bootstrap of the values (means.bootstrap_
interval, the users in id order so that a seed gives the same interval on any machine), then
the rule for bounded metrics (means.within): the t interval of a metric whose values lie in
[0, 1] is cut to [0, 1] and named in `clipped` (a percentile bootstrap interval never leaves the
values' range). Counts (num_rel) are sums, and coverage, gini and entropy one value per run:
they get no interval.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from .. import means, metrics as metric_names
from ..sqltext import ident

METHODS = ("t", "bootstrap")
NAMES = {"t": "Student's t", "bootstrap": "percentile bootstrap"}


class Spec(NamedTuple):
    """What interval to give: level (0 < level < 1), method ('t' or 'bootstrap'), and the
    bootstrap's resamples and seed."""

    level: float
    method: str = "t"
    n_resamples: int = 10000
    seed: int = 42

    def info(self, clipped: list) -> dict:
        """How the output describes the intervals: level, method (with the bootstrap's
        resamples and seed) and the metrics whose interval was clipped to their range."""
        found = {"level": self.level, "method": self.method}
        if self.method == "bootstrap":
            found.update(n_resamples=self.n_resamples, seed=self.seed)
        found["clipped"] = clipped
        return found

    def describe(self, clipped: list) -> str:
        """The table's line on the intervals."""
        what = NAMES[self.method]
        if self.method == "bootstrap":
            what += f" ({self.n_resamples} resamples, seed {self.seed})"
        line = f"{self.level * 100:g}% intervals: {what} over users"
        if clipped:
            line += f"; clipped to the metric's range [0, 1]: {', '.join(clipped)}"
        return line


def averaged(names) -> list:
    """The names among `names` (summary keys, per-user columns) whose mean gets an interval."""
    return [name for name in names if metric_names.is_metric(name)
            and not metric_names.counts(name.partition("@")[0])
            and not metric_names.per_run(name.partition("@")[0])]


def intervals_in(con, relation: str, metrics: list, centres: dict, spec: Spec,
                 group: Optional[str] = None) -> tuple:
    """The interval of the mean of each of `metrics` (columns of `relation` in `con`, its first
    column the user id), per value of the column `group` (None: over every row), around the
    means `centres` ({(group value or None, metric): mean}, the exactly rounded ones the output
    shows). Returns ({(group value or None, metric): (low, high)}, the metrics clipped)."""
    (user,), = con.sql(f"SELECT column_name FROM (DESCRIBE {relation}) LIMIT 1").fetchall()
    key = ident(group) if group else "NULL"
    found, clipped = {}, []
    for metric in metrics:
        column = ident(metric)
        rows = con.sql(f"SELECT {key}, count({column}), var_samp({column}), min({column}), "
                       f"max({column}) FROM {relation} GROUP BY ALL").fetchall()
        for value, n, var, lowest, highest in rows:
            if spec.method == "t":
                low, high = means.t_interval(centres.get((value, metric)), var, n, spec.level,
                                             "--ci")
            else:
                where = f" AND {key} = $value" if group else ""
                data = con.execute(f"SELECT {column} FROM {relation} WHERE {column} IS NOT NULL"
                                   f"{where} ORDER BY {ident(user)}",
                                   {"value": value} if group else None).fetchnumpy()[metric]
                low, high = means.bootstrap_interval(data, spec.level, spec.n_resamples,
                                                     spec.seed, "--ci-method bootstrap")
            bounds = metric_names.bounds(metric)
            if bounds and n and not bounds[0] <= lowest <= highest <= bounds[1]:
                bounds = None  # values outside the usual range (a negative gain): not cut
            low, high, cut = means.within(low, high, bounds)
            found[(value, metric)] = (low, high)
            if cut and metric not in clipped:
                clipped.append(metric)
    return found, clipped
