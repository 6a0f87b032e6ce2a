"""Batches of users: a large evaluation runs as one query per range of user ids.

Each range takes every row of its users from both inputs, so a batch is a complete evaluation of
its users and the per-user results are simply appended. DuckDB spills joins and sorts to disk,
but not the per-user lists the evaluation gathers (hits and ideal gains), so a batch holds about
as many users as the memory limit allows. When the files are grouped by user, as most exports
are, a batch of a Parquet file reads only the row groups of its range.
"""

from __future__ import annotations

import math
import re

from ..sqltext import literal

# Peak memory per user measured at 10M users (about 1.1 KB: benchmarks/, BENCHMARKS.md), with
# room for longer lists of judgments.
BYTES_PER_USER = 3000
FEWEST_USERS = 10_000  # a batch never holds fewer users than this
SAMPLE_ROWS = 100_000  # user ids sampled to place the boundaries
MAX_BATCHES = 1000  # so the boundaries stay a short SQL list; batches grow to stay within it
UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
EVERYONE = ["true"]
# Long rows (one row per user and item: the layouts 'ranks' and 'scores') are evaluated at most
# this many users a batch, however much the memory limit allows: gathering each user's first
# items from its rows keeps 2.5-3 KB a user: 1M users x 100 rows peaked at 2.5 GB by rank and
# 3.1 GB by score in one batch, 1.4 and 1.7 GB in two, 1.1 and 1.3 GB in three, for 0-5% more
# CPU when the file is grouped by user (one more reading of it a batch when it is not).
# benchmarks/reports/2026-11-26-issue34-long-rows.md.
LONG_MOST_USERS = 350_000
LONG_LAYOUTS = ("ranks", "scores")


def users_per_batch(con, layout: str = "lists") -> int:
    """How many users a batch may hold under the connection's memory limit, and for long rows
    (`layout` 'ranks' or 'scores') no more than LONG_MOST_USERS."""
    (setting,), = con.sql("SELECT current_setting('memory_limit')").fetchall()
    found = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]+)\s*", str(setting))
    if found is None or found.group(2).upper() not in UNITS:
        size = 10**12  # no limit that we can read: one batch
    else:
        limit = float(found.group(1)) * UNITS[found.group(2).upper()]
        size = max(FEWEST_USERS, int(limit // BYTES_PER_USER))
    return min(size, LONG_MOST_USERS) if layout in LONG_LAYOUTS else size


def user_ranges(con, recs: str, batch_users: int) -> list[str]:
    """SQL conditions on user_id, one per batch of about `batch_users` users of the relation
    `recs` (larger when that would make more than MAX_BATCHES batches); together they take every
    row of either input once (NULL ids go to the first)."""
    (rows,), = con.sql(f"SELECT count(*) FROM {recs}").fetchall()
    if rows <= batch_users:
        return EVERYONE
    (users,), = con.sql(f"SELECT approx_count_distinct(user_id) FROM {recs}").fetchall()
    count = min(math.ceil(users / batch_users), MAX_BATCHES)
    if count <= 1:
        return EVERYONE
    fractions = [i / count for i in range(1, count)]
    (bounds, sql_type), = con.sql(
        f"SELECT list_sort(list_distinct(quantile_disc(user_id, {fractions})))::VARCHAR[], "
        f"any_value(typeof(user_id)) "
        f"FROM (SELECT user_id FROM {recs} WHERE user_id IS NOT NULL "
        f"USING SAMPLE reservoir({SAMPLE_ROWS} ROWS) REPEATABLE (7))").fetchall()
    values = [f"CAST({literal(text)} AS {sql_type})" for text in bounds or []]
    if not values:
        return EVERYONE
    ranges = [f"(user_id < {values[0]} OR user_id IS NULL)"]
    ranges += [f"user_id >= {low} AND user_id < {high}" for low, high in zip(values, values[1:])]
    ranges.append(f"user_id >= {values[-1]}")
    return ranges
