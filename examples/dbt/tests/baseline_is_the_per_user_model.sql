-- compare_per_user's baseline is the run of ndcg_per_user (same run, same options): the same
-- users with the same values
SELECT *
FROM {{ ref('compare_per_user') }} AS c
FULL OUTER JOIN {{ ref('ndcg_per_user') }} AS p ON p.user_id = c.user_id
WHERE c.user_id IS NULL OR p.user_id IS NULL OR c.baseline <> p.ndcg
