-- each paired user's values and difference are those of `ndcg-duck compare ../relevance.csv
-- --run old=../recs_long.csv --run new=../recs_new_long.csv -k 10 --per-user compare.csv`
{{ config(enabled=var('cli_dir', none) is not none) }}
SELECT m.*, c.*
FROM {{ ref('compare_per_user') }} AS m
FULL OUTER JOIN read_csv({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/compare.csv') }}) AS c
    ON c.user_id = m.user_id
WHERE m.user_id IS NULL OR c.user_id IS NULL
   OR abs(m.baseline - c."ndcg@10 old") > 1e-12 OR abs(m.ndcg - c."ndcg@10 new") > 1e-12
   OR abs(m.difference - c."ndcg@10 new-old") > 1e-12
