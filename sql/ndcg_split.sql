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
