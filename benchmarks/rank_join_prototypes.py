"""Issue 34 items 1 and 2 on long rows by rank: today's batched run (a top-n aggregate over every
row, per-user lists, the core) against the path reports/2026-11-26-rank34.md and join34.md point
to: a pass over every row (in place of batching's approx_count_distinct) that counts each user's
rows and proves which users' rows ranked within the depth are exactly ranks 1..m; then, per batch,
only the rows `rank <= depth` of those users, joined to the judgments (no per-user ranking or
judgment lists), and today's top-n path for the other users (a semi-join: nothing when none).

Each variant runs in a fresh process, as the CLI does it: count the rows, the user pass, the
batch boundaries (ndcg_duck.evaluation.batches' sample), then one statement per batch into one
table. CPU (user + sys, resource.getrusage) per phase, peak RSS, and a checksum of every judged
user's NDCG bits at each cutoff (both variants must print the same).

    flock /tmp/ndcg-bench.lock python benchmarks/rank_join_prototypes.py --data /tmp/bdata1m \\
        today join --rounds 3

Report: benchmarks/reports/2026-11-26-rank34c.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KS = "[5, 10, 20]"
D = 20
BATCH = int(__import__("os").environ.get("RANK34C_BATCH", 350_000))

SETUP = """
CREATE TEMP VIEW ndcg_recs AS SELECT user_id, item_id, rank FROM read_parquet('{data}/recs_long.parquet');
CREATE TEMP VIEW ndcg_rels AS SELECT user_id, item_id, relevance FROM read_parquet('{data}/rels.parquet');
"""

# today's statement (the CLI's for `eval recs_long rels -k 5,10,20 --rank-col rank`)
TODAY = f"""
WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks('ndcg_recs_batch', depth := {D})),
ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels_batch', ideal_depth := {D}))
SELECT user_id, k, dcg, idcg, ndcg, has_judgments, has_ranking
FROM ndcg_user_scores('ndcg_ranked_', 'ndcg_judgments_', ks := {KS})"""

# the user pass: per user, the rows, the rows within D, and whether those are exactly ranks 1..m
# (m = the rows within): integral, from 1 to m, and distinct (m distinct powers of two add up to
# 2^m - 1, and m powers of two that repeat one add up to a number with fewer than m ones);
# positional users need nothing beyond their rows within D when they have D of them or no row
# beyond. The others ('exact') take today's top-n path.
def user_pass(source: str, problems: bool = False) -> str:
    """The user pass over `source` (a table macro call or relation giving user_id, rank); with
    problems, also each user's count of rows the row checks refuse (NULL key, NULL or non-finite
    rank), for a checked pass to name when there is one."""
    bad = (",\n           count(*) FILTER (WHERE user_id IS NULL OR item_id IS NULL OR rank IS NULL"
           " OR NOT isfinite(rank::DOUBLE)) AS bad" if problems else "")
    kept = ", bad" if problems else ""
    return f"""
CREATE OR REPLACE TEMP TABLE ndcg_users_ AS
SELECT user_id{kept}, NOT (m = m_integral AND coalesce(powers, 0) = (1::BIGINT << m::INTEGER) - 1
                     AND (m = {D} OR n = m)) AS exact
FROM (
    SELECT user_id, count(*) AS n, count(*) FILTER (WHERE rank <= {D}) AS m,
           count(*) FILTER (WHERE rank >= 1 AND rank <= {D} AND rank = round(rank)) AS m_integral,
           bit_or(1::BIGINT << CASE WHEN rank >= 1 AND rank <= {D} THEN rank::INTEGER - 1
                                    ELSE 0 END)
               FILTER (WHERE rank >= 1 AND rank <= {D} AND rank = round(rank)) AS powers{bad}
    FROM {source} GROUP BY user_id);
CREATE OR REPLACE TEMP VIEW ndcg_exact_users AS SELECT user_id FROM ndcg_users_ WHERE exact;
"""


JOIN = """
WITH checked_ AS NOT MATERIALIZED (FROM ndcg_judgments_checked('ndcg_rels_batch')),
judged_ AS (
    SELECT user_id, ndcg_ideal(relevance::DOUBLE, {D}) AS ideal,
           count(*) FILTER (WHERE relevance > 0) AS num_relevant, ndcg_may_repeat(item_id) AS may_repeat
    FROM checked_ GROUP BY user_id),
repeats_ AS (  -- the exact repeat test of the flagged users (ndcg_judgments_once's, re-gathered)
    SELECT user_id, list(item_id) AS items, list(relevance) AS relevances
    FROM checked_ WHERE user_id IN (SELECT user_id FROM judged_ WHERE may_repeat)
    GROUP BY user_id),
repeat_ok_ AS (
    SELECT count(*) FROM repeats_
    WHERE ndcg_require(list_unique(items) = len(items)
                       OR len(list_distinct(list_zip(items, relevances))) = list_unique(items),
                       'judged twice')),
rows_ AS NOT MATERIALIZED ({rows}),
exact_ AS (  -- today's top-n path for the users that need all their rows
    FROM ndcg_ranked_ranks_top('ndcg_exact_rows_', {D})),
ranked_rows_ AS (
    SELECT user_id, item_id, rank::BIGINT AS pos FROM rows_
    WHERE rank <= {D} AND user_id NOT IN (SELECT user_id FROM ndcg_exact_users)
    UNION ALL
    SELECT user_id, unnest(items) AS item_id, generate_subscripts(items, 1) AS pos FROM exact_),
ranked_users_ AS (
    SELECT user_id FROM ranked_rows_ WHERE pos = 1
    UNION ALL SELECT user_id FROM exact_ WHERE len(items) = 0),
hits_ AS (
    SELECT p.user_id, list(p.pos) AS pos, list(c.relevance::DOUBLE) AS gain, list(c.item_id) AS items
    FROM ranked_rows_ p JOIN checked_ c ON c.user_id = p.user_id AND c.item_id = p.item_id
    GROUP BY p.user_id),
hits_once_ AS (
    SELECT user_id, pos, gain FROM hits_
    WHERE ndcg_require(len(items) < 2 OR list_unique(items) = len(items), 'ranked twice')),
u_ AS (
    SELECT coalesce(j.user_id, r.user_id) AS user_id, j.user_id IS NOT NULL AS has_judgments,
           r.user_id IS NOT NULL AS has_ranking,
           list_transform(range(1, {D} + 1),
                          lambda i: coalesce(h.gain[list_position(h.pos, i)], 0.0)) AS gains,
           ndcg_fit(j.ideal, {D}) AS ideal
    FROM judged_ j FULL JOIN ranked_users_ r ON r.user_id = j.user_id
    LEFT JOIN hits_once_ h ON h.user_id = coalesce(j.user_id, r.user_id)
    WHERE (SELECT true FROM repeat_ok_))
SELECT user_id, k, dcg, idcg, ndcg_ratio(dcg, idcg) AS ndcg, has_judgments, has_ranking
FROM (SELECT u_.user_id, c.k, list_dot_product(u_.gains, c.discounts) AS dcg,
             list_dot_product(u_.ideal, c.discounts) AS idcg, u_.ideal[1] AS largest_gain,
             has_judgments, has_ranking
      FROM u_ CROSS JOIN ndcg_cutoffs({KS}) c)
WHERE ndcg_sum_finite(user_id, k, 'ideal DCG', idcg, largest_gain)
  AND ndcg_sum_finite(user_id, k, 'DCG', dcg, largest_gain)"""


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def bounds(con, users: int) -> list[str]:
    """batches.user_ranges' boundaries for `users` users."""
    sys.path.insert(0, str(ROOT))
    from ndcg_duck.evaluation import batches
    count = -(-users // BATCH)
    fractions = [i / count for i in range(1, count)]
    (found,), = con.sql(
        f"SELECT list_sort(list_distinct(quantile_disc(user_id, {fractions}))) "
        f"FROM (SELECT user_id FROM ndcg_recs WHERE user_id IS NOT NULL "
        f"USING SAMPLE reservoir({batches.SAMPLE_ROWS} ROWS) REPEATABLE (7))").fetchall()
    ranges = [f"(user_id < {found[0]} OR user_id IS NULL)"]
    ranges += [f"user_id >= {a} AND user_id < {b}" for a, b in zip(found, found[1:])]
    ranges.append(f"user_id >= {found[-1]}")
    return ranges


def run_one(data: str, variant: str, sql: Path) -> dict:
    import duckdb
    con = duckdb.connect()
    con.execute(sql.read_text())
    con.execute(SETUP.format(data=data))
    phases = {}
    start = cpu()
    con.sql("SELECT count(*) FROM ndcg_recs").fetchall()
    if variant == "today":
        (users,), = con.sql("SELECT approx_count_distinct(user_id) FROM ndcg_recs").fetchall()
    else:
        source = ("ndcg_rows_ranked('ndcg_recs')" if variant == "join_cp"
                  else "ndcg_recs")
        con.execute(user_pass(source, problems=variant == "join_np"))
        if variant == "join_np":  # a refused row: the checked scan names it (none here)
            (bad,), = con.sql("SELECT sum(bad) FROM ndcg_users_").fetchall()
            if bad:
                con.sql("SELECT count(*) FROM ndcg_rows_ranked('ndcg_recs')").fetchall()
        (users, exact), = con.sql("SELECT count(*), count(*) FILTER (WHERE exact) "
                                  "FROM ndcg_users_").fetchall()
        phases["exact_users"] = exact
    phases["users"] = cpu() - start
    start = cpu()
    ranges = bounds(con, users)
    phases["bounds"] = cpu() - start
    rows = ("SELECT user_id, item_id, rank FROM ndcg_recs_batch" if variant in ("join_cp", "join_np")
            else "FROM ndcg_rows_ranked('ndcg_recs_batch')")
    statement = (TODAY if variant == "today"
                 else JOIN.replace("{D}", str(D)).replace("{KS}", KS).replace("{rows}", rows))
    start = cpu()
    for number, users in enumerate(ranges):
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_batch AS FROM ndcg_recs WHERE {users}")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_batch AS FROM ndcg_rels WHERE {users}")
        if variant != "today":
            con.execute("CREATE OR REPLACE TEMP VIEW ndcg_exact_rows_ AS FROM ndcg_recs_batch "
                        "WHERE user_id IN (SELECT user_id FROM ndcg_exact_users)")
        into = "INSERT INTO out" if number else "CREATE TEMP TABLE out AS"
        con.execute(f"{into} {statement}")
    phases["batches"] = cpu() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    rows, = con.execute("SELECT count(*) FROM out").fetchall()[0],
    check = con.execute("SELECT k, sum(hash(ndcg)), fsum(ndcg), count(*) FROM out "
                        "WHERE has_judgments GROUP BY k ORDER BY k").fetchall()
    ranked = con.execute("SELECT count(*) FILTER (WHERE has_ranking) FROM out").fetchall()[0][0]
    total = sum(v for k, v in phases.items() if k != "exact_users")
    return {"variant": variant, "cpu": round(total, 2),
            "phases": {k: round(v, 2) for k, v in phases.items()}, "rows": rows,
            "ranked_rows": ranked, "check": check, "peak_mb": round(after.ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variants", nargs="+", choices=["today", "join", "join_cp", "join_np"])
    parser.add_argument("--data", default="/tmp/bdata1m")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sql", type=Path, default=ROOT / "sql" / "ndcg.sql")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.data, args.variants[0], args.sql), default=str))
        return
    for round_ in range(args.rounds):
        for variant in args.variants:
            load = Path("/proc/loadavg").read_text().split()[0]
            started = time.time()
            out = subprocess.run([sys.executable, __file__, "--one", "--data", args.data,
                                  "--sql", str(args.sql), variant],
                                 capture_output=True, text=True, check=True).stdout
            print(round_ + 1, f"load {load}", f"wall {time.time() - started:.1f}", out.strip(),
                  flush=True)


if __name__ == "__main__":
    main()
