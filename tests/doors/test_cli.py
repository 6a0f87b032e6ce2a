"""Door 2: the ndcg-duck CLI on the example files, through click's CliRunner."""

import csv
import json
import math

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import reference
from conftest import ROOT
import ndcg_duck
from ndcg_duck.cli import cli

EXAMPLES = ROOT / "examples"
RECS = str(EXAMPLES / "recs.parquet")
RELS = str(EXAMPLES / "relevance.csv")


def example_truth():
    rankings = {row["user_id"]: row["items"]
                for row in json.loads((EXAMPLES / "recs.json").read_text(encoding="utf-8"))}
    judgments = {}
    with open(EXAMPLES / "relevance.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            judgments.setdefault(row["user_id"], {})[row["item_id"]] = float(row["relevance"])
    return rankings, judgments


def expected(k, **options):
    rankings, judgments = example_truth()
    return reference.evaluate(rankings, judgments, k, **options)


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_table_summary_exact():
    result = run("eval", RECS, RELS, "-k", "5,10", "-k", "all")
    means = [reference.mean_ndcg(expected(k)) for k in (5, 10, None)]
    assert result.exit_code == 0
    assert result.output == (
        f"ndcg@5    {means[0]:.4f}\n"
        f"ndcg@10   {means[1]:.4f}\n"
        f"ndcg@all  {means[2]:.4f}\n"
        "users     5\n"
        "without recommendations: 1 user, scored 0\n"
        "only in recommendations: 1 user, not evaluated\n")


def test_json_summary():
    result = run("eval", RECS, RELS, "-k", "5,10,20", "--format", "json", "--missing", "skip")
    summary = json.loads(result.output)
    assert list(summary) == ["ndcg@5", "ndcg@10", "ndcg@20", "users",
                             "users_without_recommendations", "users_only_in_recommendations",
                             "users_with_zero_ideal_dcg"]
    for k in (5, 10, 20):
        assert summary[f"ndcg@{k}"] == pytest.approx(
            reference.mean_ndcg(expected(k, missing="skip")), rel=1e-12)
    assert summary["users"] == 4


def test_csv_summary_and_gain():
    result = run("eval", RECS, RELS, "--format", "csv", "--gain", "exponential")
    lines = result.output.splitlines()
    assert lines[0] == "metric,value"
    name, value = lines[1].split(",")
    assert name == "ndcg@10"
    assert float(value) == pytest.approx(
        reference.mean_ndcg(expected(10, gain="exponential")), rel=1e-12)
    assert lines[2:] == ["users,5", "users_without_recommendations,1",
                         "users_only_in_recommendations,1", "users_with_zero_ideal_dcg,0"]


@pytest.mark.parametrize("recs", ["recs.parquet", "recs.json", "recs_long.csv"])
def test_per_user_file(tmp_path, recs):
    out = tmp_path / "per_user.parquet"
    result = run("eval", str(EXAMPLES / recs), RELS, "-k", "3,all", "--per-user", str(out))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.column_names == ["user_id", "dcg@3", "idcg@3", "ndcg@3",
                                  "dcg@all", "idcg@all", "ndcg@all"]
    rows = table.to_pylist()
    want3, want_all = expected(3), expected(None)
    assert [row["user_id"] for row in rows] == sorted(want3)
    for row in rows:
        for part, index in (("dcg", 0), ("idcg", 1), ("ndcg", 2)):
            assert row[f"{part}@3"] == pytest.approx(want3[row["user_id"]][index], rel=1e-12)
            assert row[f"{part}@all"] == pytest.approx(want_all[row["user_id"]][index], rel=1e-12)


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl"])
def test_per_user_text_formats(tmp_path, suffix):
    out = tmp_path / f"scores{suffix}"
    run("eval", RECS, RELS, "-k", "5", "--per-user", str(out), "--user-col", "user_id")
    text = out.read_text(encoding="utf-8")
    if suffix == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
    elif suffix == ".json":
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines()]
    assert list(rows[0]) == ["user_id", "dcg@5", "idcg@5", "ndcg@5"]
    assert {row["user_id"] for row in rows} == set(expected(5))
    chloe = next(row for row in rows if row["user_id"] == "chloé")
    assert float(chloe["ndcg@5"]) == pytest.approx(expected(5)["chloé"][2], rel=1e-12)


def test_column_options_and_json_input(tmp_path):
    recs = tmp_path / "playlists.json"
    recs.write_text(json.dumps([{"id": 1, "songs": ["a", "b"]}, {"id": 2, "songs": ["c"]}]))
    rels = tmp_path / "heldout.csv"
    rels.write_text("id,song,rel\n1,b,1\n2,c,2\n2,d,1\n")
    result = run("eval", str(recs), str(rels), "--user-col", "id", "--items-col", "songs",
                 "--item-col", "song", "--relevance-col", "rel", "--format", "json")
    summary = json.loads(result.output)
    # user 1: b at rank 2 -> 0.6309; user 2: c (2) at rank 1 of ideal 2, 1 -> 2 / 2.6309
    assert summary["ndcg@10"] == pytest.approx((0.6309298 + 2 / 2.6309298) / 2, rel=1e-6)


def test_format_options_override_extension(tmp_path):
    recs = tmp_path / "recs.data"
    recs.write_text('{"user_id": "ana", "items": ["s01"]}\n')
    result = run("eval", str(recs), RELS, "--recs-format", "json", "--format", "json")
    assert json.loads(result.output)["users"] == 5


@pytest.mark.parametrize("codec, suffix", [("gzip", ".gz"), ("zstd", ".zst")])
def test_compressed_csv_and_json_inputs(tmp_path, codec, suffix):
    # gzip and zstd files are read by their inner extension (recs.csv.gz is CSV)
    import duckdb
    recs = tmp_path / f"recs_long.csv{suffix}"
    rels = tmp_path / f"rels.jsonl{suffix}"
    duckdb.sql(f"COPY (FROM read_csv('{EXAMPLES / 'recs_long.csv'}')) TO '{recs}' "
               f"(FORMAT csv, COMPRESSION {codec})")
    duckdb.sql(f"COPY (FROM read_csv('{RELS}')) TO '{rels}' (FORMAT json, COMPRESSION {codec})")
    assert recs.read_bytes()[:2] != b"us"  # compressed, not text
    result = run("eval", str(recs), str(rels), "-k", "5", "--format", "json")
    assert json.loads(result.output)["ndcg@5"] == pytest.approx(
        reference.mean_ndcg(expected(5)), abs=1e-12)


@pytest.mark.parametrize("value", ["0", "-3", "abc", "5,x"])
def test_bad_cutoff_is_a_usage_error(value):
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "-k", value])
    assert result.exit_code == 2
    assert "Invalid value for '-k'" in result.output
    assert repr(value.split(",")[-1]) in result.output or value in result.output
    assert "Traceback" not in result.output


def test_unknown_gain_is_a_usage_error():
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--gain", "log"])
    assert result.exit_code == 2
    assert "'log' is not one of 'linear', 'exponential', 'binary'" in result.output


def test_missing_file_is_a_data_error():
    result = CliRunner().invoke(cli, ["eval", "nope.parquet", RELS])
    assert result.exit_code == 1
    assert result.output == "Error: recommendations file nope.parquet does not exist\n"


def test_sql_command_prints_every_macro():
    script = run("sql").output
    for name in ("ndcg_per_user", "ndcg_mean", "ndcg_per_user_ranks", "ndcg_per_user_scores",
                 "ndcg_scores", "ndcg_list", "ndcg_items", "ndcg_trec_run", "ndcg_trec_qrels"):
        assert f"CREATE OR REPLACE TEMP MACRO {name}(" in script


def trec_files(tmp_path, run_lines, qrels_lines):
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(line + "\n" for line in run_lines), encoding="utf-8")
    qrels.write_text("".join(line + "\n" for line in qrels_lines), encoding="utf-8")
    return str(run), str(qrels)


TREC_FLAGS = ["--recs-format", "trec", "--rels-format", "trec"]


TIED = ("Warning: 3 recommended items share their score with another item of 1 user anywhere "
        "in their rankings (e.g. user 'q1'): ")
TIE_RULE = {"trec": "ordered by item id, descending as text (trec_eval's rule; --ties average "
                    "gives ndcg, dcg, idcg, cg and ncg each tied item's mean discount instead)",
            "average": "ndcg, dcg, idcg, cg and ncg give each tied item the mean discount of its "
                       "tie (--ties average); the other metrics order them by item id, "
                       "descending as text (trec_eval's rule)"}


@pytest.mark.parametrize("ties, expected", [("trec", "1.0000"), ("average", "0.7103")])
def test_trec_files_and_ties(tmp_path, ties, expected):
    # TV1: d1, d2, d3 all score 1.0, d3 relevant. trec_eval: 1.0 (d3 first, by doc id
    # descending); scikit-learn's tie average: 0.7103. The rank column is ignored, blank lines
    # (white space only too) and words after the tag too, and fields may be separated by tabs
    # and runs of spaces, a line may start with them. The three tied items are counted (issue
    # 33) and the warning names the rule that orders them.
    run, qrels = trec_files(tmp_path, ["q1 Q0 d1 1 1.0 tag some words", "", "  \t ",
                                       "q1\tQ0   d2 2  1.0\ttag", "\t q1 Q0 d3 3 1.0 tag"],
                            ["q1 0 d3 1", "q1 0 d9 0"])
    output = run_cli_ok(["eval", run, qrels, *TREC_FLAGS, "-k", "all", "--ties", ties])
    assert output == f"{TIED}{TIE_RULE[ties]}\nndcg@all  {expected}\nusers     1\n"


def test_trec_words_are_split_at_carriage_returns_and_form_feeds_too(tmp_path):
    # TV10 without the map (0.8597) from files with Windows line ends and a form feed between two
    # words: they separate words as spaces and tabs do (regular expressions' \s)
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_bytes(b"q1 Q0 a 1 2.0 t\r\nq1\x0cQ0 b 2 1.0 t\r\n\r\n")
    qrels.write_bytes(b"q1 0 a 1\r\nq1 0 b 2\r\n")
    assert run_cli_ok(["eval", str(run), str(qrels), *TREC_FLAGS]) == (
        "ndcg@10  0.8597\nusers    1\n")


def test_gain_map_option(tmp_path):
    # TV10: a=1, b=2 ranked a, b with gains 1 -> 3.5, 2 -> 3.0: the ranking is ideal, 1.0
    # (trec_eval prints 1.0354); without the map b should come first: 0.8597
    run, qrels = trec_files(tmp_path, ["q1 Q0 a 1 2.0 t", "q1 Q0 b 2 1.0 t"],
                            ["q1 0 a 1", "q1 0 b 2"])
    mapped = run_cli_ok(["eval", run, qrels, *TREC_FLAGS, "--gain-map", "1=3.5,2=3.0"])
    assert mapped == "ndcg@10  1.0000\nusers    1\n"
    assert run_cli_ok(["eval", run, qrels, *TREC_FLAGS]) == "ndcg@10  0.8597\nusers    1\n"


def test_judged_only_option(tmp_path):
    # TV11: qrels a=1, b=0; run u (unjudged), b, a: 0.5; -J: 0.6309
    run, qrels = trec_files(tmp_path, ["q1 Q0 u 1 3 t", "q1 Q0 b 2 2 t", "q1 Q0 a 3 1 t"],
                            ["q1 0 a 1", "q1 0 b 0"])
    assert run_cli_ok(["eval", run, qrels, *TREC_FLAGS]) == "ndcg@10  0.5000\nusers    1\n"
    assert run_cli_ok(["eval", run, qrels, *TREC_FLAGS, "--judged-only"]) == (
        "ndcg@10  0.6309\nusers    1\n")


def run_cli_ok(args):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("value, piece", [("1=3,x=2", "'x=2'"), ("1=3,,2=9", "''"),
                                          ("1=3=4", "'1=3=4'"), ("2", "'2'"), ("1=inf", "'1=inf'")])
def test_bad_gain_map_is_a_usage_error(value, piece):
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--gain-map", value])
    assert result.exit_code == 2
    assert (f"Error: Invalid value for '--gain-map': gain map piece {piece} is not LEVEL=GAIN "
            f"with two numbers, as in 1=3,2=9,4=4.5\n") in result.output


def test_gain_map_listing_a_level_twice_is_a_usage_error():
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "--gain-map", "1=3,1.0=4"])
    assert result.exit_code == 2
    assert "gain map lists relevance level 1 twice" in result.output


@pytest.mark.parametrize("run_line, qrels_line, bad, form", [
    ("q1 Q0 a 1 high t", "q1 0 a 1", "run", '"query Q0 doc rank score tag", not: q1 Q0 a 1 high t'),
    ("q1 Q0 a 1 2.5 t", "q1 0 a", "qrels", '"query iteration doc relevance", not: q1 0 a'),
])
def test_bad_trec_line_is_a_data_error(tmp_path, run_line, qrels_line, bad, form):
    files = dict(zip(["run", "qrels"], trec_files(tmp_path, [run_line], [qrels_line])))
    result = CliRunner().invoke(cli, ["eval", files["run"], files["qrels"], *TREC_FLAGS])
    assert result.exit_code == 1
    assert result.output == f"Error: {files[bad]}: a TREC {bad} line is {form}\n"


# --- help, and the per-user table on stdout (issue 13 point 14) ----------------------------------

@pytest.mark.parametrize("command", [[], ["eval"], ["sql"]])
def test_h_is_help_with_an_example_block(command):
    short = CliRunner().invoke(cli, [*command, "-h"], prog_name="ndcg-duck")
    assert short.exit_code == 0
    assert short.output == CliRunner().invoke(cli, [*command, "--help"],
                                              prog_name="ndcg-duck").output
    if command:
        assert "\n  Example:\n\n      ndcg-duck " + command[0] in short.output


def test_eval_help_states_exit_codes_and_which_columns_are_used(monkeypatch):
    text = " ".join(CliRunner().invoke(cli, ["eval", "-h"]).output.split())
    assert "Exit status: 0 when the evaluation ran, 1 for bad input data" in text
    assert "2 for a bad command line or option value" in text
    assert "a column named with an option must exist" in text
    assert "(both, unnamed, is an error that asks which)" in text
    assert "a file of only the user and item columns counts every row as relevance 1" in text
    # the help's examples on the files in the repository run
    monkeypatch.chdir(ROOT)
    examples = [line.split()[1:] for line in CliRunner().invoke(cli, ["eval", "-h"]).output
                .splitlines() if line.strip().startswith("ndcg-duck eval examples/")]
    assert examples
    for args in examples:
        assert CliRunner().invoke(cli, args).exit_code == 0


@pytest.mark.parametrize("fmt, suffix", [("csv", ".csv"), ("table", ".csv"), ("json", ".json")])
def test_per_user_dash_writes_the_table_to_stdout(tmp_path, fmt, suffix):
    out = tmp_path / f"users{suffix}"
    to_file = CliRunner().invoke(cli, ["eval", RECS, RELS, "-k", "3,all", "--per-user", str(out),
                                       "--format", fmt])
    result = CliRunner().invoke(cli, ["eval", RECS, RELS, "-k", "3,all", "--per-user", "-",
                                      "--format", fmt])
    assert result.exit_code == 0
    assert result.stdout == out.read_text(encoding="utf-8")
    assert result.stderr == to_file.stdout  # the summary moves to stderr


# --- inputs as they come: RecBole atomic files, each file's own column names ---------------------

RECBOLE_INTER = ("user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
                 "1\t10\t3\t881250949\n1\t11\t1\t881250950\n1\t13\t2\t881250951\n"
                 "2\t12\t5\t881250952\n")
# by hand, k=3, gain = rating: user 1 ranks 10 (3), 12 (-), 11 (1): DCG 3 + 1/log2(4), ideal
# 3 + 2/log2(3) + 1/log2(4); user 2 ranks 14 (-), 12 (5): DCG 5/log2(3), ideal 5
RECBOLE_NDCG = ((3 + 0.5) / (3 + 2 / math.log2(3) + 0.5) + (5 / math.log2(3)) / 5) / 2


@pytest.mark.parametrize("name, options", [
    ("rels.inter", []),  # by extension
    ("rels.tsv", []),  # by content: the header's NAME:TYPE fields
    ("rels.txt", ["--rels-format", "recbole"]),
])
def test_recbole_inter_file_and_each_files_own_column_names(tmp_path, name, options):
    (tmp_path / name).write_text(RECBOLE_INTER)
    (tmp_path / "recs.csv").write_text("uid,iid,rank\n1,10,1\n1,12,2\n1,11,3\n2,14,1\n2,12,2\n")
    result = run("eval", str(tmp_path / "recs.csv"), str(tmp_path / name), "-k", "3",
                 "--recs-user-col", "uid", "--recs-item-col", "iid", "--relevance-col", "rating",
                 "--format", "json", *options)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["ndcg@3"] == pytest.approx(RECBOLE_NDCG, abs=1e-12)
    found = ndcg_duck.evaluate(str(tmp_path / "recs.csv"), str(tmp_path / name), 3,
                               recs_user_col="uid", recs_item_col="iid", relevance_col="rating",
                               rels_format="recbole" if options else None)
    assert found.summary["ndcg@3"] == pytest.approx(RECBOLE_NDCG, abs=1e-12)
