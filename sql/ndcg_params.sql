-- Option values and the metric's scalar parts: what a user writes becomes what the core
-- computes with, and the formulas of ndcg_core.sql's header as one-line macros.

-- ndcg_cutoff(k): a cutoff written as an integer >= 1, or 'all' / NULL for no cutoff.
-- Returns a BIGINT, NULL meaning "no cutoff", or 0 for anything that is not a cutoff (which
-- ndcg_cutoffs rejects). Free of side effects, so DuckDB folds it for a constant k.
CREATE OR REPLACE TEMP MACRO ndcg_cutoff(k) AS
    CASE WHEN k IS NULL OR lower(k::VARCHAR) = 'all' THEN NULL ELSE coalesce(ndcg_whole(k), 0) END;

-- ndcg_whole(value): a parameter's value as a BIGINT when it is a whole number (10, 10.0, '10',
-- '1e3') that a BIGINT holds; NULL for anything else (2.5, 'ten', true, a list, 1e20). TRY_CAST to
-- BIGINT alone would round 2.5 to 3; the DOUBLE alone would round 9223372036854775807 up, past
-- the largest BIGINT: it only says the value is whole, and the text is cast exactly.
CREATE OR REPLACE TEMP MACRO ndcg_whole(value) AS
    CASE WHEN TRY_CAST(value::VARCHAR AS DOUBLE) = floor(TRY_CAST(value::VARCHAR AS DOUBLE))
         THEN TRY_CAST(value::VARCHAR AS BIGINT) END;

-- ndcg_too_large(value): true when value is a whole number >= 1 (infinity included) too large
-- for a BIGINT, so too large for a cutoff or a depth; false otherwise.
CREATE OR REPLACE TEMP MACRO ndcg_too_large(value) AS
    coalesce(ndcg_whole(value) IS NULL
             AND TRY_CAST(value::VARCHAR AS DOUBLE) = floor(TRY_CAST(value::VARCHAR AS DOUBLE))
             AND TRY_CAST(value::VARCHAR AS DOUBLE) >= 1, false);

-- ndcg_k(k): the cutoff parameter `k` of the shell wrappers as a one-cutoff list for ks; stops
-- naming what was typed when it is not an integer >= 1 or 'all', or is too large for a BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_k(k) AS
    CASE WHEN ndcg_too_large(k)
         THEN error('ndcg-duck: k ' || k::VARCHAR || ' is beyond the largest cutoff, '
                    || '9223372036854775807: use ''all'' for no cutoff')
         WHEN k IS NOT NULL AND NOT coalesce(ndcg_cutoff(k) >= 1, true)
         THEN error('ndcg-duck: k must be an integer >= 1 or ''all'', not ' || k::VARCHAR)
         ELSE [ndcg_cutoff(k)] END;

-- ndcg_choice(name, value, allowed): value as text when it is one of the words allowed (a value of
-- any type is compared as text, so ties := 1 is an error that names ties, not a cast error);
-- otherwise stops the query naming the option and the words it takes. The shell wrappers pass
-- their word options through it before any other macro reads them.
CREATE OR REPLACE TEMP MACRO ndcg_choice(name, value, allowed) AS
    CASE WHEN list_contains(allowed, value::VARCHAR) THEN value::VARCHAR
         ELSE error('ndcg-duck: ' || name || ' must be one of ' || array_to_string(allowed, ', ')
                    || ', not ' || ndcg_show(value)) END;

-- ndcg_option(name, value, allowed): true when value is one of the list allowed; otherwise stops
-- the query naming the option. Checked once per query, not per row.
CREATE OR REPLACE TEMP MACRO ndcg_option(name, value, allowed) AS
    ndcg_choice(name, value, allowed) IS NOT NULL;

-- ndcg_flag(name, value): a true/false parameter (judged_only) as a BOOLEAN; stops naming it for
-- anything but true or false ('yes', 1 and NULL included, which a cast would take silently).
CREATE OR REPLACE TEMP MACRO ndcg_flag(name, value) AS
    CASE WHEN typeof(value) = 'BOOLEAN' AND value IS NOT NULL THEN value::VARCHAR = 'true'
         ELSE error('ndcg-duck: ' || name || ' must be true or false, not ' || ndcg_show(value))
    END;

-- ndcg_gain_map_of(gain_map): the parameter gain_map as a MAP(DOUBLE, DOUBLE) (read through text,
-- so that a value of any type binds); NULL when it is not a map of numbers.
CREATE OR REPLACE TEMP MACRO ndcg_gain_map_of(gain_map) AS
    CASE WHEN typeof(gain_map) LIKE 'MAP(%' THEN TRY_CAST(gain_map::VARCHAR AS MAP(DOUBLE, DOUBLE)) END;

-- ndcg_gain_map(gain_map): gain_map as a MAP(DOUBLE, DOUBLE), or NULL for none; stops naming it
-- when it is not a MAP from relevance levels to finite gains.
CREATE OR REPLACE TEMP MACRO ndcg_gain_map(gain_map) AS
    CASE WHEN gain_map IS NULL THEN NULL::MAP(DOUBLE, DOUBLE)
         WHEN ndcg_gain_map_of(gain_map) IS NOT NULL
              AND len(list_filter(map_values(ndcg_gain_map_of(gain_map)),
                                  lambda g: NOT coalesce(isfinite(g), false))) = 0
         THEN ndcg_gain_map_of(gain_map)
         ELSE error('ndcg-duck: gain_map must be a MAP from relevance level to gain, both numbers '
                    || '(e.g. MAP {1: 3, 2: 9}), or NULL, not ' || ndcg_show(gain_map)) END;

-- ndcg_min_relevance_ok(min_relevance): true when min_relevance is NULL (no threshold) or a
-- finite number; otherwise stops the query naming the parameter.
CREATE OR REPLACE TEMP MACRO ndcg_min_relevance_ok(min_relevance) AS
    ndcg_require(min_relevance IS NULL
                 OR coalesce(isfinite(TRY_CAST(min_relevance::VARCHAR AS DOUBLE)), false),
                 'min_relevance must be a finite number or NULL, not '
                 || ndcg_show(min_relevance));

-- ndcg_gain(relevance, gain): the gain of one judged relevance value.
-- gain is 'linear' (rel), 'exponential' (2^rel - 1, Burges et al. 2005) or 'binary' (1 if
-- rel > 0). Relevance <= 0 or NULL gains 0; fractional relevance is used exactly. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_gain(relevance, gain) AS
    CASE
        WHEN relevance IS NULL OR relevance <= 0 THEN 0.0
        WHEN gain = 'exponential' THEN pow(2.0, relevance::DOUBLE) - 1.0
        WHEN gain = 'binary' THEN 1.0
        ELSE relevance::DOUBLE
    END;

-- ndcg_relevant(relevance, min_relevance): whether a judgment counts as relevant: relevance
-- >= min_relevance, or > 0 when min_relevance is NULL (trec_eval's -l, ranx's rel_lvl).
CREATE OR REPLACE TEMP MACRO ndcg_relevant(relevance, min_relevance) AS
    coalesce(relevance >= min_relevance::DOUBLE, relevance > 0);

-- ndcg_judgment_gain(relevance, gain, gain_map, min_relevance): the gain of one judgment: 0 when
-- it is below min_relevance; else the level's gain in gain_map (a MAP from relevance level to
-- gain; NULL: no map), else ndcg_gain. A DOUBLE. Without a map and a threshold it is ndcg_gain
-- itself, said first so that DuckDB drops the rest (the edge applies it to every judgment).
CREATE OR REPLACE TEMP MACRO ndcg_judgment_gain(relevance, gain, gain_map, min_relevance) AS
    CASE WHEN gain_map IS NULL AND min_relevance IS NULL THEN ndcg_gain(relevance, gain)
         WHEN relevance < min_relevance::DOUBLE THEN 0.0
         ELSE coalesce(map_extract_value(gain_map::MAP(DOUBLE, DOUBLE), relevance::DOUBLE),
                       ndcg_gain(relevance, gain)) END;

-- ndcg_dcg(gain, rank): what one item adds to DCG: its gain discounted by log2 of its 1-based
-- rank + 1 (the DCG of ndcg_core.sql's header). ndcg_discounts is ndcg_dcg of a gain of 1 at
-- each position, for the ranking and the ideal list alike; ndcg_dcg_all applies it directly.
CREATE OR REPLACE TEMP MACRO ndcg_dcg(gain, rank) AS gain / log2(rank + 1);

-- ndcg_depth(ks, max_depth, judged_only, ties): how many items of each ranking to read: the
-- largest cutoff in ks (a BIGINT list, NULL = no cutoff), no more than max_depth. NULL means the
-- whole ranking (a cutoff of 'all' and no max_depth). With judged_only or ties 'average' the
-- items below the largest cutoff can count too (they move up, or share a tie that reaches above
-- the cutoff): then only max_depth cuts.
CREATE OR REPLACE TEMP MACRO ndcg_depth(ks, max_depth, judged_only := false, ties := 'trec') AS
    CASE WHEN judged_only OR ties = 'average' OR list_count(ks) < len(ks)
         THEN ndcg_max_depth(max_depth)
         ELSE least(list_max(ks), coalesce(ndcg_max_depth(max_depth), 9223372036854775807)) END;

-- ndcg_max_depth(max_depth): the parameter max_depth as a BIGINT (NULL: no limit); stops naming
-- `max_depth` when it is not an integer >= 1, or is too large for a BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_max_depth(max_depth) AS
    CASE WHEN ndcg_too_large(max_depth)
         THEN error('ndcg-duck: max_depth ' || max_depth::VARCHAR || ' is beyond the largest '
                    || 'depth, 9223372036854775807: use NULL for no limit')
         WHEN max_depth IS NOT NULL AND NOT coalesce(ndcg_whole(max_depth) >= 1, false)
         THEN error('ndcg-duck: max_depth must be an integer >= 1 or NULL (no limit), not '
                    || max_depth::VARCHAR)
         ELSE ndcg_whole(max_depth) END;

-- ndcg_ideal_depth_ok(ideal_depth): true when ideal_depth is NULL (every gain) or an integer >= 1;
-- otherwise stops naming the parameter.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_depth_ok(ideal_depth) AS
    ndcg_require(ideal_depth IS NULL
                 OR coalesce(ndcg_whole(ideal_depth) >= 1, false),
                 'ideal_depth must be an integer >= 1 or NULL (every gain), not '
                 || ndcg_show(ideal_depth));

-- ndcg_width(ks): how many positions the core scores as fixed-length lists, and so how many
-- ideal gains each user needs (the judgments edge's ideal_depth): the largest cutoff in ks (a
-- BIGINT list) when every cutoff is a number no larger than 100 (small enough for DuckDB's top-n
-- aggregate, which keeps room for n values per user); NULL otherwise (a cutoff is NULL, no
-- cutoff, or large: then each user's lists keep their own lengths, and every gain is kept).
CREATE OR REPLACE TEMP MACRO ndcg_width(ks) AS
    CASE WHEN list_count(ks) = len(ks) AND list_max(ks) <= 100 THEN list_max(ks) END;

-- ndcg_discounts(k, width): the discount of each position 1 .. width at cutoff k, as DCG@k applies
-- it: 1 / log2(i + 1) (ndcg_dcg of a gain of 1) for i <= k, and 0 beyond k. A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_discounts(k, width) AS
    list_transform(range(1, width + 1), lambda i: CASE WHEN i <= k THEN ndcg_dcg(1.0, i) ELSE 0.0 END);
