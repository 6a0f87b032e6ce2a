"""evaluate(): load the inputs, check them, run the macros, return the summary and per-user table."""

from __future__ import annotations

import inspect
import re
import signal
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple, Optional

import duckdb

from .. import sqltext, statements
from . import batches, beyond, inputs, intervals, leaks, progress
from .. import interrupts, means, metrics as metric_names, objectstore, options as registry, outcome
from .. import metrics_sql as own_sql
from ..errors import InputError, duckdb_message
from ..options import Options
from ..sqlfiles import register

if TYPE_CHECKING:  # pyarrow loads on first use: the CLI's start-up is part of every run
    import pyarrow as pa


class _Evaluated(NamedTuple):
    summary: dict
    per_user: Optional[pa.Table]


class Evaluation(_Evaluated):
    """summary: {'ndcg@K': mean, ... (one entry per metric and cutoff), 'users': evaluated,
    'users_without_recommendations': n, 'users_only_in_recommendations': n,
    'users_with_zero_ideal_dcg': n}; per_user: one row per evaluated user (or None). It unpacks
    as (summary, per_user); per_item, an attribute: with per_item=True the per-item view (one
    row per cutoff and item: evaluation/leaks.py), else None."""

    per_item: Optional[pa.Table] = None

    def with_items(self, table) -> "Evaluation":
        self.per_item = table
        return self


def evaluate(recs, rels=None, k=registry.BY_NAME["k"].default, *, per_user=True, per_item=False,
             con=None, **options) -> Evaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`.

    recs and rels are paths (Parquet, CSV, JSON; globs and directories allowed), DuckDB
    relations, Arrow tables or pandas/polars DataFrames; a path with format 'trec' (or without a
    known extension and with TREC content) is a TREC run (recs) or qrels (rels). k is a cutoff,
    'all', 'trec', or a list of them. The keyword options are those of `ndcg-duck eval` (see
    ndcg_duck.options.PARAMS): metrics (a name or a list of them, as -m: 'ndcg', 'P@10',
    'recall', 'RR', ...; a name without @K takes the cutoffs k), gain, gain_map ("LEVEL=GAIN,..." text or a {level: gain} dict),
    ties, judged_only, missing, empty, idcg_cutoff, max_depth, unique_judgments, duplicates,
    the column names user_col, item_col, items_col, rank_col, score_col, relevance_col (a
    column named must exist), recs_format, rels_format, and threads, memory_limit (e.g. '4GB'),
    temp_dir (an existing directory) and batch_users for DuckDB. The beyond-accuracy metrics
    (metrics='coverage', 'gini', 'entropy', 'novelty', 'popularity', 'tail', 'ild',
    'coverage_count', 'personalization') read
    train= (user and item rows the system learned from) and items= (the catalogue: item_id,
    optionally category and embedding), paths or tables as recs; head_share= sets tail's head
    (default 0.2), beyond_as= ('recbole', 'elliot', ...) and the options of docs/beyond-peers.md
    (novelty_smoothing=, gini_items=, ...) each peer's definitions. They read the lists alone:
    with rels=None (no judgments) only they may be asked for, over every user of recs. With
    train=, recommended items their user has in train are counted and warned about, and
    exclude_seen=True takes them out of each ranking before the cut at k. Tied scores are
    counted and warned about. per_user=False skips the per-user table; per_item=True gives the
    per-item view as the result's per_item (docs/leaks.md).
    ci=0.95 adds to the summary 'intervals': the level, the method, the metrics
    whose interval was clipped to [0, 1] (and those not clipped, their values leaving it), and
    [low, high] for each mean over users, as `ndcg-duck eval --ci --format json`; ci_method=
    'bootstrap' takes scipy's percentile bootstrap (n_resamples=, seed=) instead of Student's t. Raises InputError for bad input or options, and warns (NdcgWarning) when
    ids are compared as text or a gain map level never occurs.

    Ctrl-C (SIGINT) stops the run promptly, even inside a long query, and raises
    KeyboardInterrupt (ndcg_duck.interrupts.Interrupted).

    `con` is the DuckDB connection to work in (a new one by default). It is left as it was:
    the run works in a cursor of its own (its views and macros vanish with it), and threads,
    memory_limit and temp_dir are set only when given and restored afterwards.
    """
    def call():
        with interrupts.stoppable(signals=(signal.SIGINT,)):
            return run(recs, rels, k, per_user=per_user, per_item=per_item, con=con, **options)
    return outcome.in_python(call)


evaluate.__signature__ = inspect.Signature(
    [inspect.Parameter("recs", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("rels", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
     inspect.Parameter("k", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                       default=registry.BY_NAME["k"].default),
     inspect.Parameter("per_user", inspect.Parameter.KEYWORD_ONLY, default=True),
     inspect.Parameter("per_item", inspect.Parameter.KEYWORD_ONLY, default=False),
     inspect.Parameter("con", inspect.Parameter.KEYWORD_ONLY, default=None)]
    + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
       for name, default in intervals.KEYWORDS.items()]
    + [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
       for p in registry.PYTHON if p.name != "k"],
    return_annotation=Evaluation)


def run(recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True, per_item=False,
        con=None, **given) -> tuple[Evaluation, list]:
    """evaluate() with its messages in the command line's words: returns the evaluation and the
    notes (warnings) of the run."""
    with running(recs, rels, k, per_user=per_user, per_item=per_item, con=con, **given) as ran:
        pass
    return ran.evaluation, ran.notes


class Ran(NamedTuple):
    """A run that `running` keeps open: its evaluation, its notes (warnings), its cursor (the
    run's views and tables, such as ndcg_result and beyond.py's ndcg_tops_, still there) and
    its loaded inputs (how messages name them)."""

    evaluation: Evaluation
    notes: list
    cursor: object
    loaded: inputs.Loaded


@contextmanager
def running(recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True, per_item=False,
            con=None, ci=None, ci_method=None, n_resamples=intervals.KEYWORDS["n_resamples"],
            seed=intervals.KEYWORDS["seed"], **given):
    """run() that yields the run (Ran) with its cursor still open: what the block does in the
    cursor (segments, plots) is stopped by Ctrl-C as the run is, and a DuckDB error there is
    a message as the run's are (message). The cursor closes and `con`'s settings are put back
    when the block ends."""
    registry.flag("per_user", per_user)
    registry.flag("per_item", per_item)
    spec = intervals.checked(ci, ci_method, n_resamples, seed)
    options, measures, settings = outcome.plan(k, given)
    if rels is None:
        outcome.check_lists_only(measures, given, per_item)
    cols = inputs.Columns.given(**settings)
    owner = con if con is not None else own_connection()
    with objectstore.using(settings["s3_endpoint"]), borrowed(owner, settings) as work, \
            interrupts.watching(work):
        progress.watch(work)
        register(work)
        progress.step("reading the inputs")
        loaded = inputs.load(work, recs, rels, cols, settings["recs_format"],
                             settings["rels_format"])
        item_type = recs_item_type(work, loaded.layout)
        given_extra = beyond.load(work, measures, settings["train"], settings["items"], cols,
                                  item_type)
        train_what = given_extra and given_extra.train
        leaks.check(work, options, loaded.layout, train_what)
        extra = given_extra if beyond.wanted(measures) else None
        if extra:
            beyond.start_tops(work, extra, item_type)
        try:
            if rels is None:
                result, notes = _run_lists(work, options, loaded, cols.user, per_user,
                                           settings["batch_users"], measures, extra, spec)
            else:
                result, said, folded = _run(work, options, loaded, cols, per_user,
                                            settings["batch_users"], measures, extra, spec,
                                            per_item, train_what)
                notes = _notes(work, options, loaded, train_what, folded) + said
            yield Ran(result, notes, work, loaded)
        except duckdb.Error as exc:
            raise InputError(message(exc, loaded, given_extra)) from None


def own_connection():
    """A DuckDB connection for a run that has none from its caller. Its block allocator keeps the
    blocks a statement has freed, up to the memory limit, for the next statement, instead of
    giving them back to the system and taking fresh pages again: fewer page faults, the same
    peak (ild@10 at 1M users: about 0.8 fewer CPU s, median of three alternated rounds, all of
    them system time; benchmarks/reports/2026-11-26-blocks.md). The memory goes back when the
    connection closes, which is why a caller's connection is never set so."""
    con = duckdb.connect()
    con.execute(f"SET block_allocator_memory = "
                f"{sqltext.literal(_setting(con, 'memory_limit'))}")
    return con


# the connection's own limits, with the option that sets each
LIMITS = {"threads": "threads", "memory_limit": "memory_limit", "temp_dir": "temp_directory"}


@contextmanager
def borrowed(con, settings):
    """A cursor of `con` for one run, with DuckDB's limits set as asked. DuckDB's limits belong to
    the whole database, so each one set is put back afterwards; the cursor's temporary views,
    tables and macros go when it closes, so none of the caller's objects is touched."""
    changed = {}
    try:
        for option, setting in LIMITS.items():
            value = settings.get(option)
            if value is None:
                continue
            changed[setting] = _setting(con, setting)
            try:
                con.execute(f"SET {setting} = {sqltext.literal(str(value))}")
            except duckdb.Error as exc:
                flag = registry.BY_NAME[option].option
                raise InputError(f"{flag} {value!r}: {duckdb_message(exc)}", usage=True) from None
        work = con.cursor()
        try:
            yield work
        finally:
            work.close()
    finally:
        for setting, value in changed.items():
            _restore(con, setting, value)


def _setting(con, name: str) -> str:
    (value,), = con.sql(f"SELECT current_setting({sqltext.literal(name)})::VARCHAR").fetchall()
    return value


def _restore(con, name: str, value: str) -> None:
    """Put a setting back as DuckDB showed it. DuckDB shows a memory limit cut to one decimal of
    its unit (3GB shows as 2.7 GiB): the default is put back exactly, any other limit as the
    middle of what it showed, which shows the same."""
    con.execute(f"RESET {name}")
    if _setting(con, name) == value:
        return
    found = re.fullmatch(r"([\d.]+) ?([A-Za-z]+)", value) if name == "memory_limit" else None
    if found and "." in found.group(1):
        decimals = len(found.group(1).split(".")[1])
        value = f"{float(found.group(1)) + 0.5 * 10 ** -decimals:.{decimals + 1}f} {found.group(2)}"
    con.execute(f"SET {name} = {sqltext.literal(value)}")


def _notes(con, options: Options, loaded: inputs.Loaded, train_what: Optional[str] = None,
           folded: Optional[str] = None) -> list:
    """What the run should tell its caller (outcome.run_notes): ids compared as text (and how
    many users matched), gain map levels that never occur in the judgments, recommended items
    seen in train (train_what: how the train input is named, or None), tied scores (folded: the
    ranking edge _run chose, leaks.folds, which counted them as it ranked)."""
    def matched():
        (ranked, judged), = con.sql(
            f"SELECT count(*) FILTER (WHERE judged AND ranked), count(*) FILTER (WHERE judged) "
            f"FROM ({user_flags_sql(options)})").fetchall()
        return ranked, judged

    def found(levels):
        (seen,), = con.sql(f"SELECT list(DISTINCT relevance::DOUBLE ORDER BY relevance::DOUBLE) "
                           f"FROM ndcg_rels WHERE relevance::DOUBLE IN "
                           f"({', '.join(repr(level) for level in levels)})").fetchall()
        return seen
    def seen():
        return leaks.seen(con, options, loaded.layout, train_what)
    return outcome.run_notes(options, loaded, matched, found,
                             seen if train_what is not None else None,
                             lambda: leaks.tied(con, options, folded=folded))


def message(exc: Exception, loaded: inputs.Loaded, given: Optional[beyond.Inputs] = None) -> str:
    """A DuckDB error as a user message: the macros' own checks name the input they read
    (outcome.named_input; given: how the train and items inputs are named)."""
    text = str(exc).strip().splitlines()[0]
    named = outcome.named_input(text, loaded.recs_what, loaded.rels_what, given)
    return named if named is not None else f"evaluation failed: {text}"


def user_flags_sql(options: Options, scores: str = "ndcg_all") -> str:
    """One row per user of `scores` (ndcg_user_scores' rows, such as ndcg_all): user_id,
    judged (has judgments), ranked (has recommendations) and zero_ideal: an ideal DCG of 0
    among the users the summary's users_with_zero_ideal_dcg counts (the judged ones, and with
    missing 'skip' only those with recommendations: scored 0 with empty 'zero', left out with
    'skip'). Both engines count their users from these flags."""
    keep = "" if options.missing == "zero" else " AND has_ranking"
    return (f"SELECT user_id, bool_or(has_judgments) AS judged, bool_or(has_ranking) AS ranked, "
            f"bool_or(has_judgments{keep} AND idcg = 0) AS zero_ideal "
            f"FROM {scores} GROUP BY user_id")


def user_scores_sql(options: Options, layout: str, recs: str = "ndcg_recs",
                    rels: str = "ndcg_rels", measures: Optional[tuple] = None,
                    ranked: Optional[str] = None) -> str:
    """The statement that scores every user of the relations `recs` (in `layout`) and `rels`
    (user_id, item_id, relevance): their ranking edge and the judgments edge, then
    ndcg_user_scores: one row per user and cutoff (user_id, k, dcg, idcg, ndcg, has_judgments,
    has_ranking). With `measures` (metrics.parse_metrics) beyond NDCG and its parts,
    ndcg_user_metrics, which adds a column per metric (sql/ndcg_metrics.sql). `ranked`: a table
    of the ranking edge's result for `recs` already made (the rankings are not read again)."""
    macro = "ndcg_user_scores" if core_computes(measures) else "ndcg_user_metrics"
    metrics = ("" if core_computes(measures) else
               f", {statements.sql_args(options, 'metrics')}, "
               f"edge_gains := {statements.value(_reads_gains(measures, options))}")
    edge = (statements.ranked_cte(options, layout, recs=recs) if ranked is None
            else f"ndcg_ranked_ AS (FROM {ranked})")
    return (f"WITH {edge}, "
            f"ndcg_judgments_ AS (FROM ndcg_judgments('{rels}', "
            f"{statements.judgments_args(options)}, "
            f"ideal_depth := ndcg_width({statements.ks(options)}))) "
            f"SELECT {_asked(measures, options)} FROM {macro}('ndcg_ranked_', 'ndcg_judgments_', "
            f"{statements.user_scores_args(options, layout)}{metrics})")


def _reads_gains(measures: tuple, options: Options) -> bool:
    """Whether a user's own measure asked for reads the edge's gains (the gain at each position,
    which ndcg_user_metrics makes only when asked: edge_gains)."""
    return any("gains" in options.metrics_sql.params(m.metric)
               for m in measures if metric_names.own(m.metric))


# ndcg_user_metrics' metric columns beyond NDCG and its parts, and their types
METRIC_COLUMNS = {"cg": "DOUBLE", "precision": "DOUBLE", "recall": "DOUBLE", "hit_rate": "DOUBLE",
                  "mrr": "DOUBLE", "map": "DOUBLE", "r_precision": "DOUBLE", "num_rel": "BIGINT",
                  "num_rel_ret": "BIGINT", "judged": "DOUBLE", "ncg": "DOUBLE", "err": "DOUBLE",
                  "bpref": "DOUBLE", "rbp": "DOUBLE", "num_ret": "BIGINT",
                  "num_nonrel_judged_ret": "BIGINT", "set_precision": "DOUBLE",
                  "set_relative_precision": "DOUBLE", "set_map": "DOUBLE", "set_f": "DOUBLE",
                  "relative_precision": "DOUBLE", "iprec_11pt_avg": "DOUBLE",
                  "infap": "DOUBLE", "rndcg": "DOUBLE", "ndcg_rel": "DOUBLE",
                  "rbp_resid": "DOUBLE", "utility": "DOUBLE", "unj": "DOUBLE", "g": "DOUBLE",
                  "bing": "DOUBLE", "gm_map": "DOUBLE", "gm_bpref": "DOUBLE"}


# the columns of ndcg_user_metrics every row has (then METRIC_COLUMNS, the measures asked for)
BASE_COLUMNS = ("user_id", "k", "dcg", "idcg", "ndcg", "has_judgments", "has_ranking")
# the list column of the stored per-user rows that holds, on each user's first cutoff's row
# only, the measures without a cutoff (score_users)
ONCE = "ndcg_once_"


def _once(measures: tuple) -> list:
    """The measures asked for that have no cutoff, as (name, SQL type, SQL over
    ndcg_user_metrics' row): its columns without a cutoff (r_precision, bpref, the set
    measures, ...) and trec_eval's iprec_at_recall_X and rprec_mult_X (metrics.FAMILIES), their
    macros over edge. One value a user, on the first cutoff's row."""
    asked = {m.metric for m in measures}
    once = [(name, kind, name) for name, kind in METRIC_COLUMNS.items()
            if name in asked and not metric_names.has_cutoff(name)]
    return once + [(metric, "DOUBLE", metric_names.column_sql(metric)) for metric
                   in dict.fromkeys(m.metric for m in measures if metric_names.member(m.metric))]


def _own(measures: tuple) -> list:
    """The user's own measures asked for (--metrics-sql), each once."""
    return list(dict.fromkeys(m.metric for m in measures if metric_names.own(m.metric)))


def _asked(measures: Optional[tuple], options: Options) -> str:
    """The columns of ndcg_user_metrics to store, a row per user and cutoff: BASE_COLUMNS, the
    metrics asked for that have a cutoff, a column per user's own measure (--metrics-sql, its
    macro over edge), and ONCE: the measures without a cutoff (_once) in one list of DOUBLEs on
    the first cutoff's row, NULL on the others (a metric not asked for is not computed, and no
    column a user has a value of on one row in eleven fills the other ten: _stored_sql gives the
    columns back)."""
    if core_computes(measures):
        return "*"
    asked = {m.metric for m in measures}
    columns = list(BASE_COLUMNS) + [name for name in METRIC_COLUMNS
                                    if name in asked and metric_names.has_cutoff(name)]
    columns += [f"{own_sql.call(options.metrics_sql, metric)} AS {metric}"
                for metric in _own(measures)]
    once = _once(measures)
    if once:
        columns.append(f"CASE WHEN k IS NOT DISTINCT FROM {statements.value(options.k[0])} "
                       f"THEN [{', '.join(f'({sql})::DOUBLE' for _, _, sql in once)}] "
                       f"END AS {ONCE}")
    return ", ".join(columns)


def _stored_sql(measures: Optional[tuple], options: Options, rows: str) -> str:
    """The per-user rows `rows` (score_users' table) as ndcg_user_metrics gives them: a row per
    user and cutoff, BASE_COLUMNS, every metric column (NULL when not asked for), the user's own
    measures and trec_eval's families; the measures without a cutoff on the first cutoff's row
    (taken out of ONCE, to their own types), NULL on the others. The two kinds of rows are told
    apart by k, so that a reader of other columns does not scan ONCE."""
    if core_computes(measures):
        return f"FROM {rows}"
    asked = {m.metric for m in measures}
    listed = _once(measures)
    once = {name: (i, kind) for i, (name, kind, _) in enumerate(listed, start=1)}
    families = [(name, kind) for name, kind, _ in listed if name not in METRIC_COLUMNS]

    def row(first: bool) -> str:
        columns = list(BASE_COLUMNS)
        for name, kind in METRIC_COLUMNS.items():
            columns.append(name if name in asked and name not in once else
                           f"{ONCE}[{once[name][0]}]::{kind} AS {name}" if name in once and first
                           else f"NULL::{kind} AS {name}")
        columns += [sqltext.ident(metric) for metric in _own(measures)]
        columns += [f"{ONCE}[{once[name][0]}]::{kind} AS {sqltext.ident(name)}" if first
                    else f"NULL::{kind} AS {sqltext.ident(name)}" for name, kind in families]
        return ", ".join(columns)

    if not once:
        return f"SELECT {row(False)} FROM {rows}"
    first = f"k IS NOT DISTINCT FROM {statements.value(options.k[0])}"
    return (f"SELECT {row(False)} FROM {rows} WHERE NOT ({first}) UNION ALL "
            f"SELECT {row(True)} FROM {rows} WHERE {first}")


def score_users(con, options: Options, layout: str, recs: str, rels: str, into: str,
                append: bool = False, measures: Optional[tuple] = None,
                ranked: Optional[str] = None) -> None:
    """Score the users of already-loaded inputs: the relations `recs` and `rels` in `con` (views,
    tables or registered Arrow tables, with the columns inputs.load gives them) into the view
    `into` (created, or appended to), one row per user and cutoff with the has_judgments and
    has_ranking flags (and with `measures` beyond NDCG, a column per metric: user_scores_sql).
    The rows are stored in the table `into`_rows, the measures without a cutoff in one list on
    a user's first row (_asked), which the view `into` unpacks (_stored_sql). Every user's rows
    from both inputs must be in the same call; coverage, means and the per-user table are the
    whole dataset's steps, in _run."""
    rows = f"{into}_rows"
    into_sql = f"INSERT INTO {rows}" if append else f"CREATE OR REPLACE TEMP TABLE {rows} AS"
    own_sql.load(con, options.metrics_sql)
    try:
        con.execute(f"{into_sql} "
                    f"{user_scores_sql(options, layout, recs, rels, measures, ranked)}")
    except duckdb.Error as exc:
        blamed = _own_failure(con, options, layout, recs, rels, measures, exc)
        if blamed is None:
            raise
        raise InputError(blamed) from None
    if not append:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {into} AS "
                    f"{_stored_sql(measures, options, rows)}")


def _own_failure(con, options: Options, layout: str, recs: str, rels: str,
                 measures: Optional[tuple], exc: Exception) -> Optional[str]:
    """When scoring failed with an error of no check of ours and the user's own measures were
    asked for (--metrics-sql), the one whose macro fails, found by scoring with each alone: a
    message naming the macro and the file. None when none is to blame."""
    own = [m for m in measures or () if metric_names.own(m.metric)]
    if not own or outcome.named_check(str(exc), {}) is not None:
        return None
    for measure in own:
        try:
            alone_sql = user_scores_sql(options, layout, recs, rels, (measure,))
            con.sql(f"SELECT count({measure.metric}) FROM ({alone_sql})").fetchall()
        except duckdb.Error as alone:
            return (f"{own_sql.FLAG} {options.metrics_sql.file}: {own_sql.PREFIX}{measure.metric}"
                    f" fails on the data: {duckdb_message(alone)}")
    return None


def core_computes(measures: Optional[tuple]) -> bool:
    """Whether the core's macros compute every measure: NDCG and its parts take the core's
    ndcg_user_scores, anything else sql/ndcg_metrics.sql's ndcg_user_metrics (every metric)."""
    return measures is None or metric_names.core_only(measures)


def macros_of(measures: Optional[tuple]) -> tuple:
    """The macros that keep the evaluated users' rows and sum them up, for these measures:
    the core's (ndcg_evaluated, ndcg_summary) or sql/ndcg_metrics.sql's."""
    return (("ndcg_evaluated", "ndcg_summary") if core_computes(measures)
            else ("ndcg_metrics_evaluated", "ndcg_metrics_summary"))


def recs_item_type(con, layout: str) -> str:
    """The SQL type of the recommended item ids (ndcg_recs)."""
    schema = {row[0]: row[1] for row in con.sql("DESCRIBE ndcg_recs").fetchall()}
    return inputs.element_type(schema["items"]) if layout == "lists" else schema["item_id"]


def _run(con, options: Options, loaded: inputs.Loaded, cols: inputs.Columns, per_user: bool,
         batch_users: Optional[int], all_measures: tuple, extra: Optional[beyond.Inputs],
         spec: Optional[intervals.Spec] = None, per_item: bool = False,
         train_what: Optional[str] = None) -> tuple[Evaluation, list, Optional[str]]:
    """Score every user, batch by batch, then sum up: (Evaluation, notes, the ranking edge that
    counted the tied scores as it ranked: leaks.folds). `all_measures` may
    hold beyond-accuracy ones (extra says what they read): their top_k lists are kept per batch
    and computed once all are in (beyond.py). With spec (ci=), the summary's 'intervals'; with
    per_item, the per-item view (leaks.py; with train's popularity when train_what is given)."""
    user_col = cols.user
    counts_seen = train_what is not None and not options.exclude_seen  # leaks.add_seen
    folded = leaks.folds(con, options, loaded.layout)  # the edge counts the tied scores
    if folded:
        leaks.start_tied(con)
    measures = metric_names.accuracy(all_measures)
    # counting the users of a CSV or JSON file would read it once more: one batch, unless asked
    size = batch_users or (batches.users_per_batch(con, loaded.layout) if loaded.recs_countable else None)
    ranges = batches.user_ranges(con, "ndcg_recs", size) if size else batches.EVERYONE
    progress.step("scoring users")
    for number, users in enumerate(progress.batches(ranges)):
        interrupts.check()  # a signal between two batches' queries interrupted no query
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_batch AS FROM ndcg_recs WHERE {users}")
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_batch AS FROM ndcg_rels WHERE {users}")
        ranked = None
        if per_item or counts_seen or extra or folded:  # the batch's rankings once, for its
            # scores and all that read them (seen items, the per-item and beyond-accuracy lists)
            ranked = leaks.ranked_table(con, options, loaded.layout, "ndcg_recs_batch", folded)
        score_users(con, options, loaded.layout, "ndcg_recs_batch", "ndcg_rels_batch", "ndcg_all",
                    append=number > 0, measures=measures,
                    ranked=ranked and leaks.spread(con, ranked))
        if counts_seen:
            leaks.add_seen(con, options, loaded.layout, ranked, append=number > 0)
        if extra:
            beyond.add_tops(con, options, loaded.layout, "ndcg_recs_batch", "ndcg_rels_batch",
                            all_measures, ranked)
        if per_item:
            leaks.add_item_tops(con, options, ranked, "ndcg_rels_batch", append=number > 0)
    evaluated, summed = macros_of(measures)
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result AS "
                f"FROM {evaluated}('ndcg_all', {statements.evaluated_args(options)})")
    (judged, unranked, unjudged), = con.sql(
        "SELECT users_judged, users_unranked, users_unjudged FROM ndcg_coverage('ndcg_all')"
    ).fetchall()
    if judged == unranked:
        raise InputError(no_overlap(con, loaded))
    summed_rows = con.sql(f"SELECT {_summed_columns(measures)} FROM {summed}('ndcg_result')")
    summary = _summary(summed_rows, measures, options.k[0],
                       _exact_means(con, measures, options.k[0]))
    notes, relation = [], "ndcg_result"
    if extra:
        # --beyond-users: the evaluated users' lists, or every user's of the recommendations
        everyone = options.beyond_users == "recommended"
        found = beyond.compute(con, options, all_measures, extra,
                               "ndcg_tops" if everyone else "ndcg_result")
        notes, relation = found.notes, with_beyond(con, found.per_user, everyone)
        summary = _beyond_summary(con, summary, all_measures, found, everyone)
    (zero_ideal,), = con.sql(f"SELECT count(*) FILTER (WHERE zero_ideal) "
                             f"FROM ({user_flags_sql(options)})").fetchall()
    summary.update(outcome.user_counts(unranked, unjudged, zero_ideal))
    result = _finished(con, summary, all_measures, user_col, relation, per_user, spec)
    if per_item:
        progress.step("the per-item view")
        result = result.with_items(con.sql(leaks.per_item_sql(
            con, options, loaded.layout, train_what is not None, cols.item)).to_arrow_table())
    return result, notes, folded


def _finished(con, summary: dict, measures: tuple, user_col: str, relation: str,
              per_user: bool, spec: Optional[intervals.Spec]) -> Evaluation:
    """The Evaluation of a run whose per-user rows are `relation` (a row per user and cutoff):
    with spec (ci=) the summary's 'intervals' of its means; with per_user the per-user table
    (wide_sql)."""
    if spec is not None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_ci_users AS "
                    f"{wide_sql(measures, user_col, relation)}")
        relation, names = "ndcg_ci_users", intervals.averaged(summary)
        found, told = intervals.intervals_in(con, relation, names,
                                             {(None, m): summary[m] for m in names}, spec)
        summary["intervals"] = {**spec.info(told),
                                **{m: list(found[(None, m)]) for m in names}}
        table = con.table(relation).to_arrow_table() if per_user else None
    else:
        table = (con.sql(wide_sql(measures, user_col, relation)).to_arrow_table()
                 if per_user else None)
    return Evaluation(summary, table)


def _run_lists(con, options: Options, loaded: inputs.Loaded, user_col: str, per_user: bool,
               batch_users: Optional[int], measures: tuple, extra: beyond.Inputs,
               spec: Optional[intervals.Spec] = None) -> tuple[Evaluation, list]:
    """_run without judgments (rels None; outcome.check_lists_only: only beyond-accuracy
    measures): every user of the recommendations counts. Their top_k lists are kept batch by
    batch and computed as _run's are; the summary's users are the users of the
    recommendations, ndcg_result their rows (user_id, k) for the per-user table."""
    size = batch_users or (batches.users_per_batch(con, loaded.layout)
                           if loaded.recs_countable else None)
    ranges = batches.user_ranges(con, "ndcg_recs", size) if size else batches.EVERYONE
    progress.step("reading the lists")
    for users in progress.batches(ranges):
        interrupts.check()
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs_batch AS FROM ndcg_recs WHERE {users}")
        beyond.add_tops(con, options, loaded.layout, "ndcg_recs_batch", None, measures)
    found = beyond.compute(con, options, measures, extra, "ndcg_tops")
    con.execute("CREATE OR REPLACE TEMP VIEW ndcg_result AS SELECT user_id, k FROM ndcg_tops_")
    (users,), = con.sql("SELECT count(DISTINCT user_id) FROM ndcg_tops_").fetchall()
    summary = _beyond_summary(con, {"users": users}, measures, found)
    return (_finished(con, summary, measures, user_col, with_beyond(con, found.per_user),
                      per_user, spec), found.notes)


def with_beyond(con, columns: tuple, everyone: bool = False) -> str:
    """A view of ndcg_result with the per-user beyond-accuracy columns beside each user's row at
    each cutoff (NULL where the user has no value): its name. With everyone (--beyond-users
    recommended) the users only in the recommendations get rows too, their accuracy metrics
    NULL (they have no judgments)."""
    if not columns:
        return "ndcg_result"
    picked = ", ".join(f"b.{column}" for column in columns)
    if everyone:
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result_beyond AS SELECT "
                    f"coalesce(r.user_id, b.user_id) AS user_id, coalesce(r.k, b.k) AS k, "
                    f"r.* EXCLUDE (user_id, k), {picked} "
                    f"FROM ndcg_result AS r FULL JOIN ndcg_beyond_users AS b "
                    f"ON b.user_id = r.user_id AND b.k IS NOT DISTINCT FROM r.k")
        return "ndcg_result_beyond"
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_result_beyond AS SELECT r.*, {picked} "
                f"FROM ndcg_result AS r LEFT JOIN ndcg_beyond_users AS b "
                f"ON b.user_id = r.user_id AND b.k IS NOT DISTINCT FROM r.k")
    return "ndcg_result_beyond"


def _beyond_summary(con, summary: dict, measures: tuple, found, everyone: bool = False) -> dict:
    """The summary in the order of `measures`, the beyond-accuracy ones added: per-run values as
    computed, per-user ones as the exact mean over the users with a value; and for each per-user
    one, users_without_NAME@K: the evaluated users without a value (no recommendations, or for
    ild fewer than two items), left out of its mean. With everyone (--beyond-users recommended)
    users_recommended (how many users' lists the beyond-accuracy metrics counted), and
    users_without_NAME@K counts among those."""
    per_user = [m for m in measures if metric_names.beyond(m) and not
                metric_names.per_run(m.metric)]
    exact = means.exact_means(con, "ndcg_beyond_users", {c: c for c in found.per_user},
                              groups=("k",))
    counted = {}
    if per_user:
        counts = ", ".join(f"count({c})" for c in found.per_user)
        for k, *values in con.sql(f"SELECT k, {counts} FROM ndcg_beyond_users GROUP BY k"
                                  ).fetchall():
            counted.update({(k, c): n for c, n in zip(found.per_user, values)})
    if everyone:
        (listed,), = con.sql("SELECT count(DISTINCT user_id) FROM ndcg_tops_").fetchall()
        summary = {**summary, "users_recommended": listed}
    return outcome.beyond_summary(
        summary, measures, found.summary,
        {m.name: exact.get((m.k, m.metric)) for m in per_user},
        {m.name: counted.get((m.k, m.metric), 0) for m in per_user})


def _exact_means(con, measures: tuple, first_k) -> dict:
    """{(k, metric): the exactly rounded mean of its per-user values} over ndcg_result, for every
    metric that is a mean (means.py: the one rule for every reported mean), in one pass over
    ndcg_result wherever its values stay in their metric's range (metrics.RANGE, the size its
    values are expected to have). The measures without a cutoff (_once), which have values on
    the first cutoff's rows only (NULL on the others, _stored_sql), are averaged over those rows
    alone: the same values, without reading every other cutoff's NULLs."""
    averaged = dict.fromkeys(m.metric for m in measures if not metric_names.counts(m.metric))
    sizes = {m: max(map(abs, metric_names.bounds(m))) for m in averaged
             if metric_names.bounds(m) is not None}
    once = set() if core_computes(measures) else {name for name, _, _ in _once(measures)}
    found = {}
    for relation, metrics in (
            ("ndcg_result", [m for m in averaged if m not in once]),
            (f"(FROM ndcg_result WHERE k IS NOT DISTINCT FROM {statements.value(first_k)})",
             [m for m in averaged if m in once])):
        found.update(means.exact_means(con, relation, {m: sqltext.ident(m) for m in metrics},
                                       groups=("k",), sizes=sizes))
    return found


def _summed_columns(measures: tuple) -> str:
    """What _summary reads of a summary macro's rows: k, users and the counts asked for (summed
    over users); the means come from _exact_means, and the macro's own means of every metric
    (a compensated sum each) are left out of the query."""
    counted = dict.fromkeys(m.metric for m in measures
                            if not (metric_names.own(m.metric) or metric_names.member(m.metric))
                            and metric_names.counts(m.metric))
    return ", ".join(["k", "users", *counted])


def _summary(relation, measures: tuple, first_k, exact: dict) -> dict:
    """{measure name: its mean (a sum for counts)} and users, from a summary macro's rows (one per
    cutoff: k, users and the counts, _summed_columns) and `exact` ({(k, metric): the exactly
    rounded mean}), whence every mean. Metrics without a cutoff are read from the first
    cutoff's row."""
    columns = relation.columns
    rows = {row[0]: dict(zip(columns, row)) for row in relation.fetchall()}
    summary = {}
    for measure in measures:
        k = measure.k if metric_names.has_cutoff(measure.metric) else first_k
        mean = exact.get((k, measure.metric))
        if metric_names.own(measure.metric) or metric_names.member(measure.metric):
            value = mean
        elif metric_names.counts(measure.metric):
            value = rows.get(k, {}).get(measure.metric)
            value = None if value is None else int(value)
        else:
            value = None if mean is None else metric_names.summarised(measure.metric, mean)
        summary[measure.name] = value
    summary["users"] = max((row["users"] for row in rows.values()), default=0)
    return summary


def no_overlap(con, loaded: inputs.Loaded) -> str:
    """No judged user has a ranked item: almost always mismatched ids, never a real score of 0."""
    (recs_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_recs").fetchall()
    (rels_user,), = con.sql("SELECT min(user_id)::VARCHAR FROM ndcg_rels").fetchall()
    return outcome.no_overlap(loaded.recs_what, loaded.rels_what, recs_user, rels_user)


def wide_sql(measures: tuple, user_col: str, relation: str = "ndcg_result",
             group: str = "") -> str:
    """One row per user: the user id, then a column per metric and cutoff (metrics.per_user_columns:
    with ndcg, dcg@K, idcg@K, ndcg@K for each cutoff); with `group` (a column of relation), one
    row per user and group, the group after the user id."""
    columns = []
    for measure in metric_names.per_user_columns(measures):
        if not metric_names.has_cutoff(measure.metric):
            match = ""  # on one row of the user only
        elif measure.k is None:
            match = " FILTER (WHERE k IS NULL)"
        else:
            match = f" FILTER (WHERE k = {int(measure.k)})"
        columns.append(f"any_value({sqltext.ident(measure.metric)}){match} "
                       f"AS {sqltext.ident(measure.name)}")
    kept = f", {sqltext.ident(group)}" if group else ""
    return (f"SELECT user_id AS {sqltext.ident(user_col)}{kept}, {', '.join(columns)} "
            f"FROM {relation} GROUP BY user_id{kept} ORDER BY user_id{kept}")
