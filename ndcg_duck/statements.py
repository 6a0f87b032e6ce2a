"""The SQL the engines send for the options: the named arguments of the macros (`name := value`)
and the ranking edge's CTE, written from a checked `options.Options`.

Which argument list an option joins (`Param.sql`) and its name there (`Param.sql_name`) are the
registry's (options.py); its value is written by its type, as the checks leave it (`value`).
Text, lists and maps are quoted by sqltext.py."""

from __future__ import annotations

from . import options as registry
from .options import Options
from .sqltext import bigint_list, double_map, literal

RANKED_MACROS = {"lists": "ndcg_ranked_lists", "ranks": "ndcg_ranked_ranks",
                 "scores": "ndcg_ranked_scores"}


def value(checked) -> str:
    """A checked option value as a SQL literal: None is NULL, a bool true or false, a number
    itself, a tuple of (level, gain) pairs a MAP(DOUBLE, DOUBLE) (gain_map), a tuple of floats a
    DOUBLE[] (utility_weights), another tuple a BIGINT[] (k's cutoffs, None for 'all'), anything
    else a string literal."""
    if checked is None:
        return "NULL"
    if isinstance(checked, bool):
        return "true" if checked else "false"
    if isinstance(checked, int):
        return str(checked)
    if isinstance(checked, float):
        return repr(checked)
    if isinstance(checked, (tuple, list)):
        if checked and all(isinstance(piece, tuple) for piece in checked):
            return double_map(checked)
        if checked and all(isinstance(piece, float) for piece in checked):  # utility_weights
            return "[" + ", ".join(repr(piece) for piece in checked) + "]::DOUBLE[]"
        return bigint_list(checked)
    return literal(checked)


def sql_args(options: Options, macro: str, layout: str = "scores") -> str:
    """The named arguments (`name := literal`) of every option that joins the argument list
    `macro` ('judgments', 'scores' or 'evaluated'), for this recommendation layout."""
    return ", ".join(f"{p.sql_name or p.name} := {value(options.value_for(p.name, layout))}"
                     for p in registry.PARAMS if p.sql == macro)


def ks(options: Options) -> str:
    """The cutoffs, a BIGINT[] (NULL for 'all')."""
    return bigint_list(options.k)


def depth(options: Options, layout: str) -> str:
    """How many items of each ranking to read, as the SQL that ndcg_depth computes."""
    return (f"ndcg_depth({ks(options)}, {value(options.max_depth)}, judged_only := "
            f"{value(options.judged_only)}, ties := {literal(options.value_for('ties', layout))})")


# the train interactions as the run reads them (user_id, item_id): evaluation/beyond.py's view
TRAIN = "ndcg_train"


def shown_depth(options: Options) -> str:
    """How many items of each ranking were shown, as SQL: the largest cutoff, no more than
    max_depth (NULL: all), whatever judged_only and ties do to what counts."""
    return f"ndcg_depth({ks(options)}, {value(options.max_depth)})"


def ranked_cte(options: Options, layout: str, recs: str = "ndcg_recs", shown: bool = False
               ) -> str:
    """SQL CTEs that end in `ndcg_ranked_`: the ranked items of `recs` (in `layout`) that can
    count. With duplicates 'first', repeats are dropped before the depth cut; with exclude_seen,
    each user's train items (TRAIN) too (sql/ndcg_leaks.sql's ndcg_unseen). shown=True: the
    rankings as shown instead, cut at shown_depth, train items kept, ties in trec_eval's
    order."""
    macro = RANKED_MACROS[layout]
    ties = (f", ties := {literal('trec' if shown else options.ties)}" if layout == "scores"
            else "")
    cut = shown_depth(options) if shown else depth(options, layout)
    unseen = options.exclude_seen and not shown
    # with exclude_seen the cut comes after the train items are taken out
    last, first = ("ndcg_once_", "NULL") if unseen else ("ndcg_ranked_", cut)
    if options.duplicates == "first":
        ctes = (f"ndcg_every_ AS (FROM {macro}('{recs}', depth := NULL{ties})), "
                f"{last} AS (FROM ndcg_first_occurrence('ndcg_every_', depth := {first}))")
    else:
        ctes = f"{last} AS (FROM {macro}('{recs}', depth := {first}{ties}))"
    if unseen:
        ctes += f", ndcg_ranked_ AS (FROM ndcg_unseen('{last}', '{TRAIN}', depth := {cut}))"
    return ctes


def judgments_args(options: Options) -> str:
    """The named arguments of ndcg_judgments (the judgments edge) for these options."""
    return sql_args(options, "judgments")


def tops_query(options: Options, ranked: str, rels: str, ks: str, ctes: tuple = ()) -> str:
    """The top_k lists (user_id, k, top) at the cutoffs `ks` (a BIGINT list literal) of the
    rankings `ranked` (a ranking edge's result, by name; `ctes`: WITH clauses it needs). Without
    judged_only the judgments `rels` are not read (ndcg_beyond_lists); with it, ndcg_beyond_tops
    takes the unjudged items out as the core does."""
    ctes = list(ctes)
    if options.judged_only:
        ctes.append(f"ndcg_judgments_ AS (FROM ndcg_judgments('{rels}', "
                    f"{judgments_args(options)}))")
        select = (f"SELECT user_id, k, top FROM ndcg_beyond_tops('{ranked}', 'ndcg_judgments_', "
                  f"ks := {ks}, judged_only := true)")
    else:
        select = f"SELECT user_id, k, top FROM ndcg_beyond_lists('{ranked}', ks := {ks})"
    return (f"WITH {', '.join(ctes)} " if ctes else "") + select


def user_scores_args(options: Options, layout: str) -> str:
    """The named arguments of ndcg_user_scores for these options and recommendation layout."""
    return sql_args(options, "scores", layout)


def evaluated_args(options: Options) -> str:
    """The named arguments of ndcg_evaluated for these options."""
    return sql_args(options, "evaluated")
