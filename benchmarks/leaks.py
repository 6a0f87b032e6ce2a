"""What the checks of issue 33, point 3, and --per-item (point 5) cost: one eval of a generated run
by score (ties in it), in one process, as given, with per_item=True, with train=, with
train= and exclude_seen=True, and with the tied scores averaged (ties='average'); the runs
interleaved, each timed from start to end.

    python benchmarks/leaks.py --users 200000 --per-user 20 --runs 3

The files (recommendations user_id, item_id, score with scores rounded to 0.01, so each user has
ties; 3 relevant items per user; 6 train items per user, about 2 of them recommended) are made
once under --data-dir.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import duckdb

import ndcg_duck

HERE = Path(__file__).resolve().parent


def make(folder: Path, users: int, per_user: int) -> None:
    con = duckdb.connect()
    con.execute(f"COPY (SELECT u AS user_id, ((u * 7 + i * 13) % 50000)::BIGINT AS item_id, "
                f"round((hash(u, i) % 100) / 100, 2) AS score "
                f"FROM range({users}) a(u), range({per_user}) b(i)) TO '{folder}/recs.parquet'")
    con.execute(f"COPY (SELECT DISTINCT u AS user_id, (hash(u, i, 7) % 50000)::BIGINT AS "
                f"item_id, 1 AS relevance FROM range({users}) a(u), range(3) b(i)) "
                f"TO '{folder}/rels.parquet'")
    con.execute(f"COPY (SELECT u AS user_id, ((u * 7 + i * 13) % 50000)::BIGINT AS item_id "
                f"FROM range({users}) a(u), range(0, {3 * per_user}, 7) b(i)) "
                f"TO '{folder}/train.parquet'")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=200000)
    parser.add_argument("--per-user", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-dir", default=str(HERE / "data"))
    args = parser.parse_args()
    folder = Path(args.data_dir) / f"leaks_u{args.users}_p{args.per_user}"
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "train.parquet").exists():
        make(folder, args.users, args.per_user)
    recs, rels, train = (str(folder / name) for name in ("recs.parquet", "rels.parquet",
                                                         "train.parquet"))
    cases = {"as given": {}, "per_item=True": {"per_item": True},
             "train=": {"train": train}, "train=, exclude_seen=True": {"train": train,
                                                                      "exclude_seen": True},
             "ties='average'": {"ties": "average"}}
    times = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, extra in cases.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ndcg_duck.evaluate(recs, rels, 10, per_user=False, **extra)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["as given"])
    print("| what | median s | min-max s | x as given |\n|---|---:|---:|---:|")
    for name, found in times.items():
        median = statistics.median(found)
        print(f"| {name} | {median:.2f} | {min(found):.2f}-{max(found):.2f} | "
              f"{median / base:.2f} |")


if __name__ == "__main__":
    main()
