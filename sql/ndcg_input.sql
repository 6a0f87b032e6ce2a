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

-- Every edge returns one row per user with recommendations: user_id, items (a LIST of item ids in
-- rank order, cut to the first `depth`; NULL depth: all) and ranks (NULL, or for tie averaging a
-- LIST giving each item the position of its tie group's first item). The core finds a judged
-- item's rank with list_position(items, item).

-- ndcg_first(items, depth): the first `depth` items of a list (NULL depth: all of them).
-- list_resize cuts a long list in a quarter of list_slice's time (BENCHMARKS.md, "Where the
-- time goes"); a shorter list is kept as it is (list_resize would pad it with NULLs).
CREATE OR REPLACE TEMP MACRO ndcg_first(items, depth) AS
    CASE WHEN len(items) > depth THEN list_resize(items, depth) ELSE items END;

-- ndcg_ranked_lists(recs, depth): recs has user_id and items, a LIST of item ids in rank order
-- (a NULL list counts as empty), one row per user. Stops on ids of a type ids may not have
-- (ndcg_id, ndcg_id_list), a NULL user, a NULL item among the first `depth`, and a user with two
-- rows.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL) AS TABLE
    SELECT user_id, items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT ndcg_id(user_id, 'recommendations: column user_id') AS user_id,
               ndcg_first(ndcg_id_list(items, 'recommendations: column items'), depth) AS items
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

-- The long edges below read one row per (user, item). When the items that can count are the first
-- `depth` of each ranking (a cutoff no larger than 100, ndcg_top_depth), they gather only those
-- with DuckDB's top-n aggregates (min_by / max_by with n), which cost about a fifth of ranking
-- every row with a window (BENCHMARKS.md, "Long inputs"); otherwise (no cutoff, a large one,
-- --judged-only, --ties average, --duplicates first: ndcg_depth gives NULL or a large depth) they
-- rank every row (--ties average with a cutoff up to 100: ndcg_ranked_scores_tied, picked by
-- leaks.folds). Each is a named variant behind a constant dispatch, as in the core.

-- ndcg_top_depth(depth): depth when the top-n variants apply (a depth from 1 to 100), else NULL.
-- The top-n aggregate keeps room for n values per user, so n stays small.
CREATE OR REPLACE TEMP MACRO ndcg_top_depth(depth) AS
    CASE WHEN depth <= 100 THEN depth::BIGINT END;

-- ndcg_rows_typed(recs, order_column): recs' user_id, item_id and the column that orders them
-- (order_column: 'rank' or 'score', named so), each of a type it may have (ndcg_id,
-- ndcg_order_number): otherwise stops naming the column.
CREATE OR REPLACE TEMP MACRO ndcg_rows_typed(recs, order_column) AS TABLE
    SELECT ndcg_id(user_id, 'recommendations: column user_id') AS user_id,
           ndcg_id(item_id, 'recommendations: column item_id') AS item_id,
           ndcg_order_number(COLUMNS(lambda c: c = order_column),
                             'recommendations: column ' || order_column)
    FROM query_table(recs);

-- ndcg_rows_ranked(recs): recs' rows (user_id, item_id, rank), each checked: stops on a column of
-- another type (ndcg_rows_typed), on a NULL user, item or rank and on a NaN or infinite rank (a
-- rank is a place in the list: NaN would sort last, and two infinities would tie). Every row is
-- checked, counted or not.
CREATE OR REPLACE TEMP MACRO ndcg_rows_ranked(recs) AS TABLE
    SELECT user_id, item_id, rank
    FROM ndcg_rows_typed(recs, 'rank')
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL
                       AND CASE WHEN ndcg_float_type(rank)
                                THEN coalesce(isfinite(rank::DOUBLE), false)
                                ELSE rank IS NOT NULL END,
              ndcg_row_problem('rank', user_id, item_id, rank, 'a finite number'));

-- ndcg_two_at_rank(user_id, rank): the message for two items of a user at one rank.
CREATE OR REPLACE TEMP MACRO ndcg_two_at_rank(user_id, rank) AS
    'recommendations: user ' || ndcg_show(user_id) || ' has two items at rank '
    || ndcg_show(rank) || ': give each item its own rank';

-- ndcg_all_differ(sorted): true when no two neighbours of a sorted list are equal (so no two
-- values are). A third of list_unique's cost on the short lists of the top-n edges.
CREATE OR REPLACE TEMP MACRO ndcg_all_differ(sorted) AS
    NOT coalesce(list_bool_or(list_transform(sorted[2:], lambda v, i: v = sorted[i])), false);

-- ndcg_tied_rows(scores, depth): how many of the first `depth` places (NULL: all) of a list of
-- scores in rank order (best first) hold a score equal to a neighbour's: the rows whose order
-- among themselves, or whether they are in the first depth at all, only a tie rule decides.
-- It reads no place past depth + 1, so pass the whole list, as a column: a slice of it would be
-- made again for every place the lambda reads.
CREATE OR REPLACE TEMP MACRO ndcg_tied_rows(scores, depth) AS
    len(list_filter(range(1, least(len(scores), coalesce(depth, len(scores))) + 1),
                    lambda i: coalesce(scores[i] = scores[i - 1], false)
                              OR coalesce(scores[i] = scores[i + 1], false)));

-- ndcg_ranked_ranks_all(recs, depth): every row ranked with a window; stops on two items at one
-- rank anywhere in a ranking.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks_all(recs, depth) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, item_id, rank AS given,
               row_number() OVER by_rank AS position,
               lag(rank) OVER by_rank AS previous
        FROM ndcg_rows_ranked(recs)
        WINDOW by_rank AS (PARTITION BY user_id ORDER BY rank)
    )
    WHERE ndcg_require(previous IS NULL OR previous <> given, ndcg_two_at_rank(user_id, given))
      AND (depth IS NULL OR position <= depth)
    GROUP BY user_id;

-- ndcg_ranked_ranks_top(recs, depth): each user's first depth + 1 items by rank (min_by), and
-- their ranks (min), both smallest rank first; the first depth items are the ranking. Two items
-- at one rank among them stop the query: such a tie within the first depth, or straddling
-- position depth, decides which items count. A tie wholly below position depth changes no
-- number and passes. (Two plain top-n aggregates cost a third of one over a struct.)
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks_top(recs, depth) AS TABLE
    SELECT user_id, ndcg_first(top, depth) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, min_by(item_id, rank, coalesce(ndcg_top_depth(depth), 1) + 1) AS top,
               min(rank, coalesce(ndcg_top_depth(depth), 1) + 1) AS top_ranks
        FROM ndcg_rows_ranked(recs)
        GROUP BY user_id
    )
    WHERE ndcg_require(ndcg_all_differ(top_ranks),
              ndcg_two_at_rank(user_id, list_filter(top_ranks, lambda r, i: i > 1
                                                    AND top_ranks[i - 1] = r)[1]));

-- ndcg_ranked_ranks(recs, depth): recs has user_id, item_id and rank, a number that orders each
-- user's items (smallest first; gaps and any starting value are fine). Returns each user's first
-- `depth` items (NULL: all). Stops on a NULL user, item or rank (any row), and on two items at
-- one rank among the first depth + 1 (the top-n variant) or anywhere (the window variant).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL) AS TABLE
    FROM ndcg_ranked_ranks_top(recs, depth) WHERE ndcg_top_depth(depth) IS NOT NULL
    UNION ALL
    FROM ndcg_ranked_ranks_all(recs, depth) WHERE ndcg_top_depth(depth) IS NULL;

-- ndcg_rows_scored(recs): recs' rows (user_id, item_id, score), each checked: stops on a column of
-- another type (ndcg_rows_typed), on a NULL user, item or score and on a NaN score (it has no
-- place in an order). An infinite score orders like any other (inf first, -inf last; equal ones
-- tie). Every row is checked, counted or not.
CREATE OR REPLACE TEMP MACRO ndcg_rows_scored(recs) AS TABLE
    SELECT user_id, item_id, score
    FROM ndcg_rows_typed(recs, 'score')
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL
                       -- not isnan(score): DuckDB folds isnan (and score <> score) to false
                       -- where a Parquet file's min/max statistics, which leave NaN out, say
                       -- the column is finite; isfinite is not folded so
                       AND CASE WHEN ndcg_float_type(score)
                                THEN coalesce(isfinite(score::DOUBLE) OR isinf(score::DOUBLE),
                                              false)
                                ELSE score IS NOT NULL END,
              ndcg_row_problem('score', user_id, item_id, score, 'a number'));

-- ndcg_trec_sorted(scores, items): a user's items and their scores (two lists in one order) in
-- trec_eval's order: score descending, ties broken by item id descending compared as text.
CREATE OR REPLACE TEMP MACRO ndcg_trec_sorted(scores, items) AS
    list_transform(list_sort(list_transform(items, lambda item, i: {'score': scores[i],
                       'text': item::VARCHAR, 'item': item}), 'DESC'), lambda s: s.item);

-- ndcg_ranked_scores_all(scored, depth, ties): every row of scored (checked rows) ranked with a
-- window; ties 'average' also returns ranks: items with equal scores share their group's first
-- position (SQL's rank()), for the core to average their discounts.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_all(scored, depth, ties) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position
        FROM query_table(scored)
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
        FROM query_table(scored)
        WHERE ties = 'average'
    )
    WHERE depth IS NULL OR position <= depth
    GROUP BY user_id;

-- ndcg_best_scores(scored, depth): each user's depth + 1 best-scored items (top, by max_by) and
-- their scores (top_scores, by max), both best first; rows of equal score come in any order, so
-- the i-th score is the i-th item's. What the top-n edges gather from every row.
CREATE OR REPLACE TEMP MACRO ndcg_best_scores(scored, depth) AS TABLE
    SELECT user_id, max_by(item_id, score, coalesce(ndcg_top_depth(depth), 1) + 1) AS top,
           max(score, coalesce(ndcg_top_depth(depth), 1) + 1) AS top_scores
    FROM query_table(scored)
    GROUP BY user_id;

-- ndcg_ranked_scores_top(scored, depth): from each user's depth + 1 best-scored items and their
-- scores (ndcg_best_scores): with no two equal scores among them, that is trec_eval's order and
-- the first depth items are the ranking, without casting any id to text. With equal scores
-- before position depth + 1 only (the depth-th score beats the next one, so every row of each
-- tied score was gathered), the gathered items are put in trec_eval's order (ndcg_trec_sorted).
-- The other users, whose tie reaches past what was gathered, are ranked exactly from all their
-- rows (a semi-join that reads nothing more when there are none). Also returns tied: the user's
-- tied rows among the first depth (ndcg_tied_rows of the best depth + 1 scores, as ndcg_ties
-- counts them), from the scores it gathers anyway: 0 when no two of those scores are equal, the
-- common case, without counting (ndcg_all_differ is computed once for the items too).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_top(scored, depth) AS TABLE
    WITH ndcg_top_ AS (FROM ndcg_best_scores(scored, depth))
    SELECT user_id,
           ndcg_first(CASE WHEN ndcg_all_differ(top_scores) THEN top
                           ELSE ndcg_trec_sorted(top_scores, top) END, depth) AS items,
           NULL::BIGINT[] AS ranks,
           CASE WHEN ndcg_all_differ(top_scores) THEN 0
                ELSE ndcg_tied_rows(top_scores, depth) END AS tied
    FROM ndcg_top_
    WHERE len(top) <= depth OR top_scores[depth] > top_scores[depth + 1]
    UNION ALL
    SELECT user_id, list(item_id ORDER BY score DESC, item_id::VARCHAR DESC)[1:depth] AS items,
           NULL::BIGINT[] AS ranks,
           ndcg_tied_rows(list(score ORDER BY score DESC), depth) AS tied
    FROM query_table(scored)
    WHERE user_id IN (SELECT user_id FROM ndcg_top_
                      WHERE len(top) > depth AND top_scores[depth] = top_scores[depth + 1])
    GROUP BY user_id;

-- ndcg_tie_ranks(sorted): for a list of scores in rank order (best first), each position's tie
-- rank: the first position of its run of equal scores (what SQL's rank() gives), a BIGINT list
-- as long. Each run, from its first to its last position, is its first position repeated
-- (list_resize pads with it), so the cost grows with the list, not with its square.
CREATE OR REPLACE TEMP MACRO ndcg_tie_ranks(sorted) AS
    flatten(list_transform(
        list_zip(list_filter(range(1, len(sorted) + 1),
                             lambda i: i = 1 OR sorted[i] <> sorted[i - 1]),
                 list_filter(range(1, len(sorted) + 1),
                             lambda i: i = len(sorted) OR sorted[i] <> sorted[i + 1])),
        lambda run: list_resize([run[1]], run[2] - run[1] + 1, run[1])));

-- ndcg_ranked_scores_top_average(scored, depth): ndcg_ranked_scores_top for ties 'average': each
-- user's first depth items in trec_eval's order with their tie ranks (ndcg_tie_ranks; NULL when
-- no two of the user's depth + 1 best scores are equal: no tie to average, as the core reads a
-- NULL ranks), and the tied rows among the first depth (tied, as ndcg_ranked_scores_top counts
-- them). A tie group
-- straddling position depth is returned whole (its items past depth too), so that the core
-- averages the gains of all its members (ndcg_tie_means), as over the whole ranking; the items
-- below it are not returned, as no position up to depth reads them. From each user's depth + 1
-- best scores (max_by), as ndcg_ranked_scores_top; only a user whose depth-th and next scores
-- are equal is read again, for its rows scored at least the depth-th score.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_top_average(scored, depth) AS TABLE
    WITH ndcg_top_ AS (FROM ndcg_best_scores(scored, depth)), ndcg_straddling_ AS (
        SELECT user_id, top_scores[depth] AS last_score FROM ndcg_top_
        WHERE len(top) > depth AND top_scores[depth] = top_scores[depth + 1]
    )
    SELECT user_id,
           ndcg_first(CASE WHEN ndcg_all_differ(top_scores) THEN top
                           ELSE ndcg_trec_sorted(top_scores, top) END, depth) AS items,
           CASE WHEN NOT ndcg_all_differ(top_scores)
                THEN ndcg_first(ndcg_tie_ranks(top_scores), depth) END AS ranks,
           CASE WHEN ndcg_all_differ(top_scores) THEN 0
                ELSE ndcg_tied_rows(top_scores, depth) END AS tied
    FROM ndcg_top_
    WHERE len(top) <= depth OR top_scores[depth] > top_scores[depth + 1]
    UNION ALL
    SELECT user_id, items, ndcg_tie_ranks(sorted) AS ranks,
           ndcg_tied_rows(sorted, depth) AS tied
    FROM (SELECT s.user_id, list(s.item_id ORDER BY s.score DESC, s.item_id::VARCHAR DESC) AS items,
                 list(s.score ORDER BY s.score DESC) AS sorted
          FROM query_table(scored) AS s JOIN ndcg_straddling_ AS t ON s.user_id = t.user_id
          WHERE s.score >= t.last_score
          GROUP BY s.user_id);

-- ndcg_ranked_scores(recs, depth, ties): recs has user_id, item_id and score. Items are ranked by
-- score descending, ties broken by item id descending compared as text (trec_eval's rule).
-- ties 'average' also returns ranks (ndcg_ranked_scores_all). Returns each user's first `depth`
-- items (NULL: all). Stops on a NULL user, item or score and on a NaN score (any row).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, ties := 'trec') AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    SELECT user_id, items, ranks FROM ndcg_ranked_scores_top('ndcg_scored_', depth)
    WHERE ndcg_top_depth(depth) IS NOT NULL AND ties <> 'average'
    UNION ALL
    FROM ndcg_ranked_scores_all('ndcg_scored_', depth, ties)
    WHERE ndcg_top_depth(depth) IS NULL OR ties = 'average';

-- ndcg_ranked_scores_tied(recs, depth, ties): ndcg_ranked_scores (ties 'trec') for a depth its
-- top-n variant takes (ndcg_top_depth: 1 to 100), with a fourth column tied: each user's tied
-- rows among the first depth, as ndcg_ties counts them (ndcg_tied_rows), from the scores the
-- ranking gathers anyway: the run's tie warning without a pass of its own. ties 'average': the
-- first depth items, a tie straddling position depth whole, and tie ranks
-- (ndcg_ranked_scores_top_average), for a largest cutoff `depth`. Stops on another depth.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied(recs, depth, ties := 'trec') AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    SELECT * FROM (FROM ndcg_ranked_scores_top('ndcg_scored_', depth) WHERE ties <> 'average'
                   UNION ALL
                   FROM ndcg_ranked_scores_top_average('ndcg_scored_', depth)
                   WHERE ties = 'average')
    WHERE ndcg_require(ndcg_top_depth(depth) IS NOT NULL,
                       'ndcg_ranked_scores_tied: depth must be from 1 to 100, not '
                       || coalesce(depth::VARCHAR, 'NULL'));

-- ndcg_scores_gathered(scored): each user's rows of scored (checked rows: user_id, item_id,
-- score) gathered into one list, in no order, by a hash aggregate (no sort of every row by user):
-- user_id and gathered, a LIST of {score, item}, one per row (one list, so that each score stays
-- with its item).
CREATE OR REPLACE TEMP MACRO ndcg_scores_gathered(scored) AS TABLE
    SELECT user_id, list({'score': score, 'item': item_id}) AS gathered
    FROM query_table(scored)
    GROUP BY user_id;

-- ndcg_descending(scores): true when no value of the list is greater than the one before it (the
-- list is in order, best first).
CREATE OR REPLACE TEMP MACRO ndcg_descending(scores) AS
    NOT coalesce(list_bool_or(list_transform(scores[2:], lambda v, i: v > scores[i])), false);

-- ndcg_scores_ordered(lists): ndcg_scores_gathered's rows with each list put in order by score
-- alone, best first (list_grade_up of the scores: a sort of each user's scores, not of every
-- row): user_id, items and scores (two LISTs in that order). Rows of equal score come in any
-- order. A list gathered best first already (ndcg_descending) is kept as gathered: a TREC run
-- lists each query's lines by rank, and the list aggregate keeps a query's rows in the order
-- read when one thread reads them all (a 100k-query run: 2.91-3.09 -> 2.68-2.69 CPU s for its
-- rankings, benchmarks/reports/2026-11-27-floors-10.md).
CREATE OR REPLACE TEMP MACRO ndcg_scores_ordered(lists) AS TABLE
    SELECT user_id,
           CASE WHEN best IS NULL THEN list_transform(gathered, lambda r: r.item)
                ELSE list_transform(best, lambda j: gathered[j].item) END AS items,
           CASE WHEN best IS NULL THEN scores
                ELSE list_transform(best, lambda j: gathered[j].score) END AS scores
    FROM (SELECT user_id, gathered, scores,
                 CASE WHEN NOT ndcg_descending(scores) THEN list_grade_up(scores, 'DESC') END
                     AS best
          FROM (SELECT user_id, gathered, list_transform(gathered, lambda r: r.score) AS scores
                FROM query_table(lists)));

-- ndcg_ranked_scores_tied_window(scored): every row of scored (checked rows: user_id, item_id,
-- score) ranked with a window in trec_eval's order (ndcg_ranked_scores_all's), with each user's
-- tied rows counted in the same window (lag/lead of the score equal to it): user_id, items,
-- ranks (NULL) and tied, as ndcg_ranked_scores_tied_all returns them.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_window(scored) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks,
           count(*) FILTER (WHERE tie) AS tied
    FROM (
        SELECT user_id, item_id,
               row_number() OVER ranking AS position,
               coalesce(lag(score) OVER ranking = score, false)
                   OR coalesce(lead(score) OVER ranking = score, false) AS tie
        FROM query_table(scored)
        WINDOW ranking AS (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
    )
    GROUP BY user_id;

-- ndcg_ranked_scores_tied_all(recs): ndcg_ranked_scores (ties 'trec', no depth: every row
-- ranked) with a fourth column tied: each user's tied rows, as ndcg_ties counts them at no depth
-- (ndcg_tied_rows: the rows whose score equals the one before or after it, best first): the
-- run's tie warning without reading and checking every row a second time. Every row is sorted
-- by user and score (ndcg_ranked_scores_tied_window): the edge for long lists.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_all(recs) AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    FROM ndcg_ranked_scores_tied_window('ndcg_scored_');

-- ndcg_ranked_scores_tied_short(recs): ndcg_ranked_scores_tied_all without the sort of every row,
-- for short lists: each user's rows are gathered into one list (ndcg_scores_gathered) and
-- ordered within it by score (ndcg_scores_ordered); with no two equal scores that is trec_eval's
-- order and no id is cast to text, the common case; a user with equal scores is put in
-- trec_eval's order (ndcg_trec_sorted) and counted (ndcg_tied_rows). The same result as
-- ndcg_ranked_scores_tied_all for any input and any list length; only the cost differs: a TREC
-- run of 10M rows, 100 a user, parse included, 8.8-10.3 -> 5.9-7.2 CPU s and 0.73 -> 0.66 GB;
-- but lists are ordered a vector of 2048 users at a time, so lists of 1000 took 1.4 GB against
-- the window's 0.5 (benchmarks/reports/2026-11-26-trec31f.md). leaks.folds picks it when the
-- first rows say the lists are short (ndcg_lists_short).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_short(recs) AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs)),
    ndcg_gathered_ AS (FROM ndcg_scores_gathered('ndcg_scored_'))
    SELECT user_id, CASE WHEN differ THEN items ELSE ndcg_trec_sorted(scores, items) END AS items,
           NULL::BIGINT[] AS ranks,
           CASE WHEN differ THEN 0 ELSE ndcg_tied_rows(scores, NULL) END AS tied
    FROM (SELECT *, ndcg_all_differ(scores) AS differ
          FROM ndcg_scores_ordered('ndcg_gathered_'));

-- ndcg_lists_short(recs, n): one row, short: whether recs' first n rows (in the order read)
-- come grouped by user (each user's rows one after another, as a TREC run lists each query's
-- lines) and no user among them has more than 100 (ndcg_top_depth's limit). A guess at the
-- length of the lists, from rows read anyway first, for choosing between two edges that give
-- the same result (ndcg_ranked_scores_tied_short or _all); never for a number.
CREATE OR REPLACE TEMP MACRO ndcg_lists_short(recs, n) AS TABLE
    SELECT count(*) FILTER (WHERE starts) = count(DISTINCT user_id)
           AND ndcg_top_depth(coalesce(max(rows_), 0)) IS NOT NULL AS short
    FROM (SELECT user_id, starts, count(*) OVER (PARTITION BY user_id) AS rows_
          FROM (SELECT user_id, user_id IS DISTINCT FROM lag(user_id) OVER () AS starts
                FROM (SELECT user_id FROM query_table(recs) LIMIT n)));

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
-- them: checked row by row (ndcg_judgments_checked), then gathered into one row per user with
-- each judged item once, its relevance and its gain.

-- ndcg_ideal_top(gain, n) and ndcg_ideal_all(gain): aggregates over one user's judgment rows: the
-- positive gains, best first, the first n of them or all. The top-n variant exists because
-- DuckDB's top-n aggregate costs about half of sorting every user's gains (BENCHMARKS.md,
-- "Where the time goes"); ndcg_ideal dispatches (DuckDB computes only the one it keeps).
CREATE OR REPLACE TEMP MACRO ndcg_ideal_top(gain, n) AS max(gain, n) FILTER (WHERE gain > 0);
CREATE OR REPLACE TEMP MACRO ndcg_ideal_all(gain) AS
    list_sort(list(gain) FILTER (WHERE gain > 0), 'DESC');
CREATE OR REPLACE TEMP MACRO ndcg_ideal(gain, n) AS
    CASE WHEN n IS NULL THEN ndcg_ideal_all(gain) ELSE ndcg_ideal_top(gain, n) END;

-- ndcg_may_repeat(item_id): an aggregate over one user's judgment rows: false when no item is
-- among them twice; true when one may be. A 1024-bit signature of the hashed item ids has fewer
-- bits set than there are rows when an item repeats (and, now and then, when two hashes share a
-- bit), so only the users it flags need the exact test (BENCHMARKS.md, "What the checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_may_repeat(item_id) AS
    bit_count(bitstring_agg((hash(item_id) % 1024)::INTEGER, 0, 1023)) < count(*);

-- ndcg_judgments_gathered(rels, gain, gain_map, min_relevance, ideal_depth, check_repeats): the
-- checked judgments, one row per user: user_id, items and relevances (LISTs, in one order: the
-- user's judgment rows as given), ideal (ndcg_ideal of the gains: the first ideal_depth, or all
-- when NULL), num_relevant (how many rows are relevant) and may_repeat (ndcg_may_repeat; false
-- without check_repeats). Stops on a bad gain, min_relevance or ideal_depth, naming it.
CREATE OR REPLACE TEMP MACRO ndcg_judgments_gathered(rels, gain, gain_map, min_relevance,
        ideal_depth, check_repeats) AS TABLE
    SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
           ndcg_ideal(ndcg_judgment_gain(relevance, gain, gain_map, min_relevance), ideal_depth)
               AS ideal,
           count(*) FILTER (WHERE ndcg_relevant(relevance, min_relevance)) AS num_relevant,
           CASE WHEN check_repeats THEN ndcg_may_repeat(item_id) ELSE false END AS may_repeat
    FROM ndcg_judgments_checked(rels)
    WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
      AND ndcg_min_relevance_ok(min_relevance)
      AND ndcg_ideal_depth_ok(ideal_depth)
    GROUP BY user_id;

-- ndcg_repeated_with(pairs): of a user's distinct (item, relevance) pairs, those of the first item
-- that has two relevance values (an empty list when none has).
CREATE OR REPLACE TEMP MACRO ndcg_repeated_with(pairs) AS
    list_filter(pairs, lambda p: p[1] = list_filter(
        pairs, lambda q: len(list_filter(pairs, lambda o: o[1] = q[1])) > 1)[1][1]);

-- ndcg_judgments_once(gathered, gain, gain_map, min_relevance, ideal_depth): the repeat contract on
-- ndcg_judgments_gathered's rows: a (user, item) judged twice with one value counts once, with
-- two values stops naming both. Only the users whose may_repeat is true are tested exactly
-- (list_unique), and only those with a repeat are gathered again, from their distinct (item,
-- relevance) pairs. Returns user_id, items, relevances, ideal, num_relevant.
CREATE OR REPLACE TEMP MACRO ndcg_judgments_once(gathered, gain, gain_map, min_relevance,
        ideal_depth) AS TABLE
    SELECT user_id,
           CASE WHEN repeated THEN list_transform(pairs, lambda p: p[1]) ELSE items END AS items,
           CASE WHEN repeated THEN list_transform(pairs, lambda p: p[2]) ELSE relevances END
               AS relevances,
           CASE WHEN repeated
                THEN list_slice(list_reverse_sort(list_filter(list_transform(pairs,
                         lambda p: ndcg_judgment_gain(p[2], gain, gain_map, min_relevance)),
                         lambda g: g > 0)), 1, coalesce(ideal_depth, len(pairs)))
                ELSE ideal END AS ideal,
           CASE WHEN repeated
                THEN len(list_filter(pairs, lambda p: ndcg_relevant(p[2], min_relevance)))
                ELSE num_relevant END AS num_relevant
    FROM (SELECT *, CASE WHEN repeated THEN list_distinct(list_zip(items, relevances)) END AS pairs
          FROM (SELECT *, CASE WHEN may_repeat THEN list_unique(items) < len(items) ELSE false END
                              AS repeated
                FROM query_table(gathered)))
    WHERE NOT repeated
       OR ndcg_require(len(pairs) = list_unique(items),
              ndcg_judged_twice(user_id, ndcg_repeated_with(pairs)[1][1],
                                list_min(list_transform(ndcg_repeated_with(pairs), lambda p: p[2])),
                                list_max(list_transform(ndcg_repeated_with(pairs), lambda p: p[2]))));

-- ndcg_first_infinite_gain(items, relevances, gain, gain_map, min_relevance): the index of the
-- first judgment (items and relevances: one user's, in one order) whose gain is not finite.
CREATE OR REPLACE TEMP MACRO ndcg_first_infinite_gain(items, relevances, gain, gain_map,
        min_relevance) AS
    list_filter(range(1, len(items) + 1), lambda i: NOT isfinite(
        ndcg_judgment_gain(relevances[i], gain, gain_map, min_relevance)))[1];

-- ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map, min_relevance): true when
-- the user's largest gain (ideal[1]: the ideal gains come best first) is finite, so every gain
-- is; otherwise (2^1100 - 1 is infinite as a DOUBLE) stops naming the first item whose gain is
-- not, its relevance and the gain. One comparison per user.
CREATE OR REPLACE TEMP MACRO ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map,
        min_relevance) AS
    ndcg_require(coalesce(isfinite(ideal[1]), true),
        'relevance: user ' || ndcg_show(user_id) || ', item '
        || ndcg_show(items[ndcg_first_infinite_gain(items, relevances, gain, gain_map,
                                                    min_relevance)])
        || ' has relevance '
        || ndcg_show(relevances[ndcg_first_infinite_gain(items, relevances, gain, gain_map,
                                                         min_relevance)])
        || ', whose gain with --gain ' || gain || ' is beyond the largest number (about '
        || '1.8e308): give that level a gain with --gain-map, or use smaller relevance values');

-- ndcg_judgments(rels, gain, gain_map, min_relevance, unique_judgments, ideal_depth): the
-- judgments edge. rels holds user_id, item_id, relevance (a number), one row per judgment.
-- Returns one row per judged user: user_id; items, the user's judged item ids, each once;
-- relevances, gains and relevant, LISTs in the order of items: each one's relevance, gain
-- (ndcg_judgment_gain: by `gain`, or gain_map's for its levels; 0 below min_relevance) and
-- whether it is relevant (ndcg_relevant: relevance >= min_relevance, or > 0 without one);
-- num_relevant (R, how many are relevant); and ideal, the user's positive gains best first (the
-- first ideal_depth of them, enough for cutoffs up to ideal_depth; NULL: all) and ideal_depth
-- itself (the core refuses a cutoff beyond it). A (user, item) judged twice with one value
-- counts once, with two values stops naming both; a gain too large for a DOUBLE stops naming the
-- item (ndcg_gains_finite); unique_judgments true trusts rels to hold no
-- (user, item) twice (a repeat would then count twice) and skips that check (BENCHMARKS.md,
-- "What the checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_judgments(rels, gain := 'linear', gain_map := NULL,
        min_relevance := NULL, unique_judgments := false, ideal_depth := NULL) AS TABLE
    WITH ndcg_gathered_ AS (
        FROM ndcg_judgments_gathered(rels, gain, gain_map, min_relevance, ideal_depth,
                                     NOT unique_judgments))
    SELECT user_id, items, relevances,
           list_transform(relevances,
               lambda r: ndcg_judgment_gain(r, gain, gain_map, min_relevance)) AS gains,
           list_transform(relevances, lambda r: ndcg_relevant(r, min_relevance)) AS relevant,
           num_relevant, ideal, ideal_depth::BIGINT AS ideal_depth
    FROM ndcg_judgments_once('ndcg_gathered_', gain, gain_map, min_relevance, ideal_depth)
    WHERE ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map, min_relevance);
