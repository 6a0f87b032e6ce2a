"""The shell wrappers check the judgments as the CLI does (through the judgments edge), and the SQL
macros' errors name their parameter, through the real duckdb shell (PyPI package duckdb-cli)."""

import subprocess

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from test_shell import SETUP, duckdb_binary

BAD_RELEVANCE = {
    "NULL relevance": ("('q1', 'a', NULL::DOUBLE)",
                       "relevance: a row has no relevance (user q1, item a) (NULL): fill it in "
                       "or drop the row"),
    "NaN relevance": ("('q1', 'a', 'NaN'::DOUBLE)",
                      "relevance: user q1, item a has relevance nan: give a finite number"),
    "two values": ("('q1', 'a', 1.0), ('q1', 'a', 2.0)",
                   "relevance: user q1 has item a judged twice, as 1.0 and 2.0: keep one "
                   "judgment per (user, item)"),
    "NULL user": ("(NULL, 'a', 1.0), ('q1', 'b', 1.0)",
                  "relevance: a row has no user id (NULL): fill it in or drop the row"),
}


def shell_error(query: str) -> str:
    """SETUP and `query` in the duckdb shell; the query must fail: its first error line."""
    done = subprocess.run([duckdb_binary(), "-csv"], input=SETUP + query, text=True,
                          capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode != 0 and done.stderr, done.stdout
    return done.stderr.strip().splitlines()[0]


@pytest.mark.parametrize("case", list(BAD_RELEVANCE))
@pytest.mark.parametrize("wrapper", ["ndcg_per_user", "ndcg_mean"])
def test_shell_wrappers_refuse_bad_relevance_as_the_cli_does(case, wrapper, tmp_path):
    rows, message = BAD_RELEVANCE[case]
    error = shell_error(f"CREATE TABLE bad AS SELECT * FROM (VALUES {rows}) "
                        f"t(user_id, item_id, relevance);\n"
                        f"SELECT * FROM {wrapper}('recs', 'bad');\n")
    assert error == f"Invalid Input Error: ndcg-duck: {message}"
    # the CLI's message for the same rows is the same, naming the file
    rels = tmp_path / "rels.parquet"
    recs = tmp_path / "recs.parquet"
    done = subprocess.run([duckdb_binary()], text=True, capture_output=True, timeout=60,
                          input=f"COPY (SELECT * FROM (VALUES {rows}) t(user_id, item_id, "
                                f"relevance)) TO '{rels}';\n"
                                f"COPY (SELECT 'q1' AS user_id, ['a', 'b'] AS items) TO '{recs}';\n")
    assert done.returncode == 0, done.stderr
    result = CliRunner().invoke(cli, ["eval", str(recs), str(rels)])
    assert result.exit_code == 1
    assert result.output == f"Error: {message.replace('relevance:', f'relevance file {rels}:', 1)}\n"


@pytest.mark.parametrize("rank, shown", [("'NaN'::DOUBLE", "nan"), ("'-Infinity'::DOUBLE", "-inf")])
def test_shell_wrappers_refuse_nan_and_infinite_ranks(rank, shown):
    # a NaN rank would sort last and score a ranking the user never gave
    error = shell_error(f"CREATE TABLE bad AS SELECT * FROM (VALUES ('q1', 'b', 1.0), "
                        f"('q1', 'a', {rank}), ('q1', 'c', 2.0)) t(user_id, item_id, rank);\n"
                        f"SELECT * FROM ndcg_per_user_ranks('bad', 'rels');\n")
    assert error == (f"Invalid Input Error: ndcg-duck: recommendations: user q1, item a has rank "
                     f"{shown}: give a finite number")


@pytest.mark.parametrize("call, message", [
    ("ndcg_mean('recs', 'rels', k := 'ten')", "k must be an integer >= 1 or 'all', not ten"),
    ("ndcg_mean('recs', 'rels', k := 0)", "k must be an integer >= 1 or 'all', not 0"),
    ("ndcg_per_user_scores('recs_scored', 'rels', k := -3)",
     "k must be an integer >= 1 or 'all', not -3"),
    ("ndcg_mean('recs', 'rels', min_relevance := 'high')",
     "min_relevance must be a finite number or NULL, not high"),
    ("ndcg_mean('recs', 'rels', gain := 'log')",
     "gain must be one of linear, exponential, binary, not log"),
    ("ndcg_mean('recs', 'rels', idcg_cutoff := 'all')", "idcg_cutoff must be one of k, list, not all"),
    ("ndcg_metric_scores('ranked', 'judged', ks := [NULL], rbp_p := 1.5)",
     "rbp_p must be a number between 0 and 1 (both left out), not 1.5"),
    ("ndcg_metric_scores('ranked', 'judged', ks := [NULL], set_f_beta := -1)",
     "set_f_beta must be a number >= 0, not -1"),
    ("ndcg_metric_scores('ranked', 'judged', ks := [NULL], utility_weights := [1.0, 2.0])",
     "utility_weights must be a list of 4 finite numbers (relevant ranked, nonrelevant ranked, "
     "relevant not ranked, nonrelevant not ranked), not [1.0, 2.0]"),
    ("ndcg_metric_scores('ranked', 'judged', ks := [NULL], num_docs := -5)",
     "num_docs must be a whole number >= 0, not -5"),
    ("ndcg_metric_scores('ranked', 'judged', ks := [NULL], num_docs := 'many')",
     "num_docs must be a whole number >= 0, not many"),
    ("ndcg_mean('recs', 'rels', k := 99999999999999999999)",
     "k 99999999999999999999 is beyond the largest cutoff, 9223372036854775807: use 'all' for no "
     "cutoff"),
    ("ndcg_per_user_ranks('recs_long', 'rels', k := 1e300)",
     "k 1e+300 is beyond the largest cutoff, 9223372036854775807: use 'all' for no cutoff"),
    ("ndcg_mean_scores('recs_scored', 'rels', max_depth := 99999999999999999999)",
     "max_depth 99999999999999999999 is beyond the largest depth, 9223372036854775807: use NULL "
     "for no limit"),
    ("ndcg_mean('recs', 'rels', max_depth := 0)",
     "max_depth must be an integer >= 1 or NULL (no limit), not 0"),
    ("ndcg_mean_ranks('recs_long', 'rels', max_depth := 'ten', judged_only := true)",
     "max_depth must be an integer >= 1 or NULL (no limit), not ten"),
    ("ndcg_scores('ranked', 'judged', ks := [])",
     "ks must list at least one cutoff (an integer >= 1, or NULL for no cutoff), not []"),
    ("ndcg_scores('ranked', 'judged', ks := [5, 0])",
     "ks: each cutoff must be an integer >= 1 or NULL (no cutoff), not 0"),
    ("ndcg_user_activity('rels', [20, 5])",
     "cuts must be increasing integers >= 2, as in [5, 20, 100], not [20, 5]"),
    ("ndcg_activity_quantiles('rels', 1)", "groups must be an integer >= 2, not 1"),
    ("ndcg_judgments('rels', ideal_depth := 0)",
     "ideal_depth must be an integer >= 1 or NULL (every gain), not 0"),
    # judgments whose ideal gains were cut below a cutoff would give too small an ideal DCG
    ("ndcg_scores('ranked', 'judged_top_2', ks := [1, 3])",
     "judgments: their ideal gains were cut at ideal_depth 2, below the cutoff 3: give "
     "ndcg_judgments an ideal_depth of at least the largest cutoff, or NULL"),
    ("ndcg_scores('ranked', 'judged_top_2', ks := [1, NULL])",
     "judgments: their ideal gains were cut at ideal_depth 2, below the cutoff all: give "
     "ndcg_judgments an ideal_depth of at least the largest cutoff, or NULL"),
])
def test_sql_errors_name_the_parameter(call, message):
    error = shell_error("CREATE VIEW ranked AS FROM ndcg_ranked_lists('recs');\n"
                        "CREATE VIEW judged AS FROM ndcg_judgments('rels');\n"
                        "CREATE VIEW judged_top_2 AS FROM ndcg_judgments('rels', ideal_depth := 2);\n"
                        f"SELECT * FROM {call};\n")
    assert error == f"Invalid Input Error: ndcg-duck: {message}"


def test_min_relevance_from_the_shell():
    # q1: b (1) then a (3); with min_relevance 2, b gains 0 and leaves the ideal list:
    # DCG 3/log2(3) = 1.8928, IDCG 3 -> 0.6309; q2: z (1) is below 2: IDCG 0 -> 0; q3: 0
    done = subprocess.run([duckdb_binary(), "-csv"], cwd=ROOT, capture_output=True, text=True,
                          input=SETUP + "SELECT user_id, round(ndcg, 4) FROM ndcg_per_user("
                          "'recs', 'rels', min_relevance := 2) ORDER BY user_id;", timeout=60)
    assert done.stdout.splitlines() == ["user_id,\"round(ndcg, 4)\"", "q1,0.6309", "q2,0.0",
                                        "q3,0.0"], done.stderr
