"""Seeded generator of synthetic NDCG evaluation data, written in chunks (never all in memory).

For U users it writes, into --out (default benchmarks/data/u{U}_s{seed}/):

  recs.parquet       user_id BIGINT, items LIST<BIGINT>: 100 distinct item ids per user, rank order
  recs_long.parquet  user_id BIGINT, item_id BIGINT, rank INTEGER (1-based): the same rankings
  rels.parquet       user_id BIGINT, item_id BIGINT, relevance INTEGER: 1..30 judged items per user,
                     graded 1..5; each judged item is, with probability --hit-rate (0.3), one of the
                     user's recommended items (at a uniformly random rank), otherwise an item that
                     is not in the user's recommendations.

With --trec it also writes the same data as TREC text files (write_trec):

  run.trec           `user Q0 item rank score bench`, score = (1000 - rank) / 1000 (strictly
                     decreasing with the rank, so trec_eval's tie rule never applies)
  qrels.trec         `user 0 item relevance`

Every user has both recommendations and judgments, so tools that skip users without
recommendations (pytrec_eval, ranx) average over the same users as those that score them 0.
User ids are 0..U-1 in file order; item ids are drawn from a catalogue of --catalog items.

Determinism: users are generated in fixed blocks of BLOCK users, block b from
numpy.random.default_rng([seed, b]); the same seed gives byte-identical data for the same U, and
the first U users of a larger run are the same users as in a smaller one.

    python benchmarks/generate.py --users 1000000 --seed 42
    python benchmarks/generate.py --users 100000 --seed 42 --trec
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BLOCK = 10_000        # users per generator block (and per row group of recs.parquet)
LIST_LEN = 100        # ranked items per user
MAX_JUDGED = 30       # judged items per user: uniform on 1..MAX_JUDGED
LONG_ROW_GROUP = 1_000_000

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

RECS_SCHEMA = pa.schema([("user_id", pa.int64()), ("items", pa.list_(pa.int64()))])
LONG_SCHEMA = pa.schema([("user_id", pa.int64()), ("item_id", pa.int64()), ("rank", pa.int32())])
RELS_SCHEMA = pa.schema([("user_id", pa.int64()), ("item_id", pa.int64()),
                         ("relevance", pa.int32())])


def distinct_sorted(rng, rows: int, per_row: int, high: int) -> np.ndarray:
    """rows x per_row matrix; each row strictly increasing, values in [0, high)."""
    draw = rng.integers(0, high - per_row + 1, size=(rows, per_row), dtype=np.int64)
    draw.sort(axis=1)
    draw += np.arange(per_row, dtype=np.int64)
    return draw


def block(seed: int, b: int, first_user: int, n: int, catalog: int, hit_rate: float):
    """Generate users first_user .. first_user+n-1. Returns (users, items[n,100], rels columns)."""
    rng = np.random.default_rng([seed, b])
    users = np.arange(first_user, first_user + n, dtype=np.int64)

    # 100 distinct items per user: a sorted distinct set, then shuffled into rank order.
    chosen = distinct_sorted(rng, n, LIST_LEN, catalog)               # sorted per row
    ranked = rng.permuted(chosen, axis=1)                              # rank order

    n_judged = rng.integers(1, MAX_JUDGED + 1, size=n)
    n_hit = rng.binomial(n_judged, hit_rate)
    n_miss = n_judged - n_hit

    # Judged recommended items: n_hit distinct random ranks of the user's list.
    pos = np.argsort(rng.random((n, LIST_LEN)), axis=1)[:, :MAX_JUDGED]
    hit_mask = np.arange(MAX_JUDGED) < n_hit[:, None]
    hit_items = np.take_along_axis(ranked, pos, axis=1)[hit_mask]
    hit_users = np.repeat(users, n_hit)

    # Judged items not recommended: the v-th item of the complement of the user's set, for
    # MAX_JUDGED distinct v per user (shuffled, first n_miss kept). The complement index v maps
    # to item v + #{j : chosen[j] - j <= v}, found with one global searchsorted.
    comp = rng.permuted(distinct_sorted(rng, n, MAX_JUDGED, catalog - LIST_LEN), axis=1)
    miss_mask = np.arange(MAX_JUDGED) < n_miss[:, None]
    v = comp[miss_mask]
    row = np.repeat(np.arange(n, dtype=np.int64), n_miss)
    gaps = (chosen - np.arange(LIST_LEN, dtype=np.int64)).ravel() + \
        np.repeat(np.arange(n, dtype=np.int64) * catalog, LIST_LEN)
    below = np.searchsorted(gaps, row * catalog + v, side="right") - row * LIST_LEN
    miss_items = v + below
    miss_users = users[row]

    # Per user: hits then misses, then shuffled within the user (stable order by a random key).
    rel_users = np.concatenate([hit_users, miss_users])
    rel_items = np.concatenate([hit_items, miss_items])
    order = np.lexsort((rng.random(rel_users.size), rel_users))
    rel_users, rel_items = rel_users[order], rel_items[order]
    relevance = rng.integers(1, 6, size=rel_users.size, dtype=np.int32)
    return users, ranked, (rel_users, rel_items, relevance)


def generate(users: int, seed: int, out: Path, catalog: int = 1_000_000, hit_rate: float = 0.3,
             check: bool = False, quiet: bool = False) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    done = out / "meta.json"
    meta = {"users": users, "seed": seed, "catalog": catalog, "hit_rate": hit_rate,
            "list_len": LIST_LEN, "max_judged": MAX_JUDGED, "block": BLOCK, "version": 1}
    if done.exists() and json.loads(done.read_text()).get("params") == meta:
        if not quiet:
            print(f"{out}: already generated", file=sys.stderr)
        return out
    if done.exists():
        done.unlink()
    start = time.perf_counter()
    tmp = {name: out / f".{name}.tmp" for name in ("recs", "recs_long", "rels")}
    writers = {
        "recs": pq.ParquetWriter(tmp["recs"], RECS_SCHEMA),
        "recs_long": pq.ParquetWriter(tmp["recs_long"], LONG_SCHEMA),
        "rels": pq.ParquetWriter(tmp["rels"], RELS_SCHEMA),
    }
    long_buf: list = []
    long_rows = 0
    judged = 0
    try:
        for b, first in enumerate(range(0, users, BLOCK)):
            n = min(BLOCK, users - first)
            ids, ranked, (ru, ri, rv) = block(seed, b, first, n, catalog, hit_rate)
            if check:
                _check(ranked, ru, ri, ids, first)
            offsets = pa.array(np.arange(0, n * LIST_LEN + 1, LIST_LEN, dtype=np.int32))
            items = pa.ListArray.from_arrays(offsets, pa.array(ranked.ravel()))
            writers["recs"].write_table(pa.table([pa.array(ids), items], schema=RECS_SCHEMA))
            long_buf.append(pa.table([pa.array(np.repeat(ids, LIST_LEN)), pa.array(ranked.ravel()),
                                      pa.array(np.tile(np.arange(1, LIST_LEN + 1, dtype=np.int32), n))],
                                     schema=LONG_SCHEMA))
            long_rows += n * LIST_LEN
            if long_rows >= LONG_ROW_GROUP:
                writers["recs_long"].write_table(pa.concat_tables(long_buf),
                                                 row_group_size=LONG_ROW_GROUP)
                long_buf, long_rows = [], 0
            writers["rels"].write_table(pa.table([pa.array(ru), pa.array(ri), pa.array(rv)],
                                                 schema=RELS_SCHEMA))
            judged += ru.size
            if not quiet and b % 100 == 99:
                print(f"  {first + n:,} users, {time.perf_counter() - start:.0f} s", file=sys.stderr)
        if long_buf:
            writers["recs_long"].write_table(pa.concat_tables(long_buf), row_group_size=LONG_ROW_GROUP)
    finally:
        for w in writers.values():
            w.close()
    for name, path in tmp.items():
        os.replace(path, out / f"{name}.parquet")
    seconds = time.perf_counter() - start
    done.write_text(json.dumps({"params": meta, "judged_rows": judged, "seconds": round(seconds, 1)},
                               indent=1) + "\n")
    if not quiet:
        print(f"{out}: {users:,} users, {users * LIST_LEN:,} ranked entries, {judged:,} judged "
              f"rows in {seconds:.1f} s", file=sys.stderr)
    return out


def write_trec(out: Path) -> tuple:
    """Write out/run.trec and out/qrels.trec from out's recs_long.parquet and rels.parquet (see
    the module docstring), unless both exist. Returns their paths (run, qrels)."""
    import duckdb
    run, qrels = out / "run.trec", out / "qrels.trec"
    if run.exists() and qrels.exists():
        return run, qrels
    con = duckdb.connect()
    text = "(FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')"
    for target, query in (
            (run, f"SELECT user_id, 'Q0', item_id, rank, (1000 - rank) / 1000.0, 'bench' "
                  f"FROM read_parquet('{out / 'recs_long.parquet'}')"),
            (qrels, f"SELECT user_id, 0, item_id, relevance "
                    f"FROM read_parquet('{out / 'rels.parquet'}')")):
        tmp = target.with_name(f".{target.name}.tmp")
        con.execute(f"COPY ({query}) TO '{tmp}' {text}")
        os.replace(tmp, target)
    return run, qrels


def _check(ranked, ru, ri, ids, first):
    """Slow self-check of one block: distinct rankings, distinct judgments, hit rate sane."""
    for row in range(ranked.shape[0]):
        assert len(set(ranked[row])) == LIST_LEN
    rec = {(int(ids[r]), int(i)) for r in range(ranked.shape[0]) for i in ranked[r]}
    pairs = list(zip(ru.tolist(), ri.tolist()))
    assert len(set(pairs)) == len(pairs), "duplicate judgment"
    users = set(ru.tolist())
    assert users == set(ids.tolist()), "a user without judgments"
    hits = sum(p in rec for p in pairs)
    assert 0.2 < hits / len(pairs) < 0.4, hits / len(pairs)


def default_dir(users: int, seed: int) -> Path:
    return DATA / f"u{users}_s{seed}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, required=True)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--catalog", type=int, default=1_000_000, help="item ids are 0..catalog-1")
    ap.add_argument("--hit-rate", type=float, default=0.3,
                    help="share of judged items drawn from the user's recommendations")
    ap.add_argument("--out", type=Path, help="output directory (default benchmarks/data/u{U}_s{seed})")
    ap.add_argument("--check", action="store_true", help="slow per-block self-checks")
    ap.add_argument("--trec", action="store_true", help="also write run.trec and qrels.trec")
    args = ap.parse_args(argv)
    if args.catalog < LIST_LEN + MAX_JUDGED:
        ap.error("--catalog is too small")
    out = generate(args.users, args.seed, args.out or default_dir(args.users, args.seed),
                   args.catalog, args.hit_rate, args.check)
    if args.trec:
        write_trec(out)


if __name__ == "__main__":
    main()
