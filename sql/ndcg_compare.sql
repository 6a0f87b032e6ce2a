-- Comparing runs and breaking results down by segment: the aggregates the statistics need.
-- Inputs are per-user values: one row per user with a value x (a metric of the run compared) and,
-- for paired statistics, base (the same metric of the baseline run for the same user).
-- Formulas (the statistics themselves are computed from these aggregates, see ndcg_duck/comparison/stats.py):
--   mean  = (1/n) sum x_i                    (here a compensated sum, fsum; the means compare
--                                             reports are exactly rounded: ndcg_means.sql)
--   var   = 1/(n-1) sum (x_i - mean)^2       (the sample variance)
--   d_i   = x_i - base_i                     the paired difference of user i
--   a win is d_i > 1e-12, a loss d_i < -1e-12, a tie anything in between (equal up to rounding)
-- Paired t-test: t = mean(d) / sqrt(var(d) / n) on n - 1 degrees of freedom (Student 1908; for IR
-- Smucker, Allan and Carterette 2007); effect size d_z = mean(d) / sqrt(var(d)) (Cohen 1988).

-- ndcg_tie_margin(): differences within this margin of 0 count as ties.
CREATE OR REPLACE TEMP MACRO ndcg_tie_margin() AS 1e-12;

-- ndcg_spread(x): aggregate over users: {users, mean, var} of the values x (var NULL for one user).
CREATE OR REPLACE TEMP MACRO ndcg_spread(x) AS
    {users: count(x), mean: fsum(x) / count(x), var: var_samp(x)};

-- ndcg_paired(x, base): aggregate over users: what a paired comparison of x against base needs:
-- {users, mean, var (of x), base_mean, base_var, diff_mean, diff_var (of x - base), wins, ties,
-- losses}.
CREATE OR REPLACE TEMP MACRO ndcg_paired(x, base) AS
    {users: count(x - base),
     mean: fsum(x) / count(x), var: var_samp(x),
     base_mean: fsum(base) / count(base), base_var: var_samp(base),
     diff_mean: fsum(x - base) / count(x - base), diff_var: var_samp(x - base),
     wins: count(*) FILTER (WHERE x - base > ndcg_tie_margin()),
     ties: count(*) FILTER (WHERE abs(x - base) <= ndcg_tie_margin()),
     losses: count(*) FILTER (WHERE x - base < -ndcg_tie_margin())};

-- ndcg_sorted_sample(x, points): aggregate: `points` values of x spread evenly over its sorted
-- order (the first and the last included): the curve of sorted per-user values, for a plot.
CREATE OR REPLACE TEMP MACRO ndcg_sorted_sample(x, points) AS
    quantile_disc(x, list_transform(range(points), lambda i: i / greatest(points - 1, 1)));

-- ndcg_bin(x, low, high, bins): which of `bins` equal-width bins over [low, high] holds x: 0 to
-- bins - 1 (high goes to the last bin), for a histogram (GROUP BY this).
CREATE OR REPLACE TEMP MACRO ndcg_bin(x, low, high, bins) AS
    least(floor((x - low) / greatest(high - low, 1e-300) * bins), bins - 1)::BIGINT;

-- ndcg_pairs(per_user, baseline): a run's per-user NDCG against the baseline run's, paired on
-- the user as compare pairs them: the users both have. per_user and baseline are tables by name
-- with user_id and ndcg (as ndcg_per_user returns them). Returns user_id, baseline (the
-- baseline's ndcg), ndcg (the run's) and difference (ndcg - baseline), one row per paired user:
-- the per-user rows of ndcg_paired(ndcg, baseline).
CREATE OR REPLACE TEMP MACRO ndcg_pairs(per_user, baseline) AS TABLE
    SELECT r.user_id, b.ndcg AS baseline, r.ndcg, r.ndcg - b.ndcg AS difference
    FROM query_table(per_user) AS r
    JOIN query_table(baseline) AS b ON b.user_id = r.user_id;
