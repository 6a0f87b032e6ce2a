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


class Sums:
    """The one accumulator of exact sums on Spark (eval's summary, --segments, compare): per
    (group, key) a count and the exact sums of the values and, when asked, of their squares
    (exact_sum's scaled integers). A group is a segment's name, or None for no segment. Each
    partition fills one (add, count) and sends `batch()`, a few rows of schema(); the driver adds
    the partitions' rows (added) and reads the means, variances and counts, each rounded once.
    """

    def __init__(self):
        self.totals: dict = {}  # (group, key): [count, sum, sum of squares]
        self.lowest: dict = {}  # (group, key): the least of the texts given (least)

    def _at(self, group, key) -> list:
        return self.totals.setdefault((group, key), [0, 0, 0])

    def count(self, group, key: str, n: int) -> None:
        """Add n to the count of (group, key), with no values (users, wins, ...)."""
        self._at(group, key)[0] += int(n)

    def add(self, group, key: str, values, squares: bool = False) -> None:
        """Add the finite doubles `values` (a numpy array) to (group, key)."""
        total = self._at(group, key)
        total[0] += len(values)
        total[1] += exact_sum(values)
        if squares:
            total[2] += exact_square_sum(values)

    def least(self, group, key: str, texts) -> None:
        """Keep for (group, key) the least of the lists of texts `texts` (None: none) and of
        those kept, as Python orders lists of texts (code points, as DuckDB orders VARCHAR):
        an example, such as the smallest user id as text and its item, that any split of the
        users finds."""
        if texts is None:
            return
        texts = [str(text) for text in texts]
        kept = self.lowest.get((group, key))
        if kept is None or texts < kept:
            self.lowest[(group, key)] = texts

    def first(self, group, key: str) -> Optional[list]:
        """The least kept for (group, key) (least), or None."""
        return self.lowest.get((group, key))

    def batch(self):
        """The partition's sums as one Arrow record batch of schema() (sums as decimal text)."""
        import pyarrow as pa

        import json

        keys = list(self.totals) + [k for k in self.lowest if k not in self.totals]
        return pa.RecordBatch.from_pydict(
            {"group": [group for group, _ in keys], "key": [key for _, key in keys],
             "n": [self.totals.get(k, [0])[0] for k in keys],
             "s1": [str(self.totals.get(k, [0, 0])[1]) for k in keys],
             "s2": [str(self.totals.get(k, [0, 0, 0])[2]) for k in keys],
             "least": [json.dumps(self.lowest[k]) if k in self.lowest else None for k in keys]},
            schema=schema())

    @classmethod
    def added(cls, rows, everyone: bool = False) -> "Sums":
        """The partitions' rows (collected Spark rows of schema()) added up; with everyone, each
        group's sums are also added to group None (every user, the '(all)' row)."""
        import json

        found = cls()
        for row in rows:
            groups = [row["group"]] + ([None] if everyone and row["group"] is not None else [])
            for group in groups:
                total = found._at(group, row["key"])
                total[0] += row["n"]
                total[1] += int(row["s1"])
                total[2] += int(row["s2"])
                if row["least"] is not None:
                    found.least(group, row["key"], json.loads(row["least"]))
        return found

    def groups(self) -> set:
        """The groups other than None."""
        return {group for group, _ in self.totals if group is not None}

    def has(self, group, key: str) -> bool:
        return (group, key) in self.totals

    def n(self, group, key: str) -> int:
        return self.totals.get((group, key), [0])[0]

    def mean(self, group, key: str) -> Optional[float]:
        """The exactly rounded mean (mean_of); None without values."""
        n, total, _ = self.totals.get((group, key), (0, 0, 0))
        return mean_of(total, n)

    def variance(self, group, key: str) -> Optional[float]:
        """The sample variance (variance_of, with squares added); None for fewer than two."""
        n, total, squares = self.totals.get((group, key), (0, 0, 0))
        return variance_of(total, squares, n)

    def whole(self, group, key: str) -> Optional[int]:
        """The sum of values that are whole numbers (a count metric's, summed over users as
        trec_eval does), as an integer; None without values."""
        n, total, _ = self.totals.get((group, key), (0, 0, 0))
        return total >> (SCALE + 53) if n else None


def schema():
    """Sums' rows: group (a segment or null), key, the count, the sums as decimal text and the
    least texts kept (Sums.least) as a JSON list, or null."""
    import pyarrow as pa

    return pa.schema([("group", pa.string()), ("key", pa.string()), ("n", pa.int64()),
                      ("s1", pa.string()), ("s2", pa.string()), ("least", pa.string())])
