"""evaluate(): load the inputs, run the macros, return the summary and the per-user table."""

from __future__ import annotations

from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from . import inputs
from .errors import InputError
from .options import Options, label
from .sqlfiles import register


class Evaluation(NamedTuple):
    """summary: {'ndcg@K': mean, ..., 'users': evaluated, 'users_without_recommendations': n,
    'users_only_in_recommendations': n}; per_user: one row per evaluated user (or None)."""

    summary: dict
    per_user: Optional[pa.Table]


def evaluate(recs, rels, k=10, *, gain="linear", missing="zero", idcg_cutoff="k", empty="zero",
             max_depth=None, ties="trec", gain_map=None, judged_only=False, user_col="user_id",
             item_col="item_id", items_col="items", rank_col="rank", score_col="score",
             relevance_col="relevance", recs_format=None, rels_format=None, per_user=True,
             con=None) -> Evaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`.

    recs and rels are paths (Parquet, CSV, JSON; globs allowed), DuckDB relations, Arrow tables
    or pandas/polars DataFrames; a path with format 'trec' is a TREC run (recs) or qrels (rels).
    k is a cutoff, 'all', 'trec', or a list of them. gain_map is "LEVEL=GAIN,..." text or a
    {level: gain} dict. Raises InputError for bad input or options. `con` is the DuckDB
    connection to work in (a new one by default).
    """
    options = Options(k=k, gain=gain, missing=missing, idcg_cutoff=idcg_cutoff, empty=empty,
                      max_depth=max_depth, ties=ties, gain_map=gain_map, judged_only=judged_only)
    cols = inputs.Columns(user=user_col, item=item_col, items=items_col, rank=rank_col,
                          score=score_col, relevance=relevance_col)
    con = con if con is not None else duckdb.connect()
    register(con)
    layout = inputs.load(con, recs, rels, cols, recs_format, rels_format)
    try:
        return _run(con, options, layout, cols.user, per_user)
    except duckdb.Error as exc:
        raise InputError(f"evaluation failed: {str(exc).strip().splitlines()[0]}") from None


def _ranked_cte(options: Options, layout: str) -> str:
    return (f"ndcg_ranked_ AS (FROM {inputs.RANKED_MACROS[layout]}('ndcg_recs', "
            f"{options.ranked_args(layout)}))")


def scores_sql(options: Options, layout: str) -> str:
    """The query for the per-user scores (ndcg_scores) of the views that inputs.load made."""
    return (f"WITH {_ranked_cte(options, layout)} "
            f"SELECT * FROM ndcg_scores('ndcg_ranked_', 'ndcg_rels', {options.scores_args()})")


def _run(con, options: Options, layout: str, user_col: str, per_user: bool) -> Evaluation:
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_result AS {scores_sql(options, layout)}")
    means = dict(con.sql("SELECT k, ndcg FROM ndcg_summary('ndcg_result')").fetchall())
    (users,), = con.sql("SELECT count(DISTINCT user_id) FROM ndcg_result").fetchall()
    (unranked, unjudged), = con.sql(
        f"WITH {_ranked_cte(options, layout)} SELECT users_unranked, users_unjudged "
        f"FROM ndcg_coverage('ndcg_ranked_', 'ndcg_rels')").fetchall()
    summary = {f"ndcg@{label(k)}": means.get(k) for k in options.k}
    summary.update(users=users, users_without_recommendations=unranked,
                   users_only_in_recommendations=unjudged)
    table = con.sql(_wide_sql(options, user_col)).to_arrow_table() if per_user else None
    return Evaluation(summary, table)


def _wide_sql(options: Options, user_col: str) -> str:
    """One row per user: the user id, then dcg@K, idcg@K, ndcg@K for each cutoff."""
    columns = []
    for k in options.k:
        match = "k IS NULL" if k is None else f"k = {int(k)}"
        for part in ("dcg", "idcg", "ndcg"):
            columns.append(f'any_value({part}) FILTER (WHERE {match}) AS "{part}@{label(k)}"')
    return (f"SELECT user_id AS {inputs.ident(user_col)}, {', '.join(columns)} "
            f"FROM ndcg_result GROUP BY user_id ORDER BY user_id")
