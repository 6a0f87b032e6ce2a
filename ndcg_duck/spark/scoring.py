"""Spark's workers: one bucket of users, scored by the ndcg_ macros in an in-process DuckDB
(score_users, the function Spark runs on each bucket: bucket_scorer), and the exact partial sums
the driver adds up into the summary (partial_sums, summary)."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from .. import metrics as metric_names, outcome, sqltext, statements
from ..evaluation import beyond, inputs, leaks
from ..evaluation.evaluate import (core_computes, recs_item_type, score_users as score_all,
                                   user_flags_sql, wide_sql)
from ..errors import InputError
from ..options import Options
from . import beyond_accuracy as spark_beyond
from .columns import arrow_name, for_arrow
from .exact import Sums, schema as sums_schema
from .workers import connection as _connection

BUCKET = "__ndcg_bucket"
FLAGS = ("__ndcg_judged", "__ndcg_ranked", "__ndcg_evaluated", "__ndcg_zero_ideal")
# (worker-only columns)
# The bucket's counts for the warnings (outcome.seen_note, outcome.ties_note), as the default
# engine's leaks.seen and leaks.tied give them for the bucket's evaluated users: in the first
# per-user row of the bucket (null in the others); partial_sums adds them up.
SEEN = ("__ndcg_seen_users", "__ndcg_seen_items", "__ndcg_seen_user", "__ndcg_seen_item")
TIED = ("__ndcg_tied_users", "__ndcg_tied", "__ndcg_tied_user")
NOTED = SEEN + TIED
EXAMPLES = (SEEN[2], SEEN[3], TIED[2])  # the texts among them (the others are counts)
# with per_item: the bucket's per-item counts (leaks.item_counts: k, item_id, shown, relevant,
# hits), a list in the bucket's first row; the driver adds them up per cutoff and item
ITEM_COUNTS = "__ndcg_item_counts"
# --train's rows travel with the judgments (the second side of the cogroup), marked TRAIN_ROW,
# their user and item under TRAIN_COLUMNS: each bucket gets its users' train rows
TRAIN_ROW = "__ndcg_train_row"
TRAIN_COLUMNS = ("__ndcg_train_user", "__ndcg_train_item")


def score_users(con, options: Options, measures: tuple, loaded: inputs.Loaded,
                user_col: str, shipped=None, key=None, train=None, cols=None,
                per_item: bool = False) -> pa.Table:
    """Every user of the loaded inputs (views ndcg_recs, ndcg_rels): the user id, whether they are
    judged, ranked, evaluated and of zero ideal DCG (evaluate.user_flags_sql's flags), and
    the default engine's per-user columns of `measures` (metrics.per_user_columns; NULL unless
    evaluated). The default engine's per-batch step (evaluate.score_users, with the metrics
    macros beyond NDCG) and its ndcg_evaluated, without the whole-dataset steps. `options` has
    the cutoffs the measures need (metrics.cutoffs), as evaluate.run makes them. With the
    beyond-accuracy measures, `shipped` (beyond_accuracy.Shipped) has the per-item tables
    they read (kept in the worker's connection `key`), the per-user ones are columns too, the
    column TOPS has each evaluated user's top_k lists (beyond_accuracy.score) and, with ild,
    LACKING the shown items without features. With `train` (the bucket's users' --train rows,
    an Arrow table with the columns `cols` names, checked on the driver), the view
    statements.TRAIN as the default engine makes it (beyond.load: --exclude-seen reads it)
    and the bucket's counts of seen items (SEEN); with scores, of tied scores (TIED); with
    per_item, the bucket's per-item counts (ITEM_COUNTS)."""
    accuracy = metric_names.accuracy(measures)
    counts_seen = train is not None and not options.exclude_seen  # as evaluate._run
    if train is not None:
        beyond.load(con, (), train, None, cols, recs_item_type(con, loaded.layout))
    folded = leaks.folds(con, options, loaded.layout)  # the edge counts the tied scores
    if folded:
        leaks.start_tied(con)
    rankings = (leaks.ranked_table(con, options, loaded.layout, "ndcg_recs", folded)
                if counts_seen or per_item or folded else None)  # made once, as evaluate._run
    score_all(con, options, loaded.layout, "ndcg_recs", "ndcg_rels", "ndcg_all",
              measures=accuracy, ranked=rankings)
    if counts_seen:
        leaks.add_seen(con, options, loaded.layout, rankings, append=False)
    evaluated = "ndcg_evaluated" if core_computes(accuracy) else "ndcg_metrics_evaluated"
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result AS "
                f"FROM {evaluated}('ndcg_all', {statements.evaluated_args(options)})")
    noted = {}
    if train is not None:
        noted.update(zip(SEEN, leaks.seen(con, options, loaded.layout, "")[0]))
    if loaded.layout == "scores":
        noted.update(zip(TIED, leaks.tied(con, options, folded)[0]))
    items = None
    if per_item:
        leaks.add_item_tops(con, options, rankings, "ndcg_rels", append=False)
        counts = con.sql(leaks.item_counts(con, options, loaded.layout, train is not None)
                         ).to_arrow_table()
        items = pa.StructArray.from_arrays([column.combine_chunks() for column in counts.columns],
                                           fields=list(counts.schema))
    relation, tops, lists = "ndcg_result", "", ""
    if shipped is not None:
        relation = spark_beyond.score(con, options, measures, loaded.layout, shipped, key)
        tops = f", t.tops AS {sqltext.ident(spark_beyond.TOPS)}"
        lists = f" LEFT JOIN {spark_beyond.TOPS_SQL} AS t ON t.user_id = u.user_id"
        if any(m.metric == "ild" for m in measures):
            tops += f", {spark_beyond.LACKING_SQL} AS {sqltext.ident(spark_beyond.LACKING)}"
    judged, ranked, evaluated, zero = (sqltext.ident(flag) for flag in FLAGS)
    table = con.sql(
        f"WITH wide AS ({wide_sql(measures, '__ndcg_user', relation)}), "
        f"users AS ({user_flags_sql(options)}) "
        f"SELECT u.user_id AS {sqltext.ident(user_col)}, u.judged AS {judged}, "
        f"       u.ranked AS {ranked}, w.__ndcg_user IS NOT NULL AS {evaluated}, "
        f"       u.zero_ideal AS {zero}, "
        f"       w.* EXCLUDE (__ndcg_user){tops} "
        f"FROM users AS u LEFT JOIN wide AS w ON w.__ndcg_user = u.user_id{lists}"
    ).to_arrow_table()
    for name, value in noted.items():  # in the first row only
        kind = pa.string() if name in EXAMPLES else pa.int64()
        value = None if value is None else str(value) if kind == pa.string() else int(value)
        table = table.append_column(name, pa.array(
            [value] + [None] * (table.num_rows - 1) if table.num_rows else [], kind))
    if items is not None:  # in the first row only
        kind = pa.list_(items.type)
        first = (pa.ListArray.from_arrays(pa.array([0, len(items)], pa.int32()), items)
                 if table.num_rows else pa.array([], kind))
        table = table.append_column(ITEM_COUNTS, pa.concat_arrays(
            [first, pa.nulls(max(table.num_rows - 1, 0), kind)]))
    return table


def bucket_scorer(options: Options, measures: tuple, cols: inputs.Columns, schema: pa.Schema,
                   settings: tuple, summed: bool = False, shipped=None, per_item: bool = False):
    """The function Spark runs on each bucket: (recommendations, judgments) -> per-user rows, or
    with summed, the bucket's one row of partial sums (partial_sums: no per-user row leaves the
    worker, and no second pass reads them). shipped, per_item: as score_users takes them."""
    given = dict(options._values)  # Options does not pickle: the worker makes its own
    partial = partial_sums(measures) if summed else None

    def score(recs: pa.Table, rels: pa.Table) -> pa.Table:
        options = Options(**given)
        con = _connection(settings)
        recs, rels = recs.drop_columns([BUCKET]), rels.drop_columns([BUCKET])
        rels, train = split_train(rels, cols)
        try:
            loaded = inputs.load(con, recs, rels, cols, require_rows=False)
            table = score_users(con, options, measures, loaded, cols.user, shipped, settings,
                                train, cols, per_item)
        except duckdb.Error as exc:
            # the macros' own message, one line; the driver names the input it came from
            raise RuntimeError(str(exc).strip().splitlines()[0]) from None
        except InputError as exc:  # a --metrics-sql macro that fails (evaluate.score_users)
            raise RuntimeError(f"ndcg-duck: {exc}") from None
        finally:
            for name in ("ndcg_recs_src", "ndcg_rels_src"):
                con.unregister(name)
        table = table.cast(schema)
        return pa.Table.from_batches(list(partial(table.to_batches()))) if summed else table
    return score


def split_train(rels: pa.Table, cols: inputs.Columns) -> tuple:
    """A bucket's second side: (its judgments, its --train rows under the names `cols` gives
    them, or None when the run has no --train)."""
    import pyarrow.compute as pc

    if TRAIN_ROW not in rels.schema.names:
        return rels, None
    marked = rels.column(TRAIN_ROW).fill_null(False)
    train = rels.filter(marked).select(list(TRAIN_COLUMNS)).rename_columns([cols.user, cols.item])
    return rels.filter(pc.invert(marked)).drop_columns([TRAIN_ROW, *TRAIN_COLUMNS]), train


def partial_sums(measures: tuple):
    """mapInArrow function: one partition's exact.Sums (group None): its coverage counts
    (COUNTS) and, per measure (key 'm|NAME'), how many users have a value and their exact sum."""
    import pyarrow.compute as pc

    names = [measure.name for measure in measures]

    def partial(batches):
        sums = Sums()
        for name in COUNTS:
            sums.count(None, name, 0)
        for batch in batches:
            j, r = batch.column(FLAGS[0]), batch.column(FLAGS[1])
            for name, flags in (("judged", j), ("ranked", r),
                                ("unranked", pc.and_(j, pc.invert(r))),
                                ("unjudged", pc.and_(r, pc.invert(j))),
                                ("zero", batch.column(FLAGS[3])),
                                ("evaluated", batch.column(FLAGS[2]))):
                sums.count(None, name, pc.sum(flags).as_py() or 0)
            noted = [name for name in NOTED if name in batch.schema.names]
            for name in noted:
                if name not in EXAMPLES:
                    sums.count(None, name, pc.sum(batch.column(name)).as_py() or 0)
            for example, texts in ((SEEN[2], (SEEN[2], SEEN[3])), (TIED[2], (TIED[2],))):
                if example in noted:
                    for row in batch.select(list(texts)).filter(
                            pc.is_valid(batch.column(example))).to_pylist():
                        sums.least(None, example, [row[name] for name in texts])
            if spark_beyond.LACKING in batch.schema.names:  # ild's items without features
                sums.count(None, "lacking",
                           batch.num_rows - batch.column(spark_beyond.LACKING).null_count)
            for name in names:
                values = batch.column(arrow_name(name)).drop_null().cast(pa.float64())
                sums.add(None, f"m|{name}", values.to_numpy(zero_copy_only=False))
        yield sums.batch()

    return partial


COUNTS = ("judged", "ranked", "unranked", "unjudged", "zero", "evaluated", "lacking")


def summed_up(scored, measures: tuple, summed: bool = False) -> tuple:
    """Adds up the partial sums of the per-user rows `scored` (or, with summed, the partial sums
    `scored` already holds): (summary dict, {'judged': users, 'ranked': .., 'unranked': ..},
    {measure name: how many users have a value})."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if not summed:
        scored = for_arrow(scored).mapInArrow(partial_sums(measures),
                                              from_arrow_schema(sums_schema()))
    sums = Sums.added(scored.collect())
    users_of = {name: sums.n(None, name) for name in ("judged", "ranked", "unranked", "lacking")}
    # the warnings' counts (outcome.seen_note's and ties_note's tuples, as leaks.seen and
    # leaks.tied give them on the default engine)
    users_of["seen"] = (sums.n(None, SEEN[0]), sums.n(None, SEEN[1]),
                        *(sums.first(None, SEEN[2]) or (None, None)))
    users_of["tied"] = (sums.n(None, TIED[0]), sums.n(None, TIED[1]),
                        *(sums.first(None, TIED[2]) or (None,)))
    summary, counts = {}, {}
    for measure in measures:
        key = f"m|{measure.name}"
        counts[measure.name] = sums.n(None, key)
        if metric_names.counts(measure.metric):  # summed over users, as trec_eval does
            summary[measure.name] = sums.whole(None, key)
        else:  # a mean, or for gm_map and gm_bpref the geometric one (metrics.summarised)
            summary[measure.name] = metric_names.summarised(measure.metric, sums.mean(None, key))
    summary["users"] = sums.n(None, "evaluated")
    summary.update(outcome.user_counts(users_of["unranked"], sums.n(None, "unjudged"),
                                       sums.n(None, "zero")))
    return summary, users_of, counts
