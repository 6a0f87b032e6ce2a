"""Issue 34 item 2: the judgments edge as lists (today's core) against the gains by join, as single
DuckDB statements on the nested 1M files, each in a fresh process, CPU seconds of the statement
(resource.getrusage, user + sys) and a checksum of its per-user rows.

    python benchmarks/join_prototypes.py --data /tmp/bdata1m VARIANT [VARIANT ...] [--rounds 3]

Run under `flock /tmp/ndcg-bench.lock` on a shared machine. Report:
benchmarks/reports/2026-11-26-join34.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KS = "[5, 10, 20]"
WIDTH = 20

SETUP = """
CREATE TEMP VIEW ndcg_recs AS SELECT user_id, items FROM read_parquet('{data}/recs.parquet');
CREATE TEMP VIEW ndcg_recs_long AS SELECT user_id, item_id, rank FROM read_parquet('{data}/recs_long.parquet');
CREATE TEMP VIEW ndcg_rels AS SELECT user_id, item_id, relevance FROM read_parquet('{data}/rels.parquet');
"""

RANKED = f"ndcg_ranked_ AS (FROM ndcg_ranked_lists('ndcg_recs', depth := {WIDTH}))"

VARIANTS = {
    # today's core: the judgments edge gathers each user's judged items into lists
    "lists": f"""
WITH {RANKED},
ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels', ideal_depth := {WIDTH}))
SELECT user_id, k, dcg, idcg, ndcg, has_judgments, has_ranking
FROM ndcg_user_scores('ndcg_ranked_', 'ndcg_judgments_', ks := {KS})""",
    # only the judgments edge (what the lists cost)
    "lists_edge": f"""
SELECT * FROM ndcg_judgments('ndcg_rels', ideal_depth := {WIDTH})""",
    # the per-user aggregate without the item and relevance lists
    "agg_edge": f"""
SELECT user_id, ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal,
       count(*) FILTER (WHERE relevance > 0) AS num_relevant, ndcg_may_repeat(item_id) AS may_repeat
FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    # gains by join: the ranked items (unnested with their positions) joined to the judgment rows
    # on (user, item); each user's gain list rebuilt from its hits, so the arithmetic (and the
    # bits) stay the core's list_dot_product; judgments' per-user aggregate keeps the ideal
    "join": f"""
WITH {RANKED},
checked AS (FROM ndcg_judgments_checked('ndcg_rels')),
per_user AS (
    SELECT user_id, ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal,
           count(*) FILTER (WHERE relevance > 0) AS num_relevant,
           ndcg_may_repeat(item_id) AS may_repeat
    FROM checked GROUP BY user_id),
positions AS (SELECT user_id, unnest(items) AS item_id, generate_subscripts(items, 1) AS pos
              FROM ndcg_ranked_),
hits AS (SELECT p.user_id, list(p.pos) AS pos, list(c.relevance::DOUBLE) AS gain
         FROM positions p JOIN checked c ON c.user_id = p.user_id AND c.item_id = p.item_id
         GROUP BY p.user_id),
u AS (
    SELECT coalesce(j.user_id, r.user_id) AS user_id, j.user_id IS NOT NULL AS has_judgments,
           r.user_id IS NOT NULL AS has_ranking,
           list_transform(range(1, {WIDTH} + 1),
                          lambda i: coalesce(h.gain[list_position(h.pos, i)], 0.0)) AS gains,
           ndcg_fit(j.ideal, {WIDTH}) AS ideal
    FROM per_user j FULL JOIN ndcg_ranked_ r ON r.user_id = j.user_id
    LEFT JOIN hits h ON h.user_id = coalesce(j.user_id, r.user_id))
SELECT u.user_id, c.k, list_dot_product(u.gains, c.discounts) AS dcg,
       list_dot_product(u.ideal, c.discounts) AS idcg,
       ndcg_ratio(list_dot_product(u.gains, c.discounts), list_dot_product(u.ideal, c.discounts)) AS ndcg,
       u.has_judgments, u.has_ranking
FROM u CROSS JOIN ndcg_cutoffs({KS}) c""",
    # the hand-written form's arithmetic: sums over hits per user and cutoff (not the core's bits)
    "join_sum": f"""
WITH {RANKED},
checked AS (FROM ndcg_judgments_checked('ndcg_rels')),
per_user AS (
    SELECT user_id, ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal,
           count(*) FILTER (WHERE relevance > 0) AS num_relevant,
           ndcg_may_repeat(item_id) AS may_repeat
    FROM checked GROUP BY user_id),
positions AS (SELECT user_id, unnest(items) AS item_id, generate_subscripts(items, 1) AS pos
              FROM ndcg_ranked_),
hits AS (SELECT p.user_id,
                sum(c.relevance / log2(p.pos + 1)) FILTER (WHERE p.pos <= 5) AS d5,
                sum(c.relevance / log2(p.pos + 1)) FILTER (WHERE p.pos <= 10) AS d10,
                sum(c.relevance / log2(p.pos + 1)) AS d20
         FROM positions p JOIN checked c ON c.user_id = p.user_id AND c.item_id = p.item_id
         GROUP BY p.user_id)
SELECT coalesce(j.user_id, r.user_id) AS user_id, h.d5, h.d10, h.d20, j.ideal
FROM per_user j FULL JOIN ndcg_ranked_ r ON r.user_id = j.user_id
LEFT JOIN hits h ON h.user_id = coalesce(j.user_id, r.user_id)""",
    # the judgments edge's aggregate, piece by piece (where the lists' cost is)
    "edge_count": """
SELECT user_id, count(*) AS n FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    "edge_ideal": f"""
SELECT user_id, ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal, count(*) AS n
FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    "edge_lists": """
SELECT user_id, list(item_id) AS items, list(relevance) AS relevances, count(*) AS n
FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    "edge_lists_sorted": f"""
SELECT user_id, items, relevances, n,
       list_resize(list_reverse_sort(list_filter(list_transform(relevances, lambda r: r::DOUBLE),
                                                 lambda g: g > 0)), {WIDTH}) AS ideal
FROM (SELECT user_id, list(item_id) AS items, list(relevance) AS relevances, count(*) AS n
      FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id)""",
    "edge_lists_ideal": f"""
SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
       ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal, count(*) AS n
FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    "edge_lists_ideal_sig": f"""
SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
       ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal, count(*) AS n,
       ndcg_may_repeat(item_id) AS may_repeat
FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id""",
    "edge_lists_ideal_unique": f"""
SELECT user_id, items, relevances, ideal, n, list_unique(items) < n AS repeated
FROM (SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
             ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal, count(*) AS n
      FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id)""",
    "edge_lists_ideal_sig_unique": f"""
SELECT user_id, items, relevances, ideal, n,
       CASE WHEN may_repeat THEN list_unique(items) < n ELSE false END AS repeated
FROM (SELECT user_id, list(item_id) AS items, list(relevance) AS relevances,
             ndcg_ideal(relevance::DOUBLE, {WIDTH}) AS ideal, count(*) AS n,
             ndcg_may_repeat(item_id) AS may_repeat
      FROM ndcg_judgments_checked('ndcg_rels') GROUP BY user_id)""",
    "edge_gathered": f"""
SELECT * FROM ndcg_judgments_gathered('ndcg_rels', 'linear', NULL, NULL, {WIDTH}, true)""",
}


# long by rank: today's edge (a top-n aggregate per user) and lists, against the join of the rows
# `rank <= 20` to the judgments (a lower bound: no proof that ranks are positions 1..20, which
# item 1 of issue 34 found costs about 1 CPU s more; users ranked only past 20 are not seen)
LONG_RANKED = f"ndcg_ranked_ AS (FROM ndcg_ranked_ranks('ndcg_recs_long', depth := {WIDTH}))"
VARIANTS["long_lists"] = VARIANTS["lists"].replace(RANKED, LONG_RANKED)
VARIANTS["long_join"] = (
    VARIANTS["join"]
    .replace(RANKED, "ndcg_ranked_ AS (SELECT DISTINCT user_id FROM ndcg_rows_ranked("
                     f"'ndcg_recs_long') WHERE rank <= {WIDTH})")
    .replace("SELECT user_id, unnest(items) AS item_id, generate_subscripts(items, 1) AS pos\n"
             "              FROM ndcg_ranked_",
             f"SELECT user_id, item_id, rank::BIGINT AS pos FROM ndcg_rows_ranked('ndcg_recs_long') "
             f"WHERE rank <= {WIDTH}"))


# the peer: benchmarks/tools.py's hand-written NDCG@10 (duckdb_sql), as one statement
def _hand() -> str:
    sys.path.insert(0, str(HERE))
    import tools
    return (tools.DUCKDB_SQL.format(ranked=tools.RANKED["nested"])
            .replace("$recs", "'{data}/recs.parquet'").replace("$rels", "'{data}/rels.parquet'"))


def run_one(data: str, variant: str, sql: Path) -> dict:
    import duckdb
    con = duckdb.connect()
    con.execute(sql.read_text())
    con.execute(SETUP.format(data=data))
    before = resource.getrusage(resource.RUSAGE_SELF)
    statement = _hand().format(data=data) if variant == "hand" else VARIANTS[variant]
    con.execute(f"CREATE TEMP TABLE out AS {statement}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    rows, = con.execute("SELECT count(*) FROM out").fetchall()[0],
    check = None
    if variant in ("lists", "join", "long_lists", "long_join"):
        check = con.execute("SELECT k, sum(hash(ndcg)), fsum(ndcg) FROM out "
                            "WHERE has_judgments GROUP BY k ORDER BY k").fetchall()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"variant": variant, "cpu": round(cpu, 2), "rows": rows, "check": check,
            "peak_mb": round(after.ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variants", nargs="+", choices=sorted(VARIANTS) + ["hand"])
    parser.add_argument("--data", default="/tmp/bdata1m")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sql", action="append", type=Path,
                        help="an ndcg.sql to load (repeat for an A/B; default: this checkout's)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.data, args.variants[0], args.sql[0]), default=str))
        return
    for round_ in range(args.rounds):
        for sql in args.sql or [ROOT / "sql" / "ndcg.sql"]:
            for variant in args.variants:
                out = subprocess.run([sys.executable, __file__, "--one", "--data", args.data,
                                      "--sql", str(sql), variant],
                                     capture_output=True, text=True, check=True).stdout
                print(round_ + 1, sql, out.strip(), flush=True)


if __name__ == "__main__":
    main()
