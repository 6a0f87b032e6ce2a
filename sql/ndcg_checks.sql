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
