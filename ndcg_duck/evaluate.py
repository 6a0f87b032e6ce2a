"""evaluate(): load the inputs, check them, run the macros, return the summary and per-user table."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from . import batches, inputs
from .errors import InputError
from .options import Options, label
from .sqlfiles import register


class Evaluation(NamedTuple):
    """summary: {'ndcg@K': mean, ..., 'users': evaluated, 'users_without_recommendations': n,
    'users_only_in_recommendations': n}; per_user: one row per evaluated user (or None)."""

    summary: dict
    per_user: Optional[pa.Table]


def evaluate(recs, rels, k=10, *, gain="linear", missing="zero", idcg_cutoff="k", empty="zero",
             max_depth=None, duplicates="error", ties="trec", gain_map=None, judged_only=False,
             unique_judgments=False, min_relevance=None,
             user_col="user_id", item_col="item_id", items_col="items", rank_col="rank",
             score_col="score", relevance_col="relevance", recs_format=None, rels_format=None,
             per_user=True, threads=None, memory_limit=None, temp_dir=None, batch_users=None,
             con=None) -> Evaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`.

    recs and rels are paths (Parquet, CSV, JSON; globs allowed), DuckDB relations, Arrow tables
    or pandas/polars DataFrames; a path with format 'trec' is a TREC run (recs) or qrels (rels).
    k is a cutoff, 'all', 'trec', or a list of them. gain_map is "LEVEL=GAIN,..." text or a
    {level: gain} dict. unique_judgments=True promises one judgment per (user, item) and skips
    the check for repeats. min_relevance: judgments below it are not relevant (gain 0, out of
    the ideal list), as trec_eval's -l and ranx's rel_lvl. Raises InputError for bad input or options. `con` is the DuckDB
    connection to work in (a new one by default); threads, memory_limit (e.g. '4GB') and
    temp_dir (where DuckDB spills what does not fit) are set on it. Large Parquet or in-memory
    recommendations are evaluated in batches of users (ranges of user ids) that fit the memory
    limit; batch_users sets how many users a batch holds (for any input).
    """
    options = Options(k=k, gain=gain, missing=missing, idcg_cutoff=idcg_cutoff, empty=empty,
                      max_depth=max_depth, duplicates=duplicates, ties=ties, gain_map=gain_map,
                      judged_only=judged_only, unique_judgments=unique_judgments,
                      min_relevance=min_relevance)
    if batch_users is not None and (isinstance(batch_users, bool) or not isinstance(batch_users, int)
                                    or batch_users < 1):
        raise InputError(f"batch_users {batch_users!r}: give a whole number of users >= 1",
                         usage=True)
    cols = inputs.Columns(user=user_col, item=item_col, items=items_col, rank=rank_col,
                          score=score_col, relevance=relevance_col)
    con = con if con is not None else duckdb.connect()
    _configure(con, threads, memory_limit, temp_dir)
    register(con)
    loaded = inputs.load(con, recs, rels, cols, recs_format, rels_format)
    try:
        return _run(con, options, loaded, cols.user, per_user, batch_users)
    except duckdb.Error as exc:
        raise InputError(_message(exc, loaded)) from None


def _configure(con, threads, memory_limit, temp_dir) -> None:
    """DuckDB's own limits: worker threads, memory before spilling, and where to spill."""
    settings = {"threads": threads, "memory_limit": memory_limit, "temp_directory": temp_dir}
    for name, value in settings.items():
        if value is None:
            continue
        try:
            con.execute(f"SET {name} = {inputs.literal(str(value))}")
        except duckdb.Error as exc:
            flag = {"temp_directory": "temp_dir"}.get(name, name)
            raise InputError(f"{flag} {value!r}: {str(exc).strip().splitlines()[0]}",
                             usage=True) from None


def _message(exc: Exception, loaded: inputs.Loaded) -> str:
    """A DuckDB error as a user message: the macros' own checks name the input they read."""
    text = str(exc).strip().splitlines()[0]
    found = re.search(r"ndcg-duck: (recommendations|relevance): (.*)", text)
    if found is None:
        return f"evaluation failed: {text}"
    what = loaded.recs_what if found.group(1) == "recommendations" else loaded.rels_what
    return f"{what}: {found.group(2)}"


def user_scores_sql(options: Options, layout: str, recs: str = "ndcg_recs",
                    rels: str = "ndcg_rels") -> str:
    """The statement that scores every user of the relations `recs` (in `layout`) and `rels`
    (user_id, item_id, relevance): their ranking edge and the judgments edge, then
    ndcg_user_scores: one row per user and cutoff (user_id, k, dcg, idcg, ndcg, has_judgments,
    has_ranking)."""
    return (f"WITH {options.ranked_cte(layout, recs=recs)}, "
            f"ndcg_judgments_ AS (FROM ndcg_judgments('{rels}', {options.judgments_args()})) "
            f"FROM ndcg_user_scores('ndcg_ranked_', 'ndcg_judgments_', "
            f"{options.user_scores_args(layout)})")


def score_users(con, options: Options, layout: str, recs: str, rels: str, into: str,
                append: bool = False) -> None:
    """Score the users of already-loaded inputs: the relations `recs` and `rels` in `con` (views,
    tables or registered Arrow tables, with the columns inputs.load gives them) into the table
    `into` (created, or appended to), one row per user and cutoff with the has_judgments and
    has_ranking flags. Every user's rows from both inputs must be in the same call; coverage, means and the
    per-user table are the whole dataset's steps, in _run."""
    into_sql = f"INSERT INTO {into}" if append else f"CREATE OR REPLACE TEMP TABLE {into} AS"
    con.execute(f"{into_sql} {user_scores_sql(options, layout, recs, rels)}")


def _run(con, options: Options, loaded: inputs.Loaded, user_col: str, per_user: bool,
         batch_users: Optional[int]) -> Evaluation:
    # counting the users of a CSV or JSON file would read it once more: one batch, unless asked
    size = batch_users or (batches.users_per_batch(con) if loaded.recs_countable else None)
    ranges = batches.user_ranges(con, "ndcg_recs", size) if size else batches.EVERYONE
    for number, users in enumerate(ranges):
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_batch AS FROM ndcg_recs WHERE {users}")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_batch AS FROM ndcg_rels WHERE {users}")
        score_users(con, options, loaded.layout, "ndcg_recs_batch", "ndcg_rels_batch", "ndcg_all",
                    append=number > 0)
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result AS "
                f"FROM ndcg_evaluated('ndcg_all', {options.evaluated_args()})")
    (judged, unranked, unjudged), = con.sql(
        "SELECT users_judged, users_unranked, users_unjudged FROM ndcg_coverage('ndcg_all')"
    ).fetchall()
    if judged == unranked:
        raise InputError(_no_overlap(con, loaded))
    rows = con.sql("SELECT k, ndcg, users FROM ndcg_summary('ndcg_result')").fetchall()
    means = {k: mean for k, mean, _ in rows}
    users = max((count for _, _, count in rows), default=0)
    summary = {f"ndcg@{label(k)}": means.get(k) for k in options.k}
    summary.update(users=users, users_without_recommendations=unranked,
                   users_only_in_recommendations=unjudged)
    table = con.sql(_wide_sql(options, user_col)).to_arrow_table() if per_user else None
    return Evaluation(summary, table)


def _no_overlap(con, loaded: inputs.Loaded) -> str:
    """No judged user has a ranked item: almost always mismatched ids, never a real score of 0."""
    (recs_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_recs").fetchall()
    (rels_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_rels").fetchall()
    return (f"no user of the {loaded.rels_what} has recommendations in the {loaded.recs_what} "
            f"(user ids there look like {recs_user!r}, here like {rels_user!r}): check "
            f"--user-col and that both files use the same ids")


def _wide_sql(options: Options, user_col: str) -> str:
    """One row per user: the user id, then dcg@K, idcg@K, ndcg@K for each cutoff."""
    columns = []
    for k in options.k:
        match = "k IS NULL" if k is None else f"k = {int(k)}"
        for part in ("dcg", "idcg", "ndcg"):
            columns.append(f'any_value({part}) FILTER (WHERE {match}) AS "{part}@{label(k)}"')
    return (f"SELECT user_id AS {inputs.ident(user_col)}, {', '.join(columns)} "
            f"FROM ndcg_result GROUP BY user_id ORDER BY user_id")
