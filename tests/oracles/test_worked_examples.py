"""Test vectors (TV1 to TV14: docs/from-other-tools.md cites them by number) and
examples, pinned to values printed by other programs: trec_eval (9.0.8 and 10.0),
pytrec_eval-terrier 0.5.11, ir_measures 0.4.3, ranx 0.3.21, scikit-learn 1.9.1 and torchmetrics
1.9.0 run on the same tiny inputs (each test holds its input and says which tool prints what), and
the worked examples of texts that teach NDCG and of the Kakao Arena Melon playlist evaluator."""

import pyarrow as pa
import pytest

import ndcg_duck
from conftest import row


def test_dcg_of_3_2_1(con):
    # 3 + 2/log2(3) + 1/2 = 4.7619 (one source text prints 4.5, an arithmetic slip)
    value, = row(con, "SELECT ndcg_list_dcg([3, 2, 1])")
    assert value == pytest.approx(4.7619, abs=5e-5)


def test_graded_list_linear_and_exponential(con):
    # relevances 2,3,3,1,2 against the ideal 3,3,2,2,1: DCG 6.5972, NDCG 0.9238 / 0.8570
    dcg, linear, exponential = row(con, "SELECT ndcg_list_dcg([2, 3, 3, 1, 2]), ndcg_list([2, 3, 3, 1, 2]), "
        "ndcg_list([2, 3, 3, 1, 2], gain := 'exponential')")
    assert dcg == pytest.approx(6.5972, abs=5e-5)
    assert linear == pytest.approx(0.9238, abs=5e-5)
    assert exponential == pytest.approx(0.8570, abs=5e-5)


def test_binary_hits_at_1_2_6_7_9(con):
    # hits at ranks 1, 2, 6, 7, 9 of 10 with 5 relevant items: DCG 2.6215, IDCG 2.9485, 0.8891
    dcg, ndcg = row(con, "SELECT ndcg_list_dcg(r), ndcg_list(r) FROM (SELECT [1, 1, 0, 0, 0, 1, 1, 0, 1, 0] AS r)")
    assert dcg == pytest.approx(2.6215, abs=5e-5)
    assert ndcg == pytest.approx(0.8891, abs=5e-5)


TRUTH = "MAP {'A': 0.1, 'B': 0.5, 'C': 0.7, 'D': 0.5, 'E': 0.1}"


def test_fractional_truth_ndcg_at_3(con):
    # ranking A, B, C: DCG 0.7654648767857287, NDCG@3 0.6048882832133625 (ideal cut at 3)
    dcg, ndcg = row(con, f"SELECT ndcg_list_dcg([0.1, 0.5, 0.7], k := 3), ndcg_items(['A', 'B', 'C'], {TRUTH}, k := 3)")
    assert dcg == pytest.approx(0.7654648767857287, rel=1e-12)
    assert ndcg == pytest.approx(0.6048882832133625, rel=1e-12)


def test_idcg_over_all_five_truth_items(con):
    idcg, = row(con, "SELECT ndcg_list_dcg([0.7, 0.5, 0.5, 0.1, 0.1], k := 'all')")
    assert idcg == pytest.approx(1.3472178133165222, rel=1e-12)


def _two_rankings():
    truth = {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}
    recs = pa.table({"user_id": [1, 2], "items": [["A", "B", "C"], ["D", "A", "C", "B", "E"]]})
    rels = pa.table({"user_id": [u for u in (1, 2) for _ in truth],
                     "item_id": list(truth) * 2,
                     "relevance": list(truth.values()) * 2})
    return recs, rels


def test_mean_with_each_ranking_cut_at_its_own_length():
    # the source text's mean NDCG 0.7356022113638424 needs the ideal cut at min(k, list length)
    recs, rels = _two_rankings()
    result = ndcg_duck.evaluate(recs, rels, k="all", idcg_cutoff="list")
    assert result.summary["ndcg@all"] == pytest.approx(0.7356022113638424, rel=1e-12)
    assert result.summary["users"] == 2


def test_same_data_with_the_default_ideal_is_lower():
    recs, rels = _two_rankings()
    result = ndcg_duck.evaluate(recs, rels, k="all")
    assert result.summary["ndcg@all"] < 0.7356022113638424


def test_melon_playlist_examples(con):
    truth = "MAP {'A': 3, 'B': 3, 'C': 2, 'D': 2, 'E': 1, 'F': 1, 'G': 0}"
    first, second = row(con, f"SELECT ndcg_items(['A', 'E', 'C', 'D', 'F'], {truth}, k := 5), "
        f"ndcg_items(['A', 'B', 'C', 'G', 'E'], {truth}, k := 5)")
    assert first == pytest.approx(0.8233, abs=5e-5)
    assert second == pytest.approx(0.8794, abs=5e-5)


@pytest.mark.parametrize("gain, expected", [("linear", 0.7967), ("exponential", 0.7098),
                                            ("binary", 1.0)])
def test_tv3_gain(gain, expected):
    recs = pa.table({"user_id": ["q1"], "items": [["b", "a"]]})
    rels = pa.table({"user_id": ["q1", "q1"], "item_id": ["a", "b"], "relevance": [3, 1]})
    assert ndcg_duck.evaluate(recs, rels, gain=gain).summary["ndcg@10"] == pytest.approx(
        expected, abs=5e-5)


def test_tv2_ideal_from_judgments_not_from_retrieved():
    recs = pa.table({"user_id": ["q1"], "items": [["a", "x"]]})
    rels = pa.table({"user_id": ["q1"] * 3, "item_id": ["a", "b", "c"], "relevance": [1, 1, 1]})
    summary = ndcg_duck.evaluate(recs, rels, k=["all", 2]).summary
    assert summary["ndcg@all"] == pytest.approx(0.4693, abs=5e-5)
    assert summary["ndcg@2"] == pytest.approx(0.6131, abs=5e-5)


def test_tv4_user_without_relevant_items_scores_zero_and_counts():
    recs = pa.table({"user_id": ["q1", "q2"], "items": [["a"], ["b"]]})
    rels = pa.table({"user_id": ["q1", "q2"], "item_id": ["a", "b"], "relevance": [0, 1]})
    summary = ndcg_duck.evaluate(recs, rels).summary
    assert summary["ndcg@10"] == pytest.approx(0.5)
    assert summary["users"] == 2


@pytest.mark.parametrize("missing, expected, users", [("skip", 0.5, 2), ("zero", 1 / 3, 3)])
def test_tv5_users_on_one_side(missing, expected, users):
    recs = pa.table({"user_id": ["q1", "q3", "q4"], "items": [["a"], ["z"], ["c"]]})
    rels = pa.table({"user_id": ["q1", "q2", "q4"], "item_id": ["a", "b", "c"],
                     "relevance": [1, 1, 0]})
    summary = ndcg_duck.evaluate(recs, rels, missing=missing).summary
    assert summary["ndcg@10"] == pytest.approx(expected, abs=5e-5)
    assert summary["users"] == users
    assert summary["users_without_recommendations"] == 1
    assert summary["users_only_in_recommendations"] == 1


def test_tv6_negative_relevance_gains_nothing():
    recs = pa.table({"user_id": ["q1"], "items": [["a", "b"]]})
    rels = pa.table({"user_id": ["q1", "q1"], "item_id": ["a", "b"], "relevance": [-1, 1]})
    assert ndcg_duck.evaluate(recs, rels).summary["ndcg@10"] == pytest.approx(0.6309, abs=5e-5)


def test_tv7_fractional_relevance_is_exact():
    recs = pa.table({"user_id": ["q1"], "items": [["a", "b"]]})
    rels = pa.table({"user_id": ["q1", "q1"], "item_id": ["a", "b"], "relevance": [1.5, 2.7]})
    assert ndcg_duck.evaluate(recs, rels).summary["ndcg@10"] == pytest.approx(0.8785, abs=5e-5)


def test_tv14_ideal_cut_at_k():
    items = [f"i{n}" for n in range(12)]
    recs = pa.table({"user_id": ["u"], "items": [items[:10]]})
    rels = pa.table({"user_id": ["u"] * 12, "item_id": items, "relevance": [1] * 12})
    summary = ndcg_duck.evaluate(recs, rels, k=[10, "all"]).summary
    assert summary["ndcg@10"] == pytest.approx(1.0)
    # with no cutoff the ideal covers all 12 relevant items
    all_ideal = sum(1 / __import__("math").log2(i + 2) for i in range(12))
    top_ten = sum(1 / __import__("math").log2(i + 2) for i in range(10))
    assert summary["ndcg@all"] == pytest.approx(top_ten / all_ideal, rel=1e-12)


def _scored(items, scores):
    return pa.table({"user_id": ["q1"] * len(items), "item_id": items, "score": scores})


def _judged(judgments):
    return pa.table({"user_id": ["q1"] * len(judgments), "item_id": list(judgments),
                     "relevance": list(judgments.values())})


@pytest.mark.parametrize("relevant, trec_eval, ranx", [("d3", 1.0, 0.5), ("d1", 0.5, 1.0)])
def test_tv1_ties(relevant, trec_eval, ranx):
    # d1, d2, d3 all score 1.0. trec_eval/pytrec_eval: ties by doc id descending (d3, d2, d1);
    # ranx gives 0.5 here: on this run its sort keeps the run's order (d1, d2, d3), which the
    # list layout gives as is (it reorders ties on larger runs: docs/from-other-tools.md)
    recs, rels = _scored(["d1", "d2", "d3"], [1.0] * 3), _judged({relevant: 1})
    assert ndcg_duck.evaluate(recs, rels, k="all").summary["ndcg@all"] == pytest.approx(
        trec_eval, abs=5e-5)
    lists = pa.table({"user_id": ["q1"], "items": [["d1", "d2", "d3"]]})
    assert ndcg_duck.evaluate(lists, rels, k="all").summary["ndcg@all"] == pytest.approx(
        ranx, abs=5e-5)


def test_tv1_ties_averaged_as_scikit_learn():
    # scikit-learn / torchmetrics: every tied item gets the mean discount of the tie, 0.7103
    recs, rels = _scored(["d1", "d2", "d3"], [1.0] * 3), _judged({"d3": 1})
    summary = ndcg_duck.evaluate(recs, rels, k="all", ties="average").summary
    assert summary["ndcg@all"] == pytest.approx(0.7103, abs=5e-5)


def test_tv2_scikit_learn_scores_only_the_items_it_is_given():
    # scikit-learn's ideal comes from the relevances of the items passed to it: 1.0
    recs = _scored(["a", "x"], [3.0, 2.0])
    assert ndcg_duck.evaluate(recs, _judged({"a": 1, "x": 0}), ties="average").summary[
        "ndcg@10"] == pytest.approx(1.0)


def test_tv4_torchmetrics_skip():
    # torchmetrics empty_target_action 'skip' (and 'pos'): 1.0 -- a user with no relevant item
    # is left out with --empty skip
    recs = pa.table({"user_id": ["q1", "q2"], "items": [["a"], ["b"]]})
    rels = pa.table({"user_id": ["q1", "q2"], "item_id": ["a", "b"], "relevance": [0, 1]})
    summary = ndcg_duck.evaluate(recs, rels, empty="skip").summary
    assert summary["ndcg@10"] == pytest.approx(1.0)
    assert summary["users"] == 1


def test_tv7_truncated_relevance_gives_trec_eval_and_ranx():
    # trec_eval and ranx truncate 1.5, 2.7 to 1, 2: 0.8597 (ndcg-duck's exact value is 0.8785)
    recs = pa.table({"user_id": ["q1"], "items": [["a", "b"]]})
    rels = pa.table({"user_id": ["q1", "q1"], "item_id": ["a", "b"], "relevance": [1, 2]})
    assert ndcg_duck.evaluate(recs, rels).summary["ndcg@10"] == pytest.approx(0.8597, abs=5e-5)


def test_tv10_gain_map_is_exact(con):
    # gains 1 -> 3.5, 2 -> 3.0 for a=1, b=2 ranked a, b: the ranking is ideal, exactly 1.0
    # (trec_eval prints 1.0354: it orders its ideal list by level, comparing gains as integers)
    con.execute("CREATE TABLE r AS SELECT 'q1' AS user_id, ['a', 'b'] AS items")
    con.execute("CREATE TABLE j AS FROM (VALUES ('q1', 'a', 1), ('q1', 'b', 2)) "
                "t(user_id, item_id, relevance)")
    ndcg, = row(con, "SELECT ndcg FROM ndcg_per_user('r', 'j', gain_map := MAP {1: 3.5, 2: 3.0})")
    assert ndcg == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("judged_only, expected", [(False, 0.5), (True, 0.6309)])
def test_tv11_judged_only(judged_only, expected):
    # qrels a=1, b=0; run u (unjudged), b, a: 0.5; trec_eval -J drops u: 0.6309
    recs = pa.table({"user_id": ["q1"], "items": [["u", "b", "a"]]})
    rels = pa.table({"user_id": ["q1", "q1"], "item_id": ["a", "b"], "relevance": [1, 0]})
    summary = ndcg_duck.evaluate(recs, rels, judged_only=judged_only).summary
    assert summary["ndcg@10"] == pytest.approx(expected, abs=5e-5)
