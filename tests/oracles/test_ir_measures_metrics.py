"""judged@k and err@k against ir_measures on random runs and qrels (grades -1 to 4, tied scores,
unjudged and unretrieved documents): its judged provider for Judged@k, and gdeval.pl (the TREC Web
track's script, which ir_measures runs with perl) for ERR@k."""

import random
import shutil

import pyarrow as pa
import pytest

import ndcg_duck

ir_measures = pytest.importorskip(
    "ir_measures", reason="ir_measures is not installed (pip install ir_measures, or the test "
                          "extra): the comparison with its providers is skipped")


def random_data(seed, ties):
    """(qrels rows, run rows) of 25 queries; with ties, scores from 0 to 3 (many tied)."""
    rng = random.Random(seed)
    qrels, run = [], []
    for query in range(1, 26):
        docs = [f"d{n}" for n in range(14)]
        for doc in rng.sample(docs, rng.randint(1, 9)):
            qrels.append((str(query), doc, rng.choice([-1, 0, 0, 1, 2, 3, 4])))
        ranked = rng.sample(docs, rng.randint(1, 12))
        for position, doc in enumerate(ranked):
            run.append((str(query), doc, float(rng.randint(0, 3) if ties else -position)))
    return qrels, run


def ours(qrels, run, metrics):
    recs = pa.table({"user_id": [q for q, _, _ in run], "item_id": [d for _, d, _ in run],
                     "score": [s for _, _, s in run]})
    rels = pa.table({"user_id": [q for q, _, _ in qrels], "item_id": [d for _, d, _ in qrels],
                     "relevance": [r for _, _, r in qrels]})
    table = ndcg_duck.evaluate(recs, rels, metrics=metrics).per_user
    return {name: dict(zip(table.column("user_id").to_pylist(), table.column(name).to_pylist()))
            for name in table.column_names if name != "user_id"}


def theirs(qrels, run, measures):
    """{measure name: {query: value}} as ir_measures computes them."""
    found = {}
    for metric in ir_measures.iter_calc(measures, [ir_measures.Qrel(*row) for row in qrels],
                                        [ir_measures.ScoredDoc(*row) for row in run]):
        found.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return found


def test_judged_matches_ir_measures():
    # distinct scores: ir_measures' judged provider orders tied scores by document id ascending,
    # trec_eval (and ndcg-duck) descending (docs/metrics.md, judged@k)
    qrels, run = random_data(7, ties=False)
    got = ours(qrels, run, ["judged@1", "judged@5", "judged@10", "judged@20"])
    want = theirs(qrels, run, [ir_measures.Judged @ k for k in (1, 5, 10, 20)])
    for k in (1, 5, 10, 20):
        expected = want[f"Judged@{k}"]
        assert expected, k
        for query, value in expected.items():
            assert got[f"judged@{k}"][query] == pytest.approx(value, rel=1e-12, abs=1e-12)


@pytest.mark.skipif(shutil.which("perl") is None,
                    reason="perl is missing: ir_measures runs gdeval.pl with it for ERR")
def test_err_matches_gdeval():
    qrels, run = random_data(11, ties=True)
    got = ours(qrels, run, ["err@5", "err@20"])
    want = theirs(qrels, run, [ir_measures.ERR @ 5, ir_measures.ERR @ 20])
    for k in (5, 20):
        expected = want[f"ERR@{k}"]
        assert len(expected) > 10, k  # gdeval scores the queries with a relevant judgment
        for query, value in expected.items():
            # gdeval prints 5 decimals
            assert got[f"err@{k}"][query] == pytest.approx(value, abs=5.01e-6), (k, query)
