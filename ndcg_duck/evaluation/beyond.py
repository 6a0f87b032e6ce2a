"""The beyond-accuracy metrics in a run (coverage, gini, entropy, novelty, popularity, tail, ild):
load --train and --items, keep each evaluated user's top_k lists as the batches score them, and
run sql/ndcg_beyond.sql's macros over them once every batch is in.

The views and tables it makes in the run's cursor: ndcg_train (user_id, item_id), ndcg_items
(item_id, category, embedding), ndcg_tops (user_id, k, top: every judged user's list at the
deepest cutoff, appended per batch; the evaluated users' become ndcg_deepest_, and the view
ndcg_tops_ cuts every cutoff's top_k from them), ndcg_entries_ (their items, one row each),
ndcg_shown_ (each shown item's exposure at every cutoff, one row per item), ndcg_item_values_
(each shown item's novelty, popularity and tail), then ndcg_beyond_users (user_id, k and a
column per per-user metric); popularity reads train's rows and the same grouped per user
(leaks.train_lists), which the seen-items check may have made.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import NamedTuple, Optional

import duckdb

from .. import sqltext, statements
from ..cutoffs import at_k
from . import batches, inputs, leaks
from .. import interrupts, metrics as metric_names
from ..errors import InputError, duckdb_message
from ..options import Options

PER_RUN = ("coverage", "gini", "entropy", "coverage_count", "personalization")
POPULAR = ("novelty", "popularity", "tail")  # the per-user metrics that read pop
# the options of each macro (options.BEYOND_DEFAULTS: what --beyond-as sets), passed by name
POPULARITY_OPTIONS = ("head_share", "popularity_by", "tail_rule")
USER_OPTIONS = ("novelty_by", "novelty_smoothing", "novelty_unseen", "tail_rule",
                "popularity_unseen")
RUN_OPTIONS = ("gini_items", "gini_divisor", "gini_orientation", "catalogue_size",
               "entropy_base", "entropy_divisor")
ILD_OPTIONS = ("ild_divisor", "ild_short")
NEEDS = {"train": "--train, the interactions the system learned from (rows of user and item)",
         "items": "--items, the catalogue (rows of item, and embedding or category)",
         "catalogue": "--items (the catalogue) or --train (its items are then the catalogue)"}


def sql_args(options: Options, names: tuple) -> str:
    """The options `names` as a macro's named arguments: "name := value, ..."."""
    def value(v):
        return repr(float(v)) if isinstance(v, (int, float)) else sqltext.literal(v)
    return ", ".join(f"{name} := {value(getattr(options, name))}" for name in names)


class Inputs(NamedTuple):
    """What the beyond-accuracy metrics read: which of train and items were given, how messages
    name them, and whether recommended item ids are compared with theirs as text."""

    train: Optional[str]  # how messages name the train input ('train file t.csv'), or None
    items: Optional[str]
    as_text: str  # a note when item ids are compared as text with the recommendations', or ''


def wanted(measures: tuple) -> tuple:
    """The beyond-accuracy measures among `measures`."""
    return tuple(m for m in measures if metric_names.beyond(m))


def require(measures: tuple, train, items) -> None:
    """A usage error naming the option to give when a beyond-accuracy measure lacks what it
    reads (train, items: as given, or None)."""
    for measure in wanted(measures):
        need = metric_names.BY_NAME[measure.metric].needs
        if (need == "train" and train is None) or (need == "items" and items is None) or \
                (need == "catalogue" and train is None and items is None):
            raise InputError(f"{measure.name} needs {NEEDS[need]}", usage=True)


def load(con, measures: tuple, train, items, cols: inputs.Columns, recs_item_type: str
         ) -> Optional[Inputs]:
    """Check that every beyond-accuracy measure has what it reads (a usage error names the
    option to give), and make the views ndcg_train and ndcg_items over the inputs given. None
    when no beyond-accuracy measure is asked for and no train given (train is read by the
    checks of seen items too: evaluation/leaks.py)."""
    if not wanted(measures) and train is None:
        return None
    require(measures, train, items)
    types = []
    train_what = items_what = None
    if train is not None:
        train_what = inputs.attach_source(con, train, "ndcg_train_src", None, "train").what
        schema = inputs.schema_of(con, "ndcg_train_src", train_what)
        for column, flag in ((cols.user, "--user-col"), (cols.item, "--item-col")):
            inputs.need_column(schema, column, train_what, flag)
            inputs.need_id(schema[column], column, train_what)
        train_user = inputs.id_column(cols.user, schema[cols.user], False)
        types.append((schema[cols.item], train_what))
    if items is not None:
        items_what = inputs.attach_source(con, items, "ndcg_items_src", None, "items").what
        schema = inputs.schema_of(con, "ndcg_items_src", items_what)
        inputs.need_column(schema, cols.item, items_what, "--item-col")
        inputs.need_id(schema[cols.item], cols.item, items_what)
        types.append((schema[cols.item], items_what))
        for column in ("embedding", "category"):
            if column in schema and not schema[column].endswith("[]") and \
                    not (column == "category" and schema[column] == "VARCHAR"):
                raise InputError(f"{items_what}: column {column!r} is {schema[column]}, not "
                                 f"a list" + (" of numbers" if column == "embedding" else
                                              " of texts or a text"))
    differ = [f"{kind} in the {what}" for kind, what in types
              if inputs.ids_as_text(recs_item_type, kind)]
    as_text = (f"item ids are {recs_item_type} in the recommendations and "
               f"{' and '.join(differ)}: compared as text, so '001' and '1' differ"
               if differ else "")
    # ids as the main inputs' are read (inputs.id_column): an ENUM or a UUID as its text, any id as
    # text when the recommendations' item ids are of the other kind
    item = {what: inputs.id_column(cols.item, kind, bool(as_text)) for kind, what in types}
    if train is not None:
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_train AS SELECT "
                    f"{train_user} AS user_id, {item[train_what]} AS item_id "
                    f"FROM ndcg_train_src")
        leaks.forget_train_lists(con)  # grouped from the view this one replaces
    if items is not None:
        schema = inputs.schema_of(con, "ndcg_items_src", items_what)
        category = ("NULL::VARCHAR[]" if "category" not in schema else
                    "[category]" if schema["category"] == "VARCHAR" else "category")
        embedding = "embedding" if "embedding" in schema else "NULL::DOUBLE[]"
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_items AS SELECT {item[items_what]} AS "
                    f"item_id, {category} AS category, {embedding} AS embedding "
                    f"FROM ndcg_items_src")
    return Inputs(train_what, items_what, as_text)


def cutoffs(measures: tuple) -> dict:
    """The cutoffs the beyond-accuracy measures among `measures` take, in order, each once (None:
    no cutoff)."""
    return dict.fromkeys(m.k for m in wanted(measures))


def deepest(measures: tuple) -> Optional[int]:
    """The deepest of cutoffs(measures): None (no cutoff) when one is None."""
    ks = list(cutoffs(measures))
    return None if None in ks else max(ks)


def start_tops(con, given: Inputs, recs_item_type: str) -> None:
    """The empty table ndcg_tops (user_id, k, top), typed as the recommendations (ndcg_recs) and,
    when item ids are compared as text, with top a list of texts: add_tops fills it."""
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_tops (user_id "
                f"{_column_type(con, 'ndcg_recs', 'user_id')}, k BIGINT, "
                f"top {'VARCHAR' if given.as_text else recs_item_type}[])")


def _column_type(con, relation: str, column: str) -> str:
    return dict((row[0], row[1]) for row in con.sql(f"DESCRIBE {relation}").fetchall())[column]


def add_tops(con, options: Options, layout: str, recs: str, rels: str, measures: tuple,
             ranked: Optional[str] = None) -> None:
    """Append to ndcg_tops the top_k lists of the users of `recs` and `rels` (one batch's views)
    at the deepest cutoff a beyond-accuracy measure takes (every other cutoff's list is its first
    k items: evaluated_tops cuts them where they are read): the ranking edge after max_depth,
    duplicates and judged_only, as every metric reads it (`ranked`: that edge's result for
    `recs`, made once per batch (leaks.ranked_table), else read from `recs` here). Without
    judged_only the judgments are not read (ndcg_beyond_lists: compute() keeps the evaluated
    users); with it, ndcg_beyond_tops takes the unjudged items out as the core does."""
    ks = sqltext.bigint_list([deepest(measures)])
    if ranked is not None:
        con.execute(f"INSERT INTO ndcg_tops {statements.tops_query(options, ranked, rels, ks)}")
        return
    ranked = statements.ranked_cte(options, layout, recs=recs)
    con.execute(f"INSERT INTO ndcg_tops "
                f"{statements.tops_query(options, 'ndcg_ranked_', rels, ks, (ranked,))}")


class Results(NamedTuple):
    """summary: {'coverage@10': value, 'novelty@10': mean, ..., 'users_without_ild@10': n};
    per_user: the table ndcg_beyond_users' columns (per-user metrics) or (); notes: warnings."""

    summary: dict
    per_user: tuple
    notes: list


def compute(con, options: Options, measures: tuple, given: Inputs, evaluated: str) -> Results:
    """The beyond-accuracy measures over the top_k lists of the users in `evaluated` (the run's
    evaluated users: a relation with user_id). Makes ndcg_beyond_users (user_id, k and a column
    per per-user metric asked for) for the per-user table; per-run metrics and the users without
    a value go to the summary."""
    evaluated_tops(con, evaluated, measures)
    try:
        prepare(con, options, measures, given, vectors=True)
        if any(m.metric in PER_RUN for m in wanted(measures)):
            con.execute("CREATE OR REPLACE TEMP TABLE ndcg_exposure_ AS "
                        "FROM ndcg_beyond_exposure_in('ndcg_shown_')")
            con.execute("CREATE OR REPLACE TEMP VIEW ndcg_keys_ AS SELECT k, (SELECT count(*) "
                        "FROM ndcg_deepest_) AS users FROM ndcg_cutoffs_")
        summary, notes = per_run(con, measures, given, shown="ndcg_shown_")
        columns = per_user(con, options, measures)
    except duckdb.Error as exc:
        raise InputError(check_message(exc, given)) from None
    return Results(summary, columns, notes)


def evaluated_tops(con, evaluated: str, measures: tuple) -> None:
    """ndcg_deepest_: the lists of ndcg_tops (each user's deepest) of the users in `evaluated`
    (ndcg_tops goes: the other users' rows are deleted and the table renamed, no list is
    copied), ndcg_cutoffs_ (k, depth: the cutoffs of `measures`), the view ndcg_tops_
    (user_id, k, top: their top_k at every cutoff, cut from the deepest lists as read:
    ndcg_beyond_cut; the steps here that need only users and cutoffs read ndcg_deepest_ and
    ndcg_cutoffs_, which DuckDB joins faster than it reads the view), ndcg_entries_: their items, unnested
    once (ndcg_beyond_entries), and ndcg_shown_: each of those items once with its exposure at
    every cutoff (shown_items), for the exposure, the per-user metrics and the
    outside-catalogue count."""
    con.execute(f"DELETE FROM ndcg_tops WHERE NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT user_id "
                f"FROM {evaluated}) AS e WHERE e.user_id = ndcg_tops.user_id)")
    con.execute("DROP VIEW IF EXISTS ndcg_tops_")
    con.execute("DROP TABLE IF EXISTS ndcg_deepest_")
    con.execute("ALTER TABLE ndcg_tops RENAME TO ndcg_deepest_")  # every later step reads these
    ks = sqltext.bigint_list(cutoffs(measures))
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_cutoffs_ AS SELECT k, depth "
                f"FROM ndcg_cutoffs({ks})")
    con.execute(f"CREATE TEMP VIEW ndcg_tops_ AS FROM ndcg_beyond_cut('ndcg_deepest_', {ks})")
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_entries_ AS "
                "FROM ndcg_beyond_entries('ndcg_deepest_')")
    shown_items(con, measures)


# Two aggregates group by item id alone: the shown items' exposure (shown_items) and train's rows
# per item (popularity). When the ids are integers of a range of at most 2^ARRAY_BITS that DuckDB
# knows (a table's, a Parquet file's), its perfect hash aggregate (an array indexed by the id,
# one per thread, of about 8 bytes per id of the range per count) takes half the CPU
# (benchmarks/reports/2026-11-26-beyond32d.md). by_array raises its threshold for one statement,
# and only when the threads' arrays together fit in an eighth of the memory limit; other ids take
# the usual hash aggregate.
ARRAY_BITS = 20


@contextmanager
def by_array(con, counts: int):
    """Within the block, DuckDB may aggregate by integer keys of a range up to 2^ARRAY_BITS in
    an array (perfect_ht_threshold), for aggregates of `counts` numbers per group; the
    connection's threshold is put back after."""
    (threads, threshold), = con.sql("SELECT current_setting('threads'), "
                                    "current_setting('perfect_ht_threshold')").fetchall()
    arrays = int(threads) * 2 ** ARRAY_BITS * 8 * (1 + counts)
    raise_it = int(threshold) < ARRAY_BITS and \
        arrays * 8 <= batches.users_per_batch(con) * batches.BYTES_PER_USER  # the memory limit
    if raise_it:
        con.execute(f"SET perfect_ht_threshold = {ARRAY_BITS}")
    try:
        yield
    finally:
        if raise_it:
            con.execute(f"SET perfect_ht_threshold = {int(threshold)}")


def shown_items(con, measures: tuple) -> None:
    """ndcg_shown_: every item of ndcg_entries_ once, with its exposure at each cutoff the
    measures take (ndcg_beyond_shown_of, a column per cutoff of ndcg_depths_: leaks.depths).
    The exposure, the per-user metrics' values and the outside-catalogue count read it."""
    ks = cutoffs(measures)
    depths = leaks.depths(con, sqltext.bigint_list(ks), "ndcg_depths_")
    with by_array(con, len(ks)):
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_shown_ AS "
                    f"FROM ndcg_beyond_shown_of('ndcg_entries_', '{depths}')")


def prepare(con, options: Options, measures: tuple, given: Inputs, vectors: bool = False
            ) -> None:
    """The per-item tables the measures read, from ndcg_train and ndcg_items (load's views),
    with their checks: ndcg_catalogue_ (item_id), and as the measures need them
    ndcg_popularity_ (ndcg_beyond_popularity) and ndcg_features_ (ndcg_beyond_features; with
    `vectors`, for this engine's ild, also the unit vectors as columns: _features); and the
    macro ndcg_beyond_run_as_(exposure, keys), ndcg_beyond_run_at over ndcg_catalogue_ with the
    run's options (--beyond-as and the rest), which every per-run step of the run reads."""
    metrics = {m.metric for m in wanted(measures)}
    catalogue = "'ndcg_items'" if given.items else "NULL"
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_catalogue_ AS "
                f"FROM ndcg_beyond_catalogue({catalogue}, 'ndcg_train')"
                if given.train else
                "CREATE OR REPLACE TEMP TABLE ndcg_catalogue_ AS "
                "FROM ndcg_beyond_catalogue('ndcg_items', NULL)")
    if metrics & set(POPULAR):
        lists = leaks.train_lists(con)
        with by_array(con, 2):
            con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_popularity_ AS "
                        f"FROM ndcg_beyond_popularity_of('{statements.TRAIN}', '{lists}', "
                        f"'ndcg_catalogue_', {sql_args(options, POPULARITY_OPTIONS)})")
    con.execute(f"CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_as_(exposure, keys) AS TABLE "
                f"FROM ndcg_beyond_run_at(exposure, keys, 'ndcg_catalogue_', "
                f"{sql_args(options, RUN_OPTIONS)})")
    if "ild" in metrics:
        _features(con, vectors)


def _features(con, vectors: bool) -> None:
    """ndcg_features_ (item_id, unit, category: ndcg_beyond_features' rows, with its checks).
    With `vectors` and embeddings, the checked items are stored once with each unit vector as
    columns d1, d2, ... (ndcg_checked_: ndcg_beyond_checked, ndcg_beyond_unit_at; no list of
    every number is made or stored), the view ndcg_vectors_ holds the items that have one (what
    ndcg_beyond_ild_vectors reads) and ndcg_features_ is a view over the same table (its unit
    made only where read: the cosine mode's first item, the lacking items' check)."""
    for name in ("ndcg_features_", "ndcg_vectors_", "ndcg_checked_"):
        _drop(con, name)
    width = 0
    if vectors:  # the length of one embedding: ndcg_beyond_checked stops on any other
        found = con.sql("SELECT len(embedding::DOUBLE[]) FROM ndcg_items "
                        "WHERE embedding IS NOT NULL LIMIT 1").fetchall()
        width = found[0][0] if found else 0
    if not width:
        con.execute("CREATE TEMP TABLE ndcg_features_ AS FROM ndcg_beyond_features('ndcg_items')")
        return
    numbers = [f"d{d}" for d in range(1, width + 1)]
    units = ", ".join(f"ndcg_beyond_unit_at(embedding, scale, length, {d}) AS d{d}"
                      for d in range(1, width + 1))
    con.execute(f"CREATE TEMP TABLE ndcg_checked_ AS SELECT item_id, category, {units} "
                f"FROM ndcg_beyond_checked('ndcg_items')")
    con.execute(f"CREATE TEMP VIEW ndcg_vectors_ AS SELECT item_id, {', '.join(numbers)} "
                f"FROM ndcg_checked_ WHERE d1 IS NOT NULL")
    con.execute(f"CREATE TEMP VIEW ndcg_features_ AS SELECT item_id, CASE WHEN d1 IS NOT NULL "
                f"THEN [{', '.join(numbers)}] END AS unit, "
                f"ndcg_beyond_categories(category) AS category FROM ndcg_checked_")


def per_run(con, measures: tuple, given: Inputs, exposure: str = "ndcg_exposure_",
            keys: str = "ndcg_keys_", shown: Optional[str] = None) -> tuple[dict, list]:
    """The per-run measures from the relation `exposure` (ndcg_beyond_exposure's rows over the
    evaluated users' lists; when no per-run measure is asked, any relation of the shown items'
    item_id), `keys` (k and users: how many users' lists each cutoff read) and ndcg_catalogue_,
    by prepare's ndcg_beyond_run_as_: ({'coverage@10': value, ...}, the notes: item ids compared
    as text, recommended items outside the catalogue, counted in `shown`, a relation of the
    shown items' item_id, exposure when None)."""
    summary = {}
    chosen = [m for m in wanted(measures) if m.metric in PER_RUN]
    if chosen:
        rows = con.sql(f"SELECT k, {', '.join(PER_RUN)} "
                       f"FROM ndcg_beyond_run_as_('{exposure}', '{keys}')").fetchall()
        found = {k: dict(zip(PER_RUN, values)) for k, *values in rows}
        for m in chosen:  # a cutoff without lists (no users): 0
            summary[m.name] = found.get(m.k, dict.fromkeys(PER_RUN, 0.0))[m.metric]
    return summary, ([given.as_text] if given.as_text else []) + _outside(con, given,
                                                                          shown or exposure)


def per_user(con, options: Options, measures: tuple) -> tuple:
    """ndcg_beyond_users (_per_user_table) from ndcg_tops_, ndcg_deepest_, ndcg_cutoffs_,
    ndcg_entries_ and ndcg_shown_
    (evaluated_tops) and prepare's ndcg_popularity_ and ndcg_features_: the per-user metrics
    among `measures`, in the order of their columns."""
    metrics = {m.metric for m in wanted(measures)}
    columns = []
    if metrics & set(POPULAR):
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_item_values_ AS "
                    f"FROM ndcg_beyond_values_of('ndcg_shown_', 'ndcg_popularity_', "
                    f"{sql_args(options, USER_OPTIONS)})")  # a table: its join is the faster
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_beyond_pop_users AS "
                    "FROM ndcg_beyond_user_in('ndcg_entries_', 'ndcg_item_values_', "
                    "'ndcg_cutoffs_')")
        columns += [m for m in POPULAR if m in metrics]
    if "ild" in metrics:
        _ild(con)
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_beyond_ild_users AS "
                    f"FROM ndcg_beyond_ild_as('ndcg_beyond_ild_pairs', 'ndcg_tops_', "
                    f"{sql_args(options, ILD_OPTIONS)})")
        columns.append("ild")
    _per_user_table(con, columns)
    return tuple(columns)


# ild sums each list's unit vectors, one sum() per number: DuckDB holds about this many bytes per
# number summed per user (with the embeddings' hash table), so it runs on chunks of users that
# fill at most a quarter of the memory limit, one cutoff at a time
BYTES_PER_NUMBER = 25
# With embeddings, at most this many users a chunk however much the memory limit allows: each
# thread's hash table holds its users' sums, and fresh pages for 1M users x 64 sums cost the
# kernel more than reading the vectors again a chunk: 1M users x 100, 64 numbers, -k 10, five
# alternated loaded rounds: median 19.4 CPU s (18.8-20.2), 2.2-2.4 GB peak in 4 chunks against
# 22.0 (19.3-23.1), 4.0-4.2 GB in one (benchmarks/reports/2026-11-26-ild32h.md)
ILD_MOST_USERS = 250_000


def _ild(con) -> None:
    """ndcg_beyond_ild_pairs: ild per user and cutoff (the mean over pairs), chunk by chunk of
    users (ndcg_tops_), one statement per chunk and cutoff. With embeddings, ndcg_vectors_
    holds each item's unit vector as columns d1, d2, ... (a view over ndcg_checked_ when
    prepare made it (_features); else made here from ndcg_features_' unit, the one statement
    written per embedding length, a view when one statement reads it, else a table) for
    ndcg_beyond_ild_vectors, whose rows count the
    items without a vector: when any has one, ndcg_beyond_shown's check over every list stops
    with its message (how many items, and one); else categories."""
    (width,), = con.sql("SELECT count(*) FROM duckdb_columns() WHERE database_name = 'temp' AND "
                        "table_name = 'ndcg_checked_' AND "
                        "column_name NOT IN ('item_id', 'category')").fetchall()
    ks = [k for k, in con.sql("SELECT k FROM ndcg_cutoffs_").fetchall()]
    made = bool(width)
    if not made:  # from the unit lists, if any
        (width,), = con.sql("SELECT max(len(unit)) FROM ndcg_features_").fetchall()
        width = width or 0
    per_user = max(1.0, BYTES_PER_NUMBER * (width or 1))
    size = int(batches.users_per_batch(con) * batches.BYTES_PER_USER / 4 / per_user)
    size = max(batches.FEWEST_USERS, min(size, ILD_MOST_USERS) if width else size)
    ranges = batches.user_ranges(con, "ndcg_deepest_", size)
    if width and not made:  # a view when one statement reads it (the columns taken once)
        columns = ", ".join(f"unit[{d}] AS d{d}" for d in range(1, width + 1))
        _drop(con, "ndcg_vectors_")
        kind = "VIEW" if len(ranges) * len(ks) == 1 else "TABLE"
        con.execute(f"CREATE TEMP {kind} ndcg_vectors_ AS SELECT item_id, {columns} "
                    f"FROM ndcg_features_ WHERE unit IS NOT NULL")
    number = 0
    for users in ranges:
        interrupts.check()
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_tops_chunk AS FROM ndcg_tops_ "
                    f"WHERE {users}")
        for k in (ks if width else [None]):
            into = ("INSERT INTO ndcg_beyond_ild_pairs" if number else
                    "CREATE OR REPLACE TEMP TABLE ndcg_beyond_ild_pairs AS")
            number += 1
            cutoff = "NULL" if k is None else str(int(k))
            con.execute(f"{into} " + (
                f"FROM ndcg_beyond_ild_vectors('ndcg_tops_chunk', 'ndcg_features_', "
                f"'ndcg_vectors_', {cutoff})"
                if width else
                "FROM ndcg_beyond_ild_jaccard('ndcg_tops_chunk', 'ndcg_features_')"))
    if width:  # a shown item without a vector: ndcg_beyond_shown's check over every list stops
        (lacking,), = con.sql("SELECT coalesce(bool_or(lacking > 0), false) "
                              "FROM ndcg_beyond_ild_pairs").fetchall()
        if lacking:
            con.sql("SELECT count(*) FROM ndcg_beyond_shown('ndcg_tops_', 'ndcg_features_', "
                    "true)").fetchall()
            raise AssertionError("ndcg_beyond_shown found no item without a vector")


def _drop(con, name: str) -> None:
    """Drop the temporary table or view `name`, whichever it is, if there is one (a view cannot
    replace a table, nor a table a view)."""
    for kind, catalogue in (("VIEW", "duckdb_views()"), ("TABLE", "duckdb_tables()")):
        (found,), = con.sql(f"SELECT count(*) FROM {catalogue} WHERE temporary AND "
                            f"{'view_name' if kind == 'VIEW' else 'table_name'} = "
                            f"'{name}'").fetchall()
        if found:
            con.execute(f"DROP {kind} {name}")


def _per_user_table(con, columns: list) -> None:
    """ndcg_beyond_users: user_id, k and the per-user metrics asked for, one row per user with a
    top_k list (ndcg_deepest_) and cutoff (ndcg_cutoffs_)."""
    pop = [c for c in columns if c != "ild"]
    select = ["d.user_id", "t.k"] + [f"p.{c}" for c in pop] + (
        ["i.ild"] if "ild" in columns else [])
    joins = ""
    if pop:
        joins += (" LEFT JOIN ndcg_beyond_pop_users AS p ON p.user_id = d.user_id "
                  "AND p.k IS NOT DISTINCT FROM t.k")
    if "ild" in columns:
        joins += (" LEFT JOIN ndcg_beyond_ild_users AS i ON i.user_id = d.user_id "
                  "AND i.k IS NOT DISTINCT FROM t.k")
    con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_beyond_users AS SELECT {', '.join(select)} "
                f"FROM ndcg_deepest_ AS d CROSS JOIN ndcg_cutoffs_ AS t{joins}")


def _outside(con, given: Inputs, shown: str = "ndcg_exposure_") -> list:
    """A warning when recommended items are outside the catalogue: how many, and one of them.
    shown: a relation with the shown items' item_id (ndcg_shown_ or ndcg_exposure_)."""
    (count, example), = con.sql(f"FROM ndcg_beyond_outside_of('{shown}', "
                                f"'ndcg_catalogue_')").fetchall()
    if not count:
        return []
    where = given.items or f"the items of the {given.train}"
    return [f"{count} recommended item{'s are' if count > 1 else ' is'} not in the catalogue "
            f"({where}), e.g. item {example!r}: counted in no coverage, gini or entropy, and "
            f"never in tail's head"]


def check_message(exc: Exception, given: Inputs) -> str:
    """A beyond macro's check as a user message naming the file it read."""
    text = duckdb_message(exc)
    found = re.search(r"ndcg-duck: (items|train): (.*)", str(exc).splitlines()[0])
    if found:
        what = given.items if found.group(1) == "items" else given.train
        return f"{what or found.group(1)}: {found.group(2)}"
    return f"evaluation failed: {text}"


def kept_lists(con) -> bool:
    """Whether this cursor's run computed per-run metrics (it kept ndcg_tops_ and
    ndcg_catalogue_)."""
    (found,), = con.sql("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = "
                        "'ndcg_exposure_'").fetchall()
    return bool(found)


def per_run_values(con, tops: str) -> dict:
    """{'coverage@10': value, ...}: the per-run metrics of the lists `tops` (a relation like
    ndcg_tops_) over the run's catalogue, with the run's options (ndcg_beyond_run_as_)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_exposure_of_ AS "
                f"FROM ndcg_beyond_exposure('{tops}')")
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_keys_of_ AS "
                f"SELECT k, count(DISTINCT user_id) AS users FROM {tops} GROUP BY k")
    rows = con.sql(f"SELECT k, {', '.join(PER_RUN)} "
                   f"FROM ndcg_beyond_run_as_('ndcg_exposure_of_', 'ndcg_keys_of_')").fetchall()
    return {at_k(name, k): value for k, *values in rows for name, value in zip(PER_RUN, values)}

