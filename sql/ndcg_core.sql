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
