"""Statistics for comparing runs: intervals, paired tests and corrections for multiple tests.

Means, variances and counts come from SQL (sql/ndcg_compare.sql); this module turns them into
intervals and p-values with scipy (the `compare` extra), and corrects p-values over a family.

- t interval of a mean: mean +- t_{(1+level)/2, n-1} * sqrt(var / n).
- Paired t-test on the differences d: t = mean(d) / sqrt(var(d) / n), two-sided, n - 1 degrees
  of freedom.
- Randomization test (paired sign flip; Fisher 1935, for IR Smucker et al. 2007): under the null
  hypothesis each user's difference is as likely to have either sign. The statistic is |sum d|;
  p = (count + 1) / (B + 1) where count is how many of B random sign flips give a statistic at
  least as large (Phipson and Smyth 2010): never 0. When 2^m <= B (m users with a non-zero
  difference) every sign assignment is enumerated instead and p = count / 2^m, exactly.
- Bootstrap (percentile interval of the mean difference, Efron and Tibshirani 1993, 13.3); its
  test shifts the bootstrap distribution to the null (ibid. 16.4): p = (count + 1) / (B + 1) with
  count the resamples whose mean is at least |mean(d)| away from mean(d). Beyond
  BOOTSTRAP_DRAWS users x resamples, the normal distribution the bootstrap distribution of a
  mean tends to stands for the resamples (bootstrap_normal), and the output says so.
- Holm (1979) step-down and Bonferroni corrections of p-values over a family of tests.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

from ..means import INSTALL, require, rng_keyword, t_interval  # noqa: F401 (means.py's)
from ..options import CORRECTIONS, TESTS  # noqa: F401 (the registry's, for compare's callers)

# Work per batch of resamples, in values drawn: bounds memory whatever the number of users.
BATCH_VALUES = 4_000_000
BLOCK_GROUPS = 256  # groups of 8 users whose table (512 KB) is used at a time
# Users x resamples beyond which the bootstrap takes its normal-theory form (bootstrap_normal):
# resampling draws one random user per user and resample, about 30 ns each here, so 2e8 draws
# (20,000 users at 10,000 resamples) take seconds, and 1e10 (1M users) minutes. At 20,000 users
# the bootstrap distribution of a mean is normal to within its Monte Carlo noise
# (tests/doors/test_compare.py, test_bootstrap_normal_form_agrees_with_resampling).
BOOTSTRAP_DRAWS = 200_000_000


def _scipy_stats():
    return require("scipy", "compare").stats


def t_test(diff_mean: float, diff_var: Optional[float], n: int) -> Optional[float]:
    """The two-sided p-value of the paired t-test from the mean and sample variance of the n
    differences; None when there is nothing to test (fewer than 2 users, or every difference
    the same)."""
    if n < 2 or diff_var is None or diff_var <= 0:
        return None
    t = diff_mean / math.sqrt(diff_var / n)
    return float(2 * _scipy_stats().t.sf(abs(t), n - 1))


def count_extreme(null, observed: float, scale: float) -> int:
    """How many values of `null` are at least `observed` (both absolute), allowing for rounding."""
    import numpy as np

    return int(np.count_nonzero(np.abs(null) >= observed - 1e-9 * scale))


def randomization(diffs, n_resamples: int, seed: int) -> float:
    """The two-sided p-value of the paired sign-flip test on the per-user differences."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]  # a difference of 0 is the same under either sign
    m = d.size
    if m == 0:
        return 1.0
    observed, scale = abs(float(d.sum())), float(np.abs(d).sum())
    if is_exact(m, n_resamples):
        return exact_randomization(d)
    return (count_extreme(sign_flips(d, n_resamples, seed), observed, scale) + 1) / (n_resamples + 1)


def is_exact(m: int, n_resamples: int) -> bool:
    """Whether the randomization test on m nonzero differences enumerates every sign assignment
    (2^m <= n_resamples) instead of drawing n_resamples of them: both engines ask this."""
    return m < 63 and 2 ** m <= n_resamples


def exact_randomization(diffs) -> float:
    """The exact two-sided p-value of the sign-flip test on the nonzero differences `diffs`: the
    share of the 2^m sign assignments whose |sum| is at least the observed |sum d|. scipy's
    permutation_test enumerates them (it does when there are no more than n_resamples); it
    needs two values or more, and for one value d both assignments give |d|: p = 1."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        return 1.0
    observed, scale = abs(float(d.sum())), float(np.abs(d).sum())
    result = _scipy_stats().permutation_test((d,), _sum, permutation_type="samples",
                                             vectorized=True, n_resamples=2 ** d.size)
    null = result.null_distribution
    assert null.size == 2 ** d.size  # every assignment, each once
    return count_extreme(null, observed, scale) / null.size


def sign_flips(d, n_resamples: int, seed: int):
    """sum(s_i * d_i) for n_resamples random sign vectors s (each sign +1 or -1 with chance 1/2).

    Each user's sign is one bit of a random byte: a byte picks one of the 256 signed sums of a
    group of 8 users, tabled once, so a resample costs m/8 look-ups. The groups are taken a block
    at a time (a block's table fits in the CPU cache) for all resamples at once. (scipy's
    permutation_test draws the same distribution, but at 100,000 users it takes minutes.)
    The random stream depends only on the seed and the number of users, never on threads.
    """
    import numpy as np

    groups = -(-d.size // 8)
    padded = np.zeros(groups * 8)
    padded[:d.size] = d
    signs = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0  # byte -> 8 signs
    table = padded.reshape(groups, 8) @ signs.T  # group, byte -> signed sum of the group
    rng = np.random.default_rng(seed)
    totals = np.zeros(n_resamples)
    for first in range(0, groups, BLOCK_GROUPS):
        block = table[first:first + BLOCK_GROUPS]
        codes = rng.integers(0, 256, size=(n_resamples, block.shape[0]), dtype=np.uint8)
        totals += np.take(block.ravel(), codes + np.arange(block.shape[0]) * 256).sum(axis=1)
    return totals


def _sum(x, axis=-1):
    import numpy as np

    return np.sum(x, axis=axis)


def bootstrap_is_normal(users: int, n_resamples: int) -> bool:
    """Whether `bootstrap` takes its normal-theory shortcut: more than BOOTSTRAP_DRAWS draws."""
    return users * n_resamples > BOOTSTRAP_DRAWS


def bootstrap(diffs, n_resamples: int, seed: int, level: float) -> Tuple[float, float, float]:
    """The bootstrap test of mean(diffs) = 0 and the percentile interval of the mean: (p, low,
    high), from one set of n_resamples resamples, or, beyond BOOTSTRAP_DRAWS draws, from the
    normal distribution the bootstrap distribution of a mean tends to (bootstrap_normal)."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    if bootstrap_is_normal(d.size, n_resamples):
        return bootstrap_normal(d, n_resamples, level)
    stats = _scipy_stats()
    result = stats.bootstrap((d,), np.mean, n_resamples=n_resamples, vectorized=True,
                             confidence_level=level, method="percentile",
                             batch=max(1, BATCH_VALUES // max(d.size, 1)),
                             **{rng_keyword(stats.bootstrap): np.random.default_rng(seed)})
    mean = float(d.mean())
    count = count_extreme(result.bootstrap_distribution - mean, abs(mean), float(np.abs(d).mean()))
    return ((count + 1) / (n_resamples + 1), float(result.confidence_interval.low),
            float(result.confidence_interval.high))


def bootstrap_normal(d, n_resamples: int, level: float) -> Tuple[float, float, float]:
    """The bootstrap of the mean of d in its large-sample form. Resampling n users with
    replacement gives means with mean mean(d) and variance s^2 / n, s^2 = sum (d - mean(d))^2 / n
    (the plug-in variance), and by the central limit theorem their distribution is normal up to
    a skewness of order 1 / sqrt(n) (Efron and Tibshirani 1993, 5.2 and 13.3). So the percentile
    interval is mean(d) +- z_{(1+level)/2} s / sqrt(n), and the share of resamples at least
    |mean(d)| from mean(d) is q = 2 P(Z >= |mean(d)| sqrt(n) / s); p = (n_resamples q + 1) /
    (n_resamples + 1), what the resampling test gives on average (never below 1 / (B + 1)).
    No random numbers: the same on any machine and any number of threads."""
    import numpy as np

    mean = float(d.mean())
    return bootstrap_normal_of(d.size, mean, float(np.mean((d - mean) ** 2)), n_resamples, level)


def bootstrap_normal_of(n: int, mean: float, plug_in_var: float, n_resamples: int,
                        level: float) -> Tuple[float, float, float]:
    """bootstrap_normal from the n differences' mean and plug-in variance (sum (d - mean)^2 / n)
    alone: what the Spark engine computes from exact sums."""
    normal = _scipy_stats().norm
    spread = math.sqrt(max(plug_in_var, 0.0) / n)
    if spread == 0:
        return 1.0, mean, mean
    half = float(normal.ppf((1 + level) / 2)) * spread
    q = float(2 * normal.sf(abs(mean) / spread))
    return (n_resamples * q + 1) / (n_resamples + 1), mean - half, mean + half


# Poisson(1)'s cumulative distribution, P(X <= k) for k = 0..19: a uniform number u gives the
# weight k with cdf[k-1] <= u < cdf[k] (P(X >= 20) is below 1e-18)
POISSON_CDF = None
POISSON_BLOCK = 64  # users whose weights are drawn at once, for every resample


def _poisson_cdf():
    global POISSON_CDF
    if POISSON_CDF is None:
        import numpy as np

        terms = [math.exp(-1) / math.factorial(k) for k in range(20)]
        POISSON_CDF = np.cumsum(terms)
    return POISSON_CDF


def _splitmix(x):
    """splitmix64's output function on uint64 numpy values (wrapping arithmetic)."""
    import numpy as np

    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def poisson_weights(seed: int, users, resamples):
    """Each user's weight in each resample of the Poisson bootstrap (Hanley and MacGibbon 2006;
    Chamandy et al. 2012): a Poisson(1) draw from the splitmix64 stream of the user, seeded by
    (seed, the user's 64-bit hash): the weight of user u in resample b is the stream's b-th
    number, whoever else is drawn and wherever u is. `users` holds the hashes (uint64), the
    result is a (users, resamples) array."""
    import numpy as np

    with np.errstate(over="ignore"):
        golden = np.uint64(0x9E3779B97F4A7C15)
        start = _splitmix(_splitmix(np.uint64(seed) + golden) ^ np.asarray(users, np.uint64))
        b = np.asarray(resamples, np.uint64) + np.uint64(1)
        bits = _splitmix(start[:, None] + b[None, :] * golden)
    uniform = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return np.searchsorted(_poisson_cdf(), uniform, side="right").astype(np.float64)


def poisson_sums(d, users, n_resamples: int, seed: int):
    """(sum of weight x d, sum of weight) per resample of the Poisson bootstrap of d (the users'
    hashes in `users`, in a fixed order: the float sums are then the same wherever they run)."""
    import numpy as np

    totals, weights = np.zeros(n_resamples), np.zeros(n_resamples)
    resamples = np.arange(n_resamples)
    for first in range(0, d.size, POISSON_BLOCK):
        w = poisson_weights(seed, users[first:first + POISSON_BLOCK], resamples)
        totals += (w * d[first:first + POISSON_BLOCK, None]).sum(axis=0)
        weights += w.sum(axis=0)
    return totals, weights


def bootstrap_of_sums(mean: float, scale: float, totals, weights, level: float
                      ) -> Tuple[float, float, float]:
    """The bootstrap test and percentile interval (as `bootstrap`'s) from the resamples' sums of
    weight x d and of weights (poisson_sums, added up): each resample's mean is their ratio; a
    resample that draws no user (weight 0) is left out. mean: mean(d); scale: mean(|d|)."""
    import numpy as np

    drawn = weights > 0
    means = totals[drawn] / weights[drawn]
    count = count_extreme(means - mean, abs(mean), scale)
    low, high = np.percentile(means, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return (count + 1) / (means.size + 1), float(low), float(high)


def adjust(pvalues: Sequence[float], method: str) -> List[float]:
    """p-values corrected for the family they form: 'holm' (step-down), 'bonferroni' or 'none'."""
    m = len(pvalues)
    if method == "none":
        return list(pvalues)
    if method == "bonferroni":
        return [min(1.0, m * p) for p in pvalues]
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted
