-- Input edges: DuckDB list handling that turns each input layout into what the core reads:
-- each user's ranking as one list of item ids (the ranking edges), and the judgments checked,
-- once per (user, item), with their gains (the judgments edge, at the end of this file).

-- ndcg_ks(ks): the cutoffs parameter ks (a BIGINT list, NULL = no cutoff) as given; stops naming
-- `ks` when it lists no cutoff or one below 1.
CREATE OR REPLACE TEMP MACRO ndcg_ks(ks) AS
    CASE WHEN coalesce(len(ks), 0) = 0
         THEN error('ndcg-duck: ks must list at least one cutoff (an integer >= 1, or NULL for '
                    || 'no cutoff), not ' || ndcg_show(ks::VARCHAR))
         WHEN len(list_filter(ks, lambda k: k < 1)) > 0
         THEN error('ndcg-duck: ks: each cutoff must be an integer >= 1 or NULL (no cutoff), not '
                    || list_filter(ks, lambda k: k < 1)[1]::VARCHAR)
         ELSE ks END;

-- ndcg_cutoffs(ks): the cutoffs ks (see ndcg_ks) as a table: k (NULL: no cutoff) and depth (k,
-- or the largest BIGINT for no cutoff), one row per distinct cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT DISTINCT k, coalesce(k, 9223372036854775807) AS depth
    FROM (SELECT unnest(ndcg_ks(ks)) AS k);

-- Every edge returns one row per user with recommendations: user_id, items (a LIST of item ids in
-- rank order, cut to the first `depth`; NULL depth: all) and ranks (NULL, or for tie averaging a
-- LIST giving each item the position of its tie group's first item). The core finds a judged
-- item's rank with list_position(items, item).

-- ndcg_ranked_lists(recs, depth): recs has user_id and items, a LIST of item ids in rank order
-- (a NULL list counts as empty), one row per user. Stops on a NULL user, a NULL item among the
-- first `depth`, and a user with two rows.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL) AS TABLE
    SELECT user_id, items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS items
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL, 'recommendations: a row has no user id (NULL)')
    )
    WHERE ndcg_require(coalesce(list_count(items) = len(items), true),
                       'recommendations: user ' || ndcg_show(user_id)
                       || ' has a NULL item in its list: drop it or fill it in')
      AND (SELECT ndcg_require(count(*) = 0, 'recommendations: user ' || ndcg_show(first(user_id))
                               || ' has ' || first(times) || ' rows: give each user one list, '
                               || 'or use one row per item with a rank')
           FROM ndcg_repeated_users(recs));

-- ndcg_ranked_ranks(recs, depth): recs has user_id, item_id and rank, a number that orders each
-- user's items (smallest first; gaps and any starting value are fine).
-- Stops on a NULL user, item or rank, and on two items at one rank.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
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
      AND (depth IS NULL OR position <= depth)
    GROUP BY user_id;

-- ndcg_ranked_scores(recs, depth, ties): recs has user_id, item_id and score. Items are ranked by
-- score descending, ties broken by item id descending compared as text (trec_eval's rule).
-- ties 'average' also returns ranks: items with equal scores share their group's first position
-- (SQL's rank()), for the core to average their discounts. Stops on a NULL user, item or score
-- and on a NaN score.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, ties := 'trec') AS TABLE
    WITH scored AS (
        SELECT user_id, item_id, score
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND score IS NOT NULL
                           AND NOT isnan(score::DOUBLE),
                  ndcg_row_problem('score', user_id, item_id))
    )
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position
        FROM scored
        WHERE ties <> 'average'
    )
    WHERE depth IS NULL OR position <= depth
    GROUP BY user_id
    UNION ALL
    SELECT user_id, list(item_id ORDER BY position) AS items,
           list(tie_rank ORDER BY position) AS ranks
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position,
               rank() OVER (PARTITION BY user_id ORDER BY score DESC) AS tie_rank
        FROM scored
        WHERE ties = 'average'
    )
    WHERE depth IS NULL OR position <= depth
    GROUP BY user_id;

-- ndcg_first_occurrence(ranked, depth): an edge's result (user_id, items, ranks) whose lists may
-- hold an item more than once. Keeps each item's first occurrence, closes up the positions (and
-- the tie ranks) and cuts each list to its first `depth` items (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_first_occurrence(ranked, depth := NULL) AS TABLE
    SELECT user_id, list_slice(kept, 1, coalesce(depth, len(kept))) AS items,
           list_slice(list_transform(kept_ranks, lambda r: list_position(kept_ranks, r)), 1,
                      coalesce(depth, len(kept))) AS ranks
    FROM (
        SELECT user_id,
               list_filter(items, lambda item, i: list_position(items, item) = i) AS kept,
               list_filter(ranks, lambda r, i: list_position(items, items[i]) = i) AS kept_ranks
        FROM query_table(ranked)
    );

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);

-- The judgments edge: the relevance judgments (user_id, item_id, relevance) as the core reads
-- them: checked row by row, one row per (user, item), each with its gain.

-- ndcg_judgments_as_given(rels): the judgments, checked (ndcg_judgments_checked) and trusted to
-- hold one row per (user, item). The variant for unique_judgments: finding repeats is the
-- costliest check (BENCHMARKS.md, "What the checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_judgments_as_given(rels) AS TABLE
    FROM ndcg_judgments_checked(rels);

-- ndcg_repeat_suspects(rels): the users of rels (user_id, item_id, ...) whose judgments may hold
-- an item twice: a 1024-bit signature of the user's hashed item ids has fewer bits set than the
-- user has judgments (a repeat sets one bit twice; so, now and then, do two items whose hashes
-- collide). Users it leaves out have no repeat. Returns user_id.
CREATE OR REPLACE TEMP MACRO ndcg_repeat_suspects(rels) AS TABLE
    SELECT user_id
    FROM query_table(rels)
    GROUP BY user_id
    HAVING bit_count(bitstring_agg((hash(item_id) % 1024)::INTEGER, 0, 1023)) < count(*);

-- ndcg_judgments_once(rels): the judgments, checked, one row per (user, item): a (user, item)
-- judged twice with one value counts once, with two values stops naming both. The default.
-- Only the judgments of ndcg_repeat_suspects are grouped by (user, item); the others pass as
-- they are (grouping every judgment costs about twice as much: BENCHMARKS.md, "What the
-- checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_judgments_once(rels) AS TABLE
    WITH suspects AS MATERIALIZED (FROM ndcg_repeat_suspects(rels))
    SELECT user_id, item_id, relevance
    FROM ndcg_judgments_checked(rels) ANTI JOIN suspects USING (user_id)
    UNION ALL
    SELECT user_id, item_id, min(relevance) AS relevance
    FROM ndcg_judgments_checked(rels) SEMI JOIN suspects USING (user_id)
    GROUP BY user_id, item_id
    HAVING ndcg_require(min(relevance) = max(relevance),
                        ndcg_judged_twice(user_id, item_id, min(relevance), max(relevance)));

-- ndcg_judgments(rels, gain, gain_map, min_relevance, unique_judgments): the judgments edge.
-- rels holds user_id, item_id, relevance (a number). Returns user_id, item_id, relevance, gain
-- (ndcg_judgment_gain: by `gain`, or gain_map's for its levels; 0 below min_relevance) and
-- relevant (ndcg_relevant: relevance >= min_relevance, or > 0 without one), one row per
-- (user, item). unique_judgments true trusts rels to hold no (user, item) twice (a repeat would
-- then count twice).
CREATE OR REPLACE TEMP MACRO ndcg_judgments(rels, gain := 'linear', gain_map := NULL,
        min_relevance := NULL, unique_judgments := false) AS TABLE
    SELECT user_id, item_id, relevance,
           ndcg_judgment_gain(relevance, gain, gain_map, min_relevance) AS gain,
           ndcg_relevant(relevance, min_relevance) AS relevant
    FROM (FROM ndcg_judgments_as_given(rels) WHERE unique_judgments
          UNION ALL
          FROM ndcg_judgments_once(rels) WHERE NOT unique_judgments)
    WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
      AND ndcg_min_relevance_ok(min_relevance);
