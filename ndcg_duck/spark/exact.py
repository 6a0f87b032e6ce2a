"""Exact sums of doubles, for means that do not depend on how Spark splits the users.

Each partition adds its users' values as integers (a double is an integer times a power of two,
2**-(SCALE + 53) at the smallest); the driver adds those few integers, divides by the count and rounds once
(mean_of, through means.mean_of_sum, the rule every door follows).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

SCALE = 1074  # 2**-1074 is the smallest double: every double is an integer times 2**-(SCALE+53)


def exact_sum(values) -> int:
    """The exact sum of finite doubles (a numpy array), times 2**(SCALE + 53), as an integer."""
    import numpy as np

    if len(values) == 0:
        return 0
    mantissa, exponent = np.frexp(values)
    whole = (mantissa * 2.0**53).astype(np.int64)  # exact: value = whole * 2**(exponent - 53)
    # high and low halves of each mantissa: their sums per exponent stay below 2**53, so numpy
    # adds them exactly as doubles for any batch of up to 2**26 values
    high, low = whole >> 26, whole & (2**26 - 1)
    levels, where = np.unique(exponent, return_inverse=True)
    highs = np.bincount(where, weights=high, minlength=len(levels))
    lows = np.bincount(where, weights=low, minlength=len(levels))
    return sum(((int(h) << 26) + int(l)) << (int(e) + SCALE)
               for e, h, l in zip(levels, highs, lows))


def mean_of(total: int, count: int) -> Optional[float]:
    """A mean from an exact sum (exact_sum's scaled integer, added over partitions) and a count:
    the exact sum divided by the count, rounded once (means.mean_of_sum: every door's rule). The
    one place the Spark engine turns exact sums into means (eval, segments, compare)."""
    from ..means import mean_of_sum

    return mean_of_sum(total, -(SCALE + 53), count)


def exact_square_sum(values) -> int:
    """The exact sum of the squares of finite doubles (a numpy array), scaled as exact_sum's.
    Each value splits into two halves of at most 27 bits (Veltkamp), so x*x = hi*hi + 2*hi*lo +
    lo*lo with every product exact (for values above about 1e-150, below which squares are
    subnormal)."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    t = values * 134217729.0  # 2**27 + 1
    hi = t - (t - values)
    lo = values - hi
    return exact_sum(hi * hi) + exact_sum(2.0 * hi * lo) + exact_sum(lo * lo)


def variance_of(total: int, squares: int, count: int) -> Optional[float]:
    """The sample variance from exact sums of the values and of their squares (scaled as
    exact_sum's), rounded once: (n sum x^2 - (sum x)^2) / (n (n - 1)); None for fewer than two."""
    if count < 2:
        return None
    scale = 1 << (SCALE + 53)
    s1, s2 = Fraction(total, scale), Fraction(squares, scale)
    return float((count * s2 - s1 * s1) / (count * (count - 1)))
