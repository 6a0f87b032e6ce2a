"""Issue 13: no silent wrong numbers, and everyday use without traps. Each surprising input is an
error that names the file, the column and the value and says what to fix (one table of exact
CLI outputs below), or an explicit choice the output states."""

import json
import math
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT
from ndcg_duck.cli import cli

EXAMPLES = ROOT / "examples"
TREC = ROOT / "tests" / "data" / "trec_eval"
USAGE = "Usage: ndcg-duck eval [OPTIONS] RECS [RELEVANCE]\nTry 'ndcg-duck eval --help' for help.\n\n"
RELS = "user_id,item_id,relevance\nu1,a,1\nu1,b,2\nu2,c,1\n"
NESTED = {"user_id": ["u1", "u2"], "items": [["a", "b"], ["c"]]}


def invoke(args, cwd=None):
    result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="ndcg-duck")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def make(folder, name, content):
    """A file under `folder`: text, a dict of columns (Parquet), or bytes."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        pq.write_table(pa.table(content), path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def truncated_parquet():
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(NESTED), sink)
    data = sink.getvalue().to_pybytes()
    return data[: len(data) // 2]


# id: (files, arguments ({d} is the folder of the files), exit code, exact output)
ERRORS = {
    # 1: a relevance file without its relevance column
    "relevance header typo": (
        {"recs.parquet": NESTED, "rels.csv": "user_id,item_id,relevence\nu1,a,1\n"},
        ["{d}/recs.parquet", "{d}/rels.csv"], 1,
        "Error: relevance file {d}/rels.csv: no relevance column 'relevance' (columns found: "
        "user_id, item_id, relevence); name it with --relevance-col ('relevence' looks numeric: "
        "--relevance-col 'relevence'?). Only a file of just the user and item columns counts "
        "every row as relevant\n"),
    "ratings file": (
        {"recs.parquet": NESTED, "ratings.csv": "user_id,item_id,timestamp,rating\nu1,a,9,4.5\n"},
        ["{d}/recs.parquet", "{d}/ratings.csv"], 1,
        "Error: relevance file {d}/ratings.csv: no relevance column 'relevance' (columns found: "
        "user_id, item_id, timestamp, rating); name it with --relevance-col ('timestamp' looks "
        "numeric: --relevance-col 'timestamp'?). Only a file of just the user and item columns "
        "counts every row as relevant\n"),
    "recommendations given as relevance": (
        {"recs.parquet": NESTED, "long.csv": "user_id,item_id,rank\nu1,a,1\nu1,b,2\n"},
        ["{d}/recs.parquet", "{d}/long.csv"], 1,
        "Error: relevance file {d}/long.csv: no relevance column 'relevance' (columns found: "
        "user_id, item_id, rank); name it with --relevance-col ('rank' looks numeric: "
        "--relevance-col 'rank'?). Only a file of just the user and item columns counts every "
        "row as relevant\n"),
    "named relevance column absent": (
        {"recs.parquet": NESTED, "rels.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--relevance-col", "grade"], 1,
        "Error: relevance file {d}/rels.csv: no column 'grade', named by --relevance-col "
        "(columns found: user_id, item_id); check --relevance-col\n"),
    # 2: rank and score
    "rank and score, neither named": (
        {"recs.csv": "user_id,item_id,rank,score\nu1,a,1,0.5\n", "rels.csv": RELS},
        ["{d}/recs.csv", "{d}/rels.csv"], 2,
        USAGE + "Error: recommendations file {d}/recs.csv: has both a 'rank' and a 'score' "
        "column: say which one orders each user's items, with --rank-col 'rank' or --score-col "
        "'score'\n"),
    "named rank column absent": (
        {"recs.csv": "user_id,item_id,score\nu1,a,0.5\n", "rels.csv": RELS},
        ["{d}/recs.csv", "{d}/rels.csv", "--rank-col", "position"], 1,
        "Error: recommendations file {d}/recs.csv: no column 'position', named by --rank-col "
        "(columns found: user_id, item_id, score); check --rank-col\n"),
    "rank and score both named": (
        {"recs.csv": "user_id,item_id,rank,score\nu1,a,1,0.5\n", "rels.csv": RELS},
        ["{d}/recs.csv", "{d}/rels.csv", "--rank-col", "rank", "--score-col", "score"], 2,
        USAGE + "Error: recommendations file {d}/recs.csv: --rank-col and --score-col both "
        "given: name only the column that orders each user's items\n"),
    # 4: a glob or directory holding two runs
    "glob of two runs": (
        {"run_a.parquet": NESTED, "run_b.parquet": NESTED, "rels.csv": RELS},
        ["{d}/run_*.parquet", "{d}/rels.csv"], 1,
        "Error: recommendations file {d}/run_*.parquet: user u1 appears in more than one of its "
        "2 files ({d}/run_a.parquet and {d}/run_b.parquet): if they are two runs, evaluate each "
        "on its own; if they are parts of one run, give each user's rows in one file\n"),
    "two runs by score, duplicates first": (
        {"runs/a.csv": "user_id,item_id,score\nu1,a,0.9\nu2,c,0.5\n",
         "runs/b.csv": "user_id,item_id,score\nu1,b,0.8\n", "rels.csv": RELS},
        ["{d}/runs", "{d}/rels.csv", "--duplicates", "first"], 1,
        "Error: recommendations directory {d}/runs: user u1 appears in more than one of its 2 "
        "files ({d}/runs/a.csv and {d}/runs/b.csv): if they are two runs, evaluate each on its "
        "own; if they are parts of one run, give each user's rows in one file\n"),
    # 12: directories
    "empty directory": (
        {"out/_SUCCESS": "", "rels.csv": RELS},
        ["{d}/out", "{d}/rels.csv"], 1,
        "Error: recommendations directory {d}/out holds no data files: give a file, a glob or a "
        "directory of .parquet, .csv or .json files\n"),
    "directory of two kinds": (
        {"out/part-0.parquet": NESTED, "out/notes.csv": "a\n1\n", "rels.csv": RELS},
        ["{d}/out", "{d}/rels.csv"], 2,
        USAGE + "Error: recommendations directory {d}/out holds files of more than one kind "
        "(.csv, .parquet): give a glob such as '{d}/out/**/*.parquet', or --recs-format\n"),
    # 13: TREC files recognised by content; the wrong one first is said plainly
    "qrels given as the run": (
        {"qrels": "q1 0 a 1\n", "run": "q1 Q0 a 1 0.5 tag\n"},
        ["{d}/qrels", "{d}/run"], 2,
        USAGE + "Error: recommendations file {d}/qrels looks like TREC qrels (query iteration "
        "doc relevance), not a TREC run (query Q0 doc rank score tag): give the recommendations "
        "first, then the relevance judgments\n"),
    "no extension, not TREC": (
        {"recs": "user_id;items\n", "rels.csv": RELS},
        ["{d}/recs", "{d}/rels.csv"], 2,
        USAGE + "Error: cannot tell the format of recommendations file {d}/recs from its "
        "extension or its content; use a .parquet, .csv or .json name, or --recs-format\n"),
    # 15: a TREC parse error in our words only
    "bad TREC run line": (
        {"run.txt": "".join(f"q1 Q0 d{n} {n} 0.{9 - n} t\n" for n in range(1, 5))
         + "q1 Q0 b 5 high t\n", "qrels.txt": "q1 0 a 1\n"},
        ["{d}/run.txt", "{d}/qrels.txt"], 1,
        'Error: {d}/run.txt: a TREC run line is "query Q0 doc rank score tag", not: '
        "q1 Q0 b 5 high t\n"),
    # issue 29: numbers beyond what the SQL counts in (a BIGINT) are the option's usage error
    "cutoff beyond 64 bits": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "-k", "99999999999999999999"], 2,
        USAGE + "Error: Invalid value for '-k': cutoff '99999999999999999999' is beyond the "
        "largest cutoff, 9223372036854775807: use 'all' for no cutoff\n"),
    "max depth beyond 64 bits": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--max-depth", "99999999999999999999"], 2,
        USAGE + "Error: Invalid value for '--max-depth': 99999999999999999999 is not in the "
        "range 1<=x<=9223372036854775807.\n"),
    # issue 29: a gain, or a sum of gains, too large for a DOUBLE (once DuckDB's cast of NaN)
    "exponential gain overflows": (
        {"recs.parquet": NESTED, "rels.csv": "user_id,item_id,relevance\nu1,a,3\nu1,b,1100\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--gain", "exponential"], 1,
        "Error: relevance file {d}/rels.csv: user u1, item b has relevance 1100, whose gain with "
        "--gain exponential is beyond the largest number (about 1.8e308): give that level a gain "
        "with --gain-map, or use smaller relevance values\n"),
    "linear gains add up past the largest number": (
        {"recs.parquet": NESTED,
         "rels.csv": "user_id,item_id,relevance\nu1,a,1.5e308\nu1,b,1.5e308\n"},
        ["{d}/recs.parquet", "{d}/rels.csv"], 1,
        "Error: relevance file {d}/rels.csv: user u1: ideal DCG@10 adds up to inf, past what a "
        "DOUBLE holds (about ±1.8e308), from gains up to 1.5e+308 (--gain, --gain-map): use "
        "smaller relevance values\n"),
    "negative gain map gains add up past the largest number": (
        {"recs.parquet": {"user_id": ["u1"], "items": [["a", "b", "c", "d"]]},
         "rels.csv": "user_id,item_id,relevance\nu1,a,0\nu1,b,0\nu1,c,0\nu1,d,1\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--gain-map", "0=-1.7e308"], 1,
        "Error: relevance file {d}/rels.csv: user u1: DCG@10 adds up to -inf, past what a "
        "DOUBLE holds (about ±1.8e308), from gains up to 1.0 (--gain, --gain-map): use smaller "
        "relevance values\n"),
    "cg adds up past the largest number": (
        {"recs.parquet": {"user_id": ["u1"], "items": [["a", "x", "b"]]},
         "rels.csv": "user_id,item_id,relevance\nu1,a,1e308\nu1,b,0.9e308\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "-m", "cg,dcg"], 1,
        "Error: relevance file {d}/rels.csv: user u1: CG@10 adds up to inf, past what a DOUBLE "
        "holds (about ±1.8e308), from gains up to 1e+308 (--gain, --gain-map): use smaller "
        "relevance values\n"),
    # issue 33: eval's intervals (--ci) and tables for papers (--format markdown, latex)
    "--ci-method without --ci": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--ci-method", "bootstrap"], 2,
        USAGE + "Error: --ci-method needs --ci LEVEL (e.g. --ci 0.95)\n"),
    "--ci with --format trec": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--ci", "0.95", "--format", "trec"], 2,
        USAGE + "Error: --format trec prints trec_eval's lines, which have no intervals: use "
        "--format table, json, csv, markdown or latex with --ci\n"),
    "--format markdown with --segments": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "groups.csv": "user_id,group\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--format", "markdown", "--segments",
         "{d}/groups.csv", "--by", "group"], 2,
        USAGE + "Error: --format markdown prints one row for the run: use --format table, json "
        "or csv with --segments\n"),
    # issue 33: activity cohorts (--by user-activity; tests/oracles/test_reference_cohorts.py)
    "--by user-activity without --train": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--by", "user-activity", "--groups", "2"], 2,
        USAGE + "Error: --by user-activity groups users by their number of train interactions: "
        "give --train FILE\n"),
    "--by user-activity without groups or cuts": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity"], 2,
        USAGE + "Error: --by user-activity needs --groups N (N groups of about as many train "
        "users) or --activity-cuts 5,20,100 (fixed ranges of counts)\n"),
    "--groups and --activity-cuts": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--groups", "2", "--activity-cuts", "5"], 2,
        USAGE + "Error: --groups and --activity-cuts do not go together: give one\n"),
    "--activity-cuts not increasing": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--activity-cuts", "20,5"], 2,
        USAGE + "Error: Invalid value for '--activity-cuts': 20,5: give increasing whole numbers "
        ">= 2, each the first count of a group, as in 5,20,100 (groups 1-4, 5-19, 20-99, "
        "100+)\n"),
    "--groups below 2": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--groups", "1"], 2,
        USAGE + "Error: Invalid value for '--groups': 1 is not in the range x>=2.\n"),
    "--groups without --by user-activity": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--groups", "3"], 2,
        USAGE + "Error: --groups groups users by their train interactions: it goes with --by "
        "user-activity (and --train), without --segments\n"),
    "--by a column without --segments": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--by", "group"], 2,
        USAGE + "Error: --by group names a column of --segments FILE: give --segments, or --by "
        "user-activity (with --train) to group users by their train interactions\n"),
    "--format markdown with --by user-activity": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--groups", "2", "--format", "markdown"], 2,
        USAGE + "Error: --format markdown prints one row for the run: use --format table, json "
        "or csv with --by user-activity\n"),
    "--format markdown with --by item-popularity": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "item-popularity", "--format", "markdown"], 2,
        USAGE + "Error: --format markdown prints one row for the run: use --format table, json "
        "or csv with --by item-popularity\n"),
    "--by item-popularity without --train": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--by", "item-popularity"], 2,
        USAGE + "Error: --by item-popularity groups items by their number of train users: give "
        "--train FILE\n"),
    "--by item-popularity with --activity-cuts": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "item-popularity", "--activity-cuts", "5"], 2,
        USAGE + "Error: --activity-cuts groups users by their train interactions: with --by "
        "item-popularity, give --groups N, or nothing for head and tail (--head-share)\n"),
    "train rows without a user": (
        {"recs.parquet": NESTED, "rels.csv": RELS,
         "train.csv": "user_id,item_id\nu1,a\n,b\n,c\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--groups", "2"], 1,
        "Error: train file {d}/train.csv: 2 row(s) have no user id (NULL): fill it in or drop "
        "the rows\n"),
    "no evaluated user in train": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nU1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--by",
         "user-activity", "--activity-cuts", "2"], 1,
        "Error: no evaluated user is in the train file {d}/train.csv (user ids there look like "
        "'U1', here like 'u1'): check --user-col and that the files use the same ids\n"),
    # 17: a truncated Parquet file
    "truncated parquet": (
        {"recs.parquet": truncated_parquet(), "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv"], 1,
        "Error: cannot read recommendations file {d}/recs.parquet: not a Parquet file, or "
        "corrupt or truncated (No magic bytes found at end of file '{d}/recs.parquet')\n"),
    # issue 33: `ndcg-duck split`'s data errors (its usage errors: tests/doors/test_cli_split.py)
    "split: a user short of the holdout": (
        {"inter.csv": "user_id,item_id,timestamp\n1,a,1\n1,b,2\n2,a,1\n3,b,1\n"},
        ["split", "{d}/inter.csv", "--test-last", "1", "--out-train", "{d}/a.csv",
         "--out-test", "{d}/b.csv"], 1,
        "Error: interactions file {d}/inter.csv: user 2 has 1 interaction, fewer than the 2 of "
        "--min-interactions (2 such users in all): leave such users out with --short-users drop, "
        "or keep them whole in train with --short-users train\n"),
    "split: a NULL timestamp": (
        {"inter.csv": "u,item_id,t\n1,a,1\n1,b,\n"},
        ["split", "{d}/inter.csv", "--test-last", "1", "--user-col", "u", "--time-col", "t",
         "--out-train", "{d}/a.csv", "--out-test", "{d}/b.csv"], 1,
        "Error: interactions file {d}/inter.csv: a row has no timestamp (user 1, item b) (NULL): "
        "fill it in or drop the row\n"),
    "split: a timestamp as text": (
        {"inter.csv": "user_id,item_id,timestamp\n1,a,May\n1,b,June\n"},
        ["split", "{d}/inter.csv", "--test-last", "1", "--out-train", "{d}/a.csv",
         "--out-test", "{d}/b.csv"], 1,
        "Error: interactions file {d}/inter.csv: column 'timestamp' is VARCHAR, not a number, a "
        "date or a timestamp: convert it, or name another column with --time-col\n"),
    "split: a relevance that is not a number": (
        {"inter.csv": "user_id,item_id,relevance\n1,a,high\n1,b,low\n"},
        ["split", "{d}/inter.csv", "--test-last", "1", "--by", "random", "--threshold", "1",
         "--out-train", "{d}/a.csv", "--out-test", "{d}/b.csv"], 1,
        "Error: interactions file {d}/inter.csv: column 'relevance' is VARCHAR, not a number or "
        "a boolean: convert it, or name another column with --relevance-col\n"),
    "split: the column of the parts": (
        {"inter.csv": "user_id,item_id,ndcg_part\n1,a,x\n1,b,y\n"},
        ["split", "{d}/inter.csv", "--test-last", "1", "--by", "random", "--out-train",
         "{d}/a.csv", "--out-test", "{d}/b.csv"], 1,
        "Error: interactions file {d}/inter.csv: has a column 'ndcg_part', the name the split "
        "gives its parts: rename it\n"),
    # issue 33: --exclude-seen reads --train, joined with the recommendations' ids as they are
    "--exclude-seen without --train": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--exclude-seen"], 2,
        USAGE + "Error: --exclude-seen needs --train, the interactions the system learned from "
        "(rows of user and item)\n"),
    "--exclude-seen with train's user ids of another type": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\n1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--exclude-seen"], 1,
        "Error: --exclude-seen: user ids are VARCHAR in the recommendations and BIGINT in the "
        "train file {d}/train.csv: give both files ids of one type (integers or text)\n"),
    "--per-item with a train row without an item": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\nu2,\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--train", "{d}/train.csv", "--per-item",
         "{d}/items.csv"], 1,
        "Error: train file {d}/train.csv: 1 row(s) have no item id (NULL)\n"),
    "--per-item to an unknown format": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--per-item", "{d}/items.txt"], 2,
        USAGE + "Error: cannot tell the format of output file {d}/items.txt: use one of "
        ".parquet, .csv, .json, .jsonl, .ndjson\n"),
    # refused before Spark starts: no Spark session, so not a slow (spark-marked) test
    "--per-item on Spark to an unknown format": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--engine", "spark", "--per-item", "{d}/i.txt"], 2,
        USAGE + "Error: cannot tell the format of output file {d}/i.txt: use one of "
        ".parquet, .csv, .json, .jsonl, .ndjson\n"),
    "--exclude-seen on Spark without --train": (
        {"recs.parquet": NESTED, "rels.csv": RELS},
        ["{d}/recs.parquet", "{d}/rels.csv", "--engine", "spark", "--exclude-seen"], 2,
        USAGE + "Error: --exclude-seen needs --train, the interactions the system learned "
        "from (rows of user and item)\n"),
    "--beyond-as rectools (--beyond-users recommended) on Spark": (
        {"recs.parquet": NESTED, "rels.csv": RELS, "train.csv": "user_id,item_id\nu1,a\n"},
        ["{d}/recs.parquet", "{d}/rels.csv", "--engine", "spark", "--train", "{d}/train.csv",
         "-m", "coverage", "--beyond-as", "rectools"], 2,
        USAGE + "Error: --beyond-users recommended (set by --beyond-as rectools, evidently and "
        "msrec) is not on --engine spark: its workers keep the lists of the evaluated users "
        "only; use --engine duckdb, or give --beyond-users evaluated\n"),
}


@pytest.mark.parametrize("files, args, code, output", list(ERRORS.values()), ids=list(ERRORS))
def test_error_table(tmp_path, files, args, code, output):
    for name, content in files.items():
        make(tmp_path, name, content)
    command = [] if args[0] == "split" else ["eval"]
    result = invoke([*command, *(arg.format(d=tmp_path) for arg in args)])
    assert (result.exit_code, result.output) == (code, output.format(d=tmp_path))


# --- 1, 2: which columns are used -----------------------------------------------------------------

def summary_of(*args):
    result = invoke(["eval", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_file_of_only_users_and_items_is_still_every_row_relevant(tmp_path):
    recs = make(tmp_path, "recs.parquet", NESTED)
    rels = make(tmp_path, "rels.csv", "user_id,item_id\nu1,b\nu2,c\n")
    # u1: b at rank 2 of ideal 1 -> 1/log2(3); u2: c at rank 1 -> 1
    assert summary_of(recs, rels)["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1) / 2)


@pytest.mark.parametrize("flag, column, first", [("--score-col", "score", "b"),
                                                 ("--rank-col", "rank", "a")])
def test_the_named_order_column_wins(tmp_path, flag, column, first):
    # rank says a then b; score says b then a
    recs = make(tmp_path, "recs.csv", "user_id,item_id,rank,score\nu1,a,1,0.1\nu1,b,2,0.9\n")
    rels = make(tmp_path, "rels.csv", "user_id,item_id,relevance\nu1,b,1\n")
    want = 1.0 if first == "b" else 1 / math.log2(3)
    assert summary_of(recs, rels, flag, column)["ndcg@10"] == pytest.approx(want)


# --- 3: users whose ideal DCG is 0 ----------------------------------------------------------------

@pytest.mark.parametrize("empty, users, fate", [("zero", 3, "scored 0"), ("skip", 2, "left out")])
def test_users_with_nothing_relevant_are_counted(tmp_path, empty, users, fate):
    recs = make(tmp_path, "recs.parquet", {"user_id": ["u1", "u2", "u3"],
                                           "items": [["a", "b"], ["c"], ["d"]]})
    # u3's only judgment is 0: ideal DCG 0, NDCG 0. u1: b (1) at rank 2 -> 1/log2(3); u2: 1
    rels = make(tmp_path, "rels.csv", "user_id,item_id,relevance\nu1,b,1\nu2,c,3\nu3,d,0\n")
    mean = (1 / math.log2(3) + 1) / users
    table = invoke(["eval", recs, rels, "--empty", empty])
    assert table.output == (f"ndcg@10  {mean:.4f}\n"
                            f"users    {users}\n"
                            f"ideal DCG 0 (nothing relevant): 1 user, {fate}\n")
    summary = summary_of(recs, rels, "--empty", empty)
    assert summary["users_with_zero_ideal_dcg"] == 1 and summary["users"] == users


# --- 5, 6: warnings on stderr ---------------------------------------------------------------------

def test_gain_map_levels_never_seen_are_warned_about(tmp_path):
    recs = make(tmp_path, "recs.parquet", NESTED)
    rels = make(tmp_path, "rels.csv", RELS)
    result = invoke(["eval", recs, rels, "--gain-map", "1=3,3=9,4=4.5"])
    assert result.exit_code == 0
    assert result.stderr == (f"Warning: the gain map (--gain-map) lists levels 3, 4, which never "
                             f"occur in the relevance file {rels}: check the map and the "
                             f"relevance values\n")
    assert invoke(["eval", recs, rels, "--gain-map", "1=3,2=9"]).stderr == ""
    with pytest.warns(ndcg_duck.NdcgWarning) as caught:
        ndcg_duck.evaluate(str(recs), str(rels), gain_map={1: 3, 3: 9})
    assert [str(w.message) for w in caught] == [
        f"the gain map (gain_map=) lists level 3, which never occurs in the relevance file "
        f"{rels}: check the map and the relevance values"]


def test_ids_compared_as_text_are_said_with_the_users_that_matched(tmp_path):
    recs = make(tmp_path, "recs.parquet", {"user_id": [1, 2], "items": [["a"], ["b"]]})
    rels = make(tmp_path, "rels.csv", "user_id,item_id,relevance\n1,a,1\n2,b,1\n")
    rels_text = make(tmp_path, "rels.json", json.dumps(
        [{"user_id": "001", "item_id": "a", "relevance": 1},
         {"user_id": "2", "item_id": "b", "relevance": 1}]))
    assert invoke(["eval", recs, rels]).stderr == ""  # both integers: nothing to say
    result = invoke(["eval", recs, rels_text, "--format", "json"])
    assert json.loads(result.stdout)["ndcg@10"] == 0.5  # '001' is not '1'
    assert result.stderr == (
        f"Warning: user ids are BIGINT in the recommendations file {recs} and VARCHAR in the "
        f"relevance file {rels_text}: compared as text, so '001' and '1' differ; 1 of the 2 "
        f"users of the relevance data have recommendations\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ndcg_duck.evaluate(str(recs), str(rels_text))
    assert [w.category for w in caught] == [ndcg_duck.NdcgWarning]
    assert "1 of the 2 users" in str(caught[0].message)


# --- 12, 13: directories and TREC files by content ------------------------------------------------

def test_a_directory_is_read_as_the_dataset_of_its_files(tmp_path):
    rels = make(tmp_path, "rels.csv", RELS)
    single = summary_of(make(tmp_path, "recs.parquet", NESTED), rels)
    out = tmp_path / "spark_out"
    make(out, "part-00000-x.snappy.parquet", {"user_id": ["u1"], "items": [["a", "b"]]})
    make(out, "part-00001-x.snappy.parquet", {"user_id": ["u2"], "items": [["c"]]})
    make(out, "_SUCCESS", "")
    make(out, ".part-00000-x.snappy.parquet.crc", b"\x00\x01")
    assert summary_of(out, rels) == single


def test_trec_files_are_recognised_by_their_content():
    flagged = summary_of(TREC / "results.test", TREC / "qrels.test", "--recs-format", "trec",
                         "--rels-format", "trec", "-k", "10,all")
    found = summary_of(TREC / "results.test", TREC / "qrels.test", "-k", "10,all")
    assert found == flagged
    # trec_eval's own `all` value for these files (out.test.aq: ndcg_cut_10 all 0.3016)
    assert round(found["ndcg@10"], 4) == 0.3016 and found["users"] == 3


def test_json_ids_of_mixed_types_compare_as_their_text(tmp_path):
    """A JSON file whose ids mix numbers and text gives DuckDB a JSON column ('"a"', quotes
    included): ids compare by their own text, so item "a" ranked first and judged 1 scores 1
    (found by tests/oracles/test_reference_fuzz.py: it scored 0)."""
    recs, rels = tmp_path / "recs.json", tmp_path / "rels.csv"
    recs.write_text('[{"user_id": 0, "items": ["a", 0]}]')
    rels.write_text("user_id,item_id,relevance\n0,a,1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # JSON ids are text: compared with the text ids as they are
        result = ndcg_duck.evaluate(str(recs), str(rels), k=1)
    assert result.summary["ndcg@1"] == 1.0  # a relevant item at rank 1: DCG = IDCG = 1
