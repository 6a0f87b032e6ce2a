"""Where ndcg-duck's time goes: run the real evaluate() on a connection that times and profiles
every statement it executes, then list the statements by time and the hottest operators.

    python benchmarks/explain.py --users 1000000 [--k 5,10,20 | --k all] [--metrics ndcg,mrr,map] [--rev HEAD]
    python benchmarks/explain.py --data DIR --shape rank      # long rows (benchmarks/long_inputs.py)
    python benchmarks/explain.py --data DIR --metrics ndcg,coverage,novelty --train T --items I

evaluate() is called as the benchmarks call it (per_user=False). Each statement runs with
DuckDB's JSON profiler on (the same information as EXPLAIN ANALYZE); this script prints and
writes to benchmarks/results/explain_u{U}.txt: the statements by wall time with their CPU time,
the hottest operators of each heavy statement, and its operator tree with rows and times.
Because it wraps the connection instead of copying SQL, it follows evaluate() as it changes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import codever  # noqa: E402
import generate  # noqa: E402

KEYS = ("Join Type", "Conditions", "Condition", "Aggregates", "Groups", "Projections",
        "Expression", "Function", "CTE Name", "Order By", "Top")


class Recorder:
    """Wraps a DuckDB connection: execute() and relations' fetch calls are timed and profiled."""

    def __init__(self, con, folder: Path):
        self._con, self._folder, self.log = con, folder, []

    def _profiled(self, sql, run):
        path = self._folder / f"stmt{len(self.log):03d}.json"
        self._con.execute("PRAGMA enable_profiling='json'")
        self._con.execute(f"PRAGMA profiling_output='{path}'")
        start = time.perf_counter()
        try:
            return run()
        finally:
            wall = time.perf_counter() - start
            self._con.execute("PRAGMA disable_profiling")
            self.log.append({"sql": " ".join(str(sql).split()), "wall": wall, "profile": path})

    def execute(self, sql, *args, **kwargs):
        # the rows are fetched inside the profiled run: the PRAGMA after it replaces the result
        rows = self._profiled(sql, lambda: self._con.execute(sql, *args, **kwargs).fetchall())
        return _Fetched(self, rows)

    def sql(self, sql, *args, **kwargs):
        rel = self._con.sql(sql, *args, **kwargs)
        return _Relation(self, sql, rel)

    def cursor(self):
        """evaluate() runs in a cursor of the connection it is given: record that one too."""
        child = Recorder(self._con.cursor(), self._folder)
        child.log = self.log
        return child

    def __getattr__(self, name):
        return getattr(self._con, name)


class _Fetched:
    """What Recorder.execute returns: the statement's rows, fetched as it ran."""

    def __init__(self, rec, rows):
        self._rec, self._rows = rec, rows

    def fetchall(self):
        return self._rows

    def fetchone(self):
        return self._rows[0] if self._rows else None

    def __getattr__(self, name):
        return getattr(self._rec, name)


class _Relation:
    def __init__(self, rec, sql, rel):
        self._rec, self._sql, self._rel = rec, sql, rel

    def fetchall(self):
        return self._rec._profiled(self._sql, self._rel.fetchall)

    def to_arrow_table(self, *a, **kw):
        return self._rec._profiled(self._sql, lambda: self._rel.to_arrow_table(*a, **kw))

    def __getattr__(self, name):
        return getattr(self._rel, name)


def load_profile(path: Path):
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None


def operators(tree) -> list:
    """Flatten a JSON profile: [(depth, name, rows, seconds, detail)] in tree order."""
    out = []

    def walk(node, depth):
        name = node.get("operator_name") or node.get("operator_type") or node.get("type") or "?"
        info = node.get("extra_info") or {}
        detail = []
        for key in KEYS:
            if key in info:
                val = info[key]
                val = ", ".join(val) if isinstance(val, list) else str(val)
                detail.append(f"{key}: {' '.join(val.split())[:110]}")
        out.append((depth, name.strip(), node.get("operator_cardinality", node.get("intermediate_rows", 0)),
                    node.get("operator_timing", node.get("timing", 0.0)), "; ".join(detail)))
        for child in node.get("children", []):
            walk(child, depth + 1)

    roots = tree["operator"] if isinstance(tree.get("operator"), list) else tree.get("children", [])
    for root in roots:
        walk(root, 0)
    return out


def cpu_time(tree) -> float:
    q = tree.get("query")
    if isinstance(q, dict) and "cpu_time" in q:
        return q["cpu_time"]
    return tree.get("cpu_time", float("nan"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--k", default="5,10,20", help="cutoffs, as eval's -k takes them ('all' too)")
    ap.add_argument("--metrics", default="ndcg", help="as eval's -m (e.g. ndcg,mrr,map)")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--rev", default="HEAD", help="git revision to measure, or 'worktree'")
    ap.add_argument("--data-dir", type=Path, help="where data sets live (default benchmarks/data)")
    ap.add_argument("--data", type=Path, help="a data set's folder (instead of --users/--data-dir)")
    ap.add_argument("--shape", default="nested", choices=["nested", "rank", "score"],
                    help="the recommendations' layout, as benchmarks/long_inputs.py names them")
    ap.add_argument("--ties", default="trec", choices=["trec", "average"],
                    help="how tied scores rank (--shape score), as eval's --ties")
    ap.add_argument("--top", type=int, default=12, help="hottest operators listed per statement")
    ap.add_argument("--train", type=Path, help="a train file, as eval's --train (beyond metrics)")
    ap.add_argument("--items", type=Path, help="a catalogue file, as eval's --items")
    args = ap.parse_args(argv)
    code = codever.activate(args.rev)
    import duckdb
    import ndcg_duck

    if args.data:
        data = args.data.resolve()
    else:
        data = (args.data_dir.resolve() / f"u{args.users}_s{args.seed}" if args.data_dir
                else generate.default_dir(args.users, args.seed))
        data = generate.generate(args.users, args.seed, data, quiet=True)
    layout = {"nested": ("recs.parquet", {}), "rank": ("recs_long.parquet", {"rank_col": "rank"}),
              "score": ("recs_score.parquet", {"score_col": "score", "ties": args.ties})}[args.shape]
    layout[1].update({name: str(getattr(args, name).resolve()) for name in ("train", "items")
                      if getattr(args, name)})
    recs, rels = str(data / layout[0]), str(data / "rels.parquet")
    ks = [k if k == "all" else int(k) for k in args.k.split(",")]
    folder = HERE / "results" / f".profiles_u{args.users}"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()

    # Unprofiled first, for the plain time; then the recorded run.
    start = time.perf_counter()
    plain = ndcg_duck.evaluate(recs, rels, k=ks, metrics=args.metrics, per_user=False, **layout[1],
                               con=duckdb.connect(config={"threads": args.threads} if args.threads else {}))
    plain_wall = time.perf_counter() - start
    con = duckdb.connect(config={"threads": args.threads} if args.threads else {})
    rec = Recorder(con, folder)
    start = time.perf_counter()
    summary = ndcg_duck.evaluate(recs, rels, k=ks, metrics=args.metrics, per_user=False,
                                 **layout[1], con=rec).summary
    wall = time.perf_counter() - start
    assert all(abs(summary[m] - plain.summary[m]) < 1e-12 for m in summary
               if summary[m] is not None), (summary, plain.summary)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]

    lines = [f"# evaluate({args.shape}, {args.users:,} users, k={ks}, metrics={args.metrics}, per_user=False): "
             f"ndcg-duck {code}",
             f"# duckdb {duckdb.__version__}, {threads} threads; ndcg@10 = {summary.get('ndcg@10')}",
             "",
             f"evaluate() in process: {plain_wall:.2f} s without profiling, {wall:.2f} s profiled; "
             f"{len(rec.log)} statements, these took >= 1% of the time:", "",
             "| wall s | CPU s | statement |", "|---:|---:|---|"]
    heavy = []
    for entry in sorted(rec.log, key=lambda e: -e["wall"]):
        if entry["wall"] < 0.01 * wall:
            continue
        tree = load_profile(entry["profile"])
        cpu = cpu_time(tree) if tree else float("nan")
        lines.append(f"| {entry['wall']:.2f} | {cpu:.2f} | `{entry['sql'][:150]}` |")
        if tree and entry["wall"] >= 0.05 * wall:
            heavy.append((entry, tree))
    for entry, tree in heavy:
        ops = operators(tree)
        lines += ["", f"## {entry['wall']:.2f} s: `{entry['sql'][:200]}`", "",
                  f"Hottest operators (seconds summed over threads; CPU {cpu_time(tree):.2f} s):", "",
                  "| s | rows | operator | detail |", "|---:|---:|---|---|"]
        for depth, name, rows, secs, detail in sorted(ops, key=lambda o: -o[3])[:args.top]:
            lines.append(f"| {secs:.2f} | {rows:,} | {name} | {detail.replace('|', '/')} |")
        lines += ["", "Operator tree (rows, seconds):", "", "```"]
        for depth, name, rows, secs, detail in ops:
            lines.append(f"{'  ' * depth}{name}  {rows:,} rows  {secs:.2f} s  {detail[:160]}")
        lines.append("```")
    out = HERE / "results" / f"explain_u{args.users}_{args.shape}.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwritten to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
