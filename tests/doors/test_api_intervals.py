"""evaluate(ci=): the summary's intervals, as eval --ci --format json gives them, against
scipy.stats.t.interval on per-user values worked by hand (tests/doors/test_cli_intervals.py's
data), and its keywords' checks in Python's words."""

import pytest

import ndcg_duck
from test_cli_intervals import DCG, PRECISION, files, t_interval  # noqa: F401 (a fixture)


def evaluate(files, **given):
    return ndcg_duck.evaluate(str(files / "recs.csv"), str(files / "rels.csv"), k=2,
                              metrics="precision,dcg,num_rel", **given)


def test_ci_adds_the_intervals_to_the_summary(files):
    result = evaluate(files, ci=0.5, per_user=False)
    found = result.summary["intervals"]
    assert found["precision@2"] == pytest.approx(t_interval(PRECISION, 0.5), abs=1e-12)
    assert found["dcg@2"] == pytest.approx(t_interval(DCG, 0.5), abs=1e-12)
    assert "num_rel" not in found  # a count, summed: no interval
    assert (found["level"], found["method"], found["clipped"], result.per_user) == \
        (0.5, "t", [], None)
    assert evaluate(files, ci=0.95).summary["intervals"]["precision@2"] == [0.0, 1.0]
    assert "intervals" not in evaluate(files).summary


@pytest.mark.parametrize("given, message", [
    (dict(ci=1.5), "ci 1.5 is not a number between 0 and 1"),
    (dict(ci_method="bootstrap"), "ci_method= needs ci=, the level (e.g. ci=0.95)"),
    (dict(ci=0.9, ci_method="bca"), "ci_method 'bca' is not one of: t, bootstrap"),
    (dict(ci=0.9, n_resamples=0), "n_resamples 0 is not an integer >= 1"),
])
def test_ci_keywords_are_checked(files, given, message):
    with pytest.raises(ndcg_duck.InputError) as caught:
        evaluate(files, **given)
    assert (str(caught.value), caught.value.usage) == (message, True)
