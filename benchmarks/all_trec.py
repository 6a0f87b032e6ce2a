"""`-m all_trec`'s cost (issue 31): whole processes, round-robin, beside trec_eval and a
hand-written DuckDB query of its measures.

    python benchmarks/all_trec.py --trec DIR --nested DIR --trec-eval PATH --runs 3

--trec DIR holds run.trec and qrels.trec (`benchmarks/generate.py --users 100000 --trec`);
--nested DIR recs.parquet and rels.parquet (`benchmarks/generate.py --users 1000000`); either may
be left out. Cases:

- trec: `eval run.trec qrels.trec -m all_trec --format trec`; trec_eval 10.0 `-m all_trec` on
  the same files (--trec-eval, built from its public repository: BENCHMARKS.md); hand trec,
  all_trec's measures as a user would write them in DuckDB SQL (HAND over DuckDB's CSV reader
  with six typed fields: no check, no per-user table, the means taken in the same query), in
  its own process;
- nested: `eval recs rels -m ndcg -k 5,10,20` (the baseline of the 3x target), `-m all_trec`, and
  hand, the same query over the Parquet files.

Checks, or the script stops: ndcg-duck's `all` lines are trec_eval's, byte for byte; each hand
query's 97 means (all of all_trec's but runid and num_q) equal ndcg-duck's (trec_eval's 4
decimals on the TREC run, 1e-9 on the nested run). Prints wall seconds, CPU seconds and peak RSS
(medians) and the ratios of the two targets: trec_eval's wall time over ndcg-duck's (at least
20x) and all_trec over NDCG@5,10,20 (at most 3x), with the hand-written query's beside them.
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
sys.path.insert(0, str(HERE.parent))
from ndcg_duck.report.trec import trec_name  # noqa: E402  (the check's names, trec_eval's)

MAIN = "import sys; from ndcg_duck.cli import main; sys.argv[0] = 'ndcg-duck'; main()"

# all_trec's measures as a user would write them in DuckDB SQL, from trec_eval's definitions (its
# defaults: rbp p = 0.9, set_F beta = 1, utility weights 1, -1, 0, 0; linear gains), for the
# users in both files: each user's judged items looked up in the user's whole ranking
# (list_position), then one row per user whose measures are averaged (gm_map and gm_bpref as
# exp of the mean of ln(max(x, 0.00001)); num_* summed). {rankings}: user_id, items (in rank
# order); {judgments}: user_id, item_id, relevance. No check, and no per-user table.
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = tuple(i / 10 for i in range(11))  # iprec_at_recall
MULTIPLES = tuple(i / 5 for i in range(1, 11))  # Rprec_mult
HAND = """
WITH judged AS (
  SELECT user_id, list(item_id) AS items, list(relevance) AS levels,
         count(*) FILTER (WHERE relevance > 0) AS R, count(*) FILTER (WHERE relevance = 0) AS N,
         greatest(max(relevance), 0) AS top,
         coalesce(list_reverse_sort(list(relevance::DOUBLE) FILTER (WHERE relevance > 0)),
                  []::DOUBLE[]) AS ideal
  FROM ({judgments}) GROUP BY user_id),
placed AS (  -- the judged ranked items, {{r: rank, rel: relevance}}, best rank first
  SELECT user_id, len(ranked.items) AS n, R, N, top, ideal,
         list_sort(list_filter(list_transform(judged.items, lambda it, i:
             {{'r': list_position(ranked.items, it), 'rel': levels[i]}}),
           lambda x: x.r IS NOT NULL)) AS jr
  FROM ({rankings}) AS ranked JOIN judged USING (user_id)),
lists AS (
  SELECT *, list_transform(jr, lambda x: x.r) AS ranks,
         list_transform(jr, lambda x: x.rel::DOUBLE) AS gains,
         list_transform(list_filter(jr, lambda x: x.rel > 0), lambda x: x.r) AS rr,
         list_transform(list_filter(jr, lambda x: x.rel = 0), lambda x: x.r) AS nr,
         list_transform(list_filter(jr, lambda x: x.rel >= 0), lambda x: x.r) AS counted,
         list_transform(jr, lambda x: x.rel / log2(x.r + 1)) AS disc,
         list_transform(ideal, lambda g, i: g / log2(i + 1)) AS idisc,
         list_transform(ideal, lambda g: greatest(g, 1.0)) AS costs
  FROM placed),
sums AS (
  SELECT *, len(rr) AS F, list_transform(rr, lambda p, j: j / p) AS prec,
         coalesce(list_sum(disc), 0) AS dcg, coalesce(list_sum(idisc), 0) AS idcg
  FROM lists),
users AS (
  SELECT n, R, F, len(nr) AS nrj,
    CASE WHEN R > 0 THEN coalesce(list_sum(prec), 0) / R ELSE 0 END AS ap,
    list_transform([{cutoffs}], lambda k: {{
      'p': len(list_filter(rr, lambda p: p <= k)) / k,
      'rc': CASE WHEN R > 0 THEN len(list_filter(rr, lambda p: p <= k)) / R ELSE 0 END,
      'nd': CASE WHEN idcg > 0
                 THEN coalesce(list_sum(list_filter(disc, lambda d, t: ranks[t] <= k)), 0)
                      / list_sum(idisc[1:k]) ELSE 0 END,
      'mp': CASE WHEN R > 0
                 THEN coalesce(list_sum(prec[1:len(list_filter(rr, lambda p: p <= k))]), 0) / R
                 ELSE 0 END,
      'rp': CASE WHEN R > 0 THEN len(list_filter(rr, lambda p: p <= k)) / least(k, R) ELSE 0 END
    }}) AS cut,
    list_transform([1, 5, 10],
                   lambda k: CASE WHEN coalesce(rr[1] <= k, false) THEN 1.0 ELSE 0.0 END)
      AS success,
    list_transform([5, 10, 20],
                   lambda k: (least(k, n) - len(list_filter(counted, lambda p: p <= k))) / k)
      AS unj,
    CASE WHEN R > 0 THEN len(list_filter(rr, lambda p: p <= R)) / R ELSE 0 END AS rprec,
    CASE WHEN R > 0 THEN coalesce(list_sum(list_transform(rr, lambda p:
           CASE WHEN len(list_filter(nr, lambda q: q < p)) > 0
                THEN 1.0 - least(len(list_filter(nr, lambda q: q < p)), R) / least(N, R)
                ELSE 1.0 END)), 0) / R ELSE 0 END AS bpref,
    CASE WHEN F > 0 THEN 1.0 / rr[1] ELSE 0 END AS rr1,
    list_transform([{levels}], lambda x: CASE WHEN round(x * R) <= F
      THEN coalesce(list_max(prec[greatest(round(x * R)::BIGINT, 1):]), 0) ELSE 0 END) AS iprec,
    list_transform([{multiples}], lambda m: CASE WHEN floor(m * R + 0.9) > 0
      THEN len(list_filter(rr, lambda p: p <= floor(m * R + 0.9))) / floor(m * R + 0.9) ELSE 0 END)
      AS rmult,
    (F - (n - F))::DOUBLE AS utility,
    CASE WHEN R > 0
         THEN coalesce(list_sum(list_transform(rr, lambda p, j: 1 / log2(2 + p - j))), 0) / R
         ELSE 0 END AS bing,
    CASE WHEN len(ideal) > 0 THEN coalesce(list_sum(list_transform(ranks, lambda i, t:
           CASE WHEN gains[t] != 0
                THEN gains[t] / log2(2 + coalesce(list_sum(costs[1:i]), 0)
                                     + greatest(i - len(costs), 0) - list_sum(gains[1:t]))
                ELSE 0 END)), 0) / list_sum(ideal) ELSE 0 END AS g,
    CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0 END AS ndcg,
    CASE WHEN len(ideal) > 0 THEN greatest(coalesce(list_sum(list_transform(ranks, lambda i, t:
           CASE WHEN gains[t] > 0 THEN coalesce(list_sum(disc[1:t]), 0) / list_sum(idisc[1:i])
                ELSE 0 END)), 0)
         + (len(ideal) - len(list_filter(gains, lambda g: g > 0))) * dcg / idcg, 0) / len(ideal)
         ELSE 0 END AS ndcg_rel,
    CASE WHEN R > 0 AND len(ideal) > 0 THEN list_avg(list_transform(
           list_filter(range(1, len(ideal) + 1),
                       lambda b: ideal[b] != coalesce(ideal[b + 1], 0.0)),
           lambda b: coalesce(list_sum(list_filter(disc, lambda d, t: ranks[t] <= b)), 0)
                     / list_sum(idisc[1:b]))
         || CASE WHEN n >= len(ideal) + 2 THEN [dcg / idcg] ELSE []::DOUBLE[] END)
         ELSE 0 END AS rndcg,
    CASE WHEN R > 0 THEN coalesce(list_sum(list_transform(rr, lambda p, j:
           (1.0 + (list_position(ranks, p) - 1) * (j - 1 + 0.00001)
                  / (j - 1 + len(list_filter(nr, lambda q: q < p)) + 2 * 0.00001)) / p)), 0) / R
         ELSE 0 END AS infap,
    CASE WHEN n > 0 THEN F / n ELSE 0 END AS set_p,
    CASE WHEN n > 0 AND R > 0 THEN F / least(n, R) ELSE 0 END AS set_rp,
    CASE WHEN R > 0 THEN F / R ELSE 0 END AS set_recall,
    CASE WHEN n > 0 AND R > 0 THEN F * F / (n * R) ELSE 0 END AS set_map,
    CASE WHEN F > 0 THEN 2 * (F / n) * (F / R) / (F / n + F / R) ELSE 0 END AS set_f,
    0.1 * coalesce(list_sum(list_transform(jr,
                                           lambda x: greatest(x.rel, 0) * pow(0.9, x.r - 1))), 0)
      / greatest(top, 1.0) AS rbp,
    CASE WHEN len(counted) < n
         THEN 1 - 0.1 * coalesce(list_sum(list_transform(counted, lambda i: pow(0.9, i - 1))), 0)
         ELSE 0 END AS rbp_resid
  FROM sums)
SELECT {means} FROM users
"""
# HAND's columns, in ndcg-duck's names (--format json), and their SQL over its users
MEANS = {"num_ret": "sum(n)", "num_rel": "sum(R)", "num_rel_ret": "sum(F)",
         "num_nonrel_judged_ret": "sum(nrj)", "map": "avg(ap)",
         "gm_map": "exp(avg(ln(greatest(ap, 0.00001))))", "r_precision": "avg(rprec)",
         "bpref": "avg(bpref)", "gm_bpref": "exp(avg(ln(greatest(bpref, 0.00001))))",
         "mrr": "avg(rr1)",
         **{f"{name}@{k}": f"avg(cut[{i}].{field})" for i, k in enumerate(CUTOFFS, start=1)
            for name, field in (("precision", "p"), ("recall", "rc"), ("ndcg", "nd"),
                                ("map", "mp"), ("relative_precision", "rp"))},
         **{f"hit_rate@{k}": f"avg(success[{i}])" for i, k in enumerate((1, 5, 10), start=1)},
         **{f"unj@{k}": f"avg(unj[{i}])" for i, k in enumerate((5, 10, 20), start=1)},
         **{f"iprec_at_recall_{x:.2f}": f"avg(iprec[{i}])" for i, x in enumerate(LEVELS, start=1)},
         **{f"rprec_mult_{x:.2f}": f"avg(rmult[{i}])" for i, x in enumerate(MULTIPLES, start=1)},
         "utility": "avg(utility)", "iprec_11pt_avg": "avg(list_avg(iprec))", "bing": "avg(bing)",
         "g": "avg(g)", "ndcg@all": "avg(ndcg)", "ndcg_rel": "avg(ndcg_rel)", "rndcg": "avg(rndcg)",
         "infap": "avg(infap)", "set_precision": "avg(set_p)",
         "set_relative_precision": "avg(set_rp)", "recall@all": "avg(set_recall)",
         "set_map": "avg(set_map)", "set_f": "avg(set_f)", "rbp": "avg(rbp)",
         "rbp_resid": "avg(rbp_resid)"}

TREC_FIELDS = "header = false, delim = ' ', quote = '', escape = '', auto_detect = false"
HAND_INPUTS = {
    "trec": {
        "rankings": f"""SELECT query AS user_id, list(doc ORDER BY score DESC, doc DESC) AS items
            FROM read_csv('{{d}}/run.trec', {TREC_FIELDS}, columns = {{{{'query': 'VARCHAR',
                'q0': 'VARCHAR', 'doc': 'VARCHAR', 'rank': 'BIGINT', 'score': 'DOUBLE',
                'tag': 'VARCHAR'}}}})
            GROUP BY query""",
        "judgments": f"""SELECT query AS user_id, doc AS item_id, relevance
            FROM read_csv('{{d}}/qrels.trec', {TREC_FIELDS}, columns = {{{{'query': 'VARCHAR',
                'iteration': 'VARCHAR', 'doc': 'VARCHAR', 'relevance': 'BIGINT'}}}})"""},
    "nested": {"rankings": "FROM read_parquet('{d}/recs.parquet')",
               "judgments": "FROM read_parquet('{d}/rels.parquet')"},
}


def hand(shape: str, data: Path) -> dict:
    """HAND's means over the files in `data` (in `shape`): {name (MEANS): mean}."""
    import duckdb

    inputs = {name: sql.format(d=data) for name, sql in HAND_INPUTS[shape].items()}
    sql = HAND.format(cutoffs=", ".join(map(str, CUTOFFS)), levels=", ".join(map(str, LEVELS)),
                      multiples=", ".join(map(str, MULTIPLES)),
                      means=", ".join(MEANS.values()), **inputs)
    return dict(zip(MEANS, duckdb.connect().execute(sql).fetchall()[0]))


def cases(args) -> dict:
    out = {}
    me = [sys.executable, str(Path(__file__).resolve())]
    if args.trec:
        run_, qrels = str(args.trec / "run.trec"), str(args.trec / "qrels.trec")
        out["ndcg-duck trec"] = [sys.executable, "-c", MAIN, "eval", run_, qrels,
                                 "-m", "all_trec", "--format", "trec"]
        if args.trec_eval:
            out["trec_eval"] = [args.trec_eval, "-m", "all_trec", qrels, run_]
        out["hand trec"] = me + ["--hand", "trec", "--trec", str(args.trec)]
    if args.nested:
        eval_ = [sys.executable, "-c", MAIN, "eval", str(args.nested / "recs.parquet"),
                 str(args.nested / "rels.parquet"), "--quiet", "--format", "json"]
        out["ndcg@5,10,20"] = eval_ + ["-m", "ndcg", "-k", "5,10,20"]
        out["all_trec"] = eval_ + ["-m", "all_trec"]
        out["hand"] = me + ["--hand", "nested", "--nested", str(args.nested)]
    return out


def all_lines(text: str) -> list:
    return [line for line in text.splitlines() if line.split()[1:2] == ["all"]]


def check(got: dict) -> None:
    """Stops unless ndcg-duck's `all` lines are trec_eval's and each hand query's means are
    ndcg-duck's."""
    if "ndcg-duck trec" in got:
        ours = all_lines(got["ndcg-duck trec"][0]["stdout"])
        if "trec_eval" in got and ours != all_lines(got["trec_eval"][0]["stdout"]):
            raise SystemExit("ndcg-duck's all lines differ from trec_eval's")
        printed = {line.split()[0]: line.split()[2] for line in ours}
        for res in got["hand trec"]:
            means = json.loads(res["stdout"])
            for name, mean in means.items():
                shown = printed[trec_name(name, {})[2]]
                if (f"{mean:.4f}" if "." in shown else str(mean)) != shown:
                    raise SystemExit(f"hand trec {name} {mean!r}, ndcg-duck's {shown}")
    if "all_trec" in got:
        ours = json.loads(got["all_trec"][0]["stdout"])
        for res in got["hand"]:
            for name, mean in json.loads(res["stdout"]).items():
                if not math.isclose(mean, ours[name], rel_tol=1e-9, abs_tol=1e-12):
                    raise SystemExit(f"hand {name} {mean!r}, ndcg-duck's {ours[name]!r}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trec", type=Path)
    ap.add_argument("--nested", type=Path)
    ap.add_argument("--trec-eval", help="path of a trec_eval 10.0 binary")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--hand", choices=sorted(HAND_INPUTS),
                    help="run the hand-written query alone and print its means (a case's process)")
    args = ap.parse_args(argv)
    args.trec, args.nested = (p and p.resolve() for p in (args.trec, args.nested))
    if args.hand:
        print(json.dumps(hand(args.hand, args.trec if args.hand == "trec" else args.nested)))
        return
    todo = cases(args)
    got = run.round_robin(todo, args.runs, args.timeout,
                          dict(os.environ, PYTHONPATH=str(HERE.parent)))
    check(got)

    def median(name, key):
        return run.median_of(got, name, key)

    print(run.medians_table(got))
    if "trec_eval" in got:
        print(f"\ntrec_eval's wall time over ndcg-duck's: "
              f"{median('trec_eval', 'wall') / median('ndcg-duck trec', 'wall'):.1f}x "
              f"(target at least 20x); over the hand query's: "
              f"{median('trec_eval', 'wall') / median('hand trec', 'wall'):.1f}x")
    if "all_trec" in got:
        for key, unit in (("cpu", "CPU"), ("wall", "wall")):
            base = median("ndcg@5,10,20", key)
            print(f"{unit}: all_trec {median('all_trec', key) / base:.2f}x ndcg@5,10,20 "
                  f"(target at most 3x); hand {median('hand', key) / base:.2f}x")


if __name__ == "__main__":
    main()
