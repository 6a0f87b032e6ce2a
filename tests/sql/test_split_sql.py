"""sql/ndcg_split.sql's macros in DuckDB as the shell runs them: what they return, and a bad
parameter or row stopping the query with a message that names it (issue 33, point 1). The
numbers of every protocol: tests/oracles/test_reference_split.py."""

import re

import duckdb
import pytest

ROWS = ("SELECT * FROM (VALUES (1, 'a', 10, 5), (1, 'b', 10, 3), (1, 'c', 11, 4), (2, 'c', 5, 1),"
        " (2, 'd', 6, 5), (3, 'x', 1, 4)) v(user_id, item_id, timestamp, rating)")


@pytest.fixture
def inter(con):
    con.execute(f"CREATE TABLE inter AS {ROWS}")
    return con


def test_each_row_comes_back_with_its_part(inter):
    got = inter.sql("SELECT user_id, item_id, rating, ndcg_part FROM ndcg_split_leave_one_out("
                    "'inter', short_users := 'train') ORDER BY ALL").fetchall()
    assert got == [(1, "a", 5, "train"), (1, "b", 3, "train"), (1, "c", 4, "test"),
                   (2, "c", 1, "train"), (2, "d", 5, "test"), (3, "x", 4, "train")]
    # ties at time 10: by item id, so b is the later one
    assert inter.sql("SELECT item_id FROM ndcg_split_temporal('inter', test_last := 2, "
                     "short_users := 'drop') WHERE ndcg_part = 'test' ORDER BY 1").fetchall() \
        == [("b",), ("c",)]
    assert inter.sql("SELECT count(*) FROM ndcg_split_random('inter', test_share := 0.5, "
                     "seed := 9, short_users := 'drop') WHERE ndcg_part = 'test'").fetchall() \
        == [(2,)]
    assert inter.sql("SELECT ndcg_split_binary(rating, 4) FROM inter ORDER BY ALL").fetchall() \
        == [(0,), (0,), (1,), (1,), (1,), (1,)]


@pytest.mark.parametrize("macro", ["ndcg_split_temporal", "ndcg_split_random"])
def test_identical_rows_across_the_edge_go_one_to_each_part(con, macro):
    # the two rows tie on every key: the edge falls between them, so one is test, one train
    con.execute("CREATE TABLE twice AS SELECT * FROM (VALUES (1, 'a', 10), (1, 'a', 10)) "
                "v(user_id, item_id, timestamp)")
    assert con.sql(f"SELECT ndcg_part, count(*) FROM {macro}('twice', test_last := 1) "
                   "GROUP BY ALL ORDER BY ALL").fetchall() == [("test", 1), ("train", 1)]


def test_the_random_key_keeps_the_hash_order_in_two_parts(con):
    # ndcg_split_high (a BIGINT for the top-n) and ndcg_split_low (read only by the tied users'
    # sort): hashes next to each other and across 2^63 must keep their order and stay apart
    hashes = [0, 1, 2, 3, 2**63 - 2, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1]
    got = con.execute("SELECT ndcg_split_high(h), ndcg_split_low(h) FROM "
                      "unnest($1::UBIGINT[]) t(h)", [hashes]).fetchall()
    assert [(high, low) for high, low in got] == [(h // 2, h % 2) for h in hashes]
    assert sorted(got) == got and len(set(got)) == len(hashes)


def test_a_share_is_read_as_written_not_as_a_float(con):
    # 0.29 x 100 is 28.999999999999996 in floating point: rounded down, 28; as written, 29
    con.execute("CREATE TABLE hundred AS SELECT 1 AS user_id, i AS item_id, i AS timestamp "
                "FROM range(100) t(i)")
    assert con.sql("SELECT count(*) FROM ndcg_split_temporal('hundred', test_share := 0.29) "
                   "WHERE ndcg_part = 'test'").fetchall() == [(29,)]


@pytest.mark.parametrize("call, message", [
    ("ndcg_split_temporal('inter', test_share := 0.2, test_last := 1)",
     "give one of test_share (a share of each user's interactions) and test_last (a number of "
     "them)"),
    ("ndcg_split_temporal('inter')",
     "give one of test_share (a share of each user's interactions) and test_last (a number of "
     "them)"),
    ("ndcg_split_temporal('inter', test_share := 1)",
     "test_share must be a number between 0 and 1 (both left out), not 1"),
    ("ndcg_split_temporal('inter', test_last := 0)", "test_last must be an integer >= 1, not 0"),
    ("ndcg_split_temporal('inter', test_last := 1, min_interactions := 1)",
     "min_interactions must be an integer >= 2 (one interaction in train and the test ones), "
     "not 1"),
    ("ndcg_split_temporal('inter', test_last := 1, short_users := 'keep')",
     "short_users must be one of error, train, drop, not keep"),
    ("ndcg_split_random('inter', test_last := 1, seed := -1, short_users := 'train')",
     "seed must be an integer >= 0, not -1"),
    ("ndcg_split_temporal('inter', test_last := 1)",
     "interactions: user 3 has 1 interaction, fewer than the 2 of min_interactions: leave such "
     "users out with short_users 'drop', or keep them whole in train with short_users 'train'"),
    ("ndcg_split_time_cut('inter', NULL)", "cut must be a time, not NULL"),
])
def test_a_bad_parameter_stops_naming_it(inter, call, message):
    with pytest.raises(duckdb.Error, match="ndcg-duck: (.*)") as raised:
        inter.sql(f"FROM {call}").fetchall()
    assert str(raised.value).split("ndcg-duck: ", 1)[1] == message


@pytest.mark.parametrize("row, message", [
    ("(NULL, 'a', 1)", "interactions: a row has no user id (NULL): fill it in or drop the row"),
    ("(1, NULL, 1)", "interactions: a row has no item id (user 1) (NULL): fill it in or drop "
                     "the row"),
    ("(1, 'a', NULL)", "interactions: a row has no timestamp (user 1, item a) (NULL): fill it "
                       "in or drop the row"),
    ("(1, 'a', 'nan'::DOUBLE)", "interactions: user 1, item a has timestamp nan: give a finite "
                                "number"),
    ("(1, 'a', '-inf'::DOUBLE)", "interactions: user 1, item a has timestamp -inf: give a "
                                 "finite number"),
])
@pytest.mark.parametrize("good_rows_before", [0, 20000])
def test_a_bad_row_stops_naming_it(con, row, message, good_rows_before):
    # the rows are read for the problem's words only when a user's counts show one: past the
    # first chunks of rows (20,000 good ones before it), only those counts find it
    con.execute("CREATE TABLE bad AS SELECT * FROM (SELECT 10 + i // 2 AS user_id, i::VARCHAR "
                "AS item_id, i::DOUBLE AS timestamp "
                f"FROM range({good_rows_before}) r(i)) UNION ALL "
                f"SELECT * FROM (VALUES {row}, (1, 'b', 2)) v(user_id, item_id, timestamp)")
    with pytest.raises(duckdb.Error) as raised:
        con.sql("FROM ndcg_split_leave_one_out('bad')").fetchall()
    assert str(raised.value).split("ndcg-duck: ", 1)[1] == message


def test_the_files_a_split_registers_define_every_macro_they_call():
    # ndcg-duck split registers these files only (splitting/protocols.py, SQL_FILES)
    from ndcg_duck.splitting.protocols import SQL_FILES
    from ndcg_duck.sqlfiles import sources
    text = "".join(path.read_text(encoding="utf-8") for path in sources()
                   if path.name in SQL_FILES)
    code = re.sub(r"--[^\n]*|'(?:[^']|'')*'", "", text)
    called = set(re.findall(r"\b(ndcg_\w+)\(", code))
    assert "ndcg_split_users" in called and "ndcg_require" in called
    assert called - set(re.findall(r"MACRO (ndcg_\w+)\(", code)) == set()
