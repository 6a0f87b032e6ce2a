-- Input edge: DuckDB list handling that turns each input layout into the plain tables the core
-- reads. Everything after this file is plain SQL over (user_id, item_id, rank) rows.

-- ndcg_cutoffs(ks): a list of cutoffs (integers >= 1, 'all' or NULL) as a table of one column k
-- (BIGINT, NULL = no cutoff), one row per distinct cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT DISTINCT ndcg_cutoff(k) AS k FROM (SELECT unnest(ks) AS k);

-- ndcg_ranked_lists(recs, depth): recs has user_id and items, a LIST of item ids in rank order.
-- Returns user_id, item_id, rank (1-based) for the first `depth` items of each list (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL) AS TABLE
    SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
    FROM (
        SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS top
        FROM query_table(recs)
    );

-- ndcg_ranked_ranks(recs, depth): recs has user_id, item_id and rank, a number that orders each
-- user's items (smallest first; gaps and any starting value are fine).
-- Returns user_id, item_id, rank as 1-based positions, the first `depth` of each user (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL) AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY rank) AS position
        FROM query_table(recs)
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_score_positions(recs): recs has user_id, item_id and score. Returns user_id, item_id,
-- score and position: 1-based, by score descending, ties broken by item id descending compared as
-- text (trec_eval's order).
CREATE OR REPLACE TEMP MACRO ndcg_score_positions(recs) AS TABLE
    SELECT user_id, item_id, score,
           row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
               AS position
    FROM query_table(recs);

-- ndcg_ranked_scores(recs, depth, ties): recs has user_id, item_id and score.
-- Returns user_id, item_id, rank for the first `depth` items of each user in trec_eval's order
-- (ndcg_score_positions; depth NULL: all). ties 'trec' (default): rank is the position.
-- 'average': items with equal scores share the rank of their group's first position (SQL's
-- rank()), for ndcg_scores to average their discounts.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, ties := 'trec') AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM ndcg_score_positions(recs)
    WHERE CASE ties WHEN 'trec' THEN true WHEN 'average' THEN false
          ELSE error('ndcg-duck: ties must be trec or average, not ' || ties::VARCHAR) END
      AND (depth IS NULL OR position <= depth)
    UNION ALL
    SELECT user_id, item_id, tie_rank AS rank
    FROM (
        SELECT user_id, item_id, position,
               rank() OVER (PARTITION BY user_id ORDER BY score DESC) AS tie_rank
        FROM ndcg_score_positions(recs)
        WHERE ties = 'average'
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);

-- ndcg_gain_levels(gain_map): a MAP from relevance level to gain (NULL: no map) as a table of
-- relevance, gain (both DOUBLE), one row per listed level.
CREATE OR REPLACE TEMP MACRO ndcg_gain_levels(gain_map) AS TABLE
    SELECT unnest(map_keys(gain_map))::DOUBLE AS relevance,
           unnest(map_values(gain_map))::DOUBLE AS gain;
