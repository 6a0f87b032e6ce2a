-- Input edge: DuckDB list handling that turns each input layout into the plain tables the core
-- reads. Everything after this file is plain SQL over (user_id, item_id, rank) rows.

-- ndcg_cutoffs(ks): a list of cutoffs (integers >= 1, 'all' or NULL) as a table of one column k
-- (BIGINT, NULL = no cutoff), one row per distinct cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT DISTINCT ndcg_cutoff(k) AS k FROM (SELECT unnest(ks) AS k);

-- ndcg_ranked_lists(recs, depth, duplicates): recs has user_id and items, a LIST of item ids in
-- rank order (a NULL list counts as empty). Returns user_id, item_id, rank (1-based) for the first
-- `depth` items of each list (NULL: all). Stops on a NULL user or item, and, with duplicates
-- 'error', on an item listed twice within depth; with 'first' repeats pass through (see
-- ndcg_first_occurrence).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL, duplicates := 'error') AS TABLE
    SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
    FROM (
        SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS top
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL, 'recommendations: a row has no user id (NULL)')
    )
    WHERE top IS NULL
       OR ndcg_require((duplicates = 'first' AND NOT list_contains(list_transform(top, lambda x: x IS NULL), true))
                       OR len(list_distinct(top)) = len(top),
                       ndcg_list_problem(user_id, top));

-- ndcg_ranked_ranks(recs, depth, duplicates): recs has user_id, item_id and rank, a number that
-- orders each user's items (smallest first; gaps and any starting value are fine). Returns
-- user_id, item_id, rank as 1-based positions, the first `depth` of each user (NULL: all).
-- Stops on a NULL user, item or rank, two items at one rank, and (duplicates 'error') an item
-- ranked twice.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL, duplicates := 'error') AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id, rank AS given,
               row_number() OVER by_rank AS position,
               lag(rank) OVER by_rank AS previous,
               count(*) OVER (PARTITION BY user_id, item_id) AS copies
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND rank IS NOT NULL,
                  ndcg_row_problem('rank', user_id, item_id))
        WINDOW by_rank AS (PARTITION BY user_id ORDER BY rank)
    )
    WHERE ndcg_require(previous IS NULL OR previous <> given,
              'recommendations: user ' || ndcg_show(user_id) || ' has two items at rank '
              || ndcg_show(given) || ': give each item its own rank')
      AND ndcg_require(copies = 1 OR duplicates = 'first', ndcg_twice(user_id, item_id))
      AND (depth IS NULL OR position <= depth);

-- ndcg_ranked_scores(recs, depth, duplicates): recs has user_id, item_id and score. Items are
-- ranked by score descending, ties broken by item id descending compared as text (trec_eval's
-- rule). Returns user_id, item_id, rank (1-based), the first `depth` of each user (NULL: all).
-- Stops on a NULL user, item or score, a NaN score, and (duplicates 'error') an item scored twice.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, duplicates := 'error') AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position,
               count(*) OVER (PARTITION BY user_id, item_id) AS copies
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND score IS NOT NULL
                           AND NOT isnan(score::DOUBLE),
                  ndcg_row_problem('score', user_id, item_id))
    )
    WHERE ndcg_require(copies = 1 OR duplicates = 'first', ndcg_twice(user_id, item_id))
      AND (depth IS NULL OR position <= depth);

-- ndcg_first_occurrence(ranked, depth): ranked as user_id, item_id, rank, where an item may
-- appear more than once in a ranking. Keeps each item's first occurrence, closes up the ranks
-- (1, 2, ...) and keeps the first `depth` of each user (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_first_occurrence(ranked, depth := NULL) AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id, row_number() OVER (PARTITION BY user_id ORDER BY first_rank) AS position
        FROM (SELECT user_id, item_id, min(rank) AS first_rank FROM query_table(ranked)
              GROUP BY user_id, item_id)
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);
