"""evaluate(): load the inputs, check them, run the macros, return the summary and per-user table."""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple, Optional

import duckdb
import pyarrow as pa

from . import batches, inputs, metrics as metric_names
from .errors import InputError
from .options import Options
from .sqlfiles import register


class Evaluation(NamedTuple):
    """summary: {'ndcg@K': mean, ... (one entry per metric and cutoff), 'users': evaluated,
    'users_without_recommendations': n, 'users_only_in_recommendations': n}; per_user: one row per
    evaluated user (or None)."""

    summary: dict
    per_user: Optional[pa.Table]


def evaluate(recs, rels, k=10, *, metrics=None, gain="linear", missing="zero", idcg_cutoff="k", empty="zero",
             max_depth=None, duplicates="error", ties="trec", gain_map=None, judged_only=False,
             unique_judgments=False, min_relevance=None,
             user_col="user_id", item_col="item_id", items_col="items", rank_col="rank",
             score_col="score", relevance_col="relevance", recs_format=None, rels_format=None,
             per_user=True, threads=None, memory_limit=None, temp_dir=None, batch_users=None,
             con=None) -> Evaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`.

    recs and rels are paths (Parquet, CSV, JSON; globs allowed), DuckDB relations, Arrow tables
    or pandas/polars DataFrames; a path with format 'trec' is a TREC run (recs) or qrels (rels).
    k is a cutoff, 'all', 'trec', or a list of them. metrics names what to compute (a name or a
    list of them, as the CLI's -m; default 'ndcg'); a name without @K takes the cutoffs k.
    gain_map is "LEVEL=GAIN,..." text or a {level: gain} dict. unique_judgments=True promises one judgment per (user, item) and skips
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
    measures = metric_names.parse_metrics(metrics or None, options.k)
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
        return _run(con, options, loaded, cols.user, per_user, batch_users, measures)
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
                    rels: str = "ndcg_rels", measures: Optional[tuple] = None) -> str:
    """The statement that scores every user of the relations `recs` (in `layout`) and `rels`
    (user_id, item_id, relevance): their ranking edge and the judgments edge, then
    ndcg_user_scores: one row per user and cutoff (user_id, k, dcg, idcg, ndcg, has_judgments,
    has_ranking). With `measures` (metrics.parse_metrics) beyond NDCG and its parts,
    ndcg_user_metrics, which adds a column per metric (sql/ndcg_metrics.sql)."""
    macro = "ndcg_user_scores" if _core_only(measures) else "ndcg_user_metrics"
    return (f"WITH {options.ranked_cte(layout, recs=recs)}, "
            f"ndcg_judgments_ AS (FROM ndcg_judgments('{rels}', {options.judgments_args()})) "
            f"FROM {macro}('ndcg_ranked_', 'ndcg_judgments_', "
            f"{options.user_scores_args(layout)})")


def score_users(con, options: Options, layout: str, recs: str, rels: str, into: str,
                append: bool = False, measures: Optional[tuple] = None) -> None:
    """Score the users of already-loaded inputs: the relations `recs` and `rels` in `con` (views,
    tables or registered Arrow tables, with the columns inputs.load gives them) into the table
    `into` (created, or appended to), one row per user and cutoff with the has_judgments and
    has_ranking flags (and with `measures` beyond NDCG, a column per metric: user_scores_sql).
    Every user's rows from both inputs must be in the same call; coverage, means and the
    per-user table are the whole dataset's steps, in _run."""
    into_sql = f"INSERT INTO {into}" if append else f"CREATE OR REPLACE TEMP TABLE {into} AS"
    con.execute(f"{into_sql} {user_scores_sql(options, layout, recs, rels, measures)}")


def _core_only(measures: Optional[tuple]) -> bool:
    """Whether the core's macros compute every measure: NDCG and its parts take the core's
    ndcg_user_scores, anything else sql/ndcg_metrics.sql's ndcg_user_metrics (every metric)."""
    return measures is None or metric_names.core_only(measures)


def _run(con, options: Options, loaded: inputs.Loaded, user_col: str, per_user: bool,
         batch_users: Optional[int], measures: tuple) -> Evaluation:
    options = dataclasses.replace(options, k=metric_names.cutoffs(measures))
    # counting the users of a CSV or JSON file would read it once more: one batch, unless asked
    size = batch_users or (batches.users_per_batch(con) if loaded.recs_countable else None)
    ranges = batches.user_ranges(con, "ndcg_recs", size) if size else batches.EVERYONE
    for number, users in enumerate(ranges):
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_batch AS FROM ndcg_recs WHERE {users}")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_batch AS FROM ndcg_rels WHERE {users}")
        score_users(con, options, loaded.layout, "ndcg_recs_batch", "ndcg_rels_batch", "ndcg_all",
                    append=number > 0, measures=measures)
    evaluated, summed = (("ndcg_evaluated", "ndcg_summary") if _core_only(measures)
                         else ("ndcg_metrics_evaluated", "ndcg_metrics_summary"))
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result AS "
                f"FROM {evaluated}('ndcg_all', {options.evaluated_args()})")
    (judged, unranked, unjudged), = con.sql(
        "SELECT users_judged, users_unranked, users_unjudged FROM ndcg_coverage('ndcg_all')"
    ).fetchall()
    if judged == unranked:
        raise InputError(_no_overlap(con, loaded))
    summary = _summary(con.sql(f"FROM {summed}('ndcg_result')"), measures, options.k[0])
    summary.update(users_without_recommendations=unranked,
                   users_only_in_recommendations=unjudged)
    table = con.sql(_wide_sql(measures, user_col)).to_arrow_table() if per_user else None
    return Evaluation(summary, table)


def _summary(relation, measures: tuple, first_k) -> dict:
    """{measure name: its mean (a sum for counts)} and users, from a summary macro's rows (one per
    cutoff, a column per metric). Metrics without a cutoff are read from the first cutoff's row."""
    columns = relation.columns
    rows = {row[0]: dict(zip(columns, row)) for row in relation.fetchall()}
    summary = {}
    for measure in measures:
        k = measure.k if metric_names.has_cutoff(measure.metric) else first_k
        value = rows.get(k, {}).get(measure.metric)
        if value is not None and metric_names.counts(measure.metric):
            value = int(value)
        summary[measure.name] = value
    summary["users"] = max((row["users"] for row in rows.values()), default=0)
    return summary


def _no_overlap(con, loaded: inputs.Loaded) -> str:
    """No judged user has a ranked item: almost always mismatched ids, never a real score of 0."""
    (recs_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_recs").fetchall()
    (rels_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_rels").fetchall()
    return (f"no user of the {loaded.rels_what} has recommendations in the {loaded.recs_what} "
            f"(user ids there look like {recs_user!r}, here like {rels_user!r}): check "
            f"--user-col and that both files use the same ids")


def _wide_sql(measures: tuple, user_col: str) -> str:
    """One row per user: the user id, then a column per metric and cutoff (metrics.per_user_columns:
    with ndcg, dcg@K, idcg@K, ndcg@K for each cutoff)."""
    columns = []
    for measure in metric_names.per_user_columns(measures):
        if not metric_names.has_cutoff(measure.metric):
            match = ""  # on one row of the user only
        elif measure.k is None:
            match = " FILTER (WHERE k IS NULL)"
        else:
            match = f" FILTER (WHERE k = {int(measure.k)})"
        columns.append(f'any_value({measure.metric}){match} AS "{measure.name}"')
    return (f"SELECT user_id AS {inputs.ident(user_col)}, {', '.join(columns)} "
            f"FROM ndcg_result GROUP BY user_id ORDER BY user_id")
