-- ndcg-duck: NDCG and its parts as DuckDB macros.
-- From the repository root, in the duckdb shell:   .read sql/ndcg.sql
-- Each file below holds one concern; `ndcg-duck sql` prints them all as one script.
.read sql/ndcg_checks.sql
.read sql/ndcg_params.sql
.read sql/ndcg_input.sql
.read sql/ndcg_core.sql
.read sql/ndcg_tables.sql
.read sql/ndcg_metrics.sql
.read sql/ndcg_lists.sql
.read sql/ndcg_trec.sql
