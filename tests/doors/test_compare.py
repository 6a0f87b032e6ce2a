"""ndcg-duck compare and segments: statistics against scipy and hand computations, counts on a
hand example, the output formats, plots, and every user error with its exact message."""

import csv
import io
import itertools
import json
import math
import struct
import sys

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.stats
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.comparison import stats
from ndcg_duck.cli import cli
from ndcg_duck.comparison.compare import compare
from ndcg_duck.report.plot import size

EXAMPLES = ROOT / "examples"
C = 1 - 1 / math.log2(3)  # NDCG lost when the one relevant item moves from rank 1 to rank 2


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def hand(tmp_path):
    """Five users; each relevant item has relevance 1. Run b lacks u5. NDCG@10 per user:
    a: u1 1, u2 1, u3 1/log2(3), u4 0, u5 1;  b: u1 1/log2(3), u2 1, u3 1, u4 1, u5 (none).
    So b - a: u1 -C, u2 0 (the same items in another order), u3 +C, u4 +1, u5 -1 (scored 0)."""
    rels = tmp_path / "rels.csv"
    rels.write_text("user_id,item_id,relevance\nu1,a,1\nu2,a,1\nu2,b,1\nu3,a,1\nu4,a,1\nu5,a,1\n")
    lists = {"a": {"u1": ["a", "x"], "u2": ["a", "b"], "u3": ["x", "a"], "u4": ["x", "y"],
                   "u5": ["a"]},
             "b": {"u1": ["x", "a"], "u2": ["b", "a"], "u3": ["a", "x"], "u4": ["a", "y"]}}
    paths = {}
    for name, users in lists.items():
        paths[name] = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"user_id": list(users), "items": list(users.values())}),
                       paths[name])
    segments = tmp_path / "segments.csv"
    segments.write_text("user_id,group\nu1,x\nu2,x\nu3,y\nu4,y\nnobody,z\n")
    return {"rels": rels, "segments": segments, **paths}


# --- statistics: against closed forms and scipy -------------------------------------------

def test_t_test_and_interval_match_closed_forms():
    # d = [1, 2, 3]: mean 2, var 1, t = 2 sqrt(3) on 2 degrees of freedom, where the t
    # distribution has the closed form P(|T| > t) = 1 - t / sqrt(2 + t^2).
    t = 2 * math.sqrt(3)
    assert stats.t_test(2.0, 1.0, 3) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-12)
    # n = 2: one degree of freedom, the Cauchy distribution: P(|T| > t) = 1 - 2 atan(t) / pi and
    # the 95% quantile is tan(0.475 pi). d = [1, 3]: mean 2, var 2, standard error 1, t = 2.
    assert stats.t_test(2.0, 2.0, 2) == pytest.approx(1 - 2 * math.atan(2) / math.pi, abs=1e-12)
    low, high = stats.t_interval(2.0, 2.0, 2, 0.95)
    half = math.tan(0.475 * math.pi)
    assert (low, high) == (pytest.approx(2 - half, abs=1e-9), pytest.approx(2 + half, abs=1e-9))


def test_t_test_and_interval_match_scipy():
    rng = np.random.default_rng(5)
    for n in (2, 7, 50, 400):
        a, b = rng.random(n), rng.random(n)
        d = b - a
        p = stats.t_test(d.mean(), d.var(ddof=1), n)
        assert p == pytest.approx(scipy.stats.ttest_rel(b, a).pvalue, rel=1e-9)
        low, high = stats.t_interval(d.mean(), d.var(ddof=1), n, 0.9)
        ci = scipy.stats.ttest_rel(b, a).confidence_interval(0.9)
        assert (low, high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))


def test_no_t_test_without_variation():
    assert stats.t_test(0.5, 0.0, 10) is None
    assert stats.t_test(0.5, None, 1) is None
    assert stats.t_interval(0.5, None, 1, 0.95) == (None, None)


def test_randomization_exact_by_hand():
    # Five non-zero differences (the 0 changes nothing); |sum| = 0.7. Of the 32 sign
    # assignments only two reach a sum >= 0.7 (as given: 0.7; -0.05 flipped: 0.8), and their
    # mirror images <= -0.7: p = 4 / 32.
    assert stats.randomization([0.1, -0.05, 0.2, 0.3, 0.0, 0.15], 10000, 42) == 4 / 32
    assert stats.randomization([0.0, 0.0], 10000, 42) == 1.0


def test_randomization_agrees_with_scipy_exact_distribution():
    # 16 users: 65536 sign assignments, more than the 10000 resamples, so the Monte Carlo path
    # runs; scipy enumerates them all for the exact p-value.
    rng = np.random.default_rng(11)
    for shift in (0.0, 0.1, 0.25):
        d = rng.normal(shift, 0.3, 16)
        exact = scipy.stats.permutation_test(
            (d,), lambda x, axis: np.sum(x, axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=np.inf).pvalue
        ours = stats.randomization(d, 10000, 42)
        error = math.sqrt(exact * (1 - exact) / 10000)
        assert abs(ours - exact) <= 4 * error + 2e-4, (ours, exact)


def test_randomization_is_reproducible_and_never_zero():
    rng = np.random.default_rng(3)
    d = rng.normal(0.0, 0.3, 3000)
    first = stats.randomization(d, 2000, 42)
    assert stats.randomization(d, 2000, 42) == first
    assert stats.randomization(d, 2000, 7) != first
    strong = np.full(200, 0.5) + rng.normal(0, 0.01, 200)
    assert stats.randomization(strong, 999, 42) == 1 / 1000


def test_bootstrap_interval_is_scipys_and_its_p_value_is_sane():
    rng = np.random.default_rng(9)
    d = rng.normal(0.05, 0.3, 300)
    p, low, high = stats.bootstrap(d, 5000, 42, 0.95)
    ci = scipy.stats.bootstrap((d,), np.mean, n_resamples=5000, method="percentile",
                               rng=np.random.default_rng(42)).confidence_interval
    assert (low, high) == (pytest.approx(ci.low, rel=1e-12), pytest.approx(ci.high, rel=1e-12))
    assert p == pytest.approx(scipy.stats.ttest_1samp(d, 0).pvalue, abs=0.01)
    assert stats.bootstrap(d, 5000, 42, 0.95) == (p, low, high)
    assert stats.bootstrap(d + 5, 999, 42, 0.95)[0] == 1 / 1000


def test_bootstrap_normal_form_agrees_with_resampling():
    """Beyond stats.BOOTSTRAP_DRAWS the bootstrap takes its normal-theory form; where both can
    run, it agrees with resampling to within the resampling's own noise, on differences shaped
    like NDCG's (most users unchanged, the rest spread and skewed)."""
    rng = np.random.default_rng(4)
    n = 5000
    d = np.where(rng.random(n) < 0.6, 0.0, rng.beta(0.6, 2.0, n) - 0.2)
    for shift in (0.0, 0.004, 0.01):
        resampled = stats.bootstrap(d + shift, 4000, 7, 0.95)
        assert not stats.bootstrap_is_normal(n, 4000)
        normal = stats.bootstrap_normal(d + shift, 4000, 0.95)
        width = resampled[2] - resampled[1]
        assert normal[1] == pytest.approx(resampled[1], abs=0.03 * width)
        assert normal[2] == pytest.approx(resampled[2], abs=0.03 * width)
        assert normal[0] == pytest.approx(resampled[0], abs=0.02)
    assert stats.bootstrap_is_normal(1_000_000, 10_000) and stats.bootstrap_is_normal(20_001, 10_000)
    assert stats.bootstrap(d + 1, 10_000, 1, 0.95)[0] == 1 / 10_001  # never below 1 / (B + 1)


def test_poisson_bootstrap_weights():
    """The Spark engine's Poisson bootstrap: weights distributed as Poisson(1) (against scipy's
    pmf), a user's weights the same whoever else is drawn and wherever the user is, and the
    percentile interval of the weighted means that of the default engine's bootstrap within its
    Monte Carlo error."""
    users = np.arange(1, 3001, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    w = stats.poisson_weights(42, users, np.arange(500))
    counts = np.bincount(w.astype(int).ravel(), minlength=8)[:8]
    expected = scipy.stats.poisson.pmf(np.arange(8), 1) * w.size
    assert scipy.stats.chisquare(counts[:6], expected[:6] * counts[:6].sum() / expected[:6].sum()
                                 ).pvalue > 1e-3
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.1  # resamples independent
    assert (stats.poisson_weights(42, users[[7, 3]], [5, 9]) == w[[7, 3]][:, [5, 9]]).all()
    assert not (stats.poisson_weights(43, users, np.arange(500)) == w).all()
    rng = np.random.default_rng(4)
    d = np.where(rng.random(3000) < 0.6, 0.0, rng.beta(0.6, 2.0, 3000) - 0.2)
    totals, weights = stats.poisson_sums(d, users, 4000, 42)
    p, low, high = stats.bootstrap_of_sums(float(d.mean()), float(np.abs(d).mean()), totals,
                                           weights, 0.95)
    want = stats.bootstrap(d, 4000, 42, 0.95)
    width = want[2] - want[1]  # each endpoint varies by about 3% of it from seed to seed
    assert low == pytest.approx(want[1], abs=0.12 * width)
    assert high == pytest.approx(want[2], abs=0.12 * width)
    assert p == pytest.approx(want[0], abs=0.02)


def test_a_normal_bootstrap_says_so(hand, monkeypatch):
    monkeypatch.setattr(stats, "BOOTSTRAP_DRAWS", 10)
    args = ["compare", hand["rels"], "--run", f"a={hand['a']}", "--run", f"b={hand['b']}",
            "--test", "bootstrap"]
    note = ("bootstrap in its normal-theory form, as where users x resamples exceed "
            "200,000,000 (docs/compare.md)")
    assert note in run(*args).output.splitlines()
    # run a's mean: its t interval leaves [0, 1] and is clipped (test_t_intervals_stay_in_range)
    assert [row["note"] for row in json.loads(run(*args, "--format", "json").output)] == \
        ["t interval clipped to the metric's range (docs/compare.md)", note]


def test_t_intervals_stay_in_range(tmp_path):
    """Five users, each with one relevant item: run a ranks it first for u1 only (ndcg@10 1, 0, 0,
    0, 0), run b for u1 and u2 (1, 1, 0, 0, 0). scipy's t interval of a's mean [-0.36, 0.76] is
    clipped to [0, 0.76], of b's mean [-0.28, 1.08] to [0, 1]; the difference's (0, 1, 0, 0, 0)
    [-0.36, 0.76] is inside [-1, 1] and stays scipy's; the notes say which were clipped."""
    users = [f"u{n}" for n in range(1, 6)]
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\n"
                                       + "".join(f"{u},r,1\n" for u in users))
    for name, hits in (("a", 1), ("b", 2)):
        (tmp_path / f"{name}.csv").write_text("user_id,item_id,rank\n" + "".join(
            f"{u},{'r' if n < hits else 'x'},1\n" for n, u in enumerate(users)))
    args = ["compare", tmp_path / "rels.csv", "--run", f"a={tmp_path / 'a.csv'}", "--run",
            f"b={tmp_path / 'b.csv'}"]
    rows = {row["run"]: row for row in json.loads(run(*args, "--format", "json").output)}

    def t(values):
        return scipy.stats.t.interval(0.95, len(values) - 1, loc=np.mean(values),
                                      scale=scipy.stats.sem(values))
    clipped = "t interval clipped to the metric's range (docs/compare.md)"
    assert (rows["a"]["ci_low"], rows["a"]["note"]) == (0.0, clipped)
    assert rows["a"]["ci_high"] == pytest.approx(t([1, 0, 0, 0, 0])[1], rel=1e-12)
    assert (rows["b"]["ci_low"], rows["b"]["ci_high"], rows["b"]["note"]) == (0.0, 1.0, clipped)
    assert (rows["b"]["diff_ci_low"], rows["b"]["diff_ci_high"]) == \
        pytest.approx(t([0, 1, 0, 0, 0]), rel=1e-12)
    assert "ndcg@10: t interval clipped to the metric's range (docs/compare.md)" in \
        run(*args).output.splitlines()


def test_holm_and_bonferroni_by_hand():
    # sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1, but never below 0.06
    p = [0.01, 0.04, 0.03, 0.005]
    assert stats.adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.adjust(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert stats.adjust([0.5, 0.6], "holm") == [1.0, 1.0]
    assert stats.adjust(p, "none") == p


def test_paired_aggregates_count_ties_within_1e_12(con):
    (result,), = con.sql("SELECT ndcg_paired(x, base) FROM (VALUES (0.3, 0.1 + 0.2), "
                         "(0.5, 0.25), (0.25, 0.5), (1.0, 1.0 + 1e-11)) t(x, base)").fetchall()
    assert (result["wins"], result["ties"], result["losses"], result["users"]) == (1, 1, 2, 4)


# --- a hand example end to end ---------------------------------------------------------------

def rows_of(result, segment="(all)", metric="ndcg", cutoff="10"):
    return {row["run"]: row for row in result.rows
            if row["segment"] == segment and row["metric"] == metric and row["cutoff"] == cutoff}


def test_hand_example_counts_and_t_test(hand):
    result = compare(hand["rels"], {"a": hand["a"], "b": hand["b"]}, k=10)
    row = rows_of(result)["b"]
    d = [-C, 0.0, C, 1.0, -1.0]
    assert (row["users"], row["wins"], row["ties"], row["losses"]) == (5, 2, 1, 2)
    assert row["diff"] == pytest.approx(sum(d) / 5, abs=1e-12)
    assert row["p_value"] == pytest.approx(scipy.stats.ttest_1samp(d, 0).pvalue, rel=1e-9)
    assert row["d_z"] == pytest.approx(np.mean(d) / np.std(d, ddof=1), rel=1e-9)
    assert row["rel_diff"] == pytest.approx((sum(d) / 5) / ((3 + 1 - C) / 5), rel=1e-9)
    assert result.info["runs"]["b"]["users_without_recommendations"] == 1
    assert (result.info["users"], result.info["users_left_out"]) == (5, 0)
    assert (result.info["correction"], result.info["family"]) == ("none", 1)


def test_missing_skip_pairs_only_the_users_every_run_has(hand):
    result = compare(hand["rels"], {"a": hand["a"], "b": hand["b"]}, k=10, missing="skip")
    row = rows_of(result)["b"]
    assert (row["users"], row["wins"], row["ties"], row["losses"]) == (4, 2, 1, 1)
    assert (result.info["users"], result.info["users_left_out"]) == (4, 1)
    assert row["mean"] == pytest.approx((1 - C + 1 + 1 + 1) / 4, abs=1e-12)
    assert rows_of(result)["a"]["mean"] == pytest.approx((1 + 1 + 1 - C + 0) / 4, abs=1e-12)


def test_means_are_evals_to_the_bit():
    from ndcg_duck import evaluate

    result = compare(EXAMPLES / "relevance.csv", [("old", EXAMPLES / "recs.parquet"),
                                                 ("new", EXAMPLES / "recs_new.parquet")],
                     k=[5, 10, "all"])
    for name, path in (("old", "recs.parquet"), ("new", "recs_new.parquet")):
        summary = evaluate(EXAMPLES / path, EXAMPLES / "relevance.csv", k=[5, 10, "all"]).summary
        for cutoff in ("5", "10", "all"):
            assert rows_of(result, cutoff=cutoff)[name]["mean"] == summary[f"ndcg@{cutoff}"]


def test_metrics_beside_ndcg_are_compared_with_evals_means():
    from ndcg_duck import evaluate

    metrics = ["recall", "mrr", "map@10"]
    result = compare(EXAMPLES / "relevance.csv", [("old", EXAMPLES / "recs.parquet"),
                                                 ("new", EXAMPLES / "recs_new.parquet")],
                     k=[5, 10], metrics=metrics)
    names = {(row["metric"], row["cutoff"]) for row in result.rows}
    assert names == {("recall", "5"), ("recall", "10"), ("mrr", None), ("map", "10")}
    for name, path in (("old", "recs.parquet"), ("new", "recs_new.parquet")):
        summary = evaluate(EXAMPLES / path, EXAMPLES / "relevance.csv", k=[5, 10],
                           metrics=metrics).summary
        for metric, cutoff in names:
            key = metric if cutoff is None else f"{metric}@{cutoff}"
            # one rule for every mean (means.py): the same bits
            assert rows_of(result, metric=metric, cutoff=cutoff)[name]["mean"] == summary[key]
    new, old = (rows_of(result, metric="recall", cutoff="10")[run]["mean"] for run in ("new", "old"))
    assert rows_of(result, metric="recall", cutoff="10")["new"]["diff"] == pytest.approx(new - old)


def test_segments_min_users_and_holm_family(hand):
    result = compare(hand["rels"], {"a": hand["a"], "b": hand["b"]}, k=[5, 10],
                     segments=hand["segments"], by="group", min_users=2)
    segments = [row["segment"] for row in result.rows if row["run"] == "b" and row["cutoff"] == "5"]
    assert segments == ["(all)", "x", "y", "(unknown)"]
    unknown = rows_of(result, "(unknown)")["b"]  # u5 alone: fewer than 2 users
    assert (unknown["users"], unknown["tested"], unknown["p_value"], unknown["diff"]) == \
        (1, False, None, -1.0)
    assert unknown["note"] == "fewer than 2 users: means only, not tested"
    y = rows_of(result, "y")["b"]  # u3 +C, u4 +1
    assert (y["users"], y["wins"], y["mean"]) == (2, 2, pytest.approx(1.0))
    tested = [row for row in result.rows if row["tested"]]
    assert result.info["family"] == len(tested) == 6  # 2 cutoffs x ((all), x, y)
    assert result.info["correction"] == "holm"
    assert [row["p_adjusted"] for row in tested] == \
        pytest.approx(stats.adjust([row["p_value"] for row in tested], "holm"))


def test_all_pairs_and_baseline(hand):
    runs = {"a": hand["a"], "b": hand["b"], "c": hand["a"]}
    result = compare(hand["rels"], runs, all_pairs=True, correction="bonferroni")
    pairs = [(row["baseline"], row["run"]) for row in result.rows if row["baseline"]]
    assert pairs == [("a", "b"), ("a", "c"), ("b", "c")]
    assert result.info["family"] == 2  # a-c: every difference 0, no test
    chosen = compare(hand["rels"], runs, baseline="b")
    assert [(row["baseline"], row["run"]) for row in chosen.rows] == \
        [("b", "a"), (None, "b"), ("b", "c")]


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_identical_runs_say_why_no_test_was_made(hand, test):
    """Two runs that score each user the same: no test, whatever the test, and the table's title,
    its notes and the JSON note say why."""
    args = ["compare", hand["rels"], "--run", f"a={hand['a']}", "--run", f"same={hand['a']}",
            "--test", test, "-k", "10,1"]
    shown = run(*args).output
    assert shown.splitlines()[0].endswith(", no test made: every per-user difference is 0")
    assert ("no test where every per-user difference is 0 (the runs score each user the same): "
            "same against a (ndcg@10), same against a (ndcg@1)") in shown.splitlines()
    rows = json.loads(run(*args, "--format", "json").output)
    compared = [row for row in rows if row["baseline"] == "a"]
    assert len(compared) == 2
    assert all(row["note"] == "every per-user difference is 0 (the runs score each user the "
               "same): no test" and not row["tested"] and row["p_value"] is None
               and (row["diff"], row["diff_ci_low"], row["diff_ci_high"]) == (0, 0, 0)
               for row in compared)


def test_randomization_is_the_same_on_any_number_of_threads(hand, tmp_path):
    rng = np.random.default_rng(2)
    users = [f"u{i:03d}" for i in range(400)]
    rels = tmp_path / "many.csv"
    rels.write_text("user_id,item_id,relevance\n" + "".join(f"{u},i{j},1\n" for u in users
                                                             for j in range(3)))
    for name in ("p", "q"):
        lists = [list(rng.permutation([f"i{j}" for j in range(8)])) for _ in users]
        pq.write_table(pa.table({"user_id": users, "items": lists}), tmp_path / f"{name}.parquet")
    args = ["compare", rels, "--run", f"p={tmp_path / 'p.parquet'}", "--run",
            f"q={tmp_path / 'q.parquet'}", "--test", "randomization", "--n-resamples", "999",
            "--format", "json"]
    one, two = run(*args, "--threads", "1"), run(*args, "--threads", "2")
    assert one.exit_code == 0, one.output
    assert json.loads(one.output) == json.loads(two.output)
    p = json.loads(one.output)[1]["p_value"]
    assert p > 0 and (p * 1000) == pytest.approx(round(p * 1000))


# --- the command line ------------------------------------------------------------------------

def example_args(*extra):
    return ["compare", EXAMPLES / "relevance.csv", "--run", f"old={EXAMPLES / 'recs.parquet'}",
            "--run", f"new={EXAMPLES / 'recs_new.parquet'}", *extra]


def test_tidy_rows_json_csv_parquet(tmp_path):
    rows = json.loads(run(*example_args("-k", "5,10", "--segments", EXAMPLES / "listeners.csv",
                                        "--by", "activity", "--format", "json")).output)
    assert len(rows) == 2 * 4 * 2  # cutoffs x segments ((all), heavy, light, (unknown)) x runs
    csv_text = run(*example_args("-k", "5,10", "--format", "csv")).output
    assert csv_text.splitlines()[0].split(",")[:6] == ["metric", "cutoff", "segment", "run",
                                                       "baseline", "users"]
    assert len(csv_text.splitlines()) == 1 + 2 * 2
    out = run(*example_args("-k", "5,10", "--format", "parquet")).stdout_bytes
    (tmp_path / "rows.parquet").write_bytes(out)
    table = pq.read_table(tmp_path / "rows.parquet")
    assert table.num_rows == 4 and table.column("diff").to_pylist()[1] == rows[1]["diff"]


def test_per_user_output_has_values_and_differences(tmp_path):
    out = tmp_path / "users.csv"
    assert run(*example_args("--per-user", out, "--segments", EXAMPLES / "listeners.csv",
                             "--by", "activity")).exit_code == 0
    table = duckdb.sql(f"FROM '{out}' ORDER BY user_id").fetchall()
    columns = duckdb.sql(f"FROM '{out}'").columns
    assert columns == ["user_id", "segment", "ndcg@10 old", "ndcg@10 new", "ndcg@10 new-old"]
    assert [row[0] for row in table] == ["ana", "ben", "chloé", "dev", "fay"]
    for row in table:
        assert row[4] == pytest.approx(row[3] - row[2], abs=1e-15)


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_plots_are_pngs_of_the_expected_size(tmp_path):
    picture = tmp_path / "compare.png"
    assert run(*example_args("-k", "5,10", "--plot", picture)).exit_code == 0
    assert png_size(picture) == size(2, 2)
    picture = tmp_path / "eval.png"
    assert run("eval", EXAMPLES / "recs.parquet", EXAMPLES / "relevance.csv", "-k", "5,10,20",
               "--plot", picture).exit_code == 0
    assert png_size(picture) == size(3, 1) == (1500, 320)


def test_eval_by_segment():
    args = ["eval", EXAMPLES / "recs.parquet", EXAMPLES / "relevance.csv", "-k", "5,10",
            "--segments", EXAMPLES / "listeners.csv", "--by", "activity"]
    # ana 0.6783 and ben 0.3134 are heavy; chloé 0.8247 and dev 0 light; fay has no segment
    assert run(*args).output.endswith(
        "\nby activity:\n"
        "segment    users  ndcg@5  ndcg@10\n"
        "(all)          5  0.3424   0.3633\n"
        "heavy          2  0.4730   0.4958\n"
        "light          2  0.3831   0.4124\n"
        "(unknown)      1  0.0000   0.0000\n")
    data = json.loads(run(*args, "--format", "json").output)
    assert data["segments"][1]["segment"] == "heavy"
    assert data["segments"][1]["ndcg@10"] == pytest.approx((0.6782775378613685 + 0.3133823808702839) / 2)
    assert run(*args, "--format", "csv").output.splitlines()[:2] == \
        ["segment,users,ndcg@5,ndcg@10", "(all),5,0.34241995992958385,0.36327380917161134"]


def test_eval_segments_and_plot_in_the_runs_own_connection(monkeypatch, tmp_path):
    """--segments and --plot are computed in the run's own DuckDB connection (its per-user
    table there), not in a connection each that loads the macros again."""
    real, opened = duckdb.connect, []
    monkeypatch.setattr(duckdb, "connect", lambda *a, **kw: opened.append(a) or real(*a, **kw))
    result = run("eval", EXAMPLES / "recs.parquet", EXAMPLES / "relevance.csv", "-k", "5",
                 "--segments", EXAMPLES / "listeners.csv", "--by", "activity", "--plot",
                 tmp_path / "eval.png")
    assert result.exit_code == 0 and "\nheavy          2  0.4730\n" in result.output
    assert len(opened) == 1


@pytest.mark.parametrize("module, args, message", [
    ("scipy", example_args(), "Error: compare needs scipy, which is not installed: "
                              "pip install 'ndcg-duck[compare]'"),
    ("matplotlib", ["eval", EXAMPLES / "recs.parquet", EXAMPLES / "relevance.csv", "--plot",
                    "x.png"],
     "Error: --plot needs matplotlib, which is not installed: pip install 'ndcg-duck[compare]'"),
])
def test_without_the_extra_it_says_what_to_install(monkeypatch, module, args, message):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    result = run(*args)
    assert result.exit_code == 1
    assert result.output == message + "\n"


ONE_RUN = ["compare", EXAMPLES / "relevance.csv", "--run", f"old={EXAMPLES / 'recs.parquet'}"]


@pytest.mark.parametrize("args, code, message", [
    (ONE_RUN, 2, "compare needs at least two runs: give --run NAME=PATH twice or more"),
    (["--run", "x"], 2, "--run 'x': give NAME=PATH, as in --run base=recs.parquet"),
    (["--run", "old=a"], 2, "run name 'old' is given twice: give each run its own name"),
    (["--baseline", "mid"], 2, "--baseline 'mid' is not one of the runs: old, new"),
    (["--baseline", "new", "--all-pairs"], 2,
     "--baseline and --all-pairs do not go together: --all-pairs compares every pair"),
    (["--segments", "listeners.csv"], 2, "--segments FILE and --by COLUMN go together: give both"),
    (["--segments", "listeners.csv", "--by", "country"], 1,
     "segments file listeners.csv: no column 'country' (columns found: user_id, activity); "
     "name it with --by"),
    (["--segments", "listeners.txt", "--by", "activity"], 2,
     "cannot tell the format of segments file listeners.txt from its extension: use a "
     ".parquet, .csv or .json name"),
    (["--segments", "twice.csv", "--by", "activity"], 1,
     "segments file twice.csv: user ana is in two segments, heavy and light: give each user "
     "one segment"),
    (["--segments", "numbers.csv", "--by", "activity"], 1,
     "no evaluated user is in the segments file numbers.csv (user ids there look like '1', "
     "here like 'ana'): check --user-col and that the files use the same ids"),
    (["--segments", "twice_none.csv", "--by", "activity"], 1,
     "segments file twice_none.csv: user ana is in two segments, heavy and none (a NULL, empty "
     "or blank segment): give each user one segment"),
    (["--segments", "unknown.csv", "--by", "activity"], 1,
     "segments file unknown.csv: user ben is in the segment (unknown), a name the output keeps "
     "for users without a segment: rename it, or leave it empty for users without a segment"),
    (["--segments", "all.csv", "--by", "activity"], 1,
     "segments file all.csv: user ana is in the segment (all), a name the output keeps for every "
     "user: rename it"),
    *[(["compare", "rels.csv", "--run", "a=a.csv", "--run", "c=c.csv", "--missing", missing], 1,
       "no user has recommendations in every run (a, c): there is no user to compare the runs "
       "on; check that the runs are for the same users, with the same ids")
      for missing in ("zero", "skip")],
    (["--train", "listeners.csv", "--by", "item-popularity", "--format", "latex"], 2,
     "--format latex prints a row per run against one baseline, over every user: use --format "
     "table, json or csv with --by item-popularity"),
    (["--train", "listeners.csv", "--by", "user-activity"], 2,
     "--by user-activity needs --groups N (N groups of about as many train users) or "
     "--activity-cuts 5,20,100 (fixed ranges of counts)"),
    (["-m", "ndcg@10,GM_BPREF"], 2,
     "compare does not take gm_bpref: it is a geometric mean over users (trec_eval's), and "
     "compare's differences and tests are of arithmetic means; compare bpref, the per-user "
     "values it is the geometric mean of"),
    (["--plot", "out.jpg"], 2, "--plot out.jpg: the plot is a PNG image, name it with .png"),
    (["--plot", "nowhere/out.png"], 2,
     "the directory of plot file nowhere/out.png does not exist: create nowhere first"),
    (["--alpha", "1.5"], 2, "Invalid value for '--alpha': 1.5 is not in the range 0<x<1."),
    (["--test", "wilcoxon"], 2, "Invalid value for '--test': 'wilcoxon' is not one of 't', "
                                "'randomization', 'bootstrap', 'none'."),
])
def test_compare_errors(tmp_path, monkeypatch, args, code, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "listeners.csv").write_text((EXAMPLES / "listeners.csv").read_text())
    (tmp_path / "twice.csv").write_text("user_id,activity\nana,heavy\nana,light\n")
    (tmp_path / "numbers.csv").write_text("user_id,activity\n1,heavy\n2,light\n")
    (tmp_path / "twice_none.csv").write_text("user_id,activity\nana,heavy\nana,\n")
    (tmp_path / "unknown.csv").write_text("user_id,activity\nana,heavy\nben,(unknown)\n")
    (tmp_path / "all.csv").write_text("user_id,activity\nana,(all)\n")
    # u1 and u2 are judged; run a recommends to u1 only, run c to u2 only
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\nu1,a,1\nu2,a,1\n")
    (tmp_path / "a.csv").write_text("user_id,item_id,rank\nu1,a,1\n")
    (tmp_path / "c.csv").write_text("user_id,item_id,rank\nu2,a,1\n")
    result = run(*(args if args[0] == "compare" else example_args(*args)))
    assert result.exit_code == code, result.output
    assert result.output.splitlines()[-1] == f"Error: {message}"



# --by item-popularity (issue 33): train users per item a 3, b 2, c 1, d 1; --head-share 0.5 makes
# a and b the head, c, d and the items no train user has (x) the tail. Each group's per-user NDCG
# is the plain-Python reference's over the judgments of its items; the runs pair users per group
POP_TRAIN = "user_id,item_id\nt1,a\nt2,a\nt3,a\nt1,b\nt2,b\nt1,c\nt2,d\n"
POP_JUDGED = {"u1": {"a": 1, "c": 1}, "u2": {"b": 1, "x": 1}, "u3": {"a": 1, "d": 1},
              "u4": {"b": 1}}
POP_RUNS = {"old": {"u1": ["a", "y", "c"], "u2": ["x", "b", "y"], "u3": ["d", "y", "a"],
                    "u4": ["y", "z", "b"]},
            "new": {"u1": ["c", "a", "y"], "u2": ["b", "y", "x"], "u3": ["a", "d", "y"],
                    "u4": ["b", "a", "z"]}}
POP_GROUPS = {"head": {"a", "b"}}


def test_compare_by_item_popularity_pairs_users_within_each_group(tmp_path):
    import reference

    (tmp_path / "train.csv").write_text(POP_TRAIN)
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\n" + "".join(
        f"{user},{item},{rel}\n" for user, judged in POP_JUDGED.items()
        for item, rel in judged.items()))
    for name, lists in POP_RUNS.items():
        (tmp_path / f"{name}.csv").write_text("user_id,item_id,rank\n" + "".join(
            f"{user},{item},{n}\n" for user, items in lists.items()
            for n, item in enumerate(items, 1)))
    result = run("compare", tmp_path / "rels.csv", "--run", f"old={tmp_path / 'old.csv'}",
                 "--run", f"new={tmp_path / 'new.csv'}", "-k", "3", "-m", "ndcg,novelty",
                 "--train", tmp_path / "train.csv", "--by", "item-popularity", "--head-share", "0.5",
                 "--min-users", "2", "--correction", "none", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {(r["metric"], r["segment"], r["run"]): r for r in json.loads(result.stdout)}
    assert [s for (m, s, r) in rows if m == "ndcg" and r == "new"] == ["(all)", "head", "tail"]
    # novelty is not scored per group: its rows are every user's only
    assert [s for (m, s, r) in rows if m == "novelty"] == ["(all)", "(all)"]

    def group(item):
        return next((g for g, items in POP_GROUPS.items() if item in items), "tail")

    for name in ("head", "tail"):
        values = {run_name: [reference.user_scores(lists[user], mine, 3)[2]
                             for user, judged in POP_JUDGED.items()
                             if (mine := {i: r for i, r in judged.items() if group(i) == name})]
                  for run_name, lists in POP_RUNS.items()}
        new = rows[("ndcg", name, "new")]
        # head: every user (4); tail: u1, u2, u3 (u4 has no relevant tail item)
        assert new["users"] == len(values["new"]) == (4 if name == "head" else 3)
        assert rows[("ndcg", name, "old")]["mean"] == pytest.approx(np.mean(values["old"]))
        assert new["mean"] == pytest.approx(np.mean(values["new"]))
        assert new["diff"] == pytest.approx(np.mean(values["new"]) - np.mean(values["old"]))
        assert new["p_value"] == pytest.approx(
            scipy.stats.ttest_rel(values["new"], values["old"]).pvalue)
    # exposure@3: of the 12 places shown, old shows a or b 4 times, new 5 (u4 gets a too)
    assert rows[("exposure", "head", "old")]["mean"] == pytest.approx(4 / 12)
    assert rows[("exposure", "head", "new")]["diff"] == pytest.approx(1 / 12)
    assert rows[("exposure", "tail", "new")]["mean"] == pytest.approx(7 / 12)


def test_the_readme_compare_example_prints_what_the_readme_shows(tmp_path, monkeypatch):
    from test_docs_examples import blocks

    command = next(block for block in blocks("sh", "docs/compare.md")
                   if block.startswith("ndcg-duck compare"))
    printed = next(block for block in blocks("text", "docs/compare.md")
                   if block.startswith("compare: "))
    args = command.split("ndcg-duck ", 1)[1].split()
    args[args.index("--plot") + 1] = str(tmp_path / "compare.png")  # not the committed picture
    monkeypatch.chdir(ROOT)
    result = run(*args)
    assert result.exit_code == 0
    assert result.output == printed
    assert png_size(tmp_path / "compare.png") == png_size(ROOT / "docs" / "compare.png")


def test_segments_from_memory_with_ids_typed_differently(tmp_path):
    # user ids are integers in the runs and text in the segment table: compared as text
    rels = pa.table({"user_id": [1, 2, 3], "item_id": ["a", "a", "a"], "relevance": [1, 1, 1]})
    first = pa.table({"user_id": [1, 2, 3], "items": [["a"], ["x", "a"], ["a"]]})
    second = pa.table({"user_id": [1, 2, 3], "items": [["x", "a"], ["a"], ["a"]]})
    groups = pa.table({"user_id": ["1", "2"], "group": [7, 7]})
    result = compare(rels, [("p", first), ("q", second)], segments=groups, by="group",
                     min_users=1)
    seven = rows_of(result, "7")["q"]
    assert (seven["users"], seven["wins"], seven["losses"], seven["diff"]) == \
        (2, 1, 1, pytest.approx(0.0, abs=1e-15))
    assert rows_of(result, "(unknown)")["q"]["users"] == 1


# --- segments: one rule for users without a segment, any name through every format -----------

HOSTILE = [("u1", None), ("u2", ""), ("u3", "   "), ("u4", 'north, "east"'), ("u5", 'north, "east"'),
           ("u6", "Ünïcödé ☃"), ("u7", "Ünïcödé ☃"), ("u8", "line\nbreak")]  # u9: not listed


def hostile_files(path):
    """Nine users, each with one relevant item a; run a ranks it 1st, 2nd or 3rd, run b another
    rank or not at all. segments.csv (written by the csv module): u1 a NULL segment (empty
    field), u2 "" (quoted empty), u3 only spaces, u9 absent: four users of '(unknown)'; two
    segments of two users whose names hold a comma and quotes, and non-ASCII letters; one of a
    line break."""
    users = [f"u{i}" for i in range(1, 10)]
    (path / "rels.csv").write_text("user_id,item_id,relevance\n"
                                   + "".join(f"{u},a,1\n" for u in users))
    for name, shift in (("a", 0), ("b", 1)):
        with open(path / f"{name}.csv", "w", newline="") as out:
            out.write("user_id,item_id,rank\n")
            for i, u in enumerate(users):
                rank = 1 + (i + shift) % 3
                if name == "b" and i % 4 == 3:
                    continue  # b lacks this user: scored 0
                out.write("".join(f"{u},{'a' if r == rank else f'x{r}'},{r}\n"
                                  for r in range(1, rank + 1)))
    with open(path / "segments.csv", "w", newline="") as out:
        out.write("user_id,group\n")
        for user, segment in HOSTILE:
            out.write(f"{user},\n" if segment is None else
                      f"{user},\"\"\n" if segment == "" else "")
            if segment:
                csv.writer(out, lineterminator="\n").writerow([user, segment])
    return path


def segment_of(user):
    """The rule, in plain Python: no segment, an empty or blank one, is '(unknown)'."""
    segment = dict(HOSTILE).get(user)
    return "(unknown)" if segment is None or not segment.strip() else segment


def expected_by_segment(values: dict) -> dict:
    """{segment: (users, mean)} for values {user: value}, '(all)' included."""
    groups = {"(all)": list(values.values())}
    for user, value in values.items():
        groups.setdefault(segment_of(user), []).append(value)
    return {name: (len(v), math.fsum(v) / len(v)) for name, v in groups.items()}


def test_eval_segments_rule_in_every_format(tmp_path):
    files = hostile_files(tmp_path)
    args = ["eval", files / "a.csv", files / "rels.csv", "-k", "10", "--segments",
            files / "segments.csv", "--by", "group"]
    assert run(*args, "--per-user", files / "users.csv").exit_code == 0
    with open(files / "users.csv", newline="") as f:
        values = {row["user_id"]: float(row["ndcg@10"]) for row in csv.DictReader(f)}
    want = expected_by_segment(values)
    assert want["(unknown)"][0] == 4 and len(want) == 5
    with io.StringIO(run(*args, "--format", "csv").output, newline="") as f:
        got = {row["segment"]: (int(row["users"]), float(row["ndcg@10"]))
               for row in csv.DictReader(f)}
    as_json = {row["segment"]: (row["users"], row["ndcg@10"])
               for row in json.loads(run(*args, "--format", "json").output)["segments"]}
    for found in (got, as_json):
        assert found.keys() == want.keys()
        for name, (users, mean) in want.items():
            assert found[name] == (users, pytest.approx(mean, rel=1e-12)), name
    table = run(*args).output.split("by group:\n")[1].splitlines()
    assert [line.split("  ")[0] for line in table] == [
        "segment", "(all)", "'line\\nbreak'", 'north, "east"', "Ünïcödé ☃", "(unknown)"]


def test_compare_segments_rule_in_every_format(tmp_path):
    files = hostile_files(tmp_path)
    args = ["compare", files / "rels.csv", "--run", f"a={files / 'a.csv'}", "--run",
            f"b={files / 'b.csv'}", "-k", "10", "--segments", files / "segments.csv", "--by",
            "group", "--min-users", "1"]
    assert run(*args, "--per-user", files / "users.csv").exit_code == 0
    with open(files / "users.csv", newline="") as f:
        users = list(csv.DictReader(f))
    assert {row["user_id"]: row["segment"] for row in users} == {
        f"u{i}": segment_of(f"u{i}") for i in range(1, 10)}
    want = {run_: expected_by_segment({row["user_id"]: float(row[f"ndcg@10 {run_}"])
                                       for row in users}) for run_ in ("a", "b")}
    diffs = expected_by_segment({row["user_id"]: float(row["ndcg@10 b-a"]) for row in users})
    with io.StringIO(run(*args, "--format", "csv").output, newline="") as f:
        from_csv = [{k: v or None for k, v in row.items()} for row in csv.DictReader(f)]
    for rows in (from_csv, json.loads(run(*args, "--format", "json").output)):
        assert [row["segment"] for row in rows[::2]] == [
            "(all)", "line\nbreak", 'north, "east"', "Ünïcödé ☃", "(unknown)"]
        for row in rows:
            users_, mean = want[row["run"]][row["segment"]]
            assert (int(row["users"]), float(row["mean"])) == (users_, pytest.approx(mean))
            if row["run"] == "b":
                assert float(row["diff"]) == pytest.approx(diffs[row["segment"]][1], abs=1e-12)
    table = run(*args).output
    assert "\n'line\\nbreak'  a " in table and "\n'line\\nbreak'  b " in table
    assert "line\nbreak" not in table


def test_segments_without_a_name_are_one_unknown_segment_from_memory():
    # '' and whitespace (a table in memory keeps them apart from NULL, as a CSV file does not)
    rels = pa.table({"user_id": [1, 2, 3, 4], "item_id": ["a"] * 4, "relevance": [1] * 4})
    first = pa.table({"user_id": [1, 2, 3, 4], "items": [["a"], ["x", "a"], ["a"], ["a"]]})
    second = pa.table({"user_id": [1, 2, 3, 4], "items": [["x", "a"], ["a"], ["a"], ["x"]]})
    groups = pa.table({"user_id": [1, 2, 3], "group": ["", " \t\n", None]})
    result = compare(rels, [("p", first), ("q", second)], segments=groups, by="group",
                     min_users=1)
    assert [row["segment"] for row in result.rows] == ["(all)"] * 2 + ["(unknown)"] * 2
    assert rows_of(result, "(unknown)")["q"]["users"] == 4


# --- compare's corners: the exact randomization test on few users; no user in common ----------

def hand_randomization(d):
    """The two-sided sign-flip p-value by enumerating all 2^n sign vectors in plain Python."""
    observed = abs(sum(d))
    signs = list(itertools.product((1, -1), repeat=len(d)))
    return sum(abs(sum(s * x for s, x in zip(v, d))) >= observed - 1e-12 for v in signs) / len(signs)


@pytest.mark.parametrize("users", [["u2"], ["u1", "u3"], ["u1", "u2", "u3"]])
def test_randomization_on_few_users_is_exact(users):
    # NDCG@10 b - a: u1 -C (a: rank 1, b: rank 2), u2 +1/2 (a: rank 3, b: rank 1), u3 -1 (b lacks
    # it); p by hand: 1, 2/4, 6/8
    rels = pa.table({"user_id": users, "item_id": ["a"] * len(users),
                     "relevance": [1] * len(users)})
    a = {"u1": ["a"], "u2": ["x", "y", "a"], "u3": ["a"]}
    b = {"u1": ["x", "a"], "u2": ["a"]}
    runs = [(name, pa.table({"user_id": [u for u in users if u in lists],
                             "items": [lists[u] for u in users if u in lists]}))
            for name, lists in (("a", a), ("b", b))]
    result = compare(rels, runs, test="randomization", per_user=True)
    d = result.per_user.column("ndcg@10 b-a").to_pylist()
    assert len(d) == len(users) and all(x != 0 for x in d)
    row = rows_of(result)["b"]
    assert row["p_value"] == hand_randomization(d) == {1: 1.0, 2: 0.5, 3: 0.75}[len(users)]
    assert row["note"].startswith("randomization p-value exact")
