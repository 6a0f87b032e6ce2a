"""Batches of users: the ranges cover every row once, and a batched run is the unbatched one.
(The reference test runs every option in batches of 1, 2 and 3 users as well.)"""

import importlib

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT, row
from ndcg_duck.evaluation import batches
from ndcg_duck.cli import cli

RECS = str(ROOT / "examples" / "recs.parquet")
LONG = str(ROOT / "examples" / "recs_long.csv")
RELS = str(ROOT / "examples" / "relevance.csv")


@pytest.mark.parametrize("ids", [[5, 1, 9, 3, 3, 7, None, 2, 8],
                                 ["b", "a,b", "é", "a", "a", "z", None, "B", "10"]])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 100])
def test_ranges_take_every_row_once(ids, size):
    con = duckdb.connect()
    con.register("recs", pa.table({"user_id": ids}))
    ranges = batches.user_ranges(con, "recs", size)
    taken = [row(con, f"SELECT count(*) FROM recs WHERE {users}")[0] for users in ranges]
    assert sum(taken) == len(ids)
    if size < len(set(ids)) - 1:
        assert len(ranges) > 1
    assert row(con, f"SELECT count(*) FROM recs WHERE user_id IS NULL AND {ranges[0]}") == (1,)


@pytest.mark.parametrize("recs", [RECS, LONG])
def test_batched_cli_prints_what_one_batch_prints(recs, tmp_path):
    runner = CliRunner()
    one = runner.invoke(cli, ["eval", recs, RELS, "-k", "1,5,all"])
    assert one.exit_code == 0, one.output
    for size in ("1", "2", "4"):
        out = tmp_path / f"users_{size}.csv"
        batched = runner.invoke(cli, ["eval", recs, RELS, "-k", "1,5,all", "--batch-users", size,
                                      "--per-user", str(out)])
        assert batched.exit_code == 0, batched.output
        assert batched.output == one.output
        assert out.read_text() == (tmp_path / "users_1.csv").read_text()


def test_a_bad_row_stops_the_batched_run_as_it_stops_one_batch():
    recs = pa.table({"user_id": ["a", "b", "c", "d"], "items": [["x"], ["y"], ["z"], ["x", "x"]]})
    rels = pa.table({"user_id": ["a", "b", None], "item_id": ["x", "y", "z"],
                     "relevance": [1, 1, 1]})
    for size in (None, 1):
        with pytest.raises(ndcg_duck.InputError, match="relevance .*: a row has no user id"):
            ndcg_duck.evaluate(recs, rels, batch_users=size)
    judged_twice = pa.table({"user_id": ["a", "d"], "item_id": ["x", "x"], "relevance": [1, 1]})
    with pytest.raises(ndcg_duck.InputError, match="user d ranks item x twice"):
        ndcg_duck.evaluate(recs, judged_twice, batch_users=1)


def test_the_memory_limit_sets_the_batch_size():
    con = duckdb.connect()
    con.execute("SET memory_limit = '3GB'")
    assert batches.users_per_batch(con) == pytest.approx(3e9 / batches.BYTES_PER_USER, rel=0.05)  # shown as 2.7 GiB
    con.execute("SET memory_limit = '1MB'")
    assert batches.users_per_batch(con) == batches.FEWEST_USERS


def test_a_small_memory_limit_splits_the_run(monkeypatch):
    seen = []
    split = batches.user_ranges
    monkeypatch.setattr(batches, "user_ranges", lambda *args: seen.append(split(*args)) or seen[-1])
    monkeypatch.setattr(batches, "FEWEST_USERS", 2)
    one = ndcg_duck.evaluate(RECS, RELS, k=[3, 10])
    monkeypatch.setattr(batches, "BYTES_PER_USER", 10**9)
    batched = ndcg_duck.evaluate(RECS, RELS, k=[3, 10], memory_limit="1GB")
    assert [len(ranges) for ranges in seen] == [1, 3]
    assert batched.per_user.equals(one.per_user)
    assert batched.summary == pytest.approx(one.summary, rel=1e-12)  # the mean's order of sums
    ndcg_duck.evaluate(LONG, RELS, memory_limit="1GB")  # a CSV is not read once more to count
    assert len(seen) == 2


def test_long_rows_are_batched_below_what_the_memory_limit_allows(monkeypatch):
    # long rows keep more a user than the 3 KB the limit is divided by: LONG_MOST_USERS caps them
    con = duckdb.connect()
    con.execute("SET memory_limit = '300GB'")
    assert batches.users_per_batch(con) == pytest.approx(300e9 / batches.BYTES_PER_USER, rel=0.1)
    assert batches.users_per_batch(con, "ranks") == batches.LONG_MOST_USERS
    assert batches.users_per_batch(con, "scores") == batches.LONG_MOST_USERS
    seen = []
    split = batches.user_ranges
    monkeypatch.setattr(batches, "user_ranges", lambda *args: seen.append(split(*args)) or seen[-1])
    long_rows = pa.table({"user_id": ["a", "a", "b", "c", "c", "d"],
                          "item_id": ["x", "y", "y", "z", "x", "x"], "rank": [1, 2, 1, 2, 1, 1]})
    rels = pa.table({"user_id": ["a", "b", "c", "d"], "item_id": ["y", "y", "z", "w"],
                     "relevance": [1, 2, 3, 1]})
    one = ndcg_duck.evaluate(long_rows, rels, k=[1, 2], rank_col="rank")
    monkeypatch.setattr(batches, "FEWEST_USERS", 1)
    monkeypatch.setattr(batches, "LONG_MOST_USERS", 2)
    batched = ndcg_duck.evaluate(long_rows, rels, k=[1, 2], rank_col="rank")
    assert [len(ranges) for ranges in seen] == [1, 2]
    assert batched.per_user.equals(one.per_user)
    assert batched.summary == one.summary


@pytest.mark.parametrize("size", [0, -1, 2.5, "10", True])
def test_batch_users_must_be_a_positive_whole_number(size):
    with pytest.raises(ndcg_duck.InputError, match="batch_users") as raised:
        ndcg_duck.evaluate("no-such-file.parquet", RELS, batch_users=size)  # checked first
    assert raised.value.usage


def test_batch_users_zero_is_a_cli_usage_error():
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--batch-users", "0"])
    assert result.exit_code == 2
    assert "--batch-users" in result.output


def test_the_number_of_batches_is_bounded(monkeypatch):
    # --batch-users 1 on millions of users would put millions of boundaries into one statement
    monkeypatch.setattr(batches, "MAX_BATCHES", 3, raising=False)
    con = duckdb.connect()
    con.register("recs", pa.table({"user_id": list(range(50))}))
    ranges = batches.user_ranges(con, "recs", 1)
    assert len(ranges) == 3
    assert sum(row(con, f"SELECT count(*) FROM recs WHERE {users}")[0] for users in ranges) == 50
    one = CliRunner().invoke(cli, ["eval", RECS, RELS, "-k", "1,all"])
    bounded = CliRunner().invoke(cli, ["eval", RECS, RELS, "-k", "1,all", "--batch-users", "1"])
    assert bounded.exit_code == 0 and bounded.output == one.output


def test_batched_all_trec_is_one_batch_and_stores_each_measure_without_a_cutoff_once(
        monkeypatch):
    """all_trec's 11 cutoffs are 11 rows a user; the measures without a cutoff (bpref, the set
    measures, iprec_at_recall_X ...) are stored once, in one list on the user's first row
    (ndcg_all_rows), not as columns NULL on the other ten, and read back as before."""
    evaluate_module = importlib.import_module("ndcg_duck.evaluation.evaluate")
    stored = []
    real_run = evaluate_module._run

    def spy(work, *args, **kwargs):
        found = real_run(work, *args, **kwargs)
        stored.append((work.sql("FROM ndcg_all_rows").columns,
                       row(work, "SELECT count(DISTINCT user_id), count(ndcg_once_), count(*) "
                                 "FROM ndcg_all_rows")))
        return found

    monkeypatch.setattr(evaluate_module, "_run", spy)
    one = ndcg_duck.evaluate(RECS, RELS, metrics="all_trec")
    batched = ndcg_duck.evaluate(RECS, RELS, metrics="all_trec", batch_users=2)
    assert batched.summary == one.summary
    assert batched.per_user.to_pylist() == one.per_user.to_pylist()
    assert "bpref" in one.per_user.column_names and "iprec_at_recall_0.50" in one.summary
    for columns, (users, lists, rows) in stored:
        assert "bpref" not in columns and "iprec_at_recall_0.50" not in columns
        assert lists == users and rows == 11 * users  # every user of either file
