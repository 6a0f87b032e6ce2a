"""ndcg-duck against the plain-Python reference on random data: every gain, every layout,
every option (gain map, ties, judged-only, max depth included), several cutoffs at once,
integer and string ids, in one batch of users or several."""

import math

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import ndcg_duck
import reference

RELEVANCES = st.sampled_from([-1, 0, 0, 1, 1, 2, 3, 0.5, 2.7])


@st.composite
def datasets(draw):
    string_ids = draw(st.booleans())
    item = (lambda n: f"doc-{n}") if string_ids else (lambda n: n)
    user = (lambda n: f"u{n}") if string_ids else (lambda n: n)
    pool = list(range(12))
    rankings, judgments = {}, {}
    for u in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 4)):  # some users have no recommendations
            ranked = draw(st.lists(st.sampled_from(pool), unique=True, min_size=1, max_size=10))
            rankings[user(u)] = [item(n) for n in ranked]
        if draw(st.integers(0, 4)):  # some users have no judgments
            judged = draw(st.dictionaries(st.sampled_from(pool), RELEVANCES, min_size=1,
                                          max_size=8))
            judgments[user(u)] = {item(n): rel for n, rel in judged.items()}
    if not judgments:
        judgments[user(99)] = {item(0): 1}
    if not set(rankings) & set(judgments):  # no common user is an error (tested elsewhere)
        rankings[next(iter(judgments))] = [item(0)]
    return rankings, judgments


def rels_table(judgments):
    rows = [(u, i, float(r)) for u, judged in judgments.items() for i, r in judged.items()]
    return pa.table({"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                     "relevance": [r[2] for r in rows]})


def recs_table(rankings, layout, scores=None):
    if layout == "lists":
        return pa.table({"user_id": list(rankings), "items": list(rankings.values())})
    rows = [(u, item, pos) for u, items in rankings.items() for pos, item in enumerate(items, 1)]
    users, items, positions = (list(col) for col in zip(*rows)) if rows else ([], [], [])
    if layout == "ranks":
        # ranks that only order the items: gaps and an offset of 100
        return pa.table({"user_id": users, "item_id": items,
                         "rank": [100 + 3 * p for p in positions]})
    return pa.table({"user_id": users, "item_id": items,
                     "score": [scores[(u, i)] for u, i in zip(users, items)]})


def trec_order(rankings, scores):
    """The ranking trec_eval makes: score descending, ties by item id descending as text."""
    ordered = {}
    for u, items in rankings.items():
        ordered[u] = sorted(items, key=lambda i: str(i), reverse=True)
        ordered[u].sort(key=lambda i: scores[(u, i)], reverse=True)
    return ordered


def check(result, expected, ks):
    per_user = result.per_user.to_pylist()
    assert [row["user_id"] for row in per_user] == sorted(expected[ks[0]])
    for k in ks:
        name = "all" if k is None else str(k)
        for row in per_user:
            want = expected[k][row["user_id"]]
            assert row[f"dcg@{name}"] == pytest.approx(want[0], rel=1e-12, abs=1e-12)
            assert row[f"idcg@{name}"] == pytest.approx(want[1], rel=1e-12, abs=1e-12)
            assert row[f"ndcg@{name}"] == pytest.approx(want[2], rel=1e-12, abs=1e-12)
        mean = reference.mean_ndcg(expected[k])
        got = result.summary[f"ndcg@{name}"]
        assert (got is None and mean is None) or got == pytest.approx(mean, rel=1e-12)
        assert result.summary["users"] == len(expected[k])


GAIN_MAPS = st.none() | st.dictionaries(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]),
                                        st.sampled_from([-1.0, 0.0, 0.5, 3.0, 7.25]),
                                        min_size=1, max_size=3)


@pytest.mark.filterwarnings("ignore::ndcg_duck.errors.NdcgWarning")  # gain maps of random levels
@settings(max_examples=120, deadline=None)
@given(data=datasets(),
       layout=st.sampled_from(["lists", "ranks", "scores"]),
       gain=st.sampled_from(["linear", "exponential", "binary"]),
       missing=st.sampled_from(["zero", "skip"]),
       empty=st.sampled_from(["zero", "skip"]),
       idcg_cutoff=st.sampled_from(["k", "list"]),
       ks=st.lists(st.sampled_from([1, 2, 3, 5, 10, 20, None]), min_size=1, max_size=3,
                   unique=True),
       tie_scores=st.booleans(),
       ties=st.sampled_from(["trec", "average"]),
       gain_map=GAIN_MAPS,
       judged_only=st.booleans(),
       max_depth=st.sampled_from([None, 1, 2, 4]),
       batch_users=st.sampled_from([None, None, 1, 2, 3]))
def test_matches_reference(data, layout, gain, missing, empty, idcg_cutoff, ks, tie_scores, ties,
                           gain_map, judged_only, max_depth, batch_users):
    rankings, judgments = data
    scores = {(u, i): float(pos % 3 if tie_scores else -pos)
              for u, items in rankings.items() for pos, i in enumerate(items)}
    ordered, ordered_scores = rankings, None
    if layout == "scores":  # only a ranking by score has ties
        ordered = trec_order(rankings, scores)
        ordered_scores = {u: [scores[(u, i)] for i in items] for u, items in ordered.items()}
    options = dict(ties=ties, gain_map=gain_map, judged_only=judged_only, max_depth=max_depth)
    expected = {k: reference.evaluate(ordered, judgments, k, gain, missing, idcg_cutoff, empty,
                                      scores=ordered_scores, **options)
                for k in ks}
    if not expected[ks[0]]:
        return
    result = ndcg_duck.evaluate(recs_table(rankings, layout, scores), rels_table(judgments),
                                k=["all" if k is None else k for k in ks], gain=gain,
                                missing=missing, empty=empty, idcg_cutoff=idcg_cutoff,
                                batch_users=batch_users, **options)
    check(result, expected, ks)


def test_reference_agrees_with_a_hand_computation():
    # guards the oracle itself: relevances 3, 2, 1 in order give DCG 3 + 2/log2(3) + 1/2
    dcg, idcg, ndcg = reference.user_scores(["a", "b", "c"], {"a": 3, "b": 2, "c": 1}, None)
    assert dcg == pytest.approx(3 + 2 / math.log2(3) + 0.5)
    assert idcg == dcg and ndcg == 1.0


def test_reference_tie_average_matches_scikit_learn_on_tv1():
    # guards the oracle: TV1 (test_worked_examples.py), scikit-learn's tie-averaged value 0.7103
    dcg, idcg, ndcg = reference.user_scores(["d3", "d2", "d1"], {"d3": 1}, None,
                                            scores=[1.0, 1.0, 1.0], ties="average")
    assert ndcg == pytest.approx(0.7103, abs=5e-5)


@pytest.mark.parametrize("length", [1023, 1024, 1025, 1500])
def test_whole_rankings_on_both_sides_of_the_precomputed_discounts(length):
    # without a cutoff, rankings of up to 1024 items take their discounts from a constant list
    # and longer ones are discounted position by position: both must give the reference's DCG
    ranking = list(range(length))
    judged = {0: 3, 511: 1, 1022: 2, 1023: 2, 1024: 1, length - 1: 3, 99999: 2}
    per_user = ndcg_duck.evaluate(pa.table({"user_id": [1], "items": [ranking]}),
                                  pa.table({"user_id": [1] * len(judged), "item_id": list(judged),
                                            "relevance": list(judged.values())}),
                                  k="all", per_user=True).per_user.to_pylist()[0]
    dcg, idcg, ndcg = reference.user_scores(ranking, judged, None)
    assert per_user["dcg@all"] == pytest.approx(dcg, rel=1e-13)
    assert per_user["idcg@all"] == pytest.approx(idcg, rel=1e-13)
    assert per_user["ndcg@all"] == pytest.approx(ndcg, rel=1e-13)
