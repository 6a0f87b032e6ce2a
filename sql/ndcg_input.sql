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

-- ndcg_ranked_scores(recs, depth): recs has user_id, item_id and score. Items are ranked by score
-- descending, ties broken by item id descending compared as text (trec_eval's rule).
-- Returns user_id, item_id, rank (1-based), the first `depth` of each user (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL) AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position
        FROM query_table(recs)
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);
