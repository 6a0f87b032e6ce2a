"""The default options must cost nothing for the optional steps: DuckDB's optimizer drops the
branches for tie averaging, judged-only and the gain map from the plan (they sit behind constant
conditions in sql/ndcg_core.sql and sql/ndcg_input.sql), and unique_judgments drops the grouping
that finds repeated judgments."""

import json
import re

import duckdb
import pyarrow as pa
import pytest

import ndcg_duck
from ndcg_duck import inputs
from ndcg_duck.evaluate import scores_sql
from ndcg_duck.options import Options

RECS = {
    "lists": pa.table({"user_id": [1], "items": [[1, 2]]}),
    "ranks": pa.table({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]}),
    "scores": pa.table({"user_id": [1, 1], "item_id": [1, 2], "score": [1.0, 1.0]}),
}
RELS = pa.table({"user_id": [1], "item_id": [1], "relevance": [1]})

# what each optional step puts in a plan: its windows and joins
MARKERS = {
    "ties": re.compile(r'rank\(\) over \(partition by user_id order by score', re.IGNORECASE),
    "judged_only": re.compile(r'partition by user_id, counts', re.IGNORECASE),
    "gain_map": re.compile(r'"conditions": "[^"]*relevance[^"]*"', re.IGNORECASE),
}
ENABLE = {"ties": {"ties": "average"}, "judged_only": {"judged_only": True},
          "gain_map": {"gain_map": "1=2"}}


def plan_text(layout, **options):
    con = duckdb.connect()
    ndcg_duck.register(con)
    inputs.load(con, RECS[layout], RELS, inputs.Columns())
    query = scores_sql(Options(k=[5, 10, "all"], **options), layout)
    plan = con.sql(f"EXPLAIN (FORMAT json) {query}").fetchall()[0][1]
    return json.dumps(json.loads(plan))


@pytest.mark.parametrize("layout", list(RECS))
def test_default_plan_has_no_optional_step(layout):
    text = plan_text(layout)
    for step, marker in MARKERS.items():
        assert not marker.search(text), f"the {step} branch is in the default plan"


@pytest.mark.parametrize("step", list(MARKERS))
def test_each_marker_finds_its_step(step):
    # the check above can fail: with the option on, its step is in the plan
    layout = "scores" if step == "ties" else "lists"
    assert MARKERS[step].search(plan_text(layout, **ENABLE[step]))


# the grouping of every (user, item) judgment that finds repeats: min and max of the relevance
REPEATS = re.compile(r'"Groups": \["#0", "#1"\], "Aggregates": \["min\(#2\)", "max\(#3\)"\]')


def test_unique_judgments_drops_the_repeat_check():
    assert REPEATS.search(plan_text("lists"))
    assert not REPEATS.search(plan_text("lists", unique_judgments=True))
