-- Two measures of one's own for `ndcg-duck eval --metrics-sql examples/my_metrics.sql`
-- (docs/own-measures.md).

-- prec@k: precision@k again, from the ranks of the relevant items (the built-in `precision`).
CREATE MACRO ndcg_metric_prec(relevant_ranks, k) AS
    len(list_filter(relevant_ranks, lambda p: p <= k)) / k;

-- top_gain@k: the largest gain in the first k positions over the user's largest gain (0 when
-- the user has none).
CREATE MACRO ndcg_metric_top_gain(gains, ideal, depth) AS
    CASE WHEN coalesce(ideal[1], 0) > 0
         THEN coalesce(list_max(gains[1:least(depth, len(gains))]), 0) / ideal[1] ELSE 0 END;
