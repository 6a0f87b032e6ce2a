"""The beyond-accuracy metrics' cost (issue 22): whole `ndcg-duck eval` processes, round-robin.

    python benchmarks/beyond.py --data DIR --runs 3

DIR holds recs.parquet and rels.parquet from `benchmarks/generate.py --users 1000000 --catalog
1000000` (1M users x 100); this script adds, when missing, train.parquet (10M rows: user r // 10,
item floor(1e6 * u^3) for a seeded uniform u, so a few items are popular) and items.parquet (the
1M items, a category of 50 and a 64-number embedding of seeded uniforms). Cases:

- ndcg@10,20: `-m ndcg -k 10,20`, the baseline of the first target;
- beyond@10,20: `-m ndcg,coverage,gini,entropy,novelty,popularity,tail -k 10,20 --train --items`;
- train read: DuckDB reading train.parquet's two columns (sum of hashes), in its own process;
- ndcg@10 and ild@10: `-m ndcg -k 10` and `-m ndcg,ild -k 10 --items`, the second target;
- hand six: the six's twelve means (@10, @20) as a user would write them in DuckDB SQL without
  ndcg-duck (HAND_SIX: the definitions of sql/ndcg_beyond.sql's header with their defaults, no
  check, no NDCG), in its own process; its means must equal beyond@10,20's (1e-9).

Prints wall seconds, CPU seconds and peak RSS (medians), and the targets: beyond at most 1.5 x
ndcg + train read; ild at most 3 x ndcg@10; and what the six add to NDCG (beyond - ndcg) beside
what the hand-written six cost alone. Wrap it in `flock /tmp/ndcg-bench.lock` on a shared
machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (benchmarks/run.py: round_robin, median_of, medians_table)

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


# The six's means in DuckDB SQL as a user would write them: each evaluated user's (judged, with a
# ranking) first 20 items once as rows, each item's exposure at 10 and 20, the run's coverage,
# entropy and Gini from the exposures, each item's novelty, popularity and tail from train's
# distinct users and the catalogue's head, and each user's mean of them. {d} is the data folder.
HAND_SIX = ["""
CREATE TEMP TABLE entries AS
SELECT user_id, generate_subscripts(top, 1) AS pos, unnest(top) AS item_id
FROM (SELECT user_id, items[1:20] AS top FROM read_parquet('{d}/recs.parquet')
      SEMI JOIN (SELECT DISTINCT user_id FROM read_parquet('{d}/rels.parquet')) USING (user_id))
""", """
CREATE TEMP TABLE catalogue AS SELECT item_id FROM read_parquet('{d}/items.parquet')
""", """
CREATE TEMP TABLE pop AS
SELECT item_id, count(DISTINCT user_id) AS pop FROM read_parquet('{d}/train.parquet') GROUP BY item_id
""", """
CREATE TEMP TABLE shown AS
SELECT item_id, count(*) FILTER (WHERE pos <= 10) AS c10, count(*) AS c20 FROM entries GROUP BY item_id
""", """
CREATE TEMP TABLE run AS
WITH n AS (SELECT count(*) AS n FROM catalogue),
c AS (SELECT 10 AS k, c10 AS c FROM shown SEMI JOIN catalogue USING (item_id) WHERE c10 > 0
      UNION ALL SELECT 20, c20 FROM shown SEMI JOIN catalogue USING (item_id) WHERE c20 > 0),
s AS (SELECT k, sum(c) AS total, count(*) AS m FROM c GROUP BY k),
j AS (SELECT k, c, row_number() OVER (PARTITION BY k ORDER BY c) AS j FROM c)
SELECT k, any_value(s.m) / any_value(n.n) AS coverage,
       -sum(c / s.total * log2(c / s.total)) AS entropy,
       sum((2 * (n.n - s.m + j) - n.n - 1) * c) / any_value(n.n * s.total) AS gini
FROM j JOIN s USING (k) CROSS JOIN n GROUP BY k
""", """
CREATE TEMP TABLE item_values AS
WITH u AS (SELECT count(DISTINCT user_id) AS u FROM read_parquet('{d}/train.parquet')),
head AS (SELECT c.item_id, coalesce(p.pop, 0) AS pop,
                row_number() OVER (ORDER BY coalesce(p.pop, 0) DESC, c.item_id::VARCHAR)
                    <= floor(0.2 * count(*) OVER ()) AS head
         FROM catalogue c LEFT JOIN pop p USING (item_id))
SELECT s.item_id, -log2((coalesce(p.pop, 0) + 1) / (u.u + 1)) AS novelty,
       coalesce(p.pop, 0)::DOUBLE AS popularity, CASE WHEN coalesce(h.head, false) THEN 0.0 ELSE 1.0 END AS tail
FROM shown s LEFT JOIN pop p USING (item_id) LEFT JOIN head h USING (item_id) CROSS JOIN u
""", """
SELECT avg(n10), avg(p10), avg(t10), avg(n20), avg(p20), avg(t20)
FROM (SELECT user_id, avg(novelty) FILTER (WHERE pos <= 10) AS n10,
             avg(popularity) FILTER (WHERE pos <= 10) AS p10, avg(tail) FILTER (WHERE pos <= 10) AS t10,
             avg(novelty) AS n20, avg(popularity) AS p20, avg(tail) AS t20
      FROM entries JOIN item_values USING (item_id) GROUP BY user_id)
"""]


def hand_six(data: Path) -> dict:
    """HAND_SIX's twelve means, named as ndcg-duck names them."""
    import duckdb

    con = duckdb.connect()
    for statement in HAND_SIX[:-1]:
        con.execute(statement.format(d=data))
    means = {}
    for k, coverage, entropy, gini in con.execute("FROM run").fetchall():
        means.update({f"coverage@{k}": coverage, f"entropy@{k}": entropy, f"gini@{k}": gini})
    values = con.execute(HAND_SIX[-1]).fetchall()[0]
    for (k, name), value in zip([(10, n) for n in ("novelty", "popularity", "tail")]
                                + [(20, n) for n in ("novelty", "popularity", "tail")], values):
        means[f"{name}@{k}"] = value
    return means


def cases(data: Path) -> dict:
    eval_ = [sys.executable, "-c", MAIN, "eval", str(data / "recs.parquet"),
             str(data / "rels.parquet"), "--quiet"]
    extra = ["--train", str(data / "train.parquet"), "--items", str(data / "items.parquet")]
    read = ("import duckdb; print(duckdb.sql(\"SELECT sum(hash(user_id, item_id)) FROM "
            f"'{data / 'train.parquet'}'\").fetchall())")
    return {"ndcg@10,20": eval_ + ["-m", "ndcg", "-k", "10,20"],
            "beyond@10,20": eval_ + ["-m", BEYOND, "-k", "10,20", "--format", "json"] + extra,
            "train read": [sys.executable, "-c", read],
            "ndcg@10": eval_ + ["-m", "ndcg", "-k", "10"],
            "ild@10": eval_ + ["-m", "ndcg,ild", "-k", "10", "--items",
                               str(data / "items.parquet")],
            "hand six": [sys.executable, str(Path(__file__).resolve()), "--hand-six",
                         "--data", str(data)]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--hand-six", action="store_true",
                    help="run the hand-written six alone and print their means (a case's process)")
    args = ap.parse_args(argv)
    data = args.data.resolve()
    if args.hand_six:
        print(json.dumps(hand_six(data)))
        return
    write_inputs(data)
    todo = cases(data)
    got = run.round_robin(todo, args.runs, args.timeout,
                          dict(os.environ, PYTHONPATH=str(HERE.parent)))
    ours = json.loads(got["beyond@10,20"][0]["stdout"])
    for res in got["hand six"]:
        for name, value in json.loads(res["stdout"]).items():
            if not math.isclose(value, ours[name], rel_tol=1e-9, abs_tol=1e-9):
                raise SystemExit(f"hand six: {name} = {value!r}, ndcg-duck's {ours[name]!r}")

    def median(name, key):
        return run.median_of(got, name, key)

    print(run.medians_table(got))
    for key, unit in (("wall", "wall"), ("cpu", "CPU")):
        budget = 1.5 * median("ndcg@10,20", key) + median("train read", key)
        print(f"\n{unit}: beyond {median('beyond@10,20', key):.2f} against the target "
              f"1.5 x ndcg + train read = {budget:.2f} "
              f"({median('beyond@10,20', key) / median('ndcg@10,20', key):.2f} x ndcg); "
              f"ild {median('ild@10', key) / median('ndcg@10', key):.2f} x ndcg@10 (target 3); "
              f"the six add {median('beyond@10,20', key) - median('ndcg@10,20', key):.2f} to "
              f"ndcg, the hand-written six alone cost {median('hand six', key):.2f} "
              f"({median('hand six', key) / median('ndcg@10,20', key):.2f} x ndcg)")


if __name__ == "__main__":
    main()
