"""Splitting interactions into train and test: load the interactions as eval reads a file
(evaluation/inputs.py), check the columns and options, and run sql/ndcg_split.sql's macros (a
holdout's steps: ndcg_split_users, ndcg_split_edges, ndcg_split_parts, as ndcg_split_temporal and
ndcg_split_random compose them; ndcg_split_time_cut) into one view, from which the Python API
takes two Arrow tables and the command line writes two files (report/output.py).

The view the macros read, ndcg_interactions, is the input with its user, item and time columns
renamed user_id, item_id and timestamp (the relevance made binary with a threshold); the rows
come back with the caller's names.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import NamedTuple, Optional

import duckdb

from .. import interrupts, objectstore, options as registry
from ..errors import InputError, duckdb_message
from ..evaluation import inputs
from ..evaluation.evaluate import borrowed, own_connection
from ..report import output
from ..sqlfiles import sources
from ..sqltext import ident, literal

# the macros' names for the columns they read
CANONICAL = {"user": "user_id", "item": "item_id", "time": "timestamp"}
PART = "ndcg_part"
TIME_TYPE = re.compile(r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL.*|"
                       r"DATE|TIMESTAMP.*)$")
# split()'s keywords and the registry's names (options.PARAMS, group 'split') where they differ
KEYWORDS = {"by": "split_by", "seed": "split_seed"}
# the macro files a split runs: sql/ndcg_split.sql and the checks it calls (registered alone: the
# whole script costs about 0.2 CPU s a connection; tests/sql/test_split_sql.py checks the list)
SQL_FILES = ("ndcg_checks.sql", "ndcg_params.sql", "ndcg_split.sql")
# the macros' parameters, as a message of theirs names them, and the registry's option
SQL_WORDS = ("test_share", "test_last", "min_interactions", "short_users", "seed")


class Settings(NamedTuple):
    """A split's options as checked: the registry's names (group 'split'), columns, limits."""

    test_share: Optional[float]
    test_last: Optional[int]
    by: str
    seed: Optional[int]
    time_cut: Optional[str]
    threshold: Optional[float]
    min_interactions: Optional[int]
    short_users: str
    cols: dict  # role ('user', 'item', 'time', 'relevance') -> the caller's column name
    limits: dict  # threads, memory_limit, temp_dir


def said(name: str, cli: bool, value=None) -> str:
    """A split option as the caller writes it: --test-share (and a value: --short-users drop),
    or test_share= (short_users='drop')."""
    param = registry.BY_NAME[KEYWORDS.get(name, name)]
    if cli:
        return param.option + ("" if value is None else f" {value}")
    keyword = {v: k for k, v in KEYWORDS.items()}.get(param.name, param.name)
    return f"{keyword}=" + ("" if value is None else repr(value))


def in_words(text: str, cli: bool) -> str:
    """A macro's message (its parameters named as in SQL: `short_users 'drop'`, `test_last`)
    in the caller's words."""
    for name in SQL_WORDS:
        text = re.sub(rf"\b{name}\b(?: '(\w+)')?",
                      lambda found, name=name: said(name, cli, found.group(1)), text)
    return text


def check(given: dict, cli: bool) -> Settings:
    """Every option of a split checked (registry's rules), and how they go together; a usage
    InputError in the caller's words otherwise."""
    values = {}
    for param in registry.PARAMS:
        if param.group == "split" and param.name not in ("out_train", "out_test"):
            value = given.get(param.name, param.default)
            try:
                values[param.name] = param.checked(value) if value is not None else None
            except InputError as exc:
                keyword = said(param.name, cli)
                raise InputError(re.sub(rf"^{param.name}\b", keyword.rstrip("="), str(exc))
                                 if cli else re.sub(rf"^{param.name} ", keyword, str(exc)),
                                 usage=True) from None
    protocols = [name for name in ("test_share", "test_last", "time_cut")
                 if values[name] is not None]
    if len(protocols) != 1:
        listed = ", ".join(said(name, cli) for name in ("test_share", "test_last", "time_cut"))
        raise InputError(f"give one of {listed}: how much of each user goes to test, or "
                         f"where the time cut is", usage=True)
    by = values["split_by"] or "time"
    if values["time_cut"] is not None:
        for name in ("min_interactions",) + (("split_by",) if by == "random" else ()):
            if values[name] is not None:
                raise InputError(f"{said(name, cli)} is for the per-user holdouts "
                                 f"({said('test_share', cli)}, {said('test_last', cli)}), not "
                                 f"for {said('time_cut', cli)}", usage=True)
    if values["split_seed"] is not None and by != "random":
        raise InputError(f"{said('seed', cli)} is for {said('by', cli, 'random')}", usage=True)
    cols = {"user": given.get("user_col") or registry.USER_COL,
            "item": given.get("item_col") or registry.BY_NAME["item_col"].shown,
            "time": given.get("time_col") or registry.BY_NAME["time_col"].shown,
            "relevance": given.get("relevance_col") or registry.BY_NAME["relevance_col"].shown}
    limits = {name: given.get(name) for name in ("threads", "memory_limit", "temp_dir")}
    for name in limits:
        if limits[name] is not None:
            limits[name] = registry.BY_NAME[name].checked(limits[name])
    return Settings(values["test_share"], values["test_last"], by, values["split_seed"],
                    values["time_cut"], values["threshold"], values["min_interactions"],
                    values["short_users"] or "error", cols, limits)


def _flag(role: str, cli: bool) -> str:
    return said(f"{role}_col", cli)


def _view(con, source, settings: Settings, cli: bool) -> str:
    """The view ndcg_interactions over `source`, its columns checked; returns how messages name
    the input."""
    what = inputs.attach_source(con, source, "ndcg_split_src", None, "interactions").what
    schema = inputs.schema_of(con, "ndcg_split_src", what)
    cols = settings.cols
    timed = settings.by == "time" or settings.time_cut is not None
    roles = ["user", "item"] + (["time"] if timed else [])
    for role in roles + (["relevance"] if settings.threshold is not None else []):
        inputs.need_column(schema, cols[role], what, _flag(role, cli))
    for role in ("user", "item"):
        inputs.need_id(schema[cols[role]], cols[role], what)
    if timed and not TIME_TYPE.match(schema[cols["time"]]):
        raise InputError(f"{what}: column {cols['time']!r} is {schema[cols['time']]}, not a "
                         f"number, a date or a timestamp: convert it, or name another column "
                         f"with {_flag('time', cli)}")
    relevance = cols["relevance"]
    if settings.threshold is not None and not (inputs.NUMBER.match(schema[relevance])
                                               or schema[relevance] == "BOOLEAN"):
        raise InputError(f"{what}: column {relevance!r} is {schema[relevance]}, not a number or "
                         f"a boolean: convert it, or name another column with "
                         f"{_flag('relevance', cli)}")
    for role in roles:
        canonical = CANONICAL[role]
        if canonical in schema and canonical != cols[role]:
            raise InputError(f"{what}: has a column {canonical!r} besides the {role} column "
                             f"{cols[role]!r} ({_flag(role, cli)}): rename one of them")
    if PART in schema:
        raise InputError(f"{what}: has a column {PART!r}, the name the split gives its parts: "
                         f"rename it")
    renamed = ", ".join(f"{ident(cols[role])} AS {CANONICAL[role]}" for role in roles
                        if cols[role] != CANONICAL[role])
    binary = (f" REPLACE (ndcg_split_binary({ident(cols['relevance'])}, "
              f"{settings.threshold!r}) AS {ident(cols['relevance'])})"
              if settings.threshold is not None else "")
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_interactions AS SELECT *{binary}"
                + (f" RENAME ({renamed})" if renamed else "") + " FROM ndcg_split_src")
    return what


def _cut(con, settings: Settings, cli: bool) -> str:
    """The time cut as SQL of the time column's type (a number as a DOUBLE)."""
    (shown,), = con.sql("SELECT typeof(timestamp) FROM ndcg_interactions LIMIT 1").fetchall() \
        or [("DOUBLE",)]
    kind = "DOUBLE" if re.match(r"^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$", shown) else shown
    (cut,), = con.execute(f"SELECT TRY_CAST($1 AS {kind})::VARCHAR",
                          [settings.time_cut]).fetchall()
    if cut is None:
        raise InputError(f"{said('time_cut', cli, settings.time_cut)} is not a value of the time "
                         f"column {settings.cols['time']!r} ({shown})", usage=True)
    return f"CAST({literal(cut)} AS {kind})"


def _run(con, settings: Settings, cli: bool) -> None:
    """The split made in `con` as the view ndcg_split (the rows with ndcg_part). A holdout: each
    user's counts (ndcg_split_users, where every row is checked) and edges (ndcg_split_edges) made
    once, small tables, and the rows of the users whose tie straddles the edge with their part
    (ndcg_split_tied; read only when there is one); the view is ndcg_split_untied over them and
    those rows (as ndcg_split_parts composes them), read once for each part: the other rows are
    not copied. A time cut: a table of the rows (its checks are in the pass that reads them)."""
    if settings.time_cut is not None:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_split_cut AS FROM ndcg_split_time_cut("
                    f"'ndcg_interactions', {_cut(con, settings, cli)})")
        con.execute("CREATE OR REPLACE TEMP VIEW ndcg_split AS FROM ndcg_split_cut")
        return
    try:  # the options' own checks (ndcg_split_minimum), before the data is read
        con.execute(f"SELECT ndcg_split_minimum({_value(settings.test_share)}, "
                    f"{_value(settings.test_last)}, {_value(settings.min_interactions)})")
    except duckdb.Error as exc:
        raise InputError(in_words(duckdb_message(exc), cli), usage=True) from None
    keys = (f"ndcg_split_random_keys('ndcg_interactions', {settings.seed or 0!r})"
            if settings.by == "random" else "ndcg_split_temporal_keys('ndcg_interactions')")
    short = literal(settings.short_users)
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_split_keyed AS FROM {keys}")
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_split_counted AS FROM ndcg_split_users("
                f"'ndcg_split_keyed', {_value(settings.test_share)}, "
                f"{_value(settings.test_last)}, {_value(settings.min_interactions)}, {short})")
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_split_edged AS "
                "FROM ndcg_split_edges('ndcg_split_keyed', 'ndcg_split_counted')")
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_split_ties AS "
                "FROM ndcg_split_tied('ndcg_split_keyed', 'ndcg_split_edged')")
    con.execute("CREATE OR REPLACE TEMP VIEW ndcg_split AS "
                f"FROM ndcg_split_untied('ndcg_split_keyed', 'ndcg_split_edged', {short}) "
                "UNION ALL FROM ndcg_split_ties")


def _value(value) -> str:
    return "NULL" if value is None else repr(value)


class Counts(NamedTuple):
    """What the split made: rows and users of each part, users only in one part, short users
    left out (with their rows)."""

    train_rows: int
    train_users: int
    test_rows: int
    test_users: int
    only_train: int
    only_test: int
    dropped_users: int
    dropped_rows: int


@contextmanager
def splitting(source, given: dict, cli: bool, con=None):
    """Split `source` (a path, glob, directory, relation, Arrow table or DataFrame) by the
    options `given` (the registry's names); yields (cursor, what, settings) with the view
    ndcg_split (the rows with ndcg_part) made in the cursor (_run)."""
    settings = check(given, cli)
    owner = con if con is not None else own_connection()
    try:
        with borrowed(owner, settings.limits) as work, interrupts.watching(work):
            work.execute("".join(path.read_text(encoding="utf-8") for path in sources()
                                 if path.name in SQL_FILES))
            what = _view(work, source, settings, cli)
            try:
                _run(work, settings, cli)
            except duckdb.Error as exc:
                text = duckdb_message(exc)
                text = re.sub(r"^interactions: ", f"{what}: ", text)
                for role in ("user", "item", "time"):
                    text = text.replace(f"column {CANONICAL[role]}",
                                        f"column {settings.cols[role]!r}")
                raise InputError(objectstore.as_urls(in_words(text, cli))) from None
            yield work, what, settings
    finally:
        if con is None:
            owner.close()


def part_sql(settings: Settings, part: str) -> str:
    """The rows of one part of ndcg_split, with the caller's column names."""
    timed = settings.by == "time" or settings.time_cut is not None
    roles = ["user", "item"] + (["time"] if timed else [])
    renamed = ", ".join(f"{CANONICAL[role]} AS {ident(settings.cols[role])}" for role in roles
                        if settings.cols[role] != CANONICAL[role])
    return (f"SELECT * EXCLUDE ({PART})" + (f" RENAME ({renamed})" if renamed else "")
            + f" FROM ndcg_split WHERE {PART} = {literal(part)}")


def counts(con, settings: Settings) -> Counts:
    """The split's counts: a holdout's from its users' counts (ndcg_split_counts), a time cut's
    (which leaves no one out) from its rows."""
    if settings.time_cut is None:
        (found,) = con.sql("FROM ndcg_split_counts('ndcg_split_counted', "
                           f"{literal(settings.short_users)})").fetchall()
        return Counts(*found)
    (rows_train, users_train, rows_test, users_test, only_train, only_test), = con.sql(
        "SELECT coalesce(sum(train), 0)::BIGINT, count(*) FILTER (train > 0), "
        "coalesce(sum(test), 0)::BIGINT, count(*) FILTER (test > 0), "
        "count(*) FILTER (test = 0), count(*) FILTER (train = 0) "
        f"FROM (SELECT user_id, count(*) FILTER ({PART} = 'train') AS train, "
        f"count(*) FILTER ({PART} = 'test') AS test FROM ndcg_split GROUP BY user_id)").fetchall()
    return Counts(rows_train, users_train, rows_test, users_test, only_train, only_test, 0, 0)


def summary(found: Counts, settings: Settings) -> str:
    """What `ndcg-duck split` prints: rows and users of each part, and who is in one part only."""
    lines = [f"train  {found.train_rows} rows  {_users(found.train_users)}",
             f"test   {found.test_rows} rows  {_users(found.test_users)}"]
    if settings.time_cut is not None:
        if found.only_test:
            lines.append(f"only in test (no interaction before the cut): "
                         f"{_users(found.only_test)}")
        if found.only_train:
            lines.append(f"only in train (no interaction at or after the cut): "
                         f"{_users(found.only_train)}")
    elif settings.short_users == "train" and found.only_train:
        lines.append(f"kept whole in train (fewer interactions than the minimum): "
                     f"{_users(found.only_train)}")
    elif settings.short_users == "drop" and found.dropped_users:
        lines.append(f"left out (fewer interactions than the minimum): "
                     f"{_users(found.dropped_users)}, {found.dropped_rows} rows")
    return "\n".join(lines) + "\n"


def _users(count: int) -> str:
    return f"{count} user" if count == 1 else f"{count} users"


def split(interactions, *, test_share=None, test_last=None, by="time", seed=None,
          time_cut=None, threshold=None, min_interactions=None, short_users="error",
          user_col=None, item_col=None, time_col=None, relevance_col=None, threads=None,
          memory_limit=None, temp_dir=None, con=None):
    """Split interactions into (train, test), two pyarrow Tables with the input's columns.

    interactions: a path (Parquet, CSV, JSON; a glob or a directory), a DuckDB relation, an Arrow
    table or a pandas/polars DataFrame, with a user and an item column (user_col=, item_col=) and,
    for by='time' and time_cut=, a time column (time_col=, default 'timestamp'). One of:
    test_share= (each user's last share of interactions, rounded down, at least 1), test_last=
    (each user's last n) or time_cut= (a global cut: before it train, at or after it test). by=
    'time' (ties by item id, then by the whole row) or 'random' (a hash of seed=, user and item:
    the same on any number of threads). Users with fewer than min_interactions= (default: what
    the holdout needs) stop with an error (short_users='error'), stay whole in train ('train')
    or are left out ('drop'). threshold=R makes the relevance column (relevance_col=) 1 when
    >= R, else 0. Bad input or options raise InputError in these keywords' words.
    """
    given = dict(test_share=test_share, test_last=test_last, split_by=by, split_seed=seed,
                 time_cut=None if time_cut is None else str(time_cut), threshold=threshold,
                 min_interactions=min_interactions, short_users=short_users, user_col=user_col,
                 item_col=item_col, time_col=time_col, relevance_col=relevance_col,
                 threads=threads, memory_limit=memory_limit, temp_dir=temp_dir)
    try:
        with splitting(interactions, given, cli=False, con=con) as (work, _, settings):
            return (work.sql(part_sql(settings, "train")).to_arrow_table(),
                    work.sql(part_sql(settings, "test")).to_arrow_table())
    except InputError as exc:
        raise InputError(registry.in_python_words(str(exc)), usage=exc.usage) from None


def write(source, given: dict, out_train: str, out_test: str) -> str:
    """`ndcg-duck split`: the two files written (each whole, or not at all), and the summary."""
    for path in (out_train, out_test):
        output.check_output_path(path)
    with splitting(source, given, cli=True) as (work, _, settings):
        output.write_query(work, part_sql(settings, "train"), out_train)
        output.write_query(work, part_sql(settings, "test"), out_test)
        found = counts(work, settings)
    return summary(found, settings)
