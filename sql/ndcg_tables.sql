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
