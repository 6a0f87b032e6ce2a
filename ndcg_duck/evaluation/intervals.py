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

import math
from typing import NamedTuple, Optional

from .. import means, metrics as metric_names, options as registry
from ..errors import InputError
from ..sqltext import ident

METHODS = registry.CI_METHODS
# evaluate()'s keywords for intervals and their defaults (the bootstrap's are compare's)
KEYWORDS = {"ci": None, "ci_method": None,
            "n_resamples": registry.BY_NAME["n_resamples"].default,
            "seed": registry.BY_NAME["seed"].default}
NAMES = {"t": "Student's t", "bootstrap": "percentile bootstrap"}


class Spec(NamedTuple):
    """What interval to give: level (0 < level < 1), method ('t' or 'bootstrap'), and the
    bootstrap's resamples and seed."""

    level: float
    method: str = "t"
    n_resamples: int = 10000
    seed: int = 42

    def info(self, said: dict) -> dict:
        """How the output describes the intervals: level, method (with the bootstrap's
        resamples and seed), the metrics whose interval was clipped to their range and those
        left unclipped because some value lies outside it (said: intervals_in's)."""
        found = {"level": self.level, "method": self.method}
        if self.method == "bootstrap":
            found.update(n_resamples=self.n_resamples, seed=self.seed)
        found.update(clipped=said["clipped"], outside=said["outside"])
        return found

    def describe(self, said: dict) -> str:
        """The table's line on the intervals."""
        what = NAMES[self.method]
        if self.method == "bootstrap":
            what += f" ({self.n_resamples} resamples, seed {self.seed})"
        line = f"{self.level * 100:g}% intervals: {what} over users"
        if said["clipped"]:
            line += f"; clipped to the metric's range [0, 1]: {', '.join(said['clipped'])}"
        if said["outside"]:
            line += (f"; not clipped, some values being outside [0, 1] (a negative gain): "
                     f"{', '.join(said['outside'])}")
        return line


def said() -> dict:
    """What intervals_in tells of its intervals: the metrics clipped, the metrics with values
    outside their bounds (not clipped)."""
    return {"clipped": [], "outside": []}


def merge(first: dict, second: dict) -> dict:
    """Two `said` together, each name once."""
    return {key: first[key] + [m for m in second[key] if m not in first[key]] for key in first}


def checked(level, method, n_resamples, seed) -> Optional["Spec"]:
    """evaluate()'s ci=, ci_method=, n_resamples= and seed=, checked as the registry checks
    eval's --ci, --ci-method, --n-resamples and --seed: the Spec, or None without ci=."""
    if level is None:
        if method is not None:
            raise InputError("ci_method= needs ci=, the level (e.g. ci=0.95)", usage=True)
        return None
    registry.level("ci", level)
    if method is not None and method not in METHODS:
        raise InputError(f"ci_method {method!r} is not one of: {', '.join(METHODS)}",
                         usage=True)
    registry.whole("n_resamples", n_resamples, maximum=None)
    registry.whole("seed", seed, minimum=0, maximum=None)
    means.require("scipy", "ci=")
    return Spec(level, method or "t", n_resamples, seed)


def averaged(names) -> list:
    """The names among `names` (summary keys, per-user columns) whose mean gets an interval."""
    return [name for name in names if metric_names.is_metric(name)
            and not metric_names.counts(name.partition("@")[0])
            and not metric_names.per_run(name.partition("@")[0])]


def interval_of(metric: str, mean, var, n: int, outside: int, spec: Spec, values=None) -> tuple:
    """The interval of one mean, as every engine decides it: metric (its name, for its bounds),
    the mean shown, the sample variance and count of its values, how many of them lie outside
    the metric's bounds (a negative gain can take NDCG below 0: then nothing is clipped), and
    for the bootstrap the values themselves (in user id order). Returns (low, high, clipped).
    A geometric mean's (gm_map, gm_bpref: per-user values are logs) is the interval of the mean
    of the logs, exp of each end, clipped to [0, 1]."""
    geometric = metric_names.geometric(metric.partition("@")[0])
    if geometric and mean is not None:
        mean = math.log(mean)
    if spec.method == "t":
        low, high = means.t_interval(mean, var, n, spec.level, "--ci")
    else:
        low, high = means.bootstrap_interval(values, spec.level, spec.n_resamples, spec.seed,
                                             "--ci-method bootstrap")
    if geometric:  # exp of per-user logs <= 0 (values in [0, 1]): in [0, 1]
        return means.within(means.geometric(low), means.geometric(high), (0.0, 1.0))
    return means.within(low, high, metric_names.bounds(metric) if not outside else None)


def outside_sql(metric: str, column: str) -> str:
    """SQL counting the values of `column` outside the bounds of `metric` (0 for an unbounded
    one)."""
    bounds = metric_names.bounds(metric)
    if bounds is None:
        return "0"
    return f"count(*) FILTER (WHERE {column} < {bounds[0]!r} OR {column} > {bounds[1]!r})"


def intervals_in(con, relation: str, metrics: list, centres: dict, spec: Spec,
                 group: Optional[str] = None) -> tuple:
    """The interval of the mean of each of `metrics` (columns of `relation` in `con`, its first
    column the user id), per value of the column `group` (None: over every row), around the
    means `centres` ({(group value or None, metric): mean}, the exactly rounded ones the output
    shows). Returns ({(group value or None, metric): (low, high)}, the metrics clipped)."""
    (user,), = con.sql(f"SELECT column_name FROM (DESCRIBE {relation}) LIMIT 1").fetchall()
    key = ident(group) if group else "NULL"
    found, told = {}, said()
    for metric in metrics:
        column = ident(metric)
        rows = con.sql(f"SELECT {key}, count({column}), var_samp({column}), "
                       f"{outside_sql(metric, column)} FROM {relation} GROUP BY ALL").fetchall()
        for value, n, var, outside in rows:
            data = None
            if spec.method == "bootstrap":
                where = f" AND {key} = $value" if group else ""
                data = con.execute(f"SELECT {column} FROM {relation} WHERE {column} IS NOT NULL"
                                   f"{where} ORDER BY {ident(user)}",
                                   {"value": value} if group else None).fetchnumpy()[metric]
            record(found, told, (value, metric), centres.get((value, metric)), var, n,
                   outside, spec, data)
    return found, told


def record(found: dict, told: dict, key: tuple, mean, var, n: int, outside: int, spec: Spec,
           values=None) -> None:
    """interval_of for key (group, metric), kept in found and said in told (said()): how both
    engines add up their intervals."""
    metric = key[1]
    low, high, cut = interval_of(metric, mean, var, n, outside, spec, values)
    found[key] = (low, high)
    for name, case in (("clipped", cut), ("outside", outside and metric_names.bounds(metric))):
        if case and metric not in told[name]:
            told[name].append(metric)
