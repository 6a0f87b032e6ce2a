-- the mean and the users are those of `ndcg-duck eval ../recs_long.csv ../relevance.csv -k 5
-- --gain exponential --gain-map 3=10 --judged-only --missing skip --format json` (mean.json in
-- the var cli_dir)
{{ config(enabled=var('cli_dir', none) is not none) }}
SELECT m.*, c.*
FROM {{ ref('ndcg_mean') }} AS m
CROSS JOIN read_json({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/mean.json') }}) AS c
WHERE abs(m.ndcg - c."ndcg@5") > 1e-12 OR m.users <> c.users
