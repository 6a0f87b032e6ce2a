-- Per-user and mean NDCG at one cutoff k, for each recommendation layout. rels is always long:
-- user_id, item_id, relevance (make it from lists of relevant items with ndcg_judged_lists).
-- Options, all named: k (integer >= 1 or 'all', default 10), gain ('linear', 'exponential',
-- 'binary'), missing ('zero', 'skip'), idcg_cutoff ('k', 'list'), empty ('zero', 'skip'),
-- max_depth (only the first N items of each ranking count; NULL: all).

-- ndcg_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
-- Returns user_id, dcg, idcg, ndcg for each evaluated user.
CREATE OR REPLACE TEMP MACRO ndcg_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth)))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, [ndcg_cutoff(k)], gain, missing, idcg_cutoff, empty);

-- ndcg_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth)))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, [ndcg_cutoff(k)], gain, missing, idcg_cutoff, empty);

-- ndcg_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by score
-- descending, ties broken by item id descending (as text).
CREATE OR REPLACE TEMP MACRO ndcg_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_scores(recs, depth := ndcg_depth([ndcg_cutoff(k)], max_depth)))
    SELECT user_id, dcg, idcg, ndcg
    FROM ndcg_scores('ndcg_ranked_', rels, [ndcg_cutoff(k)], gain, missing, idcg_cutoff, empty);

-- ndcg_mean(recs, rels, ...) and its _ranks and _scores twins: one row, ndcg (the mean NDCG
-- over evaluated users; NULL when none) and users (how many were evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_mean(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    SELECT avg(ndcg) AS ndcg, count(*) AS users
    FROM ndcg_per_user(recs, rels, k := k, gain := gain, missing := missing,
                       idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth);

CREATE OR REPLACE TEMP MACRO ndcg_mean_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    SELECT avg(ndcg) AS ndcg, count(*) AS users
    FROM ndcg_per_user_ranks(recs, rels, k := k, gain := gain, missing := missing,
                             idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth);

CREATE OR REPLACE TEMP MACRO ndcg_mean_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL) AS TABLE
    SELECT avg(ndcg) AS ndcg, count(*) AS users
    FROM ndcg_per_user_scores(recs, rels, k := k, gain := gain, missing := missing,
                              idcg_cutoff := idcg_cutoff, empty := empty, max_depth := max_depth);
