-- The metric, in plain SQL (joins, window functions, aggregates) over three relations:
--   ranked: user_id, item_id, rank   (rank = 1-based position in the user's ranking; with ties
--           'average', tied items share the rank of the group's first position, as rank() gives)
--   judged: user_id, item_id, relevance   (the ground truth; one row per judged item)
--   ks: the cutoffs, a list of integers >= 1 or 'all'/NULL (made a table by ndcg_cutoffs).
-- Assumes no item twice in one ranking and one judgment per (user, item).
-- Each optional step sits in its own UNION ALL branch behind a constant condition, so that with
-- the default options DuckDB's optimizer drops it from the plan.

-- ndcg_scores(ranked, judged, ks, gain, missing, idcg_cutoff, empty, ties, gain_map,
-- judged_only): the per-user scores. Returns user_id, k (NULL for 'all'), dcg, idcg, ndcg: one
-- row per evaluated user and cutoff.
--   Gains: gain_map, a MAP from relevance level to gain (NULL: none), gives the listed levels
--   their gain; other levels gain by `gain`. A gain <= 0 never enters the ideal list; a negative
--   mapped gain counts in DCG.
--   judged_only takes unjudged items (no judgment, or a negative relevance) out of each ranking
--   first; the items below move up.
--   ties 'trec': every rank is its own position. 'average': the items that share a rank form a
--   tie group spanning positions rank .. rank + size - 1; the group's mean gain counts at each of
--   those positions within the cutoff, so each item gets the group's mean discount
--   (scikit-learn's tie-averaged DCG).
--   Evaluated users are those of `judged`; missing 'zero' scores a user with no ranked items 0,
--   'skip' leaves such a user out. Ideal DCG comes from the judged gains, best first, cut at k
--   (idcg_cutoff 'k') or at min(k, that user's ranking length) ('list'). NDCG is 0 where the
--   ideal DCG is 0, or the user is left out with empty 'skip'.
CREATE OR REPLACE TEMP MACRO ndcg_scores(ranked, judged, ks := [10], gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', ties := 'trec', gain_map := NULL,
        judged_only := false) AS TABLE
WITH
    cutoffs AS (FROM ndcg_cutoffs(ks)),
    -- every judged item's gain; with a gain map, the listed levels get the map's gain
    gains AS (
        SELECT user_id, item_id, ndcg_gain(relevance, gain) AS item_gain
        FROM query_table(judged)
        WHERE gain_map IS NULL
        UNION ALL
        SELECT j.user_id, j.item_id, coalesce(m.gain, ndcg_gain(j.relevance, gain)) AS item_gain
        FROM query_table(judged) AS j
        LEFT JOIN ndcg_gain_levels(gain_map) AS m ON m.relevance = j.relevance
        WHERE gain_map IS NOT NULL
    ),
    -- the rankings to score; judged_only takes the unjudged items out and moves the rest up
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
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranking AS r
        JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain <> 0
    ),
    -- ties 'average': a tie group's gain, shared out over the positions the group spans
    tie_gains AS (
        SELECT user_id, rank, sum(item_gain) AS group_gain
        FROM hits
        WHERE ties = 'average'
        GROUP BY user_id, rank
    ),
    tie_positions AS (
        SELECT user_id, rank, rank - 1 + row_number() OVER (PARTITION BY user_id, rank) AS pos,
               count(*) OVER (PARTITION BY user_id, rank) AS group_size
        FROM ranking
        WHERE ties = 'average'
    ),
    -- what each position of each ranking adds to DCG, before the discount
    position_gains AS (
        SELECT user_id, rank AS pos, item_gain AS gain
        FROM hits
        WHERE CASE ties WHEN 'trec' THEN true WHEN 'average' THEN false
              ELSE error('ndcg-duck: ties must be trec or average, not ' || ties::VARCHAR) END
        UNION ALL
        SELECT p.user_id, p.pos, t.group_gain / p.group_size AS gain
        FROM tie_gains AS t
        JOIN tie_positions AS p ON p.user_id = t.user_id AND p.rank = t.rank
        WHERE ties = 'average'
    ),
    dcg AS (
        SELECT g.user_id, c.k, sum(g.gain * ndcg_discount(g.pos)) AS dcg
        FROM position_gains AS g JOIN cutoffs AS c ON c.k IS NULL OR g.pos <= c.k
        GROUP BY g.user_id, c.k
    ),
    lengths AS (
        SELECT user_id, count(*) AS n
        FROM ranking
        WHERE CASE idcg_cutoff WHEN 'k' THEN false WHEN 'list' THEN true
              ELSE error('ndcg-duck: idcg_cutoff must be k or list, not ' || idcg_cutoff::VARCHAR) END
        GROUP BY user_id
    ),
    ideal AS (
        SELECT user_id, item_gain, row_number() OVER (PARTITION BY user_id ORDER BY item_gain DESC) AS pos
        FROM gains
        WHERE item_gain > 0
    ),
    idcg AS (
        SELECT i.user_id, c.k, sum(i.item_gain * ndcg_discount(i.pos)) AS idcg
        FROM ideal AS i
        JOIN cutoffs AS c ON c.k IS NULL OR i.pos <= c.k
        LEFT JOIN lengths AS l ON l.user_id = i.user_id
        WHERE idcg_cutoff = 'k' OR i.pos <= coalesce(l.n, 0)
        GROUP BY i.user_id, c.k
    ),
    evaluated AS (
        SELECT DISTINCT user_id
        FROM query_table(judged)
        WHERE CASE missing WHEN 'zero' THEN true
              WHEN 'skip' THEN user_id IN (SELECT user_id FROM query_table(ranked))
              ELSE error('ndcg-duck: missing must be zero or skip, not ' || missing::VARCHAR) END
    )
SELECT e.user_id, c.k,
       coalesce(d.dcg, 0.0) AS dcg,
       coalesce(i.idcg, 0.0) AS idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg
FROM evaluated AS e
CROSS JOIN cutoffs AS c
LEFT JOIN dcg AS d ON d.user_id = e.user_id AND d.k IS NOT DISTINCT FROM c.k
LEFT JOIN idcg AS i ON i.user_id = e.user_id AND i.k IS NOT DISTINCT FROM c.k
WHERE CASE empty WHEN 'zero' THEN true WHEN 'skip' THEN coalesce(i.idcg, 0) > 0
      ELSE error('ndcg-duck: empty must be zero or skip, not ' || empty::VARCHAR) END;

-- ndcg_summary(scores): the mean over users of a ndcg_scores result, per cutoff.
-- Returns k, ndcg (the mean NDCG), dcg and idcg (their means) and users (how many were averaged).
CREATE OR REPLACE TEMP MACRO ndcg_summary(scores) AS TABLE
    SELECT k, avg(ndcg) AS ndcg, avg(dcg) AS dcg, avg(idcg) AS idcg, count(*) AS users
    FROM query_table(scores)
    GROUP BY k;

-- ndcg_coverage(ranked, judged): how the users of the two sides overlap.
-- Returns users_judged, users_ranked, users_unranked (judged but with no ranked item) and
-- users_unjudged (ranked but absent from the judgments, so not evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_coverage(ranked, judged) AS TABLE
    SELECT count(j.user_id) AS users_judged,
           count(r.user_id) AS users_ranked,
           count(*) FILTER (WHERE r.user_id IS NULL) AS users_unranked,
           count(*) FILTER (WHERE j.user_id IS NULL) AS users_unjudged
    FROM (SELECT DISTINCT user_id FROM query_table(ranked)) AS r
    FULL OUTER JOIN (SELECT DISTINCT user_id FROM query_table(judged)) AS j
        ON r.user_id = j.user_id;
