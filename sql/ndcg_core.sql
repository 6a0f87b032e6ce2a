-- The metric. For one user, with the ranked items at positions i = 1, 2, ... and gain(i) the
-- gain of the item at i (0 when it is not judged):
--
--   DCG@k  = sum over i <= k of gain(i) / log2(i + 1)
--            (Jarvelin and Kekalainen 2002, "Cumulated gain-based evaluation of IR techniques",
--            ACM TOIS 20(4), with the log2(i + 1) discount of every position that Burges et al.
--            2005 and trec_eval use);                                          ndcg_dcg
--   gain   = the relevance (linear), 2^relevance - 1 (exponential: Burges et al. 2005,
--            "Learning to rank using gradient descent", ICML), or 1 if relevance > 0 (binary);
--            levels listed in a gain map take the gain given there; a relevance <= 0, or below
--            min_relevance, gains 0;                                ndcg_gain, ndcg_judgment_gain
--   IDCG@k = DCG@k of the user's judged gains > 0 sorted best first (the ideal ranking), cut at
--            k (or at min(k, the ranking's length) with idcg_cutoff 'list');  ndcg_ideal_dcg
--   NDCG@k = DCG@k / IDCG@k, and 0 when IDCG@k = 0;                            ndcg_user_scores
--   with tied scores averaged (ties 'average'), the items of a tie group holding positions
--   p .. p + n - 1 each add gain / n at every one of those positions within k (McSherry and
--   Najork 2008, "Computing information retrieval performance measures efficiently in the
--   presence of tied scores", ECIR);                                           ndcg_tied_dcg
--   the mean NDCG@k is the mean over the evaluated users (the users of the judgments; missing
--   and empty say which of them count).                                        ndcg_summary
--
-- The steps, each a macro over relations passed by name (query_table):
--   rankings (a ranking edge of ndcg_input.sql): user_id, items (the ranking, best first, cut to
--          what can count), ranks (NULL, or each item's tie group's first position);
--   judgments (the judgments edge, ndcg_judgments): user_id, item_id, relevance, gain, relevant;
--   ndcg_judged_ranks: where each judgment stands in its user's ranking (list_position in the
--          user's list: the judgments are joined to the rankings on user_id alone);
--   ndcg_user_hits: one row per user: the ranked judged items (hits), R, the ideal gains;
--   ndcg_user_scores: per user and cutoff, dcg, idcg, ndcg; ndcg_evaluated, ndcg_scores,
--          ndcg_summary, ndcg_coverage: which users count, their scores, the means.
-- Optional steps are named variants behind a one-line dispatch on a constant condition, so
-- DuckDB's optimizer leaves the unused ones out of the plan.

-- ndcg_position(items, item_id, user_id): the 1-based position of item_id in the list items
-- (NULL: not in it). Stops on an item that is in the list twice (the second would not count).
-- DuckDB computes the repeated list_position once per row.
CREATE OR REPLACE TEMP MACRO ndcg_position(items, item_id, user_id) AS
    CASE WHEN list_position(items, item_id) IS NOT NULL
              AND ndcg_require(NOT coalesce(list_contains(
                      items[list_position(items, item_id) + 1:], item_id), false),
                  ndcg_twice(user_id, item_id))
         THEN list_position(items, item_id) END;

-- ndcg_judged_positions(rankings, judgments): every user of either side: one row per judgment (or
-- one row for a user without any), with where its item stands in the user's ranking. Returns
-- user_id, item_id, relevance, gain, relevant, position (1-based; NULL: not ranked), tie_size
-- (1), length (the ranking's length; NULL without one), has_judgments and has_ranking (which
-- sides have the user). Every item has its own position, as in trec_eval. The default variant.
CREATE OR REPLACE TEMP MACRO ndcg_judged_positions(rankings, judgments) AS TABLE
    SELECT coalesce(j.user_id, r.user_id) AS user_id, j.item_id, j.relevance, j.gain, j.relevant,
           ndcg_position(r.items, j.item_id, j.user_id) AS position, 1 AS tie_size,
           len(r.items) AS length, j.user_id IS NOT NULL AS has_judgments,
           r.user_id IS NOT NULL AS has_ranking
    FROM query_table(judgments) AS j
    FULL OUTER JOIN query_table(rankings) AS r ON r.user_id = j.user_id;

-- ndcg_judged_positions_tied(rankings, judgments): as ndcg_judged_positions, for ties 'average':
-- position is the item's tie group's first position and tie_size the group's size, from the
-- edge's ranks. A variant, because looking up the tie group costs a list scan per hit.
CREATE OR REPLACE TEMP MACRO ndcg_judged_positions_tied(rankings, judgments) AS TABLE
    SELECT user_id, item_id, relevance, gain, relevant, ranks[seen_at] AS position,
           CASE WHEN seen_at IS NOT NULL
                THEN list_count(list_filter(ranks, lambda r: r = ranks[seen_at])) END AS tie_size,
           length, has_judgments, has_ranking
    FROM (SELECT coalesce(j.user_id, r.user_id) AS user_id, j.item_id, j.relevance, j.gain,
                 j.relevant, ndcg_position(r.items, j.item_id, j.user_id) AS seen_at, r.ranks,
                 len(r.items) AS length, j.user_id IS NOT NULL AS has_judgments,
                 r.user_id IS NOT NULL AS has_ranking
          FROM query_table(judgments) AS j
          FULL OUTER JOIN query_table(rankings) AS r ON r.user_id = j.user_id);

-- ndcg_judged_only_positions(rankings, judgments, ties): as ndcg_judged_positions (or its tied
-- variant), with judged_only: unjudged items (no judgment, or a negative relevance) are taken out
-- of each ranking first, so the items below them move up and length counts the items left. A
-- variant, because it numbers each user's judged items again (two window functions).
CREATE OR REPLACE TEMP MACRO ndcg_judged_only_positions(rankings, judgments, ties := 'trec') AS TABLE
    SELECT user_id, item_id, relevance, gain, relevant,
           CASE WHEN counts THEN rank() OVER (PARTITION BY user_id, counts ORDER BY place) END
               AS position,
           CASE WHEN counts THEN count(*) OVER (PARTITION BY user_id, counts, place) END
               AS tie_size,
           count(*) FILTER (WHERE counts) OVER (PARTITION BY user_id) AS length, has_judgments,
           has_ranking
    FROM (SELECT *, position IS NOT NULL AND relevance >= 0 AS counts, position AS place
          FROM (FROM ndcg_judged_positions(rankings, judgments) WHERE ties = 'trec'
                UNION ALL
                FROM ndcg_judged_positions_tied(rankings, judgments) WHERE ties = 'average'));

-- ndcg_judged_ranks(rankings, judgments, judged_only, ties): the dispatch over the three variants
-- above; returns what they return.
CREATE OR REPLACE TEMP MACRO ndcg_judged_ranks(rankings, judgments, judged_only := false,
        ties := 'trec') AS TABLE
    FROM ndcg_judged_positions(rankings, judgments) WHERE ties = 'trec' AND NOT judged_only
    UNION ALL
    FROM ndcg_judged_positions_tied(rankings, judgments) WHERE ties = 'average' AND NOT judged_only
    UNION ALL
    FROM ndcg_judged_only_positions(rankings, judgments, ties) WHERE judged_only;

-- ndcg_ideal_top(gain, n) and ndcg_ideal_all(gain): aggregates over one user's judgment rows: the
-- positive gains, best first, the first n of them or all. The top-n variant exists because
-- DuckDB's top-n aggregate costs about half of sorting every user's gains (BENCHMARKS.md,
-- "Where the time goes"); ndcg_ideal dispatches (DuckDB computes only the one it keeps).
CREATE OR REPLACE TEMP MACRO ndcg_ideal_top(gain, n) AS max(gain, n) FILTER (WHERE gain > 0);
CREATE OR REPLACE TEMP MACRO ndcg_ideal_all(gain) AS
    list_sort(list(gain) FILTER (WHERE gain > 0), 'DESC');
CREATE OR REPLACE TEMP MACRO ndcg_ideal(gain, n) AS
    CASE WHEN n IS NULL THEN ndcg_ideal_all(gain) ELSE ndcg_ideal_top(gain, n) END;

-- ndcg_user_hits(rankings, judgments, ideal_depth, judged_only, ties): one row per user of either
-- side, with what the metrics read. Returns user_id, has_judgments and has_ranking (which sides
-- have the user), length (the ranking's length, as judged_only counts it; 0 without a ranking), hits (a
-- LIST of {position, tie_size, gain, relevant}, the user's ranked judged items by position),
-- relevant (R: how many of the user's judgments are relevant) and ideal (the user's positive
-- gains, best first: the first ideal_depth of them, or all when ideal_depth is NULL).
CREATE OR REPLACE TEMP MACRO ndcg_user_hits(rankings, judgments, ideal_depth := NULL,
        judged_only := false, ties := 'trec') AS TABLE
    SELECT user_id, bool_or(has_judgments) AS has_judgments,
           bool_or(has_ranking) AS has_ranking,
           coalesce(max(length), 0) AS length,
           list_sort(list({'position': position, 'tie_size': tie_size, 'gain': gain,
                           'relevant': relevant}) FILTER (WHERE position IS NOT NULL)) AS hits,
           count(*) FILTER (WHERE relevant) AS relevant,
           ndcg_ideal(gain, ideal_depth) AS ideal
    FROM ndcg_judged_ranks(rankings, judgments, judged_only, ties)
    WHERE ndcg_option('ties', ties, ['trec', 'average'])
    GROUP BY user_id;

-- ndcg_hits_dcg(hits, depth): DCG@depth of a user's hits (see ndcg_user_hits; tie groups as
-- ndcg_tied_dcg says, which is ndcg_dcg for an item of its own). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_hits_dcg(hits, depth) AS
    coalesce(list_sum(list_transform(list_filter(hits, lambda h: h.position <= depth),
        lambda h: ndcg_tied_dcg(h.gain, h.position, h.tie_size, depth))), 0.0);

-- ndcg_ideal_terms(ideal): what each of the ideal gains (best first) adds to the ideal DCG.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_terms(ideal) AS
    list_transform(ideal, lambda gain, i: ndcg_dcg(gain, i));

-- ndcg_ideal_dcg(ideal_terms, depth, length, idcg_cutoff): IDCG@depth from ndcg_ideal_terms: the
-- first depth terms, or the first min(depth, length) with idcg_cutoff 'list'. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_dcg(ideal_terms, depth, length, idcg_cutoff) AS
    coalesce(list_sum(ideal_terms[1:CASE WHEN idcg_cutoff = 'list' THEN least(depth, length)
                                         ELSE depth END]), 0.0);

-- ndcg_ratio(dcg, idcg): NDCG from DCG and IDCG: 0 when IDCG is 0.
CREATE OR REPLACE TEMP MACRO ndcg_ratio(dcg, idcg) AS
    CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END;

-- ndcg_user_scores(rankings, judgments, ks, idcg_cutoff, judged_only, ties): every user of either
-- side, with their scores at each cutoff. Returns user_id, k (NULL for no cutoff), dcg, idcg,
-- ndcg, has_judgments and has_ranking (the user has judgments; has a ranking, even an empty
-- one): one row per user and cutoff. ks is a BIGINT list (see ndcg_ks).
CREATE OR REPLACE TEMP MACRO ndcg_user_scores(rankings, judgments, ks := [10],
        idcg_cutoff := 'k', judged_only := false, ties := 'trec') AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg_ratio(dcg, idcg) AS ndcg, has_judgments, has_ranking
    FROM (SELECT u.user_id, c.k, ndcg_hits_dcg(u.hits, c.depth) AS dcg,
                 ndcg_ideal_dcg(u.terms, c.depth, u.length, idcg_cutoff) AS idcg,
                 u.has_judgments, u.has_ranking
          FROM (SELECT user_id, has_judgments, has_ranking, length, hits, ndcg_ideal_terms(ideal) AS terms
                FROM ndcg_user_hits(rankings, judgments, ideal_depth := ndcg_top_n(ndcg_ks(ks)),
                                    judged_only := judged_only, ties := ties)) AS u
          CROSS JOIN ndcg_cutoffs(ks) AS c
          WHERE ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list']));

-- ndcg_evaluated(user_scores, missing, empty): the rows of a ndcg_user_scores result that count.
-- The users of the judgments; missing 'zero' keeps a user with no ranked item (scored 0), 'skip'
-- leaves it out; empty 'zero' keeps a user whose ideal DCG is 0 (scored 0), 'skip' leaves it out.
-- Returns user_id, k, dcg, idcg, ndcg.
CREATE OR REPLACE TEMP MACRO ndcg_evaluated(user_scores, missing := 'zero', empty := 'zero') AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg
    FROM query_table(user_scores)
    WHERE has_judgments
      AND (missing = 'zero' OR has_ranking)
      AND (empty = 'zero' OR idcg > 0)
      AND (SELECT ndcg_option('missing', missing, ['zero', 'skip'])
                  AND ndcg_option('empty', empty, ['zero', 'skip']));

-- ndcg_scores(rankings, judgments, ks, missing, idcg_cutoff, empty, judged_only, ties): the
-- per-user scores of the evaluated users (see ndcg_user_scores and ndcg_evaluated). rankings as
-- a ranking edge returns it, judgments as ndcg_judgments does. Returns user_id, k (NULL for no
-- cutoff), dcg, idcg, ndcg: one row per evaluated user and cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_scores(rankings, judgments, ks := [10], missing := 'zero',
        idcg_cutoff := 'k', empty := 'zero', judged_only := false, ties := 'trec') AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_scores(rankings, judgments, ks := ks, idcg_cutoff := idcg_cutoff,
                              judged_only := judged_only, ties := ties))
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
    SELECT judged_rows // cutoffs AS users_judged, ranked_rows // cutoffs AS users_ranked,
           unranked // cutoffs AS users_unranked, unjudged // cutoffs AS users_unjudged
    FROM (SELECT count(*) FILTER (WHERE has_judgments) AS judged_rows,
                 count(*) FILTER (WHERE has_ranking) AS ranked_rows,
                 count(*) FILTER (WHERE has_judgments AND NOT has_ranking) AS unranked,
                 count(*) FILTER (WHERE has_ranking AND NOT has_judgments) AS unjudged,
                 greatest(count(DISTINCT coalesce(k, 0)), 1) AS cutoffs
          FROM query_table(user_scores));
