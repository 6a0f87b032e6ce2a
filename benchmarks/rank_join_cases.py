"""The rank34c prototype (rank_join_prototypes.py) against today's statement on the boundary cases of
tests/errors/test_bad_input.py at depth 2 (plus ranks from 0, a one-item list, one from 2): the
same rows and bits, or the same message. Prints SAME or DIFF per case and the exact users."""
import duckdb, sys
sys.path.insert(0, __import__('os').path.dirname(__file__))
import rank_join_prototypes as P
P.D = 2; P.KS = "[2]"
cases = ["a,1 b,1 x,3", "a,1 b,2 x,2", "a,1 b,2 x,3 y,3", "a,10 b,20 x,35 y,35", "b,2 a,3 x,4",
         "a,1 b,3 x,4", "a,3 b,4 x,5", "a,1.5 b,2.5 x,3", "a,1 b,3 x,3", "a,1 b,2 a,3",
         "a,1 b,2 x,3 a,4", "a,0 b,1 x,2", "a,1", "a,2"]
sql = open(__import__('os').path.join(__import__('os').path.dirname(__file__), '..', 'sql', 'ndcg.sql')).read()
def run(variant, rows):
    con = duckdb.connect(); con.execute(sql)
    con.execute("CREATE TABLE rels AS SELECT * FROM (VALUES ('u1','a',1),('u1','b',2),('u2','c',1)) t(user_id,item_id,relevance)")
    vals = ",".join(f"('u1','{r.split(',')[0]}',{r.split(',')[1]})" for r in rows.split())
    con.execute(f"CREATE TABLE recs AS SELECT user_id, item_id, rank::DOUBLE AS rank FROM (VALUES {vals},('u2','c',1),('u3','z',5),('u3','y',7)) t(user_id,item_id,rank)")
    con.execute("CREATE VIEW ndcg_recs_batch AS FROM recs"); con.execute("CREATE VIEW ndcg_rels_batch AS FROM rels")
    con.execute("CREATE VIEW ndcg_recs AS FROM recs")
    try:
        if variant == 'today':
            st = ("WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks('ndcg_recs_batch', depth := 2)), "
                  "ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels_batch', ideal_depth := 2)) "
                  "SELECT user_id, k, ndcg, has_judgments, has_ranking FROM ndcg_user_scores('ndcg_ranked_', 'ndcg_judgments_', ks := [2])")
        else:
            con.execute(P.user_pass("ndcg_rows_ranked('ndcg_recs')"))
            con.execute("CREATE VIEW ndcg_exact_rows_ AS FROM ndcg_recs_batch WHERE user_id IN (SELECT user_id FROM ndcg_exact_users)")
            st = "SELECT user_id, k, ndcg, has_judgments, has_ranking FROM (" + P.JOIN.replace("{D}", "2").replace("{KS}", "[2]").replace("{rows}", "SELECT user_id, item_id, rank FROM ndcg_recs_batch") + ")"
        out = sorted(con.sql(st).fetchall())
        exact = sorted(r[0] for r in con.sql("FROM ndcg_exact_users").fetchall()) if variant != 'today' else None
        return out, exact
    except duckdb.Error as e:
        return str(e).split('\n')[0][-60:], None
for c in cases:
    t, _ = run('today', c); j, exact = run('join', c)
    print(c.ljust(22), 'SAME' if t == j else f'DIFF today={t} join={j}', 'exact:', exact)
