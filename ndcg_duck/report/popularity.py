"""--by item-popularity: each accuracy metric computed again over the judgments of one popularity
group's items only, one row per group, plus each group's share of what the users were shown.

Not a segment of users: a group restricts the judgments to its items, so recall within a group
is its relevant items found / its relevant items, precision its relevant items in the top k / k,
NDCG the DCG of its relevant items over their ideal DCG. The groups (sql/ndcg_segments.sql):
head and tail by tail@K's rule (--head-share of the catalogue, the most popular items in
--train), or --groups N ranges of train popularity (items no train user has: 'cold'). Each
group is scored by the run's own statement (evaluate.score_users) over the judgments of its
items, in the run's cursor; a user counts in a group when at least one of their relevant items
is in it (users with nothing relevant there are left out, as with --empty skip).
"""

from __future__ import annotations

from typing import NamedTuple

from .. import means, metrics as metric_names, outcome
from ..evaluation import beyond, evaluate, inputs, intervals as ci
from ..sqltext import ident, literal
from . import segments as segmenting
from .segments import Popularity

WHAT = ("relevant items of each group only: precision, recall and NDCG count the group's "
        "relevant items; users with one in the group; exposure: the group's share of the top k")


def item_groups_of(con, popularity: Popularity, settings: dict, options) -> tuple:
    """The table ndcg_item_groups (item_id, segment) in the run's cursor, ids as text when the
    judgments' item ids are of the other kind (integers, text). Returns the group of items it
    does not list ('tail' for head and tail, 'cold' for ranges: items no train user has) and
    whether ids are compared as text. Head and tail are tail@k's (options' --head-share,
    --tail-rule and --popularity-by, or --beyond-as's)."""
    cols = inputs.Columns.given(**settings)
    user, item = cols.user, cols.item
    what = inputs.attach_source(con, popularity.train, "ndcg_popt_src", None, "train").what
    schema = inputs.schema_of(con, "ndcg_popt_src", what)
    for column, flag in ((user, "--user-col"), (item, "--item-col")):
        inputs.need_column(schema, column, what, flag)
        inputs.need_id(schema[column], column, what)
    rels_type = {name: kind for name, kind, *_ in con.sql("DESCRIBE ndcg_rels").fetchall()}
    as_text = inputs.ids_as_text(rels_type["item_id"], schema[item])
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_popt AS SELECT "
                f"{inputs.id_column(user, schema[user], False)} AS user_id, "
                f"{inputs.id_column(item, schema[item], as_text)} AS item_id FROM ndcg_popt_src")
    catalogue = "NULL"
    if settings.get("items") is not None:
        items_what = inputs.attach_source(con, settings["items"], "ndcg_popi_src", None,
                                          "items").what
        kinds = inputs.schema_of(con, "ndcg_popi_src", items_what)
        inputs.need_column(kinds, item, items_what, "--item-col")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_popi AS SELECT "
                    f"{inputs.id_column(item, kinds[item], as_text)} AS item_id "
                    f"FROM ndcg_popi_src")
        catalogue = "'ndcg_popi'"
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_popc AS "
                f"FROM ndcg_beyond_catalogue({catalogue}, 'ndcg_popt')")
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_popp AS FROM ndcg_beyond_popularity("
                f"'ndcg_popt', 'ndcg_popc', {beyond.sql_args(options, beyond.POPULARITY_OPTIONS)})")
    if popularity.groups is None:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_item_groups AS "
                    "FROM ndcg_head_tail('ndcg_popp')")
        return "tail", as_text
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_groups AS FROM ndcg_popularity_groups("
                f"'ndcg_popp', (SELECT cuts FROM ndcg_popularity_quantiles('ndcg_popp', "
                f"{int(popularity.groups)})))")
    (cold,), = con.sql("SELECT ndcg_cold_segment()").fetchall()
    return cold, as_text


class Scored(NamedTuple):
    """A run's groups scored (score_groups): the options and accuracy measures they were scored
    with, the names of the metrics that are means over users, the group of unlisted items
    ('tail' or 'cold'), whether item ids compare as text, and the groups that have a relevant
    item (each group's users and values are in ndcg_pop_wide)."""

    options: object
    measures: list
    names: list
    unplaced: str
    as_text: bool
    found: list


def score_groups(ran, settings: dict, popularity: Popularity) -> Scored:
    """Score each popularity group of the run `ran` (evaluate.running's, its cursor open) per
    user, the one rule eval and compare share: ndcg_pop_wide (user_id, segment, one column per
    accuracy metric), a row per user and group with a relevant item of the group; and
    ndcg_item_groups (item_id, segment)."""
    con = ran.cursor
    options, measures, _ = outcome.plan(settings["k"], {n: v for n, v in settings.items()
                                                        if n != "k"})
    measures = metric_names.accuracy(measures)
    unplaced, as_text = item_groups_of(con, popularity, settings, options)
    found = score_in(con, options, measures, ran.loaded.layout, unplaced, as_text)
    return Scored(options, measures, averaged(measures), unplaced, as_text, found)


def averaged(measures) -> list:
    """The names of the measures a group's row holds as means over its users (the per-run ones,
    coverage and the like, have no per-user value to average): eval, compare and Spark alike."""
    return [m.name for m in measures if not metric_names.per_run(m.metric)]


def score_in(con, options, measures: list, layout: str, unplaced: str, as_text: bool) -> list:
    """Score each popularity group per user in `con` (views ndcg_recs, ndcg_rels and the table
    ndcg_item_groups; on Spark, a bucket's users in a worker): ndcg_pop_wide (user_id, segment,
    one column per accuracy measure), a row per user and group with a relevant item of the
    group. Returns the groups the judgments have an item in."""
    item = "r.item_id::VARCHAR" if as_text else "r.item_id"
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_pop_rels_all AS SELECT r.*, "
                f"coalesce(g.segment, {literal(unplaced)}) AS ndcg_group_ FROM ndcg_rels AS r "
                f"LEFT JOIN ndcg_item_groups AS g ON g.item_id = {item}")
    found = [name for (name,) in con.sql("SELECT DISTINCT ndcg_group_ FROM ndcg_pop_rels_all"
                                         ).fetchall()]
    con.execute("DROP TABLE IF EXISTS ndcg_pop_scores")
    evaluated = evaluate.macros_of(measures)[0]
    for number, group in enumerate(found):
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_pop_rels AS SELECT * EXCLUDE "
                    f"(ndcg_group_) FROM ndcg_pop_rels_all WHERE ndcg_group_ = {literal(group)}")
        evaluate.score_users(con, options, layout, "ndcg_recs", "ndcg_pop_rels", "ndcg_pop_all",
                             measures=measures)
        into = "INSERT INTO ndcg_pop_scores" if number else \
            "CREATE TEMP TABLE ndcg_pop_scores AS"
        con.execute(f"{into} SELECT {literal(group)} AS segment, * FROM {evaluated}("
                    f"'ndcg_pop_all', missing := {literal(options.missing)}, empty := 'skip')")
    if found:
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_pop_wide AS "
                    f"{evaluate.wide_sql(measures, 'user_id', 'ndcg_pop_scores', 'segment')}")
    else:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_pop_wide AS SELECT NULL AS user_id, "
                    "NULL::VARCHAR AS segment WHERE false")
    return found


def groups(con, scored: Scored) -> list:
    """Every group listed (after score_groups, for eval and compare): the groups of the items,
    those no user has a relevant item in too, and the group of unlisted items when a user has a
    relevant item there."""
    listed = [name for (name,) in con.sql("SELECT DISTINCT segment FROM ndcg_item_groups"
                                          ).fetchall()]
    return list(dict.fromkeys([*listed, *scored.found]))


def rows(ran, settings: dict, popularity: Popularity, spec=None) -> tuple:
    """The rows of --by item-popularity for the run `ran` (evaluate.running's, its cursor open):
    as segments.rows' ('(all)': the run's summary, with exposure 1), each group's metrics over
    the judgments of its items (score_groups) and its exposure@K, with spec (--ci) each row's
    intervals. Returns (rows, what the intervals said)."""
    con = ran.cursor
    scored = score_groups(ran, settings, popularity)
    names, found = scored.names, scored.found
    counts = dict(con.sql("SELECT segment, count(*) FROM ndcg_pop_wide GROUP BY segment"
                          ).fetchall())
    means_of = means.exact_means(con, "ndcg_pop_wide", {m: ident(m) for m in names},
                                 groups=("segment",)) if found else {}
    out, centres = listed(groups(con, scored), counts, ran.evaluation.summary, means_of, names,
                          scored.unplaced)
    told = ci.said()
    if spec is not None and found:
        averaged = ci.averaged(names)
        intervals, told = ci.intervals_in(con, "ndcg_pop_wide", averaged, centres, spec,
                                          group="segment")
        with_intervals(out, intervals, averaged)
    with_exposure(out, exposures(ran, scored), scored.options.k)
    return out, told


def listed(names_of_groups: list, counts: dict, summary: dict, group_means: dict, names: list,
           unplaced: str) -> tuple:
    """The rows (segments.rows') of every group (names_of_groups, groups'; counts: {group: its
    users}, a group without one has 0), '(all)' the run's summary, each group's means
    group_means {(group, metric): exactly rounded mean}, however an engine added them up.
    Returns (rows, the centres of their intervals {(group or None, metric): mean})."""
    users = {name: counts.get(name) or 0 for name in names_of_groups}
    users[None] = summary["users"]
    centres = {(None, m): summary.get(m) for m in names}
    centres.update(group_means)
    return segmenting.rows(users, centres, names, unplaced), centres


def with_intervals(out: list, intervals: dict, averaged: list) -> None:
    """Each row's intervals ({(group or None, metric): (low, high)}) in row['intervals']."""
    for row in out:
        key = None if row["segment"] == segmenting.ALL else row["segment"]
        row["intervals"] = {m: intervals.get((key, m), (None, None)) for m in averaged}


def exposure_sql(options, layout: str, as_text: bool, unplaced: str) -> str:
    """The query of each group's exposure (ndcg_group_exposure: k, segment, shown, exposure)
    over the top k of the users of ndcg_recs and ndcg_rels, after score_in's ndcg_item_groups
    (on Spark, a bucket's in a worker: the driver adds up `shown`)."""
    from .. import statements

    top = "list_transform(top, lambda i: i::VARCHAR)" if as_text else "top"
    return (f"WITH {statements.ranked_cte(options, layout)}, "
            f"ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels', "
            f"{statements.judgments_args(options)})), "
            f"ndcg_tops_pop_ AS (SELECT user_id, k, {top} AS top FROM ndcg_beyond_tops("
            f"'ndcg_ranked_', 'ndcg_judgments_', {statements.ks(options)}, judged_only := "
            f"{statements.value(options.judged_only)})) "
            f"FROM ndcg_group_exposure('ndcg_tops_pop_', 'ndcg_item_groups', "
            f"{literal(unplaced)})")


def exposures(ran, scored: Scored) -> dict:
    """exposure@K of each group after score_groups: {(k, group): its share of the top-k places of
    the evaluated users} (a group never shown has none)."""
    con = ran.cursor
    query = exposure_sql(scored.options, ran.loaded.layout, scored.as_text, scored.unplaced)
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_pop_exposure AS {query}")
    return {(k, segment): float(share) for k, segment, _, share in
            con.sql("FROM ndcg_pop_exposure").fetchall()}


def exposure_name(k) -> str:
    return f"exposure@{'all' if k is None else k}"


def with_exposure(out: list, shares: dict, ks) -> None:
    """Add exposure@K to each row: the group's share of the top-k places of the evaluated users
    (shares {(k, group): share}; 1 on the row of every item; 0 for a group never shown)."""
    for k in ks:
        for row in out:
            row[exposure_name(k)] = 1.0 if row["segment"] == segmenting.ALL else \
                shares.get((k, row["segment"]), 0.0)
