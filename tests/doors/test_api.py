"""Door 3: the Python API, in the caller's own DuckDB connection and on every input kind."""

import re

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import ndcg_duck
import reference
from conftest import ROOT, row

RANKINGS = {"u1": ["a", "b", "c"], "u2": ["c", "a"], "u3": ["z"]}
JUDGMENTS = {"u1": {"b": 2, "c": 1, "d": 3}, "u2": {"a": 1}, "u4": {"a": 1}}


def recs_arrow():
    return pa.table({"user_id": list(RANKINGS), "items": list(RANKINGS.values())})


def rels_arrow():
    rows = [(u, i, r) for u, judged in JUDGMENTS.items() for i, r in judged.items()]
    return pa.table({"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                     "relevance": [r[2] for r in rows]})


def expected_mean(k):
    return reference.mean_ndcg(reference.evaluate(RANKINGS, JUDGMENTS, k))


def test_register_into_the_callers_connection():
    con = duckdb.connect()
    con.register("my_recs", recs_arrow())
    con.register("my_rels", rels_arrow())
    ndcg_duck.register(con)
    ndcg, users = row(con, "SELECT ndcg, users FROM ndcg_mean('my_recs', 'my_rels', k := 2)")
    assert ndcg == pytest.approx(expected_mean(2), rel=1e-12)
    assert users == 3
    # the caller's other tables and work are untouched
    assert row(con, "SELECT count(*) FROM my_recs") == (3,)


def test_macros_compose_with_the_callers_own_sql():
    con = duckdb.connect()
    ndcg_duck.register(con)
    con.register("my_rels", rels_arrow())
    con.register("my_recs", recs_arrow())
    worst, = row(con, "SELECT arg_min(user_id, ndcg) FROM ndcg_per_user('my_recs', 'my_rels') "
                      "WHERE user_id <> 'u4'")
    # u1: b (2) at rank 2, c (1) at rank 3 against the ideal 3, 2, 1 -> 1.7619 / 4.7619 = 0.37
    # u2: a (1) at rank 2 against the ideal 1 -> 0.6309
    assert worst == "u1"


@pytest.mark.parametrize("kind", ["arrow", "pandas", "polars", "relation", "path"])
def test_evaluate_accepts_every_input_kind(kind, tmp_path):
    recs, rels = recs_arrow(), rels_arrow()
    if kind == "pandas":
        recs, rels = recs.to_pandas(), rels.to_pandas()
    elif kind == "polars":
        recs, rels = pl.from_arrow(recs), pl.from_arrow(rels)
    elif kind == "relation":
        other = duckdb.connect()
        recs, rels = other.from_arrow(recs), other.from_arrow(rels)
    elif kind == "path":
        import pyarrow.parquet as pq
        pq.write_table(recs, tmp_path / "recs.parquet")
        rels.to_pandas().to_csv(tmp_path / "rels.csv", index=False)
        recs, rels = tmp_path / "recs.parquet", str(tmp_path / "rels.csv")
    result = ndcg_duck.evaluate(recs, rels, k=[1, 3])
    assert isinstance(result, ndcg_duck.Evaluation)
    assert result.summary["ndcg@1"] == pytest.approx(expected_mean(1), rel=1e-12)
    assert result.summary["ndcg@3"] == pytest.approx(expected_mean(3), rel=1e-12)
    assert isinstance(result.per_user, pa.Table)
    assert result.per_user.column("user_id").to_pylist() == ["u1", "u2", "u4"]


def test_long_layout_with_scores_from_pandas():
    recs = pd.DataFrame({"user_id": ["u1", "u1", "u1"], "item_id": ["a", "b", "c"],
                         "score": [0.1, 0.9, 0.5]})
    rels = pd.DataFrame({"user_id": ["u1"], "item_id": ["c"], "relevance": [1]})
    summary, per_user = ndcg_duck.evaluate(recs, rels, k="all")
    assert summary["ndcg@all"] == pytest.approx(1 / 1.5849625007, rel=1e-9)  # c is second


def test_relevance_given_as_lists_is_binary():
    rels = pa.table({"user_id": ["u1", "u2"], "items": [["b", "d"], ["a"]]})
    result = ndcg_duck.evaluate(recs_arrow(), rels, k=10)
    binary = {"u1": {"b": 1, "d": 1}, "u2": {"a": 1}}
    want = reference.mean_ndcg(reference.evaluate(RANKINGS, binary, 10))
    assert result.summary["ndcg@10"] == pytest.approx(want, rel=1e-12)


def test_ids_typed_differently_are_compared_as_text():
    recs = pa.table({"user_id": [1, 2], "items": [[10, 20], [30]]})
    rels = pa.table({"user_id": ["1", "2"], "item_id": ["20", "30"], "relevance": [1, 1]})
    with pytest.warns(ndcg_duck.NdcgWarning, match="compared as text"):
        result = ndcg_duck.evaluate(recs, rels, k=10)
    assert result.summary["ndcg@10"] == pytest.approx((1 / 1.5849625007 + 1) / 2, rel=1e-9)


def test_per_user_can_be_skipped():
    result = ndcg_duck.evaluate(recs_arrow(), rels_arrow(), per_user=False)
    assert result.per_user is None
    assert result.summary["ndcg@10"] == pytest.approx(expected_mean(10), rel=1e-12)


def test_bad_option_raises_the_documented_error():
    with pytest.raises(ndcg_duck.InputError, match="gain 'log' is not one of"):
        ndcg_duck.evaluate(recs_arrow(), rels_arrow(), gain="log")


def test_a_spark_table_name_says_where_it_is_read():
    with pytest.raises(ndcg_duck.InputError) as error:
        ndcg_duck.evaluate("table:db.recs", rels_arrow())
    assert str(error.value) == (
        "recommendations table:db.recs: table:NAME names a table of Spark's catalog, which only "
        "the Spark engine reads: pass spark.table('db.recs') to ndcg_duck.spark.evaluate")
    assert error.value.usage


def test_script_is_the_files_under_sql():
    script = ndcg_duck.script()
    for path in sorted((ROOT / "sql").glob("ndcg_*.sql")):
        assert path.read_text(encoding="utf-8").strip() in script


def test_trec_files_from_python():
    # trec_eval's test run and qrels; query 301's ndcg_cut_10 is 0.1518 in out.test.aq
    data = ROOT / "tests" / "data" / "trec_eval"
    result = ndcg_duck.evaluate(data / "results.test", str(data / "qrels.test"), k=10,
                                recs_format="trec", rels_format="trec")
    by_query = {row["user_id"]: row["ndcg@10"] for row in result.per_user.to_pylist()}
    assert sorted(by_query) == ["301", "302", "303"]
    assert by_query["301"] == pytest.approx(0.1518, abs=5e-5)


def test_trec_run_against_csv_judgments_with_own_column_names(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.9 t\n", encoding="utf-8")
    rels = tmp_path / "rels.csv"
    rels.write_text("qid,doc,grade\n1,a,1\n", encoding="utf-8")
    with pytest.warns(ndcg_duck.NdcgWarning, match="user ids are VARCHAR .* and BIGINT"):
        result = ndcg_duck.evaluate(run, rels, k="all", recs_format="trec", user_col="qid",
                                    item_col="doc", relevance_col="grade")
    # b scores higher, so a is second: 1 / log2(3)
    assert result.summary["ndcg@all"] == pytest.approx(0.6309298, abs=1e-6)
    assert result.per_user.column_names[0] == "qid"


@pytest.mark.parametrize("gain_map", ["1=3,2=9", {1: 3, 2: 9}, [(1, 3), (2.0, 9.0)]])
def test_gain_map_forms(gain_map):
    result = ndcg_duck.evaluate(recs_arrow(), rels_arrow(), k=3, gain_map=gain_map)
    want = reference.evaluate(RANKINGS, JUDGMENTS, 3, gain_map={1.0: 3.0, 2.0: 9.0})
    assert result.summary["ndcg@3"] == pytest.approx(reference.mean_ndcg(want), rel=1e-12)


@pytest.mark.parametrize("options, message", [
    ({"ties": "random"}, "ties 'random' is not one of: trec, average"),
    ({"judged_only": "yes"}, "judged_only 'yes' is not True or False"),
    ({"gain_map": {1: "x"}}, "gain map piece (1, 'x') is not LEVEL=GAIN"),
    ({"recs_format": "xyz"}, "recs_format 'xyz' is not one of: parquet, csv, json, trec"),
])
def test_bad_new_options_raise_the_documented_error(options, message):
    with pytest.raises(ndcg_duck.InputError, match=re.escape(message)):
        ndcg_duck.evaluate(recs_arrow(), rels_arrow(), **options)


def test_the_order_of_the_rows_does_not_change_a_single_bit():
    # fractional gains at ranks whose discounts do not add exactly: a sum taken in arrival order
    # differs in its last bits between the two orders below
    users = [f"u{n}" for n in range(300)]
    recs = pa.table({"user_id": users, "items": [[f"i{j}" for j in range(40)]] * len(users)})
    judged = [(u, f"i{j}", (n * 7 + j) % 13 / 3) for n, u in enumerate(users) for j in range(0, 40, 3)]
    forward = pa.table({name: list(column) for name, column in
                        zip(["user_id", "item_id", "relevance"], zip(*judged))})
    backward = forward.take(list(reversed(range(forward.num_rows))))
    one = ndcg_duck.evaluate(recs, forward, k=[10, None], threads=1)
    other = ndcg_duck.evaluate(recs, backward, k=[10, None], threads=1)
    assert one.per_user.sort_by("user_id").equals(other.per_user.sort_by("user_id"))
    assert one.summary == other.summary
