"""ndcg-duck against pytrec_eval (trec_eval as a Python module) on random runs and qrels with
integer relevance: every per-query ndcg and ndcg_cut_K equal to 1e-9, with trec_eval's settings
(--missing skip, ties by doc id descending) and with -J (--judged-only)."""

import multiprocessing

import pyarrow as pa
import pytest
import pytrec_eval
from hypothesis import given, reject, settings, strategies as st

import ndcg_duck

CUTOFFS = (1, 3, 5, 10)
# doc ids whose order as text differs from their order as numbers ("9" > "10")
DOCS = [str(n) for n in (1, 2, 3, 9, 10, 11, 20, 99, 100)] + ["a", "B", "doc-7"]


@st.composite
def trec_data(draw):
    run, qrels = {}, {}
    for q in range(draw(st.integers(1, 6))):
        query = f"q{q}"
        if draw(st.integers(0, 4)):  # some queries are not in the run
            docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
            # few distinct scores, so that ties are common
            run[query] = {doc: float(draw(st.integers(0, 3))) for doc in docs}
        if draw(st.integers(0, 4)):  # some queries are not in the qrels
            # trec_eval reads -1 as "in the pool, not judged". A query with no judgment >= 0
            # can make pytrec_eval (0.5.11) never return, after other queries have been scored
            # in the same process; so each query here has one (the reference tests cover it)
            judged = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1,
                                          max_size=10).filter(lambda j: max(j.values()) >= 0))
            qrels[query] = judged
    if not qrels:
        qrels["q99"] = {"a": 1}
    if not set(run) & set(qrels):  # no common query is an error (tests/errors/test_bad_input.py)
        run[next(iter(qrels))] = {"a": 1.0}
    return run, qrels


def tables(run, qrels):
    recs = [(q, doc, score) for q, docs in run.items() for doc, score in docs.items()]
    rels = [(q, doc, rel) for q, judged in qrels.items() for doc, rel in judged.items()]
    return (pa.table({"user_id": [r[0] for r in recs], "item_id": [r[1] for r in recs],
                      "score": [r[2] for r in recs]}),
            pa.table({"user_id": [r[0] for r in rels], "item_id": [r[1] for r in rels],
                      "relevance": [r[2] for r in rels]}))


def _pytrec_eval(qrels, measures, judged_only, run, relevance_level):
    return pytrec_eval.RelevanceEvaluator(
        qrels, measures, relevance_level=relevance_level,
        judged_docs_only_flag=judged_only).evaluate(run)


def oracle(qrels, measures, judged_only, run, relevance_level=1):
    """pytrec_eval in a fresh process each time: it keeps state between calls, and after some
    sequences of inputs a later call never returns (seen with pytrec-eval-terrier 0.5.11)."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(_pytrec_eval, (qrels, measures, judged_only, run,
                                                    relevance_level))
        try:
            return pending.get(timeout=30)
        except multiprocessing.TimeoutError:
            reject()  # the oracle hung on this input: no verdict either way


@settings(max_examples=40, deadline=None)
@given(data=trec_data(), judged_only=st.booleans())
def test_matches_pytrec_eval(data, judged_only):
    run, qrels = data
    measures = {"ndcg", "ndcg_cut." + ",".join(str(k) for k in CUTOFFS)}
    want = oracle(qrels, measures, judged_only, run)
    recs, rels = tables(run, qrels)
    result = ndcg_duck.evaluate(recs, rels, k=[*CUTOFFS, "all"], missing="skip",
                                judged_only=judged_only)
    got = {row["user_id"]: row for row in result.per_user.to_pylist()}
    assert sorted(got) == sorted(want)
    for query, values in want.items():
        assert got[query]["ndcg@all"] == pytest.approx(values["ndcg"], abs=1e-9)
        for k in CUTOFFS:
            assert got[query][f"ndcg@{k}"] == pytest.approx(values[f"ndcg_cut_{k}"], abs=1e-9)
