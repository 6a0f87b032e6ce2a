-- Input edge: DuckDB list handling that turns each input layout into the plain tables the core
-- reads. Everything after this file is plain SQL over (user_id, item_id, rank) rows.

-- ndcg_cutoffs(ks): a list of cutoffs (BIGINT, NULL = no cutoff; ndcg_cutoff makes them) as a
-- table of one column k, one row per distinct cutoff. Stops on a cutoff below 1.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT DISTINCT k FROM (SELECT unnest(ks) AS k)
    WHERE ndcg_require(k IS NULL OR k >= 1,
                       'cutoff k must be an integer >= 1 or ''all'', not ' || k::VARCHAR);

-- ndcg_ranked_lists(recs, depth): recs has user_id and items, a LIST of item ids in rank order
-- (a NULL list counts as empty). Returns user_id, item_id, rank (1-based) for the first `depth`
-- items of each list (NULL: all). Stops on a NULL user or item.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL) AS TABLE
    SELECT user_id, item_id, rank
    FROM (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (
            SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS top
            FROM query_table(recs)
            WHERE ndcg_require(user_id IS NOT NULL, 'recommendations: a row has no user id (NULL)')
        )
    )
    WHERE ndcg_require(item_id IS NOT NULL, 'recommendations: user ' || ndcg_show(user_id)
                       || ' has a NULL item in its list: drop it or fill it in');

-- ndcg_ranked_ranks(recs, depth): recs has user_id, item_id and rank, a number that orders each
-- user's items (smallest first; gaps and any starting value are fine). Returns user_id, item_id,
-- rank as 1-based positions, the first `depth` of each user (NULL: all).
-- Stops on a NULL user, item or rank, and on two items at one rank.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL) AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id, rank AS given,
               row_number() OVER by_rank AS position,
               lag(rank) OVER by_rank AS previous
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND rank IS NOT NULL,
                  ndcg_row_problem('rank', user_id, item_id))
        WINDOW by_rank AS (PARTITION BY user_id ORDER BY rank)
    )
    WHERE ndcg_require(previous IS NULL OR previous <> given,
              'recommendations: user ' || ndcg_show(user_id) || ' has two items at rank '
              || ndcg_show(given) || ': give each item its own rank')
      AND (depth IS NULL OR position <= depth);

-- ndcg_ranked_scores(recs, depth, ties): recs has user_id, item_id and score. Items are ranked by
-- score descending, ties broken by item id descending compared as text (trec_eval's rule).
-- Returns user_id, item_id, rank (1-based), the first `depth` of each user (NULL: all).
-- ties 'trec' (default): rank is the position. 'average': items with equal scores share the rank
-- of their group's first position (SQL's rank()), for ndcg_user_scores to average their
-- discounts. Stops on a NULL user, item or score and on a NaN score.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, ties := 'trec') AS TABLE
    WITH scored AS (
        SELECT user_id, item_id, score
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND score IS NOT NULL
                           AND NOT isnan(score::DOUBLE),
                  ndcg_row_problem('score', user_id, item_id))
    )
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position
        FROM scored
        WHERE ties <> 'average'
    )
    WHERE depth IS NULL OR position <= depth
    UNION ALL
    SELECT user_id, item_id, tie_rank AS rank
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position,
               rank() OVER (PARTITION BY user_id ORDER BY score DESC) AS tie_rank
        FROM scored
        WHERE ties = 'average'
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_first_occurrence(ranked, depth): ranked as user_id, item_id, rank, where an item may
-- appear more than once in a ranking. Keeps each item's first occurrence, closes up the ranks
-- (1, 2, ...) and keeps the first `depth` of each user (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_first_occurrence(ranked, depth := NULL) AS TABLE
    SELECT user_id, item_id, position AS rank
    FROM (
        SELECT user_id, item_id, rank() OVER (PARTITION BY user_id ORDER BY first_rank) AS position
        FROM (SELECT user_id, item_id, min(rank) AS first_rank FROM query_table(ranked)
              GROUP BY user_id, item_id)
    )
    WHERE depth IS NULL OR position <= depth;

-- ndcg_gain_levels(gain_map): a MAP from relevance level to gain (NULL: no map) as a table of
-- relevance, gain (both DOUBLE), one row per listed level.
CREATE OR REPLACE TEMP MACRO ndcg_gain_levels(gain_map) AS TABLE
    SELECT unnest(map_keys(gain_map))::DOUBLE AS relevance,
           unnest(map_values(gain_map))::DOUBLE AS gain;

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);
