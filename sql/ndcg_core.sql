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
--   presence of tied scores", ECIR);                                         ndcg_tied_gains
--   the mean NDCG@k is the mean over the evaluated users (the users of the judgments; missing
--   and empty say which of them count).                                        ndcg_summary
--   (ndcg_summary divides a compensated sum, fsum; eval, segments and compare report the
--   exactly rounded mean, from exact sums: ndcg_means.sql)
--
-- Written as DuckDB computes it: a user's gains form a list, gain(1), gain(2), ..., and the
-- discounts at cutoff k another, 1/log2(i + 1) for i <= k and 0 beyond (ndcg_discounts), so
--   DCG@k  = gains . discounts@k      and      IDCG@k = ideal gains . discounts@k
-- (list_dot_product: one multiply-add per position, in position order).
--
-- The steps, each a macro over relations passed by name (query_table):
--   rankings (a ranking edge of ndcg_input.sql): user_id, items (the ranking, best first, cut to
--          what can count), ranks (NULL, or each item's tie group's first position);
--   judgments (the judgments edge, ndcg_judgments): one row per judged user: the judged items,
--          their relevances, gains and relevant flags (LISTs), R and the ideal gains;
--   ndcg_user_gains: one row per user of either side, the two joined on user_id alone: where
--          each ranked item is among the user's judged items (list_position), and from that the
--          gain at each position;
--   ndcg_user_scores: per user and cutoff, dcg, idcg, ndcg; ndcg_evaluated, ndcg_scores,
--          ndcg_summary, ndcg_coverage: which users count, their scores, the means.
-- Optional steps are named variants behind a one-line dispatch on a constant condition, so
-- DuckDB's optimizer leaves the unused ones out of the plan.

-- ndcg_judged_at(ranked, judged): for each item of the list ranked, its index in the list judged
-- (the user's judged items; NULL: not judged). An INTEGER list as long as ranked.
CREATE OR REPLACE TEMP MACRO ndcg_judged_at(ranked, judged) AS
    list_transform(ranked, lambda item: list_position(judged, item));

-- ndcg_ranked_once(user_id, found, judged): true when no judged item holds two positions of the
-- user's ranking (found: ndcg_judged_at); otherwise stops naming the item (the second position
-- would not count). The exact test runs only for rankings with two judged items or more.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_once(user_id, found, judged) AS
    ndcg_require(CASE WHEN coalesce(list_count(found), 0) < 2 THEN true
                      ELSE list_unique(found) = list_count(found) END,
                 ndcg_twice(user_id, judged[list_filter(found, lambda p, i: p IS NOT NULL
                                                        AND list_position(found, p) < i)[1]]));

-- ndcg_placed(judged, ranked): for each item of the list judged (the user's judged items), its
-- first position in the list ranked (NULL: not ranked). An INTEGER list as long as judged: what
-- ndcg_judged_at finds, read from the judged side (a few judged items each looked for down the
-- ranking cost about half of every ranked item looked for among the judged ones).
CREATE OR REPLACE TEMP MACRO ndcg_placed(judged, ranked) AS
    list_transform(judged, lambda item: list_position(ranked, item));

-- ndcg_placed_once(user_id, placed_ranks, ranked, reversed, judged): ndcg_ranked_once from the
-- judged side (placed_ranks: ndcg_placed_ranks, the judged items' first positions; reversed: the
-- ranking last item first, a column): true when the item at each of them is at that position
-- counted from the end too, its last; otherwise stops with ndcg_ranked_once's message (the item
-- whose second position comes first). (Cheaper than looking for each one below it in a slice
-- of the ranking: reports/2026-11-26-found31l.md.)
CREATE OR REPLACE TEMP MACRO ndcg_placed_once(user_id, placed_ranks, ranked, reversed, judged) AS
    ndcg_require(len(list_filter(placed_ranks, lambda r: list_position(reversed, ranked[r])
                                                         <> len(ranked) + 1 - r)) = 0,
                 ndcg_twice(user_id, judged[list_filter(ndcg_judged_at(ranked, judged),
                     lambda p, i: p IS NOT NULL
                                  AND list_position(ndcg_judged_at(ranked, judged), p) < i)[1]]));

-- ndcg_gains_at(found, gains): the gain at each position of a ranking: the judged item's gain
-- (gains, in the order of the judged items), 0 for an item that is not judged.
CREATE OR REPLACE TEMP MACRO ndcg_gains_at(found, gains) AS
    list_transform(found, lambda p: coalesce(gains[p], 0.0));

-- Ties averaged (McSherry and Najork 2008): each position of a tie group gets the group's mean
-- gain, so each item adds gain / n at each of the group's n positions. ranks gives each
-- position its group's first position, so a group starts where a position is its own rank and
-- ends before the next start. Three steps, each reading the one before as a column (what a
-- lambda reads of an argument that is an expression, DuckDB computes once per element).

-- ndcg_tie_starts(ranks): the first position of each tie group, ascending: the positions i with
-- ranks[i] = i. A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_tie_starts(ranks) AS
    list_filter(range(1, len(ranks) + 1), lambda i: ranks[i] = i);

-- ndcg_tie_means(gains, starts): the mean gain of each tie group (starts: ndcg_tie_starts; gains:
-- ndcg_gains_at), the group of the g-th start holding the positions from it to the next start
-- (or the list's end). A DOUBLE list as long as starts.
CREATE OR REPLACE TEMP MACRO ndcg_tie_means(gains, starts) AS
    list_transform(starts, lambda s, g: list_avg(list_slice(gains, s,
        coalesce(starts[g + 1], len(gains) + 1) - 1)));

-- ndcg_tied_gains(ranks, starts, means): ndcg_gains_at with ties averaged: at each position, its
-- group's mean (means: ndcg_tie_means, in the order of starts). A DOUBLE list as long as ranks.
CREATE OR REPLACE TEMP MACRO ndcg_tied_gains(ranks, starts, means) AS
    list_transform(ranks, lambda r: means[list_position(starts, r)]);

-- ndcg_first_positions(ranks): tie ranks (each position's group's first position) of a list
-- whose items were taken out here and there, numbered again: each group's first position in
-- the list as it is now.
CREATE OR REPLACE TEMP MACRO ndcg_first_positions(ranks) AS
    list_transform(ranks, lambda r: list_position(ranks, r));

-- The judged ranked items, the few positions of a ranking that most measures read (the others
-- gain nothing and count only in the ranking's length): each kept in rank order, as short lists
-- made once per user, which the measures read instead of walking down every position.

-- ndcg_judged_ranks(found): the positions (1-based, ascending) of the ranked items that have a
-- judgment, of any relevance (found: ndcg_judged_at).
CREATE OR REPLACE TEMP MACRO ndcg_judged_ranks(found) AS
    coalesce(list_filter(range(1, len(found) + 1), lambda i: found[i] IS NOT NULL), []);

-- ndcg_judged_indexes(found): for each judged ranked item, in rank order, its index among the
-- user's judged items (the order of the judgments edge's lists); found: ndcg_judged_at. Reading
-- a judgments list at these (list_select) gives its values at ndcg_judged_ranks.
CREATE OR REPLACE TEMP MACRO ndcg_judged_indexes(found) AS
    coalesce(list_filter(found, lambda p: p IS NOT NULL), []);

-- ndcg_placed_ranks(placed): ndcg_judged_ranks from the judged side (placed: ndcg_placed): the
-- positions of the ranked items that have a judgment, ascending (each judged item's first
-- position: ndcg_placed_once makes sure it has no other). A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_placed_ranks(placed) AS
    coalesce(list_sort(list_filter(placed, lambda p: p IS NOT NULL)), [])::BIGINT[];

-- ndcg_placed_indexes(placed, judged_ranks): ndcg_judged_indexes from the judged side: for each
-- of judged_ranks (ndcg_placed_ranks), the index of the judged item placed there.
CREATE OR REPLACE TEMP MACRO ndcg_placed_indexes(placed, judged_ranks) AS
    list_transform(judged_ranks, lambda r: list_position(placed, r));

-- ndcg_ranks_where(judged_ranks, flags): the positions of judged_ranks whose flag (a BOOLEAN list
-- as long, in the same order) is true.
CREATE OR REPLACE TEMP MACRO ndcg_ranks_where(judged_ranks, flags) AS list_where(judged_ranks, flags);

-- ndcg_judged_nonrelevant(relevances, relevant): for each judged item of a list, whether it is
-- judged not relevant with a relevance >= 0 (trec_eval's judged nonrelevant: a negative
-- judgment counts as none); relevances and relevant in the same order. A BOOLEAN list.
CREATE OR REPLACE TEMP MACRO ndcg_judged_nonrelevant(relevances, relevant) AS
    list_transform(list_zip(relevances, relevant),
                   lambda judgment: judgment[1] >= 0 AND NOT judgment[2]);

-- ndcg_every_ideal(ideal, ideal_depth, gains): the user's positive gains, best first, all of them
-- (what trec_eval's Rndcg, ndcg_rel and G read beyond any cutoff): the edge's ideal when it was
-- not cut (ideal_depth NULL), else sorted again from the judged items' gains. A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_every_ideal(ideal, ideal_depth, gains) AS
    coalesce(CASE WHEN ideal_depth IS NULL THEN ideal
                  ELSE list_reverse_sort(list_filter(gains, lambda g: g > 0)) END, []::DOUBLE[]);

-- ndcg_fit(numbers, width): a DOUBLE list cut or padded with zeros to width items (NULL width:
-- as it is; a NULL list: all zeros). A list that has width items already is not copied.
CREATE OR REPLACE TEMP MACRO ndcg_fit(numbers, width) AS
    CASE WHEN width IS NULL THEN coalesce(numbers, []::DOUBLE[])
         WHEN len(numbers) = width THEN numbers
         ELSE list_resize(coalesce(numbers, []::DOUBLE[]), width, 0.0) END;

-- ndcg_ranked_judged(rankings, judgments, judged_only): every user of either side (joined on
-- user_id alone): user_id, has_judgments and has_ranking (which sides have the user), ranked
-- (the ranked item ids), ranks (tie ranks, or NULL), found (ndcg_judged_at) and the judgments
-- edge's items (as judged), relevances, gains, relevant, num_relevant, ideal, ideal_depth. Stops
-- on a judged item ranked twice. With
-- judged_only, the items that are not judged or have a negative relevance are taken out of
-- each ranking first (the items below them move up; ranks are numbered again). With positions
-- false (not with judged_only, which reads found), found is NULL and placed (ndcg_placed) and
-- placed_ranks (ndcg_placed_ranks) say where the judged items are instead, the cheaper over long
-- rankings (with positions true, these two are NULL).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_judged(rankings, judgments, judged_only := false,
        positions := true) AS TABLE
    SELECT user_id, has_judgments, has_ranking,
           CASE WHEN judged_only THEN list_where(ranked, kept) ELSE ranked END AS ranked,
           CASE WHEN judged_only THEN ndcg_first_positions(list_where(ranks, kept)) ELSE ranks END
               AS ranks,
           CASE WHEN judged_only THEN list_where(found, kept) ELSE found END AS found, placed,
           placed_ranks,
           judged, relevances, gains, relevant, num_relevant, ideal, ideal_depth
    FROM (SELECT *, CASE WHEN judged_only
                         THEN list_transform(found, lambda p: coalesce(relevances[p] >= 0, false))
                    END AS kept
          -- (placed_ranks and reversed columns below the check, which reads rather than makes them)
          FROM (SELECT *, CASE WHEN NOT (positions OR judged_only)
                               THEN ndcg_placed_ranks(placed) END AS placed_ranks,
                          CASE WHEN NOT (positions OR judged_only) THEN list_reverse(ranked) END
                              AS reversed
          FROM (SELECT coalesce(j.user_id, r.user_id) AS user_id,
                       j.user_id IS NOT NULL AS has_judgments, r.user_id IS NOT NULL AS has_ranking,
                       r.items AS ranked, r.ranks,
                       CASE WHEN positions OR judged_only THEN ndcg_judged_at(r.items, j.items) END
                           AS found,
                       CASE WHEN NOT (positions OR judged_only)
                            THEN ndcg_placed(j.items, r.items) END AS placed,
                       j.items AS judged, j.relevances, j.gains, j.relevant, j.num_relevant, j.ideal,
                       j.ideal_depth
                FROM query_table(judgments) AS j
                FULL OUTER JOIN query_table(rankings) AS r ON r.user_id = j.user_id))
          WHERE CASE WHEN positions OR judged_only THEN ndcg_ranked_once(user_id, found, judged)
                     ELSE ndcg_placed_once(user_id, placed_ranks, ranked, reversed, judged) END);

-- ndcg_by_position(width, judged_only, ties, position_gains): whether ndcg_user_gains finds the
-- judged items position by position down each ranking (ndcg_judged_at), as the gain at each
-- position (position_gains), the fixed-width lists, judged_only and ties 'average' read them;
-- else from the judged side (ndcg_placed): whole rankings whose readers read only the few
-- judged items (BENCHMARKS.md, "trec_eval's measure set").
CREATE OR REPLACE TEMP MACRO ndcg_by_position(width, judged_only, ties, position_gains) AS
    position_gains OR width IS NOT NULL OR judged_only OR ties = 'average';

-- ndcg_user_gains(rankings, judgments, width, judged_only, ties, position_gains): one row per
-- user of either side, with what the metrics read. Returns user_id, has_judgments, has_ranking,
-- length (the ranking's length, as judged_only counts it; 0 without one), gains (the gain at
-- each position, ties averaged with ties 'average', cut or padded with zeros to width
-- positions; NULL width: every position; NULL when position_gains is false: a caller that reads
-- none), num_relevant (R: how many of the user's judgments are relevant),
-- num_nonrelevant (N: how many are >= 0 and not relevant), ideal (the user's positive gains,
-- best first, cut or padded to width), the edge's ideal_depth, judged and relevances (the
-- user's judged items and their relevances, for the checks of a metric that reads them) and
-- every_ideal (ndcg_every_ideal: never cut); then the judged ranked items, in rank order (ties
-- as ranked): judged_ranks (ndcg_judged_ranks), judged_gains, judged_relevances and
-- judged_relevant (each one's gain, relevance and relevant flag), and from them relevant_ranks
-- and nonrelevant_ranks (the positions of the relevant ones, and of those judged not relevant
-- with a relevance >= 0).
CREATE OR REPLACE TEMP MACRO ndcg_user_gains(rankings, judgments, width := NULL,
        judged_only := false, ties := 'trec', position_gains := true) AS TABLE
    SELECT user_id, has_judgments, has_ranking, length, gains, num_relevant, num_nonrelevant,
           ideal, ideal_depth, judged, relevances, every_ideal, judged_ranks, judged_gains,
           judged_relevances, judged_relevant,
           ndcg_ranks_where(judged_ranks, judged_relevant) AS relevant_ranks,
           ndcg_ranks_where(judged_ranks, ndcg_judged_nonrelevant(judged_relevances,
                                                                  judged_relevant))
               AS nonrelevant_ranks
    FROM (SELECT *, coalesce(list_select(judgment_gains, judged_at), []::DOUBLE[]) AS judged_gains,
                 coalesce(list_select(relevances, judged_at), []) AS judged_relevances,
                 coalesce(list_select(relevant, judged_at), []::BOOLEAN[]) AS judged_relevant
          FROM (SELECT user_id, has_judgments, has_ranking, coalesce(len(ranked), 0) AS length,
                       CASE WHEN position_gains
                            THEN ndcg_fit(CASE WHEN tie_means IS NOT NULL
                                               THEN ndcg_tied_gains(ranks, tie_starts, tie_means)
                                               ELSE gains_at END, width) END AS gains,
                       coalesce(num_relevant, 0) AS num_relevant,
                       coalesce(list_count(list_filter(ndcg_judged_nonrelevant(relevances,
                                                                               relevant),
                                                       lambda nonrelevant: nonrelevant)), 0)
                           AS num_nonrelevant,
                       ndcg_fit(ideal, width) AS ideal, ideal_depth, judged, relevances,
                       ndcg_every_ideal(ideal, ideal_depth, gains) AS every_ideal,
                       judged_ranks, judged_at, gains AS judgment_gains, relevant
                -- with ties 'average', the tie groups of a ranking that has one (without, each
                -- position is a group of one: the gains as they are)
                FROM (SELECT *, CASE WHEN tie_starts IS NOT NULL
                                     THEN ndcg_tie_means(gains_at, tie_starts) END AS tie_means
                      FROM (SELECT *,
                                   ndcg_gains_at(found, gains) AS gains_at,
                                   CASE WHEN ties = 'average'
                                             AND list_unique(ranks) < len(ranks)
                                        THEN ndcg_tie_starts(ranks) END AS tie_starts
                            -- the judged ranked items, from found, or from placed where made
                            FROM (SELECT *, CASE WHEN placed IS NULL THEN ndcg_judged_ranks(found)
                                                 ELSE placed_ranks END AS judged_ranks,
                                         CASE WHEN placed IS NULL THEN ndcg_judged_indexes(found)
                                              ELSE ndcg_placed_indexes(placed, placed_ranks) END
                                             AS judged_at
                                  FROM ndcg_ranked_judged(rankings, judgments, judged_only,
                                      ndcg_by_position(width, judged_only, ties,
                                                       position_gains)))))
                WHERE ndcg_option('ties', ties, ['trec', 'average'])));

-- ndcg_dcg_all(gains): DCG of a whole list of gains (no cutoff), each at its position: the dot
-- product with the discounts of its positions, cut from those of positions 1 .. 1024 (a constant
-- DuckDB computes once: a log per position and row cost 8x as much; BENCHMARKS.md, "Whole
-- rankings"); a longer list is discounted position by position.
CREATE OR REPLACE TEMP MACRO ndcg_dcg_all(gains) AS
    coalesce(CASE WHEN len(gains) <= 1024
                  THEN list_dot_product(gains, list_resize(ndcg_discounts(1024, 1024), len(gains)))
                  ELSE list_sum(list_transform(gains, lambda gain, i: ndcg_dcg(gain, i))) END, 0.0);

-- ndcg_dcg_at(gains, discounts, depth, width): DCG@k of a list of gains, with the cutoff's
-- discounts (ndcg_discounts) and depth (k; no cutoff: the largest BIGINT). width is what
-- ndcg_user_gains fitted the gains to (ndcg_width of the cutoffs): then the gains and the
-- discounts have one length, and DCG is their dot product. With a NULL width, each position is
-- discounted row by row. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_dcg_at(gains, discounts, depth, width) AS
    CASE WHEN width IS NOT NULL THEN list_dot_product(gains, discounts)
         ELSE ndcg_dcg_all(list_slice(gains, 1, depth)) END;

-- ndcg_ideal_dcg(ideal, discounts, depth, width, length, idcg_cutoff): IDCG@k (see ndcg_dcg_at):
-- the DCG of the ideal gains (best first), or with idcg_cutoff 'list' of the first `length` of
-- them (the ranking's length, so that the cutoff is min(k, length)). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_dcg(ideal, discounts, depth, width, length, idcg_cutoff) AS
    ndcg_dcg_at(CASE WHEN idcg_cutoff = 'list' THEN ndcg_fit(ideal[1:length], width) ELSE ideal END,
                discounts, depth, width);

-- ndcg_ratio(dcg, idcg): NDCG from DCG and IDCG: 0 when IDCG is 0.
CREATE OR REPLACE TEMP MACRO ndcg_ratio(dcg, idcg) AS
    CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END;

-- ndcg_sum_finite(user_id, k, name, total, largest_gain): true when total, a user's sum of
-- gains (DCG, IDCG or CG) at cutoff k, is a finite number; otherwise (finite gains that add up
-- past the largest DOUBLE) stops naming the user, the sum and the largest gain (the user's first
-- ideal gain).
CREATE OR REPLACE TEMP MACRO ndcg_sum_finite(user_id, k, name, total, largest_gain) AS
    ndcg_require(isfinite(total),
        'relevance: user ' || ndcg_show(user_id) || ': ' || name || '@'
        || coalesce(k::VARCHAR, 'all') || ' adds up to ' || ndcg_show(total)
        || ', past what a DOUBLE holds (about ±1.8e308), from gains up to '
        || ndcg_show(largest_gain) || ' (--gain, --gain-map): use smaller relevance values');

-- ndcg_ideal_covers(ideal_depth, ks): true when judgments whose ideal gains were cut at
-- ideal_depth (NULL: not cut) hold enough of them for every cutoff in ks; otherwise stops, since
-- the ideal DCG would come out too small.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_covers(ideal_depth, ks) AS
    ndcg_require(ideal_depth IS NULL OR (list_count(ks) = len(ks) AND ideal_depth >= list_max(ks)),
                 'judgments: their ideal gains were cut at ideal_depth ' || ndcg_show(ideal_depth)
                 || ', below the cutoff '
                 || CASE WHEN list_count(ks) < len(ks) THEN 'all' ELSE list_max(ks)::VARCHAR END
                 || ': give ndcg_judgments an ideal_depth of at least the largest cutoff, or NULL');

-- ndcg_cutoffs(ks): the cutoffs ks (see ndcg_ks) as a table: k (NULL: no cutoff), depth (k, or
-- the largest BIGINT for no cutoff) and discounts (ndcg_discounts at k over ndcg_width(ks)
-- positions; NULL when that is NULL), one row per distinct cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_cutoffs(ks) AS TABLE
    SELECT k, coalesce(k, 9223372036854775807) AS depth,
           CASE WHEN ndcg_width(ks) IS NOT NULL THEN ndcg_discounts(k, ndcg_width(ks)) END
               AS discounts
    FROM (SELECT DISTINCT unnest(ndcg_ks(ks)) AS k);

-- ndcg_user_scores(rankings, judgments, ks, idcg_cutoff, judged_only, ties): every user of either
-- side, with their scores at each cutoff. Returns user_id, k (NULL for no cutoff), dcg, idcg,
-- ndcg, has_judgments and has_ranking (the user has judgments; has a ranking, even an empty
-- one): one row per user and cutoff. ks is a BIGINT list (see ndcg_ks); judgments as
-- ndcg_judgments returns them, with ideal_depth at least the largest cutoff. Stops on a DCG or
-- ideal DCG that adds up past the largest DOUBLE (ndcg_sum_finite).
CREATE OR REPLACE TEMP MACRO ndcg_user_scores(rankings, judgments, ks := [10],
        idcg_cutoff := 'k', judged_only := false, ties := 'trec') AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg_ratio(dcg, idcg) AS ndcg, has_judgments, has_ranking
    FROM (SELECT u.user_id, c.k, ndcg_dcg_at(u.gains, c.discounts, c.depth, ndcg_width(ks)) AS dcg,
                 ndcg_ideal_dcg(u.ideal, c.discounts, c.depth, ndcg_width(ks), u.length,
                                idcg_cutoff) AS idcg,
                 u.ideal[1] AS largest_gain, u.has_judgments, u.has_ranking
          FROM ndcg_user_gains(rankings, judgments, width := ndcg_width(ks),
                               judged_only := judged_only, ties := ties) AS u
          CROSS JOIN ndcg_cutoffs(ks) AS c
          WHERE ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
            AND ndcg_ideal_covers(u.ideal_depth, ks))
    WHERE ndcg_sum_finite(user_id, k, 'ideal DCG', idcg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'DCG', dcg, largest_gain);

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
