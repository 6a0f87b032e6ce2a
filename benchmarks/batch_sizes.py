"""Batch sizes in process: evaluate() on one data set with several batch_users settings, round
robin, median wall seconds of each.

    python benchmarks/batch_sizes.py --users 1000000 --sizes none,250000,500000 [--unique] [--runs 3]

'none' is the default (batches sized from the memory limit: one batch below about 6M users on a
24 GiB machine). Data: benchmarks/data/u{U}_s42 (made by generate.py or run.py).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import ndcg_duck

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--sizes", default="none,250000,500000")
    ap.add_argument("--unique", action="store_true", help="with unique_judgments=True")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    folder = DATA / f"u{args.users}_s42"
    sizes = [None if s == "none" else int(s) for s in args.sizes.split(",")]
    times = {size: [] for size in sizes}
    for _ in range(args.runs):
        for size in sizes:
            start = time.perf_counter()
            ndcg_duck.evaluate(str(folder / "recs.parquet"), str(folder / "rels.parquet"),
                               k=[5, 10, 20], per_user=False, unique_judgments=args.unique,
                               batch_users=size)
            times[size].append(time.perf_counter() - start)
    for size, runs in times.items():
        print(f"batch_users={size}: median {statistics.median(runs):.2f} s "
              f"(runs {', '.join(f'{t:.2f}' for t in runs)})")


if __name__ == "__main__":
    main()
