"""Bad input: a short message naming the file, column, user, item or value; exit 1 for data,
2 for usage; no traceback; nothing half-written."""

import json
import math
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

import ndcg_duck
from ndcg_duck.cli import cli


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def write_csv(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def rels(tmp_path):
    return write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\nu1,a,1\nu1,b,2\nu2,c,1\n")


@pytest.fixture
def recs(tmp_path):
    path = tmp_path / "recs.parquet"
    pq.write_table(pa.table({"user_id": ["u1", "u2"], "items": [["a", "b"], ["c"]]}), path)
    return path


def nested(tmp_path, users, lists, name="bad.parquet"):
    path = tmp_path / name
    pq.write_table(pa.table({"user_id": users, "items": lists}), path)
    return path


# --- files ------------------------------------------------------------------------------------

def test_missing_file(rels):
    result = run("eval", "nowhere/recs.parquet", rels)
    assert result.exit_code == 1
    assert result.output == "Error: recommendations file nowhere/recs.parquet does not exist\n"


def test_unknown_extension_is_a_usage_error(tmp_path, rels):
    path = write_csv(tmp_path / "recs.xlsx", "x")
    result = run("eval", path, rels)
    assert result.exit_code == 2
    assert f"cannot tell the format of recommendations file {path}" in result.output
    assert "--recs-format" in result.output


def test_corrupt_parquet(tmp_path, rels):
    path = tmp_path / "recs.parquet"
    path.write_bytes(b"PAR1 this is not really parquet")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot read recommendations file {path}: ")


def test_unreadable_path_a_directory(tmp_path, rels):
    folder = tmp_path / "dir.parquet"
    folder.mkdir()
    result = run("eval", folder, rels)
    assert result.exit_code == 1
    assert result.output == (f"Error: recommendations directory {folder} holds no data files: "
                             f"give a file, a glob or a directory of .parquet, .csv or .json "
                             f"files\n")


def test_glob_matching_nothing(tmp_path, rels):
    result = run("eval", tmp_path / "none-*.parquet", rels)
    assert result.exit_code == 1
    assert result.output == (f"Error: recommendations glob {tmp_path / 'none-*.parquet'} matches "
                             f"no file\n")


# --- columns and types ------------------------------------------------------------------------

def test_missing_column_lists_the_columns_found(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "uid,item_id,rank\nu1,a,1\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output == (f"Error: recommendations file {path}: no column 'user_id' "
                             f"(columns found: uid, item_id, rank); name it with "
                             f"--recs-user-col (or --user-col for both files)\n")


# one file's own column names: the message names the file and that file's option
# (--recs-user-col, --rels-item-col, ...); case: (recs CSV, rels CSV, options, message)
RECS_CSV, RELS_CSV = "user_id,item_id,rank\nu1,a,1\n", "user_id,item_id,relevance\nu1,a,1\n"
OWN_COLUMNS = {
    "relevance without user_id": (
        RECS_CSV, "uid,item_id,relevance\nu1,a,1\n", [],
        "relevance file {rels}: no column 'user_id' (columns found: uid, item_id, relevance); "
        "name it with --rels-user-col (or --user-col for both files)"),
    "relevance without item_id": (
        RECS_CSV, "user_id,iid,relevance\nu1,a,1\n", [],
        "relevance file {rels}: no column 'item_id' (one judged item per row) or 'items' (a list "
        "of relevant items) (columns found: user_id, iid, relevance); name it with "
        "--rels-item-col (or --item-col for both files) or --items-col"),
    "recommendations without item_id": (
        "user_id,iid,rank\nu1,a,1\n", RELS_CSV, [],
        "recommendations file {recs}: no column 'items' (a list of item ids) or 'item_id' (one "
        "item per row) (columns found: user_id, iid, rank); name it with --items-col or "
        "--recs-item-col (or --item-col for both files)"),
    "--rels-user-col names no column": (
        RECS_CSV, "uid,item_id,relevance\nu1,a,1\n", ["--rels-user-col", "who"],
        "relevance file {rels}: no column 'who', named by --rels-user-col (columns found: uid, "
        "item_id, relevance); check --rels-user-col"),
    "--recs-item-col names no column": (
        RECS_CSV, RELS_CSV, ["--recs-item-col", "iid"],
        "recommendations file {recs}: no column 'iid', named by --recs-item-col (columns found: "
        "user_id, item_id, rank); check --recs-item-col"),
    "--user-col fixes one file, breaks the other": (
        RECS_CSV, "uid,item_id,relevance\nu1,a,1\n", ["--user-col", "uid"],
        "recommendations file {recs}: no column 'uid' (columns found: user_id, item_id, rank); "
        "name it with --recs-user-col (or --user-col for both files)"),
}


@pytest.mark.parametrize("case", list(OWN_COLUMNS))
def test_a_missing_column_names_the_file_and_its_option(tmp_path, case):
    recs_text, rels_text, options, message = OWN_COLUMNS[case]
    recs = write_csv(tmp_path / "recs.csv", recs_text)
    rels = write_csv(tmp_path / "rels.csv", rels_text)
    result = run("eval", recs, rels, *options)
    assert result.exit_code == 1
    assert result.output == "Error: " + message.format(recs=recs, rels=rels) + "\n"


def test_ragged_csv(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,rank\nu1,a,1\nu1,b,2,3,4\nu2\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert "its rows could not be split into columns" in result.output


@pytest.mark.parametrize("name, content, flags, problem", [
    # a lone carriage return: DuckDB's CSV reader stops in its own words ("state machine")
    ("run.txt", b"q1 Q0 d1 1 1.0 run\rx\nq1 Q0 d2 2 0.5 run\n", ["--recs-format", "trec"],
     "a carriage return (\\r) that does not end its line with \\n, where the other lines end "
     "in \\n: give the file one kind of line ending (\\n or \\r\\n)"),
    # the unit separator, which the TREC reader splits lines by: truncated without the check
    ("run.txt", b"q1 Q0 d1 1 1.0 run\nq1 Q0 d2\x1f 2 0.5 run\n", ["--recs-format", "trec"],
     "line 2 holds the control character U+001F (unit separator), which a TREC file cannot "
     "hold: q1 Q0 d2<U+001F> 2 0.5 run"),
    ("recs.csv", b"user_id,item_id,rank\nu1,a,1\r\nu1,b,2\n", [],
     "its lines could not be split into columns by any delimiter (, | ; or tab) and quoting: "
     "check that every line has the same fields, that the lines end alike (\\n or \\r\\n) and "
     "that the text is UTF-8"),
])
def test_unreadable_text_files_in_our_words(tmp_path, rels, name, content, flags, problem):
    path = tmp_path / name
    path.write_bytes(content)
    result = run("eval", path, rels, *flags)
    assert result.exit_code == 1
    assert result.output == f"Error: cannot read recommendations file {path}: {problem}\n"


def test_long_rows_without_rank_or_score(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,weight\nu1,a,1\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert "long rows need a column 'rank' or 'score' (columns found: user_id, item_id, weight)" \
        in result.output


def test_items_not_a_list(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,items\nu1,a b c\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert "column 'items' is VARCHAR, not a list of item ids" in result.output


def test_relevance_not_numeric(tmp_path, recs):
    path = write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\nu1,a,high\n")
    result = run("eval", recs, path)
    assert result.exit_code == 1
    assert result.output == (f"Error: relevance file {path}: column 'relevance' is VARCHAR, "
                             f"not a number; convert it, or name another column\n")


# --- NULL, NaN, infinity ----------------------------------------------------------------------

def test_null_user_in_recommendations(tmp_path, rels):
    path = nested(tmp_path, ["u1", None], [["a"], ["c"]])
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output == (f"Error: recommendations file {path}: a row has no user id (NULL)\n")


def test_null_item_in_a_list(tmp_path, rels):
    path = nested(tmp_path, ["u1", "u2"], [["a", None], ["c"]])
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert f"recommendations file {path}: user u1 has a NULL item in its list" in result.output


@pytest.mark.parametrize("row, problem", [
    (",a,1", "a row has no user id (NULL)"),
    ("u1,,1", "a row has no item id (user u1) (NULL)"),
    ("u1,a,", "a row has no rank (user u1, item a) (NULL): fill it in or drop the row"),
    # a rank is a place in the list: NaN would sort last, infinities would tie
    ("u1,a,nan", "user u1, item a has rank nan: give a finite number"),
    ("u1,a,inf", "user u1, item a has rank inf: give a finite number"),
    ("u1,a,-inf", "user u1, item a has rank -inf: give a finite number"),
])
def test_null_in_long_recommendations(tmp_path, rels, row, problem):
    path = write_csv(tmp_path / "recs.csv", f"user_id,item_id,rank\nu2,c,1\n{row}\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert f"recommendations file {path}: {problem}" in result.output


@pytest.mark.parametrize("row, problem", [
    (",a,1", "a row has no user id (NULL)"),
    ("u1,,1", "a row has no item id (user u1) (NULL)"),
    ("u1,a,", "a row has no relevance (user u1, item a) (NULL)"),
    ("u1,a,nan", "user u1, item a has relevance nan: give a finite number"),
    ("u1,a,inf", "user u1, item a has relevance inf: give a finite number"),
])
def test_null_nan_inf_in_relevance(tmp_path, recs, row, problem):
    path = write_csv(tmp_path / "rels.csv", f"user_id,item_id,relevance\nu2,c,1.5\n{row}\n")
    result = run("eval", recs, path)
    assert result.exit_code == 1
    assert f"relevance file {path}: {problem}" in result.output


def test_nan_score(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,score\nu1,a,0.5\nu1,b,nan\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output == f"Error: recommendations file {path}: user u1, item b has score nan: " \
                            f"give a number\n"


def test_nan_score_in_parquet(tmp_path, rels):
    """A Parquet file's min/max statistics leave NaN out: DuckDB then folds isnan(score) to
    false, so the check must not rest on isnan (found by tests/oracles/test_reference_fuzz.py)."""
    path = tmp_path / "recs.parquet"
    pq.write_table(pa.table({"user_id": ["u1", "u1"], "item_id": ["a", "b"],
                             "score": [0.0, float("nan")]}), path)
    result = run("eval", str(path), rels)
    assert result.exit_code == 1
    assert result.output == f"Error: recommendations file {path}: user u1, item b has score nan: " \
                            f"give a number\n"


# --- duplicates -------------------------------------------------------------------------------

def test_item_twice_in_a_list_is_an_error(tmp_path, rels):
    path = nested(tmp_path, ["u1", "u2"], [["a", "x", "a", "b"], ["c"]])
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output == (f"Error: recommendations file {path}: user u1 ranks item a twice: "
                             f"remove the repeat, or keep the first occurrence with "
                             f"--duplicates first\n")


# Whole rankings read by the trec measures find the judged items from the judged side (each
# judged item's first position), NDCG at a cutoff position by position down the ranking: both
# stop on a judged item ranked twice, naming the item whose second position comes first; an
# unjudged item twice passes (it gains nothing).
@pytest.mark.parametrize("metric, k", [("map", "all"), ("ndcg", "10")])
@pytest.mark.parametrize("items, problem", [
    (["a", "x", "a", "b"], "user u1 ranks item a twice"),
    (["a", "b", "b", "a"], "user u1 ranks item b twice"),    # b's repeat (3) before a's (4)
    (["x", "b", "a", "x", "x", "b"], "user u1 ranks item b twice"),
    (["a", "x", "x", "b"], None),
])
def test_judged_item_twice_in_a_whole_ranking(tmp_path, rels, metric, k, items, problem):
    path = nested(tmp_path, ["u1", "u2"], [items, ["c"]])
    result = run("eval", path, rels, "-m", metric, "-k", k, "--format", "json")
    if problem:
        assert result.exit_code == 1, result.output
        assert result.output == (f"Error: recommendations file {path}: {problem}: remove the "
                                 f"repeat, or keep the first occurrence with --duplicates first\n")
    else:
        assert result.exit_code == 0, result.output
        # u1 ranks a (1) at 1 and b (2) at 4; u2 ranks c (1) at 1
        u1 = {"map": (1 / 1 + 2 / 4) / 2,
              "ndcg": (1 + 2 / math.log2(5)) / (2 + 1 / math.log2(3))}[metric]
        assert json.loads(result.output)[f"{metric}@{k}" if metric == "ndcg" else metric] \
            == pytest.approx((u1 + 1) / 2, rel=1e-12)


def test_duplicates_first_keeps_the_first_and_closes_up(tmp_path, rels):
    path = nested(tmp_path, ["u1", "u2"], [["a", "x", "a", "b"], ["c"]])
    result = run("eval", path, rels, "--duplicates", "first", "-k", "3", "--format", "json")
    assert result.exit_code == 0, result.output
    # u1 becomes a, x, b: 1 + 2/log2(4) = 2 against the ideal 2 + 1/log2(3); u2: 1
    u1 = 2.0 / (2 + 1 / math.log2(3))
    assert json.loads(result.output)["ndcg@3"] == pytest.approx((u1 + 1) / 2, rel=1e-12)


@pytest.mark.parametrize("column, order", [("rank", "1,2,3"), ("score", "0.9,0.5,0.1")])
def test_item_twice_in_long_rows(tmp_path, rels, column, order):
    first, second, third = order.split(",")
    path = write_csv(tmp_path / "recs.csv", f"user_id,item_id,{column}\n"
                     f"u1,a,{first}\nu1,b,{second}\nu1,a,{third}\nu2,c,{first}\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert "user u1 ranks item a twice" in result.output
    result = run("eval", path, rels, "--duplicates", "first", "--format", "json")
    assert result.exit_code == 0
    # u1: a, b -> ideal order b (2), a (1): (1 + 2/log2 3) / (2 + 1/log2 3); u2: 1
    u1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert json.loads(result.output)["ndcg@10"] == pytest.approx((u1 + 1) / 2, rel=1e-12)


def test_two_items_at_one_rank(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,rank\nu1,a,1\nu1,b,2\nu1,c,2\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert f"recommendations file {path}: user u1 has two items at rank 2: give each item its " \
           f"own rank\n" in result.output


# The long edges read each user's first max(k) items (the counted depth, here k = 2) with top-n
# aggregates. A problem that can change a reported number is refused just inside that depth (or
# straddling it); the same problem just outside it changes nothing and passes with the number a
# clean input gives. NULL and NaN scores and ranks, and infinite ranks, are refused on every row,
# counted or not; infinite scores order as numbers.
# rels: u1 a=1, b=2; u2 c=1. u1's ideal DCG@2 is 2 + 1/log2(3); u2 ranks c first (NDCG 1).
IDEAL = 2 + 1 / math.log2(3)
A_THEN_B = (1 + 2 / math.log2(3)) / IDEAL      # u1 ranks a, then b
B_THEN_A = 1.0                                  # u1 ranks b, then a


@pytest.mark.parametrize("column, u1_rows, k, problem, u1_ndcg", [
    # two items at one rank: inside the depth, straddling it, just outside it; whole rankings
    # (-k all) read every position, so a tie anywhere is refused there
    ("rank", "a,1 b,1 x,3", "2", "user u1 has two items at rank 1", None),
    ("rank", "a,1 b,2 x,2", "2", "user u1 has two items at rank 2", None),
    ("rank", "a,1 b,2 x,3 y,3", "2", None, A_THEN_B),
    ("rank", "a,1 b,2 x,3 y,3", "3", "user u1 has two items at rank 3", None),
    ("rank", "a,1 b,2 x,3 y,3", "all", "user u1 has two items at rank 3", None),
    ("rank", "a,10 b,20 x,35 y,35", "2", None, A_THEN_B),      # ranks with gaps
    # fewer than k ranks within 1..k and some beyond (ranks starting late, a gap, only ranks
    # beyond k): the user's first k + 1 come from all its rows, ties there refused as above
    ("rank", "b,2 a,3 x,4", "2", None, B_THEN_A),
    ("rank", "a,1 b,3 x,4", "2", None, A_THEN_B),
    ("rank", "a,3 b,4 x,5", "2", None, A_THEN_B),
    ("rank", "a,1.5 b,2.5 x,3", "2", None, A_THEN_B),
    ("rank", "a,1 b,3 x,3", "2", "user u1 has two items at rank 3", None),
    ("rank", "a,1 x,3 b,3", "all", "user u1 has two items at rank 3", None),
    # a judged item ranked twice: inside the depth refused, outside it passes
    ("rank", "a,1 b,2 a,3", "3", "user u1 ranks item a twice", None),
    ("rank", "a,1 b,2 x,3 a,4", "2", None, A_THEN_B),
    ("score", "a,0.9 b,0.5 a,0.4", "3", "user u1 ranks item a twice", None),
    ("score", "a,0.9 b,0.5 x,0.4 a,0.3", "2", None, A_THEN_B),
    # NULL or NaN scores: refused on every row, inside the depth or outside it
    ("score", "a,0.9 b,nan x,0.1", "2", "user u1, item b has score nan: give a number", None),
    ("score", "a,0.9 b,0.5 x,0.1 y,nan", "2", "user u1, item y has score nan: give a number",
     None),
    ("score", "a,0.9 b,0.5 x,0.1 y,", "2", "a row has no score (user u1, item y) (NULL)", None),
    ("rank", "a,1 b,2 x,3 y,", "2", "a row has no rank (user u1, item y) (NULL)", None),
    # NaN or infinite ranks too (a NaN would sort last and pass unseen below the depth)
    ("rank", "a,1 b,2 x,3 y,nan", "2", "user u1, item y has rank nan: give a finite number", None),
    ("rank", "a,1 b,inf x,3", "all", "user u1, item b has rank inf: give a finite number", None),
    # infinite scores order like any other: inf first, -inf last, within the depth and across it
    ("score", "a,-1e308 b,inf x,-inf", "2", None, B_THEN_A),
    ("score", "y,0 b,inf a,-inf x,-inf", "all", None, (2 + 1 / math.log2(5)) / IDEAL),
    # equal scores: ties broken by item id descending as text, within the depth, straddling it
    # (ranked exactly from all the user's rows), or just outside it
    ("score", "a,0.5 b,0.5 x,0.1", "2", None, B_THEN_A),
    ("score", "x,0.9 a,0.5 b,0.5", "2", None, (2 / math.log2(3)) / IDEAL),
    ("score", "x,0.9 a,0.5 9,0.5 b,0.5", "2", None, (2 / math.log2(3)) / IDEAL),
    ("score", "x,0.9 a,0.5 b,0.5 y,0.5", "2", None, 0.0),
    ("score", "a,0.9 b,0.5 x,0.1 y,0.1", "2", None, A_THEN_B),
])
def test_checks_at_the_counted_depth(tmp_path, rels, column, u1_rows, k, problem, u1_ndcg):
    rows = "".join(f"u1,{row}\n" for row in u1_rows.split())
    first = "1" if column == "rank" else "0.9"
    path = write_csv(tmp_path / "recs.csv", f"user_id,item_id,{column}\n{rows}u2,c,{first}\n")
    result = run("eval", path, rels, "-k", k, "--format", "json")
    if problem:
        assert result.exit_code == 1, result.output
        assert f"recommendations file {path}: {problem}" in result.output
    else:
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)[f"ndcg@{k}"] == pytest.approx((u1_ndcg + 1) / 2,
                                                                       rel=1e-12)


@pytest.mark.parametrize("u1_rows, problem, u1_ndcg", [
    # --ties average reads the first k items and the rest of a tie straddling position k (its
    # members past k share its mean gain): an item twice there is refused, below it passes
    ("a,0.9 b,0.5 x,0.5 a,0.5", "user u1 ranks item a twice", None),
    ("a,0.9 b,0.5 x,0.4 a,0.3", None, A_THEN_B),
    # b and x tie over positions 2 and 3: b's gain 2 averaged over both, at position 2 of k = 2
    ("a,0.9 b,0.5 x,0.5 y,0.1", None, (1 + 1 / math.log2(3)) / IDEAL),
])
def test_checks_at_the_counted_depth_with_ties_averaged(tmp_path, rels, u1_rows, problem,
                                                         u1_ndcg):
    rows = "".join(f"u1,{row}\n" for row in u1_rows.split())
    path = write_csv(tmp_path / "recs.csv", f"user_id,item_id,score\n{rows}u2,c,0.9\n")
    result = run("eval", path, rels, "-k", "2", "--ties", "average", "--format", "json")
    if problem:
        assert result.exit_code == 1, result.output
        assert f"recommendations file {path}: {problem}" in result.output
    else:
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["ndcg@2"] == pytest.approx((u1_ndcg + 1) / 2, rel=1e-12)


def test_user_ranked_only_beyond_the_counted_depth_counts(tmp_path, rels):
    # u3 is not judged and ranks items only beyond k = 2: still a user with recommendations
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,rank\nu1,a,1\nu1,b,2\nu2,c,1\n"
                     "u3,z,5\nu3,y,7\n")
    result = run("eval", path, rels, "-k", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["users_only_in_recommendations"] == 1


def test_user_with_two_lists(tmp_path, rels):
    path = nested(tmp_path, ["u1", "u2", "u1"], [["a"], ["c"], ["b"]])
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert f"recommendations file {path}: user u1 has 2 rows: give each user one list" \
        in result.output


def test_same_judgment_twice_counts_once(tmp_path, recs):
    # a ranked item (a) and an unranked one (z) each judged twice with one value: counted once
    path = write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\n"
                     "u1,a,1\nu1,z,3\nu1,a,1\nu1,z,3\nu2,c,1\n")
    result = run("eval", recs, path, "--format", "json")
    assert result.exit_code == 0, result.output
    # u1: a at rank 1 (gain 1); ideal 3, 1 -> 1 / (3 + 1/log2 3); u2: c at rank 1 -> 1
    u1 = 1 / (3 + 1 / math.log2(3))
    assert json.loads(result.output)["ndcg@10"] == pytest.approx((u1 + 1) / 2, rel=1e-12)


@pytest.mark.parametrize("item", ["a", "z"])  # ranked, and not ranked
def test_err_refuses_a_grade_above_gdevals_largest(tmp_path, recs, item):
    # gdeval's ERR stops at grade g with chance (2^g - 1) / 2^4: a grade of 5 would be a chance
    # past 1; the other metrics read the same file
    path = write_csv(tmp_path / "rels.csv",
                     f"user_id,item_id,relevance\nu1,{item},5\nu1,b,2\nu2,c,1\n")
    result = run("eval", recs, path, "-m", "ndcg,ERR@20")
    assert result.exit_code == 1
    assert result.output == (f"Error: relevance file {path}: user u1, item {item}: relevance 5 is "
                             f"above 4, the largest grade err reads (gdeval's ERR stops at a "
                             f"grade with chance (2^grade - 1) / 2^4): rescale the relevance to "
                             f"grades 0 to 4 for err\n")
    assert run("eval", recs, path, "-m", "ndcg,judged,ncg").exit_code == 0


@pytest.mark.parametrize("item", ["a", "z"])  # ranked, and not ranked
def test_conflicting_judgments(tmp_path, recs, item):
    path = write_csv(tmp_path / "rels.csv",
                     f"user_id,item_id,relevance\nu1,{item},1\nu1,{item},3\nu2,c,1\n")
    result = run("eval", recs, path)
    assert result.exit_code == 1
    assert result.output == (f"Error: relevance file {path}: user u1 has item {item} judged "
                             f"twice, as 1 and 3: keep one judgment per (user, item)\n")


def test_unique_judgments_skips_the_check_only(recs, rels):
    checked = run("eval", recs, rels, "-k", "1,all", "--format", "json")
    trusted = run("eval", recs, rels, "-k", "1,all", "--format", "json", "--unique-judgments")
    assert trusted.exit_code == 0 and checked.exit_code == 0
    assert json.loads(trusted.output) == json.loads(checked.output)


# --- empty and mismatched inputs --------------------------------------------------------------

def test_recommendations_without_rows(tmp_path, rels):
    path = write_csv(tmp_path / "recs.csv", "user_id,item_id,rank\n")
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert f"recommendations file {path} has no rows: nothing to evaluate" in result.output


def test_relevance_without_rows(tmp_path, recs):
    path = tmp_path / "rels.parquet"
    pq.write_table(pa.table({"user_id": pa.array([], pa.string()),
                             "item_id": pa.array([], pa.string()),
                             "relevance": pa.array([], pa.int64())}), path)
    result = run("eval", recs, path)
    assert result.exit_code == 1
    assert f"relevance file {path} has no rows" in result.output


def test_integer_and_text_ids_are_compared_as_text(tmp_path):
    recs = tmp_path / "recs.parquet"
    pq.write_table(pa.table({"user_id": [1, 2], "items": [[10, 20], [30]]}), recs)
    rels = write_csv(tmp_path / "rels.json", json.dumps(
        [{"user_id": "1", "item_id": "20", "relevance": 1},
         {"user_id": "2", "item_id": "30", "relevance": 1}]))
    result = run("eval", recs, rels, "--format", "json")
    assert json.loads(result.stdout)["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert result.stderr == (
        f"Warning: user ids are BIGINT in the recommendations file {recs} and VARCHAR in the "
        f"relevance file {rels}, item ids BIGINT and VARCHAR: compared as text, so '001' and '1' "
        f"differ; 2 of the 2 users of the relevance data have recommendations\n")


def test_no_common_user_is_an_error_not_a_zero(tmp_path, rels):
    path = nested(tmp_path, ["U1", "U2"], [["a"], ["c"]])
    result = run("eval", path, rels)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: no user of the relevance file {rels} has recommendations in the "
        f"recommendations file {path} (user ids there look like 'U1', here like 'u1'): "
        f"check --user-col and that both files use the same ids\n")


# --- options ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, named", [
    (["-k", "0"], "'0'"), (["-k", "-3"], "'-3'"), (["-k", "abc"], "'abc'"),
    (["--gain", "log"], "'log'"), (["--missing", "drop"], "'drop'"),
    (["--recs-format", "xls"], "'xls'"), (["--format", "yaml"], "'yaml'"),
    (["--max-depth", "0"], "0"), (["--duplicates", "last"], "'last'"),
    (["--rbp-p", "1"], "rbp_p 1.0 is not a number between 0 and 1 (both left out)"),
    (["--set-f-beta", "-1"], "set_f_beta -1.0 is not a number >= 0"),
    (["--utility-weights", "1,-1,0"], "utility_weights '1,-1,0' is not 4 numbers W1,W2,W3,W4 "
                                      "(the worth of a relevant and of a nonrelevant item "
                                      "ranked, then not ranked)"),
    (["--utility-weights", "1,-1,0,inf"], "utility_weights '1,-1,0,inf' is not 4 numbers"),
    (["--num-docs", "-1"], "-1 is not in the range 0<=x"),
])
def test_bad_option_values_are_usage_errors(recs, rels, args, named):
    result = run("eval", recs, rels, *args)
    assert result.exit_code == 2
    assert "Invalid value" in result.output and named in result.output


def test_format_trec_refusals(tmp_path, recs, rels):
    # trec_eval's lines have no segments, and a query id with white space would split its line
    segments = write_csv(tmp_path / "segments.csv", "user_id,group\nu1,a\n")
    result = run("eval", recs, rels, "--format", "trec", "--segments", segments, "--by", "group")
    assert result.exit_code == 2
    assert result.output.endswith("Error: --format trec prints trec_eval's lines, which have no "
                                  "segments or plot: use --format table, json or csv with "
                                  "--segments and --plot\n")
    spaced = nested(tmp_path, ["u 1", "u2"], [["a"], ["c"]])
    judged = write_csv(tmp_path / "spaced.csv", "user_id,item_id,relevance\nu 1,a,1\nu2,c,1\n")
    result = run("eval", spaced, judged, "--format", "trec", "--per-user", "-")
    assert result.exit_code == 1
    assert result.output == ("Error: --format trec: user id 'u 1' holds white space, which a "
                             "trec_eval line (measure, query, value) cannot carry: use --format "
                             "csv or json for --per-user -\n")
    assert run("eval", spaced, judged, "--format", "trec").exit_code == 0  # no per-query lines


def test_a_gain_too_large_is_said_in_python_words(tmp_path, recs):
    path = write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\nu1,a,1100\n")
    with pytest.raises(ndcg_duck.InputError) as error:
        ndcg_duck.evaluate(recs, path, gain="exponential")
    assert str(error.value) == (f"relevance file {path}: user u1, item a has relevance 1100, whose "
                                f"gain with gain='exponential' is beyond the largest number "
                                f"(about 1.8e308): give that level a gain with gain_map=, or use "
                                f"smaller relevance values")


@pytest.mark.parametrize("keyword, message", [
    # beyond a 64-bit integer: once a cast error (exit 1), now the keyword's own usage error
    (dict(k=10 ** 20), "cutoff 100000000000000000000 is beyond the largest cutoff, "
                       "9223372036854775807: use 'all' for no cutoff"),
    (dict(k="99999999999999999999"), "cutoff '99999999999999999999' is beyond the largest "
                                     "cutoff, 9223372036854775807: use 'all' for no cutoff"),
    (dict(max_depth=10 ** 20), "max_depth=100000000000000000000 is beyond the largest, "
                               "9223372036854775807"),
])
def test_cutoff_and_depth_beyond_64_bits_in_python(recs, rels, keyword, message):
    with pytest.raises(ndcg_duck.InputError) as error:
        ndcg_duck.evaluate(recs, rels, **keyword)
    assert error.value.usage and message in str(error.value)


# --- without judgments (no RELEVANCE: beyond-accuracy metrics only) ----------------------------

NO_JUDGMENTS = [
    (["-m", "ndcg"], 2, "Error: ndcg@10 needs judgments: pass the relevance file (RELEVANCE), or "
                        "ask only for beyond-accuracy metrics (coverage, gini, entropy, novelty, "
                        "popularity, tail, ild, coverage_count, personalization), which read the "
                        "lists alone\n"),
    (["-m", "coverage,P@5"], 2, "Error: precision@5 needs judgments: pass the relevance file "
                                "(RELEVANCE), or ask only for beyond-accuracy metrics (coverage, "
                                "gini, entropy, novelty, popularity, tail, ild, coverage_count, "
                                "personalization), which read the "
                                "lists alone\n"),
    (["-m", "coverage", "--empty", "skip"], 2,
     "Error: --empty skip chooses users by their judgments, and there is no relevance file "
     "(without it every user of the recommendations counts): pass it (RELEVANCE) or leave out "
     "--empty skip\n"),
    (["-m", "coverage", "--missing", "skip"], 2,
     "Error: --missing skip chooses users by their judgments, and there is no relevance file "
     "(without it every user of the recommendations counts): pass it (RELEVANCE) or leave out "
     "--missing skip\n"),
    (["-m", "coverage", "--beyond-users", "evaluated"], 2,
     "Error: --beyond-users evaluated chooses users by their judgments, and there is no relevance "
     "file (without it every user of the recommendations counts): pass it (RELEVANCE) or leave "
     "out --beyond-users evaluated\n"),
    (["-m", "coverage", "--judged-only"], 2,
     "Error: --judged-only takes the unjudged items out of each list, and there is no relevance "
     "file: pass it (RELEVANCE) or leave out --judged-only\n"),
    (["-m", "coverage", "--gain-map", "1=3"], 2,
     "Error: --gain-map reads the judgments, and there is no relevance file: pass it "
     "(RELEVANCE) or leave out --gain-map\n"),
    (["-m", "coverage", "--engine", "spark"], 2,
     "Error: the Spark engine needs the judgments (RELEVANCE): its workers score each bucket of "
     "users from their recommendations and judgments together; for the beyond-accuracy metrics "
     "of lists without judgments use the default engine (--engine duckdb, or "
     "ndcg_duck.evaluate)\n"),
    (["-m", "coverage", "{repeat}"], 1,
     "Error: recommendations file {repeat}: user u2 ranks item c twice: remove the repeat, or "
     "keep the first occurrence with --duplicates first\n"),
]


@pytest.mark.parametrize("args, code, message", NO_JUDGMENTS)
def test_without_judgments(tmp_path, recs, args, code, message):
    """Without RELEVANCE only the beyond-accuracy metrics run: an accuracy metric, or an option
    that reads the judgments or chooses users by them, is a usage error naming it; an item twice
    in a list is a data error (it would count twice in the exposure)."""
    train = write_csv(tmp_path / "train.csv", "user_id,item_id\nt1,a\nt1,c\n")
    repeat = nested(tmp_path, ["u1", "u2"], [["a"], ["c", "b", "c"]], "repeat.parquet")
    if "{repeat}" in args:
        recs, args = repeat, [a for a in args if a != "{repeat}"]
    result = run("eval", recs, *args, "--train", train)
    assert result.exit_code == code
    assert result.output.splitlines()[-1] + "\n" == message.format(repeat=repeat)


def test_without_judgments_in_python_words(recs):
    with pytest.raises(ndcg_duck.InputError) as error:
        ndcg_duck.evaluate(recs, metrics="recall@5")
    assert error.value.usage and str(error.value) == (
        "recall@5 needs judgments: pass the relevance file (rels=), or ask only for "
        "beyond-accuracy metrics (coverage, gini, entropy, novelty, popularity, tail, ild, "
        "coverage_count, personalization), "
        "which read the lists alone")
    with pytest.raises(ndcg_duck.InputError) as error:
        ndcg_duck.evaluate(recs, None, metrics="coverage", items=recs, empty="skip")
    assert error.value.usage and str(error.value) == (
        "empty='skip' chooses users by their judgments, and there is no relevance file (without "
        "it every user of the recommendations counts): pass it (rels=) or leave out "
        "empty='skip'")
    from ndcg_duck import spark  # refused before any Spark session is needed

    with pytest.raises(ndcg_duck.InputError) as error:
        spark.evaluate(None, recs, None, metrics="coverage")
    assert error.value.usage and str(error.value).startswith(
        "the Spark engine needs the judgments (rels=): its workers score each bucket")


# --- output files -----------------------------------------------------------------------------

def test_per_user_into_a_missing_directory_fails_first(recs, tmp_path):
    result = run("eval", recs, "does-not-exist.csv", "--per-user", tmp_path / "no" / "out.csv")
    assert result.exit_code == 2  # checked before the (also missing) input is even looked at
    assert f"the directory of output file {tmp_path / 'no' / 'out.csv'} does not exist" \
        in result.output


def test_failed_run_keeps_an_existing_output(tmp_path, recs):
    out = tmp_path / "scores.csv"
    out.write_text("precious\n")
    bad = write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\nu1,a,1\nu1,a,2\n")
    result = run("eval", recs, bad, "--per-user", out)
    assert result.exit_code == 1
    assert out.read_text() == "precious\n"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_output_written_whole_through_a_temporary_name(tmp_path, recs, rels, monkeypatch):
    out = tmp_path / "scores.parquet"
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.path.basename(src), os.path.exists(src), os.path.exists(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    assert run("eval", recs, rels, "--per-user", out).exit_code == 0
    (name, existed, target_existed), = seen
    assert name.endswith(".tmp") and existed and not target_existed
    assert pq.read_table(out).num_rows == 2


# --- data that is fine ------------------------------------------------------------------------

def test_single_user_and_very_large_k(tmp_path):
    recs = nested(tmp_path, ["solo"], [["a", "b"]], "recs.parquet")
    rels = write_csv(tmp_path / "rels.csv", "user_id,item_id,relevance\nsolo,b,1\n")
    result = run("eval", recs, rels, "-k", "1000000000", "--format", "json")
    assert json.loads(result.output) == {
        "ndcg@1000000000": pytest.approx(1 / math.log2(3)), "users": 1,
        "users_without_recommendations": 0, "users_only_in_recommendations": 0,
        "users_with_zero_ideal_dcg": 0}
    # the largest depth there is (2^63 - 1) is no limit at all, once refused by the SQL's check
    # that read it through a DOUBLE (rounded past the largest BIGINT)
    deepest = run("eval", recs, rels, "-k", "1000000000", "--max-depth", "9223372036854775807",
                  "--format", "json")
    assert deepest.output == result.output


def test_unicode_ids_and_csv_quoting(tmp_path):
    recs = write_csv(tmp_path / "recs.csv", 'user_id,item_id,rank\n'
                     '"Zoë, the ""critic""","Ça, va",1\n"Zoë, the ""critic""",東京,2\n')
    rels = write_csv(tmp_path / "rels.csv", 'user_id,item_id,relevance\n'
                     '"Zoë, the ""critic""",東京,1\n')
    out = tmp_path / "per_user.csv"
    result = run("eval", recs, rels, "--per-user", out, "--format", "json")
    assert json.loads(result.output)["ndcg@10"] == pytest.approx(1 / math.log2(3))
    assert 'Zoë, the ""critic""' in out.read_text(encoding="utf-8")


# --- fuzz: only the documented exception type escapes ---------------------------------------

VALUES = st.one_of(st.none(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=3), st.booleans())
COLUMN_NAMES = st.sampled_from(["user_id", "item_id", "items", "rank", "score", "relevance",
                                "other"])


@st.composite
def tables(draw):
    names = draw(st.lists(COLUMN_NAMES, min_size=0, max_size=4, unique=True))
    rows = draw(st.integers(0, 4))
    columns = {}
    for name in names:
        if name == "items" and draw(st.booleans()):
            columns[name] = draw(st.lists(st.one_of(st.none(), st.lists(
                st.one_of(st.none(), st.sampled_from(["a", "b"])), max_size=3)),
                min_size=rows, max_size=rows))
        else:
            kind = draw(st.sampled_from(["int", "str", "float", "mixed"]))
            pool = {"int": st.one_of(st.none(), st.integers(-2, 2)),
                    "str": st.one_of(st.none(), st.sampled_from(["a", "b", "u1"])),
                    "float": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
                    "mixed": VALUES}[kind]
            values = draw(st.lists(pool, min_size=rows, max_size=rows))
            if kind == "mixed":
                values = [None if v is None else str(v) for v in values]
            columns[name] = values
    return pa.table(columns) if columns else pa.table({"nothing": pa.array([], pa.int64())})


@settings(max_examples=80, deadline=None)
@given(recs=tables(), rels=tables(), k=st.sampled_from([1, 5, "all"]),
       duplicates=st.sampled_from(["error", "first"]))
def test_fuzz_only_input_error_escapes(recs, rels, k, duplicates):
    try:
        result = ndcg_duck.evaluate(recs, rels, k=k, duplicates=duplicates)
    except ndcg_duck.InputError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        value = result.summary[f"ndcg@{k}"]
        assert value is None or 0.0 <= value <= 1.0 + 1e-12


def test_a_failed_rename_is_an_error_not_a_traceback(tmp_path, recs, rels, monkeypatch):
    out = tmp_path / "scores.csv"
    out.write_text("precious\n")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    result = run("eval", recs, rels, "--per-user", out)
    assert result.exit_code == 1
    assert result.output == f"Error: cannot write {out}: Permission denied\n"
    assert out.read_text() == "precious\n"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_a_failed_rename_on_spark_is_the_same_error(tmp_path, monkeypatch):
    """--engine spark writes its part files, copies them into one file and renames it: a failed
    rename is the default engine's message, the file left as it was (no Spark needed: the rows
    write their part file as Spark would)."""
    from ndcg_duck.spark import files

    class Rows:  # what write_per_user asks of a Spark DataFrame
        write = property(lambda self: self)

        def mode(self, mode):
            return self

        def parquet(self, folder):
            os.makedirs(folder)
            pq.write_table(pa.table({"user_id": [2, 1], "ndcg@10": [0.5, 1.0]}),
                           f"{folder}/part-0.parquet")

    out = tmp_path / "scores.csv"
    out.write_text("precious\n")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ndcg_duck.InputError, match=f"^cannot write {out}: Permission denied$"):
        files.write_per_user(Rows(), str(out), "user_id")
    assert out.read_text() == "precious\n"
    assert os.listdir(tmp_path) == ["scores.csv"]


# --- --metrics-sql: your own measures (ndcg_duck/metrics_sql.py) --------------------------------

EDGE_NAMES = "gains, relevant_ranks, judged_ranks, num_relevant, ideal, length, k, depth"


@pytest.mark.parametrize("sql, code, problem", [
    # the file, read before any data (usage: exit 2)
    ("CREATE MACRO ndcg_metric_x(k) AS k +;", 2, "the SQL fails: syntax error at or near \";\""),
    ("CREATE MACRO helper(k) AS k;", 2, "defines no macro named ndcg_metric_<name>: write "
                                        "CREATE MACRO ndcg_metric_<name>(gains, k) AS ..."),
    ("CREATE MACRO ndcg_metric_x(rank) AS rank;", 2,
     f"ndcg_metric_x has parameter 'rank': name its parameters from {EDGE_NAMES}"),
    ("CREATE MACRO ndcg_metric_p(k) AS 1;", 2,
     "ndcg_metric_p: p is a built-in metric's name (or starts with users): name yours otherwise"),
    ('CREATE MACRO "ndcg_metric_a-b"(k) AS k;', 2,
     "ndcg_metric_a-b: a measure's name is a lowercase letter, then letters, digits or _"),
    ("CREATE MACRO ndcg_metric_x(k) AS 'text';", 2,
     "ndcg_metric_x returns VARCHAR, not a number: return a DOUBLE (or NULL)"),
    ("CREATE MACRO ndcg_metric_x(gains) AS gains + 1;", 2,
     "ndcg_metric_x fails: No function matches the given name and argument types "
     "'+(DOUBLE[], INTEGER_LITERAL)'. You might need to add explicit type casts."),
    ("CREATE MACRO ndcg_found(ranks, k) AS 0; CREATE MACRO ndcg_metric_x(k) AS 1;", 2,
     "it redefines ndcg_found, a macro of ndcg-duck: name yours otherwise"),
    # the data (exit 1): a failure names the macro and file; a value that is no number, the user
    ("CREATE MACRO ndcg_metric_x(length) AS CASE WHEN length > 1 THEN error('too long') "
     "ELSE 0 END;", 1, "ndcg_metric_x fails on the data: too long"),
    ("CREATE MACRO ndcg_metric_x(length) AS CASE WHEN length > 1 THEN 'nan'::DOUBLE ELSE 0 END;",
     1, "ndcg_metric_x returned nan for user u1 at k 10, not a number: return a finite number "
        "or NULL"),
])
def test_bad_metrics_sql(tmp_path, recs, rels, sql, code, problem):
    path = write_csv(tmp_path / "mine.sql", sql + "\n")
    result = run("eval", recs, rels, "--metrics-sql", path, "-m", "x")
    assert result.exit_code == code
    if code == 2:
        assert result.output.endswith(f"Error: Invalid value for '--metrics-sql': {path}: "
                                      f"{problem}\n")
    else:
        assert result.output == f"Error: --metrics-sql {path}: {problem}\n"
    with pytest.raises(ndcg_duck.InputError) as error:  # Python's words
        ndcg_duck.evaluate(recs, rels, metrics="x", metrics_sql=path)
    assert str(error.value) == f"metrics_sql= {path}: {problem}"
    assert error.value.usage == (code == 2)


def test_metrics_sql_names_and_files(tmp_path, recs, rels):
    result = run("eval", recs, rels, "--metrics-sql", tmp_path / "nowhere.sql")
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: Invalid value for '--metrics-sql': "
                                  f"{str(tmp_path / 'nowhere.sql')!r}: cannot read it (no such "
                                  f"file)\n")
    # an own measure's name is known only with its file
    path = write_csv(tmp_path / "mine.sql", "CREATE MACRO ndcg_metric_x(k) AS 1;\n")
    assert "unknown metric 'x'" in run("eval", recs, rels, "-m", "x").output
    assert run("eval", recs, rels, "--metrics-sql", path, "-m", "x@2,X@3").exit_code == 0
