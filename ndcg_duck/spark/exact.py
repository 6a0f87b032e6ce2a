"""Exact sums of doubles, for means that do not depend on how Spark splits the users.

Each partition adds its users' values as integers (a double is an integer times a power of two,
2**-(SCALE + 53) at the smallest); the driver adds those few integers and rounds the total once
(mean_of). The seam for a shared rule of means: mean_of takes the exact partial sums, added.
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
    the sum rounded once to a double, then divided, as the default engine's fsum(x) / count(x).
    The one place the Spark engine turns exact sums into means (eval and compare)."""
    return float(Fraction(total, 1 << (SCALE + 53))) / count if count else None
