"""--beyond-as PEER (docs/beyond-peers.md) against each peer's own formula, worked by hand on one
small example. The peers' sources (read, not run: the formulas, their code stays there):
RecBole recbole/evaluator/metrics.py (ItemCoverage, AveragePopularity, ShannonEntropy,
GiniIndex, TailPercentage); Elliot elliot/evaluation/metrics/ (coverage/item_coverage
ItemCoverage, diversity/gini_index GiniIndex, diversity/shannon_entropy SEntropy, bias/arp ARP,
bias/aplt APLT with the short head of its popularity utilities,
Popularity.get_short_head); RecTools rectools/metrics/ (novelty.py MeanInvUserFreq,
popularity.py AvgRecPopularity, catalog.py CatalogCoverage, diversity.py IntraListDiversity);
Evidently src/evidently/metrics/recsys/ (novelty.py NoveltyMetric.get_miuf, popularity_bias.py
PopularityBias.get_apr and get_gini, personalisation.py PersonalizationMetric.get_diversity,
diversity.py DiversityMetric.get_ild, train_stats.py TrainStats); LensKit
src/lenskit/metrics/ranking/_gini.py ListGini; Microsoft recommenders
recommenders/evaluation/python_evaluation.py (historical_item_novelty, novelty,
distributional_coverage).

The example. train (user, item) rows: t1 a, t1 a (twice: 2 rows, 1 user), t1 b, t2 a, t2 c,
t3 a, t3 b, t4 d: U = 4 users, 8 rows; distinct users a 3, b 2, c 1, d 1; rows a 4, b 2, c 1,
d 1. The catalogue (items) a .. f, n = 6; e and f are unseen in train. Lists at k = 2, every
user judged: u1 a b, u2 a e, u3 d c. Exposure c: a 2, b 1, c 1, d 1, e 1 (m = 5 shown, 6 in
all, U = 3 users).
"""

import math

import pytest

from ndcg_duck import evaluate
from reference import beyond as ref

TRAIN = [("t1", "a"), ("t1", "a"), ("t1", "b"), ("t2", "a"), ("t2", "c"), ("t3", "a"),
         ("t3", "b"), ("t4", "d")]
LISTS = {"u1": ["a", "b"], "u2": ["a", "e"], "u3": ["d", "c"]}
ITEMS = ["a", "b", "c", "d", "e", "f"]
L2 = math.log2


def files(tmp_path, lists=LISTS, embeddings=None):
    """recs, rels, train and items files of the example (every listed user judged)."""
    (tmp_path / "recs.csv").write_text("user_id,item_id,rank\n" + "".join(
        f"{u},{i},{r}\n" for u, top in lists.items() for r, i in enumerate(top, 1)))
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\n" + "".join(
        f"{u},{top[0]},1\n" for u, top in lists.items()))
    (tmp_path / "train.csv").write_text("user_id,item_id\n" + "".join(
        f"{u},{i}\n" for u, i in TRAIN))
    if embeddings is None:
        (tmp_path / "items.csv").write_text("item_id\n" + "".join(f"{i}\n" for i in ITEMS))
        items = tmp_path / "items.csv"
    else:
        import json
        items = tmp_path / "items.json"
        items.write_text(json.dumps([{"item_id": i, "embedding": e}
                                     for i, e in embeddings.items()]))
    return tmp_path / "recs.csv", tmp_path / "rels.csv", tmp_path / "train.csv", items


def summary(tmp_path, metrics, catalogue=True, **options):
    recs, rels, train, items = files(tmp_path)
    given = {"items": str(items)} if catalogue else {}
    return evaluate(str(recs), str(rels), 2, metrics=metrics, train=str(train),
                    per_user=False, **given, **options).summary


# (preset, metric, the peer's value worked by hand, whether the catalogue file is given)
CASES = [
    # RecBole ItemCoverage: 5 shown / num_items 7 (6 and the padding item)
    ("recbole", "coverage@2", 5 / 7, True),
    # RecBole GiniIndex: counts 1,1,1,1,2 at idx 3..7 of num_items 7: (2 idx - 8) c sums to
    # -2 + 0 + 2 + 4 + 12 = 16, over total_num 6, over 7
    ("recbole", "gini@2", 16 / 6 / 7, True),
    # RecBole ShannonEntropy: p = 2/6, 1/6 (x4), -sum p ln p over len(item_count) 5
    ("recbole", "entropy@2", -(2 / 6 * math.log(2 / 6) + 4 / 6 * math.log(1 / 6)) / 5, True),
    # RecBole AveragePopularity (interactions): u1 (4+2)/2, u2 (4+0)/2, u3 (1+1)/2
    ("recbole", "popularity@2", (3 + 2 + 1) / 3, True),
    # RecBole TailPercentage, tail_ratio 0.1: train items by count ascending c 1, d 1, b 2, a 4;
    # cut max(int(4 * 0.1), 1) = 1: the tail is c; u3's list holds it at rank 2
    ("recbole", "tail@2", (0 + 0 + 1 / 2) / 3, True),
    # Elliot ItemCoverage: distinct items recommended
    ("elliot", "coverage_count@2", 5, True),
    # Elliot GiniIndex: counts 1,1,1,1,2 at j + n - m + 1 = 2..6 of n 6: (2 p - 7) c / 6 sums to
    # (-3 - 1 + 1 + 3 + 10) / 6, over n - 1 = 5, then 1 - that
    ("elliot", "gini@2", 1 - (10 / 6) / 5, True),
    # Elliot SEntropy: sum over items of (c / 2) * -log2(c / 6), over 3 users
    ("elliot", "entropy@2", (1 * -L2(2 / 6) + 4 * 0.5 * -L2(1 / 6)) / 3, True),
    # Elliot APLT: pop (users) a 3, b 2, c 1, d 1; transactions 7, short head while the limit
    # 0.8 * 7 = 5.6 stays above 0: a (2.6), b (0.6), c (-0.4): the long tail is d
    ("elliot", "tail@2", (0 + 0 + 1 / 2) / 3, True),
    # Elliot ARP (distinct users; e, unseen, 0): u1 (3+2)/2, u2 (3+0)/2, u3 (1+1)/2
    ("elliot", "popularity@2", (2.5 + 1.5 + 1) / 3, True),
    # RecTools MeanInvUserFreq: -log2(users(i) / 4), cold e as 1 user
    ("rectools", "novelty@2", ((-L2(3 / 4) - L2(2 / 4)) / 2 + (-L2(3 / 4) - L2(1 / 4)) / 2
                               + (-L2(1 / 4) - L2(1 / 4)) / 2) / 3, True),
    # RecTools AvgRecPopularity: value_counts (rows) a 4, b 2, c 1, d 1, e 0
    ("rectools", "popularity@2", (3 + 2 + 1) / 3, True),
    # RecTools CatalogCoverage: normalize=False, the count; normalize=True, over len(catalog) 6
    ("rectools", "coverage_count@2", 5, True),
    ("rectools", "coverage@2", 5 / 6, True),
    # Evidently NoveltyMetric: -log2(users(i) / 4), e (NaN) dropped: u2 has a alone
    ("evidently", "novelty@2", ((-L2(3 / 4) - L2(2 / 4)) / 2 + -L2(3 / 4)
                                + (-L2(1 / 4) - L2(1 / 4)) / 2) / 3, True),
    # Evidently PopularityBias.get_apr (TrainStats: distinct users), e dropped
    ("evidently", "popularity@2", (2.5 + 3 + 1) / 3, True),
    # Evidently get_gini: the 5 shown items' counts 1,1,1,1,2 at 1..5: (2i - 6) c sums to 4,
    # over (5 - 1) * 6
    ("evidently", "gini@2", 4 / (4 * 6), True),
    # Evidently's coverage: shown items among the train items (a, b, c, d) over their number:
    # without --items the catalogue is train's items
    ("evidently", "coverage@2", 4 / 4, False),
    # Evidently PersonalizationMetric.get_diversity: sum c^2 = 8, cooccurrences 8 - 3 * 2 = 2,
    # couples 9 - 3 = 6: (6 - 2 / 2) / 6
    ("evidently", "personalization@2", (6 - 2 / 2) / 6, True),
    # LensKit ListGini (lenskit.stats.gini of the counts over its 6 items): counts
    # 0,1,1,1,1,2: (2i - 7) c sums to 10, over 6 * 6
    ("lenskit", "gini@2", 10 / 36, True),
    # Microsoft recommenders' novelty: -log2(count / 8 rows): a 1, b 2, c 3, d 3; e merged
    # away but counted in the 6 recommendations: (2*1 + 2 + 3 + 3) / 6
    ("msrec", "novelty@2", (2 * 1 + 2 + 3 + 3) / 6, True),
    # Microsoft recommenders' distributional_coverage: -sum p log2 p (ndcg-duck's entropy)
    ("msrec", "entropy@2", -(2 / 6 * L2(2 / 6) + 4 / 6 * L2(1 / 6)), True),
]


@pytest.mark.parametrize("preset, measure, want, catalogue", CASES,
                         ids=[f"{p}-{m}" for p, m, _, _ in CASES])
def test_each_preset_gives_its_peers_value(tmp_path, preset, measure, want, catalogue):
    got = summary(tmp_path, measure.partition("@")[0], catalogue, beyond_as=preset)[measure]
    assert got == pytest.approx(want, rel=1e-12)


def test_ndcg_duck_own_values_differ_where_the_peers_do(tmp_path):
    """Without --beyond-as: the definitions of sql/ndcg_beyond.sql, worked by hand, so each
    case above is a change: coverage 5/6, gini 10/36, entropy in bits, novelty add-one
    -log2((pop + 1) / 5) (e: pop 0), popularity by users, tail outside the head of
    floor(0.2 * 6) = 1 item (a): u1 b, u2 e, u3 d and c."""
    got = summary(tmp_path, "coverage,gini,entropy,novelty,popularity,tail")
    assert got["coverage@2"] == pytest.approx(5 / 6)
    assert got["gini@2"] == pytest.approx(10 / 36)
    assert got["entropy@2"] == pytest.approx(-(2 / 6 * L2(2 / 6) + 4 / 6 * L2(1 / 6)))
    nov = {"a": -L2(4 / 5), "b": -L2(3 / 5), "c": -L2(2 / 5), "d": -L2(2 / 5), "e": -L2(1 / 5)}
    want = sum(sum(nov[i] for i in top) / 2 for top in LISTS.values()) / 3
    assert got["novelty@2"] == pytest.approx(want)
    assert got["popularity@2"] == pytest.approx((2.5 + 1.5 + 1) / 3)
    assert got["tail@2"] == pytest.approx((0.5 + 0.5 + 1) / 3)


def test_an_option_beside_a_preset_wins(tmp_path):
    """--beyond-as recbole --head-share 0.5: RecBole's tail_ratio 0.5, cut int(4 * 0.5) = 2:
    the tail is c and d, both in u3's list."""
    got = summary(tmp_path, "tail", beyond_as="recbole", head_share=0.5)
    assert got["tail@2"] == pytest.approx(1 / 3)


def test_beyond_users_recommended_counts_the_unjudged_users(tmp_path):
    """u4 f e is recommended but not judged. --beyond-users evaluated (the default) counts u1 to
    u3 as above; recommended counts u4 too: exposure a 2, b 1, c 1, d 1, e 2, f 1, all 6 items
    shown (coverage 1), gini of the counts 1, 1, 1, 1, 2, 2 at places 1 to 6: (2j - 7) c sums
    to -5 - 3 - 1 + 1 + 2 (3 + 5) = 8, over 6 x 8; novelty's mean over 4 users, f and e unseen
    (pop 0). The rectools preset sets it: RecTools' MeanInvUserFreq averages over every user of
    the recommendations, u4's cold items as one user each: -log2(1 / 4) = 2."""
    lists = {**LISTS, "u4": ["f", "e"]}
    recs, rels, train, items = files(tmp_path, lists)
    rels.write_text("user_id,item_id,relevance\n" + "".join(
        f"{u},{top[0]},1\n" for u, top in LISTS.items()))
    nov = {"a": -L2(4 / 5), "b": -L2(3 / 5), "c": -L2(2 / 5), "d": -L2(2 / 5), "e": -L2(1 / 5),
           "f": -L2(1 / 5)}
    per_user = {u: sum(nov[i] for i in top) / 2 for u, top in lists.items()}

    def run(**options):
        return evaluate(str(recs), str(rels), 2, metrics="ndcg,coverage,gini,novelty",
                        train=str(train), items=str(items), **options)
    evaluated, everyone = run().summary, run(beyond_users="recommended")
    assert evaluated["coverage@2"] == pytest.approx(5 / 6)
    assert evaluated["novelty@2"] == pytest.approx(sum(per_user[u] for u in LISTS) / 3)
    got = everyone.summary
    assert (got["users"], got["users_recommended"], got["ndcg@2"]) == (3, 4, 1.0)
    assert got["coverage@2"] == pytest.approx(1.0)
    assert got["gini@2"] == pytest.approx(8 / (6 * 8))
    assert got["novelty@2"] == pytest.approx(sum(per_user.values()) / 4)
    # the per-user table has u4's row too, without accuracy values (not judged)
    rows = {r["user_id"]: r for r in everyone.per_user.to_pylist()}
    assert rows["u4"]["ndcg@2"] is None
    assert rows["u4"]["novelty@2"] == pytest.approx(per_user["u4"])
    rectools = run(beyond_as="rectools").summary
    assert rectools["users_recommended"] == 4
    assert rectools["novelty@2"] == pytest.approx(
        ((-L2(3 / 4) - L2(2 / 4)) / 2 + (-L2(3 / 4) - L2(1 / 4)) / 2
         + (-L2(1 / 4) - L2(1 / 4)) / 2 + 2) / 4)


EMBEDDINGS = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [1.0, 0.0],
              "e": [0.5, 0.5], "f": [1.0, 2.0]}


def test_ild_of_rectools_and_evidently(tmp_path):
    """u1 a b c e, u2 d (one item). u1's pair distances 1 - cosine: a b 1, c e 0, the four
    others 1 - 1/sqrt(2): sum s = 1 + 4 (1 - 1/sqrt(2)). ndcg-duck: s / 6 pairs, u2 none.
    RecTools IntraListDiversity: the mean over pairs, u2 0 in the mean. Evidently
    DiversityMetric.get_ild: s / len(rec_list) 4, u2 0 / 1."""
    recs, rels, train, items = files(tmp_path, {"u1": ["a", "b", "c", "e"], "u2": ["d"]},
                                     EMBEDDINGS)
    s = 1 + 4 * (1 - 1 / math.sqrt(2))
    for preset, want in ((None, s / 6), ("rectools", (s / 6 + 0) / 2),
                         ("evidently", (s / 4 + 0) / 2)):
        got = evaluate(str(recs), str(rels), 4, metrics="ild", items=str(items),
                       per_user=False, beyond_as=preset).summary["ild@4"]
        assert got == pytest.approx(want, rel=1e-12), preset


def test_personalization_is_the_pairwise_mean(tmp_path):
    """The exposure algebra (sum c (c - 1) over U (U - 1) L) against the pair-by-pair mean of
    tests/reference/beyond.py, on lists of unequal length too."""
    lists = {"u1": ["a", "b", "c"], "u2": ["a", "c"], "u3": ["c", "d", "a"], "u4": ["f"]}
    recs, rels, train, items = files(tmp_path, lists)
    got = evaluate(str(recs), str(rels), 3, metrics="personalization", items=str(items),
                   per_user=False).summary["personalization@3"]
    assert got == pytest.approx(ref.personalization(lists), rel=1e-12)
