"""Your own measure, in SQL (--metrics-sql FILE, metrics_sql=): a macro that re-implements
precision@k gives the plain-Python reference's precision per user (tests/reference/metrics.py)
and the built-in one's, with the exactly rounded mean, through eval, batches and compare."""

import random
from fractions import Fraction

import pyarrow as pa
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT
from reference.metrics import binary_metrics
from ndcg_duck.cli import cli

PREC = """-- precision@k again
CREATE MACRO ndcg_metric_prec(relevant_ranks, k) AS
    len(list_filter(relevant_ranks, lambda p: p <= k)) / k;
"""


@pytest.fixture
def macros(tmp_path):
    path = tmp_path / "mine.sql"
    path.write_text(PREC, encoding="utf-8")
    return path


def data(seed=7, users=12):
    """Random rankings and graded judgments: {user: ranking}, {user: {item: relevance}}."""
    rnd = random.Random(seed)
    rankings, judgments = {}, {}
    for u in range(users):
        items = [f"i{n}" for n in range(12)]
        rnd.shuffle(items)
        rankings[f"u{u}"] = items[:rnd.randint(0, 8)]
        judgments[f"u{u}"] = {item: rnd.choice([0, 0, 1, 2]) for item in rnd.sample(items, 6)}
    return rankings, judgments


def tables(rankings, judgments):
    recs = pa.table({"user_id": list(rankings), "items": list(rankings.values())},
                    schema=pa.schema([("user_id", pa.string()), ("items", pa.list_(pa.string()))]))
    rows = [(u, i, r) for u, judged in judgments.items() for i, r in judged.items()]
    rels = pa.table({"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                     "relevance": [r[2] for r in rows]})
    return recs, rels


def exact_mean(values):
    return float(sum(Fraction(v) for v in values) / len(values))


@pytest.mark.parametrize("batch_users", [None, 5])
def test_own_precision_is_the_references(macros, batch_users):
    rankings, judgments = data()
    recs, rels = tables(rankings, judgments)
    result = ndcg_duck.evaluate(recs, rels, k=[3, 5], metrics=["Prec", "P"], metrics_sql=macros,
                                batch_users=batch_users)
    rows = result.per_user.to_pylist()
    for k in (3, 5):
        want = {u: binary_metrics(rankings[u], judgments[u], k)["precision"] for u in rankings}
        assert {row["user_id"]: row[f"prec@{k}"] for row in rows} == want
        assert [row[f"prec@{k}"] for row in rows] == [row[f"precision@{k}"] for row in rows]
        assert result.summary[f"prec@{k}"] == exact_mean(want.values())
    assert list(result.summary)[:4] == ["prec@3", "prec@5", "precision@3", "precision@5"]


def test_own_measure_on_the_command_line(macros):
    args = ["eval", ROOT / "examples/recs.parquet", ROOT / "examples/relevance.csv",
            "--metrics-sql", macros, "-k", "5", "--format", "json"]
    own = CliRunner().invoke(cli, [str(a) for a in args + ["-m", "PREC"]])
    built_in = CliRunner().invoke(cli, [str(a) for a in args + ["-m", "P"]])
    assert own.exit_code == 0 and built_in.exit_code == 0, own.output
    assert own.output == built_in.output.replace('"precision@5"', '"prec@5"')


def test_own_measure_in_compare(macros):
    rankings, judgments = data()
    other, _ = data(seed=8)
    recs, rels = tables(rankings, judgments)
    recs_b, _ = tables(other, judgments)
    result = ndcg_duck.compare(rels, {"a": recs, "b": recs_b}, k=5, metrics=["prec", "P"],
                               metrics_sql=macros)
    ours = {(r["run"], r["segment"]): r for r in result.rows if r["metric"] == "prec"}
    theirs = {(r["run"], r["segment"]): r for r in result.rows if r["metric"] == "precision"}
    assert ours and ours.keys() == theirs.keys()
    for key, row in ours.items():
        assert {**row, "metric": "precision"} == theirs[key]
    want = exact_mean([binary_metrics(other[u], judgments[u], 5)["precision"] for u in other])
    assert ours[("b", "(all)")]["mean"] == want


def test_readme_example_prints_what_the_readme_shows():
    from test_docs_examples import example
    args, printed = example("# Your own measure, in SQL", "docs/own-measures.md")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and result.output == printed
    # by hand (examples/): the largest gain in each top 5 over the user's largest: ana 3/3, ben
    # 2/3, chloé 3/3, dev 0/2, fay 0 (no recommendations); prec@5 is the built-in precision@5
    lines = dict(line.split(None, 1) for line in printed.splitlines()[:3])
    assert lines["top_gain@5"] == f"{(1 + 2 / 3 + 1 + 0 + 0) / 5:.4f}"
    assert lines["prec@5"] == lines["precision@5"]
