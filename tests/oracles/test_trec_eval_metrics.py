"""trec_eval's own test suite through the CLI, for the metrics beside NDCG: every P_k, recall_k,
map, map_cut_k, recip_rank, success_k, Rprec, num_rel, num_rel_ret, num_ret,
num_nonrel_judged_ret, set_P, set_relative_P, set_map, set_F, 11pt_avg, relative_P_k,
iprec_at_recall_X and Rprec_mult_X value of the five (and gm_map and gm_bpref, which trec_eval
prints only in `all`: the geometric mean of map and bpref, each floored at 0.00001)
scenarios, per query and `all`, to the 4 decimals trec_eval prints (tests/data/trec_eval and its
README say which trec_eval command made each file).

What trec_eval does, read from its source (m_P.c, m_recall.c, m_map.c, m_map_cut.c,
m_recip_rank.c, m_success.c, m_Rprec.c, m_num_rel*.c, form_res_rels.c) and reproduced here:
relevant means relevance >= the level of -l (1 by default); R (num_rel) counts the relevant
judgments, ranked or not. num_ret is the documents ranked (after -M), num_nonrel_judged_ret those
judged >= 0 but not relevant; set_P, set_relative_P, set_map and set_F read the whole ranking
(m_set_*.c), relative_P_k is found(k) / min(k, R) (m_rel_P.c).
infAP, utility, binG, G, ndcg_rel, Rndcg, rbp_resid and unj_k are checked here too (m_infap.c,
m_utility.c, m_binG.c, m_G.c, m_ndcg_rel.c, m_Rndcg.c, m_rbp_resid.c, m_unjudged.c); trec_eval's
G, ndcg_rel and Rndcg read the relevance levels as gains whatever -l says, so they are run as
ndcg is, without --min-relevance (GAINED); utility_2,-1,0,0 is --utility-weights 2,-1,0,0.
P_k divides by k even when fewer than k documents are ranked; recall_k,
map and map_cut_k divide by R (0 when R is 0); Rprec is the relevant documents among the first R,
divided by R; recip_rank and success_k look only at ranked documents. A query without relevant
judgments is evaluated all the same and scores 0 (it still counts in `all`). With -c, a query of
the qrels that the run lacks scores 0 everywhere (its num_rel is still R) and counts in `all`;
num_rel, num_rel_ret, num_ret and num_nonrel_judged_ret are summed over queries in `all`, the
others averaged.
"""

import csv

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli

DATA = ROOT / "tests" / "data" / "trec_eval"
TREC = ["--recs-format", "trec", "--rels-format", "trec"]

# trec_eval command -> (run, qrels, its output, the ndcg-duck flags that reproduce it).
# Without -c trec_eval leaves out queries absent from the run (--missing skip); with -c they
# score 0 (--missing zero, the default). -M100 is --max-depth 100, -l2 is --min-relevance 2.
SCENARIOS = {
    "plain": ("results.test", "qrels.test", "out.test.aq", ["--missing", "skip"]),
    "-c": ("results.trunc", "qrels.test", "out.test.aqc", ["--missing", "zero"]),
    "-c -M100": ("results.trunc", "qrels.test", "out.test.aqcM", ["--max-depth", "100"]),
    "-l2": ("results.test", "qrels.rel_level", "out.test.aql",
            ["--missing", "skip", "--min-relevance", "2"]),
    "meas_params": ("results.test", "qrels.test", "out.test.meas_params", ["--missing", "skip"]),
}

# trec_eval's measure (without its _K cutoff) -> ndcg-duck's metric name
CUT = {"P": "precision", "recall": "recall", "map_cut": "map", "success": "hit_rate",
       "relative_P": "relative_precision"}
WHOLE = {"map": "map", "recip_rank": "mrr", "Rprec": "r_precision", "num_rel": "num_rel",
         "num_rel_ret": "num_rel_ret", "num_ret": "num_ret",
         "num_nonrel_judged_ret": "num_nonrel_judged_ret", "set_P": "set_precision",
         "set_relative_P": "set_relative_precision", "set_map": "set_map", "set_F": "set_f",
         "11pt_avg": "iprec_11pt_avg", "gm_map": "gm_map", "gm_bpref": "gm_bpref"}
WHOLE.update({"infAP": "infap", "utility": "utility", "binG": "bing", "G": "g",
              "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg", "rbp_resid": "rbp_resid",
              "utility_2,-1,0,0": "utility"})
CUT["unj"] = "unj"
# trec_eval's measures with a fractional parameter: iprec_at_recall_0.50, Rprec_mult_0.20
FRACTIONAL = {"iprec_at_recall": "iprec_at_recall", "Rprec_mult": "rprec_mult"}
COUNTS = ("num_rel", "num_rel_ret", "num_ret", "num_nonrel_judged_ret")
# the measures that read gains as ndcg does: trec_eval's ignore -l (run without --min-relevance)
GAINED = ("g", "ndcg_rel", "rndcg")
# trec_eval's measure parameters as ndcg-duck's options
PARAMETERS = {"out.test.meas_params": ["--utility-weights", "2,-1,0,0"]}


def ndcg_duck_name(measure):
    """trec_eval's measure name as ndcg-duck's (P_10 -> precision@10), or None."""
    if measure in WHOLE:
        return WHOLE[measure]
    base, _, k = measure.rpartition("_")
    if base in FRACTIONAL:
        return f"{FRACTIONAL[base]}_{k}"
    if base in CUT and k.isdigit():
        return f"{CUT[base]}@{k}"
    return None


def trec_eval_values(out_file):
    """{(query, ndcg-duck name): printed value} for the measures this test covers."""
    values = {}
    for line in (DATA / out_file).read_text(encoding="utf-8").splitlines():
        measure, query, value = line.split()
        name = ndcg_duck_name(measure)
        if name is not None:
            values[(query, name)] = value
    return values


def printed(name, value):
    """A value as trec_eval prints it: counts as integers, the rest to 4 decimals."""
    return str(int(value)) if name in COUNTS else f"{float(value):.4f}"


def without_min_relevance(flags):
    """The flags without --min-relevance and its value."""
    if "--min-relevance" not in flags:
        return flags
    at = flags.index("--min-relevance")
    return flags[:at] + flags[at + 2:]


@pytest.mark.parametrize("gained", [False, True], ids=["levels", "gains"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_reproduces_trec_eval(scenario, gained, tmp_path):
    run, qrels, out_file, flags = SCENARIOS[scenario]
    want = {key: value for key, value in trec_eval_values(out_file).items()
            if (key[1] in GAINED) == gained}
    if not want:
        pytest.skip("no such measure in this output")
    flags = (without_min_relevance(flags) if gained else flags) + PARAMETERS.get(out_file, [])
    names = sorted({name for _, name in want})
    per_user = tmp_path / "per_query.csv"
    result = CliRunner().invoke(cli, ["eval", str(DATA / run), str(DATA / qrels), *TREC, *flags,
                                      "-m", ",".join(names), "--per-user", str(per_user)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output

    # `all`: the summary table, one line per metric
    summary = dict(line.split() for line in result.output.splitlines()
                   if line.split()[0] in names)
    assert summary == {name: value for (query, name), value in want.items() if query == "all"}

    # per query (trec_eval prints gm_map and gm_bpref only in `all`)
    per_query = {name for query, name in want if query != "all"}
    with open(per_user, encoding="utf-8") as handle:
        got = {(row["user_id"], name): printed(name, row[name])
               for row in csv.DictReader(handle) for name in per_query}
    assert got == {key: value for key, value in want.items() if key[0] != "all"}


def test_every_trec_eval_value_is_checked():
    # 3 queries + all; 9 cutoffs each of P, recall, map_cut, relative_P, 3 of success, and map,
    # recip_rank, Rprec, num_rel, num_rel_ret, num_ret, num_nonrel_judged_ret, set_P,
    # set_relative_P, set_map, set_F, 11pt_avg, infAP, utility, binG, G, ndcg_rel, Rndcg,
    # rbp_resid, unj_5,10,20, iprec_at_recall at 11 levels, Rprec_mult at 10 multiples: 82
    # measures; gm_map and gm_bpref in `all` only; meas_params has P_3,5,7, recall_20,2000,
    # success_2,5,20, utility_2,-1,0,0, iprec_at_recall_0.10,0.20,0.25,0.50,0.75 and
    # Rprec_mult_0.20,0.35,5.00
    counts = {name: len(trec_eval_values(spec[2])) for name, spec in SCENARIOS.items()}
    assert counts == {"plain": 330, "-c": 330, "-c -M100": 330, "-l2": 330, "meas_params": 68}
