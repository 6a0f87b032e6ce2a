-- ndcg-duck: NDCG and its parts as DuckDB macros, in one self-contained script.
-- In the duckdb shell, from any directory:   .read path/to/ndcg.sql
-- GENERATED from the files sql/ndcg_*.sql (one per concern, each named below): edit those,
-- then run `ndcg-duck sql > sql/ndcg.sql` from the repository root.

-- ndcg_checks.sql
-- Input checks. The core assumes clean input: no NULLs, one ranking per user, no item twice in a
-- ranking. These macros read their input once and stop the query with an error that
-- names the user, the item and the value, instead of returning a wrong number.

-- ndcg_require(ok, message): true when ok is true; otherwise stops the query with message.
CREATE OR REPLACE TEMP MACRO ndcg_require(ok, message) AS
    CASE WHEN ok THEN true ELSE error('ndcg-duck: ' || message) END;

-- ndcg_show(value): a value as text for a message; NULL shows as NULL.
CREATE OR REPLACE TEMP MACRO ndcg_show(value) AS coalesce(value::VARCHAR, 'NULL');

-- ndcg_id_type(type): whether a column of this type (typeof's text) holds ids: integers of any
-- width (a DECIMAL without decimals too, as Arrow holds a HUGEINT) or text (VARCHAR, an ENUM, a
-- UUID), the types the CLI and Python read ids as (ndcg_duck/evaluation/inputs.py).
CREATE OR REPLACE TEMP MACRO ndcg_id_type(type) AS
    regexp_full_match(type, 'U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|DECIMAL\(\d+,0\)'
                            || '|VARCHAR|ENUM\(.*\)|UUID', 's');

-- ndcg_id(id, what): id as it is when its type is one ids may have (ndcg_id_type); any other
-- type (a boolean, a float, a date, a blob, a struct, ...) stops the query naming `what` (the
-- column) and the type. typeof is fixed when the query is bound: nothing is done per row.
CREATE OR REPLACE TEMP MACRO ndcg_id(id, what) AS
    CASE WHEN ndcg_require(ndcg_id_type(typeof(id)), what || ' is ' || typeof(id)
                           || ', not an id: ids must be integers or text; convert it') THEN id END;

-- ndcg_id_list(items, what): items as it is when it is a list of ids (ndcg_id_type); a list of
-- another type (of lists, of structs, ...) or no list stops the query naming `what` and the type.
CREATE OR REPLACE TEMP MACRO ndcg_id_list(items, what) AS
    CASE WHEN ndcg_require(ndcg_id_type(regexp_extract(typeof(items), '^(.*)\[\d*\]$', 1)),
                           what || ' is ' || typeof(items) || ', not a list of item ids: ids '
                           || 'must be integers or text; convert it') THEN items END;

-- ndcg_float_type(value): whether value's type is FLOAT or DOUBLE, the number types that hold NaN
-- and infinities. typeof is fixed when the query is bound, so a CASE on it is decided then: the
-- row checks of an integer column skip the float tests (casting and testing every row's rank
-- cost a long-by-rank run about 12% more CPU: benchmarks/reports/2026-11-25-issue29-checks-ab.md).
CREATE OR REPLACE TEMP MACRO ndcg_float_type(value) AS typeof(value) IN ('FLOAT', 'DOUBLE');

-- ndcg_order_number(value, what): a rank or a score as it is when it is a number (an integer, a
-- float, a DECIMAL); any other type (text, a boolean, a date, ...) stops the query naming `what`
-- and the type: text would order '10' before '2'.
CREATE OR REPLACE TEMP MACRO ndcg_order_number(value, what) AS
    CASE WHEN ndcg_require(regexp_full_match(typeof(value), 'U?(TINYINT|SMALLINT|INTEGER|BIGINT'
                               || '|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)'),
                           what || ' is ' || typeof(value) || ', not a number: convert it')
         THEN value END;

-- ndcg_relevance_number(relevance, what): a relevance value as a number: an integer or a float as
-- it is, a DECIMAL as a DOUBLE, a boolean as 1 (true) or 0 (false). Any other type (text, a
-- date, a list, ...) stops the query naming `what` (the column, the parameter) and the type. One
-- overload per type that passes; the last, for every other type, stops (at the first value).
CREATE OR REPLACE TEMP MACRO ndcg_relevance_number(relevance TINYINT, what) AS relevance,
    (relevance SMALLINT, what) AS relevance, (relevance INTEGER, what) AS relevance,
    (relevance BIGINT, what) AS relevance, (relevance HUGEINT, what) AS relevance,
    (relevance UTINYINT, what) AS relevance, (relevance USMALLINT, what) AS relevance,
    (relevance UINTEGER, what) AS relevance, (relevance UBIGINT, what) AS relevance,
    (relevance UHUGEINT, what) AS relevance, (relevance FLOAT, what) AS relevance,
    (relevance DOUBLE, what) AS relevance, (relevance BOOLEAN, what) AS relevance::UTINYINT,
    (relevance, what) AS error('ndcg-duck: ' || what || ' is ' || typeof(relevance)
                               || ', not a number or a boolean: convert it');
-- persistent: CREATE OR REPLACE TEMP MACRO ndcg_relevance_number(relevance, what) AS CASE WHEN false THEN 0::UTINYINT ELSE relevance END;
-- (A database file in DuckDB's default storage cannot keep typed parameters, so `ndcg-duck sql
-- --persistent` writes the line above instead: numbers as they are (a TINYINT as a SMALLINT),
-- booleans as 1 and 0; a relevance of another type then stops with DuckDB's own message.)

-- ndcg_judgments_checked(rels): rels as user_id, item_id, relevance (a number, as
-- ndcg_relevance_number reads it), row by row. Stops on ids (ndcg_id) or a relevance of another
-- type, on a NULL user, item or relevance and on a NaN or infinite relevance. (Repeated
-- judgments are the judgments edge's, in ndcg_input.sql.)
CREATE OR REPLACE TEMP MACRO ndcg_judgments_checked(rels) AS TABLE
    SELECT user_id, item_id, relevance
    FROM (SELECT ndcg_id(user_id, 'relevance: column user_id') AS user_id,
                 ndcg_id(item_id, 'relevance: column item_id') AS item_id,
                 ndcg_relevance_number(relevance, 'relevance: column relevance') AS relevance
          FROM query_table(rels))
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL AND relevance IS NOT NULL,
              'relevance: a row has no ' || CASE WHEN user_id IS NULL THEN 'user id'
                  WHEN item_id IS NULL THEN 'item id (user ' || ndcg_show(user_id) || ')'
                  ELSE 'relevance (user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
                      || ')' END || ' (NULL): fill it in or drop the row')
      AND ndcg_require(isfinite(relevance::DOUBLE),
              'relevance: user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
              || ' has relevance ' || ndcg_show(relevance) || ': give a finite number');

-- ndcg_repeated_users(recs): recs nested (user_id, items). Returns the users with more than one
-- row (at most one), with how many rows they have: each user's ranking must be one list.
CREATE OR REPLACE TEMP MACRO ndcg_repeated_users(recs) AS TABLE
    SELECT user_id, count(*) AS times FROM query_table(recs)
    GROUP BY user_id HAVING count(*) > 1 LIMIT 1;

-- ndcg_row_problem(order_column, user_id, item_id, value, wanted): what is wrong with a long
-- recommendation row, as a message: a NULL key, or a value of order_column (rank or score) that
-- orders nothing (NaN; for a rank also an infinity), shown, with what to give instead (wanted).
CREATE OR REPLACE TEMP MACRO ndcg_row_problem(order_column, user_id, item_id, value, wanted) AS
    'recommendations: ' || CASE WHEN user_id IS NULL THEN 'a row has no user id (NULL)'
        WHEN item_id IS NULL THEN 'a row has no item id (user ' || ndcg_show(user_id) || ') (NULL)'
        WHEN value IS NULL THEN 'a row has no ' || order_column || ' (user ' || ndcg_show(user_id)
             || ', item ' || ndcg_show(item_id) || ') (NULL)'
        ELSE 'user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id) || ' has '
             || order_column || ' ' || ndcg_show(value) END
    || CASE WHEN user_id IS NULL OR item_id IS NULL OR value IS NULL
            THEN ': fill it in or drop the row' ELSE ': give ' || wanted END;

-- ndcg_twice(user_id, item_id): the message for an item in one ranking twice.
CREATE OR REPLACE TEMP MACRO ndcg_twice(user_id, item_id) AS
    'recommendations: user ' || ndcg_show(user_id) || ' ranks item ' || ndcg_show(item_id)
    || ' twice: remove the repeat, or keep the first occurrence with --duplicates first';

-- ndcg_judged_twice(user_id, item_id, relevance, other): the message for a (user, item) judged
-- twice with two values.
CREATE OR REPLACE TEMP MACRO ndcg_judged_twice(user_id, item_id, relevance, other) AS
    'relevance: user ' || ndcg_show(user_id) || ' has item ' || ndcg_show(item_id)
    || ' judged twice, as ' || ndcg_show(relevance) || ' and ' || ndcg_show(other)
    || ': keep one judgment per (user, item)';

-- ndcg_params.sql
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

-- ndcg_means.sql
-- Exact means. A reported mean is the exactly rounded mean of the per-user values: their sum
-- taken exactly, divided by their count, rounded once to the nearest double. A double x is an
-- integer times a power of two, x = mantissa * 2^(exponent - 52), so the values that share an
-- exponent add up exactly as integers (HUGEINT), in any order, on any number of threads or
-- partitions; the few (exponent, sum) parts that result are then added as exact fractions and
-- divided once (ndcg_duck/means.py). DuckDB's fsum is compensated but not exactly rounded, and
-- a rounded sum divided by the count is rounded twice.

-- ndcg_exponent(x): for a finite x other than 0, the integer e with 2^e <= |x| < 2^(e + 1)
-- (log2 may be one off near a power of two, which the comparisons correct); 0 for x = 0 and for
-- a value that is not finite (which ndcg_mantissa then stops on, naming it).
CREATE OR REPLACE TEMP MACRO ndcg_exponent(x) AS
    CASE WHEN x = 0 OR NOT isfinite(x) THEN 0
         ELSE floor(log2(abs(x)))::INTEGER
              - (pow(2.0, floor(log2(abs(x)))) > abs(x))::INTEGER
              + (pow(2.0, floor(log2(abs(x))) + 1) <= abs(x))::INTEGER END;

-- ndcg_mantissa(x, e): x * 2^(52 - e) for e = ndcg_exponent(x): a whole number below 2^53 in
-- size (a BIGINT), so that x = mantissa * 2^(e - 52) exactly (the scaling by a power of two is
-- exact; it is split in two for tiny x, where 2^(52 - e) alone would overflow). Stops on a value
-- that is not finite.
CREATE OR REPLACE TEMP MACRO ndcg_mantissa(x, e) AS
    CASE WHEN NOT isfinite(x) THEN error('ndcg-duck: a mean over a value that is not finite: '
                                          || x::VARCHAR)
         WHEN e < -900 THEN (x * pow(2.0, 52 - e - 600) * pow(2.0, 600))::BIGINT
         ELSE (x * pow(2.0, 52 - e))::BIGINT END;

-- ndcg_scaled(x, shift): x * 2^shift as a HUGEINT. For the values of one column, means.py picks
-- shift from their smallest and largest sizes so that each scaled value is a whole number and
-- their sum stays below 2^126: then one HUGEINT sum adds them exactly, with no exponent per
-- value (a column whose values span more powers of two takes ndcg_exponent and ndcg_mantissa).
CREATE OR REPLACE TEMP MACRO ndcg_scaled(x, shift) AS (x * pow(2.0, shift))::HUGEINT;

-- ndcg_scaled_below(x, shift, top): ndcg_scaled(x, shift) for |x| < 2^top, 0 for a larger or
-- not finite x, NULL for NULL. The term of a sum taken before the values' range is known
-- (means.py's one pass): whatever the values, no term reaches 2^(top + shift), so that a count
-- of them whose bits and top + shift add up to at most 126 adds up within a HUGEINT, never
-- stopping the query; the same pass's max(abs(x)) tells that a value was left out (at least
-- 2^top), and its column is then added up again.
CREATE OR REPLACE TEMP MACRO ndcg_scaled_below(x, shift, top) AS
    CASE WHEN abs(x) < pow(2.0, top) THEN ndcg_scaled(x, shift)
         WHEN x IS NOT NULL THEN 0::HUGEINT END;

-- ndcg_nonzero_size(x, top): |x|, and 2^top for x = 0 (arithmetic: a CASE or nullif costs half
-- as much again): its minimum over a column is the smallest non-zero size when that is below
-- 2^top, and at most 2^top (what means.py's one pass reads; zeros need no test).
CREATE OR REPLACE TEMP MACRO ndcg_nonzero_size(x, top) AS
    abs(x) + (x = 0)::DOUBLE * pow(2.0, top);

-- ndcg_input.sql
-- Input edges: DuckDB list handling that turns each input layout into what the core reads:
-- each user's ranking as one list of item ids (the ranking edges), and the judgments checked,
-- once per (user, item), with their gains (the judgments edge, at the end of this file).

-- ndcg_ks(ks): the cutoffs parameter ks (a BIGINT list, NULL = no cutoff) as given; stops naming
-- `ks` when it lists no cutoff or one below 1.
CREATE OR REPLACE TEMP MACRO ndcg_ks(ks) AS
    CASE WHEN coalesce(len(ks), 0) = 0
         THEN error('ndcg-duck: ks must list at least one cutoff (an integer >= 1, or NULL for '
                    || 'no cutoff), not ' || ndcg_show(ks::VARCHAR))
         WHEN len(list_filter(ks, lambda k: k < 1)) > 0
         THEN error('ndcg-duck: ks: each cutoff must be an integer >= 1 or NULL (no cutoff), not '
                    || list_filter(ks, lambda k: k < 1)[1]::VARCHAR)
         ELSE ks END;

-- Every edge returns one row per user with recommendations: user_id, items (a LIST of item ids in
-- rank order, cut to the first `depth`; NULL depth: all) and ranks (NULL, or for tie averaging a
-- LIST giving each item the position of its tie group's first item). The core finds a judged
-- item's rank with list_position(items, item).

-- ndcg_first(items, depth): the first `depth` items of a list (NULL depth: all of them).
-- list_resize cuts a long list in a quarter of list_slice's time (BENCHMARKS.md, "Where the
-- time goes"); a shorter list is kept as it is (list_resize would pad it with NULLs).
CREATE OR REPLACE TEMP MACRO ndcg_first(items, depth) AS
    CASE WHEN len(items) > depth THEN list_resize(items, depth) ELSE items END;

-- ndcg_ranked_lists(recs, depth): recs has user_id and items, a LIST of item ids in rank order
-- (a NULL list counts as empty), one row per user. Stops on ids of a type ids may not have
-- (ndcg_id, ndcg_id_list), a NULL user, a NULL item among the first `depth`, and a user with two
-- rows.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_lists(recs, depth := NULL) AS TABLE
    SELECT user_id, items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT ndcg_id(user_id, 'recommendations: column user_id') AS user_id,
               ndcg_first(ndcg_id_list(items, 'recommendations: column items'), depth) AS items
        FROM query_table(recs)
        WHERE ndcg_require(user_id IS NOT NULL, 'recommendations: a row has no user id (NULL)')
    )
    WHERE ndcg_require(coalesce(list_count(items) = len(items), true),
                       'recommendations: user ' || ndcg_show(user_id)
                       || ' has a NULL item in its list: drop it or fill it in')
      AND (SELECT ndcg_require(count(*) = 0, 'recommendations: user ' || ndcg_show(first(user_id))
                               || ' has ' || first(times) || ' rows: give each user one list, '
                               || 'or use one row per item with a rank')
           FROM ndcg_repeated_users(recs));

-- The long edges below read one row per (user, item). When the items that can count are the first
-- `depth` of each ranking (a cutoff no larger than 100, ndcg_top_depth), they gather only those
-- with DuckDB's top-n aggregates (min_by / max_by with n), which cost about a fifth of ranking
-- every row with a window (BENCHMARKS.md, "Long inputs"); otherwise (no cutoff, a large one,
-- --judged-only, --ties average, --duplicates first: ndcg_depth gives NULL or a large depth) they
-- rank every row (--ties average with a cutoff up to 100: ndcg_ranked_scores_tied, picked by
-- leaks.folds). Each is a named variant behind a constant dispatch, as in the core.

-- ndcg_top_depth(depth): depth when the top-n variants apply (a depth from 1 to 100), else NULL.
-- The top-n aggregate keeps room for n values per user, so n stays small.
CREATE OR REPLACE TEMP MACRO ndcg_top_depth(depth) AS
    CASE WHEN depth <= 100 THEN depth::BIGINT END;

-- ndcg_rows_typed(recs, order_column): recs' user_id, item_id and the column that orders them
-- (order_column: 'rank' or 'score', named so), each of a type it may have (ndcg_id,
-- ndcg_order_number): otherwise stops naming the column.
CREATE OR REPLACE TEMP MACRO ndcg_rows_typed(recs, order_column) AS TABLE
    SELECT ndcg_id(user_id, 'recommendations: column user_id') AS user_id,
           ndcg_id(item_id, 'recommendations: column item_id') AS item_id,
           ndcg_order_number(COLUMNS(lambda c: c = order_column),
                             'recommendations: column ' || order_column)
    FROM query_table(recs);

-- ndcg_rows_ranked(recs): recs' rows (user_id, item_id, rank), each checked: stops on a column of
-- another type (ndcg_rows_typed), on a NULL user, item or rank and on a NaN or infinite rank (a
-- rank is a place in the list: NaN would sort last, and two infinities would tie). Every row is
-- checked, counted or not.
CREATE OR REPLACE TEMP MACRO ndcg_rows_ranked(recs) AS TABLE
    SELECT user_id, item_id, rank
    FROM ndcg_rows_typed(recs, 'rank')
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL
                       AND CASE WHEN ndcg_float_type(rank)
                                THEN coalesce(isfinite(rank::DOUBLE), false)
                                ELSE rank IS NOT NULL END,
              ndcg_row_problem('rank', user_id, item_id, rank, 'a finite number'));

-- ndcg_two_at_rank(user_id, rank): the message for two items of a user at one rank.
CREATE OR REPLACE TEMP MACRO ndcg_two_at_rank(user_id, rank) AS
    'recommendations: user ' || ndcg_show(user_id) || ' has two items at rank '
    || ndcg_show(rank) || ': give each item its own rank';

-- ndcg_all_differ(sorted): true when no two neighbours of a sorted list are equal (so no two
-- values are). A third of list_unique's cost on the short lists of the top-n edges.
CREATE OR REPLACE TEMP MACRO ndcg_all_differ(sorted) AS
    NOT coalesce(list_bool_or(list_transform(sorted[2:], lambda v, i: v = sorted[i])), false);

-- ndcg_tied_rows(scores, depth): how many of the first `depth` places (NULL: all) of a list of
-- scores in rank order (best first) hold a score equal to a neighbour's: the rows whose order
-- among themselves, or whether they are in the first depth at all, only a tie rule decides.
-- It reads no place past depth + 1, so pass the whole list, as a column: a slice of it would be
-- made again for every place the lambda reads.
CREATE OR REPLACE TEMP MACRO ndcg_tied_rows(scores, depth) AS
    len(list_filter(range(1, least(len(scores), coalesce(depth, len(scores))) + 1),
                    lambda i: coalesce(scores[i] = scores[i - 1], false)
                              OR coalesce(scores[i] = scores[i + 1], false)));

-- ndcg_ranked_ranks_all(recs, depth): every row ranked with a window; stops on two items at one
-- rank anywhere in a ranking.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks_all(recs, depth) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, item_id, rank AS given,
               row_number() OVER by_rank AS position,
               lag(rank) OVER by_rank AS previous
        FROM ndcg_rows_ranked(recs)
        WINDOW by_rank AS (PARTITION BY user_id ORDER BY rank)
    )
    WHERE ndcg_require(previous IS NULL OR previous <> given, ndcg_two_at_rank(user_id, given))
      AND (depth IS NULL OR position <= depth)
    GROUP BY user_id;

-- ndcg_ranked_ranks_top(recs, depth): each user's first depth + 1 items by rank (min_by), and
-- their ranks (min), both smallest rank first; the first depth items are the ranking. Two items
-- at one rank among them stop the query: such a tie within the first depth, or straddling
-- position depth, decides which items count. A tie wholly below position depth changes no
-- number and passes. (Two plain top-n aggregates cost a third of one over a struct.)
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks_top(recs, depth) AS TABLE
    SELECT user_id, ndcg_first(top, depth) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, min_by(item_id, rank, coalesce(ndcg_top_depth(depth), 1) + 1) AS top,
               min(rank, coalesce(ndcg_top_depth(depth), 1) + 1) AS top_ranks
        FROM ndcg_rows_ranked(recs)
        GROUP BY user_id
    )
    WHERE ndcg_require(ndcg_all_differ(top_ranks),
              ndcg_two_at_rank(user_id, list_filter(top_ranks, lambda r, i: i > 1
                                                    AND top_ranks[i - 1] = r)[1]));

-- ndcg_ranked_ranks(recs, depth): recs has user_id, item_id and rank, a number that orders each
-- user's items (smallest first; gaps and any starting value are fine). Returns each user's first
-- `depth` items (NULL: all). Stops on a NULL user, item or rank (any row), and on two items at
-- one rank among the first depth + 1 (the top-n variant) or anywhere (the window variant).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_ranks(recs, depth := NULL) AS TABLE
    FROM ndcg_ranked_ranks_top(recs, depth) WHERE ndcg_top_depth(depth) IS NOT NULL
    UNION ALL
    FROM ndcg_ranked_ranks_all(recs, depth) WHERE ndcg_top_depth(depth) IS NULL;

-- ndcg_rows_scored(recs): recs' rows (user_id, item_id, score), each checked: stops on a column of
-- another type (ndcg_rows_typed), on a NULL user, item or score and on a NaN score (it has no
-- place in an order). An infinite score orders like any other (inf first, -inf last; equal ones
-- tie). Every row is checked, counted or not.
CREATE OR REPLACE TEMP MACRO ndcg_rows_scored(recs) AS TABLE
    SELECT user_id, item_id, score
    FROM ndcg_rows_typed(recs, 'score')
    WHERE ndcg_require(user_id IS NOT NULL AND item_id IS NOT NULL
                       -- not isnan(score): DuckDB folds isnan (and score <> score) to false
                       -- where a Parquet file's min/max statistics, which leave NaN out, say
                       -- the column is finite; isfinite is not folded so
                       AND CASE WHEN ndcg_float_type(score)
                                THEN coalesce(isfinite(score::DOUBLE) OR isinf(score::DOUBLE),
                                              false)
                                ELSE score IS NOT NULL END,
              ndcg_row_problem('score', user_id, item_id, score, 'a number'));

-- ndcg_trec_sorted(scores, items): a user's items and their scores (two lists in one order) in
-- trec_eval's order: score descending, ties broken by item id descending compared as text.
CREATE OR REPLACE TEMP MACRO ndcg_trec_sorted(scores, items) AS
    list_transform(list_sort(list_transform(items, lambda item, i: {'score': scores[i],
                       'text': item::VARCHAR, 'item': item}), 'DESC'), lambda s: s.item);

-- ndcg_ranked_scores_all(scored, depth, ties): every row of scored (checked rows) ranked with a
-- window; ties 'average' also returns ranks: items with equal scores share their group's first
-- position (SQL's rank()), for the core to average their discounts.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_all(scored, depth, ties) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position
        FROM query_table(scored)
        WHERE ties <> 'average'
    )
    WHERE depth IS NULL OR position <= depth
    GROUP BY user_id
    UNION ALL
    SELECT user_id, list(item_id ORDER BY position) AS items,
           list(tie_rank ORDER BY position) AS ranks
    FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
                   AS position,
               rank() OVER (PARTITION BY user_id ORDER BY score DESC) AS tie_rank
        FROM query_table(scored)
        WHERE ties = 'average'
    )
    WHERE depth IS NULL OR position <= depth
    GROUP BY user_id;

-- ndcg_best_scores(scored, depth): each user's depth + 1 best-scored items (top, by max_by) and
-- their scores (top_scores, by max), both best first; rows of equal score come in any order, so
-- the i-th score is the i-th item's. What the top-n edges gather from every row.
CREATE OR REPLACE TEMP MACRO ndcg_best_scores(scored, depth) AS TABLE
    SELECT user_id, max_by(item_id, score, coalesce(ndcg_top_depth(depth), 1) + 1) AS top,
           max(score, coalesce(ndcg_top_depth(depth), 1) + 1) AS top_scores
    FROM query_table(scored)
    GROUP BY user_id;

-- ndcg_ranked_scores_top(scored, depth): from each user's depth + 1 best-scored items and their
-- scores (ndcg_best_scores): with no two equal scores among them, that is trec_eval's order and
-- the first depth items are the ranking, without casting any id to text. With equal scores
-- before position depth + 1 only (the depth-th score beats the next one, so every row of each
-- tied score was gathered), the gathered items are put in trec_eval's order (ndcg_trec_sorted).
-- The other users, whose tie reaches past what was gathered, are ranked exactly from all their
-- rows (a semi-join that reads nothing more when there are none). Also returns tied: the user's
-- tied rows among the first depth (ndcg_tied_rows of the best depth + 1 scores, as ndcg_ties
-- counts them), from the scores it gathers anyway: 0 when no two of those scores are equal, the
-- common case, without counting (ndcg_all_differ is computed once for the items too).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_top(scored, depth) AS TABLE
    WITH ndcg_top_ AS (FROM ndcg_best_scores(scored, depth))
    SELECT user_id,
           ndcg_first(CASE WHEN ndcg_all_differ(top_scores) THEN top
                           ELSE ndcg_trec_sorted(top_scores, top) END, depth) AS items,
           NULL::BIGINT[] AS ranks,
           CASE WHEN ndcg_all_differ(top_scores) THEN 0
                ELSE ndcg_tied_rows(top_scores, depth) END AS tied
    FROM ndcg_top_
    WHERE len(top) <= depth OR top_scores[depth] > top_scores[depth + 1]
    UNION ALL
    SELECT user_id, list(item_id ORDER BY score DESC, item_id::VARCHAR DESC)[1:depth] AS items,
           NULL::BIGINT[] AS ranks,
           ndcg_tied_rows(list(score ORDER BY score DESC), depth) AS tied
    FROM query_table(scored)
    WHERE user_id IN (SELECT user_id FROM ndcg_top_
                      WHERE len(top) > depth AND top_scores[depth] = top_scores[depth + 1])
    GROUP BY user_id;

-- ndcg_tie_ranks(sorted): for a list of scores in rank order (best first), each position's tie
-- rank: the first position of its run of equal scores (what SQL's rank() gives), a BIGINT list
-- as long. Each run, from its first to its last position, is its first position repeated
-- (list_resize pads with it), so the cost grows with the list, not with its square.
CREATE OR REPLACE TEMP MACRO ndcg_tie_ranks(sorted) AS
    flatten(list_transform(
        list_zip(list_filter(range(1, len(sorted) + 1),
                             lambda i: i = 1 OR sorted[i] <> sorted[i - 1]),
                 list_filter(range(1, len(sorted) + 1),
                             lambda i: i = len(sorted) OR sorted[i] <> sorted[i + 1])),
        lambda run: list_resize([run[1]], run[2] - run[1] + 1, run[1])));

-- ndcg_ranked_scores_top_average(scored, depth): ndcg_ranked_scores_top for ties 'average': each
-- user's first depth items in trec_eval's order with their tie ranks (ndcg_tie_ranks; NULL when
-- no two of the user's depth + 1 best scores are equal: no tie to average, as the core reads a
-- NULL ranks), and the tied rows among the first depth (tied, as ndcg_ranked_scores_top counts
-- them). A tie group
-- straddling position depth is returned whole (its items past depth too), so that the core
-- averages the gains of all its members (ndcg_tie_means), as over the whole ranking; the items
-- below it are not returned, as no position up to depth reads them. From each user's depth + 1
-- best scores (max_by), as ndcg_ranked_scores_top; only a user whose depth-th and next scores
-- are equal is read again, for its rows scored at least the depth-th score.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_top_average(scored, depth) AS TABLE
    WITH ndcg_top_ AS (FROM ndcg_best_scores(scored, depth)), ndcg_straddling_ AS (
        SELECT user_id, top_scores[depth] AS last_score FROM ndcg_top_
        WHERE len(top) > depth AND top_scores[depth] = top_scores[depth + 1]
    )
    SELECT user_id,
           ndcg_first(CASE WHEN ndcg_all_differ(top_scores) THEN top
                           ELSE ndcg_trec_sorted(top_scores, top) END, depth) AS items,
           CASE WHEN NOT ndcg_all_differ(top_scores)
                THEN ndcg_first(ndcg_tie_ranks(top_scores), depth) END AS ranks,
           CASE WHEN ndcg_all_differ(top_scores) THEN 0
                ELSE ndcg_tied_rows(top_scores, depth) END AS tied
    FROM ndcg_top_
    WHERE len(top) <= depth OR top_scores[depth] > top_scores[depth + 1]
    UNION ALL
    SELECT user_id, items, ndcg_tie_ranks(sorted) AS ranks,
           ndcg_tied_rows(sorted, depth) AS tied
    FROM (SELECT s.user_id, list(s.item_id ORDER BY s.score DESC, s.item_id::VARCHAR DESC) AS items,
                 list(s.score ORDER BY s.score DESC) AS sorted
          FROM query_table(scored) AS s JOIN ndcg_straddling_ AS t ON s.user_id = t.user_id
          WHERE s.score >= t.last_score
          GROUP BY s.user_id);

-- ndcg_ranked_scores(recs, depth, ties): recs has user_id, item_id and score. Items are ranked by
-- score descending, ties broken by item id descending compared as text (trec_eval's rule).
-- ties 'average' also returns ranks (ndcg_ranked_scores_all). Returns each user's first `depth`
-- items (NULL: all). Stops on a NULL user, item or score and on a NaN score (any row).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores(recs, depth := NULL, ties := 'trec') AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    SELECT user_id, items, ranks FROM ndcg_ranked_scores_top('ndcg_scored_', depth)
    WHERE ndcg_top_depth(depth) IS NOT NULL AND ties <> 'average'
    UNION ALL
    FROM ndcg_ranked_scores_all('ndcg_scored_', depth, ties)
    WHERE ndcg_top_depth(depth) IS NULL OR ties = 'average';

-- ndcg_ranked_scores_tied(recs, depth, ties): ndcg_ranked_scores (ties 'trec') for a depth its
-- top-n variant takes (ndcg_top_depth: 1 to 100), with a fourth column tied: each user's tied
-- rows among the first depth, as ndcg_ties counts them (ndcg_tied_rows), from the scores the
-- ranking gathers anyway: the run's tie warning without a pass of its own. ties 'average': the
-- first depth items, a tie straddling position depth whole, and tie ranks
-- (ndcg_ranked_scores_top_average), for a largest cutoff `depth`. Stops on another depth.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied(recs, depth, ties := 'trec') AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    SELECT * FROM (FROM ndcg_ranked_scores_top('ndcg_scored_', depth) WHERE ties <> 'average'
                   UNION ALL
                   FROM ndcg_ranked_scores_top_average('ndcg_scored_', depth)
                   WHERE ties = 'average')
    WHERE ndcg_require(ndcg_top_depth(depth) IS NOT NULL,
                       'ndcg_ranked_scores_tied: depth must be from 1 to 100, not '
                       || coalesce(depth::VARCHAR, 'NULL'));

-- ndcg_scores_gathered(scored): each user's rows of scored (checked rows: user_id, item_id,
-- score) gathered into one list, in no order, by a hash aggregate (no sort of every row by user):
-- user_id and gathered, a LIST of {score, item}, one per row (one list, so that each score stays
-- with its item).
CREATE OR REPLACE TEMP MACRO ndcg_scores_gathered(scored) AS TABLE
    SELECT user_id, list({'score': score, 'item': item_id}) AS gathered
    FROM query_table(scored)
    GROUP BY user_id;

-- ndcg_descending(scores): true when no value of the list is greater than the one before it (the
-- list is in order, best first).
CREATE OR REPLACE TEMP MACRO ndcg_descending(scores) AS
    NOT coalesce(list_bool_or(list_transform(scores[2:], lambda v, i: v > scores[i])), false);

-- ndcg_scores_ordered(lists): ndcg_scores_gathered's rows with each list put in order by score
-- alone, best first (list_grade_up of the scores: a sort of each user's scores, not of every
-- row): user_id, items and scores (two LISTs in that order). Rows of equal score come in any
-- order. A list gathered best first already (ndcg_descending) is kept as gathered: a TREC run
-- lists each query's lines by rank, and the list aggregate keeps a query's rows in the order
-- read when one thread reads them all (a 100k-query run: 2.91-3.09 -> 2.68-2.69 CPU s for its
-- rankings, benchmarks/reports/2026-11-27-floors-10.md).
CREATE OR REPLACE TEMP MACRO ndcg_scores_ordered(lists) AS TABLE
    SELECT user_id,
           CASE WHEN best IS NULL THEN list_transform(gathered, lambda r: r.item)
                ELSE list_transform(best, lambda j: gathered[j].item) END AS items,
           CASE WHEN best IS NULL THEN scores
                ELSE list_transform(best, lambda j: gathered[j].score) END AS scores
    FROM (SELECT user_id, gathered, scores,
                 CASE WHEN NOT ndcg_descending(scores) THEN list_grade_up(scores, 'DESC') END
                     AS best
          FROM (SELECT user_id, gathered, list_transform(gathered, lambda r: r.score) AS scores
                FROM query_table(lists)));

-- ndcg_ranked_scores_tied_window(scored): every row of scored (checked rows: user_id, item_id,
-- score) ranked with a window in trec_eval's order (ndcg_ranked_scores_all's), with each user's
-- tied rows counted in the same window (lag/lead of the score equal to it): user_id, items,
-- ranks (NULL) and tied, as ndcg_ranked_scores_tied_all returns them.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_window(scored) AS TABLE
    SELECT user_id, list(item_id ORDER BY position) AS items, NULL::BIGINT[] AS ranks,
           count(*) FILTER (WHERE tie) AS tied
    FROM (
        SELECT user_id, item_id,
               row_number() OVER ranking AS position,
               coalesce(lag(score) OVER ranking = score, false)
                   OR coalesce(lead(score) OVER ranking = score, false) AS tie
        FROM query_table(scored)
        WINDOW ranking AS (PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC)
    )
    GROUP BY user_id;

-- ndcg_ranked_scores_tied_all(recs): ndcg_ranked_scores (ties 'trec', no depth: every row
-- ranked) with a fourth column tied: each user's tied rows, as ndcg_ties counts them at no depth
-- (ndcg_tied_rows: the rows whose score equals the one before or after it, best first): the
-- run's tie warning without reading and checking every row a second time. Every row is sorted
-- by user and score (ndcg_ranked_scores_tied_window): the edge for long lists.
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_all(recs) AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs))
    FROM ndcg_ranked_scores_tied_window('ndcg_scored_');

-- ndcg_ranked_scores_tied_short(recs): ndcg_ranked_scores_tied_all without the sort of every row,
-- for short lists: each user's rows are gathered into one list (ndcg_scores_gathered) and
-- ordered within it by score (ndcg_scores_ordered); with no two equal scores that is trec_eval's
-- order and no id is cast to text, the common case; a user with equal scores is put in
-- trec_eval's order (ndcg_trec_sorted) and counted (ndcg_tied_rows). The same result as
-- ndcg_ranked_scores_tied_all for any input and any list length; only the cost differs: a TREC
-- run of 10M rows, 100 a user, parse included, 8.8-10.3 -> 5.9-7.2 CPU s and 0.73 -> 0.66 GB;
-- but lists are ordered a vector of 2048 users at a time, so lists of 1000 took 1.4 GB against
-- the window's 0.5 (benchmarks/reports/2026-11-26-trec31f.md). leaks.folds picks it when the
-- first rows say the lists are short (ndcg_lists_short).
CREATE OR REPLACE TEMP MACRO ndcg_ranked_scores_tied_short(recs) AS TABLE
    WITH ndcg_scored_ AS NOT MATERIALIZED (FROM ndcg_rows_scored(recs)),
    ndcg_gathered_ AS (FROM ndcg_scores_gathered('ndcg_scored_'))
    SELECT user_id, CASE WHEN differ THEN items ELSE ndcg_trec_sorted(scores, items) END AS items,
           NULL::BIGINT[] AS ranks,
           CASE WHEN differ THEN 0 ELSE ndcg_tied_rows(scores, NULL) END AS tied
    FROM (SELECT *, ndcg_all_differ(scores) AS differ
          FROM ndcg_scores_ordered('ndcg_gathered_'));

-- ndcg_lists_short(recs, n): one row, short: whether recs' first n rows (in the order read)
-- come grouped by user (each user's rows one after another, as a TREC run lists each query's
-- lines) and no user among them has more than 100 (ndcg_top_depth's limit). A guess at the
-- length of the lists, from rows read anyway first, for choosing between two edges that give
-- the same result (ndcg_ranked_scores_tied_short or _all); never for a number.
CREATE OR REPLACE TEMP MACRO ndcg_lists_short(recs, n) AS TABLE
    SELECT count(*) FILTER (WHERE starts) = count(DISTINCT user_id)
           AND ndcg_top_depth(coalesce(max(rows_), 0)) IS NOT NULL AS short
    FROM (SELECT user_id, starts, count(*) OVER (PARTITION BY user_id) AS rows_
          FROM (SELECT user_id, user_id IS DISTINCT FROM lag(user_id) OVER () AS starts
                FROM (SELECT user_id FROM query_table(recs) LIMIT n)));

-- ndcg_first_occurrence(ranked, depth): an edge's result (user_id, items, ranks) whose lists may
-- hold an item more than once. Keeps each item's first occurrence, closes up the positions (and
-- the tie ranks) and cuts each list to its first `depth` items (NULL: all).
CREATE OR REPLACE TEMP MACRO ndcg_first_occurrence(ranked, depth := NULL) AS TABLE
    SELECT user_id, list_slice(kept, 1, coalesce(depth, len(kept))) AS items,
           list_slice(list_transform(kept_ranks, lambda r: list_position(kept_ranks, r)), 1,
                      coalesce(depth, len(kept))) AS ranks
    FROM (
        SELECT user_id,
               list_filter(items, lambda item, i: list_position(items, item) = i) AS kept,
               list_filter(ranks, lambda r, i: list_position(items, items[i]) = i) AS kept_ranks
        FROM query_table(ranked)
    );

-- ndcg_judged_lists(rels): rels has user_id and items, a LIST of the user's relevant item ids.
-- Returns user_id, item_id, relevance (1 for every listed item): binary ground truth.
CREATE OR REPLACE TEMP MACRO ndcg_judged_lists(rels) AS TABLE
    SELECT user_id, unnest(items) AS item_id, 1 AS relevance FROM query_table(rels);

-- The judgments edge: the relevance judgments (user_id, item_id, relevance) as the core reads
-- them: checked row by row (ndcg_judgments_checked), then gathered into one row per user with
-- each judged item once, its relevance and its gain.

-- ndcg_ideal_top(gain, n) and ndcg_ideal_all(gain): aggregates over one user's judgment rows: the
-- positive gains, best first, the first n of them or all. The top-n variant exists because
-- DuckDB's top-n aggregate costs about half of sorting every user's gains (BENCHMARKS.md,
-- "Where the time goes"); ndcg_ideal dispatches (DuckDB computes only the one it keeps).
CREATE OR REPLACE TEMP MACRO ndcg_ideal_top(gain, n) AS max(gain, n) FILTER (WHERE gain > 0);
CREATE OR REPLACE TEMP MACRO ndcg_ideal_all(gain) AS
    list_sort(list(gain) FILTER (WHERE gain > 0), 'DESC');
CREATE OR REPLACE TEMP MACRO ndcg_ideal(gain, n) AS
    CASE WHEN n IS NULL THEN ndcg_ideal_all(gain) ELSE ndcg_ideal_top(gain, n) END;

-- ndcg_may_repeat(item_id): an aggregate over one user's judgment rows: false when no item is
-- among them twice; true when one may be. A 1024-bit signature of the hashed item ids has fewer
-- bits set than there are rows when an item repeats (and, now and then, when two hashes share a
-- bit), so only the users it flags need the exact test (BENCHMARKS.md, "What the checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_may_repeat(item_id) AS
    bit_count(bitstring_agg((hash(item_id) % 1024)::INTEGER, 0, 1023)) < count(*);

-- ndcg_judgments_gathered(rels, gain, gain_map, min_relevance, ideal_depth, check_repeats): the
-- checked judgments, one row per user: user_id, items and relevances (LISTs, in one order: the
-- user's judgment rows as given), ideal (ndcg_ideal of the gains: the first ideal_depth, or all
-- when NULL), num_relevant (how many rows are relevant) and may_repeat (ndcg_may_repeat; false
-- without check_repeats). Stops on a bad gain, min_relevance or ideal_depth, naming it.
CREATE OR REPLACE TEMP MACRO ndcg_judgments_gathered(rels, gain, gain_map, min_relevance,
        ideal_depth, check_repeats) AS TABLE
    SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
           ndcg_ideal(ndcg_judgment_gain(relevance, gain, gain_map, min_relevance), ideal_depth)
               AS ideal,
           count(*) FILTER (WHERE ndcg_relevant(relevance, min_relevance)) AS num_relevant,
           CASE WHEN check_repeats THEN ndcg_may_repeat(item_id) ELSE false END AS may_repeat
    FROM ndcg_judgments_checked(rels)
    WHERE ndcg_option('gain', gain, ['linear', 'exponential', 'binary'])
      AND ndcg_min_relevance_ok(min_relevance)
      AND ndcg_ideal_depth_ok(ideal_depth)
    GROUP BY user_id;

-- ndcg_repeated_with(pairs): of a user's distinct (item, relevance) pairs, those of the first item
-- that has two relevance values (an empty list when none has).
CREATE OR REPLACE TEMP MACRO ndcg_repeated_with(pairs) AS
    list_filter(pairs, lambda p: p[1] = list_filter(
        pairs, lambda q: len(list_filter(pairs, lambda o: o[1] = q[1])) > 1)[1][1]);

-- ndcg_judgments_once(gathered, gain, gain_map, min_relevance, ideal_depth): the repeat contract on
-- ndcg_judgments_gathered's rows: a (user, item) judged twice with one value counts once, with
-- two values stops naming both. Only the users whose may_repeat is true are tested exactly
-- (list_unique), and only those with a repeat are gathered again, from their distinct (item,
-- relevance) pairs. Returns user_id, items, relevances, ideal, num_relevant.
CREATE OR REPLACE TEMP MACRO ndcg_judgments_once(gathered, gain, gain_map, min_relevance,
        ideal_depth) AS TABLE
    SELECT user_id,
           CASE WHEN repeated THEN list_transform(pairs, lambda p: p[1]) ELSE items END AS items,
           CASE WHEN repeated THEN list_transform(pairs, lambda p: p[2]) ELSE relevances END
               AS relevances,
           CASE WHEN repeated
                THEN list_slice(list_reverse_sort(list_filter(list_transform(pairs,
                         lambda p: ndcg_judgment_gain(p[2], gain, gain_map, min_relevance)),
                         lambda g: g > 0)), 1, coalesce(ideal_depth, len(pairs)))
                ELSE ideal END AS ideal,
           CASE WHEN repeated
                THEN len(list_filter(pairs, lambda p: ndcg_relevant(p[2], min_relevance)))
                ELSE num_relevant END AS num_relevant
    FROM (SELECT *, CASE WHEN repeated THEN list_distinct(list_zip(items, relevances)) END AS pairs
          FROM (SELECT *, CASE WHEN may_repeat THEN list_unique(items) < len(items) ELSE false END
                              AS repeated
                FROM query_table(gathered)))
    WHERE NOT repeated
       OR ndcg_require(len(pairs) = list_unique(items),
              ndcg_judged_twice(user_id, ndcg_repeated_with(pairs)[1][1],
                                list_min(list_transform(ndcg_repeated_with(pairs), lambda p: p[2])),
                                list_max(list_transform(ndcg_repeated_with(pairs), lambda p: p[2]))));

-- ndcg_first_infinite_gain(items, relevances, gain, gain_map, min_relevance): the index of the
-- first judgment (items and relevances: one user's, in one order) whose gain is not finite.
CREATE OR REPLACE TEMP MACRO ndcg_first_infinite_gain(items, relevances, gain, gain_map,
        min_relevance) AS
    list_filter(range(1, len(items) + 1), lambda i: NOT isfinite(
        ndcg_judgment_gain(relevances[i], gain, gain_map, min_relevance)))[1];

-- ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map, min_relevance): true when
-- the user's largest gain (ideal[1]: the ideal gains come best first) is finite, so every gain
-- is; otherwise (2^1100 - 1 is infinite as a DOUBLE) stops naming the first item whose gain is
-- not, its relevance and the gain. One comparison per user.
CREATE OR REPLACE TEMP MACRO ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map,
        min_relevance) AS
    ndcg_require(coalesce(isfinite(ideal[1]), true),
        'relevance: user ' || ndcg_show(user_id) || ', item '
        || ndcg_show(items[ndcg_first_infinite_gain(items, relevances, gain, gain_map,
                                                    min_relevance)])
        || ' has relevance '
        || ndcg_show(relevances[ndcg_first_infinite_gain(items, relevances, gain, gain_map,
                                                         min_relevance)])
        || ', whose gain with --gain ' || gain || ' is beyond the largest number (about '
        || '1.8e308): give that level a gain with --gain-map, or use smaller relevance values');

-- ndcg_judgments(rels, gain, gain_map, min_relevance, unique_judgments, ideal_depth): the
-- judgments edge. rels holds user_id, item_id, relevance (a number), one row per judgment.
-- Returns one row per judged user: user_id; items, the user's judged item ids, each once;
-- relevances, gains and relevant, LISTs in the order of items: each one's relevance, gain
-- (ndcg_judgment_gain: by `gain`, or gain_map's for its levels; 0 below min_relevance) and
-- whether it is relevant (ndcg_relevant: relevance >= min_relevance, or > 0 without one);
-- num_relevant (R, how many are relevant); and ideal, the user's positive gains best first (the
-- first ideal_depth of them, enough for cutoffs up to ideal_depth; NULL: all) and ideal_depth
-- itself (the core refuses a cutoff beyond it). A (user, item) judged twice with one value
-- counts once, with two values stops naming both; a gain too large for a DOUBLE stops naming the
-- item (ndcg_gains_finite); unique_judgments true trusts rels to hold no
-- (user, item) twice (a repeat would then count twice) and skips that check (BENCHMARKS.md,
-- "What the checks cost").
CREATE OR REPLACE TEMP MACRO ndcg_judgments(rels, gain := 'linear', gain_map := NULL,
        min_relevance := NULL, unique_judgments := false, ideal_depth := NULL) AS TABLE
    WITH ndcg_gathered_ AS (
        FROM ndcg_judgments_gathered(rels, gain, gain_map, min_relevance, ideal_depth,
                                     NOT unique_judgments))
    SELECT user_id, items, relevances,
           list_transform(relevances,
               lambda r: ndcg_judgment_gain(r, gain, gain_map, min_relevance)) AS gains,
           list_transform(relevances, lambda r: ndcg_relevant(r, min_relevance)) AS relevant,
           num_relevant, ideal, ideal_depth::BIGINT AS ideal_depth
    FROM ndcg_judgments_once('ndcg_gathered_', gain, gain_map, min_relevance, ideal_depth)
    WHERE ndcg_gains_finite(user_id, items, relevances, ideal, gain, gain_map, min_relevance);

-- ndcg_core.sql
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

-- ndcg_tables.sql
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

-- ndcg_lists.sql
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

-- ndcg_trec.sql
-- TREC files as trec_eval reads them: plain text, one entry a line, fields separated by any run of
-- spaces or tabs. Paths may be globs. Blank lines are skipped; words after the fields named below
-- are ignored (some runs carry comments there).

-- ndcg_trec_spaces(line): the line with each tab, line feed, form feed and carriage return made a
-- space (the line itself when it has none).
CREATE OR REPLACE TEMP MACRO ndcg_trec_spaces(line) AS
    CASE WHEN contains(line, chr(9)) OR contains(line, chr(10)) OR contains(line, chr(12))
              OR contains(line, chr(13))
         THEN replace(replace(replace(replace(line, chr(9), ' '), chr(10), ' '), chr(12), ' '),
                      chr(13), ' ')
         ELSE line END;

-- ndcg_trec_nonempty(parts): a list of strings without its empty ones (the list itself when it
-- has none).
CREATE OR REPLACE TEMP MACRO ndcg_trec_nonempty(parts) AS
    CASE WHEN list_contains(parts, '') THEN list_filter(parts, lambda w: w <> '') ELSE parts END;

-- ndcg_trec_split(line): a line's words (VARCHAR list): its runs of characters other than spaces,
-- tabs, and the other ASCII white space of regular expressions' \s (line feed, form feed, carriage
-- return). Splitting at spaces costs a third of regexp_extract_all(line, '\S+'), which gives the
-- same words; the other white space is made spaces (ndcg_trec_spaces) and the empty words between
-- two spaces dropped (ndcg_trec_nonempty) only in a line that has them: a run written with one
-- space between fields, the common case, is split and nothing more (3.9 -> 2.5 CPU s for 10M lines).
CREATE OR REPLACE TEMP MACRO ndcg_trec_split(line) AS
    ndcg_trec_nonempty(string_split(ndcg_trec_spaces(line), ' '));

-- ndcg_trec_has_words(line): whether the line has a word (is not blank): a test on the line, so
-- that a filter on it does not split every line twice. A line whose first byte comes after the
-- space's ('!' and up: no white space) has one, which a comparison tells; the others are
-- searched (a TREC run of 10M lines: 0.42 -> 0.05 CPU s).
CREATE OR REPLACE TEMP MACRO ndcg_trec_has_words(line) AS
    line >= '!' OR regexp_matches(line, '\S');

-- ndcg_trec_words(path): each non-blank line of the text file(s) at path, and its words.
-- Returns filename, line (VARCHAR) and words (VARCHAR list).
CREATE OR REPLACE TEMP MACRO ndcg_trec_words(path) AS TABLE
    SELECT filename, line, ndcg_trec_split(line) AS words
    -- chr(31), the unit separator, never occurs in a TREC file: each line is one value
    FROM read_csv(path, columns = {'line': 'VARCHAR'}, header = false, delim = chr(31),
                  quote = '', escape = '', auto_detect = false, filename = true)
    WHERE ndcg_trec_has_words(line);

-- ndcg_trec_lines(lines): as ndcg_trec_words, for lines already read: the table `lines`
-- (filename, line), e.g. a Spark worker's share of the files.
CREATE OR REPLACE TEMP MACRO ndcg_trec_lines(lines) AS TABLE
    SELECT filename, line, ndcg_trec_split(line) AS words
    FROM query_table(lines)
    WHERE ndcg_trec_has_words(line);

-- ndcg_trec_number(words, n, filename, line, form): the n-th word of a line as a DOUBLE; stops,
-- naming the file, the form its lines take and the line, when there is no such word or it is not
-- a number.
CREATE OR REPLACE TEMP MACRO ndcg_trec_number(words, n, filename, line, form) AS
    coalesce(TRY_CAST(words[n] AS DOUBLE),
             error('ndcg-duck: ' || filename || ': a TREC ' || form || ', not: ' || line));

-- ndcg_trec_run_score(words, filename, line): a run line's score, its 5th word (lines
-- `query Q0 doc rank score tag`; the rank is ignored, as trec_eval does).
CREATE OR REPLACE TEMP MACRO ndcg_trec_run_score(words, filename, line) AS
    ndcg_trec_number(words, 5, filename, line, 'run line is "query Q0 doc rank score tag"');

-- ndcg_trec_qrels_relevance(words, filename, line): a qrels line's relevance, its 4th word
-- (lines `query iteration doc relevance`; used exactly, never truncated).
CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels_relevance(words, filename, line) AS
    ndcg_trec_number(words, 4, filename, line, 'qrels line is "query iteration doc relevance"');

-- ndcg_trec_run(path): a run. Returns user_id (query), item_id (doc) and score (DOUBLE): the
-- long layout ranked by score, for ndcg_ranked_scores and the _scores macros.
CREATE OR REPLACE TEMP MACRO ndcg_trec_run(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_run_score(words, filename, line) AS score
    FROM ndcg_trec_words(path);

-- ndcg_trec_qrels(path): relevance judgments (qrels). Returns user_id (query), item_id (doc)
-- and relevance (DOUBLE).
CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_qrels_relevance(words, filename, line) AS relevance
    FROM ndcg_trec_words(path);

-- ndcg_trec_run_lines(lines), ndcg_trec_qrels_lines(lines): the same, from lines already read
-- (the table `lines`: filename, line), e.g. a Spark worker's share of the files.
CREATE OR REPLACE TEMP MACRO ndcg_trec_run_lines(lines) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_run_score(words, filename, line) AS score
    FROM ndcg_trec_lines(lines);

CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels_lines(lines) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_qrels_relevance(words, filename, line) AS relevance
    FROM ndcg_trec_lines(lines);

-- ndcg_beyond.sql
-- Beyond accuracy: how much of the catalogue a run shows, how concentrated its exposure is, and
-- how novel, popular and diverse each user's list is (issue 22).
--
-- top_k(u) = the first k items of user u's ranking, from the core's ranking edge after
-- max_depth, judged_only and duplicates exactly as every metric reads it (ndcg_ranked_judged);
-- the evaluated users are the users of the judgments who have a ranking. c(i) = the number of
-- evaluated users whose top_k holds item i; the catalogue is the items table, else the items of
-- train; n = its size; pop(i) = the number of distinct train users with item i (0 if none);
-- U = the number of distinct train users.
--   coverage@k   = |union of top_k(u), within the catalogue| / n        (RecBole ItemCoverage)
--   gini@k       = sum_{j=1..n} (2j - n - 1) c_(j) / (n sum c), c sorted ascending over every
--                  catalogue item, zeros included (RecBole GiniIndex). The zeros add nothing, so
--                  only the m items with c > 0 are summed, at positions j = n - m + 1 .. n.
--   entropy@k    = -sum_{c(i) > 0} q_i log2 q_i, q_i = c(i) / sum c  (Shannon 1948, in bits)
--   novelty@k    = mean over top_k(u) of -log2((pop(i) + 1) / (U + 1))  (self-information, Zhou
--                  et al. 2010, PNAS 107(10); add-one so an item unseen in train is finite)
--   popularity@k = mean over top_k(u) of pop(i)     (ARP, Abdollahpouri et al. 2019, FLAIRS)
--   tail@k       = the share of top_k(u) outside the head: the head is the floor(head_share * n)
--                  most popular catalogue items by pop (ties: item id ascending as text)
--   ild@k        = mean over pairs of distinct positions a < b in top_k(u) of
--                  1 - cosine(embedding_a, embedding_b) when items have embeddings, else
--                  1 - |C_a intersect C_b| / |C_a union C_b| of their category sets
--                  (intra-list diversity, Ziegler et al. 2005, WWW)
--   coverage_count@k = the number of catalogue items shown (coverage@k * n)
--   personalization@k = 1 - the mean over ordered pairs of users of |top_k(u) & top_k(v)| / L,
--                  L the mean list length: 1 - sum_i c(i) (c(i) - 1) / (U (U - 1) L), U users
-- coverage, gini, entropy, coverage_count and personalization are one value per run (per
-- cutoff); the others one value per user, averaged over the users that have one (ild needs two
-- items). These are the defaults: each macro's named options (popularity_by, tail_rule,
-- novelty_smoothing, gini_items, entropy_base, ild_divisor, ...) give the definitions of
-- RecBole, Elliot, RecTools, Evidently and Microsoft recommenders instead
-- (docs/beyond-peers.md; ndcg_duck/options.py's BEYOND_PEERS names them per peer). Recommended items outside the
-- catalogue count in no c(i) (they are reported by ndcg_beyond_outside) and are never in the
-- head; their pop is train's (0 when train lacks them too).

-- ndcg_beyond_once(items): whether no item is twice in the list `items` (true for a NULL or empty
-- list). A list of at most 64 items checks that each item is found first at its own position
-- (list_position: about a third of list_unique's cost on such short lists), a longer one counts
-- its distinct items (list_unique: no long list is searched in quadratic time).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_once(items) AS
    coalesce(CASE WHEN len(items) <= 64
                  THEN list_bool_and(list_transform(items,
                                                    lambda x, i: list_position(items, x) = i))
                  ELSE list_unique(items) = len(items) END, true);

-- ndcg_beyond_lists(rankings, ks): per user of rankings (a ranking edge's result) and cutoff:
-- user_id, k (NULL: no cutoff) and top (the first k ranked items, a LIST). What top_k is
-- without judged_only: the judgments need not be read (the evaluated users are chosen later,
-- or, without judgments, every user counts). Stops on an item twice in one ranking, judged or
-- not (the core stops on a judged one only: an unjudged repeat gains 0 wherever it is, but
-- would count twice in the exposure); duplicates 'first' drops repeats in the edge before.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_lists(rankings, ks := [10]) AS TABLE
    SELECT r.user_id, c.k, r.items[1:c.depth] AS top
    FROM (FROM query_table(rankings)
          WHERE ndcg_beyond_once(items)
             OR ndcg_require(false, ndcg_twice(user_id, ndcg_items_repeated(items)[1]))) AS r
    CROSS JOIN ndcg_cutoffs(ks) AS c;

-- ndcg_beyond_tops(rankings, judgments, ks, judged_only): per evaluated user and cutoff: user_id,
-- k (NULL: no cutoff) and top (the user's top_k, a LIST). rankings as a ranking edge returns it,
-- judgments as ndcg_judgments does; the core's ndcg_ranked_judged applies judged_only.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_tops(rankings, judgments, ks := [10],
        judged_only := false) AS TABLE
    SELECT u.user_id, c.k, u.ranked[1:c.depth] AS top
    FROM ndcg_ranked_judged(rankings, judgments, judged_only) AS u
    CROSS JOIN ndcg_cutoffs(ks) AS c
    WHERE u.has_judgments AND u.has_ranking;

-- ndcg_beyond_catalogue(items, train): the catalogue's item ids (item_id): the items table's,
-- or, when items is NULL, the distinct items of train. Stops on a NULL item id, and on an item
-- twice in items.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_catalogue(items, train) AS TABLE
    SELECT item_id FROM query_table(coalesce(items, train))
    GROUP BY item_id
    HAVING ndcg_require(item_id IS NOT NULL,
                        CASE WHEN items IS NULL THEN 'train' ELSE 'items' END
                        || ': ' || count(*) || ' row(s) have no item id (NULL)')
       AND ndcg_require(items IS NULL OR count(*) = 1,
                        'items: item ' || ndcg_show(item_id) || ' has ' || count(*)
                        || ' rows: give each item one row');

-- ndcg_train_lists(train): train's rows grouped per user, one pass over train for all that read
-- them (popularity, ndcg_beyond_popularity_of; the seen-items check, sql/ndcg_leaks.sql's
-- ndcg_seen_entries_of): user_id and items (a LIST of the user's item ids, one per row:
-- repeats and NULLs kept, in no order). One row per user id, NULL included.
CREATE OR REPLACE TEMP MACRO ndcg_train_lists(train) AS TABLE
    SELECT user_id, list(item_id) AS items FROM query_table(train) GROUP BY user_id;

-- ndcg_beyond_popularity_of(train, lists, catalogue, head_share, popularity_by, tail_rule): from
-- train's rows (user_id, item_id) and the same grouped per user (lists, as ndcg_train_lists
-- returns them), every catalogue item and every
-- train item with item_id, pop (popularity@k's count of the item in train: distinct users when
-- popularity_by is 'users', interaction rows when 'interactions'; 0 for none), by_users and by_rows (both counts), tail (whether the item is in the long tail, by
-- tail_rule, ranking items by pop), users (U, the distinct train users) and interactions (the
-- train rows), the last two the same on every row. catalogue as ndcg_beyond_catalogue returns
-- it. tail_rule:
--   'catalogue'  the head is the floor(head_share * n) most popular catalogue items (ties by item
--                id ascending as text); every other item is tail, unseen in train or not
--   'short_head' the head is the most popular train items (ties as above) down to the first
--                whose running sum of pop reaches head_share of the sum over train items
--                (Elliot's Popularity.get_short_head, head_share 0.8); tail the other train items
--   'train_tail' the tail is the max(1, m - ceil(head_share * m)) least popular of the m train
--                items (ties by item id ascending as text; RecBole's TailPercentage, tail_ratio
--                1 - head_share)
-- Under the last two an item never seen in train is not tail. The catalogue's head is found
-- without sorting the catalogue: the pop level where it ends (edge) comes from the count of
-- items per pop level, and only that level's items are ordered by id to fill its remaining places
-- (quota). The other rules sort the train items; each rule's steps read nothing unless chosen.
-- An item's by_rows counts its rows of train (grouped by item alone, straight from train, whose
-- item ids a Parquet file describes: DuckDB may then count them in an array), by_users its rows
-- less its repeats: the rows that are not the first of the item in their user's list (one per
-- distinct (user, item) pair remains, without a table of the pairs): a list of at most 64 rows
-- finds its firsts by position (list_position), a longer one is sorted and compares each row
-- with the one before (no long list is searched in quadratic time).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_popularity_of(train, lists, catalogue, head_share := 0.2,
        popularity_by := 'users', tail_rule := 'catalogue') AS TABLE
    WITH sorted_ AS (SELECT user_id, CASE WHEN len(items) <= 64 THEN items
                                          ELSE list_sort(items) END AS items
                     FROM query_table(lists)),
    rows_ AS (SELECT user_id, unnest(items) AS item_id, unnest(CASE WHEN len(items) <= 64
                  THEN list_transform(items, lambda x, i: list_position(items, x) = i)
                  ELSE list_transform(items, lambda x, i: i = 1 OR x <> items[i - 1]) END) AS first
              FROM sorted_),
    repeats_ AS (SELECT item_id, count(*) AS repeats FROM rows_ WHERE NOT first GROUP BY item_id),
    rows_of_ AS (SELECT item_id, count(*) AS by_rows
                 FROM query_table(train)
                 GROUP BY item_id
                 HAVING ndcg_require(item_id IS NOT NULL,
                                     'train: ' || count(*) || ' row(s) have no item id (NULL)')
                    AND ndcg_require(count(*) = count(user_id),
                                     'train: item ' || ndcg_show(item_id)
                                     || ' has rows without a user id (NULL)')),
    pop_ AS (SELECT o.item_id, o.by_rows - coalesce(r.repeats, 0) AS by_users, o.by_rows
             FROM rows_of_ AS o LEFT JOIN repeats_ AS r ON r.item_id = o.item_id),
    items_ AS (SELECT coalesce(c.item_id, p.item_id) AS item_id,
                      coalesce(CASE WHEN popularity_by = 'users' THEN p.by_users
                                    ELSE p.by_rows END, 0) AS pop,
                      coalesce(p.by_users, 0) AS by_users, coalesce(p.by_rows, 0) AS by_rows,
                      c.item_id IS NOT NULL AS listed, p.item_id IS NOT NULL AS seen
               FROM query_table(catalogue) AS c FULL OUTER JOIN pop_ AS p ON p.item_id = c.item_id),
    levels_ AS (SELECT pop, count(*) AS items,
                       sum(count(*)) OVER (ORDER BY pop DESC) AS through
                FROM items_ WHERE listed AND tail_rule = 'catalogue' GROUP BY pop),
    size_ AS (SELECT floor(head_share * coalesce(sum(items), 0)) AS size FROM levels_),
    edge_ AS (SELECT l.pop AS edge, s.size - (l.through - l.items) AS quota
              FROM levels_ AS l CROSS JOIN size_ AS s
              WHERE l.through >= s.size AND l.through - l.items < s.size),
    ties_ AS (SELECT item_id FROM items_
              WHERE listed AND pop = (SELECT edge FROM edge_)
              QUALIFY row_number() OVER (ORDER BY item_id::VARCHAR) <= (SELECT quota FROM edge_)),
    -- short_head: the train items by pop descending, with the pop of the items before each
    short_ AS (SELECT item_id, row_number() OVER w AS place,
                      coalesce(sum(pop) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                               0) AS before,
                      sum(pop) OVER () AS total
               FROM items_ WHERE seen AND tail_rule = 'short_head'
               WINDOW w AS (ORDER BY pop DESC, item_id::VARCHAR)),
    -- train_tail: the train items by pop ascending, and how many there are
    least_ AS (SELECT item_id, row_number() OVER (ORDER BY pop, item_id::VARCHAR) AS place,
                      count(*) OVER () AS m
               FROM items_ WHERE seen AND tail_rule = 'train_tail')
    SELECT i.item_id, i.pop, i.by_users, i.by_rows,
           CASE tail_rule
               WHEN 'catalogue' THEN NOT ((i.listed AND coalesce(i.pop > (SELECT edge FROM edge_),
                                                                 false))
                                          OR i.item_id IN (SELECT item_id FROM ties_))
               WHEN 'short_head' THEN i.item_id IN (SELECT item_id FROM short_
                                                    WHERE place > 1 AND before >= head_share * total)
               ELSE i.item_id IN (SELECT item_id FROM least_
                                  WHERE place <= greatest(1, m - ceil(head_share * m)))
           END AS tail,
           (SELECT count(user_id) FROM query_table(lists)) AS users,
           (SELECT sum(by_rows) FROM pop_) AS interactions
    FROM items_ AS i
    WHERE ndcg_require(head_share >= 0 AND head_share <= 1,
                       'head_share must be between 0 and 1, not ' || ndcg_show(head_share))
      AND ndcg_option('popularity_by', popularity_by, ['users', 'interactions'])
      AND ndcg_option('tail_rule', tail_rule, ['catalogue', 'short_head', 'train_tail']);

-- ndcg_beyond_popularity(train, catalogue, head_share, popularity_by, tail_rule):
-- ndcg_beyond_popularity_of (its options passed on) over train's rows (user_id, item_id)
-- grouped per user by ndcg_train_lists. A run that reads train's lists twice (popularity and the
-- seen-items check) makes them once and calls ndcg_beyond_popularity_of.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_popularity(train, catalogue, head_share := 0.2,
        popularity_by := 'users', tail_rule := 'catalogue') AS TABLE
    WITH lists_ AS (FROM ndcg_train_lists(train))
    FROM ndcg_beyond_popularity_of(train, 'lists_', catalogue, head_share := head_share,
                                   popularity_by := popularity_by, tail_rule := tail_rule);

-- ndcg_beyond_entries(tops): the items of each user's deepest top_k, one row each: user_id,
-- position (1 for the first) and item_id. Every user of tops has a list at every cutoff, and a
-- cutoff's list is the deepest list's first k items (k NULL: the deepest itself), so the item at
-- position p is in top_k when p <= k: one unnest serves every cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_entries(tops) AS TABLE
    SELECT user_id, generate_subscripts(top, 1) AS position, unnest(top) AS item_id
    FROM query_table(tops)
    WHERE k IS NOT DISTINCT FROM (SELECT CASE WHEN count(k) < count(*) THEN NULL ELSE max(k) END
                                  FROM query_table(tops));

-- ndcg_beyond_cut(deepest, ks): per user of `deepest` (user_id and top: the user's list at the
-- deepest cutoff of ks, as ndcg_beyond_lists or ndcg_beyond_tops return it for that one cutoff)
-- and per cutoff of ks: user_id, k (NULL: no cutoff) and top, the first k items of the deepest
-- list. A cutoff's top_k is the first k items of the same ranking, so the deepest list alone is
-- kept and every other is cut from it where it is read.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cut(deepest, ks) AS TABLE
    SELECT t.user_id, c.k, t.top[1:c.depth] AS top
    FROM query_table(deepest) AS t CROSS JOIN ndcg_cutoffs(ks) AS c;

-- ndcg_beyond_cutoffs_of(tops): the cutoffs of tops (k, NULL for no cutoff) with depth, the
-- deepest position each one holds.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cutoffs_of(tops) AS TABLE
    SELECT k, coalesce(k, 9223372036854775807) AS depth
    FROM (SELECT DISTINCT k FROM query_table(tops));

-- ndcg_beyond_shown_of(entries, depths): every item of entries (ndcg_beyond_entries' rows) once,
-- with its exposure at every cutoff: item_id and, per column of depths (one row, a column per
-- cutoff named by it, 'all' for no cutoff, holding the deepest position the cutoff reads), how
-- many users' top_k hold the item (0 when only deeper lists do). One group per item, each
-- cutoff counted by a column of its own: half the work of a group per cutoff and item.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_shown_of(entries, depths) AS TABLE
    SELECT e.item_id, count(CASE WHEN e.position <= COLUMNS(d.*) THEN 1 END)
    FROM query_table(entries) AS e CROSS JOIN query_table(depths) AS d
    GROUP BY e.item_id;

-- ndcg_beyond_exposure_in(shown): ndcg_beyond_exposure's rows (k, item_id, c) from
-- ndcg_beyond_shown_of's: a row per cutoff and item its top_k lists show (c > 0).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure_in(shown) AS TABLE
    SELECT CASE WHEN k = 'all' THEN NULL ELSE k::BIGINT END AS k, item_id, c
    FROM (UNPIVOT (FROM query_table(shown)) ON COLUMNS(* EXCLUDE (item_id))
          INTO NAME k VALUE c)
    WHERE c > 0;

-- ndcg_beyond_exposure(tops): per cutoff k and shown item: k, item_id and c (how many users'
-- top_k hold it), every shown item, inside the catalogue or not. One pass over the lists, read
-- by ndcg_beyond_run_of and ndcg_beyond_outside_of. k may be any key (the Spark engine's
-- workers pass a struct of cutoff and segment); the default engine, whose lists are each
-- user's deepest one cut at every k, unnests them once and counts each item at every cutoff
-- in one group (ndcg_beyond_shown_of, ndcg_beyond_exposure_in) instead.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure(tops) AS TABLE
    SELECT k, item_id, count(*) AS c
    FROM (SELECT k, unnest(top) AS item_id FROM query_table(tops))
    GROUP BY k, item_id;

-- ndcg_beyond_run_of(exposure, catalogue, gini_items, gini_divisor, gini_orientation,
-- catalogue_size, entropy_base, entropy_divisor): the per-run metrics from ndcg_beyond_exposure
-- and ndcg_beyond_catalogue: per cutoff k that shows a catalogue item, coverage, gini, entropy
-- (DOUBLEs) and coverage_count (m, how many catalogue items are shown). They read how many
-- catalogue items share each count c (items), not each item: the t items of count c that
-- follow b items of smaller counts hold places j = N - m + b + 1 .. N - m + b + t of gini's sum,
-- whose (2j - N - 1) c terms add up to t (N - 2m + 2b + t) c, an integer summed exactly.
-- The options (each peer's definition; the defaults are the ones above):
--   catalogue_size    'items': n is the catalogue's size; 'items_plus_one': one more (RecBole's
--                     padding item, in its ItemCoverage and GiniIndex)
--   gini_items        'catalogue': N = n, never-shown items in the sum as zeros; 'shown': N = m,
--                     the shown items only (Evidently's PopularityBias.get_gini)
--   gini_divisor      'n': the sum over N sum c; 'n_minus_1': over (N - 1) sum c (Elliot's
--                     GiniIndex, Evidently), NULL when N = 1
--   gini_orientation  'inequality': 0 when every item is shown equally often; 'equality':
--                     1 - that (Elliot's GiniIndex: higher is more equal)
--   entropy_base      '2' (bits) or 'e' (nats: RecBole's ShannonEntropy)
--   entropy_divisor   'none', or 'shown': divided by m (RecBole's ShannonEntropy)
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_of(exposure, catalogue, gini_items := 'catalogue',
        gini_divisor := 'n', gini_orientation := 'inequality', catalogue_size := 'items',
        entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH n_ AS (SELECT count(*) + CASE WHEN catalogue_size = 'items' THEN 0 ELSE 1 END AS n
                FROM query_table(catalogue)),
    counts_ AS (SELECT e.k, e.c, count(*) AS items
                FROM query_table(exposure) AS e
                SEMI JOIN query_table(catalogue) AS c ON c.item_id = e.item_id
                GROUP BY e.k, e.c),
    ranked_ AS (SELECT k, c, items, n,
                       coalesce(sum(items) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN
                                                 UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS b,
                       sum(items) OVER (PARTITION BY k) AS m,
                       sum(items * c) OVER (PARTITION BY k) AS total
                FROM counts_ CROSS JOIN n_),
    sized_ AS (SELECT *, CASE WHEN gini_items = 'catalogue' THEN n ELSE m END AS size
               FROM ranked_),
    run_ AS (SELECT k, any_value(m) AS m, any_value(m) / any_value(n) AS coverage,
                    sum(items::HUGEINT * (size - 2 * m + 2 * b + items) * c)::DOUBLE
                        / any_value(CASE WHEN gini_divisor = 'n' THEN size
                                         ELSE nullif(size - 1, 0) END * total) AS gini,
                    -fsum(items * (c / total * CASE WHEN entropy_base = '2' THEN log2(c / total)
                                                    ELSE ln(c / total) END)) AS entropy
             FROM sized_ GROUP BY k)
    SELECT k, coverage,
           CASE WHEN gini_orientation = 'inequality' THEN gini ELSE 1 - gini END AS gini,
           entropy / CASE WHEN entropy_divisor = 'none' THEN 1 ELSE m END AS entropy,
           m AS coverage_count
    FROM run_
    WHERE ndcg_option('gini_items', gini_items, ['catalogue', 'shown'])
      AND ndcg_option('gini_divisor', gini_divisor, ['n', 'n_minus_1'])
      AND ndcg_option('gini_orientation', gini_orientation, ['inequality', 'equality'])
      AND ndcg_option('entropy_base', entropy_base, ['2', 'e'])
      AND ndcg_option('entropy_divisor', entropy_divisor, ['none', 'shown'])
      AND ndcg_option('catalogue_size', catalogue_size, ['items', 'items_plus_one']);

-- ndcg_beyond_personalization_of(exposure, keys): per key k of `keys` (k and users, U: how many
-- users' lists were read), personalization = 1 - the mean over ordered pairs of users u != v of
-- |top_k(u) intersect top_k(v)| / L, L the mean list length (k when every list is full). An
-- item shown to c users is in c (c - 1) ordered pairs' overlaps, so the mean overlap is
-- sum c (c - 1) / (U (U - 1)) over every shown item, inside the catalogue or not; L = sum c / U.
-- NULL with fewer than two users or no item shown (Evidently's PersonalizationMetric).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_personalization_of(exposure, keys) AS TABLE
    SELECT u.k, 1 - sum(e.c * (e.c - 1))::DOUBLE
                    / nullif(any_value(u.users - 1) * sum(e.c), 0) AS personalization
    FROM query_table(keys) AS u
    LEFT JOIN query_table(exposure) AS e ON e.k IS NOT DISTINCT FROM u.k
    GROUP BY u.k;

-- ndcg_beyond_run_at(exposure, keys, catalogue, ...): ndcg_beyond_run_of (its options passed on)
-- at every k of `keys` (a relation with k and users: the cutoffs, or groups, whose lists were
-- read, and how many users' lists): k, coverage, gini, entropy (0 when no catalogue item is
-- shown), users, coverage_count and personalization (ndcg_beyond_personalization_of).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_at(exposure, keys, catalogue,
        gini_items := 'catalogue', gini_divisor := 'n', gini_orientation := 'inequality',
        catalogue_size := 'items', entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH run_ AS (SELECT *, true AS found
                  FROM ndcg_beyond_run_of(exposure, catalogue, gini_items := gini_items,
                                          gini_divisor := gini_divisor,
                                          gini_orientation := gini_orientation,
                                          catalogue_size := catalogue_size,
                                          entropy_base := entropy_base,
                                          entropy_divisor := entropy_divisor)),
    personal_ AS (FROM ndcg_beyond_personalization_of(exposure, keys))
    SELECT u.k, coalesce(r.coverage, 0.0) AS coverage,
           CASE WHEN r.found THEN r.gini ELSE 0.0 END AS gini,
           coalesce(r.entropy, 0.0) AS entropy, u.users,
           coalesce(r.coverage_count, 0) AS coverage_count, p.personalization
    FROM query_table(keys) AS u LEFT JOIN run_ AS r ON r.k IS NOT DISTINCT FROM u.k
    LEFT JOIN personal_ AS p ON p.k IS NOT DISTINCT FROM u.k;

-- ndcg_beyond_run(tops, catalogue, ...): ndcg_beyond_run_at (its options passed on) over the
-- lists of ndcg_beyond_tops: per cutoff k, coverage, gini, entropy (0 when no catalogue item is
-- shown), users (how many users' lists were read), coverage_count and personalization.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run(tops, catalogue, gini_items := 'catalogue',
        gini_divisor := 'n', gini_orientation := 'inequality', catalogue_size := 'items',
        entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH exposure_ AS (FROM ndcg_beyond_exposure(tops)),
    users_ AS (SELECT k, count(DISTINCT user_id) AS users FROM query_table(tops) GROUP BY k)
    FROM ndcg_beyond_run_at('exposure_', 'users_', catalogue, gini_items := gini_items,
                            gini_divisor := gini_divisor, gini_orientation := gini_orientation,
                            catalogue_size := catalogue_size, entropy_base := entropy_base,
                            entropy_divisor := entropy_divisor);

-- ndcg_beyond_outside_of(exposure, catalogue): the shown items outside the catalogue, over every
-- cutoff's lists: outside (how many distinct items) and example (one of them, the smallest as
-- text; NULL when none). One row. It reads exposure's item_id alone, so the entries of
-- ndcg_beyond_entries serve as well.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_outside_of(exposure, catalogue) AS TABLE
    SELECT count(DISTINCT e.item_id) AS outside, min(e.item_id::VARCHAR) AS example
    FROM query_table(exposure) AS e
    ANTI JOIN query_table(catalogue) AS c ON c.item_id = e.item_id;

-- ndcg_beyond_outside(tops, catalogue): ndcg_beyond_outside_of over the lists of
-- ndcg_beyond_tops.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_outside(tops, catalogue) AS TABLE
    WITH exposure_ AS (FROM ndcg_beyond_exposure(tops))
    FROM ndcg_beyond_outside_of('exposure_', catalogue);

-- ndcg_beyond_novelty(p, n, smoothing, unseen): the self-information of an item that p of n train
-- users (or interaction rows) hold: -log2((p + 1) / (n + 1)) with smoothing 'add_one', -log2(p /
-- n) with 'none'. An item unseen in train (p = 0) by unseen: 'count' takes p = 0 as it is (with
-- add_one only: -log2(0) is infinite), 'one' as p = 1 (RecTools' MeanInvUserFreq), 'skip' gives
-- NULL, left out of the mean (Evidently's NoveltyMetric), 'zero' gives 0, still counted in the
-- mean (Microsoft recommenders' novelty).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_novelty(p, n, smoothing, unseen) AS
    CASE WHEN p = 0 AND unseen = 'skip' THEN NULL
         WHEN p = 0 AND unseen = 'zero' THEN 0.0
         ELSE -log2((CASE WHEN p = 0 AND unseen = 'one' THEN 1 ELSE p END
                     + CASE WHEN smoothing = 'add_one' THEN 1 ELSE 0 END)
                    / (n + CASE WHEN smoothing = 'add_one' THEN 1 ELSE 0 END)) END;

-- ndcg_beyond_values_of(shown, popularity, novelty_by, novelty_smoothing, novelty_unseen,
-- tail_rule, popularity_unseen): what each shown item adds to the per-user metrics that read
-- pop: per item of shown (item_id, each once: ndcg_beyond_shown_of's rows), item_id, novelty,
-- popularity and tail (DOUBLEs; popularity NULL when left out of the mean). popularity as
-- ndcg_beyond_popularity returns it (with the same tail_rule): an item it lacks has pop 0 and
-- is tail under the rule 'catalogue' only. novelty reads the item's count of distinct train
-- users over U (novelty_by 'users') or of interaction rows over the train rows
-- ('interactions', as Microsoft recommenders' novelty does), by ndcg_beyond_novelty.
-- popularity_unseen 'zero' counts an item unseen in train (pop 0) as 0, 'skip' leaves it out of
-- popularity's mean (Evidently's PopularityBias.get_apr).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_values_of(shown, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count', tail_rule := 'catalogue',
        popularity_unseen := 'zero') AS TABLE
    WITH totals_ AS (SELECT CASE WHEN novelty_by = 'users' THEN any_value(users)
                                 ELSE any_value(interactions) END AS n
                     FROM query_table(popularity)
                     WHERE ndcg_option('novelty_by', novelty_by, ['users', 'interactions'])
                       AND ndcg_option('novelty_smoothing', novelty_smoothing, ['add_one', 'none'])
                       AND ndcg_option('novelty_unseen', novelty_unseen,
                                       ['count', 'one', 'skip', 'zero'])
                       AND ndcg_option('popularity_unseen', popularity_unseen, ['zero', 'skip'])
                       AND ndcg_require(novelty_smoothing = 'add_one' OR novelty_unseen <> 'count',
                               'novelty_unseen ''count'' needs novelty_smoothing ''add_one'': an '
                               || 'item unseen in train would score -log2(0), infinite; choose '
                               || 'novelty_unseen ''one'', ''skip'' or ''zero'''))
    SELECT s.item_id,
           ndcg_beyond_novelty(CASE WHEN p.item_id IS NULL THEN 0
                                    WHEN novelty_by = 'users' THEN p.by_users
                                    ELSE p.by_rows END, totals_.n, novelty_smoothing,
                               novelty_unseen) AS novelty,
           CASE WHEN coalesce(p.pop, 0) > 0 OR popularity_unseen = 'zero'
                THEN coalesce(p.pop::DOUBLE, 0.0) END AS popularity,
           CASE WHEN p.item_id IS NULL THEN CASE WHEN tail_rule = 'catalogue' THEN 1.0 ELSE 0.0 END
                WHEN p.tail THEN 1.0 ELSE 0.0 END AS tail
    FROM query_table(shown) AS s
    LEFT JOIN query_table(popularity) AS p ON p.item_id = s.item_id
    CROSS JOIN totals_;

-- ndcg_beyond_user_in(entries, item_values, tops): the per-user metrics that read pop: per user and
-- cutoff, user_id, k, novelty, popularity and tail (DOUBLEs; no row for an empty list; novelty
-- or popularity NULL when every item is left out), the means of their items' values. entries
-- as ndcg_beyond_entries returns it for tops; tops is read for its cutoffs (column k) alone, so
-- a relation of the cutoffs serves as well (DuckDB plans that join better than a view of the
-- lists cut per cutoff); item_values ndcg_beyond_values_of's rows, holding
-- every item of entries: the join is an inner one, which DuckDB runs 2-3x faster than a LEFT
-- JOIN (above all from a table, with integer item ids of a narrow range).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user_in(entries, item_values, tops) AS TABLE
    SELECT e.user_id, c.k, avg(v.novelty) AS novelty, avg(v.popularity) AS popularity,
           avg(v.tail) AS tail
    FROM query_table(entries) AS e
    JOIN query_table(item_values) AS v ON v.item_id = e.item_id
    JOIN ndcg_beyond_cutoffs_of(tops) AS c ON e.position <= c.depth
    GROUP BY e.user_id, c.k;

-- ndcg_beyond_user_of(entries, tops, popularity, novelty_by, novelty_smoothing, novelty_unseen,
-- tail_rule, popularity_unseen): ndcg_beyond_user_in over the values (ndcg_beyond_values_of,
-- its options passed on) of the items found in entries.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user_of(entries, tops, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count',
        tail_rule := 'catalogue', popularity_unseen := 'zero') AS TABLE
    WITH shown_ AS (SELECT DISTINCT item_id FROM query_table(entries)),
    values_ AS (FROM ndcg_beyond_values_of('shown_', popularity, novelty_by := novelty_by,
                                           novelty_smoothing := novelty_smoothing,
                                           novelty_unseen := novelty_unseen,
                                           tail_rule := tail_rule,
                                           popularity_unseen := popularity_unseen))
    FROM ndcg_beyond_user_in(entries, 'values_', tops);

-- ndcg_beyond_user(tops, popularity, ...): ndcg_beyond_user_of over the entries of tops (its
-- options passed on).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user(tops, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count',
        tail_rule := 'catalogue', popularity_unseen := 'zero') AS TABLE
    WITH entries_ AS (FROM ndcg_beyond_entries(tops))
    FROM ndcg_beyond_user_of('entries_', tops, popularity, novelty_by := novelty_by,
                             novelty_smoothing := novelty_smoothing,
                             novelty_unseen := novelty_unseen, tail_rule := tail_rule,
                             popularity_unseen := popularity_unseen);

-- ndcg_beyond_plain(squares): whether `squares`, the sum of the squares of an embedding's
-- numbers as they are, is their length squared to the last bits: finite (no square overflowed)
-- and at least 1e-200 (the squares that vanish below 1e-308 weigh less than 1e-105 of it).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_plain(squares) AS
    coalesce(isfinite(squares) AND squares >= 1e-200, false);

-- ndcg_beyond_unit(embedding, scale, length): the embedding divided by its length, given the
-- length of embedding / scale (computed once per item, not once per number). scale is NULL when
-- the numbers' own squares sum to the length squared (ndcg_beyond_plain), else their largest
-- absolute number: a cosine does not depend on the length, so each number is then divided by
-- the scale first: squares of 1e200 (or 1e-200) would overflow (or vanish), squares of numbers
-- no larger than 1 cannot.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_unit(embedding, scale, length) AS
    CASE WHEN scale IS NULL THEN list_transform(embedding, lambda x: x / length)
         ELSE list_transform(embedding, lambda x: (x / scale) / length) END;

-- ndcg_beyond_unit_at(embedding, scale, length, d): number d of ndcg_beyond_unit(embedding, scale,
-- length), by the same arithmetic (the same bits), without making the list: a table of the unit
-- vectors as one column per number is taken straight from the embeddings.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_unit_at(embedding, scale, length, d) AS
    CASE WHEN scale IS NULL THEN embedding[d] / length ELSE (embedding[d] / scale) / length END;

-- ndcg_beyond_jaccard_distance(a, b): 1 - |a intersect b| / |a union b| of two category lists.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_jaccard_distance(a, b) AS
    1.0 - len(list_intersect(a, b)) / len(list_distinct(list_concat(a, b)));

-- ndcg_beyond_cosine_ild(n, total): ild of n unit vectors from their sum `total`: the mean over
-- the n(n-1)/2 pairs of 1 - cosine. Sum over pairs a < b of u_a . u_b = (|total|^2 - n) / 2,
-- as |total|^2 = sum over a, b of u_a . u_b and each u_a . u_a = 1: one pass over the list,
-- not one per pair.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_ild(n, total) AS
    1.0 - (list_dot_product(total, total) - n) / (n * (n - 1));

-- ndcg_beyond_checked(items): the items table as item_id, embedding (DOUBLE[] or NULL), scale and
-- length (what ndcg_beyond_unit and ndcg_beyond_unit_at divide by) and category (a VARCHAR list
-- as given, or NULL: made a set where it is read, ndcg_beyond_categories, so a run whose ild
-- reads embeddings never pays for it), with the checks: an item twice, embeddings of
-- different lengths (each against one item's length), a NULL, NaN or infinite number in an
-- embedding, an embedding of zeros (it has no direction), a category list without a category
-- (empty, or only NULLs).
-- items has item_id and the columns embedding and category (either may be all NULL). The
-- repeat check reads the ids alone; the others are folded into the one pass over the rows:
-- NULL numbers are counted (list_count skips them) first, NaN and infinite ones found in the
-- scale (the largest absolute number: NaN sorts above every number),
-- and the one item whose length every other is checked against is joined to every row. The
-- length is the native list_dot_product of the numbers as they are (one pass, no lambda) when
-- that is exact (ndcg_beyond_plain: nearly always); only the others (NaN, infinite, huge or tiny
-- numbers, zeros) are scaled first, and their scale is what the checks read.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_checked(items) AS TABLE
    WITH twice_ AS (SELECT count(*) AS times, item_id FROM query_table(items)
                    GROUP BY item_id HAVING count(*) > 1 ORDER BY item_id::VARCHAR LIMIT 1),
    first_ AS (SELECT item_id, len(embedding::DOUBLE[]) AS width FROM query_table(items)
               WHERE embedding IS NOT NULL LIMIT 1),
    read_ AS (SELECT item_id, embedding::DOUBLE[] AS embedding, category::VARCHAR[] AS category
              FROM query_table(items)),
    -- list_dot_product stops on a NULL number anywhere in its input's vector, in its own words,
    -- and DuckDB 1.5 may compute it before a filter's check: the check is the CASE's condition,
    -- which DuckDB evaluates before the branch
    plain_ AS (SELECT *,
                      CASE WHEN ndcg_require(embedding IS NULL
                                             OR list_count(embedding) = len(embedding),
                                             'items: item ' || ndcg_show(item_id)
                                             || ' has a NULL number in its embedding: fill it in')
                           THEN list_dot_product(embedding, embedding) END AS squares
               FROM read_),
    scaled_ AS (SELECT *, CASE WHEN NOT ndcg_beyond_plain(squares)
                               THEN list_max(list_transform(embedding, lambda x: abs(x))) END
                              AS scale
                FROM plain_),
    rows_ AS (SELECT item_id, embedding, category, scale,
                     sqrt(CASE WHEN scale IS NULL THEN squares
                               ELSE list_sum(list_transform(embedding,
                                                            lambda x: (x / scale) * (x / scale)))
                          END) AS length
              FROM scaled_)
    SELECT r.item_id, r.embedding, r.scale, r.length, r.category
    FROM rows_ AS r LEFT JOIN first_ AS f ON true
    WHERE (SELECT ndcg_require(count(*) = 0, 'items: item ' || ndcg_show(any_value(item_id))
                                             || ' has ' || any_value(times)
                                             || ' rows: give each item one row') FROM twice_)
      AND ndcg_require(r.embedding IS NULL OR len(r.embedding) = f.width,
                       'items: embeddings have different lengths: item ' || ndcg_show(r.item_id)
                       || ' has ' || len(r.embedding) || ' numbers, item ' || ndcg_show(f.item_id)
                       || ' has ' || f.width || ': give every item one length')
      AND ndcg_require(r.embedding IS NULL OR coalesce(isfinite(r.scale), true),
                       'items: item ' || ndcg_show(r.item_id) || ' has '
                       || ndcg_show(list_filter(r.embedding, lambda x: NOT isfinite(x))[1])
                       || ' in its embedding: give finite numbers')
      AND ndcg_require(r.embedding IS NULL OR r.scale IS NULL OR r.scale > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an embedding of zeros, '
                       || 'which has no direction for a cosine')
      AND ndcg_require(r.category IS NULL OR list_count(r.category) > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an empty category list');

-- ndcg_beyond_categories(category): an item's category list as the set jaccard reads (each
-- category once, NULLs dropped), from the list as given (ndcg_beyond_checked's category).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_categories(category) AS list_distinct(category);

-- ndcg_beyond_features(items): the items table as item_id, unit (the embedding as a unit vector,
-- DOUBLE[], or NULL) and category (ndcg_beyond_categories: a distinct VARCHAR list, or NULL),
-- with ndcg_beyond_checked's checks.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_features(items) AS TABLE
    SELECT item_id, ndcg_beyond_unit(embedding, scale, length) AS unit,
           ndcg_beyond_categories(category) AS category
    FROM ndcg_beyond_checked(items);

-- ndcg_beyond_cosine_mode(features): true when any item of features has an embedding: ild then
-- reads embeddings (and every shown item needs one), else categories.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_mode(features) AS TABLE
    SELECT EXISTS (FROM query_table(features) WHERE unit IS NOT NULL) AS cosine;

-- ndcg_beyond_at(tops, features, cosine): the items of every top_k of two items or more, when
-- ild reads embeddings (cosine true) or categories (false), else none: user_id, k, position,
-- item_id.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_at(tops, features, cosine) AS TABLE
    WITH mode_ AS (FROM ndcg_beyond_cosine_mode(features))
    SELECT user_id, k, generate_subscripts(top, 1) AS position, unnest(top) AS item_id
    FROM query_table(tops)
    WHERE len(top) >= 2 AND (SELECT mode_.cosine = cosine FROM mode_);

-- ndcg_beyond_missing(shown, features, cosine): the items of `shown` (ndcg_beyond_at's rows, by
-- name)
-- without what ild reads (an embedding when cosine, else a category): item_id, each once. The
-- check joins the ids alone, never the embeddings.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_missing(shown, features, cosine) AS TABLE
    SELECT DISTINCT a.item_id
    FROM query_table(shown) AS a
    ANTI JOIN (SELECT item_id FROM query_table(features)
               WHERE CASE WHEN cosine THEN unit IS NOT NULL ELSE category IS NOT NULL END) AS f
      ON f.item_id = a.item_id;

-- ndcg_beyond_missing_check(n, example, cosine): true, or stops when n (> 0) shown items lack
-- what ild reads, naming the count and one of them (example, as text).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_missing_check(n, example, cosine) AS
    ndcg_require(n = 0, 'items: ' || n || ' recommended item(s) have no '
                        || CASE WHEN cosine THEN 'embedding' ELSE 'category' END
                        || ' for ild, e.g. item ' || ndcg_show(example));

-- ndcg_beyond_shown(tops, features, cosine): ndcg_beyond_at's rows; stops when a shown item
-- lacks what ild reads, naming one (the smallest as text) and the count.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_shown(tops, features, cosine) AS TABLE
    WITH at_ AS (FROM ndcg_beyond_at(tops, features, cosine)),
    missing_ AS (SELECT count(*) AS n, min(item_id::VARCHAR) AS example
                 FROM ndcg_beyond_missing('at_', features, cosine))
    SELECT * FROM at_
    WHERE (SELECT ndcg_beyond_missing_check(n, example, cosine) FROM missing_);

-- ndcg_beyond_ild_cosine(tops, features): ild by embeddings per user and cutoff (when any item
-- has one): user_id, k, ild, in one pass per list (ndcg_beyond_cosine_ild).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_cosine(tops, features) AS TABLE
    SELECT user_id, k,
           ndcg_beyond_cosine_ild(count(*), list_transform(range(1, max(len(unit)) + 1),
               lambda d: list_sum(list_transform(list(unit), lambda u: u[d])))) AS ild
    FROM ndcg_beyond_shown(tops, features, true) AS s
    LEFT JOIN query_table(features) AS f ON f.item_id = s.item_id
    GROUP BY user_id, k;

-- ndcg_beyond_ild_jaccard(tops, features): ild by categories per user and cutoff (when no item
-- has an embedding): user_id, k, ild, the mean over pairs of positions.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_jaccard(tops, features) AS TABLE
    WITH shown_ AS (SELECT s.user_id, s.k, s.position, f.category
                    FROM ndcg_beyond_shown(tops, features, false) AS s
                    JOIN query_table(features) AS f ON f.item_id = s.item_id)
    SELECT a.user_id, a.k, avg(ndcg_beyond_jaccard_distance(a.category, b.category)) AS ild
    FROM shown_ AS a JOIN shown_ AS b
      ON a.user_id = b.user_id AND a.k IS NOT DISTINCT FROM b.k AND a.position < b.position
    GROUP BY a.user_id, a.k;

-- ndcg_beyond_ild_vectors(tops, features, vectors, cutoff): ild by embeddings as
-- ndcg_beyond_ild_cosine computes it, of the lists of tops at the one cutoff `cutoff` (its k;
-- NULL: no cutoff): user_id, k, ild and `lacking`: how many of the list's items have no vector
-- (no embedding, or not in features). vectors: item_id and the numbers of each item's unit
-- vector (features' unit) as DOUBLE columns named d1, d2, ... (one per number). Each list's sum
-- of unit vectors is then one plain sum() per column, where ndcg_beyond_ild_cosine gathers each
-- list's vectors with list() (about 3x the time). One cutoff a call, so the sums are grouped
-- by user alone (one key, not user and cutoff: benchmarks/reports/2026-11-26-ild32f.md). The join that fetches the vectors counts the
-- lacking ones too, so the check is not a second join of every shown item: a list with
-- lacking > 0 has no ild, and the caller stops with ndcg_beyond_shown's message (which names
-- how many items and one of them) when any list has one. The LEFT JOIN: with an inner one
-- DuckDB 2.0 sums the vectors per item below the join first (its partial aggregate
-- pushdown), 2-3x slower.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_vectors(tops, features, vectors, cutoff) AS TABLE
    WITH at_ AS (FROM query_table(tops) WHERE k IS NOT DISTINCT FROM cutoff),
    sums_ AS (SELECT s.user_id, count(*) AS n, count(*) - count(v.item_id) AS lacking,
                     sum(COLUMNS(v.* EXCLUDE (item_id)))
              FROM ndcg_beyond_at('at_', features, true) AS s
              LEFT JOIN query_table(vectors) AS v ON v.item_id = s.item_id
              GROUP BY s.user_id)
    SELECT user_id, CAST(cutoff AS BIGINT) AS k,
           CASE WHEN lacking = 0 THEN ndcg_beyond_cosine_ild(n, [*COLUMNS('^d[0-9]+$')]) END
               AS ild,
           lacking
    FROM sums_;

-- ndcg_beyond_ild(tops, features): ild per user and cutoff (users with two items or more):
-- user_id, k, ild. features as ndcg_beyond_features returns it. Embeddings when any item has
-- one, else categories: each variant reads no list unless its mode is chosen.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild(tops, features) AS TABLE
    FROM ndcg_beyond_ild_cosine(tops, features)
    UNION ALL
    FROM ndcg_beyond_ild_jaccard(tops, features);

-- ndcg_beyond_ild_as(ild, tops, ild_divisor, ild_short): ild per user and cutoff (user_id, k,
-- ild) from ndcg_beyond_ild's rows (the mean over pairs) as a peer defines it. ild_divisor
-- 'pairs' keeps the mean over the n (n - 1) / 2 pairs; 'items' divides the pairs' sum by the n
-- items instead, (n - 1) / 2 times the mean (Evidently's DiversityMetric.get_ild). ild_short
-- 'skip' gives a one-item list no value; 'zero' gives it 0, counted in the mean (RecTools'
-- IntraListDiversity, Evidently). tops (the same lists) gives each list's length.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_as(ild, tops, ild_divisor := 'pairs',
        ild_short := 'skip') AS TABLE
    SELECT i.user_id, i.k,
           i.ild * CASE WHEN ild_divisor = 'pairs' THEN 1 ELSE (len(t.top) - 1) / 2 END AS ild
    FROM query_table(ild) AS i
    JOIN query_table(tops) AS t ON t.user_id = i.user_id AND t.k IS NOT DISTINCT FROM i.k
    WHERE ndcg_option('ild_divisor', ild_divisor, ['pairs', 'items'])
      AND ndcg_option('ild_short', ild_short, ['skip', 'zero'])
    UNION ALL
    SELECT user_id, k, 0.0 AS ild FROM query_table(tops)
    WHERE len(top) = 1 AND ild_short = 'zero';

-- For the shell: the beyond-accuracy metrics at one cutoff k, with train and items passed by
-- name as recs and rels are (items may be NULL: the catalogue is then train's items).

-- ndcg_metrics_beyond_of(rankings, rels, train, items, k, head_share, judged_only): rankings a
-- ranking edge's result by name, rels the judgments (user_id, item_id, relevance; they choose
-- the evaluated users and, with judged_only, the judged items). Returns user_id (NULL for the
-- per-run metrics), metric ('coverage@10', 'novelty@10', ...) and value: one row per run metric
-- and one per user and per-user metric (novelty, popularity, tail).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_of(rankings, rels, train, items := NULL,
        k := 10, head_share := 0.2, judged_only := false) AS TABLE
    WITH ndcg_judgments_ AS (FROM ndcg_judgments(rels)),
    ndcg_tops_ AS (FROM ndcg_beyond_tops(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                                         judged_only := judged_only)),
    ndcg_catalogue_ AS (FROM ndcg_beyond_catalogue(items, train)),
    ndcg_popularity_ AS (FROM ndcg_beyond_popularity(train, 'ndcg_catalogue_',
                                                     head_share := head_share)),
    run_ AS (UNPIVOT (SELECT k, coverage, gini, entropy
                      FROM ndcg_beyond_run('ndcg_tops_', 'ndcg_catalogue_'))
             ON coverage, gini, entropy INTO NAME metric VALUE value),
    user_ AS (UNPIVOT (FROM ndcg_beyond_user('ndcg_tops_', 'ndcg_popularity_'))
              ON novelty, popularity, tail INTO NAME metric VALUE value)
    SELECT NULL AS user_id, ndcg_metric_name(metric, k) AS metric, value FROM run_
    UNION ALL
    SELECT user_id, ndcg_metric_name(metric, k) AS metric, value FROM user_;

-- ndcg_metrics_beyond_ild_of(rankings, rels, items, k, judged_only): ild@k per evaluated user
-- with two items or more: user_id, metric ('ild@10'), value. items has item_id, category and
-- embedding (either may be all NULL).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_ild_of(rankings, rels, items, k := 10,
        judged_only := false) AS TABLE
    WITH ndcg_judgments_ AS (FROM ndcg_judgments(rels)),
    ndcg_tops_ AS (FROM ndcg_beyond_tops(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                                         judged_only := judged_only)),
    ndcg_features_ AS (FROM ndcg_beyond_features(items))
    SELECT user_id, ndcg_metric_name('ild', k) AS metric, ild AS value
    FROM ndcg_beyond_ild('ndcg_tops_', 'ndcg_features_');

-- ndcg_metrics_beyond(recs, rels, train, items, k, head_share, max_depth, judged_only): recs
-- nested (user_id, items LIST in rank order); rows as ndcg_metrics_beyond_of.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond(recs, rels, train, items := NULL, k := 10,
        head_share := 0.2, max_depth := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := max_depth))
    FROM ndcg_metrics_beyond_of('ndcg_ranked_', rels, train, items := items, k := k,
                                head_share := head_share, judged_only := judged_only);

-- ndcg_metrics_beyond_ild(recs, rels, items, k, max_depth, judged_only): recs nested; rows as
-- ndcg_metrics_beyond_ild_of.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_ild(recs, rels, items, k := 10,
        max_depth := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := max_depth))
    FROM ndcg_metrics_beyond_ild_of('ndcg_ranked_', rels, items, k := k,
                                    judged_only := judged_only);

-- ndcg_metrics_beyond_mean(per_user): the rows of ndcg_metrics_beyond or ndcg_metrics_beyond_ild
-- (by name) summed up: metric, value (a per-run metric's value; a per-user metric's mean over
-- the users that have one) and users (how many users have a value; NULL for a per-run metric).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_mean(per_user) AS TABLE
    SELECT metric, fsum(value) / count(value) AS value,
           CASE WHEN count(user_id) > 0 THEN count(user_id) END AS users
    FROM query_table(per_user)
    GROUP BY metric;

-- ndcg_compare.sql
-- Comparing runs and breaking results down by segment: the aggregates the statistics need.
-- Inputs are per-user values: one row per user with a value x (a metric of the run compared) and,
-- for paired statistics, base (the same metric of the baseline run for the same user).
-- Formulas (the statistics themselves are computed from these aggregates, see ndcg_duck/comparison/stats.py):
--   mean  = (1/n) sum x_i                    (here a compensated sum, fsum; the means compare
--                                             reports are exactly rounded: ndcg_means.sql)
--   var   = 1/(n-1) sum (x_i - mean)^2       (the sample variance)
--   d_i   = x_i - base_i                     the paired difference of user i
--   a win is d_i > 1e-12, a loss d_i < -1e-12, a tie anything in between (equal up to rounding)
-- Paired t-test: t = mean(d) / sqrt(var(d) / n) on n - 1 degrees of freedom (Student 1908; for IR
-- Smucker, Allan and Carterette 2007); effect size d_z = mean(d) / sqrt(var(d)) (Cohen 1988).

-- ndcg_tie_margin(): differences within this margin of 0 count as ties.
CREATE OR REPLACE TEMP MACRO ndcg_tie_margin() AS 1e-12;

-- ndcg_spread(x): aggregate over users: {users, mean, var} of the values x (var NULL for one user).
CREATE OR REPLACE TEMP MACRO ndcg_spread(x) AS
    {users: count(x), mean: fsum(x) / count(x), var: var_samp(x)};

-- ndcg_paired(x, base): aggregate over users: what a paired comparison of x against base needs:
-- {users, mean, var (of x), base_mean, base_var, diff_mean, diff_var (of x - base), wins, ties,
-- losses}.
CREATE OR REPLACE TEMP MACRO ndcg_paired(x, base) AS
    {users: count(x - base),
     mean: fsum(x) / count(x), var: var_samp(x),
     base_mean: fsum(base) / count(base), base_var: var_samp(base),
     diff_mean: fsum(x - base) / count(x - base), diff_var: var_samp(x - base),
     wins: count(*) FILTER (WHERE x - base > ndcg_tie_margin()),
     ties: count(*) FILTER (WHERE abs(x - base) <= ndcg_tie_margin()),
     losses: count(*) FILTER (WHERE x - base < -ndcg_tie_margin())};

-- ndcg_sorted_sample(x, points): aggregate: `points` values of x spread evenly over its sorted
-- order (the first and the last included): the curve of sorted per-user values, for a plot.
CREATE OR REPLACE TEMP MACRO ndcg_sorted_sample(x, points) AS
    quantile_disc(x, list_transform(range(points), lambda i: i / greatest(points - 1, 1)));

-- ndcg_bin(x, low, high, bins): which of `bins` equal-width bins over [low, high] holds x: 0 to
-- bins - 1 (high goes to the last bin), for a histogram (GROUP BY this).
CREATE OR REPLACE TEMP MACRO ndcg_bin(x, low, high, bins) AS
    least(floor((x - low) / greatest(high - low, 1e-300) * bins), bins - 1)::BIGINT;

-- ndcg_pairs(per_user, baseline): a run's per-user NDCG against the baseline run's, paired on
-- the user as compare pairs them: the users both have. per_user and baseline are tables by name
-- with user_id and ndcg (as ndcg_per_user returns them). Returns user_id, baseline (the
-- baseline's ndcg), ndcg (the run's) and difference (ndcg - baseline), one row per paired user:
-- the per-user rows of ndcg_paired(ndcg, baseline).
CREATE OR REPLACE TEMP MACRO ndcg_pairs(per_user, baseline) AS TABLE
    SELECT r.user_id, b.ndcg AS baseline, r.ndcg, r.ndcg - b.ndcg AS difference
    FROM query_table(per_user) AS r
    JOIN query_table(baseline) AS b ON b.user_id = r.user_id;

-- ndcg_custom.sql
-- Your own measures (ndcg-duck eval --metrics-sql FILE, evaluate(metrics_sql=...)): FILE holds
-- DuckDB macros, each named ndcg_metric_<name> (<name>: a lowercase letter, then letters, digits
-- or _; not a built-in metric's name), a scalar macro over one user at one cutoff that returns a
-- number (any integer, DECIMAL, FLOAT or DOUBLE; NULL: no value, left out of the mean). Its
-- parameters are any of these, by name, in any order (ndcg_user_metrics' edge):
--   gains          DOUBLE[]  the gain at each position (0: not judged or not relevant), padded
--                            with 0 to the largest cutoff (no cutoff: the whole ranking)
--   relevant_ranks BIGINT[]  the ranks of the relevant ranked items, ascending
--   judged_ranks   BIGINT[]  the ranks of the ranked items with a judgment, ascending
--   num_relevant   BIGINT    R, the user's relevant judgments, ranked or not
--   ideal          DOUBLE[]  the user's positive gains, best first (padded as gains)
--   length         BIGINT    the ranking's length
--   k              BIGINT    the cutoff (NULL: none)
--   depth          BIGINT    k, or the largest BIGINT when there is no cutoff
-- e.g.  CREATE MACRO ndcg_metric_prec(relevant_ranks, k) AS
--           len(list_filter(relevant_ranks, lambda p: p <= k)) / k;
-- and `-m prec@10` computes it for every evaluated user, with the same options, checks and
-- exactly rounded mean as the built-in measures (ndcg_duck/metrics_sql.py reads the file).

-- ndcg_own_checked(value, macro, file, user_id, k): the value a user's own measure (macro,
-- read from file) gave user_id at cutoff k, as a DOUBLE, when it is a finite number or NULL;
-- otherwise (NaN, an infinity) stops naming the macro, the file, the user and the cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_own_checked(value, macro, file, user_id, k) AS
    CASE WHEN ndcg_require(value IS NULL OR isfinite(value::DOUBLE),
                           '--metrics-sql ' || file || ': ' || macro || ' returned '
                           || ndcg_show(value) || ' for user ' || ndcg_show(user_id) || ' at k '
                           || coalesce(k::VARCHAR, 'all') || ', not a number: return a finite '
                           || 'number or NULL')
         THEN value::DOUBLE END;

-- ndcg_leaks.sql
-- What would mislead, said out loud (issue 33): recommended items the user already had in train
-- (seen items, which a recommender is rarely meant to show again), tied scores (whose order
-- only a rule decides), and the per-item view of a run (how often each item is shown, relevant
-- and hit).
--
-- train has user_id and item_id (the interactions the system learned from; other columns are
-- ignored). A ranking edge's result (user_id, items, ranks) is what every metric reads
-- (sql/ndcg_input.sql).

-- ndcg_seen_entries(ranked, train): the items of each ranking of `ranked` (a ranking edge's
-- result) that its user has in train: user_id, position (1 for the first) and item_id, one row
-- each. An item a user has in train several times is one row.
CREATE OR REPLACE TEMP MACRO ndcg_seen_entries(ranked, train) AS TABLE
    SELECT e.user_id, e.position, e.item_id
    FROM (SELECT user_id, generate_subscripts(items, 1) AS position, unnest(items) AS item_id
          FROM query_table(ranked)) AS e
    SEMI JOIN query_table(train) AS t ON t.user_id = e.user_id AND t.item_id = e.item_id;

-- ndcg_seen_any(items, had): whether the list `items` holds an item of the list `had` (NULLs never
-- match). When the two lengths multiply to at most 4096, each item of had is looked for in items
-- (list_contains: about a third of list_has_any's cost on a ranking of 20 and 10 train items);
-- longer lists use list_has_any (a hash set: no long pair of lists is compared item by item).
CREATE OR REPLACE TEMP MACRO ndcg_seen_any(items, had) AS
    CASE WHEN len(items) * len(had) <= 4096
         THEN coalesce(list_bool_or(list_transform(had, lambda x: list_contains(items, x))), false)
         ELSE list_has_any(items, had) END;

-- ndcg_seen_entries_of(ranked, lists): ndcg_seen_entries from train's rows grouped per user
-- (ndcg_train_lists, sql/ndcg_beyond.sql): each ranking meets its user's train items once, and
-- only the rankings that hold one of them (ndcg_seen_any) are taken apart item by item.
CREATE OR REPLACE TEMP MACRO ndcg_seen_entries_of(ranked, lists) AS TABLE
    SELECT user_id, position, items[position] AS item_id
    FROM (SELECT r.user_id, r.items, t.items AS had, generate_subscripts(r.items, 1) AS position
          FROM query_table(ranked) AS r JOIN query_table(lists) AS t ON t.user_id = r.user_id
          WHERE ndcg_seen_any(r.items, t.items))
    WHERE list_contains(had, items[position]);

-- ndcg_seen_of(entries): ndcg_seen's counts from its rows of ndcg_seen_entries (by name).
CREATE OR REPLACE TEMP MACRO ndcg_seen_of(entries) AS TABLE
    SELECT count(DISTINCT user_id) AS users, count(*) AS items,
           arg_min(user_id::VARCHAR, [user_id::VARCHAR, lpad(position::VARCHAR, 20, '0')])
               AS example_user,
           arg_min(item_id::VARCHAR, [user_id::VARCHAR, lpad(position::VARCHAR, 20, '0')])
               AS example_item
    FROM query_table(entries);

-- ndcg_seen(ranked, train): how many of the rankings of `ranked` (a ranking edge's result, cut
-- where the metrics read it) hold items their user has in train: users, items (the recommended
-- rows seen in train) and one example, the smallest user as text and its first such item
-- (example_user, example_item as text; NULL when there is none). One row.
CREATE OR REPLACE TEMP MACRO ndcg_seen(ranked, train) AS TABLE
    WITH entries_ AS (FROM ndcg_seen_entries(ranked, train))
    FROM ndcg_seen_of('entries_');

-- ndcg_unseen(ranked, train, depth): a ranking edge's result with each user's train items taken
-- out of their ranking before the cut (as most recommender libraries evaluate: the items below
-- move up), the tie ranks numbered again (ndcg_first_positions), each list cut to its first
-- `depth` items (NULL: all). A user without train rows keeps their ranking.
CREATE OR REPLACE TEMP MACRO ndcg_unseen(ranked, train, depth := NULL) AS TABLE
    WITH seen_ AS (SELECT user_id, list(position) AS positions
                   FROM ndcg_seen_entries(ranked, train) GROUP BY user_id),
    kept_ AS (SELECT r.user_id,
                     CASE WHEN s.positions IS NULL THEN r.items
                          ELSE list_filter(r.items,
                                           lambda item, i: NOT list_contains(s.positions, i))
                     END AS items,
                     CASE WHEN s.positions IS NULL OR r.ranks IS NULL THEN r.ranks
                          ELSE ndcg_first_positions(list_filter(r.ranks,
                                   lambda rank, i: NOT list_contains(s.positions, i)))
                     END AS ranks
              FROM query_table(ranked) AS r LEFT JOIN seen_ AS s ON s.user_id = r.user_id)
    SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS items,
           list_slice(ranks, 1, coalesce(depth, len(ranks))) AS ranks
    FROM kept_;

-- ndcg_score_lists(recs, depth): per user of recs (user_id, item_id, score, checked by
-- ndcg_rows_scored), user_id and scores: the best depth + 1 scores, best first (all of them
-- with a NULL depth or one past ndcg_top_depth: then sorted per user).
CREATE OR REPLACE TEMP MACRO ndcg_score_lists(recs, depth) AS TABLE
    SELECT user_id, max(score, coalesce(ndcg_top_depth(depth), 1) + 1) AS scores
    FROM ndcg_rows_scored(recs)
    WHERE ndcg_top_depth(depth) IS NOT NULL
    GROUP BY user_id
    UNION ALL
    SELECT user_id, list(score ORDER BY score DESC) AS scores
    FROM ndcg_rows_scored(recs)
    WHERE ndcg_top_depth(depth) IS NULL
    GROUP BY user_id;

-- ndcg_ties_of(users): outcome.ties_note's counts from per-user rows (user_id, tied: the user's
-- tied rows, ndcg_tied_rows): users (with a tie), tied (summed) and example_user (the smallest
-- such user, as text). One row.
CREATE OR REPLACE TEMP MACRO ndcg_ties_of(users) AS TABLE
    SELECT count(*) AS users, coalesce(sum(tied), 0) AS tied, min(user_id::VARCHAR) AS example_user
    FROM query_table(users)
    WHERE tied > 0;

-- ndcg_ties(recs, depth): the tied scores among each user's first `depth` rows (NULL: all) of
-- recs (user_id, item_id, score): users (with a tie there), tied (ndcg_tied_rows, summed) and
-- example_user (the smallest such user, as text), by ndcg_ties_of. One row. A pass of its own
-- over recs: a run whose ranking edge counted them (ndcg_ranked_scores' tied) reads those.
CREATE OR REPLACE TEMP MACRO ndcg_ties(recs, depth := NULL) AS TABLE
    WITH ndcg_tied_ AS (SELECT user_id, ndcg_tied_rows(scores, depth) AS tied
                        FROM ndcg_score_lists(recs, depth))
    FROM ndcg_ties_of('ndcg_tied_');

-- ndcg_relevant_pairs(judgments): the relevant (user_id, item_id) pairs of a judgments edge's
-- result (ndcg_judgments: relevance > 0, or >= min_relevance).
CREATE OR REPLACE TEMP MACRO ndcg_relevant_pairs(judgments) AS TABLE
    SELECT user_id, item_id
    FROM (SELECT user_id, unnest(items) AS item_id, unnest(relevant) AS relevant
          FROM query_table(judgments))
    WHERE relevant;

-- ndcg_item_counts(entries, relevant, depths): the per-item view's counts, per cutoff k and item
-- shown or relevant: k, item_id, shown (how many users' top_k hold it: the exposure count),
-- relevant (how many users of `relevant` it is relevant for) and hits (how many users' top_k
-- hold it and it is relevant for them). entries as ndcg_beyond_entries gives them (the evaluated
-- users' lists), relevant the (user_id, item_id) pairs of the evaluated users, each once
-- (ndcg_relevant_pairs), depths the cutoffs as ndcg_beyond_shown_of takes them (one row, a
-- column per cutoff named by it, 'all' for no cutoff, holding the deepest position it reads).
-- One pass over the entries, each met by its relevant pair (a hit) in one join, one group per
-- item with its counts at every cutoff in a column of their own, its relevant count joined once,
-- then a row per cutoff (UNPIVOT) where the item is shown or relevant. Counts of users: those of
-- disjoint groups of users add up, per k and item, to the counts of all (the Spark engine's
-- workers).
CREATE OR REPLACE TEMP MACRO ndcg_item_counts(entries, relevant, depths) AS TABLE
    WITH shown_ AS (SELECT e.item_id,
                           {'shown': count(CASE WHEN e.position <= COLUMNS(d.*) THEN 1 END),
                            'hits': count(CASE WHEN e.position <= COLUMNS(d.*) THEN r.user_id END)}
                    FROM query_table(entries) AS e
                    LEFT JOIN query_table(relevant) AS r
                      ON r.user_id = e.user_id AND r.item_id = e.item_id
                    CROSS JOIN query_table(depths) AS d
                    GROUP BY e.item_id),
    relevant_ AS (SELECT item_id, count(*) AS relevant FROM query_table(relevant)
                  GROUP BY item_id),
    items_ AS (SELECT coalesce(s.item_id, r.item_id) AS item_id,
                      coalesce(r.relevant, 0) AS relevant,
                      coalesce(COLUMNS(s.* EXCLUDE (item_id)),
                               {'shown': 0::BIGINT, 'hits': 0::BIGINT})
               FROM shown_ AS s FULL JOIN relevant_ AS r ON r.item_id = s.item_id)
    SELECT CASE WHEN u.k = 'all' THEN NULL ELSE u.k::BIGINT END AS k, u.item_id,
           u.c.shown AS shown, u.relevant, u.c.hits AS hits
    FROM (UNPIVOT items_ ON COLUMNS(* EXCLUDE (item_id, relevant)) INTO NAME k VALUE c) AS u
    WHERE u.c.shown > 0 OR u.relevant > 0;

-- ndcg_item_view_of(counts, popularity): the per-item view from its counts (ndcg_item_counts'
-- rows, or their sums per k and item over groups of users): k, item_id, shown, exposure_share
-- (shown / the shown items of every user at k), relevant, hits and train_users (its
-- popularity: the distinct train users with it; 0 when none). popularity: item_id and pop
-- (ndcg_beyond_popularity; empty without train).
CREATE OR REPLACE TEMP MACRO ndcg_item_view_of(counts, popularity) AS TABLE
    SELECT c.k, c.item_id, c.shown,
           c.shown / sum(c.shown) OVER (PARTITION BY c.k) AS exposure_share,
           c.relevant, c.hits, coalesce(p.pop, 0) AS train_users
    FROM query_table(counts) AS c
    LEFT JOIN query_table(popularity) AS p ON p.item_id = c.item_id;

-- ndcg_item_view(entries, relevant, depths, popularity): the per-item view of a run, per cutoff
-- of depths (as ndcg_item_counts takes them) and item shown or relevant (ndcg_item_counts, then
-- ndcg_item_view_of): k, item_id, shown, exposure_share, relevant, hits and train_users.
CREATE OR REPLACE TEMP MACRO ndcg_item_view(entries, relevant, depths, popularity) AS TABLE
    WITH counts_ AS (FROM ndcg_item_counts(entries, relevant, depths))
    FROM ndcg_item_view_of('counts_', popularity);

-- ndcg_metrics.sql
-- The metrics people report beside NDCG, from the same per-user gains the core finds.
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
--   judged@k    = judged(k) / min(k, n)         ir_measures Judged@k (its judged provider, from
--                 OpenNIR): judged(k), how many of the first k have a judgment of any relevance
--                 (0 and negative ones too); n, the ranking's length (0 when n is 0)
--   ncg@k       = cg@k / icg@k                  normalised cumulated gain (Jarvelin and
--                 Kekalainen 2002, nCG): icg@k, the sum of the first k ideal gains (the user's
--                 gains, best first; the first min(k, n) with idcg_cutoff 'list'); 0 when icg@k
--                 is 0; gain and gain_map as for NDCG
--   err@k       = sum_{i <= k} (r_i / i) * prod_{j < i} (1 - r_j),  r_i = (2^g_i - 1) / 2^4
--                 expected reciprocal rank (Chapelle, Metzler, Zhang and Grinspan 2009, CIKM) as
--                 gdeval.pl computes it (the TREC Web track's script, which ir_measures runs
--                 for ERR@k): g_i, the grade at rank i, is the relevance of a relevant item and 0
--                 otherwise (gain and gain_map do not apply); 4 is gdeval's largest grade, and a
--                 relevance above it stops (ndcg_err_graded); each term is added in rank order
--   bpref       = sum_{j} (1 - min(n_j, R) / min(N, R)) / R   (a term 1 when n_j = 0)
--                 trec_eval bpref (Buckley and Voorhees, "Retrieval evaluation with incomplete
--                 information", SIGIR 2004): over the relevant ranked items j, n_j the judged
--                 nonrelevant items (relevance >= 0, not relevant) ranked above j, N how many
--                 the user has; unjudged and negatively judged items count for nothing
--   rbp         = (1 - p) sum_i (l_i / max(L, 1)) p^(i - 1)
--                 rank-biased precision (Moffat and Zobel, ACM TOIS 27(1), 2008) as trec_eval's
--                 rbp computes it: over the whole ranking, l_i the relevance at rank i (0 for an
--                 item not judged or judged below 0), L the user's largest relevance: levels
--                 above 1 are scaled to [0, 1]; p the persistence (rbp_p, trec_eval rbp.p,
--                 default 0.9). Like trec_eval it ignores min_relevance, gain and gain_map
-- trec_eval's set and count measures (its m_num_ret.c, m_num_nonrel_judged_ret.c, m_set_P.c,
-- m_set_rel_P.c, m_set_map.c, m_set_F.c, m_rel_P.c), over the whole ranking (after max_depth and
-- judged_only, as trec_eval's -M and -J): n, the ranking's length; F = found(n), its relevant
-- items (num_rel_ret); P = F / n and Rc = F / R:
--   num_ret     = n (summed over users, as trec_eval sums it)          trec_eval num_ret
--   num_nonrel_judged_ret = the ranked items judged >= 0 but not relevant (summed)
--                 trec_eval num_nonrel_judged_ret (an item judged below 0 counts as unjudged)
--   set_precision = F / n, 0 when n is 0          trec_eval set_P, ir_measures SetP
--   set_relative_precision = F / min(n, R), 0 when n or R is 0
--                 trec_eval set_relative_P, ir_measures SetP(relative=True)
--   set_map     = F^2 / (n R), 0 when n or R is 0  trec_eval set_map, ir_measures SetAP
--   set_f       = (b + 1) P Rc / (b P + Rc), 0 when F is 0   trec_eval set_F (van Rijsbergen's
--                 F, "Information Retrieval", 1979), ir_measures SetF; b the relative importance
--                 of recall (set_f_beta, trec_eval set_F.b, default 1: the harmonic mean)
--   relative_precision@k = found(k) / min(k, R), 0 when R is 0   trec_eval relative_P_k:
--                 precision@k up to R, recall@k beyond it
--   iprec_11pt_avg = (1/11) sum_{x in 0, 0.1, ..., 1} iprec(x)   trec_eval 11pt_avg (m_11pt_avg.c,
--                 m_iprec_at_recall.c): iprec(x), the interpolated precision at recall x, is the
--                 largest j / p_j over j >= max(c, 1), c = round(x R) (halves away from 0), and 0
--                 when c > F (fewer relevant items ranked than recall x needs)
--   gm_map      = ln(max(map, 0.00001)) per user; the summary is exp of their mean, the
--                 geometric mean of map (each user's floored at 0.00001, trec_eval's
--                 MIN_GEO_MEAN, so that one user at 0 does not make it 0)   trec_eval gm_map
--                 (m_gm_map.c, meas_avg.c te_calc_avg_meas_s_gm); map over the whole ranking
--   gm_bpref    = ln(max(bpref, 0.00001)) per user, summed up as gm_map   trec_eval gm_bpref
--   iprec_at_recall_x = iprec(x) (see iprec_11pt_avg)   trec_eval iprec_at_recall.x,
--                 ir_measures IPrec@x; trec_eval's levels x = 0, 0.1, ..., 1
--   rprec_mult_x = found(c) / c, c = floor(x R + 0.9) (0 when c is 0): precision at x times R
--                 (a ranking shorter than c counts the missing ranks as not relevant)
--                 trec_eval Rprec_mult.x (m_Rprec_mult.c); its multiples x = 0.2, 0.4, ..., 2
-- trec_eval's other per-query measures (its m_infap.c, m_Rndcg.c, m_ndcg_rel.c, m_rbp_resid.c,
-- m_utility.c, m_unjudged.c, m_G.c, m_binG.c), over the whole ranking but unj@k. "Unjudged" is
-- trec_eval's: an item not in the judgments, or judged below 0 (in its pool, not judged: how
-- qrels mark a sampled pool's unjudged documents); u_i = 1 for such an item at rank i. g_i is the
-- gain at rank i and I_1 >= I_2 >= ... >= I_G > 0 the user's positive gains (the ideal ranking,
-- never cut), as for NDCG (gain, gain_map, min_relevance); D_i = sum_{j <= i} g_j / log2(j + 1)
-- and ID_i the same of the I_j (DCG and ideal DCG at i; ID_i = ID_G beyond G):
--   infap       = sum_{j} (1 + (J_j - 1) (j - 1 + e) / (j - 1 + m_j + 2e)) / p_j / R
--                 inferred AP (Yilmaz and Aslam, "Estimating average precision with incomplete
--                 and imperfect judgments", CIKM 2006) as trec_eval's infAP computes it: over the
--                 relevant ranked items j (at rank p_j), J_j the judged items (any relevance,
--                 below 0 too) in the first p_j, m_j the judged nonrelevant ones (>= 0) above p_j,
--                 e = 0.00001; items not in the judgments count only as ranks
--   rndcg       = the mean of D_min(b, n) / ID_b over the ideal's level changes b (the b <= G
--                 where I_b != I_(b+1), I_(G+1) = 0), and of D_n / ID_G when n >= G + 2
--                 trec_eval Rndcg (nDCG averaged at the R-levels of each gain, Jarvelin and
--                 Kekalainen 2002); 0 when R or G is 0
--   ndcg_rel    = (sum_{i: g_i > 0} D_i / ID_i + (G - #{i : g_i > 0}) D_n / ID_G) / G
--                 trec_eval ndcg_rel (nDCG averaged over the relevant items, those with a gain
--                 > 0; one not ranked counts the whole ranking's nDCG); 0 when that sum is <= 0
--   rbp_resid   = p^n + (1 - p) sum_i u_i p^(i - 1)      trec_eval rbp_resid (Moffat and Zobel
--                 2008): what RBP could still gain if every unjudged ranked item were relevant,
--                 with the persistence p of rbp (rbp_p); 0, as in trec_eval, when no ranked item
--                 is unjudged. Computed as 1 - (1 - p) sum_i (1 - u_i) p^(i - 1), over the judged
--                 ranks (the weights (1 - p) p^(i - 1) of ranks 1 .. n add up to 1 - p^n)
--   utility     = w1 F + w2 (n - F) + w3 (R - F) + w4 (D + F - n - R)   trec_eval utility: the
--                 weights w (utility_weights, trec_eval utility.w1,w2,w3,w4, default 1, -1, 0,
--                 0) of the relevant and nonrelevant items ranked and not ranked, D the documents
--                 in the collection (num_docs, trec_eval -N, default 0); 0 for a user without a
--                 ranking (trec_eval -c scores such a query 0)
--   unj@k       = #{i <= k : u_i} / k                  trec_eval unj_k: the unjudged share of the
--                 first k ranks, the ranks past the ranking counting as judged
--   g           = sum_i g_i / log2(2 + C_i - S_i) / sum_j I_j   trec_eval G: C_i = sum_{j <= i}
--                 max(I_j, 1) (I_j = 0 beyond G), S_i = sum_{j <= i} g_j; 0 when G is 0
--   bing        = sum_{j} 1 / log2(2 + p_j - j) / R    trec_eval binG: p_j - j, the items that
--                 are not relevant above the j-th relevant ranked item
-- infap, bing, unj and rbp_resid read relevance as the other counting measures (min_relevance);
-- rndcg, ndcg_rel and g read the gains as NDCG does, where trec_eval's read the relevance levels
-- (or its LEVEL=GAIN parameters, as --gain-map) whatever -l says: give those no min_relevance to
-- match it.
-- Every ratio is 0 when its denominator (R) is 0, as in trec_eval, which evaluates such a user
-- all the same. DCG, ideal DCG and NDCG are the core's (ndcg_core.sql), and so is what each
-- metric reads (ndcg_user_gains, after max_depth and judged_only, where the items below an
-- unjudged item move up; relevant and R from the judgments edge, ndcg_judgments): the judged
-- ranked items, a few of each ranking, with their ranks, gains and relevances in rank order.
-- Every sum above over ranks i is a sum over those (an item not judged has g_i = l_i = 0 and is
-- not relevant), so no measure walks down every position; those without a cutoff are computed
-- once per user, before the cutoffs are joined. With ties 'average', cg@k gives each
-- position of a tie group the group's mean gain, as the core's DCG does (McSherry and Najork
-- 2008); the metrics that count relevant items see tied items in trec_eval's order (item id
-- descending), since an average over orders has no single rank of the first relevant item.

-- ndcg_found(ranks, k): how many of `ranks` (the ranks of the relevant ranked items, in
-- ascending order) are <= k (a BIGINT; no cutoff: the largest BIGINT). Returns a BIGINT. All of
-- them when the last is <= k and none when the first is > k, read off the ends of the list (a
-- cutoff past a ranking's last relevant item, or above its first, is most cutoffs of most
-- users: no list is filtered for them).
CREATE OR REPLACE TEMP MACRO ndcg_found(ranks, k) AS
    CASE WHEN len(ranks) = 0 THEN 0
         WHEN ranks[-1] <= k THEN len(ranks)
         WHEN ranks[1] > k THEN 0
         ELSE coalesce(len(list_filter(ranks, lambda p: p <= k)), 0) END;

-- ndcg_over_r(count, num_rel): count / R, 0 when the user has no relevant judgment (R = 0).
CREATE OR REPLACE TEMP MACRO ndcg_over_r(count, num_rel) AS
    CASE WHEN num_rel > 0 THEN count / num_rel ELSE 0.0 END;

-- ndcg_precision(found, k): precision@k from found(k).
CREATE OR REPLACE TEMP MACRO ndcg_precision(found, k) AS found / k;

-- ndcg_hit_rate(found): 1.0 if a relevant item is among those counted, else 0.0 (a DOUBLE, as
-- every metric: the literals alone would make it a DECIMAL(2,1)).
CREATE OR REPLACE TEMP MACRO ndcg_hit_rate(found) AS
    CASE WHEN found > 0 THEN 1.0::DOUBLE ELSE 0.0::DOUBLE END;

-- ndcg_reciprocal_rank(ranks, found): 1 / the first relevant rank when it is counted, else 0.
CREATE OR REPLACE TEMP MACRO ndcg_reciprocal_rank(ranks, found) AS
    CASE WHEN found > 0 THEN 1.0 / ranks[1] ELSE 0.0 END;

-- ndcg_precisions(ranks): the precision at each relevant ranked item, j / p_j (a DOUBLE list).
CREATE OR REPLACE TEMP MACRO ndcg_precisions(ranks) AS list_transform(ranks, lambda p, j: j / p);

-- ndcg_average_precision(precisions, found, num_rel): map@k from ndcg_precisions and found(k):
-- the first found(k) precisions, summed in rank order, over R.
CREATE OR REPLACE TEMP MACRO ndcg_average_precision(precisions, found, num_rel) AS
    ndcg_over_r(coalesce(list_sum(precisions[1:found]), 0.0), num_rel);

-- ndcg_judged_dcg(judged_gains, discounts, judged): DCG down to a cutoff from the judged ranked
-- items' gains and discounts (1 / log2(i + 1) at each one's rank i) and judged (how many of
-- them are down to the cutoff, ndcg_found): the first `judged` gains times their discounts,
-- summed in rank order (the items not judged gain 0). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_judged_dcg(judged_gains, discounts, judged) AS
    -- (typed: DuckDB 1.5 binds a macro's body with NULL arguments when it is created)
    coalesce(list_dot_product(judged_gains[1:judged]::DOUBLE[], discounts[1:judged]::DOUBLE[]),
             0.0);

-- ndcg_cg(gains, depth): cg@k from a user's gains (ndcg_user_gains: the gain at each position)
-- and depth (k; no cutoff: the largest BIGINT): the gains of the first k positions, summed. A
-- DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_cg(gains, depth) AS coalesce(list_sum(gains[1:depth]), 0.0);

-- ndcg_bpref(relevant_ranks, nonrelevant_ranks, num_rel, num_nonrel): bpref from the positions
-- of the relevant and of the judged nonrelevant ranked items (ndcg_user_gains), R and N: for each
-- relevant item, 1 - min(n, R) / min(N, R) with n the nonrelevant ones above it (1 when n is 0),
-- summed in rank order, over R. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_bpref(relevant_ranks, nonrelevant_ranks, num_rel, num_nonrel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        -- (not p: ndcg_found's own lambda names its variable p)
        lambda rel_at: CASE WHEN ndcg_found(nonrelevant_ranks, rel_at) > 0
                        THEN 1.0 - least(ndcg_found(nonrelevant_ranks, rel_at), num_rel)
                                   / least(num_nonrel, num_rel)
                        ELSE 1.0 END)), 0.0), num_rel);

-- ndcg_rbp_weights(judged_ranks, p): the weight of each judged rank i, p^(i - 1). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_weights(judged_ranks, p) AS
    list_transform(judged_ranks, lambda i: pow(p, i - 1)::DOUBLE);

-- ndcg_rbp_levels(judged_relevances): the relevance of each judged ranked item as trec_eval's rbp
-- reads it, 0 for a negative one (whatever is relevant). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_levels(judged_relevances) AS
    list_transform(judged_relevances, lambda level: greatest(level, 0)::DOUBLE);

-- ndcg_rbp(judged_ranks, levels, largest, p): rbp from the judged ranked items (ndcg_user_gains'
-- judged_ranks, and ndcg_rbp_levels of their relevances), the user's largest relevance and the
-- persistence p: the levels weighted by p^(i - 1) and summed in rank order (the items not judged
-- add 0), over the largest relevance when that is above 1, times 1 - p. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rbp(judged_ranks, levels, largest, p) AS
    (1 - p) * coalesce(list_dot_product(levels, ndcg_rbp_weights(judged_ranks, p)), 0.0)
    / greatest(largest, 1.0);

-- trec_eval's set measures (see the header): each reads F (num_rel_ret: the relevant ranked
-- items), n (num_ret: the ranking's length) and R (num_rel), BIGINTs; each returns a DOUBLE.

-- ndcg_set_precision(num_rel_ret, num_ret): F / n, 0 for an empty ranking (trec_eval set_P).
CREATE OR REPLACE TEMP MACRO ndcg_set_precision(num_rel_ret, num_ret) AS
    CASE WHEN num_ret > 0 THEN num_rel_ret::DOUBLE / num_ret ELSE 0.0 END;

-- ndcg_set_relative_precision(num_rel_ret, num_ret, num_rel): F / min(n, R), the share of the
-- most relevant items a ranking of length n could hold; 0 when n or R is 0 (set_relative_P).
CREATE OR REPLACE TEMP MACRO ndcg_set_relative_precision(num_rel_ret, num_ret, num_rel) AS
    CASE WHEN num_ret > 0 AND num_rel > 0
         THEN num_rel_ret::DOUBLE / least(num_ret, num_rel) ELSE 0.0 END;

-- ndcg_set_map(num_rel_ret, num_ret, num_rel): F^2 / (n R), set precision times set recall; 0
-- when n or R is 0 (trec_eval set_map).
CREATE OR REPLACE TEMP MACRO ndcg_set_map(num_rel_ret, num_ret, num_rel) AS
    CASE WHEN num_ret > 0 AND num_rel > 0
         THEN (num_rel_ret::DOUBLE * num_rel_ret) / (num_ret::DOUBLE * num_rel) ELSE 0.0 END;

-- ndcg_set_f(num_rel_ret, num_ret, num_rel, beta): (b + 1) P Rc / (b P + Rc) with P = F / n,
-- Rc = F / R and b = beta (>= 0: how much more recall weighs than precision); 0 when no relevant
-- item is ranked (trec_eval set_F).
CREATE OR REPLACE TEMP MACRO ndcg_set_f(num_rel_ret, num_ret, num_rel, beta) AS
    CASE WHEN num_rel_ret > 0
         THEN (beta + 1.0) * ndcg_set_precision(num_rel_ret, num_ret)
              * ndcg_over_r(num_rel_ret, num_rel)
              / (beta * ndcg_set_precision(num_rel_ret, num_ret) + ndcg_over_r(num_rel_ret, num_rel))
         ELSE 0.0 END;

-- ndcg_iprec(precisions, num_rel, level): the interpolated precision at recall `level` (a
-- DOUBLE in [0, 1]) from ndcg_precisions (j / p_j for each relevant ranked item) and R: the
-- largest of the precisions from the c-th on, c = round(level R) (at least the first), 0 when c
-- is more than the relevant items ranked (trec_eval iprec_at_recall). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec(precisions, num_rel, level) AS
    CASE WHEN round(level * num_rel) <= len(precisions)
         THEN coalesce(list_max(precisions[greatest(round(level * num_rel)::BIGINT, 1):]), 0.0)
         ELSE 0.0 END;

-- ndcg_iprec_11pt_avg(precisions, num_rel): the mean of ndcg_iprec at recall 0, 0.1, ..., 1
-- (trec_eval 11pt_avg). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_11pt_avg(precisions, num_rel) AS
    list_sum(list_transform(range(0, 11), lambda tenths: ndcg_iprec(precisions, num_rel,
                                                                    tenths / 10.0))) / 11.0;

-- ndcg_log_floored(x): ln(max(x, 0.00001)), a user's share of a geometric mean over users
-- (gm_map, gm_bpref): the summary is exp of the mean of these (trec_eval's MIN_GEO_MEAN floor,
-- so that a user at 0 does not make the mean 0). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_log_floored(x) AS ln(greatest(x, 0.00001::DOUBLE));

-- ndcg_iprec_levels(): trec_eval's recall levels of iprec_at_recall (0, 0.1, ..., 1), the
-- ones ndcg_metric_values gives. A DOUBLE[].
CREATE OR REPLACE TEMP MACRO ndcg_iprec_levels() AS
    [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]::DOUBLE[];

-- ndcg_rprec_multiples(): trec_eval's multiples of R of Rprec_mult (0.2, 0.4, ..., 2), the
-- ones ndcg_metric_values gives. A DOUBLE[].
CREATE OR REPLACE TEMP MACRO ndcg_rprec_multiples() AS
    [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]::DOUBLE[];

-- ndcg_iprec_from(num_relevant, level): the first relevant item ndcg_iprec reads at recall
-- `level`: round(level R), at least 1. A BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_from(num_relevant, level) AS
    greatest(round(level::DOUBLE * num_relevant)::BIGINT, 1);

-- ndcg_iprec_at_recall(relevant_ranks, num_relevant, level): the interpolated precision at
-- recall `level` (0 <= level <= 1) from the ranks of the relevant ranked items and R (trec_eval
-- iprec_at_recall.level, ir_measures IPrec@level): ndcg_iprec, with the precisions j / p_j made
-- from the ranks it reads (from the cut on), not the whole list per level. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_at_recall(relevant_ranks, num_relevant, level) AS
    CASE WHEN round(level::DOUBLE * num_relevant) <= len(relevant_ranks)
         THEN coalesce(list_max(list_transform(
                  relevant_ranks[ndcg_iprec_from(num_relevant, level):],
                  lambda p, i: (i + ndcg_iprec_from(num_relevant, level) - 1) / p)), 0.0)
         ELSE 0.0 END;

-- ndcg_rprec_cut(num_relevant, multiple): the rank Rprec_mult reads, floor(multiple R + 0.9)
-- in DOUBLE arithmetic as trec_eval's (long) (multiple * R + 0.9). A BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_rprec_cut(num_relevant, multiple) AS
    floor(multiple::DOUBLE * num_relevant + 0.9::DOUBLE)::BIGINT;

-- ndcg_rprec_mult(relevant_ranks, num_relevant, multiple): the precision at ndcg_rprec_cut, 0
-- when that is 0 (trec_eval Rprec_mult.multiple). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rprec_mult(relevant_ranks, num_relevant, multiple) AS
    CASE WHEN ndcg_rprec_cut(num_relevant, multiple) > 0
         THEN ndcg_found(relevant_ranks, ndcg_rprec_cut(num_relevant, multiple))
              / ndcg_rprec_cut(num_relevant, multiple)
         ELSE 0.0::DOUBLE END;

-- ndcg_relative_precision(found, k, num_rel): relative_precision@k from found(k): found(k) /
-- min(k, R), 0 when R is 0; NULL without a cutoff (trec_eval relative_P_k).
CREATE OR REPLACE TEMP MACRO ndcg_relative_precision(found, k, num_rel) AS
    CASE WHEN k IS NULL THEN NULL WHEN num_rel > 0 THEN found / least(k, num_rel) ELSE 0.0 END;

-- ndcg_judged_share(judged_ranks, depth, length): judged@k from the positions of the judged
-- ranked items (ndcg_user_gains' judged_ranks), depth (k; no cutoff: the largest BIGINT) and the
-- ranking's length: the share of the first min(k, length) that is judged; 0 for no ranking.
CREATE OR REPLACE TEMP MACRO ndcg_judged_share(judged_ranks, depth, length) AS
    CASE WHEN least(depth, length) > 0 THEN ndcg_found(judged_ranks, depth) / least(depth, length)
         ELSE 0.0 END;

-- ndcg_ideal_cg(ideal, depth, length, idcg_cutoff): icg@k, the ideal gains' (best first) cg@k;
-- with idcg_cutoff 'list', of the first `length` of them only (as ndcg_ideal_dcg). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_cg(ideal, depth, length, idcg_cutoff) AS
    ndcg_cg(CASE WHEN idcg_cutoff = 'list' THEN ideal[1:length] ELSE ideal END, depth);

-- ndcg_err_max_grade(): the largest grade ERR reads, gdeval's MAX_JUDGMENT.
CREATE OR REPLACE TEMP MACRO ndcg_err_max_grade() AS 4;

-- ndcg_err_stop(grade): gdeval's chance that a user stops at an item of this grade,
-- (2^grade - 1) / 2^4: 0 for grade 0, 15/16 for grade 4.
CREATE OR REPLACE TEMP MACRO ndcg_err_stop(grade) AS
    (pow(2, grade) - 1) / pow(2, ndcg_err_max_grade());

-- ndcg_err_grades(judged_relevances, judged_relevant): the grade of each judged ranked item: its
-- relevance when it is relevant, 0 otherwise, as gdeval reads its qrels (it keeps the
-- judgments > 0). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_err_grades(judged_relevances, judged_relevant) AS
    list_transform(list_zip(judged_relevances, judged_relevant),
                   lambda judgment: CASE WHEN judgment[2] THEN judgment[1]::DOUBLE ELSE 0.0 END);

-- ndcg_err_steps(judged_ranks, grades): what each judged rank i adds to ERR: err, r_i / i (the
-- value of stopping there, for a user still looking), and looking, 1 - r_i (the share that looks
-- on); the ranks not judged (grade 0) add nothing and leave everyone looking. A list of
-- STRUCT(err DOUBLE, looking DOUBLE), one per judged rank.
CREATE OR REPLACE TEMP MACRO ndcg_err_steps(judged_ranks, grades) AS
    list_transform(grades, lambda g, t: {'err': ndcg_err_stop(g)::DOUBLE / judged_ranks[t],
                                         'looking': 1 - ndcg_err_stop(g)::DOUBLE});

-- ndcg_err(steps, judged): err@k from ndcg_err_steps and judged (how many judged ranks are in the
-- first k, ndcg_found): one pass down them, carrying the sum so far and the chance that the user
-- is still looking (the product of 1 - r_j above). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_err(steps, judged) AS
    list_reduce(steps[1:judged],
                lambda acc, step: {'err': acc.err + acc.looking * step.err,
                                   'looking': acc.looking * step.looking},
                {'err': 0.0::DOUBLE, 'looking': 1.0::DOUBLE}).err;

-- ndcg_err_graded(user_id, judged, relevances): true when none of the user's relevances (judged:
-- the items, relevances: theirs, in that order) is above ERR's largest grade; otherwise stops
-- naming the user, the item and its relevance (gdeval refuses such a qrels file: a stop chance
-- past 1 would make a wrong ERR). Users without a judgment pass.
CREATE OR REPLACE TEMP MACRO ndcg_err_graded(user_id, judged, relevances) AS
    ndcg_require(coalesce(list_max(relevances) <= ndcg_err_max_grade(), true),
        'relevance: user ' || ndcg_show(user_id) || ', item '
        || ndcg_show(judged[list_position(relevances, list_max(relevances))]) || ': relevance '
        || ndcg_show(list_max(relevances)) || ' is above ' || ndcg_err_max_grade()
        || ', the largest grade err reads (gdeval''s ERR stops at a grade with chance '
        || '(2^grade - 1) / 2^' || ndcg_err_max_grade()
        || '): rescale the relevance to grades 0 to ' || ndcg_err_max_grade() || ' for err');

-- trec_eval's other per-query measures (see the header), each over the whole ranking but unj.

-- ndcg_infap_epsilon(): the small number trec_eval's infAP adds so that no ratio divides by 0
-- (its INFAP_EPSILON).
CREATE OR REPLACE TEMP MACRO ndcg_infap_epsilon() AS 0.00001;

-- ndcg_infap(relevant_ranks, nonrelevant_ranks, judged_ranks, num_rel): infAP from the positions
-- of the relevant, the judged nonrelevant and all the judged ranked items (ndcg_user_gains) and
-- R: at the j-th relevant item, at rank p, the precision expected from the judged items above it
-- (J - 1 of them, m judged nonrelevant), 1 / p + ((p - 1) / p) (J - 1) / (p - 1) (j - 1 + e) /
-- (j - 1 + m + 2e), summed in rank order, over R. J, the judged items down to p, is p's place
-- among the judged ranks (ascending, and p is one of them): list_position, not a count per
-- relevant item. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_infap(relevant_ranks, nonrelevant_ranks, judged_ranks,
        num_rel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        lambda rel_at, j: (1.0 + (list_position(judged_ranks, rel_at) - 1)
                                 * (j - 1 + ndcg_infap_epsilon())
                                 / (j - 1 + ndcg_found(nonrelevant_ranks, rel_at - 1)
                                    + 2 * ndcg_infap_epsilon())) / rel_at)), 0.0), num_rel);

-- ndcg_judged_discounted(judged_ranks, judged_gains): what each judged ranked item adds to DCG,
-- g / log2(i + 1) at its rank i (ndcg_dcg; the items not judged add 0). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_judged_discounted(judged_ranks, judged_gains) AS
    list_transform(judged_gains, lambda g, t: ndcg_dcg(g, judged_ranks[t])::DOUBLE);

-- ndcg_dcg_to(discounted, judged): the ranking's DCG down to a rank, from ndcg_judged_discounted
-- and judged (how many judged ranks are down to it, ndcg_found): those terms summed in rank
-- order. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_dcg_to(discounted, judged) AS
    coalesce(list_sum(discounted[1:judged]), 0.0);

-- ndcg_ideal_discounted(ideal): what each of the ideal's gains adds to the ideal DCG, g / log2(i +
-- 1) at its position i (ndcg_dcg). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_discounted(ideal) AS
    list_transform(ideal, lambda g, i: ndcg_dcg(g, i)::DOUBLE);

-- ndcg_ideal_dcg_to(ideal_discounted, n): the ideal DCG at n (the whole ideal's when it is
-- shorter), from ndcg_ideal_discounted: its first n terms summed. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_dcg_to(ideal_discounted, n) AS
    coalesce(list_sum(ideal_discounted[1:n]), 0.0);

-- ndcg_level_changes(ideal): the positions b of an ideal list (positive gains, best first) after
-- which its gain changes: ideal[b] != ideal[b + 1], the last position always. A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_level_changes(ideal) AS
    list_filter(range(1, len(ideal) + 1),
                lambda b: ideal[b] != coalesce(ideal[b + 1], 0.0));

-- ndcg_rndcg(judged_ranks, discounted, length, ideal, ideal_discounted, num_rel): Rndcg from the
-- judged ranked items (their ranks and ndcg_judged_discounted), the ranking's length, every
-- positive gain best first (ndcg_user_gains' every_ideal, and its ndcg_ideal_discounted) and R: the mean of the nDCG at each level change b
-- of the ideal (the ranking's DCG at b, or at its end when shorter, over the ideal DCG at b),
-- and of the whole ranking's DCG over the whole ideal DCG when the ranking runs 2 or more past
-- the ideal (trec_eval's last "implied R-level"); 0 when R or the ideal is empty. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rndcg(judged_ranks, discounted, length, ideal,
        ideal_discounted, num_rel) AS
    CASE WHEN num_rel > 0 AND len(ideal) > 0
         THEN list_avg(list_transform(ndcg_level_changes(ideal),
                                      lambda b: ndcg_dcg_to(discounted, ndcg_found(judged_ranks, b))
                                                / ndcg_ideal_dcg_to(ideal_discounted, b))
                       || CASE WHEN length >= len(ideal) + 2
                               THEN [ndcg_dcg_to(discounted, len(discounted))
                                     / ndcg_dcg_all(ideal)]
                               ELSE []::DOUBLE[] END)
         ELSE 0.0 END;

-- ndcg_rel_total(judged_ranks, judged_gains, discounted, ideal_discounted): ndcg_rel's sum: the
-- nDCG at each ranked item with a gain > 0 (the DCG down to its rank i over the ideal DCG at i),
-- in rank order, and the whole ranking's nDCG once for each positive gain of the ideal not met.
-- A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rel_total(judged_ranks, judged_gains, discounted,
        ideal_discounted) AS
    coalesce(list_sum(list_transform(judged_ranks,
        lambda i, t: CASE WHEN judged_gains[t] > 0
                          THEN ndcg_dcg_to(discounted, t)
                               / ndcg_ideal_dcg_to(ideal_discounted, i)
                          ELSE 0.0 END)), 0.0)
    + (len(ideal_discounted) - len(list_filter(judged_gains, lambda g: g > 0)))
      * ndcg_dcg_to(discounted, len(discounted))
      / ndcg_ideal_dcg_to(ideal_discounted, len(ideal_discounted));

-- ndcg_ndcg_rel(judged_ranks, judged_gains, discounted, ideal_discounted): ndcg_rel from the
-- judged ranked items (their ranks, gains and ndcg_judged_discounted) and the terms of every
-- positive gain best first (ndcg_ideal_discounted of every_ideal): ndcg_rel_total over the
-- ideal's length, 0 when that sum is not positive (or the ideal is empty). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ndcg_rel(judged_ranks, judged_gains, discounted,
        ideal_discounted) AS
    CASE WHEN len(ideal_discounted) > 0
         THEN greatest(ndcg_rel_total(judged_ranks, judged_gains, discounted, ideal_discounted),
                       0.0)
              / len(ideal_discounted)
         ELSE 0.0 END;

-- ndcg_rbp_resid(counted_ranks, length, p): rbp_resid from the positions of the ranked items
-- trec_eval counts as judged (ndcg_user_gains' judged_ranks but those judged below 0), the
-- ranking's length and the persistence p: p^n plus (1 - p) p^(i - 1) for each unjudged rank i,
-- which is 1 less (1 - p) p^(i - 1) for each judged rank i (the weights of ranks 1 .. n add up to
-- 1 - p^n), added in rank order; 0 when every ranked item is judged. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_resid(counted_ranks, length, p) AS
    CASE WHEN len(counted_ranks) < length
         THEN 1 - (1 - p) * coalesce(list_sum(ndcg_rbp_weights(counted_ranks, p)), 0.0)
         ELSE 0.0 END;

-- ndcg_num_docs(num_docs): trec_eval's -N as a BIGINT; stops when it is not a whole number >= 0.
CREATE OR REPLACE TEMP MACRO ndcg_num_docs(num_docs) AS
    CASE WHEN ndcg_require(coalesce(TRY_CAST(num_docs::VARCHAR AS BIGINT) >= 0, false),
                           'num_docs must be a whole number >= 0, not ' || ndcg_show(num_docs))
         THEN TRY_CAST(num_docs::VARCHAR AS BIGINT) END;

-- ndcg_utility(num_rel_ret, num_ret, num_rel, weights, num_docs): trec_eval's utility from F, n,
-- R, the four weights (a DOUBLE list: relevant ranked, nonrelevant ranked, relevant not ranked,
-- nonrelevant not ranked) and the documents in the collection. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_utility(num_rel_ret, num_ret, num_rel, weights, num_docs) AS
    (weights[1] * num_rel_ret + weights[2] * (num_ret - num_rel_ret)
     + weights[3] * (num_rel - num_rel_ret)
     + weights[4] * (num_docs + num_rel_ret - num_ret - num_rel))::DOUBLE;

-- ndcg_utility_weights_ok(weights): true when weights is a list of 4 finite numbers; otherwise
-- stops naming utility_weights and its value.
CREATE OR REPLACE TEMP MACRO ndcg_utility_weights_ok(weights) AS
    ndcg_require(coalesce(len(weights) = 4
                          AND list_count(list_filter(weights, lambda w: isfinite(w))) = 4, false),
                 'utility_weights must be a list of 4 finite numbers (relevant ranked, '
                 || 'nonrelevant ranked, relevant not ranked, nonrelevant not ranked), not '
                 || ndcg_show(weights));

-- ndcg_negative_ranks(judged_ranks, judged_relevances): the positions of the ranked items judged
-- below 0, which trec_eval counts as unjudged (from ndcg_user_gains' judged ranked items). A
-- BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_negative_ranks(judged_ranks, judged_relevances) AS
    ndcg_ranks_where(judged_ranks, list_transform(judged_relevances, lambda r: r < 0));

-- ndcg_counted_ranks(judged_ranks, judged_relevances): the positions of the ranked items
-- trec_eval counts as judged: a judgment >= 0. A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_counted_ranks(judged_ranks, judged_relevances) AS
    ndcg_ranks_where(judged_ranks, list_transform(judged_relevances, lambda r: r >= 0));

-- ndcg_unj(judged_ranks, negative_ranks, length, k): unj@k from the positions of the judged
-- ranked items and of those judged below 0 (ndcg_negative_ranks) and the ranking's length: the
-- first min(k, length) ranks less the judged ones plus the negatively judged ones, the unjudged
-- items in the first k, over k (counted from the few judged positions rather than the many
-- unjudged ones: 9x fewer positions read per cutoff); NULL without a cutoff. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_unj(judged_ranks, negative_ranks, length, k) AS
    CASE WHEN k IS NOT NULL
         THEN (least(k, length) - ndcg_found(judged_ranks, k) + ndcg_found(negative_ranks, k)) / k
    END;

-- ndcg_g_costs(ideal): what each rank j costs in G, max(I_j, 1), I_j the ideal's j-th gain (past
-- the ideal, each rank costs 1). A DOUBLE list as long as the ideal.
CREATE OR REPLACE TEMP MACRO ndcg_g_costs(ideal) AS
    list_transform(ideal, lambda gain: greatest(gain, 1.0)::DOUBLE);

-- ndcg_g_cost(costs, i): G's cost of the first i ranks, C_i = sum_{j <= i} max(I_j, 1), from
-- ndcg_g_costs. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_g_cost(costs, i) AS
    coalesce(list_sum(costs[1:i]), 0.0) + greatest(i - len(costs), 0);

-- ndcg_g(judged_ranks, judged_gains, ideal, costs): G from the judged ranked items (their ranks
-- and gains, the items not judged adding nothing), every positive gain best first (every_ideal)
-- and their ndcg_g_costs: each gain g_i over log2(2 + C_i - S_i) at its rank i (C_i:
-- ndcg_g_cost; S_i: the gains down to i), summed in rank order, over the ideal's total gain; 0
-- when the ideal is empty. A DOUBLE. Give costs as a column (ndcg_user_metrics' g_costs), not
-- as the call ndcg_g_costs(ideal): a macro's argument is pasted into the lambda, and DuckDB
-- evaluates what a lambda reads once per list element (here once per judged ranked item: 2.2x
-- the time at 300k users).
CREATE OR REPLACE TEMP MACRO ndcg_g(judged_ranks, judged_gains, ideal, costs) AS
    CASE WHEN len(ideal) > 0
         THEN coalesce(list_sum(list_transform(judged_ranks,
                  lambda i, t: CASE WHEN judged_gains[t] != 0
                                    THEN judged_gains[t]
                                         / log2(2 + ndcg_g_cost(costs, i)
                                                - list_sum(judged_gains[1:t]))
                                    ELSE 0.0 END)), 0.0)
              / list_sum(ideal)
         ELSE 0.0 END;

-- ndcg_bin_g(relevant_ranks, num_rel): binG from the positions of the relevant ranked items and
-- R: for the j-th of them, at rank p, 1 / log2(2 + p - j), summed in rank order, over R. A
-- DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_bin_g(relevant_ranks, num_rel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        lambda rel_at, j: 1.0 / log2(2 + rel_at - j))), 0.0), num_rel);

-- ndcg_metric_name(metric, k): the name a metric goes by at cutoff k (NULL: none), as the CLI and
-- Python write it: 'precision@10', 'ndcg@all', 'mrr' (mrr and map without a cutoff), and
-- 'r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp' and trec_eval's num_ret,
-- num_nonrel_judged_ret, set measures, infap, rndcg, ndcg_rel, rbp_resid, utility, g and bing
-- (which have none).
CREATE OR REPLACE TEMP MACRO ndcg_metric_name(metric, k) AS
    CASE WHEN metric IN ('r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp', 'num_ret',
                         'num_nonrel_judged_ret', 'set_precision', 'set_relative_precision',
                         'set_map', 'set_f', 'iprec_11pt_avg', 'gm_map', 'gm_bpref')
              OR metric IN ('infap', 'rndcg', 'ndcg_rel', 'rbp_resid', 'utility', 'g', 'bing')
              OR (k IS NULL AND metric IN ('mrr', 'map')) THEN metric
         ELSE metric || '@' || coalesce(k::VARCHAR, 'all') END;

-- ndcg_user_metrics(rankings, judgments, ks, idcg_cutoff, judged_only, ties, rbp_p, set_f_beta,
-- utility_weights, num_docs, edge_gains): every user of either side, with every metric at each
-- cutoff, from the judged ranked items (ndcg_user_gains): ndcg_user_scores' columns
-- (user_id, k (NULL: no cutoff), dcg, idcg, ndcg, has_judgments, has_ranking) and cg, precision
-- and relative_precision (NULL without a cutoff), recall, hit_rate, mrr, map, judged, ncg, err,
-- and on the row of the first cutoff in ks only (NULL on the others) r_precision, num_rel,
-- num_rel_ret, bpref, rbp (with the persistence rbp_p, 0 < rbp_p < 1), num_ret,
-- num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, set_f (with
-- set_f_beta >= 0), iprec_11pt_avg, gm_map and gm_bpref (ln(max(value, 0.00001)):
-- ndcg_log_floored), infap, rndcg, ndcg_rel, rbp_resid, utility (with utility_weights, 4
-- numbers, and num_docs >= 0), g and bing, which have no cutoff, and unj (NULL without a
-- cutoff), each computed once per user before the cutoffs are joined. One row per user and
-- cutoff. ties 'average' averages the DCG family over each tie group; the other metrics see
-- tied items in trec_eval's order. Stops on a DCG, ideal DCG, CG or ideal CG that adds up past
-- the largest DOUBLE (ndcg_sum_finite), and, where err is read, on a relevance above its largest
-- grade (ndcg_err_graded). Then relevant_ranks and num_relevant (ndcg_user_gains'), which
-- trec_eval's families iprec_at_recall and Rprec_mult read as columns (read out of edge inside
-- their lambdas, a field costs a lookup per list element). Last, edge: what the user's own
-- measures read (sql/ndcg_custom.sql),
-- a STRUCT of the user's gains, relevant_ranks, judged_ranks, num_relevant, ideal and length
-- (ndcg_user_gains) and the cutoff's k and depth; with edge_gains false its gains are NULL (the
-- gain at each position, which no built-in measure reads but those of ties 'average', costs a
-- walk down every position: give false when no own measure reads gains).
CREATE OR REPLACE TEMP MACRO ndcg_user_metrics(rankings, judgments, ks := [10],
        idcg_cutoff := 'k', judged_only := false, ties := 'trec', rbp_p := 0.9,
        set_f_beta := 1.0, utility_weights := [1.0, -1.0, 0.0, 0.0], num_docs := 0,
        edge_gains := true) AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg_ratio(dcg, idcg) AS ndcg, has_judgments, has_ranking, cg,
           CASE WHEN k IS NOT NULL THEN ndcg_precision(found, k) END AS precision,
           ndcg_over_r(found, num_rel) AS recall, ndcg_hit_rate(found) AS hit_rate,
           ndcg_reciprocal_rank(ranks, found) AS mrr,
           map_down AS map,
           CASE WHEN first THEN r_precision END AS r_precision,
           CASE WHEN first THEN num_rel END AS num_rel,
           CASE WHEN first THEN num_rel_ret END AS num_rel_ret,
           CASE WHEN first THEN bpref END AS bpref, CASE WHEN first THEN rbp END AS rbp,
           CASE WHEN first THEN length END AS num_ret,
           CASE WHEN first THEN num_nonrel_judged_ret END AS num_nonrel_judged_ret,
           CASE WHEN first THEN set_precision END AS set_precision,
           CASE WHEN first THEN set_relative_precision END AS set_relative_precision,
           CASE WHEN first THEN set_map END AS set_map, CASE WHEN first THEN set_f END AS set_f,
           CASE WHEN first THEN iprec_11pt_avg END AS iprec_11pt_avg,
           CASE WHEN first THEN infap END AS infap, CASE WHEN first THEN rndcg END AS rndcg,
           CASE WHEN first THEN ndcg_rel END AS ndcg_rel,
           CASE WHEN first THEN rbp_resid END AS rbp_resid,
           CASE WHEN first THEN utility END AS utility,
           ndcg_unj(judged_ranks, negative_ranks, length, k) AS unj,
           CASE WHEN first THEN g END AS g, CASE WHEN first THEN bing END AS bing,
           CASE WHEN first THEN ndcg_log_floored(whole_map) END AS gm_map,
           CASE WHEN first THEN ndcg_log_floored(bpref) END AS gm_bpref,
           ndcg_relative_precision(found, k, num_rel) AS relative_precision,
           ndcg_judged_share(judged_ranks, depth, length) AS judged, ndcg_ratio(cg, icg) AS ncg,
           CASE WHEN ndcg_err_graded(user_id, judged_items, relevances)
                THEN ndcg_err(err_steps, judged_down) END AS err,
           ranks AS relevant_ranks, num_rel AS num_relevant,
           {'gains': CASE WHEN edge_gains THEN position_gains END, 'relevant_ranks': ranks,
            'judged_ranks': judged_ranks, 'num_relevant': num_rel, 'ideal': edge_ideal,
            'length': length, 'k': k, 'depth': depth} AS edge
    -- each cutoff's sums: DCG and CG down to k from the judged ranked items (the others gain
    -- 0), but with ties 'average', whose gains are spread over each tie's positions; a cutoff
    -- at or past the last judged item (the ideal's last gain, the last relevant item) takes the
    -- user's whole sum, summed once (the same terms in the same order: the same number)
    FROM (SELECT *,
                 CASE WHEN ties = 'average'
                      THEN ndcg_dcg_at(position_gains, cutoff_discounts, depth, ndcg_width(ks))
                      WHEN judged_down = len(judged_ranks) THEN whole_dcg
                      ELSE ndcg_judged_dcg(judged_gains, discounts, judged_down) END AS dcg,
                 CASE WHEN ndcg_width(ks) IS NULL AND depth >= len(edge_ideal) THEN whole_idcg
                      ELSE ndcg_ideal_dcg(edge_ideal, cutoff_discounts, depth, ndcg_width(ks),
                                          length, idcg_cutoff) END AS idcg,
                 CASE WHEN ties = 'average' THEN ndcg_cg(position_gains, depth)
                      WHEN judged_down = len(judged_ranks) THEN whole_cg
                      ELSE ndcg_cg(judged_gains, judged_down) END AS cg,
                 CASE WHEN found = len(ranks) THEN whole_map
                      ELSE ndcg_average_precision(precisions, found, num_rel) END AS map_down,
                 CASE WHEN depth >= len(edge_ideal) THEN whole_icg
                      ELSE ndcg_ideal_cg(edge_ideal, depth, length, idcg_cutoff) END AS icg
    FROM (SELECT u.*, c.k, c.depth, c.discounts AS cutoff_discounts,
                 c.k IS NOT DISTINCT FROM ks[1] AS first,
                 ndcg_found(u.judged_ranks, c.depth) AS judged_down,
                 ndcg_found(u.ranks, c.depth) AS found,
                 u.edge_ideal[1] AS largest_gain
          -- the whole ranking's sums, once per user (the cutoffs at or past its end take them)
          FROM (SELECT *, ndcg_judged_dcg(judged_gains, discounts, len(judged_ranks)) AS whole_dcg,
                       ndcg_cg(judged_gains, len(judged_ranks)) AS whole_cg,
                       ndcg_ideal_dcg(edge_ideal, NULL::DOUBLE[], 9223372036854775807,
                                      NULL::BIGINT, length, idcg_cutoff) AS whole_idcg,
                       ndcg_ideal_cg(edge_ideal, 9223372036854775807, length, idcg_cutoff)
                           AS whole_icg,
                       ndcg_average_precision(precisions, len(ranks), num_rel) AS whole_map
          -- the measures without a cutoff, once per user
          FROM (SELECT *, ndcg_over_r(found_r, num_rel) AS r_precision,
                       len(ranks) AS num_rel_ret,
                       ndcg_bpref(ranks, nonrelevant_ranks, num_rel, num_nonrel) AS bpref,
                       ndcg_rbp(judged_ranks, ndcg_rbp_levels(judged_relevances), largest_level,
                                rbp_p) AS rbp,
                       len(nonrelevant_ranks) AS num_nonrel_judged_ret,
                       ndcg_set_precision(len(ranks), length) AS set_precision,
                       ndcg_set_relative_precision(len(ranks), length, num_rel)
                           AS set_relative_precision,
                       ndcg_set_map(len(ranks), length, num_rel) AS set_map,
                       ndcg_set_f(len(ranks), length, num_rel, set_f_beta) AS set_f,
                       ndcg_iprec_11pt_avg(precisions, num_rel) AS iprec_11pt_avg,
                       ndcg_infap(ranks, nonrelevant_ranks, judged_ranks, num_rel) AS infap,
                       ndcg_rndcg(judged_ranks, discounted, length, every_ideal,
                                  ideal_discounted, num_rel) AS rndcg,
                       ndcg_ndcg_rel(judged_ranks, judged_gains, discounted, ideal_discounted)
                           AS ndcg_rel,
                       ndcg_rbp_resid(ndcg_counted_ranks(judged_ranks, judged_relevances),
                                      length, rbp_p) AS rbp_resid,
                       CASE WHEN has_ranking
                            THEN ndcg_utility(len(ranks), length, num_rel, utility_weights,
                                              ndcg_num_docs(num_docs))
                            ELSE 0.0 END AS utility,
                       ndcg_g(judged_ranks, judged_gains, every_ideal, g_costs) AS g,
                       ndcg_bin_g(ranks, num_rel) AS bing
                FROM (SELECT user_id, has_judgments, has_ranking, length, judged_ranks,
                             judged_gains, judged_relevances, nonrelevant_ranks, every_ideal,
                             relevant_ranks AS ranks, ndcg_precisions(relevant_ranks) AS precisions,
                             ndcg_found(relevant_ranks, num_relevant) AS found_r,
                             ndcg_negative_ranks(judged_ranks, judged_relevances) AS negative_ranks,
                             -- (Rndcg and ndcg_rel read their few D_t and ID_i as slices of
                             -- these: running sums as lists cost more than they save, and read
                             -- by index on every cutoff's row too: reports/2026-11-26-trec31i.md
                             -- and 2026-11-26-trec31j.md)
                             discounted, ideal_discounted,
                             ndcg_g_costs(every_ideal) AS g_costs,
                             list_transform(judged_ranks, lambda i: ndcg_dcg(1.0, i)) AS discounts,
                             ndcg_err_steps(judged_ranks,
                                            ndcg_err_grades(judged_relevances, judged_relevant))
                                 AS err_steps,
                             gains AS position_gains, ideal AS edge_ideal, ideal_depth,
                             judged AS judged_items, relevances,
                             num_nonrelevant AS num_nonrel, num_relevant AS num_rel,
                             greatest(coalesce(list_max(relevances), 0), 0) AS largest_level
                      -- (the terms of D and ID one level down: the lambdas that slice
                      -- them read columns, not expressions they would compute per element)
                      FROM (SELECT *, ndcg_judged_discounted(judged_ranks, judged_gains)
                                          AS discounted,
                                   ndcg_ideal_discounted(every_ideal) AS ideal_discounted
                            FROM ndcg_user_gains(rankings, judgments, width := ndcg_width(ks),
                                                 judged_only := judged_only, ties := ties,
                                                 position_gains := edge_gains
                                                                   OR ties = 'average'))))) AS u
          CROSS JOIN ndcg_cutoffs(ks) AS c
          WHERE ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
            AND ndcg_ideal_covers(u.ideal_depth, ks)
            AND ndcg_require(rbp_p > 0 AND rbp_p < 1, 'rbp_p must be a number between 0 and 1 '
                             || '(both left out), not ' || ndcg_show(rbp_p))
            AND ndcg_require(set_f_beta >= 0, 'set_f_beta must be a number >= 0, not '
                             || ndcg_show(set_f_beta))
            AND ndcg_utility_weights_ok(utility_weights)))
    WHERE ndcg_sum_finite(user_id, k, 'ideal DCG', idcg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'DCG', dcg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'CG', cg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'ideal CG', icg, largest_gain);

-- ndcg_metrics_evaluated(user_metrics, missing, empty): the rows of a ndcg_user_metrics result
-- that count, as ndcg_evaluated chooses them (missing and empty apply to every metric: empty
-- 'skip' leaves out the users whose ideal DCG is 0). Returns its columns but has_judgments and
-- has_ranking.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_evaluated(user_metrics, missing := 'zero',
        empty := 'zero') AS TABLE
    SELECT * EXCLUDE (has_judgments, has_ranking)
    FROM query_table(user_metrics)
    WHERE has_judgments
      AND (missing = 'zero' OR has_ranking)
      AND (empty = 'zero' OR idcg > 0)
      AND (SELECT ndcg_option('missing', missing, ['zero', 'skip'])
                  AND ndcg_option('empty', empty, ['zero', 'skip']));

-- ndcg_metrics_summary(metrics): a ndcg_metrics_evaluated result summed up per cutoff: k, the
-- mean over users of each metric (fsum / count of its values), the sums of num_rel,
-- num_rel_ret, num_ret and num_nonrel_judged_ret (as trec_eval and ir_measures add up counts;
-- NULL but on the first cutoff's row),
-- and users, how many were evaluated.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summary(metrics) AS TABLE
    SELECT k, fsum(dcg) / count(dcg) AS dcg, fsum(idcg) / count(idcg) AS idcg,
           fsum(ndcg) / count(ndcg) AS ndcg, fsum(cg) / count(cg) AS cg,
           fsum(precision) / count(precision) AS precision, fsum(recall) / count(recall) AS recall,
           fsum(hit_rate) / count(hit_rate) AS hit_rate, fsum(mrr) / count(mrr) AS mrr,
           fsum(map) / count(map) AS map, fsum(r_precision) / count(r_precision) AS r_precision,
           sum(num_rel) AS num_rel, sum(num_rel_ret) AS num_rel_ret,
           fsum(judged) / count(judged) AS judged, fsum(ncg) / count(ncg) AS ncg,
           fsum(err) / count(err) AS err, fsum(bpref) / count(bpref) AS bpref,
           fsum(rbp) / count(rbp) AS rbp,
           sum(num_ret) AS num_ret, sum(num_nonrel_judged_ret) AS num_nonrel_judged_ret,
           fsum(set_precision) / count(set_precision) AS set_precision,
           fsum(set_relative_precision) / count(set_relative_precision) AS set_relative_precision,
           fsum(set_map) / count(set_map) AS set_map, fsum(set_f) / count(set_f) AS set_f,
           fsum(relative_precision) / count(relative_precision) AS relative_precision,
           fsum(iprec_11pt_avg) / count(iprec_11pt_avg) AS iprec_11pt_avg,
           fsum(infap) / count(infap) AS infap, fsum(rndcg) / count(rndcg) AS rndcg,
           fsum(ndcg_rel) / count(ndcg_rel) AS ndcg_rel,
           fsum(rbp_resid) / count(rbp_resid) AS rbp_resid,
           fsum(utility) / count(utility) AS utility, fsum(unj) / count(unj) AS unj,
           fsum(g) / count(g) AS g, fsum(bing) / count(bing) AS bing,
           exp(fsum(gm_map) / count(gm_map)) AS gm_map,
           exp(fsum(gm_bpref) / count(gm_bpref)) AS gm_bpref,
           count(*) AS users
    FROM query_table(metrics)
    GROUP BY k;

-- ndcg_metric_values(metrics): a ndcg_metrics_evaluated result as one row per user, metric and
-- cutoff: user_id, metric (its name, as ndcg_metric_name writes it), k (NULL: none) and value
-- (a DOUBLE; NULL values, such as precision without a cutoff, leave no row); then, on the row of
-- users with no cutoff, iprec_at_recall_x at trec_eval's levels (ndcg_iprec_levels) and
-- rprec_mult_x at its multiples (ndcg_rprec_multiples), x to 2 decimals as trec_eval prints it.
CREATE OR REPLACE TEMP MACRO ndcg_metric_values(metrics) AS TABLE
    SELECT user_id, ndcg_metric_name(metric, k) AS metric,
           CASE WHEN metric NOT IN ('r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp',
                                    'num_ret', 'num_nonrel_judged_ret', 'set_precision',
                                    'set_relative_precision', 'set_map', 'set_f',
                                    'iprec_11pt_avg', 'infap', 'rndcg', 'ndcg_rel',
                                    'rbp_resid', 'utility', 'g', 'bing', 'gm_map', 'gm_bpref')
                THEN k END AS k,
           value
    FROM (UNPIVOT (SELECT user_id, k, dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map,
                          r_precision, num_rel::DOUBLE AS num_rel,
                          num_rel_ret::DOUBLE AS num_rel_ret, judged, ncg, err, bpref, rbp,
                          num_ret::DOUBLE AS num_ret,
                          num_nonrel_judged_ret::DOUBLE AS num_nonrel_judged_ret, set_precision,
                          set_relative_precision, set_map, set_f, relative_precision,
                          iprec_11pt_avg,
                          infap, rndcg, ndcg_rel, rbp_resid, utility, unj, g, bing, gm_map,
                          gm_bpref
                   FROM query_table(metrics))
          ON dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map, r_precision, num_rel,
             num_rel_ret, judged, ncg, err, bpref, rbp, num_ret, num_nonrel_judged_ret,
             set_precision, set_relative_precision, set_map, set_f, relative_precision,
             iprec_11pt_avg,
             infap, rndcg, ndcg_rel, rbp_resid, utility, unj, g, bing, gm_map, gm_bpref
          INTO NAME metric VALUE value)
    UNION ALL  -- trec_eval's iprec_at_recall and Rprec_mult at its levels, from the first row
    SELECT user_id, 'iprec_at_recall_' || printf('%.2f', level), NULL::BIGINT,
           ndcg_iprec_at_recall(relevant_ranks, num_relevant, level)
    FROM query_table(metrics), (SELECT unnest(ndcg_iprec_levels()) AS level)
    WHERE num_rel IS NOT NULL
    UNION ALL
    SELECT user_id, 'rprec_mult_' || printf('%.2f', multiple), NULL::BIGINT,
           ndcg_rprec_mult(relevant_ranks, num_relevant, multiple)
    FROM query_table(metrics), (SELECT unnest(ndcg_rprec_multiples()) AS multiple)
    WHERE num_rel IS NOT NULL;

-- ndcg_metric_scores(rankings, judgments, ks, missing, idcg_cutoff, empty, judged_only, ties,
-- rbp_p, set_f_beta, utility_weights, num_docs):
-- every metric of each evaluated user at each cutoff, as ndcg_scores does for NDCG: rankings as
-- a ranking edge returns it, judgments as ndcg_judgments does. Returns user_id, metric, k, value
-- (see ndcg_metric_values).
CREATE OR REPLACE TEMP MACRO ndcg_metric_scores(rankings, judgments, ks := [10],
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', judged_only := false,
        ties := 'trec', rbp_p := 0.9, set_f_beta := 1.0,
        utility_weights := [1.0, -1.0, 0.0, 0.0], num_docs := 0) AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_metrics(rankings, judgments, ks := ks, idcg_cutoff := idcg_cutoff,
                               judged_only := judged_only, ties := ties, rbp_p := rbp_p,
                               set_f_beta := set_f_beta, utility_weights := utility_weights,
                               num_docs := num_docs, edge_gains := false)),
    ndcg_evaluated_ AS (FROM ndcg_metrics_evaluated('ndcg_all_', missing := missing,
                                                    empty := empty))
    FROM ndcg_metric_values('ndcg_evaluated_');

-- Every metric per user and on average at one cutoff k, for each recommendation layout, as
-- ndcg_tables.sql does for NDCG: the same recs and rels, the same options (k, gain, gain_map,
-- min_relevance, missing, idcg_cutoff, empty, max_depth, judged_only and, for rankings by score,
-- ties), and the same checks of rels. The metrics are those at k (dcg, idcg, ndcg, cg,
-- precision, relative_precision, recall, hit_rate, mrr, map, judged, ncg, err; k := 'all' gives
-- each without a cutoff, and no precision) and r_precision, num_rel, num_rel_ret, bpref, rbp,
-- num_ret, num_nonrel_judged_ret and the set measures, which read each whole ranking (up to
-- max_depth).

-- ndcg_metrics_per_user_of(rankings, rels, k, ...): what the wrappers share: rels through the
-- judgments edge, then ndcg_metric_scores at the one cutoff k over rankings (a ranking edge's
-- result, by name). Returns user_id, metric (e.g. 'recall@10', 'r_precision'), value: one row per
-- evaluated user and metric.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_of(rankings, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, min_relevance := NULL, ties := 'trec') AS TABLE
    WITH ndcg_judgments_ AS (
        FROM ndcg_judgments(rels, gain := ndcg_choice('gain', gain, ['linear', 'exponential', 'binary']),
                            gain_map := ndcg_gain_map(gain_map), min_relevance := min_relevance,
                            ideal_depth := ndcg_width(ndcg_k(k))))
    SELECT user_id, metric, value
    FROM ndcg_metric_scores(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                            missing := ndcg_choice('missing', missing, ['zero', 'skip']),
                            idcg_cutoff := ndcg_choice('idcg_cutoff', idcg_cutoff, ['k', 'list']),
                            empty := ndcg_choice('empty', empty, ['zero', 'skip']),
                            judged_only := ndcg_flag('judged_only', judged_only),
                            ties := ndcg_choice('ties', ties, ['trec', 'average']));

-- ndcg_metrics_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := ndcg_max_depth(max_depth)))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance);

-- ndcg_metrics_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks(recs, depth := ndcg_max_depth(max_depth)))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance);

-- ndcg_metrics_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by
-- score descending, equal scores by item id descending as text; ties 'average' averages the DCG
-- family over each tie (the other metrics keep that order).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_scores(recs, depth := ndcg_max_depth(max_depth),
                                                  ties := ndcg_choice('ties', ties, ['trec', 'average'])))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance, ties := ties);

-- ndcg_metrics_summed(per_user): the rows of one of the three macros above summed up: metric,
-- value (the mean over the users; for num_rel, num_rel_ret, num_ret and num_nonrel_judged_ret
-- the sum; for gm_map and gm_bpref exp of the mean, their geometric mean) and users (how many).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summed(per_user) AS TABLE
    SELECT metric,
           CASE WHEN metric IN ('gm_map', 'gm_bpref') THEN exp(fsum(value) / count(*))
                ELSE fsum(value) / CASE WHEN metric IN ('num_rel', 'num_rel_ret', 'num_ret',
                                                        'num_nonrel_judged_ret')
                                        THEN 1 ELSE count(*) END END AS value,
           count(*) AS users
    FROM query_table(per_user)
    GROUP BY metric;

-- ndcg_metrics_mean(recs, rels, ...) and its _ranks and _scores twins: one row per metric:
-- metric, value (the mean over evaluated users; the sum for num_rel, num_rel_ret, num_ret and
-- num_nonrel_judged_ret) and users (how many were evaluated).
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

-- ndcg_segments.sql
-- Segments: a table that puts users into groups (cold-start and active users, countries, ...),
-- so that every result can be broken down by group. A user appears at most once. One rule for
-- users without a segment: a user absent from the table, or whose segment is NULL, empty or only
-- whitespace, belongs to '(unknown)'. The names '(unknown)' and '(all)' (the row of every user)
-- are the output's own: a segment so named is an error.

-- ndcg_unknown_segment(): the segment of users the segment table does not place.
CREATE OR REPLACE TEMP MACRO ndcg_unknown_segment() AS '(unknown)';

-- ndcg_all_segment(): the name of the row of every user, before the segments' rows.
CREATE OR REPLACE TEMP MACRO ndcg_all_segment() AS '(all)';

-- ndcg_segment_name(segment): a segment value (any type) as text; NULL (no segment) when it is
-- NULL, empty or only whitespace (spaces, tabs, line breaks).
CREATE OR REPLACE TEMP MACRO ndcg_segment_name(segment) AS
    CASE WHEN regexp_full_match(segment::VARCHAR, '\s*') THEN NULL ELSE segment::VARCHAR END;

-- ndcg_segment_of(segments): segments as user_id, segment (any type; no segment as
-- ndcg_segment_name says), one row per (user, segment). Returns user_id, segment (as text,
-- ndcg_unknown_segment() for none), one row per user. Stops on a NULL user id, on a user placed in
-- two different segments (a segment and none count as two), naming both, and on a segment named
-- '(unknown)' or '(all)'.
CREATE OR REPLACE TEMP MACRO ndcg_segment_of(segments) AS TABLE
    SELECT user_id, coalesce(first_segment, ndcg_unknown_segment()) AS segment
    FROM (SELECT user_id, min(ndcg_segment_name(segment)) AS first_segment,
                 max(ndcg_segment_name(segment)) AS last_segment,
                 bool_or(ndcg_segment_name(segment) IS NULL) AS also_none
          FROM query_table(segments)
          GROUP BY user_id)
    WHERE ndcg_require(user_id IS NOT NULL, 'segments: a row has no user id (NULL): fill it in or '
                       || 'drop the row')
      AND ndcg_require(first_segment IS NOT DISTINCT FROM last_segment
                       AND NOT (also_none AND first_segment IS NOT NULL),
              'segments: user ' || ndcg_show(user_id) || ' is in two segments, '
              || ndcg_show(first_segment) || ' and '
              || CASE WHEN first_segment IS DISTINCT FROM last_segment THEN ndcg_show(last_segment)
                      ELSE 'none (a NULL, empty or blank segment)' END
              || ': give each user one segment')
      AND ndcg_require(first_segment IS NULL
                       OR first_segment NOT IN (ndcg_unknown_segment(), ndcg_all_segment()),
              'segments: user ' || ndcg_show(user_id) || ' is in the segment '
              || ndcg_show(first_segment) || ', a name the output keeps for '
              || CASE first_segment WHEN ndcg_unknown_segment() THEN 'users without a segment'
                                    ELSE 'every user' END
              || ': rename it' || CASE first_segment WHEN ndcg_unknown_segment()
                                   THEN ', or leave it empty for users without a segment'
                                   ELSE '' END);

-- ndcg_by_segment(per_user, segments, unplaced): per_user (user_id, any value columns) with each
-- user's segment from ndcg_segment_of's (or ndcg_user_activity's) result: every column of
-- per_user, then segment; a user the segments do not place is in `unplaced`
-- (ndcg_unknown_segment(), or ndcg_cold_segment() for activity cohorts).
CREATE OR REPLACE TEMP MACRO ndcg_by_segment(per_user, segments,
        unplaced := ndcg_unknown_segment()) AS TABLE
    SELECT p.*, coalesce(s.segment, unplaced) AS segment
    FROM query_table(per_user) AS p
    LEFT JOIN query_table(segments) AS s ON s.user_id = p.user_id;

-- Cohorts of user activity: users grouped by their number of train interactions (rows of the
-- train table), a segment table computed from the train data, so that every result broken down
-- by segment is also broken down by activity. Groups are ranges of counts, named by their
-- range: cuts [5, 20, 100] (the first count of each group after the first) make 1-4, 5-19,
-- 20-99 and 100+; a range of one count is named by it (2). Users absent from train are 'cold'.

-- ndcg_cold_segment(): the cohort of users without train interactions (the users the activity
-- table does not place).
CREATE OR REPLACE TEMP MACRO ndcg_cold_segment() AS 'cold';

-- ndcg_activity_cuts(cuts): cuts, a list of integers, when they are increasing and >= 2 (a
-- train user has 1 interaction or more; an empty list: one group, 1+); otherwise stops, naming
-- the cuts.
CREATE OR REPLACE TEMP MACRO ndcg_activity_cuts(cuts) AS
    CASE WHEN ndcg_require(list_count(cuts) = len(cuts) AND coalesce(list_min(cuts) >= 2, true) AND list_sort(cuts) = cuts
                           AND list_unique(cuts) = len(cuts),
                           'cuts must be increasing integers >= 2, as in [5, 20, 100], not '
                           || ndcg_show(cuts))
         THEN cuts END;

-- ndcg_range_name(low, high): the name of the range of counts low .. high (high NULL: no upper
-- end): '5-19', '100+', or '2' for a range of one count.
CREATE OR REPLACE TEMP MACRO ndcg_range_name(low, high) AS
    CASE WHEN high IS NULL THEN low || '+'
         WHEN high = low THEN low::VARCHAR
         ELSE low || '-' || high END;

-- ndcg_activity_group(n, cuts): the name of the group of n interactions under cuts (checked by
-- ndcg_activity_cuts): from the largest cut <= n (1 when none) to the next cut - 1.
CREATE OR REPLACE TEMP MACRO ndcg_activity_group(n, cuts) AS
    ndcg_range_name(coalesce(list_filter(cuts, lambda c: c <= n)[-1], 1),
                    list_filter(cuts, lambda c: c > n)[1] - 1);

-- ndcg_count_quantiles(counts, groups): the cuts of `groups` groups of about as many rows each
-- of counts (n: a count >= 1 per row). Returns one row, cuts: 1 + the quantile_disc of n at
-- 1/groups, 2/groups, ... (the smallest count that at least that share of the rows have or
-- fewer), distinct, and only those that leave a row above them (fewer groups when counts
-- repeat: every row at 1 gives no cut, one group 1+). Stops on groups < 2.
CREATE OR REPLACE TEMP MACRO ndcg_count_quantiles(counts, groups) AS TABLE
    SELECT coalesce(list_sort(list_distinct(list_filter(
               list_transform(quantile_disc(n, list_transform(range(1, groups),
                                                              lambda i: i / groups)),
                              lambda q: q + 1),
               lambda c: c <= max(n)))), []) AS cuts
    FROM query_table(counts)
    WHERE ndcg_require(groups >= 2, 'groups must be an integer >= 2, not ' || ndcg_show(groups));

-- ndcg_activity_quantiles(train, groups): ndcg_count_quantiles of the train users' counts of
-- rows (train: user_id, one row per interaction): the cuts of `groups` groups of about as many
-- train users each.
CREATE OR REPLACE TEMP MACRO ndcg_activity_quantiles(train, groups) AS TABLE
    WITH ndcg_counts_ AS (SELECT count(*) AS n FROM query_table(train) GROUP BY user_id)
    FROM ndcg_count_quantiles('ndcg_counts_', groups);

-- ndcg_user_activity(train, cuts): the activity group of every user of train (user_id, one row
-- per interaction; other columns ignored) under cuts (ndcg_activity_cuts; the cuts of
-- ndcg_activity_quantiles for quantile groups). Returns user_id, segment (ndcg_activity_group of
-- the user's count of rows), one row per train user: a segment table for ndcg_by_segment with
-- unplaced := ndcg_cold_segment(). Stops on rows without a user id.
CREATE OR REPLACE TEMP MACRO ndcg_user_activity(train, cuts) AS TABLE
    SELECT user_id, ndcg_activity_group(count(*), ndcg_activity_cuts(cuts)) AS segment
    FROM query_table(train)
    GROUP BY user_id
    HAVING ndcg_require(user_id IS NOT NULL, 'train: ' || count(*) || ' row(s) have no user id '
                        || '(NULL): fill it in or drop the rows');

-- Groups of items by popularity, for --by item-popularity: each metric is computed again over
-- the judgments of one group's items only (relevant items of other groups do not count), so
-- precision, recall and NDCG say how well a run finds that group's relevant items. popularity
-- is ndcg_beyond_popularity's result (item_id, pop: distinct train users, head).

-- ndcg_head_tail(popularity): item_id, segment: 'tail' for the items of tail@K's tail
-- (ndcg_beyond_popularity's tail: --head-share, --tail-rule), 'head' for the others.
CREATE OR REPLACE TEMP MACRO ndcg_head_tail(popularity) AS TABLE
    SELECT item_id, CASE WHEN tail THEN 'tail' ELSE 'head' END AS segment
    FROM query_table(popularity);

-- ndcg_popularity_quantiles(popularity, groups): the cuts (ndcg_count_quantiles) of `groups`
-- groups of about as many train items each, by pop (items no train user has left out).
CREATE OR REPLACE TEMP MACRO ndcg_popularity_quantiles(popularity, groups) AS TABLE
    WITH ndcg_counts_ AS (SELECT pop AS n FROM query_table(popularity) WHERE pop > 0)
    FROM ndcg_count_quantiles('ndcg_counts_', groups);

-- ndcg_popularity_groups(popularity, cuts): item_id, segment: the range of the item's pop under
-- cuts (ndcg_activity_group: 1-4, 5-19, 100+), ndcg_cold_segment() for an item no train user has.
CREATE OR REPLACE TEMP MACRO ndcg_popularity_groups(popularity, cuts) AS TABLE
    SELECT item_id, CASE WHEN pop = 0 THEN ndcg_cold_segment()
                         ELSE ndcg_activity_group(pop, ndcg_activity_cuts(cuts)) END AS segment
    FROM query_table(popularity);

-- ndcg_group_exposure(tops, item_groups, unplaced): each group's share of what the users were
-- shown: tops as ndcg_beyond_tops returns them (user_id, k, top), item_groups (item_id,
-- segment; an item it does not list is in `unplaced`). Returns k, segment, shown (how many
-- top_k places hold the group's items) and exposure (shown / every top_k place at that k).
CREATE OR REPLACE TEMP MACRO ndcg_group_exposure(tops, item_groups, unplaced) AS TABLE
    SELECT t.k, coalesce(g.segment, unplaced) AS segment, count(*) AS shown,
           count(*) / sum(count(*)) OVER (PARTITION BY t.k) AS exposure
    FROM (SELECT k, unnest(top) AS item_id FROM query_table(tops)) AS t
    LEFT JOIN query_table(item_groups) AS g ON g.item_id = t.item_id
    GROUP BY t.k, coalesce(g.segment, unplaced);

-- ndcg_split.sql
-- Splits: a table of interactions (user_id, item_id and, for the temporal protocols, timestamp;
-- every other column is carried as it is) into train and test rows, by the protocols recommender
-- libraries use (README, "Splitting interactions"). Each macro returns every row it keeps, as it
-- was, with one more column, ndcg_part: 'train' or 'test'.
--
-- The per-user holdouts put each user's interactions in an order and send the last ones to test:
--   ndcg_split_temporal      by time: timestamp, then item id, then the row (ties decided so);
--   ndcg_split_random        by a hash of (seed, user_id, item_id), then item id, then the row:
--                            the same split for any number of threads and any row order;
--   ndcg_split_leave_one_out ndcg_split_temporal with test_last := 1.
-- How many go to test: test_last, or test_share of the user's n interactions, rounded down,
-- and at least 1 (share as written: 0.29 of 100 is 29). A user with fewer than min_interactions
-- (by default what the holdout needs: test_last + 1, or 2) stops the query (short_users
-- 'error'), or keeps all of them in train ('train'), or is left out ('drop').
-- A global time cut (ndcg_split_time_cut) sends every interaction at or after the cut to test.

-- ndcg_split_time(value, what): a timestamp as it is when it is a number or a date or time type
-- (DATE, TIMESTAMP of any precision or zone); any other type stops the query naming `what`:
-- text would order '10' before '9'.
CREATE OR REPLACE TEMP MACRO ndcg_split_time(value, what) AS
    CASE WHEN ndcg_require(regexp_full_match(typeof(value), 'U?(TINYINT|SMALLINT|INTEGER|BIGINT'
                               || '|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|DATE|TIMESTAMP.*'),
                           what || ' is ' || typeof(value) || ', not a number, a date or a '
                           || 'timestamp: convert it')
         THEN value END;

-- ndcg_split_row_problem(user_id, item_id, moment): what is wrong with an interaction's keys, as a
-- message (a NULL user, item or timestamp; a NaN or infinite timestamp), or NULL. Pass 0 as
-- moment where there is no time. (Not `timestamp`: the shell's parser refuses that name here.)
CREATE OR REPLACE TEMP MACRO ndcg_split_row_problem(user_id, item_id, moment) AS
    CASE WHEN user_id IS NULL
         THEN 'interactions: a row has no user id (NULL): fill it in or drop the row'
         WHEN item_id IS NULL THEN 'interactions: a row has no item id (user ' || ndcg_show(user_id)
                                   || ') (NULL): fill it in or drop the row'
         WHEN moment IS NULL THEN 'interactions: a row has no timestamp (user '
                                     || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
                                     || ') (NULL): fill it in or drop the row'
         WHEN ndcg_float_type(moment) AND NOT isfinite(moment::DOUBLE)
         THEN 'interactions: user ' || ndcg_show(user_id) || ', item ' || ndcg_show(item_id)
              || ' has timestamp ' || ndcg_show(moment) || ': give a finite number' END;

-- ndcg_split_needs(test_share, test_last): how many interactions a user needs for the holdout to
-- leave one in train and one in test or more: test_last + 1, or 2 with a share. Stops naming the
-- parameter when not exactly one of test_share (a number strictly between 0 and 1) and
-- test_last (an integer >= 1) is given.
CREATE OR REPLACE TEMP MACRO ndcg_split_needs(test_share, test_last) AS
    CASE WHEN (test_share IS NULL) = (test_last IS NULL)
         THEN error('ndcg-duck: give one of test_share (a share of each user''s interactions) '
                    || 'and test_last (a number of them)')
         WHEN test_share IS NOT NULL AND NOT coalesce(
                  TRY_CAST(test_share::VARCHAR AS DOUBLE) > 0
                  AND TRY_CAST(test_share::VARCHAR AS DOUBLE) < 1, false)
         THEN error('ndcg-duck: test_share must be a number between 0 and 1 (both left out), not '
                    || ndcg_show(test_share))
         WHEN test_last IS NOT NULL AND NOT coalesce(ndcg_whole(test_last) >= 1, false)
         THEN error('ndcg-duck: test_last must be an integer >= 1, not ' || ndcg_show(test_last))
         ELSE coalesce(ndcg_whole(test_last) + 1, 2) END;

-- ndcg_split_minimum(test_share, test_last, min_interactions): the least number of interactions
-- a user must have: min_interactions, or by default what the holdout needs (ndcg_split_needs).
-- Stops when min_interactions is not an integer at least that large.
CREATE OR REPLACE TEMP MACRO ndcg_split_minimum(test_share, test_last, min_interactions) AS
    CASE WHEN min_interactions IS NULL THEN ndcg_split_needs(test_share, test_last)
         WHEN coalesce(ndcg_whole(min_interactions) >= ndcg_split_needs(test_share, test_last),
                       false)
         THEN ndcg_whole(min_interactions)
         ELSE error('ndcg-duck: min_interactions must be an integer >= '
                    || ndcg_split_needs(test_share, test_last) || ' (one interaction in train '
                    || 'and the test ones), not ' || ndcg_show(min_interactions)) END;

-- ndcg_split_test_count(n, share, last): how many of a user's n interactions go to test: last
-- (a BIGINT, or NULL), or share (test_share as a DECIMAL: exactly as written) of n rounded down,
-- at least 1.
CREATE OR REPLACE TEMP MACRO ndcg_split_test_count(n, share, last) AS
    coalesce(last, greatest(floor(share * n)::BIGINT, 1));

-- ndcg_split_short(user_id, n, minimum): the message for a user with fewer interactions than the
-- split needs.
CREATE OR REPLACE TEMP MACRO ndcg_split_short(user_id, n, minimum, users) AS
    'interactions: user ' || ndcg_show(user_id) || ' has ' || n || ' interaction'
    || CASE WHEN n = 1 THEN '' ELSE 's' END || ', fewer than the ' || minimum
    || ' of min_interactions'
    || CASE WHEN users > 1 THEN ' (' || users || ' such users in all)' ELSE '' END
    || ': leave such users out with short_users ''drop'', or keep them whole in train with '
    || 'short_users ''train''';

-- ndcg_split_temporal_keys(interactions): the rows of `interactions` as the per-user holdouts by
-- time read them ("keyed"): user_id and item_id checked as ids (ndcg_id: stops on a column of
-- another type), each row with ndcg_first and ndcg_moment, its timestamp (ndcg_split_time),
-- ndcg_low 0 (nothing below ndcg_first), ndcg_tie, a hash of the whole row, and ndcg_problem,
-- what is wrong with its keys (ndcg_split_row_problem) or NULL. A user's order: ndcg_first, then
-- ndcg_low, then item_id, then ndcg_tie.
CREATE OR REPLACE TEMP MACRO ndcg_split_temporal_keys(interactions) AS TABLE
    SELECT * REPLACE (ndcg_id(user_id, 'interactions: column user_id') AS user_id,
                      ndcg_id(item_id, 'interactions: column item_id') AS item_id),
           ndcg_split_time(timestamp, 'interactions: column timestamp') AS ndcg_first,
           0 AS ndcg_low,
           ndcg_split_time(timestamp, 'interactions: column timestamp') AS ndcg_moment,
           hash(ndcg_row_) AS ndcg_tie,
           ndcg_split_row_problem(user_id, item_id, timestamp) AS ndcg_problem
    FROM query_table(interactions) AS ndcg_row_;

-- ndcg_split_high(hash), ndcg_split_low(hash): a hash (UBIGINT) as two parts in its order: its
-- high 63 bits as a BIGINT, then its lowest bit. DuckDB's top-n aggregate (max(x, n)) is about
-- half as fast on UBIGINT as on BIGINT, and the high bits cost a third of hash - 2^63 (a
-- HUGEINT) in each pass; two hashes equal in their high bits are a tie at the edge
-- (ndcg_split_edges), ordered by the low bit (ndcg_split_tied).
CREATE OR REPLACE TEMP MACRO ndcg_split_high(hash) AS (hash >> 1)::BIGINT;
CREATE OR REPLACE TEMP MACRO ndcg_split_low(hash) AS (hash & 1)::INTEGER;

-- ndcg_split_random_keys(interactions, seed): the rows of `interactions` keyed for the random
-- holdout: as ndcg_split_temporal_keys, with hash(seed, user_id, item_id) as ndcg_first and
-- ndcg_low (ndcg_split_high, ndcg_split_low: the hash's order; the seed checked by
-- ndcg_split_seed) and no time (ndcg_moment 0).
CREATE OR REPLACE TEMP MACRO ndcg_split_random_keys(interactions, seed) AS TABLE
    SELECT * REPLACE (ndcg_id(user_id, 'interactions: column user_id') AS user_id,
                      ndcg_id(item_id, 'interactions: column item_id') AS item_id),
           ndcg_split_high(hash(ndcg_split_seed(seed), user_id, item_id)) AS ndcg_first,
           ndcg_split_low(hash(ndcg_split_seed(seed), user_id, item_id)) AS ndcg_low,
           0 AS ndcg_moment, hash(ndcg_row_) AS ndcg_tie,
           ndcg_split_row_problem(user_id, item_id, 0) AS ndcg_problem
    FROM query_table(interactions) AS ndcg_row_;

-- ndcg_split_users(keyed, test_share, test_last, min_interactions, short_users): each user of
-- `keyed` (ndcg_split_temporal_keys, ndcg_split_random_keys) with n, the number of their
-- interactions, and t, how many go to test (ndcg_split_test_count), NULL for a user short of the
-- minimum (ndcg_split_minimum). Stops on a row with a problem (ndcg_problem), before any is
-- written; then, with short_users 'error', on the users short of the minimum, naming the
-- smallest user id. The pass reads the user ids only: a NULL key or a timestamp that is not
-- finite is counted (count(column), which DuckDB answers from a Parquet file's statistics), and
-- only when a user has one are the rows read again, for the first row's problem in words
-- (ndcg_checked_: the join with no flawed user reads nothing). The options are read once
-- (ndcg_options_), not per row.
CREATE OR REPLACE TEMP MACRO ndcg_split_users(keyed, test_share, test_last, min_interactions,
                                               short_users) AS TABLE
    WITH ndcg_options_ AS (
        SELECT ndcg_split_minimum(test_share, test_last, min_interactions) AS minimum,
               test_share::VARCHAR::DECIMAL(38, 18) AS share, ndcg_whole(test_last) AS last),
    ndcg_counted_ AS MATERIALIZED (
        SELECT user_id, count(*) AS n,
               user_id IS NULL OR count(item_id) < count(*) OR count(ndcg_moment) < count(*)
               OR count(*) FILTER (ndcg_float_type(ndcg_moment)
                                   AND NOT isfinite(ndcg_moment::DOUBLE)) > 0 AS flawed
        FROM query_table(keyed) GROUP BY user_id),
    ndcg_checked_ AS MATERIALIZED (
        SELECT count(*) AS problems
        FROM query_table(keyed), (SELECT 1 FROM ndcg_counted_ WHERE flawed LIMIT 1)
        WHERE ndcg_require(ndcg_problem IS NULL, ndcg_problem)),
    ndcg_users_ AS MATERIALIZED (
        SELECT user_id, n, CASE WHEN n >= minimum THEN ndcg_split_test_count(n, share, last) END
                           AS t, minimum
        FROM ndcg_counted_, ndcg_options_, ndcg_checked_)
    SELECT user_id, n, t FROM ndcg_users_
    WHERE ndcg_option('short_users', short_users, ['error', 'train', 'drop'])
      AND (short_users <> 'error' OR (
          SELECT ndcg_require(count(*) = 0, ndcg_split_short(min(user_id), min_by(n, user_id),
                                                             first(minimum), count(*)))
          FROM ndcg_users_ WHERE t IS NULL));

-- ndcg_split_edges(keyed, users): where each user's test part starts, without sorting their rows:
-- edge, the t-th largest ndcg_first of the user (a top-(t + 1) aggregate), and tied, whether the
-- (t + 1)-th is equal to it. When it is not, the user's test rows are exactly those with
-- ndcg_first >= edge; when it is, a tie straddles the edge and only the whole order decides
-- (ndcg_split_tied). `users` is ndcg_split_users (n and t carried); a user short of the minimum
-- has no edge. Grouped by the user alone (t is the same on each of their rows): a second key
-- cost a tenth of the pass.
CREATE OR REPLACE TEMP MACRO ndcg_split_edges(keyed, users) AS TABLE
    SELECT user_id, n, t, top[t] AS edge, coalesce(top[t + 1] = top[t], false) AS tied
    FROM query_table(users) LEFT JOIN (
        SELECT user_id, max(ndcg_first, t + 1) AS top   -- t: one value a user, not a key
        FROM query_table(keyed) JOIN query_table(users) USING (user_id)
        WHERE t IS NOT NULL GROUP BY user_id) USING (user_id);

-- ndcg_split_untied(keyed, edges, short_users): the rows of `keyed` without its key columns, with
-- ndcg_part, for every user but those whose tie straddles the edge (ndcg_split_edges): 'test' for
-- a user's rows at or past their edge, 'train' for the others and for the users short of the
-- minimum (left out with short_users 'drop').
CREATE OR REPLACE TEMP MACRO ndcg_split_untied(keyed, edges, short_users) AS TABLE
    SELECT k.* EXCLUDE (ndcg_first, ndcg_low, ndcg_moment, ndcg_tie, ndcg_problem),
           CASE WHEN k.ndcg_first >= e.edge THEN 'test' ELSE 'train' END AS ndcg_part
    FROM query_table(keyed) AS k JOIN query_table(edges) AS e USING (user_id)
    WHERE NOT e.tied AND (short_users <> 'drop' OR e.t IS NOT NULL);

-- ndcg_split_tied(keyed, edges): the rows of the users whose tie straddles the edge
-- (ndcg_split_edges), without the key columns, with ndcg_part: their rows sorted by the whole
-- order, the last t to test. The rows are read only when there is such a user (a join with no
-- user reads nothing); ndcg-duck split makes this a table, so that they are read once for both
-- parts.
CREATE OR REPLACE TEMP MACRO ndcg_split_tied(keyed, edges) AS TABLE
    SELECT k.* EXCLUDE (ndcg_first, ndcg_low, ndcg_moment, ndcg_tie, ndcg_problem),
           CASE WHEN row_number() OVER (PARTITION BY user_id
                                        ORDER BY k.ndcg_first, k.ndcg_low, k.item_id,
                                                 k.ndcg_tie)
                     > e.n - e.t THEN 'test' ELSE 'train' END AS ndcg_part
    FROM query_table(keyed) AS k JOIN (FROM query_table(edges) WHERE tied) AS e USING (user_id);

-- ndcg_split_parts(keyed, edges, short_users): every row of the holdout with ndcg_part
-- (ndcg_split_untied, ndcg_split_tied). Only the users whose tie straddles the edge have their
-- rows sorted (a window that numbered every user's rows cost the split about twice as much).
CREATE OR REPLACE TEMP MACRO ndcg_split_parts(keyed, edges, short_users) AS TABLE
    FROM ndcg_split_untied(keyed, edges, short_users)
    UNION ALL
    FROM ndcg_split_tied(keyed, edges);

-- ndcg_split_counts(users, short_users): what a holdout made, from its users (ndcg_split_users):
-- rows and users of each part, users in train only (those short of the minimum, with
-- short_users 'train'), users and rows left out (with short_users 'drop'). Every user kept has
-- train rows (t < n); every user with a t has t test rows.
CREATE OR REPLACE TEMP MACRO ndcg_split_counts(users, short_users) AS TABLE
    SELECT coalesce(sum(n - coalesce(t, 0)) FILTER (kept), 0)::BIGINT AS train_rows,
           count(*) FILTER (kept) AS train_users,
           coalesce(sum(t), 0)::BIGINT AS test_rows, count(t) AS test_users,
           count(*) FILTER (kept AND t IS NULL) AS only_train, 0 AS only_test,
           count(*) FILTER (NOT kept) AS dropped_users,
           coalesce(sum(n) FILTER (NOT kept), 0)::BIGINT AS dropped_rows
    FROM (SELECT n, t, short_users <> 'drop' OR t IS NOT NULL AS kept FROM query_table(users));

-- ndcg_split_keyed(keyed, test_share, test_last, min_interactions, short_users): the holdout of
-- `keyed` (ndcg_split_temporal_keys, ndcg_split_random_keys): each user's last rows in their
-- order to test; the users short of the minimum stop the query, or stay in train, or are left
-- out (short_users). Every row kept, without the key columns, with ndcg_part.
CREATE OR REPLACE TEMP MACRO ndcg_split_keyed(keyed, test_share, test_last, min_interactions,
                                               short_users) AS TABLE
    WITH ndcg_users_ AS MATERIALIZED (
        FROM ndcg_split_users(keyed, test_share, test_last, min_interactions, short_users)),
    ndcg_edges_ AS MATERIALIZED (FROM ndcg_split_edges(keyed, 'ndcg_users_'))
    FROM ndcg_split_parts(keyed, 'ndcg_edges_', short_users);

-- ndcg_split_temporal(interactions, test_share := NULL, test_last := NULL,
-- min_interactions := NULL, short_users := 'error'): the per-user temporal holdout: each user's
-- last interactions by timestamp (ties by item id, then by the whole row) go to test. Every row
-- with ndcg_part. Stops on ids of a type ids may not have (ndcg_id), a timestamp that is not a
-- number, date or timestamp (ndcg_split_time), and a NULL key or NaN timestamp.
CREATE OR REPLACE TEMP MACRO ndcg_split_temporal(interactions, test_share := NULL,
                                                 test_last := NULL, min_interactions := NULL,
                                                 short_users := 'error') AS TABLE
    WITH ndcg_keyed_ AS NOT MATERIALIZED (FROM ndcg_split_temporal_keys(interactions))
    FROM ndcg_split_keyed('ndcg_keyed_', test_share, test_last, min_interactions, short_users);

-- ndcg_split_leave_one_out(interactions, min_interactions := NULL, short_users := 'error'):
-- each user's last interaction by time in test, the rest in train (ndcg_split_temporal with
-- test_last := 1).
CREATE OR REPLACE TEMP MACRO ndcg_split_leave_one_out(interactions, min_interactions := NULL,
                                                      short_users := 'error') AS TABLE
    FROM ndcg_split_temporal(interactions, test_last := 1, min_interactions := min_interactions,
                             short_users := short_users);

-- ndcg_split_random(interactions, test_share := NULL, test_last := NULL, seed := 0,
-- min_interactions := NULL, short_users := 'error'): the random per-user holdout: each user's
-- interactions ordered by hash(seed, user_id, item_id) (ties by item id, then by the whole row),
-- the last ones to test. No timestamp needed; the same rows for the same seed on any number of
-- threads, whatever the rows' order (DuckDB's hash: the same within a DuckDB version).
CREATE OR REPLACE TEMP MACRO ndcg_split_random(interactions, test_share := NULL,
                                               test_last := NULL, seed := 0,
                                               min_interactions := NULL,
                                               short_users := 'error') AS TABLE
    WITH ndcg_keyed_ AS NOT MATERIALIZED (FROM ndcg_split_random_keys(interactions, seed))
    FROM ndcg_split_keyed('ndcg_keyed_', test_share, test_last, min_interactions, short_users);

-- ndcg_split_seed(seed): the seed as a BIGINT; stops naming it when it is not an integer >= 0.
CREATE OR REPLACE TEMP MACRO ndcg_split_seed(seed) AS
    CASE WHEN coalesce(ndcg_whole(seed) >= 0, false) THEN ndcg_whole(seed)
         ELSE error('ndcg-duck: seed must be an integer >= 0, not ' || ndcg_show(seed)) END;

-- ndcg_split_time_cut(interactions, cut): the global temporal split: every interaction before
-- `cut` (a value of the timestamp column's type, or text DuckDB reads as one) in train, at or
-- after it in test, whatever the user (a user may be only in one part). Stops as
-- ndcg_split_temporal does on a bad row, and on a NULL cut.
CREATE OR REPLACE TEMP MACRO ndcg_split_time_cut(interactions, cut) AS TABLE
    SELECT *, CASE WHEN ndcg_split_time(timestamp, 'interactions: column timestamp') < cut
                   THEN 'train' ELSE 'test' END AS ndcg_part
    FROM query_table(interactions)
    WHERE ndcg_require(cut IS NOT NULL, 'cut must be a time, not NULL')
      AND ndcg_require(ndcg_split_row_problem(ndcg_id(user_id, 'interactions: column user_id'),
                                              ndcg_id(item_id, 'interactions: column item_id'),
                                              timestamp) IS NULL,
                       ndcg_split_row_problem(user_id, item_id, timestamp));

-- ndcg_split_binary(relevance, threshold): a relevance value made binary: 1 when it is at least
-- threshold, else 0 (RecBole's threshold). A boolean reads as 1 (true) or 0 (false). Stops on a
-- relevance that is not a number or a boolean, and on a NULL, NaN or infinite one.
CREATE OR REPLACE TEMP MACRO ndcg_split_binary(relevance, threshold) AS
    CASE WHEN ndcg_require(regexp_full_match(typeof(relevance), 'U?(TINYINT|SMALLINT|INTEGER'
                               || '|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|BOOLEAN'),
                           'interactions: column relevance is ' || typeof(relevance)
                           || ', not a number or a boolean: convert it')
              AND ndcg_require(coalesce(isfinite(relevance::DOUBLE), false),
                               'interactions: a relevance is ' || ndcg_show(relevance)
                               || ': give a finite number')
         THEN (relevance::DOUBLE >= threshold)::INTEGER END;
