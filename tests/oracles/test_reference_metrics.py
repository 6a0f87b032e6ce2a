"""Every metric beside NDCG against the plain-Python reference (tests/reference/metrics.py) on
random data: every layout, ties, judged-only, max depth, missing and empty users, a relevance
threshold, gains and gain maps (for cg), several cutoffs at once, in one batch of users or
several; and the SQL door (ndcg_metric_scores) against the CLI's names."""

import math

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import ndcg_duck
import reference
from reference import metrics as reference_metrics
from test_reference_ndcg import GAIN_MAPS, datasets, recs_table, rels_table, trec_order

EVERY = ["ndcg", "cg", "precision", "recall", "hit_rate", "mrr", "map", "r_precision",
         "num_rel", "num_rel_ret", "judged", "ncg", "err", "bpref", "rbp", "num_ret",
         "num_nonrel_judged_ret", "set_precision", "set_relative_precision", "set_map", "set_f",
         "relative_precision", "iprec_11pt_avg",
         "infap", "rndcg", "ndcg_rel", "rbp_resid", "utility", "unj", "g", "bing", "gm_map",
         "gm_bpref", "iprec_at_recall", "rprec_mult"]
# trec_eval's measures with a fractional parameter, at its levels (metrics.FAMILIES)
LEVELS = tuple([f"iprec_at_recall_{tenths / 10:.2f}" for tenths in range(11)]
               + [f"rprec_mult_{fifths / 5:.2f}" for fifths in range(1, 11)])
GEOMETRIC = ("gm_map", "gm_bpref")  # the summary: exp of the mean of the per-user logs
SET = ("num_ret", "num_nonrel_judged_ret", "set_precision", "set_relative_precision", "set_map",
       "set_f", "iprec_11pt_avg") + GEOMETRIC + LEVELS
COUNTS = ("num_rel", "num_rel_ret", "num_ret", "num_nonrel_judged_ret")


@settings(max_examples=120, deadline=None)
@given(data=datasets(),
       layout=st.sampled_from(["lists", "ranks", "scores"]),
       gain=st.sampled_from(["linear", "exponential", "binary"]),
       gain_map=GAIN_MAPS,
       missing=st.sampled_from(["zero", "skip"]),
       empty=st.sampled_from(["zero", "skip"]),
       ks=st.lists(st.sampled_from([1, 2, 3, 5, 10, 20]), min_size=1, max_size=3, unique=True),
       tie_scores=st.booleans(),
       ties=st.sampled_from(["trec", "average"]),
       judged_only=st.booleans(),
       max_depth=st.sampled_from([None, 1, 2, 4]),
       min_relevance=st.sampled_from([None, 1, 2.5]),
       batch_users=st.sampled_from([None, None, 1, 3]),
       beta=st.sampled_from([1.0, 0.25, 3.0]),
       utility=st.sampled_from([((1.0, -1.0, 0.0, 0.0), 0), ((2.0, -1.0, 0.5, 0.25), 40)]))
def test_matches_reference(data, layout, gain, gain_map, missing, empty, ks, tie_scores, ties,
                           judged_only, max_depth, min_relevance, batch_users, beta, utility):
    rankings, judgments = data
    scores = {(u, i): float(pos % 3 if tie_scores else -pos)
              for u, items in rankings.items() for pos, i in enumerate(items)}
    ordered, ordered_scores = rankings, None
    if layout == "scores":
        ordered = trec_order(rankings, scores)
        ordered_scores = {u: [scores[(u, i)] for i in items] for u, items in ordered.items()}
    cut = dict(judged_only=judged_only, max_depth=max_depth)
    # the users that count (missing and empty apply to every metric: empty means no gain > 0)
    users = [user for user, judged in judgments.items()
             if (missing == "zero" or rankings.get(user))
             and (empty == "zero" or any(reference_metrics.gain_of(rel, gain, gain_map,
                                                                   min_relevance) > 0
                                         for rel in judged.values()))]
    if not users:
        return
    result = ndcg_duck.evaluate(recs_table(rankings, layout, scores), rels_table(judgments),
                                k=ks, metrics=EVERY + ["mrr@" + str(k) for k in ks]
                                + ["map@" + str(k) for k in ks],
                                gain=gain, gain_map=gain_map, missing=missing, empty=empty,
                                ties=ties, min_relevance=min_relevance, batch_users=batch_users,
                                set_f_beta=beta, utility_weights=list(utility[0]),
                                num_docs=utility[1], **cut)
    rows = {row["user_id"]: row for row in result.per_user.to_pylist()}
    assert sorted(rows) == sorted(users)
    sums = {}
    for user, row in rows.items():
        ranking = ordered.get(user, [])
        judged = judgments[user]
        whole = reference_metrics.binary_metrics(ranking, judged, None, min_relevance,
                                                 beta=beta, **cut)
        want = {name: whole[name] for name in ("r_precision", "num_rel", "num_rel_ret", "bpref",
                                               "rbp") + SET}
        want["mrr"], want["map"] = whole["mrr"], whole["map"]
        want.update(reference_metrics.trec_other_metrics(
            ranking, judged, ks, min_relevance, gain, gain_map, weights=utility[0],
            num_docs=utility[1], has_ranking=user in rankings, **cut))
        if min_relevance is None:  # NDCG beside the others (test_reference_ndcg has more)
            want[f"ndcg@{ks[0]}"] = reference.user_scores(
                ranking, judged, ks[0], gain, scores=ordered_scores.get(user)
                if ordered_scores and user in rankings else None, ties=ties, gain_map=gain_map,
                **cut)[2]
        for k in ks:
            at_k = reference_metrics.binary_metrics(ranking, judged, k, min_relevance, **cut)
            for name in ("precision", "recall", "hit_rate", "mrr", "map", "relative_precision"):
                want[f"{name}@{k}"] = at_k[name]
            user_scores = ordered_scores.get(user) if ordered_scores and user in rankings \
                else None
            want[f"cg@{k}"] = reference_metrics.user_cg(
                ranking, judged, k, gain, scores=user_scores, ties=ties, gain_map=gain_map,
                min_relevance=min_relevance, **cut)
            want[f"ncg@{k}"] = reference_metrics.ncg(
                ranking, judged, k, gain, scores=user_scores, ties=ties, gain_map=gain_map,
                min_relevance=min_relevance, **cut)
            want[f"judged@{k}"] = reference_metrics.judged(ranking, judged, k, **cut)
            want[f"err@{k}"] = reference_metrics.err(ranking, judged, k,
                                                     min_relevance=min_relevance, **cut)
        for name, value in want.items():
            assert row[name] == pytest.approx(value, rel=1e-12, abs=1e-12), (user, name)
            sums[name] = sums.get(name, 0) + value
    # the summary: means over the evaluated users, sums for the counts
    for name, total in sums.items():
        if name in COUNTS:
            assert result.summary[name] == total
        elif name in GEOMETRIC:
            assert result.summary[name] == pytest.approx(math.exp(total / len(rows)),
                                                         rel=1e-12, abs=1e-12)
        else:
            assert result.summary[name] == pytest.approx(total / len(rows), rel=1e-12, abs=1e-12)
    assert result.summary["users"] == len(rows)


def test_reference_cg_is_the_sum_of_gains():
    # guards the oracle: tie-averaged CG of one tie group of three (gains 3, 0, 0) at k=2 is
    # the group's mean gain at two ranks
    assert reference_metrics.tie_averaged_cg([3.0, 0.0, 0.0], [1.0, 1.0, 1.0], 2) == 2.0
    assert reference_metrics.cg([3, 2, 3, 0], 3) == 8


def test_reference_average_precision_by_hand():
    # guards the oracle: relevant at ranks 1 and 3 of a, b, c; R = 3 (d never ranked):
    # AP = (1/1 + 2/3) / 3; cut at 2: 1/3; R-precision: 2 of the first 3
    values = reference_metrics.binary_metrics(["a", "b", "c"], {"a": 1, "c": 2, "d": 1}, None)
    assert values["map"] == pytest.approx((1 + 2 / 3) / 3)
    assert values["r_precision"] == pytest.approx(2 / 3)
    assert reference_metrics.binary_metrics(["a", "b", "c"], {"a": 1, "c": 2, "d": 1},
                                            2)["map"] == pytest.approx(1 / 3)


def test_sql_door_names_match_the_python_names(con):
    # ndcg_metric_scores, the shell's one-row-per-metric macro, names each value as evaluate()
    recs = pa.table({"user_id": ["u1", "u2"], "items": [["a", "b", "c"], ["x"]]})
    rels = pa.table({"user_id": ["u1", "u1", "u2"], "item_id": ["a", "c", "y"],
                     "relevance": [1.0, 2.0, 1.0]})
    con.register("recs", recs)
    con.register("rels", rels)
    got = {(user, metric): value for user, metric, value in con.sql(
        "WITH ranked AS (FROM ndcg_ranked_lists('recs')), "
        "judged AS (FROM ndcg_judgments('rels')) "
        "SELECT user_id, metric, value FROM ndcg_metric_scores('ranked', 'judged', "
        "ks := [2, NULL]::BIGINT[])").fetchall()}
    names = [name for name in EVERY if name not in ("precision", "relative_precision", "unj")] + [
        "dcg", "idcg", "precision@2", "relative_precision@2", "mrr@2", "map@2", "unj@2"]
    result = ndcg_duck.evaluate(recs, rels, k=[2, "all"], metrics=names)
    want = {(row["user_id"], name): value for row in result.per_user.to_pylist()
            for name, value in row.items() if name != "user_id"}
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(float(value), rel=1e-12), key


@pytest.mark.parametrize("length", [1023, 1024, 1025, 1500])
def test_rbp_on_both_sides_of_the_precomputed_weights(length):
    # rankings of up to 1024 items take rbp's weights p^(i - 1) from a constant list, longer
    # ones weigh position by position; with p near 1 the positions past 1024 still count, and
    # both must give trec_eval's sum (the formula of sql/ndcg_metrics.sql's header, in Python)
    ranking = list(range(length))
    judged = {0: 3, 511: 1, 1022: 2, 1023: 2, 1024: 1, length - 1: 4, 99999: 2}
    per_user = ndcg_duck.evaluate(pa.table({"user_id": [1], "items": [ranking]}),
                                  pa.table({"user_id": [1] * len(judged), "item_id": list(judged),
                                            "relevance": list(judged.values())}),
                                  metrics=["rbp"], rbp_p=0.999, per_user=True).per_user
    expected = (1 - 0.999) * sum(judged.get(item, 0) / 4 * 0.999 ** i
                                 for i, item in enumerate(ranking))
    assert per_user.column("rbp").to_pylist() == [pytest.approx(expected, rel=1e-13)]
