-- each user's dcg, idcg and ndcg are those of `ndcg-duck eval ../recs_long.csv ../relevance.csv
-- -k 10 --per-user per_user.csv`, which tests/doors/test_dbt.py runs into the var cli_dir (without
-- it, this test is off)
{{ config(enabled=var('cli_dir', none) is not none) }}
SELECT m.*, c.*
FROM {{ ref('ndcg_per_user') }} AS m
FULL OUTER JOIN read_csv({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/per_user.csv') }}) AS c
    ON c.user_id = m.user_id
WHERE m.user_id IS NULL OR c.user_id IS NULL
   OR abs(m.dcg - c."dcg@10") > 1e-12 OR abs(m.idcg - c."idcg@10") > 1e-12
   OR abs(m.ndcg - c."ndcg@10") > 1e-12
