-- Segments: a table that puts users into groups (cold-start and active users, countries, ...),
-- so that every result can be broken down by group. A user appears at most once; a user without
-- a segment (absent from the table, or with a NULL segment) belongs to '(unknown)'.

-- ndcg_unknown_segment(): the segment of users the segment table does not place.
CREATE OR REPLACE TEMP MACRO ndcg_unknown_segment() AS '(unknown)';

-- ndcg_segment_of(segments): segments as user_id, segment (any type; NULL means none), one row
-- per (user, segment). Returns user_id, segment (as text), one row per user. Stops on a NULL user
-- id and on a user placed in two different segments, naming both.
CREATE OR REPLACE TEMP MACRO ndcg_segment_of(segments) AS TABLE
    SELECT user_id, coalesce(first_segment, ndcg_unknown_segment()) AS segment
    FROM (SELECT user_id, min(segment::VARCHAR) AS first_segment,
                 max(segment::VARCHAR) AS last_segment
          FROM query_table(segments)
          GROUP BY user_id)
    WHERE ndcg_require(user_id IS NOT NULL, 'segments: a row has no user id (NULL): fill it in or '
                       || 'drop the row')
      AND ndcg_require(first_segment IS NOT DISTINCT FROM last_segment,
              'segments: user ' || ndcg_show(user_id) || ' is in two segments, '
              || ndcg_show(first_segment) || ' and ' || ndcg_show(last_segment)
              || ': give each user one segment');

-- ndcg_by_segment(per_user, segments): per_user (user_id, any value columns) with each user's
-- segment from ndcg_segment_of's result: every column of per_user, then segment.
CREATE OR REPLACE TEMP MACRO ndcg_by_segment(per_user, segments) AS TABLE
    SELECT p.*, coalesce(s.segment, ndcg_unknown_segment()) AS segment
    FROM query_table(per_user) AS p
    LEFT JOIN query_table(segments) AS s ON s.user_id = p.user_id;
