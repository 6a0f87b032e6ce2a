"""The rank34c user pass at 1M, piece by piece: in-process CPU (user + sys) of each named statement over
recs_long.parquet, in the order given. python benchmarks/rank_join_pass.py DATA NAME [NAME ...]
under flock /tmp/ndcg-bench.lock (report: benchmarks/reports/2026-11-26-rank34c.md)."""
import duckdb, resource, sys
data = sys.argv[1]
con = duckdb.connect()
con.execute(open(__import__('os').path.join(__import__('os').path.dirname(__file__), '..', 'sql', 'ndcg.sql')).read())
con.execute(f"CREATE TEMP VIEW ndcg_recs AS SELECT user_id, item_id, rank FROM read_parquet('{data}/recs_long.parquet')")
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
D = 20
Q = {
 'checks_only': "SELECT count(*) FROM ndcg_rows_ranked('ndcg_recs')",
 'proto_pass': None,
 'beyond_distinct': f"SELECT count(*) FROM (SELECT DISTINCT user_id FROM ndcg_recs WHERE rank > {D})",
 'approx': "SELECT approx_count_distinct(user_id) FROM ndcg_recs",
 'count_users': "SELECT count(*) FROM (SELECT user_id, count(*) n FROM ndcg_recs GROUP BY user_id)",
 'n_m': f"SELECT count(*), sum(m) FROM (SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m FROM ndcg_recs GROUP BY user_id)",
 'n_m_big': f"SELECT count(*), sum(m), sum(p) FROM (SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m, sum(1::BIGINT << (CASE WHEN rank >= 1 AND rank <= {D} THEN rank::INTEGER - 1 ELSE 0 END)) FILTER (WHERE rank >= 1 AND rank <= {D} AND rank = round(rank)) p FROM ndcg_recs GROUP BY user_id)",
 'n_m_bitor': f"SELECT count(*), sum(m), sum(p) FROM (SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m, bit_or(1::BIGINT << (CASE WHEN rank >= 1 AND rank <= {D} THEN rank::INTEGER - 1 ELSE 0 END)) FILTER (WHERE rank >= 1 AND rank <= {D}) p FROM ndcg_recs GROUP BY user_id)",
 'n_m_huge': f"SELECT count(*), sum(m), sum(p) FROM (SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m, count(*) FILTER (WHERE rank >= 1 AND rank <= {D} AND rank = round(rank)) mi, sum(1::HUGEINT << (CASE WHEN rank >= 1 AND rank <= {D} THEN rank::INTEGER - 1 ELSE 0 END)) FILTER (WHERE rank >= 1 AND rank <= {D} AND rank = round(rank)) p FROM ndcg_recs GROUP BY user_id)",
 'n_m_checked': f"SELECT count(*), sum(m) FROM (SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m FROM ndcg_rows_ranked('ndcg_recs') GROUP BY user_id)",
 'table_n_m_big': f"CREATE OR REPLACE TEMP TABLE t AS SELECT user_id, count(*) n, count(*) FILTER (WHERE rank <= {D}) m, bit_or(1::BIGINT << (CASE WHEN rank >= 1 AND rank <= {D} THEN rank::INTEGER - 1 ELSE 0 END)) FILTER (WHERE rank >= 1 AND rank <= {D}) p FROM ndcg_recs GROUP BY user_id",
}
sys.path.insert(0, __import__('os').path.dirname(__file__))
import rank_join_prototypes as P
Q['proto_pass'] = P.user_pass("ndcg_rows_ranked('ndcg_recs')")
for name in sys.argv[2:]:
    s = cpu(); con.execute(Q[name]).fetchall(); print(name, round(cpu() - s, 2), flush=True)
