"""trec_eval's own test suite through the CLI: every `ndcg` and `ndcg_cut_K` value, per query and
`all`, to the 4 decimals trec_eval prints. The files and the trec_eval command that made each are
in tests/data/trec_eval (see its README)."""

import csv

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from ndcg_duck.cutoffs import label, parse_cutoffs

DATA = ROOT / "tests" / "data" / "trec_eval"
TREC = ["--recs-format", "trec", "--rels-format", "trec"]

# trec_eval command -> (run, qrels, its output, the ndcg-duck flags that reproduce it).
# Without -c trec_eval leaves out queries absent from the run (--missing skip); with -c they
# score 0 (--missing zero, the default). -M100 is --max-depth 100.
SCENARIOS = {
    "plain": ("results.test", "qrels.test", "out.test.aq", ["-k", "trec,all", "--missing", "skip"]),
    "-c": ("results.trunc", "qrels.test", "out.test.aqc", ["-k", "trec,all", "--missing", "zero"]),
    "-c -M100": ("results.trunc", "qrels.test", "out.test.aqcM",
                 ["-k", "trec,all", "--max-depth", "100"]),
    "graded": ("results.test", "qrels.rel_level", "out.test.aql",
               ["-k", "trec,all", "--missing", "skip"]),
    "meas_params": ("results.test", "qrels.test", "out.test.meas_params",
                    ["-k", "10,20,23,all", "--missing", "skip", "--gain-map", "1=3,2=9,4=4.5"]),
}


def trec_eval_values(out_file):
    """The ndcg lines of a trec_eval output as {(query, cutoff label): printed value}; `ndcg` and
    the gain-mapped `ndcg_1=3,2=9,4=4.5` have no cutoff (label 'all')."""
    values = {}
    for line in (DATA / out_file).read_text(encoding="utf-8").splitlines():
        measure, query, value = line.split()
        if measure == "ndcg" or measure.startswith("ndcg_1="):
            values[(query, "all")] = value
        elif measure.startswith("ndcg_cut_"):
            values[(query, measure[len("ndcg_cut_"):])] = value
    return values


def trec_eval_queries(out_file):
    """trec_eval's num_q: how many queries its `all` averages."""
    for line in (DATA / out_file).read_text(encoding="utf-8").splitlines():
        measure, query, value = line.split()
        if measure == "num_q":
            return int(value)
    return None


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_reproduces_trec_eval(scenario, tmp_path):
    run, qrels, out_file, flags = SCENARIOS[scenario]
    want = trec_eval_values(out_file)
    labels = [label(k) for k in parse_cutoffs(flags[flags.index("-k") + 1])]
    assert set(labels) == {label for _, label in want}
    per_user = tmp_path / "per_query.csv"
    result = CliRunner().invoke(cli, ["eval", str(DATA / run), str(DATA / qrels), *TREC, *flags,
                                      "--per-user", str(per_user)], catch_exceptions=False)
    assert result.exit_code == 0, result.output

    # the summary: trec_eval's `all` values, and its num_q (out.test.meas_params has none: 3)
    users = trec_eval_queries(out_file) or 3
    rows = [(f"ndcg@{label}", want[("all", label)]) for label in labels] + [("users", str(users))]
    width = max(len(name) for name, _ in rows)
    text = "".join(f"{name:<{width}}  {value}\n" for name, value in rows)
    if run == "results.trunc":  # query 302 is in the qrels but not in this run
        text += "without recommendations: 1 user, scored 0\n"
    assert result.stdout == text

    # per query
    with open(per_user, encoding="utf-8") as handle:
        got = {(row["user_id"], label): f"{float(row[f'ndcg@{label}']):.4f}"
               for row in csv.DictReader(handle) for label in labels}
    assert got == {key: value for key, value in want.items() if key[0] != "all"}


def test_every_trec_eval_value_is_checked():
    # 3 queries + all, 10 measures (ndcg and 9 cutoffs) in four files, 4 in meas_params
    counts = {name: len(trec_eval_values(spec[2])) for name, spec in SCENARIOS.items()}
    assert counts == {"plain": 40, "-c": 40, "-c -M100": 40, "graded": 40, "meas_params": 16}
