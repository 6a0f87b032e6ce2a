-- The beyond-accuracy worked example of docs/beyond-accuracy.md; from the repository root:
--   duckdb < examples/beyond/beyond.sql
.read sql/ndcg.sql
CREATE TABLE recs AS FROM 'examples/beyond/recs.json';
CREATE TABLE rels AS FROM 'examples/beyond/rels.csv';
CREATE TABLE train AS FROM 'examples/beyond/train.csv';
CREATE TABLE items AS FROM 'examples/beyond/items.json';
CREATE TABLE beyond AS FROM ndcg_metrics_beyond('recs', 'rels', 'train', 'items', k := 2);
CREATE TABLE ild AS FROM ndcg_metrics_beyond_ild('recs', 'rels', 'items', k := 2);
FROM ndcg_metrics_beyond_mean('beyond') UNION ALL FROM ndcg_metrics_beyond_mean('ild')
ORDER BY metric;
