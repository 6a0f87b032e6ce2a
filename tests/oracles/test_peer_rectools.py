"""--beyond-as rectools against RecTools' own code (rectools.metrics, run, not read): its
MeanInvUserFreq, AvgRecPopularity, CatalogCoverage and IntraListDiversity through its
calc_metrics, on a random run (tests/reference/peers.py: 300 lists of 1 to 12 items, one-item
lists, ties in train's counts, items never in train, catalogue items never shown), to 1e-12.

RecTools counts every user of its recommendations: ndcg-duck does so without a relevance file,
and with one that judges every listed user (both are run here). Its CatalogCoverage also counts
recommended items outside the catalogue, which ndcg-duck leaves out: every item here is in it.
ild: RecTools' PairwiseHammingDistanceCalculator over one feature column (the category's
number) counts 1 for two items of different categories, 0 for the same, as ndcg-duck's
1 - Jaccard of two one-category sets does.

RecTools pins numpy below 2, which pyarrow 26 does not import with, so CI runs this file in a
virtual environment apart from the test extra's (.ci/run, the peers-rectools extra, with pyarrow
25); elsewhere it skips."""

import warnings

import pytest

from ndcg_duck import evaluate
from reference import peers

rectools = pytest.importorskip(
    "rectools", reason="RecTools is not installed: pip install -e '.[peers-rectools]' in a "
                       "virtual environment apart (it pins numpy below 2); .ci/run does")
pd = pytest.importorskip("pandas")
from rectools.metrics import (AvgRecPopularity, CatalogCoverage,  # noqa: E402
                              IntraListDiversity, MeanInvUserFreq, calc_metrics)
from rectools.metrics.distances import PairwiseHammingDistanceCalculator  # noqa: E402

KS = (5, 10)
RUN = peers.random_run()


def rectools_values():
    """{ndcg-duck's measure: RecTools' value} for every metric and cutoff."""
    recs, train, items = peers.rows(RUN)
    reco = pd.DataFrame(recs, columns=["user_id", "item_id", "rank"])
    prev = pd.DataFrame(train, columns=["user_id", "item_id"])
    # one numeric feature per item: its category's number (Hamming: 1 when they differ)
    features = pd.DataFrame({"category": [float(c[1:]) for _, c in items]},
                            index=[i for i, _ in items])
    hamming = PairwiseHammingDistanceCalculator(features)
    metrics = {}
    for k in KS:
        metrics.update({f"novelty@{k}": MeanInvUserFreq(k=k),
                        f"popularity@{k}": AvgRecPopularity(k=k),
                        f"coverage@{k}": CatalogCoverage(k=k, normalize=True),
                        f"coverage_count@{k}": CatalogCoverage(k=k, normalize=False),
                        f"ild@{k}": IntraListDiversity(k=k, distance_calculator=hamming)})
    return calc_metrics(metrics, reco, prev_interactions=prev, catalog=[i for i, _ in items])


PEER = rectools_values()


@pytest.mark.parametrize("judged", [False, True], ids=["lists only", "every user judged"])
def test_the_rectools_preset_gives_rectools_own_values(tmp_path, judged):
    recs, rels, train, items = peers.write(RUN, tmp_path, judged)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing here is outside the catalogue
        got = evaluate(recs, rels, list(KS), metrics="novelty,popularity,coverage,"
                       "coverage_count,ild", train=train, items=items, per_user=False,
                       beyond_as="rectools").summary
    assert got["users"] == len(RUN.lists)
    for measure, want in PEER.items():
        assert got[measure] == pytest.approx(want, rel=1e-12, abs=1e-12), measure


def test_ndcg_duck_own_definitions_differ_from_rectools_here(tmp_path):
    """Without the preset, novelty (add-one), popularity (distinct users) and ild (one-item
    lists left out) give other numbers on this run: the preset is what makes them agree."""
    recs, rels, train, items = peers.write(RUN, tmp_path, judged=False)
    got = evaluate(recs, rels, list(KS), metrics="novelty,popularity,ild", train=train,
                   items=items, per_user=False).summary
    for measure in ("novelty@5", "popularity@5", "ild@5"):
        assert got[measure] != pytest.approx(PEER[measure], rel=1e-6), measure
