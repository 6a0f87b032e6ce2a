"""The beyond-accuracy metrics of lists without judgments (no relevance file) through `ndcg-duck
eval` and evaluate(): the values worked by hand with and without judgments (what changes is
which users' lists count), the summary line that says which, and docs/beyond-lists.md's examples
as printed. The usage errors are in tests/errors/test_bad_input.py's table."""

import math
import warnings
from pathlib import Path

import pytest

from ndcg_duck import NdcgWarning, evaluate
from test_cli import run

ROOT = Path(__file__).resolve().parents[2]
EX = "examples/beyond/"
ASKED = ["-k", "2", "-m", "coverage,gini,entropy,novelty", "--train", EX + "train.csv"]

# By hand (docs/beyond-lists.md): top 2 lists u1 (a, b), u2 (a, d), u3 (x); catalogue train's
# items {a, b, c, e}, n = 4; U = 3 train users, pop a 3, b 1, c 1, e 1, d 0, x 0; novelty of an
# item -log2((pop + 1) / 4): a 0, b 1, d 2, x 2; per user u1 0.5, u2 1, u3 2.
NOVELTY = {"u1": 0.5, "u2": 1.0, "u3": 2.0}


def entropy(counts):
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts)


def gini(counts, n):
    """Gini over the catalogue's n items: the shown counts, zeros for the rest."""
    c = sorted(list(counts) + [0] * (n - len(counts)))
    return sum((2 * j - n - 1) * x for j, x in enumerate(c, start=1)) / (n * sum(c))


def test_without_relevance_every_user_of_the_recommendations_counts():
    """No relevance file: u1, u2 and u3 count; a shown by u1 and u2 (c = 2), b by u1 (d and x
    outside the catalogue): coverage 2/4, gini 7/12, entropy of (2/3, 1/3), novelty 3.5/3."""
    result = run("eval", EX + "recs.json", *ASKED)
    assert result.exit_code == 0, result.output
    assert gini([2, 1], 4) == pytest.approx(7 / 12)
    assert result.stdout == (
        "coverage@2  0.5000\n"
        f"gini@2      {7 / 12:.4f}\n"
        f"entropy@2   {entropy([2, 1]):.4f}\n"
        f"novelty@2   {sum(NOVELTY.values()) / 3:.4f}\n"
        "users       3\n"
        "coverage@2, gini@2, entropy@2, novelty@2: counted the lists of every user of the "
        "recommendations (3 users; no relevance file)\n")
    assert result.stderr == (
        "Warning: 2 recommended items are not in the catalogue (the items of the train file "
        "examples/beyond/train.csv), e.g. item 'd': counted in no coverage, gini or entropy, "
        "and never in tail's head\n")


def test_with_relevance_the_evaluated_users_lists_count():
    """judged.csv judges u1 (a relevant) and u3 (x, relevance 0): u2 is only in the
    recommendations and its list goes: a and b shown once each, so gini 1/2, entropy 1 bit,
    novelty (0.5 + 2) / 2; the line names the list left out. With --empty skip u3 (ideal DCG 0)
    goes too: novelty 0.5."""
    result = run("eval", EX + "recs.json", EX + "judged.csv", *ASKED)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "coverage@2  0.5000\n"
        f"gini@2      {gini([1, 1], 4):.4f}\n"
        f"entropy@2   {entropy([1, 1]):.4f}\n"
        f"novelty@2   {(NOVELTY['u1'] + NOVELTY['u3']) / 2:.4f}\n"
        "users       2\n"
        "only in recommendations: 1 user, not evaluated\n"
        "ideal DCG 0 (nothing relevant): 1 user, scored 0\n"
        "coverage@2, gini@2, entropy@2, novelty@2: counted the lists of 2 evaluated users "
        "(judged, with recommendations); not the lists of 1 user only in the recommendations "
        "(--beyond-users recommended counts every user's list)\n")
    skipped = run("eval", EX + "recs.json", EX + "judged.csv", *ASKED, "--empty", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert skipped.stdout.splitlines()[3] == f"novelty@2   {NOVELTY['u1']:.4f}"
    assert skipped.stdout.splitlines()[-1] == (
        "coverage@2, gini@2, entropy@2, novelty@2: counted the lists of 1 evaluated user "
        "(judged, with recommendations); --empty skip left out the lists of 1 user whose ideal "
        "DCG is 0; not the lists of 1 user only in the recommendations (--beyond-users "
        "recommended counts every user's list)")


@pytest.mark.parametrize("how", ["left out", "None", "rels=None"])
def test_python_without_rels(how):
    """evaluate() without judgments, however rels is left out: every user of recs, per user
    too (a user whose list is empty has no novelty and is counted without one)."""
    import pyarrow as pa

    recs = pa.table({"user_id": ["u1", "u2", "u3", "u4"],
                     "items": [["a", "b", "c"], ["a", "d"], ["x"], []]})
    keywords = dict(metrics="coverage,novelty", train=EX + "train.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NdcgWarning)
        if how == "left out":
            result = evaluate(recs, k=2, **keywords)
        elif how == "None":
            result = evaluate(recs, None, 2, **keywords)
        else:
            result = evaluate(recs, rels=None, k=2, **keywords)
    assert result.summary == {"coverage@2": 0.5, "novelty@2": pytest.approx(3.5 / 3),
                              "users": 4, "users_without_novelty@2": 1}
    assert result.per_user.to_pylist() == [
        {"user_id": user, "novelty@2": NOVELTY.get(user)} for user in ("u1", "u2", "u3", "u4")]


def test_an_unjudged_item_twice_is_an_error_with_judgments_too(tmp_path):
    """An item twice in a list counted twice in the exposure when it had no judgment (the core
    stops on a judged repeat only): now the beyond-accuracy lists stop on any repeat, with or
    without a relevance file; --duplicates first keeps the first (gini of a, b once each)."""
    recs = tmp_path / "recs.json"
    recs.write_text('[{"user_id": "u1", "items": ["a", "b", "b"]}]')
    rels = tmp_path / "rels.csv"
    rels.write_text("user_id,item_id,relevance\nu1,a,1\n")
    message = (f"Error: recommendations file {recs}: user u1 ranks item b twice: remove the "
               f"repeat, or keep the first occurrence with --duplicates first\n")
    for judged in ([str(rels)], []):
        result = run("eval", str(recs), *judged, "-m", "gini", "--train", EX + "train.csv")
        assert (result.exit_code, result.stderr) == (1, message), judged
        kept = run("eval", str(recs), *judged, "-m", "gini", "--train", EX + "train.csv",
                   "--duplicates", "first")
        assert kept.stdout.splitlines()[0] == f"gini@10  {gini([1, 1], 4):.4f}", judged


def test_compare_without_relevance(tmp_path):
    """compare without judgments: each run over every user of its lists. Run b's top 2: u1 (c,
    b), u2 (e, d), u3 (b): c 1, b 2, e 1 of the catalogue, so coverage 3/4, gini of (0, 1, 1, 2)
    3/8; novelty u1 (1 + 1) / 2, u2 (1 + 2) / 2, u3 1; paired with run a's (NOVELTY)."""
    import ndcg_duck

    b = tmp_path / "b.json"
    b.write_text('[{"user_id": "u1", "items": ["c", "b", "a"]}, {"user_id": "u2", "items": '
                 '["e", "d"]}, {"user_id": "u3", "items": ["b"]}]')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NdcgWarning)
        result = ndcg_duck.compare(None, {"a": EX + "recs.json", "b": str(b)}, 2,
                                   metrics="coverage,gini,novelty", train=EX + "train.csv",
                                   min_users=1)
    got = {(row["metric"], row["run"]): (row["mean"], row["diff"], row["users"])
           for row in result.rows}
    novelty_b = {"u1": 1.0, "u2": 1.5, "u3": 1.0}
    diffs = [novelty_b[u] - NOVELTY[u] for u in NOVELTY]
    want = {("coverage", "a"): (0.5, None, 3), ("coverage", "b"): (0.75, 0.25, 3),
            ("gini", "a"): (7 / 12, None, 3), ("gini", "b"): (3 / 8, 3 / 8 - 7 / 12, 3),
            ("novelty", "a"): (3.5 / 3, None, 3),
            ("novelty", "b"): (sum(novelty_b.values()) / 3, sum(diffs) / 3, 3)}
    assert got.keys() == want.keys()
    for key, (mean, diff, users) in want.items():
        assert got[key][0] == pytest.approx(mean) and got[key][2] == users, key
        assert got[key][1] == (None if diff is None else pytest.approx(diff, abs=1e-12)), key
    assert gini([1, 2, 1], 4) == pytest.approx(3 / 8)
    refused = run("compare", "--run", f"a={EX}recs.json", "--run", f"b={b}", "-m", "ndcg")
    assert refused.exit_code == 2 and refused.stderr.endswith(
        "Error: ndcg@10 needs judgments: pass the relevance file (RELEVANCE), or ask only for "
        "beyond-accuracy metrics (coverage, gini, entropy, novelty, popularity, tail, ild, "
        "coverage_count, personalization), "
        "which read the lists alone\n")
    spark = run("compare", "--run", f"a={EX}recs.json", "--run", f"b={b}", "-m", "coverage",
                "--train", EX + "train.csv", "--engine", "spark")  # refused before Spark starts
    assert spark.exit_code == 2 and spark.stderr.endswith(
        "Error: the Spark engine needs the judgments (RELEVANCE): its workers score each bucket "
        "of users from their recommendations and judgments together; for the beyond-accuracy "
        "metrics of lists without judgments use the default engine (--engine duckdb, or "
        "ndcg_duck.evaluate)\n")
