"""The splits (sql/ndcg_split.sql through ndcg_duck.split) against the plain-Python reference of
each protocol (tests/reference/split.py) on seeded random interactions, and a worked example by
hand."""

import random

import duckdb
import pyarrow as pa
import pytest

import ndcg_duck
from reference import split as reference


def interactions(seed, users=30, items=25):
    """Random interactions: (user, item) pairs without repeats, times from a small range (so
    that a user's times tie), a rating; users with 1 to 12 interactions."""
    rng = random.Random(seed)
    rows = []
    for user in range(users):
        for item in rng.sample(range(items), rng.randint(1, 12)):
            rows.append({"user_id": user, "item_id": f"i{item:02d}",
                         "timestamp": rng.randint(0, 6), "rating": rng.randint(1, 5)})
    rng.shuffle(rows)
    return rows


def table(rows):
    return pa.Table.from_pylist(rows)


def as_set(part):
    """A part (Arrow table or list of dicts) as a set of rows."""
    rows = part.to_pylist() if hasattr(part, "to_pylist") else part
    return {tuple(sorted(row.items())) for row in rows}


def by_time(row):
    return row["timestamp"], row["item_id"]


@pytest.mark.parametrize("seed, short", [(1, "train"), (2, "drop")])
@pytest.mark.parametrize("protocol", [dict(share=0.2), dict(share=0.29), dict(last=1),
                                      dict(last=3)])
def test_temporal_holdouts_are_the_reference(seed, protocol, short):
    rows = interactions(seed)
    train, test = ndcg_duck.split(table(rows), test_share=protocol.get("share"),
                                  test_last=protocol.get("last"), short_users=short)
    want_train, want_test = reference.holdout(rows, by_time, protocol.get("share"),
                                              protocol.get("last"), short=short)
    assert as_set(train) == as_set(want_train) and as_set(test) == as_set(want_test)
    assert train.num_rows == len(want_train) and test.num_rows == len(want_test)


def hashes(rows, seed):
    """DuckDB's hash(seed, user, item) of each row, the random order's key (the hash is DuckDB's
    own function; what is tested is which rows the order sends to test)."""
    con = duckdb.connect()
    con.register("rows", table(rows))
    return {(user, item): value for user, item, value in con.sql(
        f"SELECT user_id, item_id, hash({seed}::BIGINT, user_id, item_id) FROM rows").fetchall()}


@pytest.mark.parametrize("seed, protocol", [(0, dict(share=0.3)), (7, dict(last=2))])
def test_random_holdout_is_the_reference(seed, protocol):
    rows = interactions(seed + 10)
    keys = hashes(rows, seed)
    train, test = ndcg_duck.split(table(rows), by="random", seed=seed, short_users="train",
                                  test_share=protocol.get("share"), test_last=protocol.get("last"))
    want_train, want_test = reference.holdout(
        rows, lambda row: (keys[row["user_id"], row["item_id"]], row["item_id"]),
        protocol.get("share"), protocol.get("last"), short="train")
    assert as_set(train) == as_set(want_train) and as_set(test) == as_set(want_test)


def test_random_holdout_depends_on_the_seed_not_on_threads_or_row_order():
    con = duckdb.connect()
    rows = con.sql("SELECT (i % 997) AS user_id, (i * 7919) % 100003 AS item_id "
                   "FROM range(30000) t(i)").to_arrow_table()
    shuffled = con.sql("FROM rows ORDER BY hash(item_id, 5)").to_arrow_table()
    runs = [ndcg_duck.split(data, test_share=0.2, by="random", seed=seed, threads=threads)
            for data, seed, threads in ((rows, 3, 1), (rows, 3, 2), (shuffled, 3, 2),
                                        (rows, 4, 2))]
    one, two, reordered, other = [(as_set(train), as_set(test)) for train, test in runs]
    assert one == two == reordered
    assert one != other


@pytest.mark.parametrize("cut", [0, 3])
def test_time_cut_is_the_reference(cut):
    rows = interactions(4)
    train, test = ndcg_duck.split(table(rows), time_cut=cut)
    want_train, want_test = reference.time_cut(rows, cut)
    assert as_set(train) == as_set(want_train) and as_set(test) == as_set(want_test)


def test_short_users_stop_naming_the_first_as_the_reference_does():
    rows = interactions(5)
    with pytest.raises(reference.Short) as wanted:
        reference.holdout(rows, by_time, last=4)
    user, count, users = wanted.value.args
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.split(table(rows), test_last=4)
    assert str(raised.value) == (
        f"interactions (Table): user {user} has {count} interaction{'s' * (count > 1)}, fewer "
        f"than the 5 of min_interactions= ({users} such users in all): leave such users out "
        f"with short_users='drop', or keep them whole in train with short_users='train'")


# The worked example, by hand. User 1: e@1, a@10, b@10, c@11, d@12 (a and b tie at 10: item id
# decides, a first); user 2: c@5, d@6; user 3: x@1.
WORKED = [{"user_id": u, "item_id": i, "timestamp": t, "rating": r} for u, i, t, r in [
    (1, "a", 10, 5), (1, "b", 10, 3), (1, "c", 11, 4), (1, "d", 12, 2), (1, "e", 1, 3),
    (2, "c", 5, 1), (2, "d", 6, 5), (3, "x", 1, 4)]]


def items(part):
    return sorted((row["user_id"], row["item_id"]) for row in part.to_pylist())


@pytest.mark.parametrize("options, test_items", [
    # 0.2 x 5 = 1: d; 0.2 x 2 = 0.4, rounded down 0, at least 1: d; user 3 kept in train
    (dict(test_share=0.2, short_users="train"), [(1, "d"), (2, "d")]),
    # 0.6 x 5 = 3: b, c, d (b after a at time 10); 0.6 x 2 = 1.2: d
    (dict(test_share=0.6, short_users="train"), [(1, "b"), (1, "c"), (1, "d"), (2, "d")]),
    # leave-one-out, user 3 left out
    (dict(test_last=1, short_users="drop"), [(1, "d"), (2, "d")]),
    # the last 2 need 3 interactions: user 2 and 3 stay whole in train
    (dict(test_last=2, short_users="train"), [(1, "c"), (1, "d")]),
    # a global cut at 10: a, b, c, d of user 1
    (dict(time_cut=10), [(1, "a"), (1, "b"), (1, "c"), (1, "d")]),
])
def test_worked_example(options, test_items):
    train, test = ndcg_duck.split(table(WORKED), **options)
    assert items(test) == test_items
    kept = [(r["user_id"], r["item_id"]) for r in WORKED
            if options.get("short_users") != "drop" or r["user_id"] != 3]
    assert sorted(items(train) + items(test)) == sorted(kept)


def test_threshold_makes_the_relevance_binary_in_both_parts():
    train, test = ndcg_duck.split(table(WORKED), test_last=1, short_users="train", threshold=4,
                                  relevance_col="rating")
    rated = {(r["user_id"], r["item_id"]): r["rating"] for r in WORKED}
    for part in (train, test):
        for row in part.to_pylist():
            assert row["rating"] == int(rated[row["user_id"], row["item_id"]] >= 4)
