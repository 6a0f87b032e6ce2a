"""Door 1: the real duckdb shell binary (PyPI package duckdb-cli) reading sql/ndcg.sql."""

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SETUP = """
.read sql/ndcg.sql
CREATE TABLE recs AS SELECT * FROM (VALUES
    ('q1', ['b', 'a']), ('q2', ['x', 'y', 'z']), ('q9', ['a'])) t(user_id, items);
CREATE TABLE rels AS SELECT * FROM (VALUES
    ('q1', 'a', 3), ('q1', 'b', 1), ('q2', 'z', 1), ('q3', 'a', 2)) t(user_id, item_id, relevance);
CREATE TABLE recs_long AS SELECT user_id, unnest(items) AS item_id,
    generate_subscripts(items, 1) AS rank FROM recs;
CREATE TABLE recs_scored AS SELECT user_id, item_id, 10.0 - rank AS score FROM recs_long;
"""


def duckdb_binary() -> str:
    found = shutil.which("duckdb", path=str(Path(sys.executable).parent)) or shutil.which("duckdb")
    assert found, "the duckdb shell is missing: pip install duckdb-cli (a test dependency)"
    return found


def shell(query: str, cwd=ROOT):
    """Run SETUP and one query in the duckdb shell from `cwd`; return the result rows."""
    done = subprocess.run([duckdb_binary(), "-csv"], input=SETUP + query, text=True,
                          capture_output=True, cwd=cwd, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return list(csv.reader(io.StringIO(done.stdout)))


def test_per_user_from_the_shell():
    rows = shell("SELECT user_id, round(dcg, 4), round(idcg, 4), round(ndcg, 4) "
                 "FROM ndcg_per_user('recs', 'rels', k := 10) ORDER BY user_id;")
    # q1: b (1) then a (3): DCG 1 + 3/log2(3) = 2.8928, ideal 3 + 1/log2(3) = 3.6309 (TV3: 0.7967)
    # q2: z at rank 3 -> 0.5, ideal 1; q3 has no recommendations -> 0
    assert rows == [["user_id", "round(dcg, 4)", "round(idcg, 4)", "round(ndcg, 4)"],
                    ["q1", "2.8928", "3.6309", "0.7967"],
                    ["q2", "0.5", "1.0", "0.5"],
                    ["q3", "0.0", "2.0", "0.0"]]


def test_mean_from_the_shell():
    rows = shell("SELECT round(ndcg, 4), users FROM ndcg_mean('recs', 'rels', k := 2);")
    # @2: q1 0.7967, q2 0 (z is third), q3 0 -> mean 0.2656
    assert rows[1] == ["0.2656", "3"]


def test_long_layouts_and_options_from_the_shell():
    rows = shell("SELECT (SELECT round(ndcg, 4) FROM ndcg_mean_ranks('recs_long', 'rels', "
                 "k := 'all', missing := 'skip')), "
                 "(SELECT round(ndcg, 4) FROM ndcg_mean_scores('recs_scored', 'rels', "
                 "gain := 'binary', missing := 'skip'));")
    # skip q3: ('all') q1 0.796716, q2 0.5 -> 0.648358; binary: q1 1.0, q2 0.5 -> 0.75
    assert rows[1] == ["0.6484", "0.75"]


def test_tables_by_quoted_qualified_names_from_the_shell():
    """dbt's ref() renders a table as "db"."schema"."name": the table macros take such names
    (quoted, qualified, with a space), as they take plain ones."""
    rows = shell('CREATE SCHEMA "run s"; CREATE TABLE "run s"."my recs" AS FROM recs;\n'
                 "SELECT (SELECT round(ndcg, 4) FROM ndcg_mean("
                 "'\"memory\".\"run s\".\"my recs\"', '\"memory\".\"main\".\"rels\"', k := 2)), "
                 "(SELECT round(value, 4) FROM ndcg_metrics_mean("
                 "'\"memory\".\"run s\".\"my recs\"', '\"main\".\"rels\"', k := 2) "
                 "WHERE metric = 'ndcg@2');")
    # as test_mean_from_the_shell: @2: q1 0.7967, q2 0, q3 0 -> 0.2656
    assert rows[1] == ["0.2656", "0.2656"]


def test_pairs_from_the_shell():
    """ndcg_pairs: two per-user results paired on the users both have, as compare pairs them."""
    rows = shell("CREATE TABLE run AS FROM ndcg_per_user('recs', 'rels', k := 10);\n"
                 "CREATE TABLE base AS FROM ndcg_per_user('recs', 'rels', k := 2) "
                 "WHERE user_id <> 'q3';\n"
                 "SELECT user_id, round(baseline, 4), round(ndcg, 4), round(difference, 4) "
                 "FROM ndcg_pairs('\"memory\".\"main\".\"run\"', 'base') ORDER BY user_id;")
    # q1 has both judged items in its top 2: 0.7967 at 10 and at 2; q2's z is third: 0.5 at 10,
    # 0 at 2; q3 is not in the baseline, so not paired
    assert rows[1:] == [["q1", "0.7967", "0.7967", "0.0"], ["q2", "0.0", "0.5", "0.5"]]


def test_one_literal_list_from_the_shell():
    rows = shell("SELECT round(ndcg_list_dcg([3, 2, 1]), 4), "
                 "round(ndcg_items(['A', 'B', 'C'], MAP {'A': 0.1, 'B': 0.5, 'C': 0.7, "
                 "'D': 0.5, 'E': 0.1}, k := 3), 6);")
    assert rows[1] == ["4.7619", "0.604888"]


def test_bad_option_is_a_clear_error_in_the_shell():
    done = subprocess.run([duckdb_binary(), "-csv"], cwd=ROOT, capture_output=True, text=True,
                          input=SETUP + "SELECT * FROM ndcg_mean('recs', 'rels', gain := 'log');",
                          timeout=60)
    assert "gain must be one of linear, exponential, binary, not log" in done.stderr


def test_printed_sql_runs_anywhere(tmp_path):
    """`ndcg-duck sql` output is one self-contained script: no .read, any directory."""
    from click.testing import CliRunner

    from ndcg_duck.cli import cli

    script = CliRunner().invoke(cli, ["sql"]).output
    assert not [line for line in script.splitlines() if line.startswith(".")]
    (tmp_path / "ndcg.sql").write_text(script)
    done = subprocess.run([duckdb_binary(), "-csv"], cwd=tmp_path, capture_output=True, text=True,
                          input=SETUP.replace(".read sql/ndcg.sql", ".read ndcg.sql")
                          + "SELECT round(ndcg, 4) FROM ndcg_mean('recs', 'rels');", timeout=60)
    assert done.stdout.splitlines()[1:] == ["0.4322"], done.stderr


def test_trec_files_and_new_options_from_the_shell():
    # trec_eval's test files through the SQL macros: query 302's ndcg_cut_10 is 0.7530 and its
    # ndcg (no cutoff) 0.6617 in out.test.aq; the gain map 1=3 leaves binary qrels unchanged
    rows = shell("CREATE VIEW run AS FROM ndcg_trec_run('tests/data/trec_eval/results.test');\n"
                 "CREATE VIEW qrels AS FROM ndcg_trec_qrels('tests/data/trec_eval/qrels.test');\n"
                 "SELECT user_id, round(ndcg, 4) FROM ndcg_per_user_scores('run', 'qrels', k := 10)"
                 " WHERE user_id = '302' UNION ALL "
                 "SELECT user_id, round(ndcg, 4) FROM ndcg_per_user_scores('run', 'qrels', "
                 "k := 'all', gain_map := MAP {1: 3, 2: 9, 4: 4.5}, ties := 'trec', "
                 "judged_only := false) WHERE user_id = '302';")
    assert rows[1:] == [["302", "0.753"], ["302", "0.6617"]]


def test_read_works_from_any_directory(tmp_path):
    """sql/ndcg.sql is self-contained: `.read /path/to/sql/ndcg.sql` from another directory."""
    script = SETUP.replace(".read sql/ndcg.sql", f".read {ROOT / 'sql' / 'ndcg.sql'}")
    done = subprocess.run([duckdb_binary(), "-csv"], cwd=tmp_path, capture_output=True, text=True,
                          input=script + "SELECT round(ndcg, 4) FROM ndcg_mean('recs', 'rels');",
                          timeout=60)
    assert done.stdout.splitlines()[1:] == ["0.4322"], done.stderr


def test_sql_ndcg_is_the_generated_script():
    """sql/ndcg.sql is generated from the per-concern files: after editing one of them, run
    `ndcg-duck sql > sql/ndcg.sql` from the repository root."""
    import ndcg_duck

    assert (ROOT / "sql" / "ndcg.sql").read_text(encoding="utf-8") == ndcg_duck.script()


def test_persistent_macros_outlive_the_session(tmp_path):
    """`ndcg-duck sql --persistent` run once in a database file; a later session uses them."""
    from click.testing import CliRunner

    from ndcg_duck.cli import cli

    script = CliRunner().invoke(cli, ["sql", "--persistent"]).output
    assert "TEMP MACRO" not in script and "CREATE OR REPLACE MACRO ndcg_mean(" in script
    database = tmp_path / "eval.duckdb"
    load = SETUP.replace(".read sql/ndcg.sql", script)
    done = subprocess.run([duckdb_binary(), str(database)], input=load, text=True,
                          capture_output=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    later = subprocess.run([duckdb_binary(), "-csv", str(database)], text=True, cwd=tmp_path,
                           input="SELECT round(ndcg, 4) FROM ndcg_mean('recs', 'rels');",
                           capture_output=True, timeout=60)
    assert later.stdout.splitlines()[1:] == ["0.4322"], later.stderr


# Every option of the shell wrappers, given a wrong value of each type, stops naming the option
# and the values it takes (never a cast error, never a silent cast such as 'yes' -> true or
# 2.5 -> 3). Values of a type the option takes are left out.
TAKES = {
    "k": "k must be an integer >= 1 or 'all'",
    "gain": "gain must be one of linear, exponential, binary",
    "missing": "missing must be one of zero, skip",
    "idcg_cutoff": "idcg_cutoff must be one of k, list",
    "empty": "empty must be one of zero, skip",
    "max_depth": "max_depth must be an integer >= 1 or NULL (no limit)",
    "gain_map": "gain_map must be a MAP from relevance level to gain, both numbers",
    "judged_only": "judged_only must be true or false",
    "min_relevance": "min_relevance must be a finite number or NULL",
    "ties": "ties must be one of trec, average",
}
WRONG = {"text": "'yes'", "integer": "0", "decimal": "2.5", "boolean": "true", "null": "NULL",
         "list": "[1]", "map": "MAP {1: 2}", "text map": "MAP {'a': 2}"}
RIGHT_TYPES = {"k": {"null"}, "max_depth": {"null"}, "gain_map": {"null", "map"},
               "judged_only": {"boolean"}, "min_relevance": {"integer", "decimal", "null"}}
PARAMETER_CASES = [(family, parameter, kind)
                   for family in ("ndcg_mean", "ndcg_metrics_mean")
                   for parameter in TAKES for kind in WRONG
                   if kind not in RIGHT_TYPES.get(parameter, ())]


@pytest.fixture(scope="module")
def parameter_errors():
    """One shell session runs every case; each case prints a marker and then its query's error."""
    script = SETUP
    for number, (family, parameter, kind) in enumerate(PARAMETER_CASES):
        macro = f"{family}_scores('recs_scored'" if parameter == "ties" else f"{family}('recs'"
        script += (f".print case {number}\n"
                   f"SELECT * FROM {macro}, 'rels', {parameter} := {WRONG[kind]});\n")
    done = subprocess.run([duckdb_binary(), "-csv"], input=script + ".print case end\n",
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                          timeout=600)
    return done.stdout.split("case ")


@pytest.mark.parametrize("number", range(len(PARAMETER_CASES)),
                         ids=[f"{f}-{p}-{k}" for f, p, k in PARAMETER_CASES])
def test_shell_parameter_errors_name_the_parameter(parameter_errors, number):
    family, parameter, kind = PARAMETER_CASES[number]
    output = parameter_errors[number + 1]
    assert output.startswith(f"{number}\n")
    assert f"ndcg-duck: {parameter} must be" in output and TAKES[parameter] in output, output
