-- the users, means, mean difference, effect size d_z and wins/ties/losses are those of
-- `ndcg-duck compare ../relevance.csv --run old=../recs_long.csv --run new=../recs_new_long.csv
-- -k 10 --format json` (compare.json in the var cli_dir)
{{ config(enabled=var('cli_dir', none) is not none) }}
WITH cli AS (
    SELECT (SELECT r FROM unnest(rows) AS t(r) WHERE r.run = 'new') AS new,
           (SELECT r FROM unnest(rows) AS t(r) WHERE r.run = 'old') AS old
    FROM (SELECT list(j) AS rows
          FROM read_json({{ ndcg_duck.sql_text(var('cli_dir', '') ~ '/compare.json') }}) AS j))
SELECT m.*, cli.*
FROM {{ ref('compare_summary') }} AS m CROSS JOIN cli
WHERE m.users <> cli.new.users OR abs(m.mean - cli.new.mean) > 1e-12
   OR abs(m.base_mean - cli.old.mean) > 1e-12 OR abs(m.diff_mean - cli.new.diff) > 1e-12
   OR abs(m.diff_mean / sqrt(m.diff_var) - cli.new.d_z) > 1e-12
   OR m.wins <> cli.new.wins OR m.ties <> cli.new.ties OR m.losses <> cli.new.losses
