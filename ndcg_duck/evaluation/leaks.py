"""What would mislead, counted on the default engine by sql/ndcg_leaks.sql's macros: recommended
items their user has in train (--train; --exclude-seen takes them out), tied scores, and the
per-item view (--per-item). The warnings' text is outcome.py's (seen_note, ties_note).

The tables it makes in the run's cursor: ndcg_item_tops (user_id, k, top: each user's top_k at
every cutoff, appended per batch) for the per-item view.
"""

from __future__ import annotations

from typing import Optional

from .. import sqltext, statements
from ..errors import InputError
from ..options import Options
from . import inputs

EVALUATED = "(SELECT DISTINCT user_id FROM ndcg_result)"


def _types(con, relation: str) -> dict:
    return {row[0]: row[1] for row in con.sql(f"DESCRIBE {relation}").fetchall()}


def _recs_types(con, layout: str) -> tuple:
    """The recommendations' (user id type, item id type)."""
    schema = _types(con, "ndcg_recs")
    item = inputs.element_type(schema["items"]) if layout == "lists" else schema["item_id"]
    return schema["user_id"], item


def differ(con, layout: str) -> Optional[str]:
    """How the ids of train (the view statements.TRAIN) and of the recommendations differ in
    kind (integers and text), as 'user ids are INTEGER in the recommendations and VARCHAR in
    train'; None when both kinds agree, so that the two are joined as they are."""
    theirs = _types(con, statements.TRAIN)
    for kind, ours, column in zip(("user", "item"), _recs_types(con, layout),
                                  ("user_id", "item_id")):
        if inputs.ids_as_text(ours, theirs[column]):
            return f"{kind} ids are {ours} in the recommendations and {theirs[column]} in"
    return None


def needs_train(exclude_seen: bool, train) -> None:
    """--exclude-seen needs --train (train: as given, or None): a usage error, before any work
    (both engines)."""
    if exclude_seen and train is None:
        raise InputError("--exclude-seen needs --train, the interactions the system learned "
                         "from (rows of user and item)", usage=True)


def check(con, options: Options, layout: str, train_what: Optional[str]) -> None:
    """--exclude-seen needs --train, whose ids join the recommendations' as they are."""
    if not options.exclude_seen:
        return
    needs_train(options.exclude_seen, train_what)
    differs = differ(con, layout)
    if differs:
        raise InputError(f"--exclude-seen: {differs} the {train_what}: give both files ids of "
                         f"one type (integers or text)")


def _comparable(con, layout: str, lists: str) -> tuple:
    """CTEs (text, to follow others) and the names of `lists` (user_id, items) and of train as
    compared: as they are, or both as text when their ids differ in kind."""
    if not differ(con, layout):
        return "", f"'{lists}'", f"'{statements.TRAIN}'"
    return (f", ndcg_lists_text_ AS (SELECT user_id::VARCHAR AS user_id, items::VARCHAR[] AS "
            f"items FROM {lists}), ndcg_train_text_ AS (SELECT user_id::VARCHAR AS user_id, "
            f"item_id::VARCHAR AS item_id FROM {statements.TRAIN})",
            "'ndcg_lists_text_'", "'ndcg_train_text_'")


TRAIN_LISTS = "ndcg_train_lists_"


def train_lists(con) -> str:
    """The table TRAIN_LISTS: train's rows (the view statements.TRAIN) grouped per user
    (ndcg_train_lists), made by the first step of the run that reads it (the seen-items check,
    popularity) and shared by the others: its name. beyond.load drops it with the view it was
    made from (forget_train_lists)."""
    con.execute(f"CREATE TEMP TABLE IF NOT EXISTS {TRAIN_LISTS} AS "
                f"FROM ndcg_train_lists('{statements.TRAIN}')")  # an existing one: not run
    return TRAIN_LISTS


def forget_train_lists(con) -> None:
    """Drop TRAIN_LISTS (train_lists), made from an earlier view of train."""
    con.execute(f"DROP TABLE IF EXISTS {TRAIN_LISTS}")


def add_seen(con, options: Options, layout: str, ranked: str, append: bool) -> None:
    """Without exclude_seen: append to ndcg_seen_rows (created by the first batch) the items of
    the rankings `ranked` (ranked_table's), cut where they were shown (statements.shown_depth),
    that their user has in train: seen() counts them, ranking nothing again. Ids of one kind
    meet train's rows grouped per user (train_lists, ndcg_seen_entries_of), made once per run;
    ids compared as text meet train's rows (ndcg_seen_entries)."""
    into = "INSERT INTO ndcg_seen_rows" if append else \
        "CREATE OR REPLACE TEMP TABLE ndcg_seen_rows AS"
    text, lists, train = _comparable(con, layout, "ndcg_shown_")
    found = (f"ndcg_seen_entries({lists}, {train})" if text else
             f"ndcg_seen_entries_of({lists}, '{train_lists(con)}')")
    con.execute(f"{into} WITH ndcg_shown_ AS (SELECT user_id, list_slice(items, 1, coalesce("
                f"{statements.shown_depth(options)}, len(items))) AS items FROM {ranked}){text} "
                f"FROM {found}")


def seen(con, options: Options, layout: str, train_what: str) -> tuple:
    """outcome.seen_note's counts among the evaluated users: from add_seen's rows, or with
    exclude_seen (whose rankings lost those items) from the rankings as shown
    (statements.ranked_cte, shown=True) against train (ndcg_seen); with the depth and the train
    input's name. Ids are compared as text when their kinds differ."""
    if not options.exclude_seen:
        found = ("WITH ndcg_seen_ AS (FROM ndcg_seen_rows SEMI JOIN "
                 f"{EVALUATED} AS e USING (user_id)) SELECT *, "
                 f"{statements.shown_depth(options)} FROM ndcg_seen_of('ndcg_seen_')")
    else:
        ranked = statements.ranked_cte(options, layout, recs="ndcg_recs_evaluated_", shown=True)
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_evaluated_ AS FROM ndcg_recs "
                    f"SEMI JOIN {EVALUATED} AS e USING (user_id)")
        text, lists, train = _comparable(con, layout, "ndcg_ranked_")
        found = (f"WITH {ranked}{text} SELECT *, {statements.shown_depth(options)} "
                 f"FROM ndcg_seen({lists}, {train})")
    (users, items, user, item, depth), = con.sql(found).fetchall()
    return (users, items, user, item), depth, train_what


SHORT_SAMPLE = 100_000  # rows read first to tell short lists (folds): 0.06 CPU s of a TREC run
WHOLE_EDGES = ("ndcg_ranked_scores_tied_all", "ndcg_ranked_scores_tied_short")


def folds(con, options: Options, layout: str) -> Optional[str]:
    """The ranking edge that counts the tied scores as it ranks, sparing ndcg_ties' pass of its
    own over every row (reading and checking them a second time), or None: for a ranking by
    score, judged_only off and no items dropped before the cut (duplicates 'first',
    exclude_seen), ndcg_ranked_scores_tied when the top-n variant takes the depth (then the
    depth shown; ties 'average': _average_edge); with ties in trec_eval's order and no depth,
    ndcg_ranked_scores_tied_short if the first SHORT_SAMPLE rows of ndcg_recs say the lists are
    short (ndcg_lists_short: a guess that only decides the cost, both give the same rankings),
    else ndcg_ranked_scores_tied_all."""
    if (layout != "scores" or options.judged_only or options.duplicates == "first"
            or options.exclude_seen):
        return None
    if options.ties == "average":  # the top-n edge returns a tie group straddling the depth
        # whole, so the depth is the largest cutoff, not one max_depth cuts each ranking at
        return _average_edge(con, options)
    depth = statements.shown_depth(options)
    (top, whole), = con.sql(f"SELECT ndcg_top_depth({depth}) IS NOT NULL, {depth} IS NULL"
                            ).fetchall()
    if top:
        return "ndcg_ranked_scores_tied"
    if not whole:
        return None
    (short,), = con.sql(f"FROM ndcg_lists_short('ndcg_recs', {SHORT_SAMPLE})").fetchall()
    return "ndcg_ranked_scores_tied_short" if short else "ndcg_ranked_scores_tied_all"


def _average_edge(con, options: Options) -> Optional[str]:
    """folds for ties 'average': ndcg_ranked_scores_tied (ties 'average', ndcg_ranked_scores_top_
    average) when its top-n variant takes the largest cutoff and no max_depth cuts the rankings
    (a cut ranking averages a tie only over its positions shown), else None: the edge that
    ranks every row (ndcg_ranked_scores_all), and ndcg_ties' pass."""
    if options.max_depth is not None:
        return None
    (top,), = con.sql(f"SELECT ndcg_top_depth({statements.shown_depth(options)}) IS NOT NULL"
                      ).fetchall()
    return "ndcg_ranked_scores_tied" if top else None


def start_tied(con) -> None:
    """The table ndcg_tied_users (user_id, tied: the user's tied rows) that ranked_table fills,
    batch by batch, when the ranking edge counts the tied scores (folds), empty."""
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_tied_users AS "
                "SELECT user_id, 0::BIGINT AS tied FROM ndcg_recs LIMIT 0")


def tied(con, options: Options, folded: Optional[str] = None) -> tuple:
    """outcome.ties_note's counts: the tied scores among the evaluated users' rows of a ranking
    by score, within the depth shown; with the depth. folded (folds): as the ranking edge
    counted them into ndcg_tied_users (ranked_table); otherwise by a pass of their own over the
    rows (ndcg_ties)."""
    depth = statements.shown_depth(options)
    if folded:
        found = (f"WITH ndcg_tied_ AS (FROM ndcg_tied_users SEMI JOIN {EVALUATED} AS e "
                 f"USING (user_id)) SELECT *, {depth} FROM ndcg_ties_of('ndcg_tied_')")
    else:
        found = (f"WITH ndcg_scored_ AS (FROM ndcg_recs SEMI JOIN {EVALUATED} AS e "
                 f"USING (user_id)) SELECT *, {depth} "
                 f"FROM ndcg_ties('ndcg_scored_', depth := {depth})")
    (users, count, user, depth), = con.sql(found).fetchall()
    return (users, count, user), depth


# --- the per-item view --------------------------------------------------------------------------

def ranked_table(con, options: Options, layout: str, recs: str, folded: Optional[str] = None
                 ) -> str:
    """The ranking edge's result for `recs` (in `layout`), as every metric reads it, made once
    into the table ndcg_ranked_batch (the batch's scores and per-item lists read it): its name.
    folded (folds): the edge that also counts each user's tied scores (ndcg_ranked_scores_tied,
    or one of WHOLE_EDGES, a column tied that the metrics do not read), whose users with a tie
    are appended to ndcg_tied_users (start_tied) for tied()."""
    if folded in WHOLE_EDGES:
        edge = f"ndcg_ranked_ AS (FROM {folded}('{recs}'))"
    elif folded:
        edge = (f"ndcg_ranked_ AS (FROM ndcg_ranked_scores_tied('{recs}', "
                f"depth := {statements.shown_depth(options)}, "
                f"ties := {sqltext.literal(options.ties)}))")
    else:
        edge = statements.ranked_cte(options, layout, recs=recs)
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_ranked_batch AS WITH {edge} FROM ndcg_ranked_")
    if folded:
        con.execute("INSERT INTO ndcg_tied_users SELECT user_id, tied FROM ndcg_ranked_batch "
                    "WHERE tied > 0")
    return "ndcg_ranked_batch"


ROW_GROUP = 122_880  # DuckDB's rows per row group: the unit of work of a table's parallel scan


def spread(con, table: str) -> str:
    """A relation with exactly the rows of the table `table` (each once, as stored) that a
    statement reads on every thread: its name. DuckDB hands a table's scan to its threads one
    row group at a time, so a table of fewer rows than a row group is read, and all a statement
    does with its rows up to the next pipeline breaker is done, on one thread (the scores of a
    100k-query TREC run: 3.3 s of one core, the other idle). Grouped by rowid (every row its
    own group), the rows come out of a hash table its threads read in parallel. The table
    itself when it has more than one row group or DuckDB runs one thread."""
    [(rows, threads)] = con.execute(f"SELECT count(*), current_setting('threads') FROM {table}"
                                    ).fetchall()
    if rows >= ROW_GROUP or int(threads) < 2:
        return table
    con.execute(f"CREATE OR REPLACE TEMP VIEW {table}_spread AS "
                f"SELECT any_value(COLUMNS(*)) FROM {table} GROUP BY rowid")
    return f"{table}_spread"


def add_item_tops(con, options: Options, ranked: str, rels: str, append: bool) -> None:
    """Append to ndcg_item_tops (created by the first batch) the top_k lists at every cutoff of
    the rankings `ranked` (a ranking edge's result: ranked_table). Without judged_only the
    judgments `rels` are not read (per_item_sql keeps the evaluated users); with it,
    ndcg_beyond_tops takes the unjudged items out as the core does."""
    into = ("INSERT INTO ndcg_item_tops" if append
            else "CREATE OR REPLACE TEMP TABLE ndcg_item_tops AS")
    con.execute(f"{into} {statements.tops_query(options, ranked, rels, statements.ks(options))}")


def item_counts(con, options: Options, layout: str, train: bool) -> str:
    """The per-item view's counts (ndcg_item_counts) over the evaluated users' lists
    (ndcg_item_tops) and their relevant items, ids as text when train's (train: given) and
    the recommendations' differ in kind: the query of its rows (k, item_id, shown, relevant,
    hits). On Spark, each bucket's, added up on the driver (view_sql)."""
    text = train and differ(con, layout) is not None
    item = "item_id::VARCHAR" if text else "item_id"
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_tops_ AS SELECT user_id, k, "
                f"top{'::VARCHAR[]' if text else ''} AS top FROM ndcg_item_tops "
                f"SEMI JOIN {EVALUATED} AS e USING (user_id)")
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_item_entries_ AS "
                "FROM ndcg_beyond_entries('ndcg_item_tops_')")
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_relevant_ AS "
                f"WITH ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels', "
                f"{statements.judgments_args(options)}) SEMI JOIN {EVALUATED} AS e "
                f"USING (user_id)) "
                f"SELECT user_id, {item} AS item_id FROM ndcg_relevant_pairs('ndcg_judgments_')")
    return (f"FROM ndcg_item_counts('ndcg_item_entries_', 'ndcg_item_relevant_', "
            f"'{depths(con, statements.ks(options))}')")


def depths(con, ks: str, name: str = "ndcg_item_depths_") -> str:
    """The table `name` of the cutoffs `ks` (a BIGINT list literal) as ndcg_item_counts and
    ndcg_beyond_shown_of take them: one row, each cutoff's depth in a column named by it, 'all'
    for no cutoff (a column per cutoff is counted in the same group per item). Its name."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS PIVOT (SELECT coalesce(k::VARCHAR, "
                f"'all') AS k, depth FROM ndcg_cutoffs({ks})) ON k USING any_value(depth)")
    return name


def view_sql(con, counts: str, train: bool, item_col: str) -> str:
    """The per-item view's rows (ndcg_item_view_of) from its counts, the relation `counts`
    (item_counts' rows, or their sums), with train's popularity (ndcg_beyond_popularity over
    statements.TRAIN) when train is given, ids as text when the counts' are: k, the item column
    (item_col), shown, exposure_share, relevant, hits and with train train_users; by cutoff,
    most shown first."""
    kinds = {row[0]: row[1] for row in con.sql(f"DESCRIBE {counts}").fetchall()}
    item = "item_id::VARCHAR" if kinds["item_id"] == "VARCHAR" else "item_id"
    if train:
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_pop_ AS "
                    f"WITH ndcg_train_ AS (SELECT user_id, {item} AS item_id "
                    f"FROM {statements.TRAIN}), "
                    f"ndcg_catalogue_ AS (FROM ndcg_beyond_catalogue(NULL, 'ndcg_train_')) "
                    f"SELECT item_id, pop FROM ndcg_beyond_popularity('ndcg_train_', "
                    f"'ndcg_catalogue_')")
    else:
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_pop_ AS SELECT item_id, "
                    f"0::BIGINT AS pop FROM {counts} WHERE false")
    dropped = "" if train else ", train_users"
    return (f"SELECT k, item_id AS {sqltext.ident(item_col)}, * EXCLUDE (k, item_id{dropped}) "
            f"FROM ndcg_item_view_of('{counts}', 'ndcg_item_pop_') "
            f"ORDER BY k NULLS LAST, shown DESC, item_id::VARCHAR")


def per_item_sql(con, options: Options, layout: str, train: bool, item_col: str) -> str:
    """The per-item view's rows (ndcg_item_counts, then view_sql) over the evaluated users'
    lists (ndcg_item_tops) and their relevant items, with train's popularity when train is
    given: k, the item column (item_col), shown, exposure_share, relevant, hits and with train
    train_users; by cutoff, most shown first."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_counts_ AS "
                f"{item_counts(con, options, layout, train)}")
    return view_sql(con, "ndcg_item_counts_", train, item_col)
