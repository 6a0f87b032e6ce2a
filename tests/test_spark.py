"""The Spark engine against the default engine: the same per-user values (to 1e-12) and means on
random data for every option, the same refusals, results that do not depend on the number of
buckets or partitions, and the CLI's --engine spark. One local Spark session serves every test;
the tests skip only where no Java runtime is installed."""

import math
import random
import shlex
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import JAVA, ROOT
from ndcg_duck import spark as engine
from ndcg_duck.cli import cli
from test_reference import recs_table, rels_table

needs_java = pytest.mark.skipif(not JAVA, reason="no Java runtime (java on PATH or JAVA_HOME): "
                                                 "Spark cannot start here")


# the `spark` fixture (one local session for the whole run) is in conftest.py


# --- exact sums ---------------------------------------------------------------------------------

def test_exact_sum_is_exact_for_any_doubles():
    rng = np.random.default_rng(7)
    values = np.concatenate([
        rng.random(5000), -rng.random(100) * 1e-3, rng.random(50) * 1e300, -rng.random(50) * 1e300,
        np.array([5e-324, 2.2250738585072014e-308, 1e16, 1.0, -1e16, 0.1, 0.2, 0.3, 0.0, -0.0]),
    ])
    want = sum(Fraction(float(x)) for x in values)
    assert Fraction(engine.exact_sum(values), 2 ** (engine.SCALE + 53)) == want
    # and the same for any split into parts, in any order (what partitions do)
    parts = [values[i::7] for i in range(7)]
    assert Fraction(sum(engine.exact_sum(p) for p in reversed(parts)),
                    2 ** (engine.SCALE + 53)) == want


def test_exact_sum_where_float_addition_depends_on_order():
    values = np.array([1e16, 1.0, -1e16, 1.0])
    assert (1e16 + 1.0) - 1e16 + 1.0 != 2.0  # the naive sum loses a 1
    assert engine.exact_sum(values) == 2 << (engine.SCALE + 53)


# --- random data: every option ------------------------------------------------------------------

def dataset(seed, users=150, string_ids=True, repeats=False, pool=15):
    """Random rankings and judgments: some users on one side only, relevance levels with
    negatives, zeros and fractions; with repeats, some rankings list an item twice."""
    rng = random.Random(seed)
    item = (lambda n: f"doc-{n}") if string_ids else (lambda n: n)
    user = (lambda n: f"u{n}") if string_ids else (lambda n: n)
    rankings, judgments = {}, {}
    for u in range(users):
        if rng.random() < 0.85:
            items = rng.sample(range(pool), rng.randint(1, 12))
            if repeats and rng.random() < 0.3:
                items.insert(rng.randint(0, len(items)), rng.choice(items))
            rankings[user(u)] = [item(n) for n in items]
        if rng.random() < 0.85:
            judged = rng.sample(range(pool), rng.randint(1, 9))
            judgments[user(u)] = {item(n): rng.choice([-1, 0, 0, 1, 1, 2, 3, 0.5, 2.7])
                                  for n in judged}
    return rankings, judgments


def scores_of(rankings, seed, ties):
    rng = random.Random(seed)
    return {(u, i): float(rng.randint(0, 2) if ties else -pos)
            for u, items in rankings.items() for pos, i in enumerate(items)}


CASES = [
    # (layout, dataset arguments, options): every option of the core, several at once
    ("lists", {}, dict(k=[1, 3, 10])),
    ("ranks", {}, dict(k=[5, "all"], gain="exponential", missing="skip", empty="skip",
                       idcg_cutoff="list")),
    ("scores", {}, dict(k=[2, 10], gain="binary", ties="trec")),
    ("scores", {}, dict(k=[3, "all"], ties="average", judged_only=True, max_depth=4)),
    ("lists", {"repeats": True}, dict(k=[5, 20], duplicates="first",
                                      gain_map={1: 3, 2: 9, -1: -2, 0.5: 0.25})),
    ("ranks", {"string_ids": False}, dict(k="trec", judged_only=True, unique_judgments=True,
                                          missing="skip")),
    ("scores", {"repeats": True}, dict(k=[4], ties="average", duplicates="first",
                                       idcg_cutoff="list", gain="exponential", max_depth=6)),
]


def both_engines(spark, recs, rels, buckets=3, **options):
    want = ndcg_duck.evaluate(recs, rels, **options)
    got = engine.evaluate(spark, spark.createDataFrame(recs), spark.createDataFrame(rels),
                          buckets=buckets, **options)
    user = options.get("user_col", "user_id")
    rows = sorted((row.asDict() for row in got.per_user.collect()), key=lambda r: r[user])
    got.per_user.unpersist()
    return want, got.summary, rows


def assert_same(want, summary, rows):
    expected = want.per_user.to_pylist()
    assert [list(row) for row in rows] == [list(row) for row in expected]  # the same columns
    assert len(rows) == len(expected)
    for got_row, want_row in zip(rows, expected):
        for name, value in want_row.items():
            if isinstance(value, float):
                assert got_row[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
            else:
                assert got_row[name] == value
    assert summary.keys() == want.summary.keys()
    for name, value in want.summary.items():
        if isinstance(value, float):
            assert summary[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name
        else:
            assert summary[name] == value, name


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_the_default_engine(spark, case):
    layout, data_args, options = CASES[case]
    rankings, judgments = dataset(100 + case, **data_args)
    scores = scores_of(rankings, case, ties=case % 2 == 0)
    want, summary, rows = both_engines(spark, recs_table(rankings, layout, scores),
                                       rels_table(judgments), **options)
    assert summary["users"] > 50
    assert_same(want, summary, rows)


def test_lists_of_relevant_items_custom_columns_and_ids_of_two_types(spark):
    rankings, judgments = dataset(7, string_ids=False)
    recs = recs_table(rankings, "lists").rename_columns(["uid", "ranked"])
    # user ids as text on one side only: both engines compare them as text
    rels = pa.table({"uid": [str(u) for u in judgments],
                     "ranked": [[i for i, r in judged.items() if r > 0] or [0]
                                for judged in judgments.values()]})
    want, summary, rows = both_engines(spark, recs, rels, k=[3, 10], user_col="uid",
                                       items_col="ranked")
    assert_same(want, summary, rows)


def test_the_result_does_not_depend_on_buckets_or_partitions(spark):
    rankings, judgments = dataset(11, users=400)
    scores = scores_of(rankings, 11, ties=True)
    recs, rels = recs_table(rankings, "scores", scores), rels_table(judgments)
    options = dict(k=[3, 10, "all"], ties="average")
    want = ndcg_duck.evaluate(recs, rels, **options)
    results = []
    for count in (1, 7):
        got = engine.evaluate(spark, spark.createDataFrame(recs).repartition(count),
                              spark.createDataFrame(rels).repartition(count), buckets=count,
                              **options)
        rows = sorted(tuple(row) for row in got.per_user.collect())
        got.per_user.unpersist()
        results.append((got.summary, rows))
    assert results[0] == results[1]  # bit for bit
    assert_same(want, results[0][0], [dict(zip(want.per_user.column_names, row))
                                      for row in results[0][1]])


def test_buckets_sized_from_the_data(spark, tmp_path):
    rankings, judgments = dataset(3, users=50)
    pq.write_table(recs_table(rankings, "lists"), tmp_path / "recs.parquet")
    df = spark.read.parquet(str(tmp_path / "recs.parquet"))
    assert engine.bucket_count(spark, df, df) == 2 * engine.BUCKETS_PER_TASK  # a task a core
    big = spark.range(10 * engine.TASK_BYTES // 8)  # Spark estimates 8 bytes a row
    assert engine.bucket_count(spark, big, df) == 11 * engine.BUCKETS_PER_TASK


# --- refusals: the default engine's messages ----------------------------------------------------

def table(**columns):
    return pa.table(columns)


GOOD_RECS = table(user_id=["u1", "u2"], items=[["a", "b"], ["c"]])
GOOD_RELS = table(user_id=["u1", "u2"], item_id=["a", "c"], relevance=[1.0, 2.0])
REFUSALS = {
    "ranked twice": (table(user_id=["u1", "u2"], items=[["a", "b", "a"], ["c"]]), GOOD_RELS),
    "two rows": (table(user_id=["u1", "u1", "u2"], items=[["a"], ["b"], ["c"]]), GOOD_RELS),
    "two items at one rank": (table(user_id=["u1", "u1"], item_id=["a", "b"], rank=[1, 1]),
                              GOOD_RELS),
    "NULL score": (table(user_id=["u1", "u1"], item_id=["a", "b"], score=[0.5, None]),
                   GOOD_RELS),
    "NULL item": (GOOD_RECS, table(user_id=["u1", "u2"], item_id=["a", None],
                                   relevance=[1.0, 1.0])),
    "judged twice": (GOOD_RECS, table(user_id=["u1", "u1", "u2"], item_id=["a", "a", "c"],
                                      relevance=[1.0, 2.0, 1.0])),
    "NaN relevance": (GOOD_RECS, table(user_id=["u1", "u2"], item_id=["a", "c"],
                                       relevance=[1.0, float("nan")])),
    "infinite relevance": (GOOD_RECS, table(user_id=["u1", "u2"], item_id=["a", "c"],
                                            relevance=[1.0, float("inf")])),
    "no common user": (GOOD_RECS, table(user_id=["x1", "x2"], item_id=["a", "c"],
                                        relevance=[1.0, 1.0])),
    "no rows": (GOOD_RECS, GOOD_RELS.slice(0, 0)),
    "relevance not a number": (GOOD_RECS, table(user_id=["u1"], item_id=["a"],
                                                relevance=["high"])),
    "no user column": (GOOD_RECS.rename_columns(["uid", "items"]), GOOD_RELS),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_the_same_refusals_as_the_default_engine(spark, name):
    recs, rels = REFUSALS[name]
    with pytest.raises(ndcg_duck.InputError) as default:
        ndcg_duck.evaluate(recs, rels)
    with pytest.raises(ndcg_duck.InputError) as spark_error:
        engine.evaluate(spark, spark.createDataFrame(recs), spark.createDataFrame(rels),
                        buckets=7, recs_what="recommendations (Table)",
                        rels_what="relevance (Table)")
    assert str(spark_error.value) == str(default.value)
    assert spark_error.value.usage == default.value.usage


@pytest.mark.parametrize("bad", [dict(buckets=0), dict(batch_users=True), dict(k=0),
                                 dict(gain="log"), dict(colour="red"),
                                 dict(metrics=["recall@10"])])
def test_bad_options_are_refused_before_any_work(bad):
    with pytest.raises(ndcg_duck.InputError) as error:
        engine.evaluate(None, None, None, **bad)
    assert error.value.usage


# --- the command line ---------------------------------------------------------------------------

def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def files(tmp_path):
    """Random inputs as a directory of Parquet part files and two CSV files (a glob)."""
    rankings, judgments = dataset(5, users=120)
    recs_dir = tmp_path / "recs"
    recs_dir.mkdir()
    users = list(rankings)
    for part, start in enumerate(range(0, len(users), 40)):  # each user's rows in one file
        chosen = {user: rankings[user] for user in users[start:start + 40]}
        pq.write_table(recs_table(chosen, "ranks"), recs_dir / f"part-{part:05d}.parquet")
    rels = rels_table(judgments)
    half = rels.num_rows // 2
    for part, piece in enumerate((rels.slice(0, half), rels.slice(half))):
        con = duckdb.connect()
        con.register("piece", piece)
        con.execute(f"COPY piece TO '{tmp_path / f'rels-{part}.csv'}' (HEADER)")
        con.close()
    return tmp_path


def test_cli_matches_the_default_engine_on_part_files_and_globs(spark, files):
    args = [files / "recs", files / "rels-*.csv", "-k", "3,10", "--gain", "exponential",
            "--format", "json"]
    want = invoke("eval", files / "recs/*.parquet", *args[1:], "--per-user", files / "want.csv")
    got = invoke("eval", *args, "--engine", "spark", "--spark-conf",
                 "spark.sql.shuffle.partitions=3", "--per-user", files / "got.csv")
    assert want.exit_code == 0 and got.exit_code == 0, (got.output, want.output)
    assert got.output == want.output
    assert (files / "got.csv").read_text() == (files / "want.csv").read_text()
    assert not [p for p in files.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_cli_refuses_a_user_in_two_part_files_as_the_default_engine(spark, files):
    user = pq.read_table(files / "recs" / "part-00000.parquet")["user_id"][0].as_py()
    extra = recs_table({user: ["doc-1"]}, "ranks")
    pq.write_table(extra, files / "recs" / "part-09999.parquet")
    want = invoke("eval", files / "recs", files / "rels-*.csv")
    got = invoke("eval", files / "recs", files / "rels-*.csv", "--engine", "spark")
    assert want.exit_code == 1 and "appears in more than one of its" in want.output
    assert (got.exit_code, got.output) == (want.exit_code, want.output)


def test_cli_writes_a_directory_of_parquet_part_files(spark, files):
    want = invoke("eval", files / "recs/*.parquet", files / "rels-*.csv", "-k", "5",
                  "--per-user", files / "want.parquet")
    got = invoke("eval", files / "recs", files / "rels-*.csv", "-k", "5", "--engine", "spark",
                 "--per-user", f"{files / 'per_user'}/")
    assert got.exit_code == 0 and got.output == want.output
    con = duckdb.connect()
    sql = "SELECT * FROM read_parquet('{}') ORDER BY user_id"
    assert (con.sql(sql.format(files / "per_user" / "*.parquet")).fetchall()
            == con.sql(sql.format(files / "want.parquet")).fetchall())
    again = invoke("eval", files / "recs", files / "rels-*.csv", "--engine", "spark",
                   "--per-user", f"{files / 'per_user'}/")
    assert again.exit_code == 2 and "exists: remove it or name another" in again.output


def test_cli_reads_json_lines_and_json_arrays(spark, tmp_path):
    rankings, judgments = dataset(9, users=40)
    con = duckdb.connect()
    con.register("recs", recs_table(rankings, "lists"))
    con.register("rels", rels_table(judgments))
    con.execute(f"COPY recs TO '{tmp_path / 'recs.jsonl'}' (FORMAT json)")
    con.execute(f"COPY rels TO '{tmp_path / 'rels.json'}' (FORMAT json, ARRAY true)")
    args = ["eval", tmp_path / "recs.jsonl", tmp_path / "rels.json", "-k", "all"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert got.exit_code == 0 and got.output == want.output


@pytest.mark.parametrize("args, message", [
    (["--spark-conf", "spark.executor.memory"], "--spark-conf 'spark.executor.memory' is not "
                                                "KEY=VALUE"),
    (["--per-user", "-"], "--per-user - (stdout) is not available with --engine spark"),
    (["--recs-format", "trec"], "--engine spark reads Parquet, CSV and JSON"),
    (["--per-user", "out.xlsx"], "cannot tell the format of output file out.xlsx"),
    (["-m", "ndcg,recall"], "--engine spark computes ndcg (per user with dcg and idcg) only: "
                            "use the default engine for -m ndcg,recall"),
    (["-m", "dcg"], "--engine spark computes ndcg (per user with dcg and idcg) only: use the "
                    "default engine for -m dcg"),
])
def test_cli_usage_errors(args, message):
    result = invoke("eval", ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv",
                    "--engine", "spark", *args)
    assert result.exit_code == 2 and message in result.output


def test_cli_without_pyspark_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    before = set(Path(tempfile.gettempdir()).glob("ndcg-duck-spark-*.log"))
    result = invoke("eval", ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv",
                    "--engine", "spark")
    assert result.exit_code == 1
    assert result.output == f"Error: {engine.INSTALL}\n"
    assert set(Path(tempfile.gettempdir()).glob("ndcg-duck-spark-*.log")) == before


@needs_java
def test_a_refused_input_is_one_line_without_a_trace(tmp_path):
    """A real process: what the user sees on stderr, and the exit code."""
    recs = tmp_path / "recs.parquet"
    pq.write_table(table(user_id=["u1", "u2"], items=[["a", "b", "a"], ["c"]]), recs)
    rels = tmp_path / "rels.csv"
    rels.write_text("user_id,item_id,relevance\nu1,a,1\nu2,c,1\n")
    exe = [sys.executable, "-c", "from ndcg_duck.cli import main; main()", "eval", str(recs),
           str(rels)]
    want = subprocess.run(exe, capture_output=True, text=True, timeout=60)
    got = subprocess.run(exe + ["--engine", "spark", "--spark-master", "local[1]"],
                         capture_output=True, text=True, timeout=300)
    assert want.returncode == 1 and "ranks item a twice" in want.stderr
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, "", want.stderr)


# --- the README's Spark examples run as written -------------------------------------------------

def readme_blocks(language):
    from test_readme import blocks

    return blocks(language)


def test_readme_spark_command_prints_what_the_readme_shows(spark):
    (command,), (printed,) = readme_blocks("sh spark"), readme_blocks("text spark")
    args = shlex.split(command.split("ndcg-duck ", 1)[1])
    result = invoke(*args)
    assert result.exit_code == 0 and result.output == printed


def test_readme_spark_python_example(spark, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    (block,) = readme_blocks("python spark")
    names = {}
    exec(compile(block, "README.md", "exec"), names)
    want = ndcg_duck.evaluate("examples/recs.parquet", "examples/relevance.csv", k=[5, 10])
    assert names["summary"] == pytest.approx(want.summary)
    assert "ndcg@10" in capsys.readouterr().out  # show() printed the per-user rows
    names["per_user"].unpersist()


def test_the_core_install_stays_duckdb_pyarrow_click():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if "spark" in d]
    assert project["optional-dependencies"]["spark"] == ["pyspark[sql]>=4.0"]
