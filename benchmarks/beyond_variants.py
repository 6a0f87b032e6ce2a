"""Process CPU of alternative forms of one statement of an `evaluate()` of the six non-ILD beyond
metrics, on that run's own intermediate tables.

    python benchmarks/beyond_variants.py DIR AFTER VARIANTS.sql [--rounds 2] [--compare TABLE]

DIR as benchmarks/beyond.py's (recs, rels, train, items .parquet). Right after the run executes
its first statement containing the text AFTER (e.g. 'ndcg_beyond_pop_users AS'), each variant of
VARIANTS.sql (blocks, each under a line `-- name: NAME`, a query) is made into a temporary
table, round after round, and its CPU seconds (user + sys of the process, every thread) and wall
seconds printed; with --compare, the rows it differs from TABLE by (EXCEPT ALL both ways; not
timed). The run then goes on. Used in benchmarks/reports/2026-11-26-beyondusr.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ndcg_duck.evaluation import evaluate as ev  # noqa: E402
from beyond_statements import BEYOND, cpu, wrap_cursors  # noqa: E402


def variants(path: Path) -> dict:
    """{name: query} from the blocks of `path`."""
    parts = re.split(r"^-- name: *(\S+) *$", path.read_text(), flags=re.M)
    return {name: query.strip().rstrip(";") for name, query in zip(parts[1::2], parts[2::2])}


def trial(con, queries: dict, rounds: int, compare: str | None) -> None:
    for number in range(rounds):
        for name, query in queries.items():
            con.execute("DROP TABLE IF EXISTS ndcg_variant_")
            c0, w0 = cpu(), time.time()
            con.execute(f"CREATE TEMP TABLE ndcg_variant_ AS {query}")
            line = f"{number} {name:20s} {cpu() - c0:6.2f} {time.time() - w0:6.2f}"
            if compare:
                try:
                    (more, fewer), = con.sql(
                        f"SELECT (SELECT count(*) FROM (FROM ndcg_variant_ EXCEPT ALL FROM "
                        f"{compare})), (SELECT count(*) FROM (FROM {compare} EXCEPT ALL FROM "
                        f"ndcg_variant_))").fetchall()
                    line += f"  rows not in {compare}: {more}, missing: {fewer}"
                except duckdb.Error:  # another shape (columns)
                    line += f"  not comparable with {compare}"
            print(line, flush=True)
    con.execute("DROP TABLE IF EXISTS ndcg_variant_")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path)
    ap.add_argument("after")
    ap.add_argument("variants", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--compare")
    ap.add_argument("--k", default="10,20")
    args = ap.parse_args()
    queries, done = variants(args.variants), []

    class Cur:
        def __init__(self, cur):
            self._cur = cur

        def execute(self, text, *a, **k):
            out = self._cur.execute(text, *a, **k)
            if args.after in str(text) and not done:
                done.append(True)
                trial(self._cur, queries, args.rounds, args.compare)
            return out

        def __getattr__(self, name):
            return getattr(self._cur, name)

    wrap_cursors(Cur)
    d = args.data
    ev.evaluate(str(d / "recs.parquet"), str(d / "rels.parquet"),
                [int(x) for x in args.k.split(",")], metrics=BEYOND.split(","), per_user=False,
                train=str(d / "train.parquet"), items=str(d / "items.parquet"))
    if not done:
        sys.exit(f"no statement contained {args.after!r}")


if __name__ == "__main__":
    main()
