"""Metric names: ranx's lowercase names out, ir_measures' and trec_eval's spellings in."""

import pytest

from ndcg_duck.errors import InputError
from ndcg_duck.metrics import METRICS, Measure, parse_metrics, per_user_columns


def names(values, ks=(10,)):
    return [measure.name for measure in parse_metrics(values, ks)]


@pytest.mark.parametrize("given, ks, want", [
    (None, (10,), ["ndcg@10"]),
    ("ndcg", (5, 10, None), ["ndcg@5", "ndcg@10", "ndcg@all"]),
    # ir_measures' spellings, any case
    ("nDCG@10", (5,), ["ndcg@10"]),
    ("NDCG@20", (5,), ["ndcg@20"]),
    ("P@10", (5,), ["precision@10"]),
    ("Precision@3", (5,), ["precision@3"]),
    ("R@10", (5,), ["recall@10"]),
    ("Recall@10", (5,), ["recall@10"]),
    ("Success@10", (5,), ["hit_rate@10"]),
    ("RR", (5,), ["mrr"]),
    ("RR@10", (5,), ["mrr@10"]),
    ("MRR@10", (5,), ["mrr@10"]),
    ("AP", (5,), ["map"]),
    ("AP@10", (5,), ["map@10"]),
    ("MAP@100", (5,), ["map@100"]),
    ("Rprec", (5,), ["r_precision"]),
    ("RPrec", (5,), ["r_precision"]),
    ("NumRel", (5,), ["num_rel"]),
    ("NumRelRet", (5,), ["num_rel_ret"]),
    ("NumRet", (5,), ["num_ret"]),
    ("SetP", (5,), ["set_precision"]),
    ("SetAP", (5,), ["set_map"]),
    ("SetF", (5,), ["set_f"]),
    ("set_P,set_relative_P,set_F,num_nonrel_judged_ret", (5,),
     ["set_precision", "set_relative_precision", "set_f", "num_nonrel_judged_ret"]),
    ("relative_P", (5, 10), ["relative_precision@5", "relative_precision@10"]),
    ("11pt_avg", (5,), ["iprec_11pt_avg"]),
    # ranx's and trec_eval's
    ("r-precision", (5,), ["r_precision"]),
    ("hit_rate@5", (10,), ["hit_rate@5"]),
    ("recip_rank", (10,), ["mrr"]),
    ("success", (1, 5), ["hit_rate@1", "hit_rate@5"]),
    # a name without @k takes the -k cutoffs; mrr and map without @k are uncut
    ("precision,recall", (5, 10), ["precision@5", "precision@10", "recall@5", "recall@10"]),
    ("mrr,map", (5, 10), ["mrr", "map"]),
    ("r_precision", (5, 10), ["r_precision"]),
    ("cg,dcg,idcg", (3,), ["cg@3", "dcg@3", "idcg@3"]),
    # 'all' means no cutoff
    ("map@all", (5,), ["map"]),
    ("recall", (None,), ["recall@all"]),
    ("hit_rate@ALL", (5,), ["hit_rate@all"]),
    # lists and repeats, spaces around names
    (["ndcg", "P@10", " mrr , RR "], (10,), ["ndcg@10", "precision@10", "mrr"]),
    (["map@5", "AP@5", "map"], (10,), ["map@5", "map"]),
])
def test_names(given, ks, want):
    assert names(given, ks) == want


def test_every_metric_has_its_name_as_an_input():
    for metric in METRICS:
        measure = parse_metrics(metric.name, (7,))[0]
        assert measure.metric == metric.name
        assert measure.name in (metric.name, f"{metric.name}@7")


@pytest.mark.parametrize("given, ks, message", [
    ("bleu@10", (10,), "unknown metric 'bleu@10': use one of ndcg, dcg, idcg, cg, precision, "
                       "recall, hit_rate, mrr, map, r_precision, num_rel, num_rel_ret, "
                       "judged, ncg, err, bpref, rbp, num_ret, num_nonrel_judged_ret, "
                       "set_precision, set_relative_precision, set_map, set_f, "
                       "relative_precision, iprec_11pt_avg, infap, rndcg, ndcg_rel, "
                       "rbp_resid, utility, unj, g, bing, gm_map, gm_bpref, coverage, gini, "
                       "entropy, novelty, popularity, tail, ild, coverage_count, personalization, "
                       "iprec_at_recall, rprec_mult (with @K for a cutoff)"),
    ("", (10,), "unknown metric '': use one of"),
    ("ndcg,,recall", (10,), "unknown metric '': use one of"),
    ("P(rel=2)@10", (10,), "unknown metric 'P(rel=2)@10'"),
    ("all_trec@5", (10,), "metric 'all_trec@5': all_trec names a set of measures with their own "
                          "cutoffs and takes no @K"),
    ("ndcg@0", (10,), "metric 'ndcg@0': the cutoff after @ is not an integer >= 1 or 'all'"),
    ("ndcg@x", (10,), "metric 'ndcg@x': the cutoff after @ is not an integer >= 1 or 'all'"),
    ("ndcg@", (10,), "metric 'ndcg@': the cutoff after @ is not an integer >= 1 or 'all'"),
    ("Rprec@10", (10,), "metric 'Rprec@10': r_precision takes no cutoff"),
    ("num_rel@5", (10,), "metric 'num_rel@5': num_rel takes no cutoff"),
    ("P@all", (10,), "metric 'P@all': precision divides by k and needs a cutoff, not 'all': "
                     "write precision@K"),
    ("precision", (10, None), "metric 'precision': precision divides by k and needs a cutoff, "
                              "not 'all': write precision@K"),
    ([3], (10,), "metric 3 is not a name"),
    ([], (10,), "no metric given"),
])
def test_bad_names_are_usage_errors(given, ks, message):
    with pytest.raises(InputError) as caught:
        parse_metrics(given, ks)
    assert str(caught.value).startswith(message)
    assert caught.value.usage


def test_ndcg_brings_its_parts_to_the_per_user_table():
    # as ndcg-duck has always written them: dcg@k, idcg@k, ndcg@k for each cutoff
    columns = per_user_columns(parse_metrics(["ndcg", "recall@5", "dcg@5"], (5, None)))
    assert [c.name for c in columns] == ["dcg@5", "idcg@5", "ndcg@5", "dcg@all", "idcg@all",
                                         "ndcg@all", "recall@5"]


def test_measure_names():
    assert Measure("mrr", None).name == "mrr"
    assert Measure("ndcg", None).name == "ndcg@all"
    assert Measure("map", 10).name == "map@10"


def test_evaluate_refuses_an_unknown_metric_before_reading_anything(tmp_path):
    import ndcg_duck
    with pytest.raises(InputError) as caught:
        ndcg_duck.evaluate(str(tmp_path / "missing.parquet"), str(tmp_path / "missing.csv"),
                           metrics=["ndcg", "bleu@10"])
    assert str(caught.value).startswith("unknown metric 'bleu@10': use one of ndcg, dcg")
    assert caught.value.usage


def test_all_trec_is_trec_eval_s_set_at_its_cutoffs():
    # trec_eval's all_trec nickname, whatever -k says: 7 whole-ranking measures, P, recall, ndcg,
    # map, relative_P at its 9 cutoffs, ndcg uncut, success_1,5,10, 6 set measures, rbp,
    # 11pt_avg, infAP, utility, binG, G, ndcg_rel, Rndcg, rbp_resid, unj_5,10,20, gm_map,
    # gm_bpref, iprec_at_recall at 11 levels, Rprec_mult at 10 multiples
    got = names("All_Trec", (7,))
    assert got[:8] == ["num_ret", "num_rel", "num_rel_ret", "map", "r_precision", "bpref", "mrr",
                       "precision@5"]
    assert len(got) == 7 + 5 * 9 + 1 + 3 + 6 + 1 + 1 + 7 + 3 + 2 + 11 + 10
    assert got[-33:-23] == ["infap", "utility", "bing", "g", "ndcg_rel", "rndcg", "rbp_resid",
                             "unj@5", "unj@10", "unj@20"]
    assert "hit_rate@5" in got and "ndcg@all" in got and "recall@all" in got
    assert not any(name.endswith("@7") for name in got)


def test_official_is_trec_eval_s_default_set():
    # trec_eval's measures.c off_names (what it prints without -m): num_ret, num_rel,
    # num_rel_ret, map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall at its 11 levels, P at
    # its 9 cutoffs, whatever -k says
    assert names("official", (7,)) == (
        ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "r_precision", "bpref", "mrr"]
        + [f"iprec_at_recall_{tenths / 10:.2f}" for tenths in range(11)]
        + [f"precision@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)])


@pytest.mark.parametrize("value, want", [
    # a family's name gives trec_eval's parameters; NAME_X, NAME@X or ir_measures' IPrec@X one
    ("IPrec@0.5", ["iprec_at_recall_0.50"]),
    ("iprec_at_recall_0.5,iprec_at_recall@0.50", ["iprec_at_recall_0.50"]),
    ("Rprec_mult_0.20", ["rprec_mult_0.20"]),
    ("rprec_mult@5", ["rprec_mult_5.00"]),
    ("Rprec_mult", [f"rprec_mult_{fifths / 5:.2f}" for fifths in range(1, 11)]),
    ("gm_map,GM_BPREF", ["gm_map", "gm_bpref"]),
])
def test_fractional_parameters(value, want):
    assert names(value, (3,)) == want


@pytest.mark.parametrize("value, message", [
    ("IPrec@1.5", "metric 'IPrec@1.5': the parameter of iprec_at_recall is a recall level from 0 "
                  "to 1, with at most 2 decimals"),
    ("iprec_at_recall_0.255", "metric 'iprec_at_recall_0.255': the parameter of iprec_at_recall "
                              "is a recall level from 0 to 1, with at most 2 decimals"),
    ("rprec_mult@x", "metric 'rprec_mult@x': the parameter of rprec_mult is a multiple of R, a "
                     "number >= 0, with at most 2 decimals"),
    ("rprec_mult@nan", "metric 'rprec_mult@nan': the parameter of rprec_mult is a multiple of R, "
                       "a number >= 0, with at most 2 decimals"),
])
def test_fractional_parameters_are_checked(value, message):
    with pytest.raises(InputError) as caught:
        names(value)
    assert str(caught.value) == message and caught.value.usage
