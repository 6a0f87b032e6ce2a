-- Option values: turn what a user writes into what the core computes with.

-- ndcg_cutoff(k): a cutoff written as an integer >= 1, or 'all' / NULL for no cutoff.
-- Returns a BIGINT, or NULL meaning "no cutoff".
CREATE OR REPLACE TEMP MACRO ndcg_cutoff(k) AS
    CASE
        WHEN k IS NULL OR lower(k::VARCHAR) = 'all' THEN NULL
        WHEN TRY_CAST(k::VARCHAR AS BIGINT) >= 1 THEN k::VARCHAR::BIGINT
        ELSE error('ndcg-duck: cutoff k must be an integer >= 1 or ''all'', not ' || k::VARCHAR)
    END;

-- ndcg_gain(relevance, gain): the gain of one judged relevance value.
-- gain is 'linear' (rel), 'exponential' (2^rel - 1) or 'binary' (1 if rel > 0).
-- Relevance <= 0 or NULL gains 0; fractional relevance is used exactly. Returns a DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_gain(relevance, gain) AS
    CASE
        WHEN gain NOT IN ('linear', 'exponential', 'binary')
            THEN error('ndcg-duck: gain must be linear, exponential or binary, not ' || gain::VARCHAR)
        WHEN relevance IS NULL OR relevance <= 0 THEN 0.0
        WHEN gain = 'linear' THEN relevance::DOUBLE
        WHEN gain = 'exponential' THEN pow(2.0, relevance::DOUBLE) - 1.0
        ELSE 1.0
    END;

-- ndcg_discount(rank): the position discount 1 / log2(rank + 1) for a 1-based rank.
CREATE OR REPLACE TEMP MACRO ndcg_discount(rank) AS 1.0 / log2(rank + 1);

-- ndcg_depth(ks, max_depth, judged_only, ties): how many items of each ranking to read: the
-- largest cutoff, no more than max_depth. NULL means the whole ranking (a cutoff of 'all' and no
-- max_depth). With judged_only or ties 'average' the items below the largest cutoff can count
-- too (they move up, or share a tie that reaches above the cutoff): then only max_depth cuts.
CREATE OR REPLACE TEMP MACRO ndcg_depth(ks, max_depth, judged_only := false, ties := 'trec') AS
    CASE
        WHEN judged_only OR ties = 'average'
             OR list_bool_or(list_transform(ks, lambda k: ndcg_cutoff(k) IS NULL))
            THEN max_depth::BIGINT
        ELSE least(list_max(list_transform(ks, lambda k: ndcg_cutoff(k))),
                   coalesce(max_depth::BIGINT, 9223372036854775807))
    END;
