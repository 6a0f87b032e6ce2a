"""One benchmarked tool per process: `python benchmarks/tools.py TOOL RECS RELS [--threads N]
[--memory-limit X]`. Prints one JSON line with the tool's mean NDCG@10 and user count.

RECS is the nested Parquet file (user_id, items LIST in rank order), or for the *_long_* tools
the long one (user_id, item_id, rank, and score for *_score: recs_long.parquet and
recs_score.parquet of benchmarks/long_inputs.py); RELS is the long judgments file (user_id,
item_id, relevance). Every peer loads its data from these files inside its timed process. The
ndcg-duck CLI is run by run.py and long_inputs.py directly, not through this file.

Tools:
  api          ndcg_duck.evaluate(recs, rels, k=[5,10,20], per_user=False)
  scan         the scan floor: DuckDB reads every column the evaluation needs (user_id and all
               item ids of recs; user_id, item_id, relevance of rels) into trivial aggregates
  polars       hand-written NDCG@10 in polars (lazy)
  duckdb_sql   hand-written NDCG@10 in DuckDB SQL, the query a user would write: unnest each
               ranking with generate_subscripts, join the judgments on (user, item),
               row_number() for the ideal list; no checks
  pandas       hand-written NDCG@10 in pandas (pyarrow-backed lists, numpy for ranks)
  pytrec_eval  pytrec_eval ndcg_cut_10 on each ranking's top 10 (scores 10, 9, ..., 1)
  ranx         ranx ndcg@10 on each ranking's top 10

Long rows (issue 20), the short script a user would write for each shape:
  scan_long_rank   the long scan floor: DuckDB reads user_id, item_id, rank of RECS and the
                   judgments' three columns into trivial aggregates
  scan_long_score  the same with score in place of rank
  duckdb_long_rank   duckdb_sql's query with the ranked rows `WHERE rank <= 10` of RECS
  duckdb_long_score  duckdb_sql's query with row_number() OVER (PARTITION BY user_id ORDER BY
                     score DESC) <= 10 (ties in any order: the benchmark's scores have none)
  polars_long_rank   polars's query with the rows filtered on rank <= 10
  polars_long_score  polars's query with rank("ordinal") over score descending within user <= 10

NDCG@10 semantics for the hand-written peers (trec_eval's ndcg_cut_10): gain = relevance,
discount 1/log2(rank+1); ideal DCG from all of the user's judged items with relevance > 0,
best first, cut at 10; evaluated users = users of the relevance file; a user without
recommendations or with ideal DCG 0 scores 0.
"""

from __future__ import annotations

import json
import sys

K = 10
MAX_TEMP = "20GB"  # DuckDB's spill limit for a peer given a memory limit


def _connect(threads=None, memory_limit=None):
    """A DuckDB connection with the runner's thread count and memory limit, when given."""
    import duckdb
    config = {}
    if threads:
        config["threads"] = int(threads)
    if memory_limit:
        config["memory_limit"] = memory_limit
        # what it spills beyond the limit stays within MAX_TEMP, so a peer that needs more fails
        # (reported) instead of filling a shared disk (the 10M run: reports/2026-11-26-bench34c.md)
        config["max_temp_directory_size"] = MAX_TEMP
    return duckdb.connect(config=config)


def tool_api(recs, rels, threads=None, memory_limit=None):
    import ndcg_duck
    con = _connect(threads, memory_limit)
    summary, _ = ndcg_duck.evaluate(recs, rels, k=[5, 10, 20], per_user=False, con=con)
    return summary["ndcg@10"], summary["users"]


def tool_scan(recs, rels, threads=None, memory_limit=None):
    con = _connect(threads, memory_limit)
    # list_sum forces every item id of every list to be decoded and touched once.
    (users, entries, items_sum), = con.execute(
        "SELECT count(user_id), sum(len(items)), sum(list_sum(items)) FROM read_parquet(?)",
        [recs]).fetchall()
    (judged, ids, rel), = con.execute(
        "SELECT count(*), sum(user_id + item_id), sum(relevance) FROM read_parquet(?)",
        [rels]).fetchall()
    return None, users


def _polars_ndcg(ranked, rels):
    """(mean NDCG@10, users) from `ranked`, a polars LazyFrame of (user_id, item_id, rank) holding
    each user's first K items, and the judgments file `rels`."""
    import polars as pl
    judged = pl.scan_parquet(rels).select("user_id", "item_id",
                                         pl.col("relevance").cast(pl.Float64))
    positive = judged.filter(pl.col("relevance") > 0)
    dcg = (ranked.join(positive, on=["user_id", "item_id"])
           .group_by("user_id")
           .agg(dcg=(pl.col("relevance") / (pl.col("rank") + 1).log(2)).sum()))
    idcg = (positive.group_by("user_id")
            .agg(top=pl.col("relevance").sort(descending=True).head(K))
            .select("user_id", idcg=pl.col("top").list.eval(
                pl.element() / (pl.int_range(pl.len()) + 2).log(2)).list.sum()))
    users = judged.select("user_id").unique()
    scores = (users.join(dcg, on="user_id", how="left").join(idcg, on="user_id", how="left")
              .select(ndcg=pl.when(pl.col("idcg") > 0)
                      .then(pl.col("dcg").fill_null(0.0) / pl.col("idcg")).otherwise(0.0)))
    out = scores.select(pl.col("ndcg").mean(), pl.len()).collect()
    return out["ndcg"][0], out["len"][0]


def _scan_long(order, recs, rels, threads, memory_limit):
    """The long scan floor: DuckDB reads user_id, item_id and `order` of the long file `recs`,
    and the judgments' columns, into trivial aggregates. Returns (None, None)."""
    con = _connect(threads, memory_limit)
    con.execute(f"SELECT count(*), sum(user_id + item_id), sum({order}) FROM read_parquet(?)",
                [recs]).fetchall()
    con.execute("SELECT count(*), sum(user_id + item_id), sum(relevance) FROM read_parquet(?)",
                [rels]).fetchall()
    return None, None


def tool_scan_long_rank(recs, rels, threads=None, memory_limit=None):
    return _scan_long("rank", recs, rels, threads, memory_limit)


def tool_scan_long_score(recs, rels, threads=None, memory_limit=None):
    return _scan_long("score", recs, rels, threads, memory_limit)


def tool_polars(recs, rels, threads=None, memory_limit=None):
    import polars as pl
    ranked = (pl.scan_parquet(recs)
              .select("user_id", pl.col("items").list.head(K).alias("item_id"))
              .with_columns(rank=pl.int_ranges(1, pl.col("item_id").list.len() + 1))
              .explode(["item_id", "rank"]))
    return _polars_ndcg(ranked, rels)


def tool_polars_long_rank(recs, rels, threads=None, memory_limit=None):
    import polars as pl
    ranked = (pl.scan_parquet(recs).select("user_id", "item_id", "rank")
              .filter(pl.col("rank") <= K))
    return _polars_ndcg(ranked, rels)


def tool_polars_long_score(recs, rels, threads=None, memory_limit=None):
    import polars as pl
    ranked = (pl.scan_parquet(recs)
              .select("user_id", "item_id",
                      rank=pl.col("score").rank("ordinal", descending=True).over("user_id"))
              .filter(pl.col("rank") <= K))
    return _polars_ndcg(ranked, rels)


# The hand-written query; {ranked} gives each user's first 10 items as (user_id, item_id, rank).
DUCKDB_SQL = """
WITH ranked AS ({ranked}),
judged AS (SELECT user_id, item_id, relevance::DOUBLE AS relevance FROM read_parquet($rels)),
dcg AS (
    SELECT user_id, sum(relevance / log2(rank + 1)) AS dcg
    FROM ranked JOIN judged USING (user_id, item_id)
    WHERE relevance > 0
    GROUP BY user_id),
ideal AS (
    SELECT user_id, relevance,
           row_number() OVER (PARTITION BY user_id ORDER BY relevance DESC) AS rank
    FROM judged WHERE relevance > 0),
idcg AS (
    SELECT user_id, sum(relevance / log2(rank + 1)) AS idcg
    FROM ideal WHERE rank <= 10 GROUP BY user_id),
users AS (SELECT DISTINCT user_id FROM judged)
SELECT avg(CASE WHEN idcg > 0 THEN coalesce(dcg, 0.0) / idcg ELSE 0.0 END), count(*)
FROM users LEFT JOIN dcg USING (user_id) LEFT JOIN idcg USING (user_id)
"""


RANKED = {
    "nested": """
    SELECT user_id, unnest(items[1:10]) AS item_id, generate_subscripts(items[1:10], 1) AS rank
    FROM read_parquet($recs)""",
    "long_rank": """
    SELECT user_id, item_id, rank FROM read_parquet($recs) WHERE rank <= 10""",
    "long_score": """
    SELECT user_id, item_id, rank FROM (
        SELECT user_id, item_id,
               row_number() OVER (PARTITION BY user_id ORDER BY score DESC) AS rank
        FROM read_parquet($recs))
    WHERE rank <= 10""",
}


def _duckdb_ndcg(shape, recs, rels, threads, memory_limit):
    con = _connect(threads, memory_limit)
    (mean, users), = con.execute(DUCKDB_SQL.format(ranked=RANKED[shape]),
                                 {"recs": recs, "rels": rels}).fetchall()
    return mean, users


def tool_duckdb_sql(recs, rels, threads=None, memory_limit=None):
    return _duckdb_ndcg("nested", recs, rels, threads, memory_limit)


def tool_duckdb_long_rank(recs, rels, threads=None, memory_limit=None):
    return _duckdb_ndcg("long_rank", recs, rels, threads, memory_limit)


def tool_duckdb_long_score(recs, rels, threads=None, memory_limit=None):
    return _duckdb_ndcg("long_score", recs, rels, threads, memory_limit)


def tool_pandas(recs, rels, threads=None, memory_limit=None):
    import numpy as np
    import pandas as pd
    r = pd.read_parquet(recs, dtype_backend="pyarrow")
    top = r["items"].list[:K]
    lengths = top.list.len().to_numpy(dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    ranked = pd.DataFrame({
        "user_id": np.repeat(r["user_id"].to_numpy(dtype=np.int64), lengths),
        "item_id": top.list.flatten().to_numpy(dtype=np.int64),
        "rank": np.arange(lengths.sum()) - np.repeat(starts, lengths) + 1,
    })
    j = pd.read_parquet(rels)
    j = j.astype({"user_id": np.int64, "item_id": np.int64, "relevance": np.float64})
    pos = j[j["relevance"] > 0]
    hits = ranked.merge(pos, on=["user_id", "item_id"])
    dcg = (hits["relevance"] / np.log2(hits["rank"] + 1)).groupby(hits["user_id"]).sum()
    ideal = pos.sort_values(["user_id", "relevance"], ascending=[True, False], kind="stable")
    ideal_pos = ideal.groupby("user_id").cumcount() + 1
    ideal = ideal[ideal_pos <= K]
    idcg = (ideal["relevance"] / np.log2(ideal_pos[ideal_pos <= K] + 1)).groupby(ideal["user_id"]).sum()
    users = pd.Index(j["user_id"].unique())
    d = dcg.reindex(users, fill_value=0.0).to_numpy()
    i = idcg.reindex(users, fill_value=0.0).to_numpy()
    ndcg = np.where(i > 0, d / np.where(i > 0, i, 1.0), 0.0)
    return float(ndcg.mean()), len(users)


def _top_k_lists(recs):
    """(user ids, per-user top-K item id lists) as Python objects, from the nested Parquet."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    t = pq.read_table(recs, columns=["user_id", "items"])
    top = pc.list_slice(t["items"], 0, K)
    return t["user_id"].to_pylist(), top.to_pylist()


def _judgments(rels):
    import pyarrow.parquet as pq
    t = pq.read_table(rels, columns=["user_id", "item_id", "relevance"])
    return t["user_id"].to_pylist(), t["item_id"].to_pylist(), t["relevance"].to_pylist()


def tool_pytrec_eval(recs, rels, threads=None, memory_limit=None):
    import pytrec_eval
    # pytrec_eval evaluates the queries of the run (a judged user absent from the run is left
    # out, not scored 0); the generator gives every judged user a ranking, so the sets agree.
    qrels: dict = {}
    for u, i, r in zip(*_judgments(rels)):
        qrels.setdefault(str(u), {})[str(i)] = int(r)
    scores = [float(s) for s in range(K, 0, -1)]
    run = {str(u): {str(i): s for i, s in zip(items, scores)}
           for u, items in zip(*_top_k_lists(recs))}
    per_user = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
    # Judged users missing from the run would score 0 under trec_eval -c; none are missing here.
    total = sum(v["ndcg_cut_10"] for v in per_user.values())
    return total / len(qrels), len(qrels)


def tool_ranx(recs, rels, threads=None, memory_limit=None):
    import ranx
    qrels: dict = {}
    for u, i, r in zip(*_judgments(rels)):
        qrels.setdefault(str(u), {})[str(i)] = int(r)
    scores = [float(s) for s in range(K, 0, -1)]
    run = {str(u): {str(i): s for i, s in zip(items, scores)}
           for u, items in zip(*_top_k_lists(recs))}
    q, r = ranx.Qrels(qrels), ranx.Run(run)
    # make_comparable: judged users absent from the run get an empty ranking (score 0), run
    # users absent from the judgments are dropped: the same as ndcg-duck's default.
    mean = ranx.evaluate(q, r, "ndcg@10", make_comparable=True)
    return float(mean), len(qrels)


TOOLS = {name[5:]: fn for name, fn in globals().items() if name.startswith("tool_")}


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description="Run one benchmarked tool; print JSON.")
    ap.add_argument("tool", choices=sorted(TOOLS))
    ap.add_argument("recs")
    ap.add_argument("rels")
    ap.add_argument("--threads")
    ap.add_argument("--memory-limit")
    args = ap.parse_args(argv)
    ndcg, users = TOOLS[args.tool](args.recs, args.rels, args.threads, args.memory_limit)
    print(json.dumps({"ndcg@10": None if ndcg is None else float(ndcg), "users": None if users is None else int(users)}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
