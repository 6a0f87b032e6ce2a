"""Segments: a table of users and the group each belongs to, to break every result down by group.

`attach` loads the table (a path in any supported format, or a table in memory) as the view
ndcg_segments (user_id, segment: text), checked by sql/ndcg_segments.sql: one segment per user.
`means_in` gives the per-segment means of a run's per-user table in the run's own connection,
for `ndcg-duck eval --segments` (`by_segment`: of an Arrow table); `rows` and `check_placed` are
the steps every engine shares, whoever adds the users up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import duckdb

from .. import means, metrics as metric_names
from ..evaluation import beyond, inputs
from ..errors import InputError
from ..options import USER_COL
from ..outcome import not_in_segments
from ..sqltext import ident, literal

ALL = "(all)"  # sql/ndcg_segments.sql's ndcg_all_segment()
FORMATS = ("parquet", "csv", "json")


def in_order(names, unknown: str) -> list:
    """Segment names in the order every table shows them (by_segment's ORDER BY): by name,
    the unknown segment last."""
    return sorted(names, key=lambda name: (name == unknown, name.encode()))


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
    and `by` give each user's segment. Returns how messages name the source."""
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
    con.execute(f"CREATE OR REPLACE TEMP TABLE {into} AS "
                f"FROM ndcg_by_segment('ndcg_segments_users', 'ndcg_segments')")
    (placed, users), = con.sql(f"SELECT count(*) FILTER (WHERE segment <> ndcg_unknown_segment()), "
                               f"count(*) FROM {into}").fetchall()
    check_placed(what, users, placed, example_id(con), lambda: con.sql(
        f"SELECT min(user_id)::VARCHAR FROM {into}").fetchall()[0][0])


def example_id(con, as_text: bool = False) -> Optional[str]:
    """The smallest user id of the segment table ndcg_segments (compared as text with
    as_text, as when the ids are typed unlike the users'), as text, for check_placed's
    message; None when no row of it places a user in a segment."""
    lowest = "min(user_id::VARCHAR)" if as_text else "min(user_id)::VARCHAR"
    (theirs,), = con.sql(f"SELECT CASE WHEN bool_or(segment <> ndcg_unknown_segment()) "
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
    (unknown,), = con.sql("SELECT ndcg_unknown_segment()").fetchall()
    return rows(users, found, metrics, unknown)


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
