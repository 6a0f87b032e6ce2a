"""What `ndcg-duck split` costs (issue 33, point 1): a per-user holdout of a generated
interactions file against DuckDB's own read and write of the same file (COPY to one Parquet
file), in one process, each timed from start to end, in wall and in CPU seconds (user + sys of
the process, every thread).

    python benchmarks/split.py --users 100000 --per-user 50 --runs 3

The file (user_id, item_id, timestamp, rating; users with 1 to 2 x per-user interactions, so
every user but a few has a holdout) is made once under --data-dir.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from ndcg_duck.splitting.protocols import write

HERE = Path(__file__).resolve().parent


def make(path: Path, users: int, per_user: int) -> int:
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT u AS user_id, (hash(u, j) % 50000)::BIGINT AS item_id,
                         (880000000 + hash(j, u) % 10000000)::BIGINT AS timestamp,
                         (1 + hash(u, j, 1) % 5)::INTEGER AS rating
                  FROM (SELECT u, unnest(range((1 + hash(u) % (2 * {per_user}))::BIGINT)) AS j
                        FROM range({users}) a(u)))
                 TO '{path}' (FORMAT parquet)""")
    return con.sql(f"SELECT count(*) FROM '{path}'").fetchall()[0][0]


def cpu() -> float:
    """This process's CPU seconds so far (user + sys, every thread)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100000)
    parser.add_argument("--per-user", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-dir", default=str(HERE / "data"))
    parser.add_argument("--memory-limit", default=None,
                        help="DuckDB's memory_limit for every run (e.g. 4GB; each process of a "
                             "shared machine kept under 8 GB)")
    args = parser.parse_args()
    folder = Path(args.data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"interactions_u{args.users}_p{args.per_user}.parquet"
    if not source.exists():
        make(source, args.users, args.per_user)
    rows = duckdb.sql(f"SELECT count(*) FROM '{source}'").fetchall()[0][0]
    cpus = {}
    times = {"duckdb read + write": [], "ndcg-duck split --test-share 0.2 --short-users train": [],
             "ndcg-duck split --test-share 0.2 --by random --short-users train": []}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.runs):
            start, used = time.perf_counter(), cpu()
            con = duckdb.connect()
            if args.memory_limit:
                con.execute(f"SET memory_limit = '{args.memory_limit}'")
            con.execute(f"COPY (FROM '{source}') TO '{out}/copy.parquet' (FORMAT parquet)")
            con.close()
            times["duckdb read + write"].append(time.perf_counter() - start)
            cpus.setdefault("duckdb read + write", []).append(cpu() - used)
            for name, by in ((list(times)[1], "time"), (list(times)[2], "random")):
                start, used = time.perf_counter(), cpu()
                write(str(source), {"test_share": 0.2, "short_users": "train", "split_by": by,
                                     "memory_limit": args.memory_limit},
                      f"{out}/train.parquet", f"{out}/test.parquet")
                times[name].append(time.perf_counter() - start)
                cpus.setdefault(name, []).append(cpu() - used)
    base = statistics.median(times["duckdb read + write"])
    base_cpu = statistics.median(cpus["duckdb read + write"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"{rows:,} interactions, {args.users:,} users, {args.runs} runs, "
          f"peak RSS {peak:.1f} GB")
    print("| what | median s | min-max s | x read + write | median CPU s | x in CPU |\n"
          "|---|---:|---:|---:|---:|---:|")
    for name, seen in times.items():
        spent = statistics.median(cpus[name])
        print(f"| {name} | {statistics.median(seen):.2f} | {min(seen):.2f}-{max(seen):.2f} | "
              f"{statistics.median(seen) / base:.2f} | {spent:.2f} | {spent / base_cpu:.2f} |")


if __name__ == "__main__":
    main()
