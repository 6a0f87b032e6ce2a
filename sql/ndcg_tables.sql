-- Per-user and mean NDCG at one cutoff k, for each recommendation layout. rels is always long:
-- user_id, item_id, relevance (make it from lists of relevant items with ndcg_judged_lists).
-- Options, all named: k (integer >= 1 or 'all', default 10), gain ('linear', 'exponential',
-- 'binary'), gain_map (a MAP from relevance level to gain, e.g. MAP {1: 3, 2: 9}; other levels
-- gain by `gain`), min_relevance (judgments below it are not relevant: gain 0, out of the ideal
-- list; NULL: none), missing ('zero', 'skip'), idcg_cutoff ('k', 'list'), empty ('zero', 'skip'),
-- max_depth (only the first N items of each ranking count; NULL: all), judged_only (true: take
-- unjudged items out of each ranking first) and, for rankings by score only, ties ('trec',
-- 'average'). ndcg_judgments (ndcg_input.sql) and ndcg_scores (ndcg_core.sql) say what each
-- one does. Every wrapper checks rels as the CLI does, through the judgments edge, and each option
-- before any other macro reads it (ndcg_choice, ndcg_flag, ndcg_gain_map, ndcg_k: a wrong value of
-- any type stops naming the option and the values it takes).

-- ndcg_per_user_of(rankings, rels, k, ...): what the wrappers share: rels through the judgments
-- edge, then ndcg_scores at the one cutoff k over rankings (a ranking edge's result, by name).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user_of(rankings, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, min_relevance := NULL, ties := 'trec') AS TABLE
    WITH ndcg_judgments_ AS (
        FROM ndcg_judgments(rels, gain := ndcg_choice('gain', gain, ['linear', 'exponential', 'binary']),
                            gain_map := ndcg_gain_map(gain_map), min_relevance := min_relevance,
                            ideal_depth := ndcg_width(ndcg_k(k))))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                     missing := ndcg_choice('missing', missing, ['zero', 'skip']),
                     idcg_cutoff := ndcg_choice('idcg_cutoff', idcg_cutoff, ['k', 'list']),
                     empty := ndcg_choice('empty', empty, ['zero', 'skip']),
                     judged_only := ndcg_flag('judged_only', judged_only),
                     ties := ndcg_choice('ties', ties, ['trec', 'average']));

-- ndcg_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_lists(recs, depth := ndcg_depth(ndcg_k(k), max_depth,
                                                ndcg_flag('judged_only', judged_only))))
    FROM ndcg_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                          idcg_cutoff := idcg_cutoff, empty := empty, gain_map := gain_map,
                          judged_only := judged_only, min_relevance := min_relevance);

-- ndcg_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (
        FROM ndcg_ranked_ranks(recs, depth := ndcg_depth(ndcg_k(k), max_depth,
                                                ndcg_flag('judged_only', judged_only))))
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
        FROM ndcg_ranked_scores(recs, depth := ndcg_depth(ndcg_k(k), max_depth,
                                    ndcg_flag('judged_only', judged_only),
                                    ndcg_choice('ties', ties, ['trec', 'average'])),
                                ties := ndcg_choice('ties', ties, ['trec', 'average'])))
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
