-- Input checks. The core assumes clean input: no NULLs, one ranking per user, no item twice in a
-- ranking. These macros read their input once and stop the query with an error that
-- names the user, the item and the value, instead of returning a wrong number.

-- ndcg_require(ok, message): true when ok is true; otherwise stops the query with message.
CREATE OR REPLACE TEMP MACRO ndcg_require(ok, message) AS
    CASE WHEN ok THEN true ELSE error('ndcg-duck: ' || message) END;

-- ndcg_show(value): a value as text for a message; NULL shows as NULL.
CREATE OR REPLACE TEMP MACRO ndcg_show(value) AS coalesce(value::VARCHAR, 'NULL');

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
-- ndcg_relevance_number reads it), row by row. Stops on a relevance of another type, on a NULL
-- user, item or relevance and on a NaN or infinite relevance. (Repeated judgments are the
-- judgments edge's, in ndcg_input.sql.)
CREATE OR REPLACE TEMP MACRO ndcg_judgments_checked(rels) AS TABLE
    SELECT user_id, item_id, relevance
    FROM (SELECT user_id, item_id, ndcg_relevance_number(relevance, 'relevance: column relevance') AS relevance
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
