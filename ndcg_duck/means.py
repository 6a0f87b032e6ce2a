"""The one rule for every reported mean: the exactly rounded mean of the per-user values.

Their sum is taken exactly and divided by their count, and only that quotient is rounded, once,
to the nearest double. Every door (eval, segments, compare; the Spark engine through
`mean_of_sum`) gives the same bits, whatever the order of the users, the number of threads,
batches or partitions. The SQL half (sql/ndcg_means.sql) splits each value into an exponent and
an integer mantissa and adds the mantissas of each exponent as integers (exact); `exact_means`
runs it and `mean_of_parts` adds the few parts as fractions and rounds.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .sqltext import ident


def mean_of_sum(total: int, exponent: int, count: int) -> Optional[float]:
    """The exactly rounded mean of `count` values whose exact sum is total * 2**exponent (total an
    integer): what a partitioned engine calls with its added-up exact partial sums. None for no
    values."""
    if not count:
        return None
    numerator, denominator = (total << exponent, count) if exponent >= 0 else \
        (total, count << -exponent)
    return numerator / denominator if numerator else 0.0  # int / int rounds correctly, once


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


def exact_means(con, relation: str, columns: dict, groups: tuple = ()) -> dict:
    """The exactly rounded mean of each of `columns` ({name: SQL expression over `relation`})
    over the rows of `relation` (NULLs left out), per value of the SQL expressions `groups`.
    Returns {(group values..., name): mean}; a group whose values of a column are all NULL has
    no entry. `con` must have the ndcg_ macros (sqlfiles.register)."""
    if not columns:
        return {}
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
