-- each metric's mean (a sum for num_rel and num_rel_ret) and the users are those of
-- `ndcg-duck eval ... -k 10 -m <every metric> --format json` (summary.json in the var cli_dir)
{{ config(enabled=var('cli_dir', none) is not none) }}
WITH cli AS (
    UNPIVOT (SELECT * EXCLUDE (users, users_without_recommendations,
                               users_only_in_recommendations, users_with_zero_ideal_dcg)
             FROM read_json({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/summary.json') }}))
    ON COLUMNS(*) INTO NAME metric VALUE value),
users AS (SELECT users FROM read_json({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/summary.json') }}))
SELECT m.*, cli.*
FROM {{ ref('metrics_mean') }} AS m
FULL OUTER JOIN cli ON cli.metric = m.metric
CROSS JOIN users
WHERE m.metric IS NULL OR cli.metric IS NULL OR abs(m.value - cli.value) > 1e-12
   OR m.users <> users.users
