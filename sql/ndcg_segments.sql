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
