"""-m/--metric on the command line: the summary and --per-user carry one column per metric and
cutoff; the default stays ndcg; bad names are usage errors."""

import re
import json

import pyarrow.parquet as pq
import pytest

from conftest import ROOT
import reference
from reference import metrics as reference_metrics
from conftest import ROOT
from test_cli import RECS, RELS, example_truth, run


def example_metrics(k):
    """Each evaluated user's metrics at k on the example files, from the plain-Python reference
    (users without recommendations score 0, as --missing zero does)."""
    rankings, judgments = example_truth()
    return {user: reference_metrics.binary_metrics(rankings.get(user, []), judged, k)
            for user, judged in judgments.items()}


def mean(values):
    return sum(values) / len(values)


def test_table_summary_exact():
    result = run("eval", RECS, RELS, "-k", "5", "-m", "ndcg,P", "-m", "RR,Rprec,num_rel")
    at5, whole = example_metrics(5), example_metrics(None)
    ndcg = reference.mean_ndcg(reference.evaluate(*example_truth(), 5))
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"ndcg@5       {ndcg:.4f}\n"
        f"precision@5  {mean([m['precision'] for m in at5.values()]):.4f}\n"
        f"mrr          {mean([m['mrr'] for m in whole.values()]):.4f}\n"
        f"r_precision  {mean([m['r_precision'] for m in whole.values()]):.4f}\n"
        f"num_rel      {sum(m['num_rel'] for m in whole.values())}\n"
        "users        5\n"
        "without recommendations: 1 user, scored 0\n"
        "only in recommendations: 1 user, not evaluated\n")


def test_default_output_is_unchanged():
    assert run("eval", RECS, RELS, "-k", "5,10").output == run(
        "eval", RECS, RELS, "-k", "5,10", "-m", "ndcg").output


def test_json_summary_names_and_values():
    result = run("eval", RECS, RELS, "-k", "3,10", "-m", "recall,Success@1,map@3,map",
                 "--format", "json")
    summary = json.loads(result.output)
    assert list(summary) == ["recall@3", "recall@10", "hit_rate@1", "map@3", "map", "users",
                             "users_without_recommendations", "users_only_in_recommendations",
                             "users_with_zero_ideal_dcg"]
    for k in (3, 10):
        assert summary[f"recall@{k}"] == pytest.approx(
            mean([m["recall"] for m in example_metrics(k).values()]), rel=1e-12)
    assert summary["hit_rate@1"] == pytest.approx(
        mean([m["hit_rate"] for m in example_metrics(1).values()]), rel=1e-12)
    assert summary["map@3"] == pytest.approx(
        mean([m["map"] for m in example_metrics(3).values()]), rel=1e-12)
    assert summary["map"] == pytest.approx(
        mean([m["map"] for m in example_metrics(None).values()]), rel=1e-12)


def test_per_user_columns(tmp_path):
    out = tmp_path / "per_user.parquet"
    result = run("eval", RECS, RELS, "-k", "2,all", "-m", "ndcg,cg,recall,mrr@2,num_rel_ret",
                 "--per-user", str(out))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.column_names == ["user_id", "dcg@2", "idcg@2", "ndcg@2", "dcg@all", "idcg@all",
                                  "ndcg@all", "cg@2", "cg@all", "recall@2", "recall@all",
                                  "mrr@2", "num_rel_ret"]
    rankings, judgments = example_truth()
    for row in table.to_pylist():
        user = row["user_id"]
        want = reference_metrics.binary_metrics(rankings.get(user, []), judgments[user], 2)
        assert row["recall@2"] == pytest.approx(want["recall"], rel=1e-12)
        assert row["mrr@2"] == pytest.approx(want["mrr"], rel=1e-12)
        assert row["num_rel_ret"] == want["num_rel_ret"]
        gains = [judgments[user].get(item, 0) for item in rankings.get(user, [])]
        assert row["cg@2"] == pytest.approx(reference_metrics.cg(gains, 2), rel=1e-12)
        assert row["cg@all"] == pytest.approx(reference_metrics.cg(gains, None), rel=1e-12)


@pytest.mark.parametrize("flags, message", [
    (["-m", "bleu"], "Error: Invalid value for '-m' / '--metric': unknown metric 'bleu': use one "
                     "of ndcg, dcg, idcg, cg, precision, recall, hit_rate, mrr, map, r_precision, "
                     "num_rel, num_rel_ret, judged, ncg, err, bpref, rbp, num_ret, "
                     "num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, "
                     "set_f, relative_precision, iprec_11pt_avg, infap, rndcg, ndcg_rel, "
                     "rbp_resid, utility, unj, g, bing, gm_map, gm_bpref, coverage, gini, entropy, "
                     "novelty, popularity, tail, ild, coverage_count, personalization, "
                     "iprec_at_recall, rprec_mult (with @K for a cutoff)\n"),
    (["-m", "ndcg,"], "Error: Invalid value for '-m' / '--metric': unknown metric '': use one of "
                      "ndcg, dcg, idcg, cg, precision, recall, hit_rate, mrr, map, r_precision, "
                      "num_rel, num_rel_ret, judged, ncg, err, bpref, rbp, num_ret, "
                      "num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, "
                      "set_f, relative_precision, iprec_11pt_avg, infap, rndcg, ndcg_rel, "
                      "rbp_resid, utility, unj, g, bing, gm_map, gm_bpref, coverage, gini, "
                      "entropy, novelty, popularity, tail, ild, coverage_count, personalization, "
                      "iprec_at_recall, rprec_mult (with @K for a cutoff)\n"),
    (["-m", "P@0"], "Error: Invalid value for '-m' / '--metric': metric 'P@0': the cutoff after @ "
                    "is not an integer >= 1 or 'all'\n"),
    (["-m", "Rprec@5"], "Error: Invalid value for '-m' / '--metric': metric 'Rprec@5': "
                        "r_precision takes no cutoff\n"),
    (["-m", "precision", "-k", "all"], "Error: metric 'precision': precision divides by k and "
                                       "needs a cutoff, not 'all': write precision@K\n"),
])
def test_bad_metrics_are_usage_errors(flags, message):
    result = run("eval", RECS, RELS, *flags)
    assert result.exit_code == 2
    assert result.output.endswith(message)
    assert "Traceback" not in result.output


def test_help_says_which_options_each_metric_honours():
    text = " ".join(re.sub(r"-\n\s+", "-", run("eval", "--help").output).split())
    assert ("--gain, --gain-map, --idcg-cutoff and --ties average apply to ndcg, dcg, idcg, cg "
            "and ncg only; err reads grades 0-4 (gdeval's), judged any judgment") in text


def test_readme_metrics_example_prints_what_the_readme_shows():
    from test_docs_examples import example
    args, printed = example("# Metrics beside NDCG", "docs/metrics.md")
    result = run(*args)
    assert result.exit_code == 0
    assert result.output == printed


def test_readme_table_has_a_row_per_metric():
    from ndcg_duck.metrics import FAMILIES, METRICS
    from test_docs_examples import page
    table = page("docs/metrics.md").split("\n\n- ", 1)[0]
    # trec_eval's other measures have their tables on their own pages
    trec_b = page("docs/trec-eval-measures.md")
    table += trec_b.split("## The measures", 1)[1].split("\n\n", 2)[2]
    table += page("docs/trec-eval-official.md")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = [name.strip() for line in rows for name in line.split("|")[1].replace("`", "").split(",")]
    assert {name.split("@")[0] for name in named} == {metric.name for metric in METRICS
                                                      if not metric.needs} | {
        family.name for family in FAMILIES}
