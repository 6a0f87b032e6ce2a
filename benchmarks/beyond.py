"""The beyond-accuracy metrics' cost (issue 22): whole `ndcg-duck eval` processes, round-robin.

    python benchmarks/beyond.py --data DIR --runs 3

DIR holds recs.parquet and rels.parquet from `benchmarks/generate.py --users 1000000 --catalog
1000000` (1M users x 100); this script adds, when missing, train.parquet (10M rows: user r // 10,
item floor(1e6 * u^3) for a seeded uniform u, so a few items are popular) and items.parquet (the
1M items, a category of 50 and a 64-number embedding of seeded uniforms). Cases:

- ndcg@10,20: `-m ndcg -k 10,20`, the baseline of the first target;
- beyond@10,20: `-m ndcg,coverage,gini,entropy,novelty,popularity,tail -k 10,20 --train --items`;
- train read: DuckDB reading train.parquet's two columns (sum of hashes), in its own process;
- ndcg@10 and ild@10: `-m ndcg -k 10` and `-m ndcg,ild -k 10 --items`, the second target.

Prints wall seconds, CPU seconds and peak RSS (medians), and the targets: beyond at most 1.5 x
ndcg + train read; ild at most 3 x ndcg@10. Wrap it in `flock /tmp/ndcg-bench.lock` on a shared
machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (benchmarks/run.py: run_once, loadavg)

MAIN = "import sys; from ndcg_duck.cli import main; sys.argv[0] = 'ndcg-duck'; main()"
BEYOND = "ndcg,coverage,gini,entropy,novelty,popularity,tail"


def write_inputs(data: Path) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute("SELECT setseed(0.42)")
    if not (data / "train.parquet").exists():
        con.execute(f"COPY (SELECT (r // 10)::BIGINT AS user_id, "
                    f"floor(1000000 * pow(random(), 3))::BIGINT AS item_id "
                    f"FROM range(10000000) t(r)) TO '{data / 'train.parquet'}' (FORMAT parquet)")
    if not (data / "items.parquet").exists():
        con.execute(f"COPY (SELECT i::BIGINT AS item_id, ['c' || (i % 50)] AS category, "
                    f"list_transform(range(64), lambda x: random()) AS embedding "
                    f"FROM range(1000000) t(i)) TO '{data / 'items.parquet'}' (FORMAT parquet)")


def cases(data: Path) -> dict:
    eval_ = [sys.executable, "-c", MAIN, "eval", str(data / "recs.parquet"),
             str(data / "rels.parquet"), "--quiet"]
    extra = ["--train", str(data / "train.parquet"), "--items", str(data / "items.parquet")]
    read = ("import duckdb; print(duckdb.sql(\"SELECT sum(hash(user_id, item_id)) FROM "
            f"'{data / 'train.parquet'}'\").fetchall())")
    return {"ndcg@10,20": eval_ + ["-m", "ndcg", "-k", "10,20"],
            "beyond@10,20": eval_ + ["-m", BEYOND, "-k", "10,20"] + extra,
            "train read": [sys.executable, "-c", read],
            "ndcg@10": eval_ + ["-m", "ndcg", "-k", "10"],
            "ild@10": eval_ + ["-m", "ndcg,ild", "-k", "10", "--items",
                               str(data / "items.parquet")]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args(argv)
    data = args.data.resolve()
    write_inputs(data)
    todo = cases(data)
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    got: dict = {}
    for i in range(args.runs):
        for name, cmd in todo.items():
            res = run.run_once(cmd, args.timeout, env)
            if not res["ok"]:
                raise SystemExit(f"{name} failed on run {i + 1}: {res.get('error')}")
            print(f"run {i + 1}/{args.runs} {name}: {res['wall']:.2f} s", file=sys.stderr,
                  flush=True)
            got.setdefault(name, []).append(res)

    def median(name, key):
        return statistics.median(r[key] for r in got[name])

    print("| case | wall s | CPU s | peak RSS MB |\n|---|---:|---:|---:|")
    for name in todo:
        print(f"| {name} | {median(name, 'wall'):.2f} | {median(name, 'cpu'):.1f} | "
              f"{median(name, 'rss_mb'):.0f} |")
    for key, unit in (("wall", "wall"), ("cpu", "CPU")):
        budget = 1.5 * median("ndcg@10,20", key) + median("train read", key)
        print(f"\n{unit}: beyond {median('beyond@10,20', key):.2f} against the target "
              f"1.5 x ndcg + train read = {budget:.2f} "
              f"({median('beyond@10,20', key) / median('ndcg@10,20', key):.2f} x ndcg); "
              f"ild {median('ild@10', key) / median('ndcg@10', key):.2f} x ndcg@10 (target 3)")
    loads = [r[k] for rs in got.values() for r in rs for k in ("load_before", "load_after")]
    print(f"\n1-minute load around the runs {min(loads):.1f}-{max(loads):.1f} on "
          f"{os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
