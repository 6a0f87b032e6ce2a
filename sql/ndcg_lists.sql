-- One literal ranking, as scalar macros over DuckDB lists.

-- ndcg_list_cutoff(k): ndcg_cutoff(k), stopping on anything that is not a cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_list_cutoff(k) AS
    CASE WHEN ndcg_cutoff(k) < 1
         THEN error('ndcg-duck: cutoff k must be an integer >= 1 or ''all'', not ' || k::VARCHAR)
         ELSE ndcg_cutoff(k) END;

-- ndcg_list_values(relevances, parameter): the relevance values as numbers (ndcg_relevance_number:
-- true counts 1, false 0); stops on a NULL one, naming the parameter and its position (as a NULL
-- relevance is an error in the CLI), and on values of another type.
CREATE OR REPLACE TEMP MACRO ndcg_list_values(relevances, parameter) AS
    CASE WHEN list_count(relevances) < len(relevances)
         THEN error('ndcg-duck: ' || parameter || ': the relevance at position '
                    || list_position(list_transform(relevances, lambda r: r IS NULL), true)
                    || ' is NULL: give a number (0 for an item without a judgment)')
         ELSE list_transform(relevances,
                             lambda r: ndcg_relevance_number(r, parameter || ': a value')) END;

-- ndcg_list_dcg(relevances, k, gain): DCG@k of relevance values listed in rank order. Stops on
-- a NULL value (ndcg_list_values).
CREATE OR REPLACE TEMP MACRO ndcg_list_dcg(relevances, k := 10, gain := 'linear') AS
    coalesce(list_sum(list_transform(
        list_slice(ndcg_list_values(relevances, 'relevances'), 1,
                   coalesce(ndcg_list_cutoff(k), len(relevances))),
        lambda r, i: ndcg_dcg(ndcg_gain(r, gain), i))), 0.0);

-- ndcg_list_ideal(relevances, ideal): the values ndcg_list's ideal DCG is built from, checked
-- and best first: ideal, or when it is NULL the listed relevances themselves (and a message then
-- names relevances, whichever of the two DCGs DuckDB computes first).
CREATE OR REPLACE TEMP MACRO ndcg_list_ideal(relevances, ideal) AS
    list_sort(ndcg_list_values(coalesce(ideal, relevances),
                               CASE WHEN ideal IS NULL THEN 'relevances' ELSE 'ideal' END), 'DESC');

-- ndcg_list(relevances, ideal, k, gain): NDCG@k of relevance values listed in rank order.
-- ideal: every judged relevance of that user, in any order (NULL: the listed values themselves);
-- it is sorted best first. Returns 0 when the ideal DCG is 0.
CREATE OR REPLACE TEMP MACRO ndcg_list(relevances, ideal := NULL, k := 10, gain := 'linear') AS
    coalesce(ndcg_list_dcg(relevances, k, gain)
             / nullif(ndcg_list_dcg(ndcg_list_ideal(relevances, ideal), k, gain), 0), 0.0);

-- ndcg_items_repeated(items): the items of a list that repeat an earlier one, in order.
CREATE OR REPLACE TEMP MACRO ndcg_items_repeated(items) AS
    list_filter(items, lambda item, i: list_position(items, item) < i);

-- ndcg_items_checked(items, truth, k): items as given, checked against truth as the CLI checks
-- a ranking: stops on a NULL item, on a NULL relevance in truth, and on a judged item (a key of
-- truth) listed twice among the first k items. A repeated item without a judgment gains 0
-- wherever it is, and passes.
CREATE OR REPLACE TEMP MACRO ndcg_items_checked(items, truth, k) AS
    CASE WHEN list_count(items) < len(items)
         THEN error('ndcg-duck: items: the item at position '
                    || list_position(list_transform(items, lambda i: i IS NULL), true)
                    || ' is NULL: drop it or fill it in')
         WHEN list_count(map_values(truth)) < len(map_values(truth))
         THEN error('ndcg-duck: truth: item ' || ndcg_show(list_filter(map_keys(truth),
                        lambda key, i: map_values(truth)[i] IS NULL)[1])
                    || ' has relevance NULL: give a number')
         WHEN len(ndcg_items_repeated(list_filter(
                  list_slice(items, 1, coalesce(ndcg_list_cutoff(k), len(items))),
                  lambda item: map_contains(truth, item)))) > 0
         THEN error('ndcg-duck: items: item ' || ndcg_show(ndcg_items_repeated(list_filter(
                        list_slice(items, 1, coalesce(ndcg_list_cutoff(k), len(items))),
                        lambda item: map_contains(truth, item)))[1])
                    || ' is listed twice: remove the repeat (a judged item counts once)')
         ELSE items END;

-- ndcg_items(items, truth, k, gain): NDCG@k of a ranked LIST of item ids against truth, a MAP from
-- item id to relevance (items not in it have relevance 0). The ideal list is all of truth.
-- Stops on a NULL item, a NULL relevance in truth, and an item of truth listed twice among the
-- first k (ndcg_items_checked): it would count twice and NDCG could pass 1.
CREATE OR REPLACE TEMP MACRO ndcg_items(items, truth, k := 10, gain := 'linear') AS
    ndcg_list(list_transform(ndcg_items_checked(items, truth, k),
                             lambda item: coalesce(ndcg_relevance_number(truth[item], 'truth: a value'), 0)),
              ndcg_list_values(map_values(truth), 'truth'), k, gain);
