"""The default options must cost nothing for the optional steps: in the statements evaluate()
actually executes, DuckDB's optimizer drops the variants for tie averaging and judged-only (named
macros behind a dispatch on a constant condition in sql/ndcg_core.sql and sql/ndcg_input.sql),
and unique_judgments drops the signature that flags repeated judgments."""

import json
import re

import duckdb
import pyarrow as pa
import pytest

import ndcg_duck

RECS = {
    "lists": pa.table({"user_id": [1], "items": [[1, 2]]}),
    "ranks": pa.table({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]}),
    "scores": pa.table({"user_id": [1, 1], "item_id": [1, 2], "score": [1.0, 1.0]}),
}
RELS = pa.table({"user_id": [1], "item_id": [1], "relevance": [1]})

# what each optional step puts in a plan: the tie ranks' window; judged-only's mask, kept
MARKERS = {
    "ties": re.compile(r'rank\(\) over \(partition by user_id order by score', re.IGNORECASE),
    "judged_only": re.compile(r'"kept"'),
}
ENABLE = {"ties": {"ties": "average"}, "judged_only": {"judged_only": True}}
# the signature each user's judgments get, which flags the users that may repeat an item
REPEATS = re.compile(r'bitstring_agg\(')


SCORING = re.compile(r"(CREATE OR REPLACE TEMP TABLE|INSERT INTO) ")


class PlanRecorder:
    """A DuckDB connection for evaluate(con=...) that, before running each statement that scores
    users, records DuckDB's plan of it (EXPLAIN, JSON)."""

    def __init__(self, con):
        self._con, self.plans = con, []

    def execute(self, sql, *args, **kwargs):
        if isinstance(sql, str) and SCORING.match(sql) and "ndcg_user_scores(" in sql:
            plan = self._con.sql(f"EXPLAIN (FORMAT json) {sql}").fetchall()[0][1]
            self.plans.append(json.dumps(json.loads(plan)))
        return self._con.execute(sql, *args, **kwargs)

    def cursor(self):  # evaluate() works in a cursor of the connection it is given
        child = PlanRecorder(self._con.cursor())
        child.plans = self.plans
        return child

    def __getattr__(self, name):
        return getattr(self._con, name)


def plan_text(layout, **options):
    """The plans of the statements that score users in evaluate(), as one text."""
    recorder = PlanRecorder(duckdb.connect())
    ndcg_duck.evaluate(RECS[layout], RELS, k=[5, 10, "all"], per_user=False, con=recorder,
                       **options)
    assert recorder.plans, "evaluate() ran no statement that scores users"
    return "\n".join(recorder.plans)


@pytest.mark.parametrize("layout", list(RECS))
def test_default_plan_has_no_optional_step(layout):
    text = plan_text(layout)
    for step, marker in MARKERS.items():
        assert not marker.search(text), f"the {step} variant is in the default plan"


@pytest.mark.parametrize("step", list(MARKERS))
def test_each_marker_finds_its_step(step):
    # the check above can fail: with the option on, its step is in the plan
    layout = "scores" if step == "ties" else "lists"
    assert MARKERS[step].search(plan_text(layout, **ENABLE[step]))


def test_unique_judgments_drops_the_repeat_check():
    assert REPEATS.search(plan_text("lists"))
    assert not REPEATS.search(plan_text("lists", unique_judgments=True))
