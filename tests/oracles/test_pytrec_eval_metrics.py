"""The metrics beside NDCG against pytrec_eval (trec_eval as a Python module) on random runs and
qrels: every per-query P_k, recall_k, map, map_cut_k, recip_rank, success_k, Rprec, num_rel and
num_rel_ret equal to 1e-9, with trec_eval's settings (--missing skip, ties by doc id descending),
with -J (--judged-only) and with -l2 (--min-relevance 2). mrr@k is recip_rank on the run cut to
its first k documents, as ir_measures computes RR@k."""

import pytest
from hypothesis import given, settings, strategies as st

import ndcg_duck
from test_pytrec_eval_ndcg import oracle, tables, trec_data

CUTOFFS = (1, 3, 5, 10)
MEASURES = {"P", "recall", "map_cut", "success"}
ALL_MEASURES = {f"{m}." + ",".join(map(str, CUTOFFS)) for m in MEASURES} | {
    "map", "recip_rank", "Rprec", "num_rel", "num_rel_ret"}
OURS = {"P": "precision", "recall": "recall", "map_cut": "map", "success": "hit_rate"}
WHOLE = {"map": "map", "recip_rank": "mrr", "Rprec": "r_precision", "num_rel": "num_rel",
         "num_rel_ret": "num_rel_ret"}


def trec_order(docs):
    """A query's docs in trec_eval's order: score descending, ties by doc id descending."""
    return sorted(docs, key=lambda doc: (docs[doc], doc), reverse=True)


def cut_runs(run, qrels, judged_only):
    """Each query's run cut to its first k documents, as queries named 'QUERY@k' (pytrec_eval
    has no recip_rank at a cutoff); with judged_only the unjudged documents go first, as -J does,
    so that the cut counts judged documents."""
    runs, judgments = {}, {}
    for query, docs in run.items():
        order = trec_order(docs)
        if judged_only:
            order = [doc for doc in order if qrels.get(query, {}).get(doc, -1) >= 0]
        for k in CUTOFFS:
            kept = order[:k]
            if query in qrels and kept:
                runs[f"{query}@{k}"] = {doc: docs[doc] for doc in kept}
                judgments[f"{query}@{k}"] = qrels[query]
    return runs, judgments


@settings(max_examples=40, deadline=None)
@given(data=trec_data(), judged_only=st.booleans(), min_relevance=st.sampled_from([None, 2]))
def test_matches_pytrec_eval(data, judged_only, min_relevance):
    run, qrels = data
    level = 1 if min_relevance is None else min_relevance
    want = oracle(qrels, ALL_MEASURES, judged_only, run, level)
    cut_run, cut_qrels = cut_runs(run, qrels, judged_only)
    want_cut = oracle(cut_qrels, {"recip_rank"}, judged_only, cut_run, level) if cut_run else {}
    recs, rels = tables(run, qrels)
    result = ndcg_duck.evaluate(recs, rels, k=CUTOFFS, missing="skip", judged_only=judged_only,
                                min_relevance=min_relevance,
                                metrics=["precision", "recall", "map", "hit_rate", "mrr", "map",
                                         "r_precision", "num_rel", "num_rel_ret",
                                         *(f"mrr@{k}" for k in CUTOFFS), *(f"map@{k}" for k in CUTOFFS)])
    got = {row["user_id"]: row for row in result.per_user.to_pylist()}
    assert sorted(got) == sorted(want)
    for query, values in want.items():
        for measure, name in WHOLE.items():
            assert got[query][name] == pytest.approx(values[measure], abs=1e-9), name
        for measure in MEASURES:
            for k in CUTOFFS:
                assert got[query][f"{OURS[measure]}@{k}"] == pytest.approx(
                    values[f"{measure}_{k}"], abs=1e-9), f"{measure}_{k}"
        for k in CUTOFFS:
            expected = want_cut.get(f"{query}@{k}", {"recip_rank": 0.0})["recip_rank"]
            assert got[query][f"mrr@{k}"] == pytest.approx(expected, abs=1e-9), f"mrr@{k}"


# trec_eval's infAP, binG and utility read relevance as the counting measures (-l); its Rndcg,
# ndcg_rel and G read the levels as gains, as ndcg does (tested at -l 1, where R is the same)
LEVELLED = {"infAP": "infap", "binG": "bing", "utility": "utility"}
GAINED = {"Rndcg": "rndcg", "ndcg_rel": "ndcg_rel", "G": "g"}


@settings(max_examples=30, deadline=None)
@given(data=trec_data(), judged_only=st.booleans(), min_relevance=st.sampled_from([None, 2]))
def test_trec_eval_s_other_measures_match_pytrec_eval(data, judged_only, min_relevance):
    run, qrels = data
    level = 1 if min_relevance is None else min_relevance
    measures = set(LEVELLED) | (set(GAINED) if min_relevance is None else set())
    want = oracle(qrels, measures, judged_only, run, level)
    recs, rels = tables(run, qrels)
    ours = {LEVELLED[m] if m in LEVELLED else GAINED[m]: m for m in measures}
    result = ndcg_duck.evaluate(recs, rels, missing="skip", judged_only=judged_only,
                                min_relevance=min_relevance, metrics=list(ours))
    got = {row["user_id"]: row for row in result.per_user.to_pylist()}
    assert sorted(got) == sorted(want)
    for query, values in want.items():
        for name, measure in ours.items():
            assert got[query][name] == pytest.approx(values[measure], abs=1e-9), (query, name)
# trec_eval's gm_map and gm_bpref (per query its ln(max(value, 0.00001)), as ours per user) and
# Rprec_mult at its default multiples: pytrec_eval's names -> ours. (Not iprec_at_recall:
# pytrec_eval-terrier gives what trec_eval 9's rule gives, the rank (long) (x R + 0.9), where
# trec_eval 10 rounds x R: R 2 and one relevant item ranked first give iprec_at_recall_0.60 0
# there, 1 in trec_eval 10; test_trec_eval_metrics checks it against trec_eval 10's outputs.)
FRACTIONAL = {"gm_map": "gm_map", "gm_bpref": "gm_bpref",
              **{f"Rprec_mult_{fifths / 5:.2f}": f"rprec_mult_{fifths / 5:.2f}"
                 for fifths in range(1, 11)}}


@settings(max_examples=25, deadline=None)
@given(data=trec_data(), judged_only=st.booleans(), min_relevance=st.sampled_from([None, 2]))
def test_geometric_means_and_rprec_mult_match_pytrec_eval(data, judged_only, min_relevance):
    run, qrels = data
    level = 1 if min_relevance is None else min_relevance
    want = oracle(qrels, {"gm_map", "gm_bpref", "Rprec_mult"}, judged_only, run, level)
    recs, rels = tables(run, qrels)
    result = ndcg_duck.evaluate(recs, rels, missing="skip", judged_only=judged_only,
                                min_relevance=min_relevance, metrics="gm_map,gm_bpref,rprec_mult")
    got = {row["user_id"]: row for row in result.per_user.to_pylist()}
    assert sorted(got) == sorted(want)
    for query, values in want.items():
        for measure, name in FRACTIONAL.items():
            assert got[query][name] == pytest.approx(values[measure], abs=1e-9), name
