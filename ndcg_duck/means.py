"""The one rule for every reported mean: the exactly rounded mean of the per-user values.

Their sum is taken exactly and divided by their count, and only that quotient is rounded, once,
to the nearest double. Every door (eval, segments, compare; the Spark engine through
`mean_of_sum`) gives the same bits, whatever the order of the users, the number of threads,
batches or partitions. The SQL half (sql/ndcg_means.sql) scales the values of a column to whole
numbers and adds them as one HUGEINT (in one pass, at a scale chosen before it and checked by it;
again at the scale their range allows when the check fails), else splits each value into an
exponent and an integer mantissa and adds the mantissas of each exponent as integers (exact);
`exact_means` runs it and `mean_of_parts` adds the few parts as fractions and rounds.

The interval of a mean is ruled here too, once for every door and engine (eval --ci, compare):
`t_interval` (Student's t from the mean, the sample variance and the count: what the Spark
engine has from exact sums), `bootstrap_interval` (scipy's percentile bootstrap of the
per-user values) and `within` (the rule for bounded metrics: a t interval of a metric whose
values lie in [0, 1] is clipped to [0, 1], and the output says which were).
"""

from __future__ import annotations

import importlib
import inspect
import math
from typing import Iterable, Optional, Tuple

from .errors import InputError
from .sqltext import ident

INSTALL = "pip install 'ndcg-duck[compare]'"


def mean_of_sum(total: int, exponent: int, count: int) -> Optional[float]:
    """The exactly rounded mean of `count` values whose exact sum is total * 2**exponent (total an
    integer): what a partitioned engine calls with its added-up exact partial sums. None for no
    values."""
    if not count:
        return None
    numerator, denominator = (total << exponent, count) if exponent >= 0 else \
        (total, count << -exponent)
    return numerator / denominator if numerator else 0.0  # int / int rounds correctly, once


def geometric(mean_of_logs: Optional[float]) -> Optional[float]:
    """A geometric mean from the exactly rounded mean of the logs of the values (trec_eval's
    gm_map and gm_bpref: each user's ln(max(x, 0.00001)), sql/ndcg_metrics.sql's
    ndcg_log_floored): exp of it, as trec_eval's te_calc_avg_meas_s_gm. None for no values."""
    return None if mean_of_logs is None else math.exp(mean_of_logs)


def mean_of_parts(parts: Iterable[tuple]) -> Optional[float]:
    """The exactly rounded mean from (exponent, mantissa sum, count) parts: the values of a part
    are mantissa * 2**(exponent - 52) each."""
    parts = list(parts)
    count = sum(n for _, _, n in parts)
    if not count:
        return None
    low = min(e for e, _, _ in parts) - 52
    total = sum(int(s) << (e - 52 - low) for e, s, _ in parts)
    return mean_of_sum(total, low, count)


# a column without a known bound (exact_means' `sizes`): its one pass expects values below 2**20
UNBOUNDED = 2.0 ** 20 - 1


def exact_means(con, relation: str, columns: dict, groups: tuple = (), sizes: Optional[dict] = None
                ) -> dict:
    """The exactly rounded mean of each of `columns` ({name: SQL expression over `relation`})
    over the rows of `relation` (NULLs left out), per value of the SQL expressions `groups`.
    Returns {(group values..., name): mean}; a group whose values of a column are all NULL has
    no entry. `con` must have the ndcg_ macros (sqlfiles.register). `sizes` ({name: a bound})
    says how large a column's values are expected to be in size (a metric's range: 1 for
    [0, 1]); UNBOUNDED for a column it does not name.

    One pass over the rows adds up each column's values scaled by 2**shift to whole numbers in
    one HUGEINT sum (sql/ndcg_means.sql's ndcg_scaled_below), the shift chosen before the scan
    from the column's bound and the row count (`window`), and returns beside the sum the
    smallest non-zero and the largest of the values' sizes: when those show that every value
    was a whole number at that shift and below the bound's power of two, the sum is exact and
    used (`fits`). A column they flag alone takes a second pass: one HUGEINT sum at the shift
    its own range allows (`shift`: from that smallest, where a column with a zero and no value
    below 2**top reads 2**top, a shift finer than need be, never too coarse), or, for values
    from subnormal to huge or not finite, an exponent per value (`_exact_parts`)."""
    if not columns:
        return {}
    keys = [f"{g} AS g{i}" for i, g in enumerate(groups)]
    names = list(columns)
    values = [f"({columns[name]})::DOUBLE AS v{i}" for i, name in enumerate(names)]
    source = f"(SELECT {', '.join(keys + values)} FROM {relation})"
    (rows,), = con.sql(f"SELECT count(*) FROM {relation}").fetchall()
    windows = {i: window((sizes or {}).get(name, UNBOUNDED), rows) for i, name in enumerate(names)}
    kept = [f"g{i}" for i in range(len(groups))]
    measured = [f"count(v{i}), sum(ndcg_scaled_below(v{i}, {windows[i][0]}, {windows[i][1]})), "
                f"min(ndcg_nonzero_size(v{i}, {windows[i][1]})), max(abs(v{i}))"
                for i in range(len(names))]
    found: dict = {}
    ranges: dict = {}  # column: its groups' (smallest non-zero size or 2**top, largest)
    flagged = set()
    for row in con.sql(f"SELECT {', '.join(kept + measured)} FROM {source}"
                       + (f" GROUP BY {', '.join(kept)}" if kept else "")).fetchall():
        group, parts = tuple(row[:len(groups)]), row[len(groups):]
        for i, name in enumerate(names):
            count, total, smallest, largest = parts[4 * i:4 * i + 4]
            ranges.setdefault(i, []).append((smallest, largest))
            if not fits(smallest, largest, *windows[i]):
                flagged.add(i)
            elif count:  # values total * 2**-shift: mean_of_parts' mantissas of exponent 52 - shift
                found[(*group, name)] = mean_of_parts([(52 - windows[i][0], total, count)])
    if flagged:
        found = {key: mean for key, mean in found.items()
                 if key[-1] not in {names[i] for i in flagged}}
        found.update(_second_pass(con, relation, columns, groups, source, rows, names,
                                  {i: ranges[i] for i in flagged}))
    return found


def _second_pass(con, relation: str, columns: dict, groups: tuple, source: str, rows: int,
                 names: list, flagged: dict) -> dict:
    """exact_means of the columns its one pass flagged ({column's index: every group's (smallest
    non-zero, largest) size}): one HUGEINT sum at the shift their range allows (`shift`), else
    an exponent per value (`_exact_parts`)."""
    found: dict = {}
    shifts = {i: shift(*_widest(ranges), rows) for i, ranges in flagged.items()}
    fast = [i for i in shifts if shifts[i] is not None]
    if fast:
        kept = [f"g{i}" for i in range(len(groups))]
        query = (f"SELECT {', '.join(kept + [f'count(v{i}), sum(ndcg_scaled(v{i}, {shifts[i]}))' for i in fast])} "
                 f"FROM {source}" + (f" GROUP BY {', '.join(kept)}" if kept else ""))
        for row in con.sql(query).fetchall():
            group, sums = tuple(row[:len(groups)]), row[len(groups):]
            for j, i in enumerate(fast):
                count, total = sums[2 * j], sums[2 * j + 1]
                if count:
                    found[(*group, names[i])] = mean_of_parts([(52 - shifts[i], total, count)])
    rest = {names[i]: columns[names[i]] for i in shifts if shifts[i] is None}
    if rest:
        found.update(_exact_parts(con, relation, rest, groups))
    return found


def window(size: float, count: int) -> tuple:
    """(shift, top) for one pass over up to `count` values expected below `size` in size: top the
    power of two above size (values below 2**top are added up, sql/ndcg_means.sql's
    ndcg_scaled_below), shift the largest that keeps count terms below 2**(top + shift) within
    a HUGEINT (their sum below 2**126): the finest resolution (2**-shift) the sum can have."""
    top = math.frexp(size)[1]  # size < 2**top
    return 126 - top - max(count, 1).bit_length(), top


def fits(smallest: Optional[float], largest: Optional[float], scaled: int, top: int) -> bool:
    """Whether a sum taken at (scaled, top) (`window`) is exact, from the smallest non-zero size
    (or 2**top, above 2**(52 - scaled) as count has at most 74 bits) and the largest: every
    value below 2**top (none left out; a value that is not finite is not), and every non-zero
    one at least 2**(52 - scaled), of an exponent whose multiples of 2**(exponent - 52) (every
    double of that exponent) are whole at that shift."""
    if largest is None or largest == 0:
        return True
    return largest < 2.0 ** top and smallest >= math.ldexp(1.0, 52 - scaled)


def _widest(ranges: list) -> tuple:
    """The smallest non-zero and the largest size over a column's groups' (smallest, largest):
    infinity when one is not finite (NaN too, which no comparison orders)."""
    smallest = [s for s, _ in ranges if s is not None]
    largest = [x for _, x in ranges if x is not None]
    if any(not math.isfinite(x) for x in largest):
        return min(smallest, default=None), math.inf
    return min(smallest, default=None), max(largest, default=None)


def shift(smallest: Optional[float], largest: Optional[float], count: int) -> Optional[int]:
    """How far to scale a column's values (by 2**shift) so that each is a whole number and
    up to `count` of them add up within a HUGEINT (below 2**126), from the smallest non-zero and the
    largest of their absolute values; None when no such shift exists (they span too many powers
    of two, or one is not finite: then an exponent per value), 0 when every value is 0 or
    NULL. A double x with 2**e <= |x| < 2**(e + 1) is a multiple of 2**(e - 52) (subnormals too),
    so 2**(52 - e) of the smallest e makes every value whole, and the largest is below
    2**(e_max + 1 + shift)."""
    if largest is None or largest == 0:
        return 0
    if smallest is None or not math.isfinite(largest):
        return None
    low, high = math.frexp(smallest)[1] - 1, math.frexp(largest)[1] - 1
    scaled = 52 - low
    if scaled > 1000 or high + 1 + scaled + max(count, 1).bit_length() > 126:
        return None
    return scaled


def _exact_parts(con, relation: str, columns: dict, groups: tuple = ()) -> dict:
    """exact_means by an exponent per value: each value split into an exponent and an integer
    mantissa (sql/ndcg_means.sql), the mantissas of each exponent added up, the parts added as
    fractions (mean_of_parts)."""
    keys = [f"{g} AS g{i}" for i, g in enumerate(groups)]
    named = [f"({expr})::DOUBLE AS {ident(name)}" for name, expr in columns.items()]
    kept = ", ".join(f"g{i}" for i in range(len(groups)))
    query = (f"SELECT {kept + ', ' if kept else ''}name, e, sum(ndcg_mantissa(value, e)), count(*) "
             f"FROM (SELECT *, ndcg_exponent(value) AS e FROM "
             f"(UNPIVOT (SELECT {', '.join(keys + named)} FROM {relation}) "
             f"ON {', '.join(ident(name) for name in columns)} INTO NAME name VALUE value)) "
             f"GROUP BY ALL")
    parts: dict = {}
    for row in con.sql(query).fetchall():
        *group, name, e, s, n = row
        parts.setdefault((*group, name), []).append((e, s, n))
    return {key: mean_of_parts(found) for key, found in parts.items()}


# --- intervals of means ---------------------------------------------------------------------------

def require(module: str, feature: str):
    """Import `module` (scipy, matplotlib) or stop with what to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"{feature} needs {module}, which is not installed: {INSTALL}") from None


def t_interval(mean: Optional[float], var: Optional[float], n: int, level: float,
               feature: str = "compare") -> Tuple[Optional[float], Optional[float]]:
    """The t interval of a mean from n values with sample variance var: mean +- t_{(1+level)/2,
    n-1} * sqrt(var / n); (None, None) when it cannot be computed (fewer than 2 values)."""
    if n < 2 or var is None or mean is None:
        return None, None
    t = require("scipy", feature).stats.t
    half = float(t.ppf((1 + level) / 2, n - 1)) * math.sqrt(max(var, 0.0) / n)
    return mean - half, mean + half


def bootstrap_interval(values, level: float, n_resamples: int, seed: int,
                       feature: str = "--ci-method bootstrap"
                       ) -> Tuple[Optional[float], Optional[float]]:
    """The percentile bootstrap interval of the mean of `values` (scipy.stats.bootstrap,
    n_resamples resamples of the users, seeded): (None, None) for fewer than 2 values; a single
    point when every value is the same (no resample differs)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None, None
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    stats = require("scipy", feature).stats
    keyword = rng_keyword(stats.bootstrap)
    found = stats.bootstrap((x,), np.mean, n_resamples=n_resamples, vectorized=True,
                            confidence_level=level, method="percentile",
                            batch=max(1, 4_000_000 // x.size),
                            **{keyword: np.random.default_rng(seed)})
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def rng_keyword(function) -> str:
    """How a scipy function takes its random generator: scipy 1.15 renamed random_state to
    rng."""
    return "rng" if "rng" in inspect.signature(function).parameters else "random_state"


def within(low: Optional[float], high: Optional[float], bounds: Optional[tuple]
           ) -> Tuple[Optional[float], Optional[float], bool]:
    """The one rule for an interval of a bounded metric (bounds: (lowest, highest), or None for
    an unbounded one): the interval cut to the bounds. Returns (low, high, clipped)."""
    if bounds is None or low is None or high is None:
        return low, high, False
    cut_low, cut_high = max(low, bounds[0]), min(high, bounds[1])
    return cut_low, cut_high, (cut_low, cut_high) != (low, high)
