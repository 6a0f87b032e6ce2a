"""--format trec against trec_eval's own output files (tests/data/trec_eval, see its README): for
the measures ndcg-duck computes, the lines it prints are trec_eval's lines for them, byte for byte and
in trec_eval's order: per query with --per-user - (as trec_eval -q), then the `all` lines."""

import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from test_trec_eval_ndcg import DATA, TREC

CUTS = "5,10,15,20,30,100,200,500,1000"
COUNTING = ("num_rel,num_rel_ret,map,Rprec,bpref,recip_rank,recall@all,rbp,"
            "num_ret,num_nonrel_judged_ret,set_P,set_relative_P,set_map,SetF,11pt_avg,"
            + ",".join(f"{name}@{k}" for name in ("P", "recall", "map", "relative_P")
                       for k in CUTS.split(","))
            + ",success@1,success@5,success@10"
            + ",infAP,utility,binG,rbp_resid,unj@5,unj@10,unj@20")
NDCG = "ndcg@all," + ",".join(f"ndcg@{k}" for k in CUTS.split(",")) + ",G,ndcg_rel,Rndcg"

# trec_eval's output file -> the run, the qrels and ndcg-duck's flags for its command
SCENARIOS = {
    "out.test.aq": ("results.test", "qrels.test",
                    ["--missing", "skip", "-m", f"{NDCG},{COUNTING}"]),
    "out.test.aqc": ("results.trunc", "qrels.test", ["-m", f"{NDCG},{COUNTING}"]),  # -c
    "out.test.aqcM": ("results.trunc", "qrels.test",
                      ["--max-depth", "100", "-m", f"{NDCG},{COUNTING}"]),
    # -l2: the measures that count relevant items (trec_eval's ndcg ignores -l)
    "out.test.aql": ("results.test", "qrels.rel_level",
                     ["--missing", "skip", "--min-relevance", "2", "-m", COUNTING]),
    "out.test.meas_params": ("results.test", "qrels.test",
                             ["--missing", "skip", "--gain-map", "1=3,2=9,4=4.5",
                              "--utility-weights", "2,-1,0,0", "-m",
                              "ndcg@all,P@3,P@5,P@7,recall@20,recall@2000,success@2,success@5,"
                              "success@20,utility"]),
}


def trec_format(run, qrels, flags, per_user=True):
    args = ["eval", str(DATA / run), str(DATA / qrels), *TREC, *flags, "--format", "trec"]
    result = CliRunner().invoke(cli, args + (["--per-user", "-"] if per_user else []),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def name(line):
    return line.split("\t")[0].rstrip()


@pytest.mark.parametrize("out_file", list(SCENARIOS))
def test_prints_trec_eval_lines(out_file):
    run, qrels, flags = SCENARIOS[out_file]
    ours = trec_format(run, qrels, flags)
    theirs = (DATA / out_file).read_text(encoding="utf-8").splitlines()
    printed = {name(line) for line in ours}
    assert printed <= {name(line) for line in theirs} | {"runid", "num_q"}
    assert [line for line in theirs if name(line) in printed] == [
        line for line in ours if name(line) not in ("runid", "num_q")
        or out_file != "out.test.meas_params"]  # made with -m only: no runid or num_q
    assert len(ours) > 30


def test_without_per_user_only_the_all_lines():
    run, qrels, flags = SCENARIOS["out.test.aq"]
    ours = trec_format(run, qrels, flags, per_user=False)
    theirs = (DATA / "out.test.aq").read_text(encoding="utf-8").splitlines()
    assert ours[:2] == ["runid                 \tall\tSTANDARD", "num_q                 \tall\t3"]
    assert ours == [line for line in theirs if line.split("\t")[1] == "all"
                    and name(line) in {name(line) for line in ours}]


def test_a_compressed_run_keeps_its_tag_as_runid(tmp_path):
    """runid is the run's tag whether the run is compressed or not (gzip's bytes are no line),
    and a compressed run or qrels is told by its first lines as a plain one: the same lines as
    for the plain files."""
    import gzip
    import shutil
    import subprocess

    run, qrels, flags = SCENARIOS["out.test.aq"]
    packed = tmp_path / "results.test.gz"
    packed.write_bytes(gzip.compress((DATA / run).read_bytes()))
    plain = trec_format(run, qrels, flags, per_user=False)
    assert trec_format(packed, qrels, flags, per_user=False) == plain
    assert plain[0] == "runid                 \tall\tSTANDARD"
    # and told by their first lines, without --recs-format and --rels-format, as the plain files
    judged = tmp_path / "qrels.zst"
    done = subprocess.run(["zstd", "-q", "-o", str(judged), str(DATA / qrels)]) \
        if shutil.which("zstd") else None
    if not done or done.returncode:
        judged = tmp_path / "qrels.gz"
        judged.write_bytes(gzip.compress((DATA / qrels).read_bytes()))
    result = CliRunner().invoke(cli, ["eval", str(packed), str(judged), *flags, "--format", "trec"])
    assert (result.exit_code, result.stdout.splitlines()) == (0, plain), result.output


def test_trec_eval_s_names_follow_the_parameters():
    # rbp_resid with another p and utility with other weights take trec_eval's NAME_PARAMS; G,
    # ndcg_rel and Rndcg read gains as ndcg does: with --min-relevance (trec_eval's ignore -l)
    # they are not trec_eval's and keep ndcg-duck's names, after trec_eval's measures
    ours = trec_format("results.test", "qrels.test",
                       ["--missing", "skip", "--min-relevance", "1", "--rbp-p", "0.8",
                        "--utility-weights", "2,-1,0.5,0", "-m", "g,Rndcg,rbp_resid,utility,unj@7"],
                       per_user=False)
    assert [name(line) for line in ours] == ["runid", "num_q", "utility_2,-1,0.5,0",
                                             "rbp_resid_p=0.8", "unj_7", "g", "rndcg"]


def test_measures_trec_eval_computes_otherwise_keep_their_names(tmp_path):
    # with --gain exponential trec_eval's ndcg_cut_10 is not ndcg@10; err has no trec_eval name:
    # both follow trec_eval's measures, under ndcg-duck's names, in the order asked
    ours = trec_format("results.test", "qrels.test",
                       ["--missing", "skip", "--gain", "exponential", "-m", "err@20,ndcg@10,P@5"],
                       per_user=False)
    assert [name(line) for line in ours] == ["runid", "num_q", "P_5", "err@20", "ndcg@10"]
    assert all(line.split("\t")[2].startswith("0.") and len(line.split("\t")[2]) == 6
               for line in ours[2:])


# trec_eval's all_trec measures that ndcg-duck does not compute yet (metrics.NICKNAMES)
NOT_YET = {"relstring"}


@pytest.mark.parametrize("out_file", ["out.test.aq", "out.test.aqc", "out.test.aqcM"])
def test_all_trec_prints_trec_eval_lines(out_file):
    # -m all_trec: trec_eval's lines for every measure of its set that ndcg-duck has, in its
    # order; what is left out is only what ndcg-duck does not compute yet
    run, qrels, flags = SCENARIOS[out_file]
    flags = flags[:-2] + ["-m", "all_trec"]  # the scenario's flags but its -m NAMES
    ours = trec_format(run, qrels, flags)
    theirs = (DATA / out_file).read_text(encoding="utf-8").splitlines()
    printed = {name(line) for line in ours}
    assert [line for line in theirs if name(line) in printed] == ours
    missed = {name(line) for line in theirs} - printed
    assert {measure.rstrip("_0123456789.") for measure in missed} == NOT_YET


def test_official_prints_trec_eval_s_default_set():
    # -m official: the lines trec_eval prints with no -m (measures.c off_names: runid, num_q,
    # num_ret, num_rel, num_rel_ret, map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P),
    # byte for byte from out.test.aq (made with -m all_trec -q, a superset); gm_map in `all` only
    official = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                "bpref", "recip_rank", "iprec_at_recall", "P")
    ours = trec_format("results.test", "qrels.test", ["--missing", "skip", "-m", "official"])
    theirs = (DATA / "out.test.aq").read_text(encoding="utf-8").splitlines()
    assert ours == [line for line in theirs
                    if name(line).rstrip("_0123456789.") in official]
    assert sum(name(line) == "gm_map" for line in ours) == 1
