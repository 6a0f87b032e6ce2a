"""eval --ci: an interval for every mean over users, pinned against scipy.stats on per-user values
worked by hand: Student's t (t.interval), the percentile bootstrap (scipy.stats.bootstrap), the
rule for metrics bounded by [0, 1] (clipped, and said), per segment, in every format."""

import json
import math

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from ndcg_duck.cli import cli

# four users, two relevant items each (a, b); their top 2 gets both, the first, the second, none
RELS = "user_id,item_id,relevance\n" + "".join(f"u{u},{i},1\n" for u in "1234" for i in "ab")
RECS = "user_id,item_id,rank\nu1,a,1\nu1,b,2\nu2,a,1\nu2,x,2\nu3,y,1\nu3,b,2\nu4,x,1\nu4,y,2\n"
GROUPS = "user_id,group\nu1,g\nu2,g\nu3,h\nu4,h\n"
# by hand: precision@2 per user, and dcg@2 = sum of 1 / log2(rank + 1) over the relevant ranks
PRECISION = [1.0, 0.5, 0.5, 0.0]
DCG = [1 + 1 / math.log2(3), 1.0, 1 / math.log2(3), 0.0]


@pytest.fixture
def files(tmp_path):
    for name, text in (("recs.csv", RECS), ("rels.csv", RELS), ("groups.csv", GROUPS)):
        (tmp_path / name).write_text(text)
    return tmp_path


def run(files, *args):
    result = CliRunner().invoke(cli, ["eval", str(files / "recs.csv"), str(files / "rels.csv"),
                                      "-m", "precision,dcg", "-k", "2", *args])
    assert "Traceback" not in result.output
    return result


def t_interval(values, level):
    x = np.asarray(values)
    return scipy.stats.t.interval(level, x.size - 1, loc=x.mean(), scale=scipy.stats.sem(x))


def test_t_interval_is_scipys_and_a_bounded_metric_is_clipped(files):
    result = run(files, "--ci", "0.95", "--format", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["intervals"]
    assert found["dcg@2"] == pytest.approx(t_interval(DCG, 0.95), abs=1e-12)
    low, high = t_interval(PRECISION, 0.95)  # 0.5 -+ 3.182 * sqrt(1/24): [-0.150, 1.150]
    assert low < 0 and high > 1
    assert found["precision@2"] == [0.0, 1.0]
    assert (found["level"], found["method"], found["clipped"], found["outside"]) == (
        0.95, "t", ["precision@2"], [])
    narrow = json.loads(run(files, "--ci", "0.5", "--format", "json").output)["intervals"]
    assert narrow["precision@2"] == pytest.approx(t_interval(PRECISION, 0.5), abs=1e-12)
    assert narrow["clipped"] == []


def test_bootstrap_interval_is_scipys_percentile_bootstrap(files):
    result = run(files, "--ci", "0.9", "--ci-method", "bootstrap", "--seed", "7",
                 "--n-resamples", "2000", "--format", "json")
    found = json.loads(result.output)["intervals"]
    for name, values in (("precision@2", PRECISION), ("dcg@2", DCG)):
        expected = scipy.stats.bootstrap((np.array(values),), np.mean, n_resamples=2000,
                                         confidence_level=0.9, method="percentile",
                                         rng=np.random.default_rng(7)).confidence_interval
        assert found[name] == pytest.approx([expected.low, expected.high], abs=1e-12)
    assert (found["method"], found["n_resamples"], found["seed"], found["clipped"]) == \
        ("bootstrap", 2000, 7, [])


def test_table_shows_each_interval_and_says_how_it_was_made(files):
    result = run(files, "--ci", "0.95")
    low, high = t_interval(DCG, 0.95)  # around (2 + 2 / log2(3)) / 4 = 0.8155
    assert result.output == (
        f"precision@2  0.5000  [0.0000, 1.0000]\n"
        f"dcg@2        0.8155  [{low:.4f}, {high:.4f}]\n"
        f"users        4\n"
        f"95% intervals: Student's t over users; clipped to the metric's range [0, 1]: "
        f"precision@2\n")


def test_csv_has_interval_columns(files):
    result = run(files, "--ci", "0.5", "--format", "csv")
    lines = result.output.splitlines()
    assert lines[0] == "metric,value,ci_low,ci_high"
    low, high = (float(v) for v in lines[1].split(",")[2:])
    assert lines[1].startswith("precision@2,0.5,")
    assert (low, high) == pytest.approx(t_interval(PRECISION, 0.5), abs=1e-12)
    assert lines[3] == "users,4,,"


def test_every_segment_gets_its_intervals(files):
    result = run(files, "--ci", "0.5", "--segments", str(files / "groups.csv"), "--by", "group",
                 "--format", "json")
    rows = {row["segment"]: row for row in json.loads(result.output)["segments"]}
    for segment, users in (("(all)", slice(0, 4)), ("g", slice(0, 2)), ("h", slice(2, 4))):
        for name, values in (("precision@2", PRECISION), ("dcg@2", DCG)):
            assert rows[segment]["intervals"][name] == pytest.approx(
                t_interval(values[users], 0.5), abs=1e-12)
    csv = run(files, "--ci", "0.5", "--segments", str(files / "groups.csv"), "--by", "group",
              "--format", "csv").output.splitlines()
    assert csv[0] == ("segment,users,precision@2,precision@2_ci_low,precision@2_ci_high,dcg@2,"
                      "dcg@2_ci_low,dcg@2_ci_high")
    g = [float(v) for v in csv[2].split(",")[2:]]
    assert g == pytest.approx([0.75, *t_interval(PRECISION[:2], 0.5), (DCG[0] + DCG[1]) / 2,
                               *t_interval(DCG[:2], 0.5)], abs=1e-12)


def test_without_scipy_the_message_says_what_to_install(files, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)
    result = run(files, "--ci", "0.95")
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1, "Error: --ci needs scipy, which is not installed: pip install 'ndcg-duck[compare]'")


def test_values_outside_the_range_are_not_clipped_and_said(tmp_path):
    # with the gain map 1=-1, u1's only item (a, level 1, gain -1) at rank 1 of an ideal list
    # led by b (gain 2): ndcg@1 = -1/2; u2 and u3 rank b first: 1
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\n" + "".join(
        f"{u},a,1\n{u},b,2\n" for u in ("u1", "u2", "u3")))
    (tmp_path / "recs.csv").write_text("user_id,item_id,rank\nu1,a,1\nu2,b,1\nu3,b,1\n")
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "recs.csv"),
                                      str(tmp_path / "rels.csv"), "-k", "1", "--gain-map",
                                      "1=-1", "--ci", "0.95"])
    low, high = t_interval([-0.5, 1.0, 1.0], 0.95)  # [-1.65, 2.65]
    assert result.output == (
        f"ndcg@1  0.5000  [{low:.4f}, {high:.4f}]\n"
        f"users   3\n"
        f"95% intervals: Student's t over users; not clipped, some values being outside [0, 1] "
        f"(a negative gain): ndcg@1\n")


def test_a_geometric_mean_per_segment_and_its_interval(files):
    # gm_map (trec_eval's): map per user 1, 1/2, 1/4 and 0, floored at 0.00001; the summary is
    # the geometric mean, in each segment too (g: u1, u2; h: u3, u4), and its interval exp of
    # the t interval of the mean of the logs
    result = CliRunner().invoke(cli, ["eval", str(files / "recs.csv"), str(files / "rels.csv"),
                                      "-m", "gm_map", "--ci", "0.5", "--segments",
                                      str(files / "groups.csv"), "--by", "group",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    logs = [math.log(value) for value in (1.0, 0.5, 0.25, 0.00001)]
    assert found["gm_map"] == pytest.approx((1.0 * 0.5 * 0.25 * 0.00001) ** 0.25, rel=1e-12)
    assert found["intervals"]["gm_map"] == pytest.approx(
        [math.exp(end) for end in t_interval(logs, 0.5)], rel=1e-12)
    segments = {row["segment"]: row for row in found["segments"]}
    assert segments["g"]["gm_map"] == pytest.approx(0.5 ** 0.5, rel=1e-12)
    assert segments["h"]["gm_map"] == pytest.approx((0.25 * 0.00001) ** 0.5, rel=1e-12)
    assert segments["g"]["intervals"]["gm_map"] == pytest.approx(
        [math.exp(end) for end in t_interval(logs[:2], 0.5)], rel=1e-12)
