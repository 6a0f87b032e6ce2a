"""Segments: a table of users and the group each belongs to, to break every result down by group.

`attach` loads the table (a path in any supported format, or a table in memory) as the view
ndcg_segments (user_id, segment: text), checked by sql/ndcg_segments.sql: one segment per user;
or, given a `Cohorts` (--by user-activity with --train), computes that table from the train data
with the macro ndcg_user_activity (users absent from train: 'cold').
`means_in` gives the per-segment means of a run's per-user table in the run's own connection,
for `ndcg-duck eval --segments` (`by_segment`: of an Arrow table); `rows` and `check_placed` are
the steps every engine shares, whoever adds the users up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import duckdb

from .. import means, metrics as metric_names
from ..evaluation import beyond, inputs
from ..errors import InputError
from ..options import USER_COL, COHORTS
from ..outcome import not_in_segments
from ..sqltext import ident, literal

ALL = "(all)"  # sql/ndcg_segments.sql's ndcg_all_segment()
FORMATS = ("parquet", "csv", "json")


RANGE = re.compile(r"(\d+)(?:-(\d+)|\+)?")  # a name of a range of counts: 1-4, 100+, 2


def in_order(names, unknown: str) -> list:
    """Segment names in the order every table shows them: names of ranges of counts (1-4,
    5-19, 100+: activity cohorts) first, by their numbers, then the others by name, the
    unknown (or cold) segment last."""
    def key(name):
        found = RANGE.fullmatch(name)
        counts = (int(found.group(1)), int(found.group(2) or 0)) if found else ()
        return (name == unknown, not found, counts, name.encode())
    return sorted(names, key=key)


@dataclass(frozen=True)
class Cohorts:
    """--by user-activity: users grouped by their number of train interactions (rows of
    `train`, a path or a table in memory), by `cuts` (increasing counts >= 2, each the first of
    a group) or in `groups` quantile groups; users absent from train are 'cold'. attach makes
    the segment table from it (sql/ndcg_segments.sql ndcg_user_activity)."""

    train: object
    cuts: Optional[tuple] = None
    groups: Optional[int] = None


@dataclass(frozen=True)
class Popularity:
    """--by item-popularity: items grouped by their train popularity (train: a path or a table
    in memory), head and tail (groups None) or `groups` quantile ranges. Not a segment table:
    each group is scored again (popularity.score_groups), for eval and compare."""

    train: object
    groups: Optional[int] = None


def source(segments, by, train=None, groups=None, activity_cuts=None):
    """What `attach` reads for --segments FILE --by COLUMN, or for --by user-activity (with
    --train, --groups N or --activity-cuts): the file as given, or a Cohorts; for --by
    item-popularity, a Popularity (not a segment table: popularity.score_groups
    scores its groups); None for none. Checked before any work (options.check_segments)."""
    from ..options import BY_NAME, check_segments

    check_segments(segments, by, train, groups, activity_cuts)
    if segments is None and by == COHORTS[1]:
        return Popularity(train, groups)
    if segments is None and by in COHORTS:
        return Cohorts(train, BY_NAME["activity_cuts"].checked(activity_cuts), groups)
    return segments


def option(segments, by) -> str:
    """How the command line names what breaks the results down: --segments, or --by
    user-activity (item-popularity)."""
    return f"--by {by}" if isinstance(segments, (Cohorts, Popularity)) else "--segments"


def unplaced(con) -> str:
    """The segment of the users that attach's table does not place: '(unknown)' for a segment
    table, 'cold' for activity cohorts."""
    (name,), = con.sql("FROM ndcg_segments_unplaced").fetchall()
    return name


def shown(segment: str) -> str:
    """A segment's name as the table views show it: as it is, unless a character of it does not
    print (a line break, a tab, another control or format character, a space other than ' ') or
    it begins or ends with a space; then quoted with Python's escapes (repr: 'north\\neast'), so
    every segment keeps to one line and reads apart from the others. CSV and JSON give names as
    they are."""
    if segment.isprintable() and segment == segment.strip():
        return segment
    return repr(segment)


def attach(con, source, by: str, user_col: str = USER_COL, fmt=None) -> str:
    """Create ndcg_segments (user_id, segment) in `con` from `source`, whose columns `user_col`
    and `by` give each user's segment (a Cohorts: computed from its train data), and the
    one-row table ndcg_segments_unplaced (unplaced's name). Returns how messages name the
    source."""
    if isinstance(source, Cohorts):
        return _attach_cohorts(con, source, user_col)
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_segments_unplaced AS "
                "SELECT ndcg_unknown_segment() AS segment")
    if isinstance(source, (str, Path)):
        path = str(source)
        if fmt is None:
            suffixes = [s.lower() for s in Path(path).suffixes if s.lower() not in (".gz", ".zst")]
            fmt = inputs.EXTENSIONS.get(suffixes[-1] if suffixes else "")
        if fmt not in FORMATS:
            raise InputError(f"cannot tell the format of segments file {path} from its "
                             f"extension: use a .parquet, .csv or .json name", usage=True)
    what = inputs.attach_source(con, source, "ndcg_segments_src", fmt, "segments")[0]
    found = [row[0] for row in con.sql("DESCRIBE ndcg_segments_src").fetchall()]
    for column, flag in ((user_col, "--user-col"), (by, "--by")):
        if column not in found:
            raise InputError(f"{what}: no column {column!r} (columns found: {', '.join(found)}); "
                             f"name it with {flag}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_segments_in AS SELECT {ident(user_col)} AS "
                f"user_id, {ident(by)} AS segment FROM ndcg_segments_src")
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_segments AS "
                    "FROM ndcg_segment_of('ndcg_segments_in')")
    except duckdb.Error as exc:
        text = str(exc).strip().splitlines()[0]
        raise InputError(f"{what}: {text.split('ndcg-duck: segments: ', 1)[-1]}") from None
    return what


def _attach_cohorts(con, cohorts: Cohorts, user_col: str) -> str:
    """attach for --by user-activity: the train data's users (user_col, as beyond.load reads
    them) and their activity group, by the cuts given or those of the quantile groups."""
    what = inputs.attach_source(con, cohorts.train, "ndcg_segments_src", None, "train").what
    schema = inputs.schema_of(con, "ndcg_segments_src", what)
    inputs.need_column(schema, user_col, what, "--user-col")
    inputs.need_id(schema[user_col], user_col, what)
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_segments_in AS SELECT "
                f"{inputs.id_column(user_col, schema[user_col], False)} AS user_id "
                f"FROM ndcg_segments_src")
    cuts = (f"(SELECT cuts FROM ndcg_activity_quantiles('ndcg_segments_in', {cohorts.groups}))"
            if cohorts.cuts is None else f"{list(cohorts.cuts)}::BIGINT[]")
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE ndcg_segments AS "
                    f"FROM ndcg_user_activity('ndcg_segments_in', {cuts})")
    except duckdb.Error as exc:
        text = str(exc).strip().splitlines()[0]
        raise InputError(f"{what}: {text.split('ndcg-duck: train: ', 1)[-1]}") from None
    con.execute("CREATE OR REPLACE TEMP TABLE ndcg_segments_unplaced AS "
                "SELECT ndcg_cold_segment() AS segment")
    return what


def _type(con, relation: str) -> str:
    return {name: kind for name, kind, *_ in con.sql(f"DESCRIBE {relation}").fetchall()}["user_id"]


def join(con, per_user: str, into: str, what: str) -> None:
    """Create the table `into`: every row of the relation `per_user` (user_id, values) and its
    user's segment. Ids typed differently on the two sides are compared as text. Stops when no
    user of per_user has a segment (almost always mismatched ids)."""
    ids = ""
    if _type(con, per_user) != _type(con, "ndcg_segments"):
        con.execute("CREATE OR REPLACE TEMP TABLE ndcg_segments AS "
                    "SELECT user_id::VARCHAR AS user_id, segment FROM ndcg_segments")
        ids = " REPLACE (user_id::VARCHAR AS user_id)"
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_segments_users AS "
                f"SELECT *{ids} FROM {per_user}")
    none = literal(unplaced(con))
    con.execute(f"CREATE OR REPLACE TEMP TABLE {into} AS "
                f"FROM ndcg_by_segment('ndcg_segments_users', 'ndcg_segments', unplaced := {none})")
    (placed, users), = con.sql(f"SELECT count(*) FILTER (WHERE segment <> {none}), "
                               f"count(*) FROM {into}").fetchall()
    check_placed(what, users, placed, example_id(con), lambda: con.sql(
        f"SELECT min(user_id)::VARCHAR FROM {into}").fetchall()[0][0])


def example_id(con, as_text: bool = False) -> Optional[str]:
    """The smallest user id of the segment table ndcg_segments (compared as text with
    as_text, as when the ids are typed unlike the users'), as text, for check_placed's
    message; None when no row of it places a user in a segment."""
    lowest = "min(user_id::VARCHAR)" if as_text else "min(user_id)::VARCHAR"
    (theirs,), = con.sql(f"SELECT CASE WHEN bool_or(segment <> {literal(unplaced(con))}) "
                         f"THEN {lowest} END FROM ndcg_segments").fetchall()
    return theirs


def check_placed(what: str, users: int, placed: int, theirs: Optional[str], ours) -> None:
    """Every engine's check of the users joined to the segment table `what`: stop when none of
    the `users` is among the `placed` ones though the table places some (theirs: example_id),
    almost always mismatched ids; ours() gives the smallest id of the users, as text."""
    if users and not placed and theirs is not None:
        raise InputError(not_in_segments(what, theirs, ours()))


def rows(users: dict, means: dict, metrics: list, unknown: str) -> list:
    """eval --segments' rows however an engine added them up: users {segment: how many users
    (None: everyone)}, means {(segment or None, metric): the exactly rounded mean of its users'
    values}: [{'segment', 'users', METRIC: mean, ...}], everyone ('(all)') first, then the
    segments by name, `unknown` last (None for a metric without a value). gm_map and gm_bpref
    show their geometric mean, as eval's summary (metrics.summarised)."""
    return [dict(segment=ALL if name is None else name, users=users[name],
                 **{m: metric_names.summarised(m.partition("@")[0], means.get((name, m)))
                    for m in metrics})
            for name in [None] + in_order([n for n in users if n is not None], unknown)]


def means_in(con, per_user: str, metrics: list, segments, by: str, user_col: str = USER_COL,
             fmt=None) -> list:
    """The mean of each of `metrics` per segment of `segments` over the relation `per_user` in
    `con` (the macros registered; its first column the user id, then a column per metric): the
    rows of `rows`. Every mean is the exactly rounded mean of its users' values (means.py), as
    eval's."""
    what = attach(con, segments, by, user_col, fmt)
    (user,), = con.sql(f"SELECT column_name FROM (DESCRIBE {per_user}) LIMIT 1").fetchall()
    values = ", ".join(ident(m) for m in metrics)
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_seg_per_user AS SELECT "
                f"{ident(user)} AS user_id, {values} FROM {per_user}")
    join(con, "ndcg_seg_per_user", "ndcg_seg_joined", what)
    users = dict(con.sql("SELECT segment, count(*) FROM ndcg_seg_joined GROUP BY segment"
                         ).fetchall())
    users[None] = sum(users.values())
    columns = {m: ident(m) for m in metrics}
    found = {(None, m): mean for (m,), mean in
             means.exact_means(con, "ndcg_seg_joined", columns).items()}
    found.update(means.exact_means(con, "ndcg_seg_joined", columns, groups=("segment",)))
    return rows(users, found, metrics, unplaced(con))


def by_segment(per_user, summary: dict, segments, by: str, user_col: str = USER_COL,
               fmt=None) -> list:
    """means_in for the per-user Arrow table `per_user` (from evaluate) and the metrics of
    `summary` among its columns, in a DuckDB connection of its own."""
    from ..sqlfiles import register

    con = duckdb.connect()
    try:
        register(con)
        con.register("ndcg_seg_arrow", per_user)
        return means_in(con, "ndcg_seg_arrow",
                        [c for c in per_user.column_names if c in summary], segments, by,
                        user_col, fmt)
    finally:
        con.close()


def segment_lists(con, segments, by: str, user_col: str, fmt=None):
    """In the cursor of a run that kept top_k lists (evaluation/beyond.py's ndcg_tops_): for each
    segment of `segments` (attach's checks; users it does not place are '(unknown)'), make the
    view ndcg_tops_segment of its users' lists and yield the segment's name."""
    what = attach(con, segments, by, user_col, fmt)
    con.execute("CREATE OR REPLACE TEMP VIEW ndcg_tops_users AS "
                "SELECT DISTINCT user_id FROM ndcg_tops_")
    join(con, "ndcg_tops_users", "ndcg_tops_segments", what)
    for (segment,) in con.sql("SELECT DISTINCT segment FROM ndcg_tops_segments "
                              "ORDER BY segment").fetchall():
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_tops_segment AS FROM ndcg_tops_ SEMI JOIN "
                    f"(FROM ndcg_tops_segments WHERE segment = {literal(segment)}) "
                    f"USING (user_id)")
        yield segment


def per_run_by_segment(con, segments, by: str, user_col: str, fmt=None) -> dict:
    """The per-run metrics (coverage, gini, entropy) of each segment's users, in the cursor of a
    run that computed them (evaluation/beyond.py's ndcg_tops_ and ndcg_catalogue_): {segment:
    {'coverage@10': value, ...}}. {} when the run computed no per-run metric."""
    if not beyond.kept_lists(con):
        return {}
    return {segment: beyond.per_run_values(con, "ndcg_tops_segment")
            for segment in segment_lists(con, segments, by, user_col, fmt)}
