"""`ndcg-duck split` and ndcg_duck.split (issue 33, point 1): the command's output, its files and
its refusals; the numbers are tests/oracles/test_reference_split.py's."""

import csv

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ndcg_duck
from ndcg_duck.cli import cli

INTERACTIONS = ("uid,item_id,ts,rating\n1,a,10,5\n1,b,10,3\n1,c,11,4\n1,d,12,2\n1,e,1,3\n"
                "2,c,5,1\n2,d,6,5\n3,x,1,4\n")
COLUMNS = ["--user-col", "uid", "--time-col", "ts"]


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="ndcg-duck")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def inter(tmp_path):
    path = tmp_path / "inter.csv"
    path.write_text(INTERACTIONS, encoding="utf-8")
    return path


def rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return sorted(csv.reader(handle))


def test_split_writes_both_files_with_the_callers_columns_and_says_what_it_did(tmp_path, inter):
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    result = invoke("split", inter, "--test-share", "0.2", "--short-users", "train", *COLUMNS,
                    "--out-train", train, "--out-test", test)
    assert (result.exit_code, result.output) == (0, (
        "train  6 rows  3 users\n"
        "test   2 rows  2 users\n"
        "kept whole in train (fewer interactions than the minimum): 1 user\n"))
    assert rows(test) == [["1", "d", "12", "2"], ["2", "d", "6", "5"],
                          ["uid", "item_id", "ts", "rating"]]
    assert len(rows(train)) == 7 and ["3", "x", "1", "4"] in rows(train)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inter.csv", "test.csv", "train.csv"]


def test_split_drops_short_users_and_counts_them(tmp_path, inter):
    result = invoke("split", inter, "--test-last", "2", "--short-users", "drop", *COLUMNS,
                    "--threshold", "4", "--relevance-col", "rating",
                    "--out-train", tmp_path / "train.parquet", "--out-test", tmp_path / "t.json")
    assert (result.exit_code, result.output) == (0, (
        "train  3 rows  1 user\n"
        "test   2 rows  1 user\n"
        "left out (fewer interactions than the minimum): 2 users, 3 rows\n"))
    train = pq.read_table(tmp_path / "train.parquet")
    assert train.column_names == ["uid", "item_id", "ts", "rating"]
    assert sorted(train.to_pylist(), key=lambda r: r["item_id"]) == [
        {"uid": 1, "item_id": "a", "ts": 10, "rating": 1},
        {"uid": 1, "item_id": "b", "ts": 10, "rating": 0},
        {"uid": 1, "item_id": "e", "ts": 1, "rating": 0}]


def test_split_by_a_time_cut_names_the_users_in_one_part(tmp_path, inter):
    result = invoke("split", inter, "--time-cut", "6", *COLUMNS,
                    "--out-train", tmp_path / "a.csv", "--out-test", tmp_path / "b.csv")
    assert (result.exit_code, result.output) == (0, (
        "train  3 rows  3 users\n"
        "test   5 rows  2 users\n"
        "only in train (no interaction at or after the cut): 1 user\n"))


def test_the_help_has_an_example():
    result = invoke("split", "--help")
    assert result.exit_code == 0 and "Example:" in result.output
    assert "ndcg-duck split examples/interactions.csv --test-share 0.2" in result.output


OUT = ["--out-train", "{d}/a.csv", "--out-test", "{d}/b.csv"]


@pytest.mark.parametrize("args, message", [
    (["--test-share", "0.2", "--out-train", "{d}/a.csv"],
     "give --out-train FILE and --out-test FILE: where to write the two parts"),
    (["--test-share", "0.2", "--test-last", "1", *OUT],
     "give one of --test-share, --test-last, --time-cut: how much of each user goes to test, "
     "or where the time cut is"),
    (["--test-share", "0.2", "--seed", "3", *OUT], "--seed is for --by random"),
    (["--time-cut", "5", "--by", "random", *OUT],
     "--by is for the per-user holdouts (--test-share, --test-last), not for --time-cut"),
    (["--time-cut", "noon", *OUT],
     "--time-cut noon is not a value of the time column 'ts' (BIGINT)"),
    (["--test-last", "2", "--min-interactions", "2", *OUT],
     "--min-interactions must be an integer >= 3 (one interaction in train and the test ones), "
     "not 2"),
    (["--test-share", "0.2", "--out-train", "{d}/inter.csv", "--out-test", "{d}/b.csv"],
     "--out-train {d}/inter.csv is the interactions file INTERACTIONS ({d}/inter.csv): write "
     "the train rows elsewhere"),
    (["--test-share", "0.2", "--out-train", "{d}/a.csv", "--out-test", "{d}/a.csv"],
     "--out-train and --out-test are both {d}/a.csv: give two files"),
    (["--test-share", "0.2", "--out-train", "{d}/a.txt", "--out-test", "{d}/b.csv"],
     "cannot tell the format of output file {d}/a.txt: use one of .parquet, .csv, .json, "
     ".jsonl, .ndjson"),
])
def test_usage_errors(tmp_path, inter, args, message):
    result = invoke("split", inter, *COLUMNS, *(a.format(d=tmp_path) for a in args))
    assert result.exit_code == 2
    assert result.output.endswith(f"\n\nError: {message.format(d=tmp_path)}\n"), result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inter.csv"]


def test_python_errors_are_in_python_words(inter):
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.split(str(inter), test_share=0.2, seed=1, user_col="uid", time_col="ts")
    assert str(raised.value) == "seed= is for by='random'" and raised.value.usage
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.split(str(inter), test_last=1, user_col="uid", time_col="ts")
    assert str(raised.value) == (
        f"interactions file {inter}: user 3 has 1 interaction, fewer than the 2 of "
        f"min_interactions=: leave such users out with short_users='drop', or keep them whole "
        f"in train with short_users='train'")
    assert not raised.value.usage
