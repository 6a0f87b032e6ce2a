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

-- ndcg_by_segment(per_user, segments): per_user (user_id, any value columns) with each user's
-- segment from ndcg_segment_of's result: every column of per_user, then segment.
CREATE OR REPLACE TEMP MACRO ndcg_by_segment(per_user, segments) AS TABLE
    SELECT p.*, coalesce(s.segment, ndcg_unknown_segment()) AS segment
    FROM query_table(per_user) AS p
    LEFT JOIN query_table(segments) AS s ON s.user_id = p.user_id;
