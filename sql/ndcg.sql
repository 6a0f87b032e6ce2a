-- ndcg-duck: NDCG and its parts as DuckDB macros, in one self-contained script.
-- In the duckdb shell, from any directory:   .read path/to/ndcg.sql
-- GENERATED from the files sql/ndcg_*.sql (one per concern, each named below): edit those,
-- then run `ndcg-duck sql > sql/ndcg.sql` from the repository root.

-- ndcg_checks.sql
-- Input checks. The core assumes clean input: no NULLs, one ranking per user, no item twice in a
-- ranking. These macros read their input once and stop the query with an error that
-- names the user, the item and the value, instead of returning a wrong number.

-- ndcg_require(ok, message): true when ok is true; otherwise stops the query with message.
CREATE OR REPLACE TEMP MACRO ndcg_require(ok, message) AS
    CASE WHEN ok THEN true ELSE error('ndcg-duck: ' || message) END;

-- ndcg_show(value): a value as text for a message; NULL shows as NULL.
CREATE OR REPLACE TEMP MACRO ndcg_show(value) AS coalesce(value::VARCHAR, 'NULL');

-- ndcg_judged_checked(rels): rels as user_id, item_id, relevance (numbers), row by row. Stops on a
-- NULL user, item or relevance and on a NaN or infinite relevance. (Repeated judgments are
-- handled by ndcg_judged_gains.)
CREATE OR REPLACE TEMP MACRO ndcg_judged_checked(rels) AS TABLE
    SELECT user_id, item_id, relevance
    FROM query_table(rels)
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND relevance IS NOT NULL,
              'relevance: a row has no ' || CASE WHEN user_id IS NULL THEN 'user id'
                  WHEN item_id IS NULL THEN 'item id (user ' || ndcg_show(user_id) || ')'
                  ELSE 'relevance (user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
                      || ')' END || ' (NULL): fill it in or drop the row')
      AND ndcg_require(isfinite(relevance::DOUBLE),
              'relevance: user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
              || ' has relevance ' || ndcg_show(relevance) || ': give a finite number');

-- ndcg_repeated_users(recs): recs nested (user_id, items). Returns the users with more than one
-- row (at most one), with how many rows they have: each user's ranking must be one list.
CREATE OR REPLACE TEMP MACRO ndcg_repeated_users(recs) AS TABLE
    SELECT user_id, count(*) AS times FROM query_table(recs)
    GROUP BY user_id HAVING count(*) > 1 LIMIT 1;

-- ndcg_row_problem(order_column, user_id, item_id): which key of a long recommendation row is
-- NULL (or NaN), as a message.
CREATE OR REPLACE TEMP MACRO ndcg_row_problem(order_column, user_id, item_id) AS
    'recommendations: a row has no ' || CASE WHEN user_id IS NULL THEN 'user id (NULL)'
        WHEN item_id IS NULL THEN 'item id (user ' || ndcg_show(user_id) || ') (NULL)'
        ELSE order_column || ' (user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
             || ') (NULL or NaN)' END || ': fill it in or drop the row';

-- ndcg_twice(user_id, item_id): the message for an item in one ranking twice.
CREATE OR REPLACE TEMP MACRO ndcg_twice(user_id, item_id) AS
    'recommendations: user ' || ndcg_show(user_id) || ' ranks item ' || ndcg_show(item_id)
    || ' twice: remove the repeat, or keep the first occurrence with --duplicates first';

-- ndcg_params.sql
-- Option values: turn what a user writes into what the core computes with.

-- ndcg_cutoff(k): a cutoff written as an integer >= 1, or 'all' / NULL for no cutoff.
-- Returns a BIGINT, NULL meaning "no cutoff", or 0 for anything that is not a cutoff (which
-- ndcg_cutoffs rejects). Free of side effects, so DuckDB folds it for a constant k.
CREATE OR REPLACE TEMP MACRO ndcg_cutoff(k) AS
    CASE WHEN k IS NULL OR lower(k::VARCHAR) = 'all' THEN NULL
         ELSE coalesce(TRY_CAST(k::VARCHAR AS BIGINT), 0) END;

-- ndcg_option(name, value, allowed): true when value is one of the list allowed; otherwise stops
-- the query naming the option. Checked once per query, not per row.
CREATE OR REPLACE TEMP MACRO ndcg_option(name, value, allowed) AS
    ndcg_require(list_contains(allowed, value), name || ' must be one of '
                 || array_to_string(allowed, ', ') || ', not ' || ndcg_show(value));

-- ndcg_gain(relevance, gain): the gain of one judged relevance value.
-- gain is 'linear' (rel), 'exponential' (2^rel - 1) or 'binary' (1 if rel > 0).
-- Relevance <= 0 or NULL gains 0; fractional relevance is used exactly. Returns a DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_gain(relevance, gain) AS
    CASE
        WHEN relevance IS NULL OR relevance <= 0 THEN 0.0
        WHEN gain = 'exponential' THEN pow(2.0, relevance::DOUBLE) - 1.0
        WHEN gain = 'binary' THEN 1.0
        ELSE relevance::DOUBLE
    END;

-- ndcg_discount(rank): the position discount 1 / log2(rank + 1) for a 1-based rank.
CREATE OR REPLACE TEMP MACRO ndcg_discount(rank) AS 1.0 / log2(rank + 1);

-- ndcg_depth(ks, max_depth, judged_only, ties): how many items of each ranking to read: the
-- largest cutoff in ks (a BIGINT list, NULL = no cutoff), no more than max_depth. NULL means the
-- whole ranking (a cutoff of 'all' and no max_depth). With judged_only or ties 'average' the
-- items below the largest cutoff can count too (they move up, or share a tie that reaches above
-- the cutoff): then only max_depth cuts.
CREATE OR REPLACE TEMP MACRO ndcg_depth(ks, max_depth, judged_only := false, ties := 'trec') AS
    CASE WHEN judged_only OR ties = 'average' OR list_count(ks) < len(ks) THEN max_depth::BIGINT
         ELSE least(list_max(ks), coalesce(max_depth::BIGINT, 9223372036854775807)) END;

-- ndcg_top_n(ks): the largest cutoff in ks (a BIGINT list, NULL = no cutoff) when every cutoff is
-- a number no larger than 100 (small enough for DuckDB's top-N aggregate, which keeps room for n
-- values per group), else NULL.
CREATE OR REPLACE TEMP MACRO ndcg_top_n(ks) AS
    CASE WHEN list_count(ks) = len(ks) AND list_max(ks) <= 100 THEN list_max(ks) END;

-- ndcg_input.sql
-- Input edge: DuckDB list handling that turns each input layout into what the core reads: each
-- user's ranking as one list of item ids.

-- ndcg_cutoffs(ks): a list of cutoffs (BIGINT, NULL = no cutoff; ndcg_cutoff makes them) as a
-- table of one column k, one row per distinct cutoff. Stops on a cutoff below 1.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT DISTINCT k FROM (SELECT unnest(ks) AS k)
    WHERE ndcg_require(k IS NULL OR k >= 1,
                       'cutoff k must be an integer >= 1 or ''all'', not ' || k::VARCHAR);

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

-- ndcg_gain_levels(gain_map): a MAP from relevance level to gain (NULL: no map) as a table of
-- relevance, gain (both DOUBLE), one row per listed level.
CREATE OR REPLACE TEMP MACRO ndcg_gain_levels(gain_map) AS TABLE
    SELECT unnest(map_keys(gain_map))::DOUBLE AS relevance,
           unnest(map_values(gain_map))::DOUBLE AS gain;

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);

-- ndcg_core.sql
-- The metric, over two relations passed by name:
--   ranked: user_id, items, ranks: one row per user with recommendations (an edge of
--           ndcg_input.sql makes it): items is the ranking as a LIST of item ids, best first, cut
--           to what can count; ranks is NULL, or with ties 'average' each item's tie rank (the
--           position of its tie group's first item).
--   judged: user_id, item_id, relevance   (the ground truth)
--   ks: the cutoffs, a BIGINT list, NULL meaning no cutoff (ndcg_cutoff turns 'all' into NULL).
-- Each judgment is joined to its user's ranking on user_id alone and finds its item's position
-- there with list_position(), so no (user, item) join is needed; each user's ideal gains come
-- from a top-N aggregate (best first) and their prefix sums give the ideal DCG at each cutoff.
-- Each optional step sits in its own UNION ALL branch or CASE behind a constant condition, so
-- that with the default options DuckDB's optimizer drops it from the plan.

-- ndcg_judged_gains(judged, gain, gain_map, unique_judgments): the judgments, one row per
-- (user, item), with the gain of each: user_id, item_id, relevance, item_gain. A (user, item)
-- judged more than once with one value counts once; with different values it stops, naming
-- them. unique_judgments true says that no (user, item) is judged twice, and skips that grouping
-- (the costliest step at scale; a repeat would then count twice). gain_map, a MAP from relevance
-- level to gain (NULL: none), gives the listed levels their gain; other levels gain by `gain`.
CREATE OR REPLACE TEMP MACRO ndcg_judged_gains(judged, gain := 'linear', gain_map := NULL,
        unique_judgments := false) AS TABLE
    WITH once AS (
        SELECT user_id, item_id, relevance
        FROM query_table(judged)
        WHERE unique_judgments
        UNION ALL
        SELECT user_id, item_id, relevance
        FROM (SELECT user_id, item_id, min(relevance) AS relevance, max(relevance) AS highest
              FROM query_table(judged)
              GROUP BY user_id, item_id)
        WHERE NOT unique_judgments
          AND ndcg_require(relevance = highest, 'relevance: user ' || ndcg_show(user_id)
                  || ' has item ' || ndcg_show(item_id) || ' judged twice, as '
                  || ndcg_show(relevance) || ' and ' || ndcg_show(highest)
                  || ': keep one judgment per (user, item)')
    )
    SELECT user_id, item_id, relevance, ndcg_gain(relevance, gain) AS item_gain
    FROM once
    WHERE gain_map IS NULL
    UNION ALL
    SELECT j.user_id, j.item_id, j.relevance, coalesce(m.gain, ndcg_gain(j.relevance, gain))
    FROM once AS j LEFT JOIN ndcg_gain_levels(gain_map) AS m ON m.relevance = j.relevance
    WHERE gain_map IS NOT NULL;

-- ndcg_looked_up(ranked, judged, gain, gain_map, ties, unique_judgments): every user of either
-- side: one row per judgment (or one row for a user without any), with where its item stands in
-- the user's ranking. Returns user_id, item_id, relevance, item_gain, seen_at (the item's 1-based
-- position; NULL: not ranked), tie and tie_size (with ties 'average': the tie rank at `seen_at`
-- and how many items share it; else NULL), length (the ranking's length), in_judged and
-- in_ranked (which sides have the user). Stops on a judged item that is ranked twice.
CREATE OR REPLACE TEMP MACRO ndcg_looked_up(ranked, judged, gain := 'linear', gain_map := NULL,
        ties := 'trec', unique_judgments := false) AS TABLE
    SELECT user_id, item_id, relevance, item_gain, seen_at,
           CASE WHEN ties = 'average' THEN ranks[seen_at] END AS tie,
           CASE WHEN ties = 'average' AND seen_at IS NOT NULL
                THEN list_count(list_filter(ranks, lambda r: r = ranks[seen_at])) END AS tie_size,
           length, in_judged, in_ranked
    FROM (
        SELECT coalesce(j.user_id, r.user_id) AS user_id, j.item_id, j.relevance, j.item_gain,
               -- the item's first position; a second one stops the query (it would not count).
               -- DuckDB computes the repeated list_position once per row.
               CASE WHEN list_position(r.items, j.item_id) IS NOT NULL
                         AND ndcg_require(NOT coalesce(list_contains(r.items[
                                 list_position(r.items, j.item_id) + 1:], j.item_id), false),
                             ndcg_twice(j.user_id, j.item_id))
                    THEN list_position(r.items, j.item_id) END AS seen_at,
               len(r.items) AS length, r.ranks,
               j.user_id IS NOT NULL AS in_judged, r.user_id IS NOT NULL AS in_ranked
        FROM ndcg_judged_gains(judged, gain, gain_map, unique_judgments) AS j
        FULL OUTER JOIN query_table(ranked) AS r ON r.user_id = j.user_id
    );

-- ndcg_placed(ranked, judged, gain, gain_map, judged_only, ties, unique_judgments):
-- ndcg_looked_up's rows with each ranked item's place: pos (its rank, or its tie group's first
-- position) and size (1, or the size of its tie group). judged_only takes unjudged items (no
-- judgment, or a negative relevance) out of each ranking first: the items below move up, and
-- length counts the items left.
CREATE OR REPLACE TEMP MACRO ndcg_placed(ranked, judged, gain := 'linear', gain_map := NULL,
        judged_only := false, ties := 'trec', unique_judgments := false) AS TABLE
    SELECT user_id, item_id, item_gain, in_judged, in_ranked, length,
           coalesce(tie, seen_at) AS pos, coalesce(tie_size, 1) AS size
    FROM ndcg_looked_up(ranked, judged, gain, gain_map, ties, unique_judgments)
    WHERE NOT judged_only
    UNION ALL
    SELECT user_id, item_id, item_gain, in_judged, in_ranked,
           count(*) FILTER (WHERE counts) OVER (PARTITION BY user_id) AS length,
           CASE WHEN counts THEN rank() OVER (PARTITION BY user_id, counts ORDER BY place) END,
           CASE WHEN counts THEN count(*) OVER (PARTITION BY user_id, counts, place) END
    FROM (SELECT *, seen_at IS NOT NULL AND relevance >= 0 AS counts,
                 coalesce(tie, seen_at) AS place
          FROM ndcg_looked_up(ranked, judged, gain, gain_map, ties, unique_judgments)
          WHERE judged_only);

-- ndcg_user_parts(ranked, judged, ks, gain, gain_map, judged_only, ties, unique_judgments): one row
-- per user of either side: in_judged, in_ranked, length, hits (a LIST of {pos, size, gain}: the
-- ranked items that gain something) and best (the user's positive gains, best first; with every
-- cutoff a number no larger than 100 only the first max(ks), by DuckDB's top-N aggregate).
CREATE OR REPLACE TEMP MACRO ndcg_user_parts(ranked, judged, ks := [10], gain := 'linear',
        gain_map := NULL, judged_only := false, ties := 'trec', unique_judgments := false) AS TABLE
    SELECT user_id, bool_or(in_judged) AS in_judged, bool_or(in_ranked) AS in_ranked,
           coalesce(max(length), 0) AS length,
           list({'pos': pos, 'size': size, 'gain': item_gain})
               FILTER (WHERE pos IS NOT NULL AND item_gain <> 0) AS hits,
           max(item_gain, coalesce(ndcg_top_n(ks), 1)) FILTER (WHERE item_gain > 0) AS best
    FROM ndcg_placed(ranked, judged, gain, gain_map, judged_only, ties, unique_judgments)
    WHERE ndcg_top_n(ks) IS NOT NULL
    GROUP BY user_id
    UNION ALL
    SELECT user_id, bool_or(in_judged), bool_or(in_ranked), coalesce(max(length), 0),
           list({'pos': pos, 'size': size, 'gain': item_gain})
               FILTER (WHERE pos IS NOT NULL AND item_gain <> 0),
           list(item_gain ORDER BY item_gain DESC) FILTER (WHERE item_gain > 0)
    FROM ndcg_placed(ranked, judged, gain, gain_map, judged_only, ties, unique_judgments)
    WHERE ndcg_top_n(ks) IS NULL
    GROUP BY user_id;

-- ndcg_user_scores(ranked, judged, ks, gain, idcg_cutoff, gain_map, judged_only, ties,
-- unique_judgments): every user of either side, with their scores at each cutoff. Returns user_id,
-- k (NULL for 'all'), dcg, idcg, ndcg, judged (the user has judgments) and ranked (the user has
-- recommendations, even an empty list): one row per user and cutoff.
--   Gains and unique_judgments: see ndcg_judged_gains; gains <= 0 never enter the ideal list.
--   judged_only: see ndcg_placed. ties 'trec': every item has its own position; 'average': the
--   items of a tie group (positions pos .. pos + size - 1) each get the mean discount of those
--   positions that are within the cutoff. The ideal DCG comes from the judged gains, best first,
--   cut at k (idcg_cutoff 'k') or at min(k, the ranking's length) ('list').
CREATE OR REPLACE TEMP MACRO ndcg_user_scores(ranked, judged, ks := [10], gain := 'linear',
        idcg_cutoff := 'k', gain_map := NULL, judged_only := false, ties := 'trec',
        unique_judgments := false) AS TABLE
WITH
    cutoffs AS (
        SELECT k, coalesce(k, 9223372036854775807) AS depth
        FROM ndcg_cutoffs(ks)
        WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
          AND ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
          AND ndcg_option('ties', ties, ['trec', 'average'])
    ),
    parts AS (
        -- hits sorted by position, so each sum adds in the same order however the rows arrived
        SELECT user_id, in_judged, in_ranked, length, list_sort(hits) AS hits,
               list_transform(best, lambda g, i: g * ndcg_discount(i)) AS ideal
        FROM ndcg_user_parts(ranked, judged, ks, gain, gain_map, judged_only, ties,
                             unique_judgments)
    ),
    sums AS (
        SELECT p.user_id, c.k, p.in_judged, p.in_ranked,
               coalesce(CASE WHEN ties = 'average'
                   THEN list_sum(list_transform(list_filter(p.hits, lambda h: h.pos <= c.depth),
                       lambda h: h.gain * list_sum(list_transform(
                           range(h.pos, least(h.pos + h.size - 1, c.depth) + 1),
                           lambda q: ndcg_discount(q))) / h.size))
                   ELSE list_sum(list_transform(list_filter(p.hits, lambda h: h.pos <= c.depth),
                       lambda h: h.gain * ndcg_discount(h.pos))) END, 0.0) AS dcg,
               coalesce(list_sum(p.ideal[1:CASE WHEN idcg_cutoff = 'list'
                                                THEN least(c.depth, p.length)
                                                ELSE c.depth END]), 0.0) AS idcg
        FROM parts AS p CROSS JOIN cutoffs AS c
    )
SELECT user_id, k, dcg, idcg, CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END AS ndcg,
       in_judged AS judged, in_ranked AS ranked
FROM sums;

-- ndcg_evaluated(user_scores, missing, empty): the rows of a ndcg_user_scores result that count.
-- The users of the judgments; missing 'zero' keeps a user with no ranked item (scored 0), 'skip'
-- leaves it out; empty 'zero' keeps a user whose ideal DCG is 0 (scored 0), 'skip' leaves it out.
-- Returns user_id, k, dcg, idcg, ndcg.
CREATE OR REPLACE TEMP MACRO ndcg_evaluated(user_scores, missing := 'zero', empty := 'zero') AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg
    FROM query_table(user_scores)
    WHERE judged
      AND (missing = 'zero' OR ranked)
      AND (empty = 'zero' OR idcg > 0)
      AND (SELECT ndcg_option('missing', missing, ['zero', 'skip'])
                  AND ndcg_option('empty', empty, ['zero', 'skip']));

-- ndcg_scores(ranked, judged, ks, gain, missing, idcg_cutoff, empty, gain_map, judged_only, ties,
-- unique_judgments):
-- the per-user scores of the evaluated users (see ndcg_user_scores and ndcg_evaluated); ranked as
-- an edge of ndcg_input.sql returns it.
-- Returns user_id, k (NULL for 'all'), dcg, idcg, ndcg: one row per evaluated user and cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_scores(ranked, judged, ks := [10], gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, ties := 'trec', unique_judgments := false) AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_scores(ranked, judged, ks := ks, gain := gain, idcg_cutoff := idcg_cutoff,
                              gain_map := gain_map, judged_only := judged_only, ties := ties,
                              unique_judgments := unique_judgments))
    FROM ndcg_evaluated('ndcg_all_', missing := missing, empty := empty);

-- ndcg_summary(scores): the mean over users of a ndcg_scores result, per cutoff.
-- Returns k, ndcg (the mean NDCG), dcg and idcg (their means) and users (how many were averaged).
CREATE OR REPLACE TEMP MACRO ndcg_summary(scores) AS TABLE
    SELECT k, fsum(ndcg) / count(*) AS ndcg, fsum(dcg) / count(*) AS dcg,
           fsum(idcg) / count(*) AS idcg, count(*) AS users
    FROM query_table(scores)
    GROUP BY k;

-- ndcg_coverage(user_scores): how the users of the two sides overlap, from ndcg_user_scores.
-- Returns users_judged, users_ranked, users_unranked (judged but with no recommendations) and
-- users_unjudged (with recommendations but absent from the judgments, so not evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_coverage(user_scores) AS TABLE
    -- every user has one row per cutoff
    SELECT judged // cutoffs AS users_judged, ranked // cutoffs AS users_ranked,
           unranked // cutoffs AS users_unranked, unjudged // cutoffs AS users_unjudged
    FROM (SELECT count(*) FILTER (WHERE judged) AS judged,
                 count(*) FILTER (WHERE ranked) AS ranked,
                 count(*) FILTER (WHERE judged AND NOT ranked) AS unranked,
                 count(*) FILTER (WHERE ranked AND NOT judged) AS unjudged,
                 greatest(count(DISTINCT coalesce(k, 0)), 1) AS cutoffs
          FROM query_table(user_scores));

-- ndcg_tables.sql
-- Per-user and mean NDCG at one cutoff k, for each recommendation layout. rels is always long:
-- user_id, item_id, relevance (make it from lists of relevant items with ndcg_judged_lists).
-- Options, all named: k (integer >= 1 or 'all', default 10), gain ('linear', 'exponential',
-- 'binary'), gain_map (a MAP from relevance level to gain, e.g. MAP {1: 3, 2: 9}; other levels
-- gain by `gain`), missing ('zero', 'skip'), idcg_cutoff ('k', 'list'), empty ('zero', 'skip'),
-- max_depth (only the first N items of each ranking count; NULL: all), judged_only (true: take
-- unjudged items out of each ranking first) and, for rankings by score only, ties ('trec',
-- 'average'). ndcg_scores (ndcg_core.sql) says what each one does.

-- ndcg_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_lists(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth, judged_only)))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, ks := [ndcg_cutoff(k)], gain := gain, missing := missing,
                     idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                     judged_only := judged_only, ties := 'trec');

-- ndcg_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_ranks(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth, judged_only)))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, ks := [ndcg_cutoff(k)], gain := gain, missing := missing,
                     idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                     judged_only := judged_only, ties := 'trec');

-- ndcg_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by score
-- descending; equal scores ordered by item id descending, as text (ties 'trec'), or tie-averaged
-- (ties 'average').
CREATE OR REPLACE TEMP MACRO ndcg_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec') AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_scores(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth, judged_only, ties),
                               ties := ties))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, ks := [ndcg_cutoff(k)], gain := gain, missing := missing,
                     idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                     judged_only := judged_only, ties := ties);

-- ndcg_mean(recs, rels, ...) and its _ranks and _scores twins: one row, ndcg (the mean NDCG
-- over evaluated users; NULL when none) and users (how many were evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_mean(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false) AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user(recs, rels, k := k, gain := gain, missing := missing,
                       idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                       gain_map := gain_map, judged_only := judged_only);

CREATE OR REPLACE TEMP MACRO ndcg_mean_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false) AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user_ranks(recs, rels, k := k, gain := gain, missing := missing,
                             idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                             gain_map := gain_map, judged_only := judged_only);

CREATE OR REPLACE TEMP MACRO ndcg_mean_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec') AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user_scores(recs, rels, k := k, gain := gain, missing := missing,
                              idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                              gain_map := gain_map, judged_only := judged_only, ties := ties);

-- ndcg_lists.sql
-- One literal ranking, as scalar macros over DuckDB lists.

-- ndcg_list_cutoff(k): ndcg_cutoff(k), stopping on anything that is not a cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_list_cutoff(k) AS
    CASE WHEN ndcg_cutoff(k) < 1
         THEN error('ndcg-duck: cutoff k must be an integer >= 1 or ''all'', not ' || k::VARCHAR)
         ELSE ndcg_cutoff(k) END;

-- ndcg_list_dcg(relevances, k, gain): DCG@k of relevance values listed in rank order.
CREATE OR REPLACE TEMP MACRO ndcg_list_dcg(relevances, k := 10, gain := 'linear') AS
    coalesce(list_sum(list_transform(
        list_slice(relevances, 1, coalesce(ndcg_list_cutoff(k), len(relevances))),
        lambda r, i: ndcg_gain(r, gain) * ndcg_discount(i))), 0.0);

-- ndcg_list(relevances, ideal, k, gain): NDCG@k of relevance values listed in rank order.
-- ideal: every judged relevance of that user, in any order (NULL: the listed values themselves);
-- it is sorted best first. Returns 0 when the ideal DCG is 0.
CREATE OR REPLACE TEMP MACRO ndcg_list(relevances, ideal := NULL, k := 10, gain := 'linear') AS
    coalesce(ndcg_list_dcg(relevances, k, gain)
             / nullif(ndcg_list_dcg(list_sort(coalesce(ideal, relevances), 'DESC'), k, gain), 0), 0.0);

-- ndcg_items(items, truth, k, gain): NDCG@k of a ranked LIST of item ids against truth, a MAP from
-- item id to relevance (items not in it have relevance 0). The ideal list is all of truth.
CREATE OR REPLACE TEMP MACRO ndcg_items(items, truth, k := 10, gain := 'linear') AS
    ndcg_list(list_transform(items, lambda item: truth[item]), map_values(truth), k, gain);

-- ndcg_trec.sql
-- TREC files as trec_eval reads them: plain text, one entry a line, fields separated by any run of
-- spaces or tabs. Paths may be globs. Blank lines are skipped; words after the fields named below
-- are ignored (some runs carry comments there).

-- ndcg_trec_words(path): each non-blank line of the text file(s) at path, and its words.
-- Returns filename, line (VARCHAR) and words (VARCHAR list).
CREATE OR REPLACE TEMP MACRO ndcg_trec_words(path) AS TABLE
    SELECT filename, line, words
    FROM (
        SELECT filename, line, regexp_extract_all(line, '\S+') AS words
        -- chr(31), the unit separator, never occurs in a TREC file: each line is one value
        FROM read_csv(path, columns = {'line': 'VARCHAR'}, header = false, delim = chr(31),
                      quote = '', escape = '', auto_detect = false, filename = true)
    )
    WHERE len(words) > 0;

-- ndcg_trec_number(words, n, filename, line, form): the n-th word of a line as a DOUBLE; stops,
-- naming the file, the form its lines take and the line, when there is no such word or it is not
-- a number.
CREATE OR REPLACE TEMP MACRO ndcg_trec_number(words, n, filename, line, form) AS
    CASE WHEN len(words) >= n AND TRY_CAST(words[n] AS DOUBLE) IS NOT NULL
         THEN words[n]::DOUBLE
         ELSE error('ndcg-duck: ' || filename || ': a TREC ' || form || ', not: ' || line) END;

-- ndcg_trec_run(path): a run, lines `query Q0 doc rank score tag`.
-- Returns user_id (query), item_id (doc) and score (DOUBLE): the long layout ranked by score, for
-- ndcg_ranked_scores and the _scores macros. The rank column is ignored, as trec_eval does.
CREATE OR REPLACE TEMP MACRO ndcg_trec_run(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_number(words, 5, filename, line,
                            'run line is "query Q0 doc rank score tag"') AS score
    FROM ndcg_trec_words(path);

-- ndcg_trec_qrels(path): relevance judgments (qrels), lines `query iteration doc relevance`.
-- Returns user_id (query), item_id (doc) and relevance (DOUBLE; used exactly, never truncated).
CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_number(words, 4, filename, line,
                            'qrels line is "query iteration doc relevance"') AS relevance
    FROM ndcg_trec_words(path);
