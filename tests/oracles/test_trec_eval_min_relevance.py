"""--min-relevance R (Python min_relevance=, SQL min_relevance :=): judgments below R are not
relevant: they gain 0 and stay out of the ideal list (trec_eval's -l, ranx's rel_lvl).

trec_eval's out.test.aql was made with -l2 on graded qrels. Its num_rel (the relevant judged
documents of each query) and num_rel_ret (those in the run) are the per-user hits' R and relevant
hits. trec_eval's own ndcg ignores -l (those lines equal out.test.aq's settings: see
tests/oracles/test_trec_eval_ndcg.py, scenario "graded"), so ndcg with a threshold is checked
against trec_eval (pytrec_eval) on the same qrels with the levels below 2 set to 0, and against a worked example."""

import math

import pyarrow as pa
import pyarrow.csv
import pytest
import pytrec_eval
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT, row
from ndcg_duck.cli import cli

DATA = ROOT / "tests" / "data" / "trec_eval"
TREC = ["--recs-format", "trec", "--rels-format", "trec"]


def trec_eval_lines(out_file, measure):
    values = {}
    for line in (DATA / out_file).read_text(encoding="utf-8").splitlines():
        name, query, value = line.split()
        if name == measure:
            values[query] = value
    return values


def test_relevant_counts_match_trec_eval_l2(con):
    # num_rel and num_rel_ret of `trec_eval -l2` from the per-user gains the metrics build on
    rows = con.sql(f"""
        WITH run AS (FROM ndcg_trec_run('{DATA / "results.test"}')),
             ranked AS (FROM ndcg_ranked_scores('run')),
             qrels AS (FROM ndcg_trec_qrels('{DATA / "qrels.rel_level"}')),
             judged AS (FROM ndcg_judgments('qrels', min_relevance := 2))
        SELECT user_id, num_relevant, len(relevant_ranks)
        FROM ndcg_user_gains('ranked', 'judged') ORDER BY user_id""").fetchall()
    num_rel = trec_eval_lines("out.test.aql", "num_rel")
    num_rel_ret = trec_eval_lines("out.test.aql", "num_rel_ret")
    assert {user: (str(r), str(ret)) for user, r, ret in rows} == {
        query: (num_rel[query], num_rel_ret[query]) for query in ("301", "302", "303")}
    assert sum(r for _, r, _ in rows) == int(num_rel["all"])


def qrels_of(path, below=None):
    """qrels as pytrec_eval reads them; levels below `below` set to 0."""
    qrels = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        query, _, doc, rel = line.split()
        rel = int(rel)
        qrels.setdefault(query, {})[doc] = 0 if below is not None and 0 < rel < below else rel
    return qrels


def run_of(path):
    run = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        query, _, doc, _, score, _ = line.split()[:6]
        run.setdefault(query, {})[doc] = float(score)
    return run


@pytest.mark.parametrize("threshold", [2, 3, 4])
def test_ndcg_with_threshold_matches_trec_eval_on_thresholded_qrels(threshold, tmp_path):
    measures = {"ndcg", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_100"}
    want = pytrec_eval.RelevanceEvaluator(
        qrels_of(DATA / "qrels.rel_level", below=threshold), measures).evaluate(
        run_of(DATA / "results.test"))
    per_user = tmp_path / "per_query.csv"
    result = CliRunner().invoke(cli, ["eval", str(DATA / "results.test"),
                                      str(DATA / "qrels.rel_level"), *TREC, "-k", "all,5,10,100",
                                      "--missing", "skip", "--min-relevance", str(threshold),
                                      "--per-user", str(per_user), "--format", "json"])
    assert result.exit_code == 0, result.output
    got = pa.csv.read_csv(per_user).to_pylist()
    assert len(got) == len(want) == 3
    for line in got:
        query = want[str(line["user_id"])]
        for ours, theirs in (("ndcg@all", "ndcg"), ("ndcg@5", "ndcg_cut_5"),
                             ("ndcg@10", "ndcg_cut_10"), ("ndcg@100", "ndcg_cut_100")):
            assert line[ours] == pytest.approx(query[theirs], abs=1e-9), (line["user_id"], ours)


def test_worked_example():
    # ranking b, a, c; judged a=3, b=1, c=2, d=2 (d not ranked); min_relevance 2:
    # b gains 0 and leaves the ideal list. DCG@3 = 3/log2(3) + 2/log2(4);
    # IDCG@3 = 3/log2(2) + 2/log2(3) + 2/log2(4)
    recs = pa.table({"user_id": ["u"], "items": [["b", "a", "c"]]})
    rels = pa.table({"user_id": ["u"] * 4, "item_id": ["a", "b", "c", "d"],
                     "relevance": [3, 1, 2, 2]})
    dcg = 3 / math.log2(3) + 2 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 2 / math.log2(4)
    summary, table = ndcg_duck.evaluate(recs, rels, k=3, min_relevance=2)
    assert summary["ndcg@3"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert table.column("idcg@3").to_pylist() == [pytest.approx(idcg, abs=1e-12)]
    # without the threshold b counts: DCG@3 = 1 + 3/log2(3) + 2/log2(4), ideal 3, 2, 2
    summary, _ = ndcg_duck.evaluate(recs, rels, k=3)
    assert summary["ndcg@3"] == pytest.approx((1 + dcg) / idcg, abs=1e-12)


def test_threshold_with_binary_gain_and_gain_map(con):
    # binary: a and c count 1 each; the gain map's level 1 is below the threshold: still 0
    con.execute("CREATE TABLE recs AS SELECT 'u' AS user_id, ['b', 'a', 'c'] AS items")
    con.execute("CREATE TABLE rels AS SELECT * FROM (VALUES ('u', 'a', 3), ('u', 'b', 1), "
                "('u', 'c', 2)) t(user_id, item_id, relevance)")
    ndcg, = row(con, "SELECT ndcg FROM ndcg_per_user('recs', 'rels', k := 3, gain := 'binary', "
                     "min_relevance := 2)")
    assert ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(4))
                                 / (1 + 1 / math.log2(3)), abs=1e-12)
    ndcg, = row(con, "SELECT ndcg FROM ndcg_per_user('recs', 'rels', k := 3, "
                     "gain_map := MAP {1: 10, 3: 3}, min_relevance := 2)")
    assert ndcg == pytest.approx((3 / math.log2(3) + 2 / math.log2(4))
                                 / (3 + 2 / math.log2(3)), abs=1e-12)


@pytest.mark.parametrize("value", ["two", float("nan"), True])
def test_bad_threshold_is_a_usage_error_in_python(value):
    recs = pa.table({"user_id": ["u"], "items": [["a"]]})
    rels = pa.table({"user_id": ["u"], "item_id": ["a"], "relevance": [1]})
    with pytest.raises(ndcg_duck.InputError, match=r"^min_relevance .* is not a number$"):
        ndcg_duck.evaluate(recs, rels, min_relevance=value)


def test_bad_threshold_is_a_usage_error_in_the_cli():
    result = CliRunner().invoke(cli, ["eval", "x.parquet", "y.csv", "--min-relevance", "two"])
    assert result.exit_code == 2
    assert "Invalid value for '--min-relevance': 'two' is not a valid float." in result.output
