"""Whole-process timings of the long recommendation layouts (issue 20): `ndcg-duck eval` on the
same users written nested, long by rank and long by score, for one or more checkouts of the code.

    python benchmarks/long_inputs.py --data DIR --code after=. --code before=/tmp/old --runs 3

DIR holds recs.parquet, recs_long.parquet and rels.parquet from benchmarks/generate.py, and
recs_score.parquet: recs_long.parquet with a score column added (score strictly decreasing with
the rank; written by this script when missing). Each --code NAME=PATH is a checkout whose
ndcg_duck package is imported (the process runs in PATH, as `python -c` puts the working
directory first on sys.path). Runs go round-robin (run 1 of every case, then run
2, ...), each a fresh process timed by the wall clock; the table gives the median and checks
that every case prints the same means. Wrap it in `flock /tmp/ndcg-bench.lock` on a shared
machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MAIN = "import sys; from ndcg_duck.cli import main; sys.argv[0] = 'ndcg-duck'; main()"

SHAPES = {
    "nested": ("recs.parquet", []),
    "long by rank": ("recs_long.parquet", ["--rank-col", "rank"]),
    "long by score": ("recs_score.parquet", ["--score-col", "score"]),
}


def write_scores(data: Path) -> None:
    import duckdb
    target = data / "recs_score.parquet"
    if target.exists():
        return
    duckdb.sql(f"COPY (SELECT user_id, item_id, rank, (1000 - rank) / 1000.0 AS score "
               f"FROM '{data / 'recs_long.parquet'}') TO '{target}' "
               f"(FORMAT parquet, ROW_GROUP_SIZE 1000000)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--code", action="append", required=True, help="NAME=PATH of a checkout")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-k", default="5,10,20")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    args = ap.parse_args(argv)
    args.data = args.data.resolve()
    write_scores(args.data)
    cases = [(name, path, shape) for name, path in (c.split("=", 1) for c in args.code)
             for shape in args.shapes.split(",")]
    times: dict = {case[:1] + case[2:]: [] for case in cases}
    outputs: dict = {}
    for _ in range(args.runs):
        for name, path, shape in cases:
            recs, flags = SHAPES[shape]
            env = dict(os.environ, PYTHONPATH=str(Path(path).resolve()))  # and cwd, below
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", MAIN, "eval", str(args.data / recs),
                                  str(args.data / "rels.parquet"), "-k", args.k, *flags],
                                 env=env, cwd=Path(path).resolve(), capture_output=True,
                                 text=True, check=True).stdout
            times[(name, shape)].append(time.perf_counter() - start)
            outputs[(name, shape)] = out
    assert len(set(outputs.values())) == 1, outputs
    print(f"| code | shape | median of {args.runs} (s) | runs (s) |")
    print("|---|---|---|---|")
    for (name, shape), runs in times.items():
        print(f"| {name} | {shape} | {statistics.median(runs):.2f} | "
              f"{', '.join(f'{r:.2f}' for r in runs)} |")
    print(next(iter(outputs.values())))


if __name__ == "__main__":
    main()
