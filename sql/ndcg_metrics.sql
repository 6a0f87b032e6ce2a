-- The metrics people report beside NDCG, from the same per-user hits the core finds.
--
-- For one user: the ranked items, best first, at ranks 1, 2, ...; g_i, the gain of the item at
-- rank i (0 if it is not judged); "relevant" means relevance > 0, or >= min_relevance when given
-- (trec_eval -l); R, the user's number of relevant judgments, ranked or not; p_1 < p_2 < ...,
-- the ranks of the relevant ranked items; found(k) = #{j : p_j <= k}, how many are in the first
-- k. With no cutoff, k is the whole ranking.
--   cg@k        = sum_{i <= k} g_i              cumulated gain (Jarvelin and Kekalainen 2002, CG)
--   precision@k = found(k) / k                  trec_eval P_k: a ranking shorter than k counts
--                                               the missing ranks as not relevant
--   recall@k    = found(k) / R                  trec_eval recall_k
--   hit_rate@k  = 1 if found(k) > 0, else 0     trec_eval success_k (Tomlinson)
--   mrr@k       = 1 / p_1 if p_1 <= k, else 0   trec_eval recip_rank, ir_measures RR@k
--   map@k       = sum_{j <= found(k)} (j / p_j) / R
--                 the precision at each relevant ranked item (j / p_j = precision@p_j), summed
--                 and divided by every relevant judgment: trec_eval map and map_cut_k (Buckley
--                 and Voorhees, "Retrieval System Evaluation", 2005)
--   r_precision = found(R) / R                  trec_eval Rprec: precision at rank R
--   num_rel     = R; num_rel_ret = found(whole ranking)        trec_eval num_rel, num_rel_ret
-- Every ratio is 0 when its denominator (R) is 0, as in trec_eval, which evaluates such a user
-- all the same. DCG, ideal DCG and NDCG are the core's (ndcg_core.sql).
-- The ranks are those of the core: after --max-depth and --judged-only (the items below an
-- unjudged item move up). With ties 'average', cg@k gives each item of a tie group the group's
-- mean gain at each of its ranks within k, as the core's DCG does (McSherry and Najork 2008);
-- the metrics that count relevant items see tied items in trec_eval's order (item id
-- descending), since an average over orders has no single rank of the first relevant item.

-- ndcg_found(ranks, k): how many of `ranks` (the ranks of the relevant ranked items, in
-- ascending order) are <= k (a BIGINT; no cutoff: the largest BIGINT). Returns a BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_found(ranks, k) AS
    coalesce(len(list_filter(ranks, lambda p: p <= k)), 0);

-- ndcg_over_r(count, num_rel): count / R, 0 when the user has no relevant judgment (R = 0).
CREATE OR REPLACE TEMP MACRO ndcg_over_r(count, num_rel) AS
    CASE WHEN num_rel > 0 THEN count / num_rel ELSE 0.0 END;

-- ndcg_precision(found, k): precision@k from found(k).
CREATE OR REPLACE TEMP MACRO ndcg_precision(found, k) AS found / k;

-- ndcg_hit_rate(found): 1.0 if a relevant item is among those counted, else 0.0.
CREATE OR REPLACE TEMP MACRO ndcg_hit_rate(found) AS CASE WHEN found > 0 THEN 1.0 ELSE 0.0 END;

-- ndcg_reciprocal_rank(ranks, found): 1 / the first relevant rank when it is counted, else 0.
CREATE OR REPLACE TEMP MACRO ndcg_reciprocal_rank(ranks, found) AS
    CASE WHEN found > 0 THEN 1.0 / ranks[1] ELSE 0.0 END;

-- ndcg_precisions(ranks): the precision at each relevant ranked item, j / p_j (a DOUBLE list).
CREATE OR REPLACE TEMP MACRO ndcg_precisions(ranks) AS list_transform(ranks, lambda p, j: j / p);

-- ndcg_average_precision(precisions, found, num_rel): map@k from ndcg_precisions and found(k):
-- the first found(k) precisions, summed in rank order, over R.
CREATE OR REPLACE TEMP MACRO ndcg_average_precision(precisions, found, num_rel) AS
    ndcg_over_r(coalesce(list_sum(precisions[1:found]), 0.0), num_rel);

-- ndcg_cg(hits, depth): cg@k from the core's hits (a LIST of {pos, size, gain}: a ranked item
-- that gains something, at rank pos, in a tie group of size items; size 1 without ties) and
-- depth (k; no cutoff: the largest BIGINT). A tie group's gains are shared by its ranks: an
-- item counts gain * (its group's ranks within k) / size.
CREATE OR REPLACE TEMP MACRO ndcg_cg(hits, depth) AS
    coalesce(list_sum(list_transform(list_filter(hits, lambda h: h.pos <= depth),
        lambda h: h.gain * (least(h.pos + h.size - 1, depth) - h.pos + 1) / h.size)), 0.0);

-- ndcg_relevant(relevance, min_relevance): whether a judged relevance counts as relevant:
-- > 0, or >= min_relevance when it is not NULL.
CREATE OR REPLACE TEMP MACRO ndcg_relevant(relevance, min_relevance) AS
    coalesce(CASE WHEN min_relevance IS NULL THEN relevance > 0
                  ELSE relevance >= min_relevance END, false);

-- ndcg_metric_name(metric, k): the name a metric goes by at cutoff k (NULL: none), as the CLI and
-- Python write it: 'precision@10', 'ndcg@all', 'mrr' (mrr and map without a cutoff), and
-- 'r_precision', 'num_rel', 'num_rel_ret' (which have none).
CREATE OR REPLACE TEMP MACRO ndcg_metric_name(metric, k) AS
    CASE WHEN metric IN ('r_precision', 'num_rel', 'num_rel_ret')
              OR (k IS NULL AND metric IN ('mrr', 'map')) THEN metric
         ELSE metric || '@' || coalesce(k::VARCHAR, 'all') END;

-- ndcg_metric_placed(ranked, judged, gain, gain_map, judged_only, ties, unique_judgments): the
-- core's ndcg_placed rows (one per judgment, or one for a user without any) with two more
-- columns: relevance, and rank, the item's own position (in trec_eval's order; NULL: not ranked
-- or, with judged_only, taken out), which the metrics counting relevant items use when ties
-- 'average' gives pos as the tie group's first position.
CREATE OR REPLACE TEMP MACRO ndcg_metric_placed(ranked, judged, gain := 'linear',
        gain_map := NULL, judged_only := false, ties := 'trec', unique_judgments := false) AS TABLE
    SELECT user_id, relevance, item_gain, in_judged, in_ranked, length,
           coalesce(tie, seen_at) AS pos, coalesce(tie_size, 1) AS size, seen_at AS rank
    FROM ndcg_looked_up(ranked, judged, gain, gain_map, ties, unique_judgments)
    WHERE NOT judged_only
    UNION ALL
    SELECT user_id, relevance, item_gain, in_judged, in_ranked,
           count(*) FILTER (WHERE counts) OVER (PARTITION BY user_id) AS length,
           CASE WHEN counts THEN rank() OVER (PARTITION BY user_id, counts ORDER BY place) END,
           CASE WHEN counts THEN count(*) OVER (PARTITION BY user_id, counts, place) END,
           CASE WHEN counts THEN row_number() OVER (PARTITION BY user_id, counts ORDER BY seen_at) END
    FROM (SELECT *, seen_at IS NOT NULL AND relevance >= 0 AS counts,
                 coalesce(tie, seen_at) AS place
          FROM ndcg_looked_up(ranked, judged, gain, gain_map, ties, unique_judgments)
          WHERE judged_only);

-- ndcg_metric_parts(ranked, judged, ks, gain, gain_map, judged_only, ties, unique_judgments,
-- min_relevance): the core's ndcg_user_parts (user_id, in_judged, in_ranked, length, hits, best)
-- with ranks (the ranks of the relevant ranked items, ascending) and num_rel (R).
CREATE OR REPLACE TEMP MACRO ndcg_metric_parts(ranked, judged, ks := [10], gain := 'linear',
        gain_map := NULL, judged_only := false, ties := 'trec', unique_judgments := false,
        min_relevance := NULL) AS TABLE
    WITH placed AS (
        SELECT *, ndcg_relevant(relevance, min_relevance) AS relevant
        FROM ndcg_metric_placed(ranked, judged, gain, gain_map, judged_only, ties,
                                unique_judgments))
    SELECT user_id, bool_or(in_judged) AS in_judged, bool_or(in_ranked) AS in_ranked,
           coalesce(max(length), 0) AS length,
           list({'pos': pos, 'size': size, 'gain': item_gain})
               FILTER (WHERE pos IS NOT NULL AND item_gain <> 0) AS hits,
           max(item_gain, coalesce(ndcg_top_n(ks), 1)) FILTER (WHERE item_gain > 0) AS best,
           list(rank) FILTER (WHERE rank IS NOT NULL AND relevant) AS ranks,
           count(*) FILTER (WHERE relevant) AS num_rel
    FROM placed
    WHERE ndcg_top_n(ks) IS NOT NULL
    GROUP BY user_id
    UNION ALL
    SELECT user_id, bool_or(in_judged), bool_or(in_ranked), coalesce(max(length), 0),
           list({'pos': pos, 'size': size, 'gain': item_gain})
               FILTER (WHERE pos IS NOT NULL AND item_gain <> 0),
           list(item_gain ORDER BY item_gain DESC) FILTER (WHERE item_gain > 0),
           list(rank) FILTER (WHERE rank IS NOT NULL AND relevant),
           count(*) FILTER (WHERE relevant)
    FROM placed
    WHERE ndcg_top_n(ks) IS NULL
    GROUP BY user_id;

-- ndcg_user_metrics(ranked, judged, ks, gain, idcg_cutoff, gain_map, judged_only, ties,
-- unique_judgments, min_relevance): every user of either side, with every metric at each cutoff,
-- in one pass. Returns user_id, k (NULL: no cutoff), judged, ranked (as ndcg_user_scores), dcg,
-- idcg, ndcg (as ndcg_user_scores), cg, precision (NULL without a cutoff), recall, hit_rate,
-- mrr, map, and on the row of the first cutoff in ks only (NULL on the others), r_precision,
-- num_rel and num_rel_ret, which have no cutoff: one row per user and cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_user_metrics(ranked, judged, ks := [10], gain := 'linear',
        idcg_cutoff := 'k', gain_map := NULL, judged_only := false, ties := 'trec',
        unique_judgments := false, min_relevance := NULL) AS TABLE
WITH
    cutoffs AS (
        SELECT k, coalesce(k, 9223372036854775807) AS depth
        FROM ndcg_cutoffs(ks)
        WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
          AND ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
          AND ndcg_option('ties', ties, ['trec', 'average'])
    ),
    parts AS (
        -- hits and ranks sorted by position, so each sum adds in the same order however the
        -- rows arrived
        SELECT user_id, in_judged, in_ranked, length, list_sort(hits) AS hits,
               list_transform(best, lambda g, i: g * ndcg_discount(i)) AS ideal,
               coalesce(list_sort(ranks), []) AS ranks, num_rel
        FROM ndcg_metric_parts(ranked, judged, ks, gain, gain_map, judged_only, ties,
                               unique_judgments, min_relevance)
    ),
    user_parts AS (
        SELECT *, ndcg_precisions(ranks) AS precisions,
               ndcg_found(ranks, num_rel) AS found_r
        FROM parts
    ),
    sums AS (
        SELECT p.user_id, c.k, p.in_judged, p.in_ranked, p.ranks, p.precisions, p.num_rel,
               p.found_r, len(p.ranks) AS found_all,
               ndcg_found(p.ranks, c.depth) AS found, ndcg_cg(p.hits, c.depth) AS cg,
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
        FROM user_parts AS p CROSS JOIN cutoffs AS c
    )
SELECT user_id, k, in_judged AS judged, in_ranked AS ranked, dcg, idcg,
       CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END AS ndcg, cg,
       CASE WHEN k IS NOT NULL THEN ndcg_precision(found, k) END AS precision,
       ndcg_over_r(found, num_rel) AS recall, ndcg_hit_rate(found) AS hit_rate,
       ndcg_reciprocal_rank(ranks, found) AS mrr,
       ndcg_average_precision(precisions, found, num_rel) AS map,
       CASE WHEN first THEN ndcg_over_r(found_r, num_rel) END AS r_precision,
       CASE WHEN first THEN num_rel END AS num_rel,
       CASE WHEN first THEN found_all END AS num_rel_ret
FROM (SELECT *, k IS NOT DISTINCT FROM ks[1] AS first FROM sums);

-- ndcg_metrics_evaluated(user_metrics, missing, empty): the rows of a ndcg_user_metrics result
-- that count, as ndcg_evaluated chooses them (missing and empty apply to every metric: empty
-- 'skip' leaves out the users whose ideal DCG is 0). Returns its columns but judged and ranked.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_evaluated(user_metrics, missing := 'zero',
        empty := 'zero') AS TABLE
    SELECT * EXCLUDE (judged, ranked)
    FROM query_table(user_metrics)
    WHERE judged
      AND (missing = 'zero' OR ranked)
      AND (empty = 'zero' OR idcg > 0)
      AND (SELECT ndcg_option('missing', missing, ['zero', 'skip'])
                  AND ndcg_option('empty', empty, ['zero', 'skip']));

-- ndcg_metric_values(metrics): a ndcg_metrics_evaluated result as one row per user, metric and
-- cutoff: user_id, metric (its name, as ndcg_metric_name writes it), k (NULL: none) and value
-- (a DOUBLE; NULL values, such as precision without a cutoff, leave no row).
CREATE OR REPLACE TEMP MACRO ndcg_metric_values(metrics) AS TABLE
    SELECT user_id, ndcg_metric_name(metric, k) AS metric,
           CASE WHEN metric NOT IN ('r_precision', 'num_rel', 'num_rel_ret') THEN k END AS k,
           value
    FROM (UNPIVOT (SELECT user_id, k, dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map,
                          r_precision, num_rel::DOUBLE AS num_rel,
                          num_rel_ret::DOUBLE AS num_rel_ret
                   FROM query_table(metrics))
          ON dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map, r_precision, num_rel,
             num_rel_ret
          INTO NAME metric VALUE value);

-- ndcg_metric_scores(ranked, rels, ks, gain, missing, idcg_cutoff, empty, gain_map, judged_only,
-- ties, unique_judgments, min_relevance): every metric of each evaluated user at each cutoff,
-- as ndcg_scores does for NDCG: ranked as an edge of ndcg_input.sql returns it, rels as
-- ndcg_judged_checked returns it. Returns user_id, metric, k, value (see ndcg_metric_values).
CREATE OR REPLACE TEMP MACRO ndcg_metric_scores(ranked, judged, ks := [10], gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, ties := 'trec', unique_judgments := false,
        min_relevance := NULL) AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_metrics(ranked, judged, ks := ks, gain := gain,
                               idcg_cutoff := idcg_cutoff, gain_map := gain_map,
                               judged_only := judged_only, ties := ties,
                               unique_judgments := unique_judgments,
                               min_relevance := min_relevance)),
    ndcg_evaluated_ AS (FROM ndcg_metrics_evaluated('ndcg_all_', missing := missing, empty := empty))
    FROM ndcg_metric_values('ndcg_evaluated_');

-- ndcg_metrics_summary(metrics): a ndcg_metrics_evaluated result summed up per cutoff: k, the
-- mean over users of each metric (fsum / count of its values), the sums of num_rel and
-- num_rel_ret (as trec_eval and ir_measures add up counts; NULL but on the first cutoff's row),
-- and users, how many were evaluated.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summary(metrics) AS TABLE
    SELECT k, fsum(dcg) / count(dcg) AS dcg, fsum(idcg) / count(idcg) AS idcg,
           fsum(ndcg) / count(ndcg) AS ndcg, fsum(cg) / count(cg) AS cg,
           fsum(precision) / count(precision) AS precision, fsum(recall) / count(recall) AS recall,
           fsum(hit_rate) / count(hit_rate) AS hit_rate, fsum(mrr) / count(mrr) AS mrr,
           fsum(map) / count(map) AS map, fsum(r_precision) / count(r_precision) AS r_precision,
           sum(num_rel) AS num_rel, sum(num_rel_ret) AS num_rel_ret, count(*) AS users
    FROM query_table(metrics)
    GROUP BY k;

-- Every metric per user and on average at one cutoff k, for each recommendation layout, as
-- ndcg_tables.sql does for NDCG: the same recs and rels, and the same options (k, gain,
-- gain_map, missing, idcg_cutoff, empty, max_depth, judged_only and, for rankings by score,
-- ties), plus min_relevance (judgments >= min_relevance count as relevant; NULL: > 0).
-- The metrics are those at k (dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map;
-- k := 'all' gives each without a cutoff, and no precision) and r_precision, num_rel and
-- num_rel_ret, which read each whole ranking (up to max_depth).

-- ndcg_metrics_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
-- Returns user_id, metric (e.g. 'recall@10', 'r_precision'), value: one row per evaluated user
-- and metric.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := max_depth)),
         ndcg_judged_ AS (FROM ndcg_judged_checked(rels))
    SELECT user_id, metric, value
    FROM ndcg_metric_scores('ndcg_ranked_', 'ndcg_judged_', ks := [ndcg_cutoff(k)], gain := gain,
                            missing := missing, idcg_cutoff := idcg_cutoff, empty := empty,
                            gain_map := gain_map, judged_only := judged_only,
                            min_relevance := min_relevance);

-- ndcg_metrics_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks(recs, depth := max_depth)),
         ndcg_judged_ AS (FROM ndcg_judged_checked(rels))
    SELECT user_id, metric, value
    FROM ndcg_metric_scores('ndcg_ranked_', 'ndcg_judged_', ks := [ndcg_cutoff(k)], gain := gain,
                            missing := missing, idcg_cutoff := idcg_cutoff, empty := empty,
                            gain_map := gain_map, judged_only := judged_only,
                            min_relevance := min_relevance);

-- ndcg_metrics_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by
-- score descending, equal scores by item id descending as text; ties 'average' averages the
-- DCG family over each tie (the other metrics keep that order).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_scores(recs, depth := max_depth, ties := ties)),
         ndcg_judged_ AS (FROM ndcg_judged_checked(rels))
    SELECT user_id, metric, value
    FROM ndcg_metric_scores('ndcg_ranked_', 'ndcg_judged_', ks := [ndcg_cutoff(k)], gain := gain,
                            missing := missing, idcg_cutoff := idcg_cutoff, empty := empty,
                            gain_map := gain_map, judged_only := judged_only, ties := ties,
                            min_relevance := min_relevance);

-- ndcg_metrics_summed(per_user): the rows of one of the three macros above summed up: metric,
-- value (the mean over the users; for num_rel and num_rel_ret the sum) and users (how many).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summed(per_user) AS TABLE
    SELECT metric,
           fsum(value) / CASE WHEN metric IN ('num_rel', 'num_rel_ret') THEN 1 ELSE count(*) END
               AS value,
           count(*) AS users
    FROM query_table(per_user)
    GROUP BY metric;

-- ndcg_metrics_mean(recs, rels, ...) and its _ranks and _scores twins: one row per metric:
-- metric, value (the mean over evaluated users; the sum for num_rel and num_rel_ret) and users
-- (how many were evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user(recs, rels, k := k, gain := gain, missing := missing,
                                   idcg_cutoff := idcg_cutoff, empty := empty,
                                   max_depth := max_depth, gain_map := gain_map,
                                   judged_only := judged_only, min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');

CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user_ranks(recs, rels, k := k, gain := gain, missing := missing,
                                         idcg_cutoff := idcg_cutoff, empty := empty,
                                         max_depth := max_depth, gain_map := gain_map,
                                         judged_only := judged_only,
                                         min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');

CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user_scores(recs, rels, k := k, gain := gain, missing := missing,
                                          idcg_cutoff := idcg_cutoff, empty := empty,
                                          max_depth := max_depth, gain_map := gain_map,
                                          judged_only := judged_only, ties := ties,
                                          min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');
