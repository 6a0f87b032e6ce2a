"""Quick look (not the issue-22 benchmark): beyond-accuracy shell macros vs ndcg_mean at k = 10 on
200k users x 20, a 100k-item catalogue with 4-dim embeddings and 1M train rows, all in memory.
Run from the repository root: flock /tmp/ndcg-bench.lock python benchmarks/beyond_quick.py"""
import duckdb, sys, time
sys.path.insert(0,'.')
import ndcg_duck
con=duckdb.connect(); ndcg_duck.register(con)
con.execute("""
create table recs as select 'u'||u as user_id, list('i'||((u*7919+j*104729)%100000) order by j) as items from range(200000) t(u), range(20) s(j) group by u;
create table rels as select 'u'||u as user_id, 'i'||((u*7919)%100000) as item_id, 1 as relevance from range(200000) t(u);
create table train as select 'v'||(r%50000) as user_id, 'i'||((r*31337)%100000) as item_id from range(1000000) t(r);
create table items as select 'i'||i as item_id, ['c'||(i%10)] as category, [sin(i), cos(i), sin(2*i), 1.0]::DOUBLE[] as embedding from range(100000) t(i);
""")
for q in ["create or replace table o as from ndcg_mean('recs','rels',k:=10)",
          "create or replace table o as from ndcg_metrics_beyond('recs','rels','train','items',k:=10)",
          "create or replace table o as from ndcg_metrics_beyond_ild('recs','rels','items',k:=10)"]:
    t=time.time(); con.execute(q); print(round(time.time()-t,2), q)
