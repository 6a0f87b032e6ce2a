"""The Spark engine against the default engine: the same per-user values (to 1e-12) and means on
random data for every option, the same refusals, results that do not depend on the number of
buckets or partitions, and the CLI's --engine spark. One local Spark session serves every test;
the tests skip only where no Java runtime is installed."""

import csv
import io
import json
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
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
from ndcg_duck.spark import engine as driver, exact, launch, refusals
from ndcg_duck.cli import cli
from test_reference_ndcg import recs_table, rels_table

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


# every metric, with and without cutoffs, counts and means (-m as the CLI takes it)
EVERY_METRIC = ["ndcg", "P@3", "recall", "hit_rate", "mrr", "mrr@5", "map", "map@10",
                "r_precision", "num_rel", "num_rel_ret", "cg", "dcg@2", "idcg@2", "judged",
                "ncg", "ERR@5", "bpref", "rbp", "num_ret", "num_nonrel_judged_ret", "set_P",
                "set_relative_P", "set_map", "SetF", "relative_P@3", "11pt_avg",
                "infAP", "Rndcg", "ndcg_rel", "rbp_resid", "utility", "unj@3", "G", "binG",
                "gm_map", "gm_bpref", "IPrec@0.3", "Rprec_mult@1.2"]
CASES = [
    # (layout, dataset arguments, options): every option of the core, several at once; most
    # with the whole metric family (the metrics macros), some NDCG alone (the core's macros)
    ("lists", {}, dict(k=[1, 3, 10], metrics=EVERY_METRIC)),
    ("ranks", {}, dict(k=[5, "all"], gain="exponential", missing="skip", empty="skip",
                       idcg_cutoff="list", rbp_p=0.8, set_f_beta=2.0,
                       utility_weights="2,-1,0.5,0.25", num_docs=30, metrics=EVERY_METRIC)),
    ("scores", {}, dict(k=[2, 10], gain="binary", ties="trec", metrics=EVERY_METRIC)),
    ("scores", {}, dict(k=[3, "all"], ties="average", judged_only=True, max_depth=4)),
    ("lists", {"repeats": True}, dict(k=[5, 20], duplicates="first",
                                      gain_map={1: 3, 2: 9, -1: -2, 0.5: 0.25},
                                      metrics=EVERY_METRIC)),
    ("ranks", {"string_ids": False}, dict(k="trec", judged_only=True, unique_judgments=True,
                                          missing="skip", metrics=["ndcg", "map", "P@5"])),
    ("scores", {"repeats": True}, dict(k=[4], ties="average", duplicates="first",
                                       idcg_cutoff="list", gain="exponential", max_depth=6)),
]


def both_engines(spark, recs, rels, buckets=3, **options):
    """Both engines' results (the default engine's, Spark's summary and per-user rows); the
    same warnings, and with per_item=True the same per-item view."""
    with warnings.catch_warnings(record=True) as told_want:
        warnings.simplefilter("always")
        want = ndcg_duck.evaluate(recs, rels, **options)
    with warnings.catch_warnings(record=True) as told_got:
        warnings.simplefilter("always")
        got = engine.evaluate(spark, spark.createDataFrame(recs), spark.createDataFrame(rels),
                              buckets=buckets, recs_what="recommendations (Table)",
                              rels_what="relevance (Table)", **options)
    assert [str(w.message) for w in told_got if w.category is ndcg_duck.NdcgWarning] == [
        str(w.message) for w in told_want if w.category is ndcg_duck.NdcgWarning]
    if options.get("per_item"):
        assert got.per_item == want.per_item
    user = options.get("user_col", "user_id")
    rows = sorted((row.asDict() for row in got.per_user.collect()), key=lambda r: r[user])
    got.unpersist()
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


def test_ties_averaged_on_the_top_n_edge(spark):
    # ties 'average' with cutoffs up to 100 and no max_depth: the top-n edge that returns a tie
    # straddling the largest cutoff whole and counts the ties (leaks.folds), on the workers too
    rankings, judgments = dataset(31)
    want, summary, rows = both_engines(spark, recs_table(rankings, "scores",
                                                         scores_of(rankings, 31, ties=True)),
                                       rels_table(judgments), k=[2, 5], ties="average")
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
        got.unpersist()
        results.append((got.summary, rows))
    assert results[0] == results[1]  # bit for bit
    assert_same(want, results[0][0], [dict(zip(want.per_user.column_names, row))
                                      for row in results[0][1]])


def test_buckets_sized_from_the_data(spark, tmp_path):
    rankings, judgments = dataset(3, users=50)
    pq.write_table(recs_table(rankings, "lists"), tmp_path / "recs.parquet")
    df = spark.read.parquet(str(tmp_path / "recs.parquet"))
    assert driver.bucket_count(spark, df, df) == 2 * driver.BUCKETS_PER_TASK  # a task a core
    big = spark.range(10 * driver.TASK_BYTES // 8)  # Spark estimates 8 bytes a row
    assert driver.bucket_count(spark, big, df) == 11 * driver.BUCKETS_PER_TASK


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
                                 dict(metrics=["precision@all"])])
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
            "--format", "json", "-m", "ndcg,P@3,mrr,num_rel"]
    # --per-item: each bucket's counts added up per cutoff and item
    want = invoke("eval", files / "recs/*.parquet", *args[1:], "--per-user", files / "want.csv",
                  "--per-item", files / "want-items.csv")
    got = invoke("eval", *args, "--engine", "spark", "--spark-conf",
                 "spark.sql.shuffle.partitions=3", "--per-user", files / "got.csv",
                 "--per-item", files / "got-items.csv")
    assert want.exit_code == 0 and got.exit_code == 0, (got.output, want.output)
    assert got.output == want.output
    assert (files / "got.csv").read_text() == (files / "want.csv").read_text()
    assert (files / "got-items.csv").read_text() == (files / "want-items.csv").read_text()
    assert not [p for p in files.iterdir() if p.name.startswith(".")]  # no temporary files left



def test_metrics_sql_own_measure_as_the_default_engine(spark, files):
    # the macro file's text goes to the workers with the options; precision again, per user
    macros = files / "mine.sql"
    macros.write_text("CREATE MACRO ndcg_metric_prec(relevant_ranks, k) AS\n"
                      "    len(list_filter(relevant_ranks, lambda p: p <= k)) / k;\n")
    args = [files / "rels-*.csv", "-k", "3,10", "--metrics-sql", macros, "-m", "Prec,P@3",
            "--format", "json"]
    want = invoke("eval", files / "recs/*.parquet", *args, "--per-user", files / "want.csv")
    got = invoke("eval", files / "recs", *args, "--engine", "spark", "--per-user",
                 files / "got.csv")
    assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output), got.output
    assert (files / "got.csv").read_text() == (files / "want.csv").read_text()
    rows = list(csv.DictReader(io.StringIO((files / "got.csv").read_text())))
    assert rows and all(row["prec@3"] == row["precision@3"] for row in rows)
    assert json.loads(got.output)["prec@3"] == json.loads(got.output)["precision@3"]
    # a macro that fails on the data: the default engine's message, from the worker
    macros.write_text("CREATE MACRO ndcg_metric_x(length) AS CASE WHEN length > 1 "
                      "THEN error('too long') ELSE 0 END;\n")
    args = [files / "rels-*.csv", "--metrics-sql", macros, "-m", "x"]
    want = invoke("eval", files / "recs/*.parquet", *args)
    got = invoke("eval", files / "recs", *args, "--engine", "spark")
    assert want.output == f"Error: --metrics-sql {macros}: ndcg_metric_x fails on the data: " \
                          f"too long\n"
    assert (got.exit_code, got.output) == (1, want.output)

def test_cli_segments_and_plot_as_the_default_engine(spark, files):
    users = sorted({row["user_id"] for part in (files / "recs").iterdir()
                    for row in pq.read_table(part).to_pylist()})
    segments = files / "segments.csv"  # some users in none, one segment without any user
    segments.write_text("user_id,group\n" + "".join(
        f"{u},{['new', 'old', 'Über'][n % 3]}\n" for n, u in enumerate(users) if n % 5) +
        "nobody,empty\n")
    args = [files / "rels-*.csv", "-k", "3,10", "-m", "ndcg,recall,num_rel", "--segments",
            segments, "--by", "group"]
    for fmt in ("json", "table"):
        want = invoke("eval", files / "recs/*.parquet", *args, "--format", fmt,
                      "--plot", files / "want.png")
        got = invoke("eval", files / "recs", *args, "--format", fmt, "--engine", "spark",
                     "--plot", files / "got.png")
        assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
        assert (files / "got.png").read_bytes() == (files / "want.png").read_bytes()
    bad = files / "bad.csv"
    bad.write_text("user_id,group\nx1,a\n")
    want = invoke("eval", files / "recs/*.parquet", *args[:-4], "--segments", bad, "--by", "group")
    got = invoke("eval", files / "recs", *args[:-4], "--segments", bad, "--by", "group",
                 "--engine", "spark")
    assert want.exit_code == 1 and (got.exit_code, got.output) == (1, want.output)


def test_cli_user_activity_as_the_default_engine(spark, files, runs):
    # --by user-activity: the groups made on the driver from --train by the same macros, then
    # every row as a segments file's; users absent from train are cold
    users = sorted({row["user_id"] for part in (files / "recs").iterdir()
                    for row in pq.read_table(part).to_pylist()})
    # train holds recommended items: the warning of items seen in train, its counts added up
    # over the buckets, and with --exclude-seen the rankings without them, as the default engine
    train = files / "train.csv"
    train.write_text("user_id,item_id\n" + "".join(
        f"{u},doc-{j}\n" for n, u in enumerate(users) if n % 6 for j in range(n % 9 + 1)))
    # --by item-popularity: the item groups made on the driver, each group scored on the
    # workers by the default engine's steps, the exact means and exposure of the sums
    for by in (["user-activity", "--groups", "3"],
               ["user-activity", "--activity-cuts", "2,4,8", "--exclude-seen"],
               ["item-popularity", "--head-share", "0.3"],
               ["item-popularity", "--groups", "3", "--exclude-seen"]):
        args = [files / "rels-*.csv", "-k", "3,10", "-m", "ndcg,recall,P", "--train", train,
                "--by", *by, "--ci", "0.9"]
        want = invoke("eval", files / "recs/*.parquet", *args, "--per-item", files / "w.json")
        got = invoke("eval", files / "recs", *args, "--engine", "spark", "--per-item",
                     files / "g.json")
        assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
        assert (files / "g.json").read_text() == (files / "w.json").read_text()
        assert "they have in the train file" in want.output
        assert ("\ncold " if by[0] == "user-activity" else "  exposure@10") in want.output
    # a train file without an item column: refused by one rule on both engines
    users_only = files / "users.csv"
    users_only.write_text("user_id\n" + "".join(f"{u}\n" for u in users))
    args = [files / "rels-*.csv", "--train", users_only, "--by", "user-activity", "--groups", "2"]
    want = invoke("eval", files / "recs/*.parquet", *args)
    got = invoke("eval", files / "recs", *args, "--engine", "spark")
    assert want.exit_code == 1 and (got.exit_code, got.output) == (1, want.output)
    assert f"train file {users_only}: no column 'item_id'" in want.output
    # a train file of users and items (the default engine also counts the items it recommends
    # that a user has in train): the segments file's users, one row each
    played = runs[1].parent / "played.csv"
    played.write_text("user_id,item_id\n" + "".join(
        f"{line.split(',')[0]},never-recommended\n"
        for line in (runs[1].parent / "segments.csv").read_text().splitlines()[1:]))
    two = runs[:6] + ["-k", "10", "-m", "ndcg", "--format", "json", "--train", played,
                      "--by", "user-activity", "--activity-cuts", "2"]
    want, got = invoke(*two), invoke(*two, "--engine", "spark")
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    assert_same_rows(json.loads(got.output), json.loads(want.output))


def test_cli_intervals_as_the_default_engine(spark, files):
    # --ci's t intervals from exact sums of values and squares on the workers: the default
    # engine's (var_samp in DuckDB) to rounding, per segment too; the bootstrap is refused
    users = sorted({row["user_id"] for part in (files / "recs").iterdir()
                    for row in pq.read_table(part).to_pylist()})
    segments = files / "segments.csv"
    segments.write_text("user_id,group\n" + "".join(
        f"{u},{['new', 'old'][n % 2]}\n" for n, u in enumerate(users)))
    args = [files / "rels-*.csv", "-k", "3,10", "-m", "ndcg,dcg,num_rel,gm_map", "--ci", "0.9",
            "--seed", "3",
            "--segments", segments, "--by", "group"]
    want = invoke("eval", files / "recs/*.parquet", *args, "--format", "json")
    got = invoke("eval", files / "recs", *args, "--format", "json", "--engine", "spark")
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    want, got = json.loads(want.output), json.loads(got.output)
    assert got["intervals"].keys() == want["intervals"].keys()
    for name, pair in want["intervals"].items():
        assert got["intervals"][name] == (pytest.approx(pair, rel=1e-12)
                                          if isinstance(pair, list) else pair)
    assert len(got["segments"]) == len(want["segments"]) == 4  # (all), new, old, (unknown)
    for mine, theirs in zip(got["segments"], want["segments"]):
        assert mine["intervals"].keys() == theirs["intervals"].keys()
        for name, pair in theirs["intervals"].items():
            assert mine["intervals"][name] == pytest.approx(pair, rel=1e-12)
    refused = invoke("eval", files / "recs", *args, "--ci-method", "bootstrap", "--engine",
                     "spark")
    assert refused.exit_code == 2
    assert refused.output.endswith("Error: --ci-method bootstrap resamples every user's value in "
                                   "one process, which --engine spark does not gather: use "
                                   "--ci-method t (from exact sums on the workers), or "
                                   "--engine duckdb\n")


def test_cli_reads_trec_runs_and_qrels_as_the_default_engine(spark, tmp_path, monkeypatch):
    rankings, judgments = dataset(12, users=60)
    scores = scores_of(rankings, 12, ties=True)
    runs = tmp_path / "runs"
    runs.mkdir()
    users = list(rankings)
    for part in range(2):  # a glob of two run files, each user in one; no extension
        with open(runs / f"run{part}", "w") as out:
            for u in users[part::2]:
                for rank, item in enumerate(rankings[u], 1):
                    out.write(f"{u} Q0 {item}\t{rank} {scores[(u, item)]!r} tag\n")
                out.write("\n")
    with open(tmp_path / "qrels", "w") as out:
        for u, judged in judgments.items():
            out.write("".join(f"{u} 0 {item} {rel!r}\n" for item, rel in judged.items()))
    monkeypatch.chdir(tmp_path)
    # the run named as TREC with --recs-format, the qrels found TREC by their content
    args = ["eval", "runs/run*", "qrels", "-k", "5,all", "-m", "ndcg,map", "--format", "json",
            "--recs-format", "trec"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
    with open(runs / "run1", "a") as out:
        out.write("u1 Q0 doc-1 1 high tag\n")
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert "a TREC run line is" in want.output
    assert want.exit_code == 1 and (got.exit_code, got.output) == (1, want.output)


@pytest.fixture
def runs(tmp_path):
    """Three random runs (Parquet, lists) on the judgments of the first, and compare's
    arguments for them."""
    judged = None
    for run in range(3):
        rankings, judgments = dataset(40 + run, users=90)
        judged = judged or judgments
        pq.write_table(recs_table(rankings, "lists"), tmp_path / f"run{run}.parquet")
    pq.write_table(rels_table(judged), tmp_path / "rels.parquet")
    users = sorted(pq.read_table(tmp_path / "run0.parquet")["user_id"].to_pylist())
    # segments.csv: some users in none, one segment without any user, one of 3 users
    (tmp_path / "segments.csv").write_text("user_id,group\n" + "".join(
        f"{u},{['new', 'old', 'Über'][n % 3] if n > 3 else 'few'}\n"
        for n, u in enumerate(users) if n % 7) + "nobody,empty\n")
    return ["compare", tmp_path / "rels.parquet", "--run", f"a={tmp_path / 'run0.parquet'}",
            "--run", f"b={tmp_path / 'run1.parquet'}", "--run", f"c={tmp_path / 'run2.parquet'}"]


def assert_same_rows(got_rows, want_rows):
    """compare's JSON rows: the same fields and values, numbers to 1e-12."""
    assert len(got_rows) == len(want_rows)
    for got_row, want_row in zip(got_rows, want_rows):
        assert got_row.keys() == want_row.keys()
        for name, value in want_row.items():
            if isinstance(value, float):
                assert got_row[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name
            else:
                assert got_row[name] == value, (name, got_row, want_row)


def test_compare_on_spark_gives_the_default_engines_rows(spark, runs):
    """Runs scored and paired on Spark: the same rows (means, differences, intervals, t-test
    p-values to 1e-12, wins/ties/losses, the correction) as the default engine."""
    import json

    args = runs + ["-k", "3,10", "-m", "ndcg,P@3,mrr,num_rel,IPrec@0.5", "--all-pairs", "--format",
                   "json"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    want_rows, got_rows = json.loads(want.output), json.loads(got.output)
    assert any(r["p_value"] for r in want_rows)
    assert_same_rows(got_rows, want_rows)
    # randomization: sign flips summed on the workers, reproducible on any number of partitions
    # (per segment too), near the default engine's p (another random stream)
    two = args[:6] + ["-k", "10", "-m", "ndcg", "--format", "json", "--test", "randomization",
                      "--n-resamples", "4000", "--segments", runs[1].parent / "segments.csv",
                      "--by", "group", "--min-users", "5"]
    want = json.loads(invoke(*two).output)
    results = []
    for partitions in ("2", "5"):
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
        results.append(json.loads(invoke(*two, "--engine", "spark").output))
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    assert results[0] == results[1]
    assert [r["segment"] for r in results[0] if r["tested"]] == ["(all)", "new", "old", "Über",
                                                                   "(unknown)"]
    (p_want,), (p_got,) = ([r["p_value"] for r in rows if r["tested"] and r["segment"] == "(all)"]
                           for rows in (want, results[0]))
    assert abs(p_got - p_want) < 4 * math.sqrt(p_want * (1 - p_want) / 4000) + 1e-3


def test_compare_on_spark_bootstrap(spark, tmp_path):
    """--test bootstrap: a Poisson bootstrap on the workers, identical on 1 and 4 partitions,
    its interval and p-value those of the default engine's bootstrap within Monte Carlo error;
    beyond stats.BOOTSTRAP_DRAWS, the default engine's normal form (to 1e-12)."""
    import json

    judged = None
    for run in range(2):
        rankings, judgments = dataset(60 + run, users=2500)
        judged = judged or judgments
        pq.write_table(recs_table(rankings, "lists"), tmp_path / f"run{run}.parquet")
    pq.write_table(rels_table(judged), tmp_path / "rels.parquet")
    args = ["compare", tmp_path / "rels.parquet", "--run", f"a={tmp_path / 'run0.parquet'}",
            "--run", f"b={tmp_path / 'run1.parquet'}", "-k", "10", "-m", "ndcg", "--format",
            "json", "--test", "bootstrap", "--n-resamples", "2000"]
    want = json.loads(invoke(*args).output)
    results = []
    for partitions in ("1", "4"):
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
        results.append(json.loads(invoke(*args, "--engine", "spark").output))
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    assert results[0] == results[1]
    (w,), (g,) = ([r for r in rows if r["tested"]] for rows in (want, results[0]))
    assert w["users"] == g["users"] > 1500 and g["note"] is None and g["diff"] == w["diff"]
    width = w["diff_ci_high"] - w["diff_ci_low"]
    assert abs((g["diff_ci_high"] - g["diff_ci_low"]) / width - 1) < 0.15
    assert abs((g["diff_ci_high"] + g["diff_ci_low"]) / 2
               - (w["diff_ci_high"] + w["diff_ci_low"]) / 2) < 0.15 * width
    assert 0.01 < w["p_value"] < 0.99
    assert abs(g["p_value"] - w["p_value"]) < 4 * math.sqrt(w["p_value"] / 2000) + 0.01
    many = args[:-1] + ["100000"]  # users x resamples beyond BOOTSTRAP_DRAWS: the normal form
    want, got = invoke(*many), invoke(*many, "--engine", "spark")
    assert "normal-theory" in json.loads(want.output)[1]["note"]
    assert_same_rows(json.loads(got.output), json.loads(want.output))


def test_compare_on_spark_per_user_segments_and_plot_as_the_default_engine(spark, runs, tmp_path,
                                                                          monkeypatch):
    """--per-user: the default engine's table (columns, rows, order), written as one file or as
    a directory of part files; --segments: the default engine's rows per segment (means,
    differences, intervals, t-test p-values to 1e-12), some users in no segment, one segment
    too small to test; --plot: the same curves of sorted differences, the same picture."""
    import json

    from ndcg_duck.report import plot as plotting

    drawn = []
    draw = plotting.draw_compare
    monkeypatch.setattr(plotting, "draw_compare",
                        lambda curves, *rest: drawn.append(curves) or draw(curves, *rest))
    segments = tmp_path / "segments.csv"
    args = runs[:6] + ["-k", "3,10", "-m", "ndcg,num_rel", "--format", "json"]
    for extra in ([], ["--segments", segments, "--by", "group", "--min-users", "5",
                       "--plot", tmp_path / "{}.png"]):
        want = invoke(*args, *[str(a).format("want") for a in extra],
                      "--per-user", tmp_path / "want.csv")
        got = invoke(*args, *[str(a).format("got") for a in extra],
                     "--per-user", tmp_path / "got.csv", "--engine", "spark")
        assert want.exit_code == 0 and got.exit_code == 0, got.output
        want_rows, got_rows = json.loads(want.output), json.loads(got.output)
        assert_same_rows(got_rows, want_rows)
        assert (tmp_path / "got.csv").read_text() == (tmp_path / "want.csv").read_text()
        assert (tmp_path / "want.csv").read_text().count("\n") > 50
    want_curves, got_curves = drawn
    assert got_curves == want_curves and len(want_curves) == 3  # ndcg@3, ndcg@10, num_rel
    paired = want_rows[0]["users"]
    assert 50 < paired < 500 and all(len(c) == paired for c in want_curves.values())
    assert (tmp_path / "got.png").read_bytes() == (tmp_path / "want.png").read_bytes()
    assert {r["segment"] for r in want_rows} == {"(all)", "new", "old", "Über", "few",
                                                 "(unknown)"}
    assert any(r["note"] and r["segment"] == "few" for r in want_rows)
    assert any(r["p_value"] and r["segment"] == "Über" for r in want_rows)
    parts = invoke(*args, "--per-user", f"{tmp_path / 'parts'}/", "--engine", "spark")
    assert parts.exit_code == 0, parts.output
    con = duckdb.connect()
    want = invoke(*args, "--per-user", tmp_path / "want.csv")
    assert (con.sql(f"FROM read_parquet('{tmp_path / 'parts' / '*.parquet'}') ORDER BY user_id")
            .fetchall() == con.sql(f"FROM '{tmp_path / 'want.csv'}'").fetchall())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_compare_by_item_popularity_on_spark_as_the_default_engine(spark, runs, tmp_path):
    """compare --by item-popularity on Spark: each run's groups scored on the workers (eval's
    pass, which sends back their per-user rows), the users paired within each group: the
    default engine's rows (means, differences, intervals, t-test p-values to 1e-12, exposure@K,
    novelty in (all) only, a group too small to test, the correction) and per-user table."""
    users = sorted(pq.read_table(runs[3].split("=", 1)[1])["user_id"].to_pylist())
    train = tmp_path / "train.csv"  # doc-0 played by most users, doc-6 and up by none (cold)
    train.write_text("user_id,item_id\n" + "".join(
        f"{u},doc-{j}\n" for n, u in enumerate(users) if n % 4 for j in range(n % 7)))
    args = runs[:6] + ["-k", "3,10", "-m", "ndcg,recall,P,novelty", "--train", train, "--by",
                       "item-popularity", "--groups", "3", "--min-users", "25", "--format",
                       "json"]
    want = invoke(*args, "--per-user", tmp_path / "want.csv")
    before = persisted(spark)
    got = invoke(*args, "--per-user", tmp_path / "got.csv", "--engine", "spark")
    assert persisted(spark) == before  # each run's rows and its groups' rows freed
    assert want.exit_code == 0 and got.exit_code == 0, got.output
    want_rows = json.loads(want.stdout)
    assert_same_rows(json.loads(got.stdout), want_rows)
    assert got.stderr == want.stderr
    assert (tmp_path / "got.csv").read_text() == (tmp_path / "want.csv").read_text()
    groups = {r["segment"] for r in want_rows}
    assert groups == {"(all)", "1-18", "19-36", "37+", "cold"}
    assert {r["segment"] for r in want_rows if r["metric"] == "novelty"} == {"(all)"}
    assert any(r["p_value"] and r["segment"] == "cold" for r in want_rows)
    assert any(r["note"] and r["note"].startswith("fewer than 25") for r in want_rows)
    assert any(r["metric"] == "exposure" and r["segment"] == "cold" and r["diff"]
               for r in want_rows)


def test_compare_by_item_popularity_on_spark_prints_the_default_engines_table(spark):
    """The command of docs/cohorts.md on Spark, with the exact randomization test (drawn per
    group on the workers): the default engine's table, notes and warnings, word for word."""
    examples = ROOT / "examples"
    args = ["compare", examples / "relevance.csv", "--run", f"old={examples / 'recs.parquet'}",
            "--run", f"new={examples / 'recs_new.parquet'}", "-k", "10", "-m", "ndcg,recall",
            "--train", examples / "history.csv", "--by", "item-popularity", "--groups", "2",
            "--min-users", "2", "--test", "randomization"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
    assert "randomization p-value exact" in want.output and "\n3+       new" in want.output


def test_sorted_sample_ranks_are_duckdbs():
    """compare --plot on Spark picks the values of the ranks DuckDB's quantile_disc takes."""
    from ndcg_duck.spark.extras import sorted_sample_ranks

    con = duckdb.connect()
    ndcg_duck.register(con)
    for n in [1, 2, 3, 7, 100, 499, 500, 501, 1234, 99991]:
        for points in (2, 3, 500):
            (want,), = con.sql(f"SELECT ndcg_sorted_sample(i, {points}) FROM range({n}) t(i)"
                               ).fetchall()
            assert sorted_sample_ranks(n, points) == want, (n, points)


def test_exact_variance_from_exact_sums():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.random(1000), [1e8 + 0.1, 1e-3, -7.25]])
    mean = sum(Fraction(float(x)) for x in values) / len(values)
    want = float(sum((Fraction(float(x)) - mean) ** 2 for x in values) / (len(values) - 1))
    total, squares = engine.exact_sum(values), exact.exact_square_sum(values)
    assert exact.variance_of(total, squares, len(values)) == want
    assert exact.variance_of(total, squares, 1) is None


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


# A Parquet file of each type: (role, the column's values, the message of both engines or, for
# a value, NDCG as plain Python computes it). The recommendations rank items 1, 2, 3 for u1; the
# judgments give item 1 relevance 0 and item 2 relevance 1: DCG 1/log2(3), ideal 1.
TYPED_FILES = {
    "item boolean": ("recs", {"item_id": [True, False, True]},
                     "recommendations file {recs}: column 'item_id' is BOOLEAN, not an id: ids "
                     "must be integers or text; convert it"),
    "items of structs": ("recs", {"items": [[{"id": 1}, {"id": 2}]]},
                         "recommendations file {recs}: column 'items' is a list of STRUCT(id "
                         "BIGINT), not of item ids: ids must be integers or text; convert it"),
    "relevance text": ("rels", {"relevance": ["0", "1"]},
                       "relevance file {rels}: column 'relevance' is VARCHAR, not a number; "
                       "convert it, or name another column"),
    "relevance boolean": ("rels", {"relevance": [False, True]}, 1 / math.log2(3)),
    "rank date": ("recs", {"rank": pa.array([0, 1, 2], pa.date32())},
                  "recommendations file {recs}: column 'rank' is DATE, not a number; convert "
                  "it, or name another column"),
    "user timestamp with a time zone": (
        "recs", {"user_id": pa.array([0, 0, 0], pa.timestamp("us", tz="UTC"))},
        "recommendations file {recs}: column 'user_id' is TIMESTAMP WITH TIME ZONE, not an id: "
        "ids must be integers or text; convert it"),
}


@pytest.mark.parametrize("case", list(TYPED_FILES))
def test_cli_reads_each_type_as_the_default_engine(spark, tmp_path, case):
    """A file with a column of each type: the default engine's message and exit code, or its
    numbers (README, Errors: types)."""
    role, column, expected = TYPED_FILES[case]
    recs = {"user_id": ["u1"] * 3, "item_id": [1, 2, 3], "rank": [1, 2, 3]}
    rels = {"user_id": ["u1"] * 2, "item_id": [1, 2], "relevance": [0, 1]}
    if "items" in column:  # the nested layout
        recs = {"user_id": ["u1"]}
    table = recs if role == "recs" else rels
    table.update({name: (values if name == "items" else values[:len(table["user_id"])])
                  for name, values in column.items()})
    paths = {name: tmp_path / f"{name}.parquet" for name in ("recs", "rels")}
    for name, data in (("recs", recs), ("rels", rels)):
        pq.write_table(pa.table(data), paths[name])
    args = ["eval", paths["recs"], paths["rels"], "--format", "json"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    if isinstance(expected, str):
        assert (want.exit_code, want.stderr) == (1, f"Error: {expected.format(**paths)}\n")
    else:
        assert want.exit_code == 0 and json.loads(want.stdout)["ndcg@10"] == \
            pytest.approx(expected, rel=1e-12)
    assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr)


def watch_the_progress_bar(monkeypatch) -> list:
    """From now on, every DuckDB connection opened has the progress bar on at first (DuckDB's
    default outside pytest) and notes, for each statement but SET, whether the bar is on."""
    connect, bar = duckdb.connect, []

    class Watched:
        def __init__(self, con):
            self._con = con

        def _check(self, sql):
            if not sql.lstrip().upper().startswith("SET"):
                bar.append(self._con.sql("SELECT current_setting('enable_progress_bar')"
                                         ).fetchall()[0][0])

        def execute(self, sql, *args, **kwargs):
            self._check(sql)
            return self._con.execute(sql, *args, **kwargs)

        def sql(self, sql, *args, **kwargs):
            self._check(sql)
            return self._con.sql(sql, *args, **kwargs)

        def __getattr__(self, name):
            return getattr(self._con, name)

    def opened(*args, **kwargs):
        con = connect(*args, **kwargs)
        con.execute("SET enable_progress_bar = true")
        return Watched(con)

    monkeypatch.setattr(duckdb, "connect", opened)
    return bar


@pytest.mark.parametrize("fmt", ["table", "json", "trec"])
def test_cli_per_user_to_stdout(spark, fmt, monkeypatch):
    """--per-user -: the per-user table on stdout (CSV, or a JSON array with --format json) and
    the summary on stderr (with --format trec, trec_eval -q's lines and the `all` ones, all on
    stdout), as the default engine gives them. DuckDB prints its progress bar to
    stdout (a terminal or not) for a query over two seconds: every statement the driver's
    DuckDB runs (the plan, the per-user copy) runs with the bar off."""
    args = ["eval", ROOT / "examples/recs_long.csv", ROOT / "examples/relevance.csv",
            "-k", "2,all", "--per-user", "-", "--format", fmt]
    want = invoke(*args)
    bar = watch_the_progress_bar(monkeypatch)
    got = invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and want.stdout.count("\n") > 3
    assert got.exit_code == 0, got.stderr
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
    assert bar and not any(bar), bar


@pytest.mark.parametrize("args, message", [
    (["--spark-conf", "spark.executor.memory"], "--spark-conf 'spark.executor.memory' is not "
                                                "KEY=VALUE"),
    (["--per-user", "out.xlsx"], "cannot tell the format of output file out.xlsx"),
])
def test_cli_usage_errors(args, message):
    result = invoke("eval", ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv",
                    "--engine", "spark", *args)
    assert result.exit_code == 2 and message in result.output


def test_cli_refusals_and_warnings_as_the_default_engine(spark, tmp_path):
    """The same messages, warnings and exit codes (2 usage, 1 data) as the default engine."""
    recs, rels = ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv"
    numbers = tmp_path / "recs.csv"  # user ids as numbers here, as text in the judgments
    numbers.write_text("user_id,item_id,rank\n1,a,1\n1,b,2\n2,b,1\n3,c,1\n")
    text_ids = tmp_path / "rels.json"
    text_ids.write_text('[{"user_id": "1", "item_id": "a", "relevance": 1},'
                        ' {"user_id": "2", "item_id": "a", "relevance": 2}]')
    nan = tmp_path / "nan.csv"  # Spark's CSV reader takes NaN but not nan as a number
    nan.write_text("user_id,item_id,relevance\n1,a,1\n1,b,nan\n")
    cases = [
        (recs, rels, "--user-col", "nope"),
        (numbers, nan),
        (recs, rels, "--relevance-col", "rel"),
        (rels, rels),
        (recs, rels, "--items-col", "foo"),
        (numbers, text_ids),
        (recs, rels, "--gain-map", "1=2,7=3,9=1", "--format", "json"),
    ]
    for case in cases:
        want, got = invoke("eval", *case), invoke("eval", *case, "--engine", "spark")
        assert (got.exit_code, got.output) == (want.exit_code, want.output), case
        assert "compared as text" in got.output or case != cases[5]
    assert "levels 7, 9, which never occur" in got.output
    assert invoke("eval", numbers, nan).output == (f"Error: relevance file {nan}: user 1, item b "
                                                   f"has relevance nan: give a finite number\n")


def test_warnings_in_python_as_the_default_engine(spark):
    recs = table(user_id=["u1", "u2"], items=[["a", "b"], ["c"]])
    rels = table(user_id=["u1", "u2"], item_id=["a", "c"], relevance=[1.0, 2.0])
    with pytest.warns(ndcg_duck.NdcgWarning) as want:
        ndcg_duck.evaluate(recs, rels, gain_map={1: 1, 2: 3, 5: 9})
    with pytest.warns(ndcg_duck.NdcgWarning) as got:
        engine.evaluate(spark, spark.createDataFrame(recs), spark.createDataFrame(rels),
                        gain_map={1: 1, 2: 3, 5: 9}, recs_what="recommendations (Table)",
                        rels_what="relevance (Table)", per_user=False)
    assert [str(w.message) for w in got if w.category is ndcg_duck.NdcgWarning] == [
        str(w.message) for w in want]


@pytest.mark.parametrize("command", [
    ["eval", ROOT / "examples/recs.parquet"],
    ["compare", "--run", f"a={ROOT / 'examples/recs.parquet'}",
     "--run", f"b={ROOT / 'examples/recs_new.parquet'}"]])
def test_cli_keeps_the_spark_log_its_message_names(monkeypatch, command):
    """eval and compare follow one log rule: a log that the error message names is kept
    (compare once deleted it); Spark's start fails here without starting Spark."""

    named = []

    def fails(master, conf, show_progress, log):
        named.append(log.name)
        raise ndcg_duck.InputError(f"could not start Spark at {master} (its log: {log.name}): "
                                   f"no Java")

    monkeypatch.setattr(launch, "session", fails)
    if command[0] == "compare":
        command = [command[0], ROOT / "examples/relevance.csv", *command[1:]]
    else:
        command = [*command, ROOT / "examples/relevance.csv"]
    try:
        result = invoke(*command, "--engine", "spark")
        assert result.exit_code == 1
        assert result.output == (f"Error: could not start Spark at local[*] (its log: "
                                 f"{named[0]}): no Java\n")
        assert Path(named[0]).exists()
    finally:
        for name in named:
            Path(name).unlink(missing_ok=True)
    assert launch.log_rule("Spark failed: X", "f.log") == ("Spark failed: X (Spark's log: f.log)",
                                                            True)
    assert launch.log_rule("relevance file r.csv: bad", "f.log") == (
        "relevance file r.csv: bad", False)


def test_compare_on_spark_checks_its_runs_before_spark_starts(monkeypatch):
    """compare's checks of a call are one function for both engines, made before any input is
    read: a --baseline that is not a run stops before Spark starts."""

    def fails(*args):
        raise AssertionError("Spark started")

    monkeypatch.setattr(launch, "session", fails)
    result = invoke("compare", ROOT / "examples/relevance.csv", "--run",
                    f"a={ROOT / 'examples/recs.parquet'}", "--run",
                    f"b={ROOT / 'examples/recs_new.parquet'}", "--baseline", "c",
                    "--engine", "spark")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == "Error: --baseline 'c' is not one of the runs: a, b"


def test_cli_without_pyspark_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    before = set(Path(tempfile.gettempdir()).glob("ndcg-duck-spark-*.log"))
    result = invoke("eval", ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv",
                    "--engine", "spark")
    assert result.exit_code == 1
    assert result.output == f"Error: {launch.INSTALL}\n"
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


@needs_java
def test_an_unactivated_venv_runs_its_own_python_on_the_workers(tmp_path):
    """/path/to/venv/bin/ndcg-duck with PATH not holding the venv (pipx, cron, Airflow): the
    local workers run ndcg-duck's interpreter; a worker Python the user chose that lacks duckdb
    is one line saying how to ship the environment."""
    script = Path(sys.executable).parent / "ndcg-duck"
    if not script.exists():
        pytest.skip(f"no ndcg-duck script next to {sys.executable}")
    other = shutil.which("python3", path="/usr/bin:/bin")
    env = {"HOME": os.environ.get("HOME", str(tmp_path)), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}  # the worktree's ndcg_duck, whatever the venv installed
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    args = [str(script), "eval", str(ROOT / "examples/recs.parquet"),
            str(ROOT / "examples/relevance.csv"), "--engine", "spark", "--spark-master",
            "local[1]", "--format", "json"]
    want = subprocess.run(args[:4] + ["--format", "json"], capture_output=True, text=True,
                          env=env, timeout=60)
    got = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert (got.returncode, got.stdout, got.stderr) == (0, want.stdout, "")
    if other is None or subprocess.run([other, "-c", "import duckdb"],
                                       capture_output=True).returncode == 0:
        return  # no Python without duckdb to play a cluster's workers
    lacking = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300,
                             env={**env, "PYSPARK_PYTHON": other})
    assert lacking.returncode == 1 and lacking.stdout == ""
    assert lacking.stderr == f"Error: {refusals.SHIP.format(module='duckdb')}\n"


# --- beyond accuracy: the default engine's values, warnings and messages -----------------------

BEYOND = "ndcg,coverage,gini,entropy,novelty,popularity,tail,ild"


def test_beyond_accuracy_matches_the_default_engine(spark):
    """Every beyond-accuracy metric, per user and per run, with judged_only and max_depth
    cutting the lists, against the default engine on random data: a train file that lacks some
    recommended items (pop 0), a catalogue (items) wider than what is shown, embeddings."""
    rankings, judgments = dataset(21, users=120)
    scores = scores_of(rankings, 21, ties=False)
    rng = random.Random(21)
    # train users of the run among others: items seen in train (the warning, --exclude-seen),
    # and the per-item view with train popularity, every count added up over the buckets
    train = [(f"{'ut'[n % 2]}{rng.randrange(40)}", f"doc-{rng.randrange(12)}")
             for n in range(150)]
    train = pa.table({"user_id": [u for u, _ in train], "item_id": [i for _, i in train]})
    items = pa.table({"item_id": [f"doc-{n}" for n in range(18)],
                      "embedding": [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(18)]})
    options = dict(k=[3, "all"], metrics=BEYOND, judged_only=True, max_depth=6, train=train,
                   items=items, head_share=0.3, exclude_seen=True, per_item=True)
    recs, rels = recs_table(rankings, "scores", scores), rels_table(judgments)
    want, summary, rows = both_engines(spark, recs, rels, **options)
    assert summary["users"] > 50 and summary["users_without_ild@3"] > 0
    assert 0 < summary["coverage@3"] < 1 and summary["users_without_novelty@3"] > 0
    assert_same(want, summary, rows)


def test_beyond_peer_options_match_the_default_engine(spark):
    """--beyond-as and every option it sets (docs/beyond-peers.md), each away from its default,
    with coverage_count and personalization, per user and per run: the default engine's values
    on random data (train lacks some recommended items; one-item lists for ild_short)."""
    rankings, judgments = dataset(22, users=60)
    rng = random.Random(22)
    train = [(f"t{rng.randrange(30)}", f"doc-{rng.randrange(12)}") for _ in range(120)]
    train = pa.table({"user_id": [u for u, _ in train], "item_id": [i for _, i in train]})
    items = pa.table({"item_id": [f"doc-{n}" for n in range(18)],
                      "embedding": [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(18)]})
    options = dict(k=[1, 3], metrics=BEYOND + ",coverage_count,personalization", train=train,
                   items=items, beyond_as="recbole", head_share=0.5, popularity_by="users",
                   popularity_unseen="skip", tail_rule="short_head", novelty_by="interactions",
                   novelty_smoothing="none", novelty_unseen="one",
                   catalogue_size="items_plus_one", gini_items="shown",
                   gini_divisor="n_minus_1", gini_orientation="equality", entropy_base="e",
                   entropy_divisor="shown", ild_divisor="items", ild_short="zero")
    recs, rels = recs_table(rankings, "ranks"), rels_table(judgments)
    want, summary, rows = both_engines(spark, recs, rels, **options)
    assert 0 < summary["personalization@3"] < 1 and summary["coverage_count@3"] > 3
    assert_same(want, summary, rows)


def test_cli_beyond_accuracy_as_the_default_engine(spark, tmp_path):
    """The README's worked example (examples/beyond) on Spark: the same summary, per-user file,
    warning (an item outside the catalogue), per-user and per-run metrics per segment; a
    missing --train is the default engine's usage error (exit 2), and a recommended item
    without an embedding the default engine's data error (exit 1), naming the file."""
    ex = ROOT / "examples/beyond"
    segments = tmp_path / "segments.csv"
    segments.write_text("user_id,group\nu1,x\nu2,y\nu3,x\nu9,z\n")
    args = [ex / "recs.json", ex / "rels.csv", "--train", ex / "train.csv", "--items",
            ex / "items.json", "-k", "2,3", "-m", BEYOND, "--head-share", "0.4", "--segments",
            segments, "--by", "group"]
    want = invoke("eval", *args, "--format", "json", "--per-user", tmp_path / "want.csv")
    got = invoke("eval", *args, "--format", "json", "--per-user", tmp_path / "got.csv",
                 "--engine", "spark")
    assert want.exit_code == 0 and "not in the catalogue" in want.stderr
    assert '"gini@3": 0.' in want.stdout.split('"segments"')[1]  # per run, per segment
    assert (got.exit_code, got.stdout, got.stderr) == (0, want.stdout, want.stderr)
    assert (tmp_path / "got.csv").read_text() == (tmp_path / "want.csv").read_text()
    lacking = tmp_path / "items.json"  # b and d have no embedding: u1's and u2's lists need
    lacking.write_text((ex / "items.json").read_text().replace(', "embedding": [0.0, 1.0]', "")
                       .replace('"u"], "embedding": [1.0, 0.0]', '"u"]'))  # them: 2 items
    for case in ([ex / "recs.json", ex / "rels.csv", "-m", "novelty", "--items", lacking],
                 [ex / "recs.json", ex / "rels.csv", "-m", "ild", "--items", lacking]):
        want, got = invoke("eval", *case), invoke("eval", *case, "--engine", "spark")
        assert want.exit_code in (1, 2) and want.output.startswith("Usage") == \
            (want.exit_code == 2)
        assert (got.exit_code, got.output) == (want.exit_code, want.output), case
    assert "2 recommended item(s) have no embedding for ild, e.g. item b" in got.output
    # compare: per-user ones paired, per-run ones per segment (no interval under --test
    # bootstrap): the default engine's, exactly
    b = tmp_path / "b.json"
    b.write_text('[{"user_id": "u1", "items": ["c", "b", "a"]}, {"user_id": "u2", '
                 '"items": ["e", "d"]}, {"user_id": "u3", "items": ["b"]}]')
    args = ["compare", ex / "rels.csv", "--run", f"a={ex / 'recs.json'}", "--run", f"b={b}",
            *args[2:], "--min-users", "1", "--test", "bootstrap", "--n-resamples", "50",
            "--format", "csv"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and (got.exit_code, got.stderr) == (0, want.stderr)
    want_rows, got_rows = (list(csv.DictReader(io.StringIO(r.stdout))) for r in (want, got))
    assert len(got_rows) == len(want_rows) > 90
    for got_row, want_row in zip(got_rows, want_rows):
        if want_row["metric"] in ("coverage", "gini", "entropy"):
            assert got_row == want_row
            continue
        for name in ("metric", "cutoff", "segment", "run", "users", "mean", "diff"):
            if want_row[name] and name in ("mean", "diff"):
                assert float(got_row[name]) == pytest.approx(float(want_row[name]), rel=1e-12,
                                                             abs=1e-15), (name, want_row)
            else:
                assert got_row[name] == want_row[name], (name, want_row)


# --- the Spark examples of the docs run as written -----------------------------------------------

def spark_examples():
    """{sh spark command: the text spark block after it} over every page (README.md, docs/*.md):
    each command once."""
    from test_docs_examples import fenced, page, pages

    found = {}
    for name in pages():
        seen = fenced(page(name))
        for (info, body), (next_info, printed) in zip(seen, seen[1:]):
            if info == "sh spark" and next_info == "text spark":
                assert found.setdefault(body, printed) == printed, (name, body)
    return found


def test_readme_spark_command_prints_what_the_readme_shows(spark):
    shown = spark_examples()
    assert len(shown) == 1, shown  # the README's and docs/spark.md's, one command
    for command, printed in shown.items():
        args = shlex.split(command.split("ndcg-duck ", 1)[1])
        result = invoke(*args)
        assert result.exit_code == 0 and result.output == printed


def test_readme_spark_python_example(spark, monkeypatch, capsys):
    from test_docs_examples import blocks

    monkeypatch.chdir(ROOT)
    (block,) = blocks("python spark")
    names = {}
    before = persisted(spark)
    exec(compile(block, "docs/spark.md", "exec"), names)
    assert persisted(spark) == before  # the example's result.unpersist() freed its rows
    want = ndcg_duck.evaluate("examples/recs.parquet", "examples/relevance.csv", k=[5, 10])
    assert names["summary"] == pytest.approx(want.summary)
    assert "ndcg@10" in capsys.readouterr().out  # show() printed the per-user rows


def persisted(spark) -> int:
    """How many RDDs the session keeps persisted."""
    return spark.sparkContext._jsc.getPersistentRDDs().size()


def test_the_core_install_stays_duckdb_pyarrow_click():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if "spark" in d]
    assert project["optional-dependencies"]["spark"] == ["pyspark[sql]>=4.0"]


def test_compare_segments_rule_and_corners_on_spark_as_the_default_engine(spark, tmp_path):
    """The segments rule (NULL, empty, blank and absent: '(unknown)'; a name with a comma,
    quotes, non-ASCII letters or a line break) in compare's CSV; the exact randomization test on
    one user; no user with recommendations in every run: the default engine's output."""
    from test_compare import hostile_files

    files = hostile_files(tmp_path)
    base = ["compare", files / "rels.csv", "--run", f"a={files / 'a.csv'}", "--run",
            f"b={files / 'b.csv'}", "-k", "10"]
    (files / "one.csv").write_text("user_id,item_id,relevance\nu2,a,1\n")
    (files / "c.csv").write_text("user_id,item_id,rank\nu4,a,1\n")
    (files / "d.csv").write_text("user_id,item_id,rank\nu1,a,1\n")  # no user c has
    for args, code in ((base + ["--segments", files / "segments.csv", "--by", "group",
                                "--min-users", "1", "--format", "csv"], 0),
                       (["compare", files / "one.csv", *base[2:], "--test", "randomization"], 0),
                       (["compare", files / "rels.csv", "--run", f"d={files / 'd.csv'}",
                         "--run", f"c={files / 'c.csv'}", "--missing", "skip"], 1)):
        want, got = invoke(*args), invoke(*args, "--engine", "spark")
        assert want.exit_code == code and got.exit_code == code, got.output
        if "csv" not in args:
            assert got.output == want.output
            continue
        rows = [list(csv.DictReader(io.StringIO(out.output, newline="")))
                for out in (got, want)]

        def typed(row):
            return {k: float(v) if v and k not in ("cutoff", "segment", "run") and
                    v[0] in "-0123456789" else v for k, v in row.items()}
        assert_same_rows(*[[typed(row) for row in found] for found in rows])
        assert {row["segment"] for row in rows[0]} == {
            "(all)", "line\nbreak", 'north, "east"', "Ünïcödé ☃", "(unknown)"}



def test_every_metric_per_user_is_a_double_on_spark_too(spark):
    """Spark's per-user rows: every metric of metrics.METRICS a DoubleType, counts integers, as
    the default engine's (tests/errors/test_types.py, whose inputs and expectations this takes)."""
    from pyspark.sql import types as T
    from test_types import every_metric_inputs, per_user_types_expected
    recs, rels, options = every_metric_inputs()
    got = engine.evaluate(spark, spark.createDataFrame(recs), spark.createDataFrame(rels),
                          buckets=2, **options)
    kinds = {field.name: ("double" if isinstance(field.dataType, T.DoubleType) else
                          "integer" if isinstance(field.dataType, T.IntegralType)
                          else field.dataType.simpleString())
             for field in got.per_user.schema.fields if field.name != "user_id"}
    got.unpersist()
    assert kinds == {**per_user_types_expected(), "dcg@2": "double", "idcg@2": "double"}


def test_cli_reads_recbole_files_and_each_files_own_columns_as_the_default_engine(spark,
                                                                                   tmp_path):
    """A RecBole .inter file and --recs-user-col, --recs-item-col, --rels-user-col,
    --rels-item-col on Spark: the hand-worked value of tests/doors/test_cli.py, and a named
    column that does not exist is the default engine's message."""
    from test_cli import RECBOLE_INTER, RECBOLE_NDCG
    (tmp_path / "rels.inter").write_text(RECBOLE_INTER.replace("user_id:", "person:")
                                         .replace("item_id:", "thing:"))
    (tmp_path / "recs.csv").write_text("uid,iid,rank\n1,10,1\n1,12,2\n1,11,3\n2,14,1\n2,12,2\n")
    args = ["eval", str(tmp_path / "recs.csv"), str(tmp_path / "rels.inter"), "-k", "3",
            "--recs-user-col", "uid", "--recs-item-col", "iid", "--rels-user-col", "person",
            "--rels-item-col", "thing", "--relevance-col", "rating", "--format", "json"]
    want, got = invoke(*args), invoke(*args, "--engine", "spark")
    assert want.exit_code == 0 and (got.exit_code, got.output) == (0, want.output)
    assert json.loads(got.output)["ndcg@3"] == pytest.approx(RECBOLE_NDCG, abs=1e-12)
    bad = [a if a != "thing" else "thang" for a in args]
    want, got = invoke(*bad), invoke(*bad, "--engine", "spark")
    assert want.exit_code == 1 and (got.exit_code, got.output) == (1, want.output)
