"""`-m all_trec`'s cost (issue 31): whole processes, round-robin, beside trec_eval and a
hand-written DuckDB query of two of its measures.

    python benchmarks/all_trec.py --trec DIR --nested DIR --trec-eval PATH --runs 3

--trec DIR holds run.trec and qrels.trec (`benchmarks/generate.py --users 100000 --trec`);
--nested DIR recs.parquet and rels.parquet (`benchmarks/generate.py --users 1000000`); either may
be left out. Cases:

- trec: `eval run.trec qrels.trec -m all_trec --format trec`; trec_eval 10.0 `-m all_trec` on
  the same files (--trec-eval, built from its public repository: BENCHMARKS.md); hand trec, two
  of all_trec's measures (MAP and NDCG at its ten cutoffs) as a user would write them in DuckDB
  SQL (HAND over DuckDB's CSV reader with six typed fields: no check), in its own process;
- nested: `eval recs rels -m ndcg -k 5,10,20` (the baseline of the 3x target), `-m all_trec`, and
  hand, the same query over the Parquet files.

Checks, or the script stops: ndcg-duck's `all` lines are trec_eval's, byte for byte; each hand
query's eleven means equal ndcg-duck's (trec_eval's 4 decimals on the TREC run, 1e-9 on the
nested run). Prints wall seconds, CPU seconds and peak RSS (medians) and the ratios of the two
targets: trec_eval's wall time over ndcg-duck's (at least 20x) and all_trec over NDCG@5,10,20
(at most 3x), with the hand-written query's beside them.
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

# Two of all_trec's measures as a user would write them in DuckDB SQL: MAP (the mean over the
# judged users of AP: the precision at each relevant ranked item's rank, summed, over R) and NDCG
# at all_trec's cutoffs (linear gains, the ideal from the judgments), each user's relevant items
# looked up in the user's whole ranking. {rankings}: user_id, items (in rank order); {judgments}:
# user_id, item_id, relevance. No check.
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
HAND = """
WITH relevant AS (SELECT user_id, list(item_id) FILTER (WHERE relevance > 0) AS items,
                         list(relevance::DOUBLE) FILTER (WHERE relevance > 0) AS gains
                  FROM ({judgments}) GROUP BY user_id),
found AS (SELECT list_transform(relevant.items, lambda i: list_position(ranked.items, i)) AS ranks,
                 relevant.gains, list_reverse_sort(relevant.gains) AS ideal
          FROM ({rankings}) AS ranked JOIN relevant USING (user_id)),
measures AS (
    SELECT CASE WHEN len(gains) > 0 THEN coalesce(list_sum(list_transform(
                    list_sort(list_filter(ranks, lambda p: p IS NOT NULL)),
                    lambda p, i: i / p)), 0) / len(gains) ELSE 0 END AS ap,
           list_transform([{cutoffs}, NULL], lambda k: CASE WHEN len(gains) > 0 THEN
               coalesce(list_sum(list_transform(ranks, lambda p, i: CASE WHEN p <= coalesce(k, p)
                   THEN gains[i] / log2(p + 1) ELSE 0 END)), 0)
               / list_sum(list_transform(ideal[1:coalesce(k, len(ideal))],
                                         lambda g, i: g / log2(i + 1)))
               ELSE 0 END) AS ndcg
    FROM found)
SELECT avg(ap), {means} FROM measures
"""
NAMES = ["map"] + [f"ndcg@{k}" for k in CUTOFFS] + ["ndcg@all"]
# their names in trec_eval's output
TREC_NAMES = ["map"] + [f"ndcg_cut_{k}" for k in CUTOFFS] + ["ndcg"]

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
    """HAND's means over the files in `data` (in `shape`): {name (NAMES): mean}."""
    import duckdb

    inputs = {name: sql.format(d=data) for name, sql in HAND_INPUTS[shape].items()}
    means = ", ".join(f"avg(ndcg[{i}])" for i in range(1, len(CUTOFFS) + 2))
    sql = HAND.format(cutoffs=", ".join(map(str, CUTOFFS)), means=means, **inputs)
    return dict(zip(NAMES, duckdb.connect().execute(sql).fetchall()[0]))


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
            for name, trec_name in zip(NAMES, TREC_NAMES):
                mean = means[name]
                if f"{mean:.4f}" != printed[trec_name]:
                    raise SystemExit(f"hand trec {name} {mean!r}, ndcg-duck's {printed[trec_name]}")
    if "all_trec" in got:
        ours = json.loads(got["all_trec"][0]["stdout"])
        for res in got["hand"]:
            for name, mean in json.loads(res["stdout"]).items():
                if not math.isclose(mean, ours[name], rel_tol=1e-9):
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
