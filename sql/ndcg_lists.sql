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
