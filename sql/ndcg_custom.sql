-- Your own measures (ndcg-duck eval --metrics-sql FILE, evaluate(metrics_sql=...)): FILE holds
-- DuckDB macros, each named ndcg_metric_<name> (<name>: a lowercase letter, then letters, digits
-- or _; not a built-in metric's name), a scalar macro over one user at one cutoff that returns a
-- number (any integer, DECIMAL, FLOAT or DOUBLE; NULL: no value, left out of the mean). Its
-- parameters are any of these, by name, in any order (ndcg_user_metrics' edge):
--   gains          DOUBLE[]  the gain at each position (0: not judged or not relevant), padded
--                            with 0 to the largest cutoff (no cutoff: the whole ranking)
--   relevant_ranks BIGINT[]  the ranks of the relevant ranked items, ascending
--   judged_ranks   BIGINT[]  the ranks of the ranked items with a judgment, ascending
--   num_relevant   BIGINT    R, the user's relevant judgments, ranked or not
--   ideal          DOUBLE[]  the user's positive gains, best first (padded as gains)
--   length         BIGINT    the ranking's length
--   k              BIGINT    the cutoff (NULL: none)
--   depth          BIGINT    k, or the largest BIGINT when there is no cutoff
-- e.g.  CREATE MACRO ndcg_metric_prec(relevant_ranks, k) AS
--           len(list_filter(relevant_ranks, lambda p: p <= k)) / k;
-- and `-m prec@10` computes it for every evaluated user, with the same options, checks and
-- exactly rounded mean as the built-in measures (ndcg_duck/metrics_sql.py reads the file).

-- ndcg_own_checked(value, macro, file, user_id, k): the value a user's own measure (macro,
-- read from file) gave user_id at cutoff k, as a DOUBLE, when it is a finite number or NULL;
-- otherwise (NaN, an infinity) stops naming the macro, the file, the user and the cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_own_checked(value, macro, file, user_id, k) AS
    CASE WHEN ndcg_require(value IS NULL OR isfinite(value::DOUBLE),
                           '--metrics-sql ' || file || ': ' || macro || ' returned '
                           || ndcg_show(value) || ' for user ' || ndcg_show(user_id) || ' at k '
                           || coalesce(k::VARCHAR, 'all') || ', not a number: return a finite '
                           || 'number or NULL')
         THEN value::DOUBLE END;
