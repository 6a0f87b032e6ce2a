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
