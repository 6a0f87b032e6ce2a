"""Issue 29: no output may touch an input. Every file a run writes is compared with every file it
reads, by real path and by file identity, before any work (report/clashes.py): a clash is a
usage error naming both sides, and the input's bytes are as they were."""

import hashlib
import os

import pytest

import ndcg_duck
from test_traps import NESTED, RELS, invoke, make

EVAL = "Usage: ndcg-duck eval [OPTIONS] RECS [RELEVANCE]\nTry 'ndcg-duck eval --help' for help.\n\n"
COMPARE = ("Usage: ndcg-duck compare [OPTIONS] [RELEVANCE]\nTry 'ndcg-duck compare --help' for "
           "help.\n\n")
FILES = {
    "recs.parquet": NESTED, "rels.csv": RELS,
    "segs.csv": "user_id,group\nu1,a\nu2,b\n",
    "train.csv": "user_id,item_id\nu9,a\nu9,c\n",
    "items.csv": "item_id\na\nb\nc\n",
    "runs/a.parquet": NESTED, "runs/b.parquet": NESTED,
    "ds/part-0.parquet": NESTED, "ds/_SUCCESS": "",
    "recs.png": NESTED,  # a Parquet file under a picture's name, for --plot
}
PER_USER = ": write the per-user table elsewhere\n"

# id: (arguments, run in the files' folder {d}; the exact output, after the usage lines)
CLASHES = {
    "the recommendations file": (
        ["eval", "recs.parquet", "rels.csv", "--per-user", "recs.parquet"],
        EVAL + "Error: --per-user recs.parquet is the recommendations file RECS (recs.parquet)"
        + PER_USER),
    "the relevance file given as ./rels.csv": (
        ["eval", "recs.parquet", "./rels.csv", "--per-user", "rels.csv"],
        EVAL + "Error: --per-user rels.csv is the relevance file RELEVANCE (./rels.csv)"
        + PER_USER),
    "the relevance file by its absolute path": (
        ["eval", "recs.parquet", "rels.csv", "--per-user", "{d}/rels.csv"],
        EVAL + "Error: --per-user {d}/rels.csv is the relevance file RELEVANCE (rels.csv)"
        + PER_USER),
    "a symlink to the relevance file": (
        ["eval", "recs.parquet", "rels.csv", "--per-user", "symlink.csv"],
        EVAL + "Error: --per-user symlink.csv is the relevance file RELEVANCE (rels.csv)"
        + PER_USER),
    "a hard link to the relevance file": (
        ["eval", "recs.parquet", "rels.csv", "--per-user", "hardlink.csv"],
        EVAL + "Error: --per-user hardlink.csv is the relevance file RELEVANCE (rels.csv)"
        + PER_USER),
    "a file the glob matches": (
        ["eval", "runs/*.parquet", "rels.csv", "--per-user", "runs/b.parquet"],
        EVAL + "Error: --per-user runs/b.parquet is runs/b.parquet, matched by the "
        "recommendations glob RECS (runs/*.parquet)" + PER_USER),
    "inside an input directory": (
        ["eval", "ds", "rels.csv", "--per-user", "ds/users.parquet"],
        EVAL + "Error: --per-user ds/users.parquet is inside the recommendations directory RECS "
        "(ds)" + PER_USER),
    "the segments file, read after the per-user table is written": (
        ["eval", "recs.parquet", "rels.csv", "--segments", "segs.csv", "--by", "group",
         "--per-user", "segs.csv"],
        EVAL + "Error: --per-user segs.csv is the segments file --segments (segs.csv)"
        + PER_USER),
    "the --train file": (
        ["eval", "recs.parquet", "rels.csv", "-m", "novelty", "--train", "train.csv",
         "--per-user", "train.csv"],
        EVAL + "Error: --per-user train.csv is the train file --train (train.csv)" + PER_USER),
    "the --items file": (
        ["eval", "recs.parquet", "rels.csv", "-m", "coverage", "--items", "items.csv",
         "--per-user", "items.csv"],
        EVAL + "Error: --per-user items.csv is the items file --items (items.csv)" + PER_USER),
    "--per-item over the --train file": (
        ["eval", "recs.parquet", "rels.csv", "--train", "train.csv", "--per-item", "train.csv"],
        EVAL + "Error: --per-item train.csv is the train file --train (train.csv): write the "
        "per-item view elsewhere\n"),
    "compare's run file": (
        ["compare", "rels.csv", "--run", "a=runs/a.parquet", "--run", "b=runs/b.parquet",
         "--per-user", "runs/b.parquet"],
        COMPARE + "Error: --per-user runs/b.parquet is the recommendations file --run b "
        "(runs/b.parquet)" + PER_USER),
    "--plot over an input": (
        ["eval", "recs.png", "rels.csv", "--recs-format", "parquet", "--plot", "recs.png"],
        EVAL + "Error: --plot recs.png is the recommendations file RECS (recs.png): write the "
        "plot elsewhere\n"),
    # refused before Spark starts: no Spark session, so not a slow (spark-marked) test
    "spark: an output directory that holds the inputs": (
        ["eval", "recs.parquet", "rels.csv", "--engine", "spark", "--per-user", "./"],
        EVAL + "Error: --per-user ./ holds the recommendations file RECS (recs.parquet)"
        + PER_USER),
}


def folder_of_inputs(root):
    for name, content in FILES.items():
        make(root, name, content)
    os.symlink(root / "rels.csv", root / "symlink.csv")
    os.link(root / "rels.csv", root / "hardlink.csv")


def fingerprint(root) -> dict:
    """Every file under root and a hash of its bytes."""
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("args, output", list(CLASHES.values()), ids=list(CLASHES))
def test_an_output_over_an_input_is_refused(tmp_path, monkeypatch, args, output):
    folder_of_inputs(tmp_path)
    before = fingerprint(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke([arg.format(d=tmp_path) for arg in args])
    assert (result.exit_code, result.output) == (2, output.format(d=tmp_path))
    assert fingerprint(tmp_path) == before


def test_an_output_next_to_its_inputs_is_written(tmp_path, monkeypatch):
    folder_of_inputs(tmp_path)
    before = fingerprint(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke(["eval", "recs.parquet", "rels.csv", "--per-user", "users.csv"])
    assert result.exit_code == 0, result.output
    users = (tmp_path / "users.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in users] == ["user_id", "u1", "u2"]
    assert {k: v for k, v in fingerprint(tmp_path).items() if k != "users.csv"} == before


def test_compare_api_plot_over_an_input_is_refused(tmp_path, monkeypatch):
    folder_of_inputs(tmp_path)
    before = fingerprint(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ndcg_duck.InputError) as caught:
        ndcg_duck.compare("rels.csv", {"a": "runs/a.parquet", "b": "recs.png"},
                          recs_format="parquet", plot="recs.png")
    assert str(caught.value) == ("plot='recs.png' is the recommendations file runs['b'] "
                                 "(recs.png): write the plot elsewhere")
    assert caught.value.usage
    assert fingerprint(tmp_path) == before
