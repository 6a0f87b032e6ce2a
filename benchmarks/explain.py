"""Where ndcg-duck's time goes: reproduce the queries evaluate() runs, time each one, and save
DuckDB's EXPLAIN ANALYZE of the main one.

    /work/venv20/bin/python benchmarks/explain.py --users 1000000 [--k 5,10,20] [--threads N]

Writes benchmarks/results/explain_u{U}.txt (timings plus the plans). The queries are built the
way ndcg_duck/evaluate.py builds them (same macros, same views, same SQL strings), so this
file has to follow that module if it changes; it checks the mean it gets against evaluate().
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb

import ndcg_duck
from ndcg_duck import inputs
from ndcg_duck.options import Options

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402


def queries(options: Options, layout: str = "lists") -> dict:
    """The SQL evaluate() runs, in order (see ndcg_duck/evaluate.py::_run)."""
    ranked = (f"ndcg_ranked_ AS (FROM {inputs.RANKED_MACROS[layout]}('ndcg_recs', "
              f"depth := {options.depth_sql()}))")
    return {
        "scores (CREATE TABLE ndcg_result)":
            f"CREATE OR REPLACE TEMP TABLE ndcg_result AS WITH {ranked} "
            f"SELECT * FROM ndcg_scores('ndcg_ranked_', 'ndcg_rels', {options.scores_args()})",
        "summary": "SELECT k, ndcg FROM ndcg_summary('ndcg_result')",
        "count users": "SELECT count(DISTINCT user_id) FROM ndcg_result",
        "coverage": f"WITH {ranked} SELECT users_unranked, users_unjudged "
                    f"FROM ndcg_coverage('ndcg_ranked_', 'ndcg_rels')",
    }


def hot_operators(con, sql: str, path: Path, top: int = 15) -> list:
    """Run sql with DuckDB's JSON profiler; return the `top` operators by own time as text lines."""
    con.execute("PRAGMA enable_profiling='json'")
    con.execute(f"PRAGMA profiling_output='{path}'")
    try:
        con.execute(sql).fetchall()
    finally:
        con.execute("PRAGMA disable_profiling")
    tree = json.loads(path.read_text())
    ops = []

    def walk(node, depth):
        name = (node.get("operator_name") or node.get("operator_type") or node.get("type")
                or node.get("name") or "?")
        info = node.get("extra_info") or {}
        detail = ""
        for key in ("Conditions", "Join Type", "Projections", "Aggregates", "Groups", "Function",
                    "CTE Name", "Expression", "Condition"):
            if key in info:
                val = info[key]
                val = " ".join(val) if isinstance(val, list) else str(val)
                detail += f" {key}: {val[:90]}"
        ops.append((node.get("operator_timing", node.get("timing", 0.0)),
                    node.get("operator_cardinality", node.get("intermediate_rows", 0)),
                    name.strip(), detail.strip()))
        for child in node.get("children", []):
            walk(child, depth + 1)

    roots = tree["operator"] if isinstance(tree.get("operator"), list) else [tree]
    for root in roots:
        walk(root, 0)
    q = tree.get("query") if isinstance(tree.get("query"), dict) else {}
    ops.sort(key=lambda o: -o[0])
    lines = [f"latency {q.get('latency', float('nan')):.2f} s, cpu {q.get('cpu_time', float('nan')):.2f} s, "
             f"sum of operator times {sum(o[0] for o in ops):.2f} s, peak buffer memory "
             f"{(tree.get('system') or {}).get('peak_buffer_memory', 0) / 2**20:.0f} MiB"]
    for t, rows, name, detail in ops[:top]:
        lines.append(f"{t:7.2f} s  {rows:>12,} rows  {name:22s} {detail}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--k", default="5,10,20")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions of each query")
    args = ap.parse_args(argv)
    data = generate.generate(args.users, args.seed, generate.default_dir(args.users, args.seed),
                             quiet=True)
    recs, rels = str(data / "recs.parquet"), str(data / "rels.parquet")
    config = {"threads": args.threads} if args.threads else {}
    con = duckdb.connect(config=config)
    options = Options(k=args.k)
    ndcg_duck.register(con)
    layout = inputs.load(con, recs, rels, inputs.Columns())
    qs = queries(options, layout)
    lines = [f"# evaluate() queries, {args.users:,} users, k={args.k}, duckdb {duckdb.__version__}, "
             f"threads={con.execute('SELECT current_setting(?)', ['threads']).fetchall()[0][0]}", ""]
    total = 0.0
    for name, sql in qs.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            con.execute(sql).fetchall()
            times.append(time.perf_counter() - t)
        best = sorted(times)[len(times) // 2]
        total += best
        lines.append(f"{name:36s} median {best:7.3f} s   ({', '.join(f'{x:.3f}' for x in times)})")
    lines.append(f"{'total':36s}        {total:7.3f} s")
    mine = dict(con.sql("SELECT k, ndcg FROM ndcg_summary('ndcg_result')").fetchall())
    api = ndcg_duck.evaluate(recs, rels, k=options.k, per_user=False).summary
    for k in options.k:
        assert abs(mine[k] - api[f"ndcg@{k}"]) < 1e-12, (k, mine[k], api)
    lines.append(f"(means match evaluate(): ndcg@10 = {api.get('ndcg@10')})")
    for name in ("scores (CREATE TABLE ndcg_result)", "coverage"):
        sql = qs[name]
        if sql.startswith("CREATE"):
            sql = sql.split(" AS ", 1)[1]  # EXPLAIN ANALYZE the SELECT itself
        hot = hot_operators(con, sql, HERE / "results" / f".profile_u{args.users}.json")
        lines += ["", f"## Hottest operators: {name}", ""] + hot
        print("\n".join(["", name] + hot))
        plan = con.execute("EXPLAIN ANALYZE " + sql).fetchall()
        lines += ["", f"## EXPLAIN ANALYZE: {name}", "", plan[0][1]]
    out = HERE / "results" / f"explain_u{args.users}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:len(qs) + 4]))
    print(f"plans written to {out}")


if __name__ == "__main__":
    main()
