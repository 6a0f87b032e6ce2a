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

-- ndcg_judgments_checked(rels): rels as user_id, item_id, relevance (numbers), row by row. Stops on
-- a NULL user, item or relevance and on a NaN or infinite relevance. (Repeated judgments are
-- the judgments edge's, in ndcg_input.sql.)
CREATE OR REPLACE TEMP MACRO ndcg_judgments_checked(rels) AS TABLE
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

-- ndcg_judged_twice(user_id, item_id, relevance, other): the message for a (user, item) judged
-- twice with two values.
CREATE OR REPLACE TEMP MACRO ndcg_judged_twice(user_id, item_id, relevance, other) AS
    'relevance: user ' || ndcg_show(user_id) || ' has item ' || ndcg_show(item_id)
    || ' judged twice, as ' || ndcg_show(relevance) || ' and ' || ndcg_show(other)
    || ': keep one judgment per (user, item)';

-- ndcg_params.sql
-- Option values and the metric's scalar parts: what a user writes becomes what the core
-- computes with, and the formulas of ndcg_core.sql's header as one-line macros.

-- ndcg_cutoff(k): a cutoff written as an integer >= 1, or 'all' / NULL for no cutoff.
-- Returns a BIGINT, NULL meaning "no cutoff", or 0 for anything that is not a cutoff (which
-- ndcg_cutoffs rejects). Free of side effects, so DuckDB folds it for a constant k.
CREATE OR REPLACE TEMP MACRO ndcg_cutoff(k) AS
    CASE WHEN k IS NULL OR lower(k::VARCHAR) = 'all' THEN NULL
         ELSE coalesce(TRY_CAST(k::VARCHAR AS BIGINT), 0) END;

-- ndcg_k(k): the cutoff parameter `k` of the shell wrappers as a one-cutoff list for ks; stops
-- naming what was typed when it is not an integer >= 1 or 'all'.
CREATE OR REPLACE TEMP MACRO ndcg_k(k) AS
    CASE WHEN k IS NOT NULL AND NOT coalesce(ndcg_cutoff(k) >= 1, true)
         THEN error('ndcg-duck: k must be an integer >= 1 or ''all'', not ' || k::VARCHAR)
         ELSE [ndcg_cutoff(k)] END;

-- ndcg_option(name, value, allowed): true when value is one of the list allowed; otherwise stops
-- the query naming the option. Checked once per query, not per row.
CREATE OR REPLACE TEMP MACRO ndcg_option(name, value, allowed) AS
    ndcg_require(list_contains(allowed, value), name || ' must be one of '
                 || array_to_string(allowed, ', ') || ', not ' || ndcg_show(value));

-- ndcg_min_relevance_ok(min_relevance): true when min_relevance is NULL (no threshold) or a
-- finite number; otherwise stops the query naming the parameter.
CREATE OR REPLACE TEMP MACRO ndcg_min_relevance_ok(min_relevance) AS
    ndcg_require(min_relevance IS NULL
                 OR coalesce(isfinite(TRY_CAST(min_relevance::VARCHAR AS DOUBLE)), false),
                 'min_relevance must be a finite number or NULL, not '
                 || ndcg_show(min_relevance));

-- ndcg_gain(relevance, gain): the gain of one judged relevance value.
-- gain is 'linear' (rel), 'exponential' (2^rel - 1, Burges et al. 2005) or 'binary' (1 if
-- rel > 0). Relevance <= 0 or NULL gains 0; fractional relevance is used exactly. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_gain(relevance, gain) AS
    CASE
        WHEN relevance IS NULL OR relevance <= 0 THEN 0.0
        WHEN gain = 'exponential' THEN pow(2.0, relevance::DOUBLE) - 1.0
        WHEN gain = 'binary' THEN 1.0
        ELSE relevance::DOUBLE
    END;

-- ndcg_relevant(relevance, min_relevance): whether a judgment counts as relevant: relevance
-- >= min_relevance, or > 0 when min_relevance is NULL (trec_eval's -l, ranx's rel_lvl).
CREATE OR REPLACE TEMP MACRO ndcg_relevant(relevance, min_relevance) AS
    coalesce(relevance >= min_relevance::DOUBLE, relevance > 0);

-- ndcg_judgment_gain(relevance, gain, gain_map, min_relevance): the gain of one judgment: 0 when
-- it is below min_relevance; else the level's gain in gain_map (a MAP from relevance level to
-- gain; NULL: no map), else ndcg_gain. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_judgment_gain(relevance, gain, gain_map, min_relevance) AS
    CASE WHEN relevance < min_relevance::DOUBLE THEN 0.0
         ELSE coalesce(map_extract_value(gain_map::MAP(DOUBLE, DOUBLE), relevance::DOUBLE),
                       ndcg_gain(relevance, gain)) END;

-- ndcg_dcg(gain, rank): what one item adds to DCG: its gain discounted by log2 of its 1-based
-- rank + 1 (the DCG of ndcg_core.sql's header). Applied to the ranking and the ideal list alike.
CREATE OR REPLACE TEMP MACRO ndcg_dcg(gain, rank) AS gain / log2(rank + 1);

-- ndcg_tied_dcg(gain, rank, tie_size, depth): what one item of a tie group adds to DCG@depth
-- when ties are averaged (McSherry and Najork 2008): the group holds ranks rank .. rank +
-- tie_size - 1, and each of its items adds gain / tie_size at each of them that is within
-- depth. With tie_size 1 it is ndcg_dcg(gain, rank).
CREATE OR REPLACE TEMP MACRO ndcg_tied_dcg(gain, rank, tie_size, depth) AS
    CASE WHEN tie_size = 1 THEN ndcg_dcg(gain, rank)
         ELSE list_sum(list_transform(range(rank, least(rank + tie_size - 1, depth) + 1),
                                      lambda r: ndcg_dcg(gain / tie_size, r))) END;

-- ndcg_depth(ks, max_depth, judged_only, ties): how many items of each ranking to read: the
-- largest cutoff in ks (a BIGINT list, NULL = no cutoff), no more than max_depth. NULL means the
-- whole ranking (a cutoff of 'all' and no max_depth). With judged_only or ties 'average' the
-- items below the largest cutoff can count too (they move up, or share a tie that reaches above
-- the cutoff): then only max_depth cuts.
CREATE OR REPLACE TEMP MACRO ndcg_depth(ks, max_depth, judged_only := false, ties := 'trec') AS
    CASE WHEN judged_only OR ties = 'average' OR list_count(ks) < len(ks) THEN max_depth::BIGINT
         ELSE least(list_max(ks), coalesce(max_depth::BIGINT, 9223372036854775807)) END;

-- ndcg_top_n(ks): how many ideal gains each user needs: the largest cutoff in ks (a BIGINT
-- list, NULL = no cutoff) when every cutoff is a number no larger than 100 (small enough for
-- DuckDB's top-N aggregate, which keeps room for n values per user); NULL for all of them.
CREATE OR REPLACE TEMP MACRO ndcg_top_n(ks) AS
    CASE WHEN list_count(ks) = len(ks) AND list_max(ks) <= 100 THEN list_max(ks) END;

-- ndcg_input.sql
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

-- ndcg_core.sql
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

-- ndcg_tables.sql
-- Per-user and mean NDCG at one cutoff k, for each recommendation layout. rels is always long:
-- user_id, item_id, relevance (make it from lists of relevant items with ndcg_judged_lists).
-- Options, all named: k (integer >= 1 or 'all', default 10), gain ('linear', 'exponential',
-- 'binary'), gain_map (a MAP from relevance level to gain, e.g. MAP {1: 3, 2: 9}; other levels
-- gain by `gain`), min_relevance (judgments below it are not relevant: gain 0, out of the ideal
-- list; NULL: none), missing ('zero', 'skip'), idcg_cutoff ('k', 'list'), empty ('zero', 'skip'),
-- max_depth (only the first N items of each ranking count; NULL: all), judged_only (true: take
-- unjudged items out of each ranking first) and, for rankings by score only, ties ('trec',
-- 'average'). ndcg_judgments (ndcg_input.sql) and ndcg_scores (ndcg_core.sql) say what each
-- one does. Every wrapper checks rels as the CLI does, through the judgments edge.

-- ndcg_per_user_of(rankings, rels, k, ...): what the wrappers share: rels through the judgments
-- edge, then ndcg_scores at the one cutoff k over rankings (a ranking edge's result, by name).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user_of(rankings, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, min_relevance := NULL, ties := 'trec') AS TABLE
    WITH ndcg_judgments_ AS (
        FROM ndcg_judgments(rels, gain := gain, gain_map := gain_map,
                            min_relevance := min_relevance))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores(rankings, 'ndcg_judgments_', ks := ndcg_k(k), missing := missing,
                     idcg_cutoff := idcg_cutoff, empty := empty, judged_only := judged_only,
                     ties := ties);

-- ndcg_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_lists(recs, depth := ndcg_depth(ndcg_k(k), max_depth, judged_only)))
    FROM ndcg_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                          idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                          judged_only := judged_only, min_relevance := min_relevance);

-- ndcg_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_ranks(recs, depth := ndcg_depth(ndcg_k(k), max_depth, judged_only)))
    FROM ndcg_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                          idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                          judged_only := judged_only, min_relevance := min_relevance);

-- ndcg_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by score
-- descending; equal scores ordered by item id descending, as text (ties 'trec'), or tie-averaged
-- (ties 'average').
CREATE OR REPLACE TEMP MACRO ndcg_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_scores(recs, depth := ndcg_depth(ndcg_k(k), max_depth, judged_only, ties),
                                ties := ties))
    FROM ndcg_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                          idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                          judged_only := judged_only, min_relevance := min_relevance,
                          ties := ties);

-- ndcg_mean(recs, rels, ...) and its _ranks and _scores twins: one row, ndcg (the mean NDCG
-- over evaluated users; NULL when none) and users (how many were evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_mean(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user(recs, rels, k := k, gain := gain, missing := missing,
                       idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                       gain_map := gain_map, judged_only := judged_only,
                       min_relevance := min_relevance);

CREATE OR REPLACE TEMP MACRO ndcg_mean_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user_ranks(recs, rels, k := k, gain := gain, missing := missing,
                             idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                             gain_map := gain_map, judged_only := judged_only,
                             min_relevance := min_relevance);

CREATE OR REPLACE TEMP MACRO ndcg_mean_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    SELECT fsum(ndcg) / count(*) AS ndcg, count(*) AS users
    FROM ndcg_per_user_scores(recs, rels, k := k, gain := gain, missing := missing,
                              idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth,
                              gain_map := gain_map, judged_only := judged_only, ties := ties,
                              min_relevance := min_relevance);

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
        lambda r, i: ndcg_dcg(ndcg_gain(r, gain), i))), 0.0);

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
