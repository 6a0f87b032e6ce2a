"""Benchmark `ndcg-duck compare` of two runs against one `ndcg-duck eval` of one run.

    python benchmarks/compare.py --users 1000000 --runs 3

Uses the data of benchmarks/generate.py (seed --seed) and derives a second run for the same users
in DuckDB (recs_b.parquet next to recs.parquet): for even user ids the top item moves to rank 10,
for odd ones the item at rank 10 moves to the top, so every user's ranking changes and the two
runs differ both ways. Then, round-robin (run 1 of each command, run 2 of each, ...), each a
fresh process under /usr/bin/time -v (benchmarks/run.py's runner):

  eval           ndcg-duck eval RECS RELS -k 5,10,20 --format json
  compare_t      ndcg-duck compare RELS --run a=RECS --run b=RECS_B -k 5,10,20 --format json
  compare_rand   the same with --test randomization (10000 resamples), unless --no-resampling
  compare_boot   the same with --test bootstrap and -k 10 only (one test), unless --no-resampling

and writes benchmarks/results/compare_u{U}.md and .json, with each median as a ratio to eval's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402
import run as runner  # noqa: E402

SECOND_RUN = """
COPY (SELECT user_id,
             CASE WHEN user_id % 2 = 0 THEN list_concat(items[2:10], [items[1]], items[11:])
                  ELSE list_concat([items[10]], items[1:9], items[11:]) END AS items
      FROM read_parquet('{recs}') ORDER BY user_id)
TO '{out}' (FORMAT parquet, ROW_GROUP_SIZE 10000)
"""


def second_run(data: Path) -> Path:
    import duckdb

    out = data / "recs_b.parquet"
    if not out.exists():
        tmp = data / ".recs_b.parquet.tmp"
        duckdb.sql(SECOND_RUN.format(recs=data / "recs.parquet", out=tmp))
        tmp.replace(out)
    return out


def commands(recs: str, recs_b: str, rels: str, resampling: bool) -> dict:
    exe = runner.ndcg_duck_exe()
    compare = [exe, "compare", rels, "--run", f"a={recs}", "--run", f"b={recs_b}",
               "--format", "json"]
    tools = {"eval": [exe, "eval", recs, rels, "-k", "5,10,20", "--format", "json"],
             "compare_t": compare + ["-k", "5,10,20"]}
    if resampling:
        tools["compare_rand"] = compare + ["-k", "5,10,20", "--test", "randomization"]
        tools["compare_boot"] = compare + ["-k", "10", "--test", "bootstrap"]
    return tools


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=runner.parse_size, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--data-dir", type=Path, help="where data sets live (default benchmarks/data)")
    ap.add_argument("--no-resampling", action="store_true",
                    help="only eval and compare with the t-test")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--rev", default="HEAD", help="git revision to measure ('worktree': the work "
                                                  "tree), as in benchmarks/run.py")
    args = ap.parse_args(argv)
    code = runner.codever.activate(args.rev)
    data = (args.data_dir.resolve() / f"u{args.users}_s{args.seed}" if args.data_dir
            else generate.default_dir(args.users, args.seed))
    generate.generate(args.users, args.seed, data)
    recs, rels = data / "recs.parquet", data / "rels.parquet"
    recs_b = second_run(data)
    runner.warm([recs, rels, recs_b])
    tools = commands(str(recs), str(recs_b), str(rels), not args.no_resampling)
    raw = {name: [] for name in tools}
    for i in range(args.runs):
        for name, cmd in tools.items():
            if i > 0 and name in ("compare_rand", "compare_boot"):
                continue  # slow: once is enough to say how long they take
            result = runner.run_once(cmd, args.timeout)
            result.pop("stdout", None)
            raw[name].append(result)
            shown = (f"{result['wall']:.2f} s wall, {result.get('cpu') or 0:.1f} s CPU, load "
                     f"{result.get('load_before')}" if result["ok"] else result.get("error"))
            print(f"run {i + 1} {name}: {shown}", file=sys.stderr, flush=True)
    rows = []
    base = statistics.median(r["wall"] for r in raw["eval"] if r["ok"])
    base_cpu = statistics.median(r["cpu"] or 0 for r in raw["eval"] if r["ok"])
    for name, results in raw.items():
        ok = [r for r in results if r["ok"]]
        if not ok:
            rows.append(f"| {name} | failed | | | | | |")
            continue
        wall = statistics.median(r["wall"] for r in ok)
        cpu = statistics.median(r["cpu"] or 0 for r in ok)
        loads = [r[k] for r in ok for k in ("load_before", "load_after") if r.get(k) is not None]
        rows.append(f"| {name} | {len(ok)} | {wall:.2f} | {wall / base:.2f} | {cpu:.1f} | "
                    f"{cpu / base_cpu:.2f} | {max(r['rss_mb'] or 0 for r in ok):.0f} | "
                    f"{min(loads):.1f}-{max(loads):.1f} |")
    table = "\n".join([f"### compare at {args.users:,} users ({code})", "",
                       "| command | runs | median wall s | x eval | median CPU s | CPU x eval | "
                       "peak RSS MB | 1-min load |", "|---|---:|---:|---:|---:|---:|---:|---|"]
                      + rows) + "\n"
    results = Path(runner.RESULTS)
    results.mkdir(parents=True, exist_ok=True)
    (results / f"compare_u{args.users}.json").write_text(json.dumps(
        {"users": args.users, "commands": tools, "raw": raw}, indent=1) + "\n")
    (results / f"compare_u{args.users}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
