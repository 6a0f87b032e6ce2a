-- The metric, over three relations passed by name:
--   ranked: user_id, item_id, rank   (rank = 1-based position in the user's ranking; with ties
--           'average', the items of a tie group share the group's first position, as rank() gives)
--   judged: user_id, item_id, relevance   (the ground truth; one row per judged item)
--   ks: the cutoffs, a BIGINT list, NULL meaning no cutoff (ndcg_cutoff turns 'all' into NULL).
-- Plain SQL (joins, window functions, aggregates) but for one DuckDB step: each user's ideal gains
-- are gathered best first into a list (a top-N aggregate) and their prefix sums taken per cutoff.
-- Each optional step sits in its own UNION ALL branch behind a constant condition, so that with
-- the default options DuckDB's optimizer drops it from the plan.

-- ndcg_user_scores(ranked, judged, users, ks, gain, idcg_cutoff, gain_map, judged_only, ties):
-- every user of either side, with their scores at each cutoff. users: user_id of every user that
-- has recommendations (repeats allowed), even an empty ranking.
-- Returns user_id, k (NULL for 'all'), dcg, idcg, ndcg, judged (the user has judgments) and ranked
-- (the user has at least one ranked item): one row per user and cutoff.
--   Gains: gain_map, a MAP from relevance level to gain (NULL: none), gives the listed levels their
--   gain; other levels gain by `gain`. Gains <= 0 never enter the ideal list. judged_only takes
--   unjudged items (no judgment, or a negative relevance) out of each ranking first; the items
--   below move up. ties 'trec': every rank is its own position; 'average': the items sharing a
--   rank are a tie group over positions rank .. rank + size - 1, and each gets the mean discount
--   of those positions (within the cutoff). The ideal DCG comes from the judged gains, best first,
--   cut at k (idcg_cutoff 'k') or at min(k, the user's ranking length) ('list').
--   Stops when a judged item appears twice among a user's ranked items (ranked twice, or judged
--   twice): it would count twice.
CREATE OR REPLACE TEMP MACRO ndcg_user_scores(ranked, judged, users, ks := [10], gain := 'linear',
        idcg_cutoff := 'k', gain_map := NULL, judged_only := false, ties := 'trec') AS TABLE
WITH
    cutoffs AS (
        SELECT k, coalesce(k, 9223372036854775807) AS depth
        FROM ndcg_cutoffs(ks)
        WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
          AND ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
          AND ndcg_option('ties', ties, ['trec', 'average'])
    ),
    gains AS (
        SELECT user_id, item_id, relevance, ndcg_gain(relevance, gain) AS item_gain
        FROM query_table(judged)
        WHERE gain_map IS NULL
        UNION ALL
        SELECT j.user_id, j.item_id, j.relevance,
               coalesce(m.gain, ndcg_gain(j.relevance, gain)) AS item_gain
        FROM query_table(judged) AS j
        LEFT JOIN ndcg_gain_levels(gain_map) AS m ON m.relevance = j.relevance
        WHERE gain_map IS NOT NULL
    ),
    ranking AS (
        SELECT user_id, item_id, rank
        FROM query_table(ranked)
        WHERE NOT judged_only
        UNION ALL
        SELECT r.user_id, r.item_id, rank() OVER (PARTITION BY r.user_id ORDER BY r.rank) AS rank
        FROM query_table(ranked) AS r
        SEMI JOIN query_table(judged) AS j
            ON j.user_id = r.user_id AND j.item_id = r.item_id AND j.relevance >= 0
        WHERE judged_only
    ),
    entries AS (
        -- the ranked items that gain something
        SELECT r.user_id, r.item_id, r.rank, g.item_gain, g.relevance
        FROM ranking AS r
        JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain <> 0
    ),
    repeats AS (
        -- a judged item twice among the ranked items (ranked twice, or judged twice) would count
        -- twice: stop (checked once, on the few ranked items that gain something)
        SELECT ndcg_require(count(*) = 0, ndcg_repeat_problem(first(user_id), first(item_id),
                   first(lowest_rank), first(highest_rank), first(lowest), first(highest))) AS ok
        FROM (SELECT user_id, item_id, min(rank) AS lowest_rank, max(rank) AS highest_rank,
                     min(relevance) AS lowest, max(relevance) AS highest
              FROM entries
              GROUP BY user_id, item_id HAVING count(*) > 1)
    ),
    tie_positions AS (
        -- ties 'average': every position of each tie group, and the group's size
        SELECT user_id, rank, rank - 1 + row_number() OVER (PARTITION BY user_id, rank) AS pos,
               count(*) OVER (PARTITION BY user_id, rank) AS group_size
        FROM ranking
        WHERE ties = 'average'
    ),
    dcg AS (
        SELECT e.user_id, c.depth, sum(e.item_gain * ndcg_discount(e.rank)) AS dcg
        FROM entries AS e JOIN cutoffs AS c ON e.rank <= c.depth
        WHERE ties = 'trec' AND (SELECT ok FROM repeats)
        GROUP BY e.user_id, c.depth
        UNION ALL
        SELECT e.user_id, c.depth, sum(e.item_gain * ndcg_discount(p.pos) / p.group_size) AS dcg
        FROM entries AS e
        JOIN tie_positions AS p ON p.user_id = e.user_id AND p.rank = e.rank
        JOIN cutoffs AS c ON p.pos <= c.depth
        WHERE ties = 'average' AND (SELECT ok FROM repeats)
        GROUP BY e.user_id, c.depth
    ),
    present AS (
        -- every user with recommendations, at every cutoff, with its DCG (0 without hits)
        SELECT u.user_id, c.depth, coalesce(d.dcg, 0.0) AS dcg
        FROM (SELECT DISTINCT user_id FROM query_table(users)) AS u
        CROSS JOIN cutoffs AS c
        LEFT JOIN dcg AS d ON d.user_id = u.user_id AND d.depth = c.depth
    ),
    ideal AS (
        -- each judged user's positive gains, best first, as discounted parts of the ideal DCG
        SELECT user_id, list_transform(coalesce(best, []), lambda g, i: g * ndcg_discount(i)) AS parts
        FROM (
            SELECT user_id, max(item_gain, coalesce(ndcg_top_n(ks), 1)) FILTER (WHERE item_gain > 0) AS best
            FROM gains
            WHERE ndcg_top_n(ks) IS NOT NULL
            GROUP BY user_id
            UNION ALL
            SELECT user_id, list(item_gain ORDER BY item_gain DESC) FILTER (WHERE item_gain > 0)
            FROM gains
            WHERE ndcg_top_n(ks) IS NULL
            GROUP BY user_id
        )
    ),
    lengths AS (
        SELECT user_id, count(*) AS n
        FROM ranking
        WHERE idcg_cutoff = 'list'
        GROUP BY user_id
    ),
    idcg AS (
        SELECT i.user_id, c.depth, coalesce(list_sum(i.parts[1:c.depth]), 0.0) AS idcg
        FROM ideal AS i CROSS JOIN cutoffs AS c
        WHERE idcg_cutoff = 'k'
        UNION ALL
        SELECT i.user_id, c.depth,
               coalesce(list_sum(i.parts[1:least(c.depth, coalesce(l.n, 0))]), 0.0) AS idcg
        FROM ideal AS i CROSS JOIN cutoffs AS c LEFT JOIN lengths AS l ON l.user_id = i.user_id
        WHERE idcg_cutoff = 'list'
    )
SELECT coalesce(i.user_id, d.user_id) AS user_id,
       c.k,
       coalesce(d.dcg, 0.0) AS dcg,
       coalesce(i.idcg, 0.0) AS idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg,
       i.user_id IS NOT NULL AS judged,
       d.user_id IS NOT NULL AS ranked
FROM idcg AS i
FULL OUTER JOIN present AS d ON d.user_id = i.user_id AND d.depth = i.depth
JOIN cutoffs AS c ON c.depth = coalesce(i.depth, d.depth);

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

-- ndcg_scores(ranked, judged, ks, gain, missing, idcg_cutoff, empty, gain_map, judged_only, ties):
-- the per-user scores of the evaluated users (see ndcg_user_scores and ndcg_evaluated); the users
-- with recommendations are those with a ranked item.
-- Returns user_id, k (NULL for 'all'), dcg, idcg, ndcg: one row per evaluated user and cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_scores(ranked, judged, ks := [10], gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, ties := 'trec') AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_scores(ranked, judged, ranked, ks := ks, gain := gain, idcg_cutoff := idcg_cutoff,
                              gain_map := gain_map, judged_only := judged_only, ties := ties))
    FROM ndcg_evaluated('ndcg_all_', missing := missing, empty := empty);

-- ndcg_summary(scores): the mean over users of a ndcg_scores result, per cutoff.
-- Returns k, ndcg (the mean NDCG), dcg and idcg (their means) and users (how many were averaged).
CREATE OR REPLACE TEMP MACRO ndcg_summary(scores) AS TABLE
    SELECT k, avg(ndcg) AS ndcg, avg(dcg) AS dcg, avg(idcg) AS idcg, count(*) AS users
    FROM query_table(scores)
    GROUP BY k;

-- ndcg_coverage(user_scores): how the users of the two sides overlap, from ndcg_user_scores.
-- Returns users_judged, users_ranked, users_unranked (judged but with no ranked item) and
-- users_unjudged (ranked but absent from the judgments, so not evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_coverage(user_scores) AS TABLE
    SELECT count(*) FILTER (WHERE judged) AS users_judged,
           count(*) FILTER (WHERE ranked) AS users_ranked,
           count(*) FILTER (WHERE judged AND NOT ranked) AS users_unranked,
           count(*) FILTER (WHERE ranked AND NOT judged) AS users_unjudged
    FROM (SELECT DISTINCT user_id, judged, ranked FROM query_table(user_scores));
