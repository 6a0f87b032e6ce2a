-- Option values: turn what a user writes into what the core computes with.

-- ndcg_cutoff(k): a cutoff written as an integer >= 1, or 'all' / NULL for no cutoff.
-- Returns a BIGINT, NULL meaning "no cutoff", or 0 for anything that is not a cutoff (which
-- ndcg_cutoffs rejects). Free of side effects, so DuckDB folds it for a constant k.
CREATE OR REPLACE TEMP MACRO ndcg_cutoff(k) AS
    CASE WHEN k IS NULL OR lower(k::VARCHAR) = 'all' THEN NULL
         ELSE coalesce(TRY_CAST(k::VARCHAR AS BIGINT), 0) END;

-- ndcg_option(name, value, allowed): true when value is one of the list allowed; otherwise stops
-- the query naming the option. Checked once per query, not per row.
CREATE OR REPLACE TEMP MACRO ndcg_option(name, value, allowed) AS
    ndcg_require(list_contains(allowed, value), name || ' must be one of '
                 || array_to_string(allowed, ', ') || ', not ' || ndcg_show(value));

-- ndcg_gain(relevance, gain): the gain of one judged relevance value.
-- gain is 'linear' (rel), 'exponential' (2^rel - 1) or 'binary' (1 if rel > 0).
-- Relevance <= 0 or NULL gains 0; fractional relevance is used exactly. Returns a DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_gain(relevance, gain) AS
    CASE
        WHEN relevance IS NULL OR relevance <= 0 THEN 0.0
        WHEN gain = 'exponential' THEN pow(2.0, relevance::DOUBLE) - 1.0
        WHEN gain = 'binary' THEN 1.0
        ELSE relevance::DOUBLE
    END;

-- ndcg_discount(rank): the position discount 1 / log2(rank + 1) for a 1-based rank.
CREATE OR REPLACE TEMP MACRO ndcg_discount(rank) AS 1.0 / log2(rank + 1);

-- ndcg_depth(ks, max_depth, judged_only, ties): how many items of each ranking to read: the
-- largest cutoff in ks (a BIGINT list, NULL = no cutoff), no more than max_depth. NULL means the
-- whole ranking (a cutoff of 'all' and no max_depth). With judged_only or ties 'average' the
-- items below the largest cutoff can count too (they move up, or share a tie that reaches above
-- the cutoff): then only max_depth cuts.
CREATE OR REPLACE TEMP MACRO ndcg_depth(ks, max_depth, judged_only := false, ties := 'trec') AS
    CASE WHEN judged_only OR ties = 'average' OR list_count(ks) < len(ks) THEN max_depth::BIGINT
         ELSE least(list_max(ks), coalesce(max_depth::BIGINT, 9223372036854775807)) END;

-- ndcg_top_n(ks): the largest cutoff in ks (a BIGINT list, NULL = no cutoff) when every cutoff is
-- a number no larger than 100 (small enough for DuckDB's top-N aggregate, which keeps room for n
-- values per group), else NULL.
CREATE OR REPLACE TEMP MACRO ndcg_top_n(ks) AS
    CASE WHEN list_count(ks) = len(ks) AND list_max(ks) <= 100 THEN list_max(ks) END;
