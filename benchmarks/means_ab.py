"""A/B of exact_means alone (benchmarks/reports/2026-11-26-means31k.md), in one process on the
same ndcg_result: main's means.py (loaded from its snapshot as ndcg_duck.means_main) against
this branch's, alternated, CPU seconds of the process (DuckDB's threads included) around each
call; the results compared with ==.

    python benchmarks/means_ab.py DATA_DIR MAIN_MEANS_PY [ROUNDS]

DATA_DIR holds recs.parquet and rels.parquet; MAIN_MEANS_PY is main's ndcg_duck/means.py (e.g.
from benchmarks/codever.py's snapshot, benchmarks/data/code/<sha>/ndcg_duck/means.py); eval runs
with -m all_trec -k all."""
import importlib.util, json, resource, sys, time
import ndcg_duck
from ndcg_duck import sqltext
from ndcg_duck import metrics as metric_names
from ndcg_duck.evaluation import evaluate as ev

spec = importlib.util.spec_from_file_location("ndcg_duck.means_main", sys.argv[2])
old = importlib.util.module_from_spec(spec); spec.loader.exec_module(old)
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
timed = {"main": [], "branch": []}
new_exact = ev._exact_means


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def both(con, measures, first=None):
    averaged = dict.fromkeys(m.metric for m in measures if not metric_names.counts(m.metric))
    columns = {m: sqltext.ident(m) for m in averaged}
    for _ in range(rounds):
        c, w = cpu(), time.perf_counter()
        a = old.exact_means(con, "ndcg_result", columns, groups=("k",))
        timed["main"].append((cpu() - c, time.perf_counter() - w))
        c, w = cpu(), time.perf_counter()
        b = new_exact(con, measures, first)
        timed["branch"].append((cpu() - c, time.perf_counter() - w))
        assert a == b and len(a) > 0, "means differ"
    return b


ev._exact_means = both
d = sys.argv[1]
ndcg_duck.evaluate(f"{d}/recs.parquet", f"{d}/rels.parquet", metrics="all_trec", k="all",
                   per_user=False)
print(json.dumps({k: [[round(c, 2), round(w, 2)] for c, w in v] for k, v in timed.items()}))
