"""The split protocols in plain Python, from their descriptions (docs/splitting.md), for the
tests to compare sql/ndcg_split.sql with. rows: dicts with 'user_id', 'item_id' and whatever
else; key(row): the order of a user's rows, the last ones going to test."""

from __future__ import annotations

import math
from fractions import Fraction


class Short(Exception):
    """A user with fewer interactions than the minimum: (first user, its count, how many)."""


def test_count(n: int, share=None, last=None) -> int:
    """How many of a user's n interactions go to test: last, or share x n rounded down (share as
    written, exactly), at least 1."""
    if last is not None:
        return last
    return max(math.floor(Fraction(str(share)) * n), 1)


def holdout(rows, key, share=None, last=None, minimum=None, short="error"):
    """(train, test) of a per-user holdout."""
    minimum = minimum or (last + 1 if last is not None else 2)
    users = {}
    for row in rows:
        users.setdefault(row["user_id"], []).append(row)
    few = sorted(user for user, mine in users.items() if len(mine) < minimum)
    if few and short == "error":
        raise Short(few[0], len(users[few[0]]), len(few))
    train, test = [], []
    for user, mine in users.items():
        if len(mine) < minimum:
            if short == "train":
                train += mine
            continue
        mine = sorted(mine, key=key)
        count = test_count(len(mine), share, last)
        train += mine[:-count]
        test += mine[-count:]
    return train, test


def time_cut(rows, cut):
    """(train, test) of a global time cut: before `cut` train, the rest test."""
    return ([row for row in rows if row["timestamp"] < cut],
            [row for row in rows if row["timestamp"] >= cut])
