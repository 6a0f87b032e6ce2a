"""What the several-files check costs (issue 13 point 4): recommendations read from a directory
of part files must keep each user's rows in one file, which takes one grouping of the user ids
by file. This times that check alone against a whole evaluate() of the same directory (which
includes it), in CPU seconds of this process (user + system, all threads) and wall seconds.

    python benchmarks/parts_check.py --users 1000000 --parts 4

The part files are made once from the generated recs.parquet (users split by a hash of their id)
under --work (default benchmarks/data/parts_u<users>_p<parts>/).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import duckdb

import ndcg_duck
from ndcg_duck.evaluation import inputs

HERE = Path(__file__).resolve().parent


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn) -> tuple:
    start_cpu, start = cpu(), time.perf_counter()
    fn()
    return cpu() - start_cpu, time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(HERE / "data"))
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work")
    args = ap.parse_args(argv)
    data = Path(args.data_dir) / f"u{args.users}_s{args.seed}"
    parts = Path(args.work or HERE / "data" / f"parts_u{args.users}_p{args.parts}")
    if not parts.exists():
        parts.mkdir(parents=True)
        con = duckdb.connect()
        for i in range(args.parts):
            con.execute(f"COPY (FROM '{data / 'recs.parquet'}' WHERE hash(user_id) % {args.parts} "
                        f"= {i}) TO '{parts / f'part-{i}.parquet'}' (FORMAT parquet)")
    rels = str(data / "rels.parquet")

    def check_only():
        con = duckdb.connect()
        ndcg_duck.register(con)
        source = inputs.attach_source(con, str(parts), "ndcg_recs_src", None, "recommendations")
        inputs._one_file_per_user(con, source, inputs.Columns())

    def whole():
        ndcg_duck.evaluate(str(parts), rels, k=[5, 10, 20], per_user=False)

    print(f"{args.users:,} users in {args.parts} part files; load average {os.getloadavg()}")
    for rep in range(args.repeat):  # interleaved pairs
        check, total = timed(check_only), timed(whole)
        print(f"run {rep + 1}: check {check[0]:.2f} CPU s ({check[1]:.2f} s wall); whole "
              f"evaluate, check included, {total[0]:.2f} CPU s ({total[1]:.2f} s wall); "
              f"check/whole {check[0] / total[0]:.1%} of CPU", flush=True)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
