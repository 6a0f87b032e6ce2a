"""--beyond-as lenskit against LensKit's own code (lenskit.metrics, run, not read): its
ListGini through RunAnalysis on a random run (tests/reference/peers.py: 300 lists of 1 to 12
items, catalogue items never shown), to 1e-12. LensKit's other list metrics have no
counterpart here (docs/beyond-peers.md says which and why).

LensKit counts every list of the run, test data or not: ndcg-duck does so without a relevance
file, and with one that judges every listed user (both are run here). ListGini's n is the
`items` it is given: the catalogue's 60 items, as --items gives ndcg-duck.

LensKit needs torch (a CPU build: torch==2.13.0 from the wheels on disk), so CI runs this file
in a virtual environment apart from the test extra's, beside RecTools' (.ci/run, the
peers-lenskit extra); elsewhere it skips."""

import warnings

import pytest

from ndcg_duck import evaluate
from reference import peers

lenskit = pytest.importorskip(
    "lenskit", reason="LensKit is not installed: pip install -e '.[peers-lenskit]' in a "
                      "virtual environment apart (it needs torch); .ci/run does")
pd = pytest.importorskip("pandas")
from lenskit.data import ItemListCollection  # noqa: E402
from lenskit.metrics import ListGini, RunAnalysis  # noqa: E402

KS = (5, 10)
RUN = peers.random_run()


def lenskit_values():
    """{ndcg-duck's measure: LensKit's value} for each cutoff."""
    recs, _, items = peers.rows(RUN)
    frame = pd.DataFrame(recs, columns=["user_id", "item_id", "rank"])
    outputs = ItemListCollection.from_df(frame, ["user_id"])
    no_test = ItemListCollection.from_df(frame.iloc[:0], ["user_id"])
    analysis = RunAnalysis()
    for k in KS:
        analysis.add_metric(ListGini(k, items=len(items)), label=f"gini@{k}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of its empty per-list table; no test data
        return dict(analysis.measure(outputs, no_test).global_metrics())


PEER = lenskit_values()


@pytest.mark.parametrize("judged", [False, True], ids=["lists only", "every user judged"])
def test_the_lenskit_preset_gives_lenskit_own_values(tmp_path, judged):
    recs, rels, _, items = peers.write(RUN, tmp_path, judged)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing here is outside the catalogue
        got = evaluate(recs, rels, list(KS), metrics="gini", items=items, per_user=False,
                       beyond_as="lenskit").summary
    assert got["users"] == len(RUN.lists)
    assert set(PEER) == {f"gini@{k}" for k in KS}
    for measure, want in PEER.items():
        assert got[measure] == pytest.approx(want, rel=1e-12, abs=1e-12), measure


def test_the_catalogue_size_is_what_lenskit_is_given(tmp_path):
    """RecBole's n + 1 (--catalogue-size items_plus_one) is not LensKit's: it moves gini."""
    recs, rels, _, items = peers.write(RUN, tmp_path, judged=False)
    got = evaluate(recs, rels, list(KS), metrics="gini", items=items, per_user=False,
                   catalogue_size="items_plus_one").summary
    assert got["gini@5"] != pytest.approx(PEER["gini@5"], rel=1e-6)
