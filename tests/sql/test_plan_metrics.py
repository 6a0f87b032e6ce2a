"""The metrics beside NDCG cost nothing for the steps they do not use: in the statement
evaluate() executes for them, the tie-averaging and judged-only variants are left out of the
plan unless asked for; and NDCG alone still runs the
core's statement, not the metrics'."""

import json

import duckdb
import pytest

import ndcg_duck
from test_plan import ENABLE, MARKERS, RECS, RELS, SCORING

EVERY = ["ndcg", "precision", "recall", "hit_rate", "mrr", "map", "r_precision", "num_rel_ret"]


class Recorder:
    """A connection for evaluate(con=...) that records the plan of each statement scoring users,
    and which macro it calls."""

    def __init__(self, con):
        self._con, self.plans, self.macros = con, [], []

    def execute(self, sql, *args, **kwargs):
        if isinstance(sql, str) and SCORING.match(sql):
            for macro in ("ndcg_user_scores(", "ndcg_user_metrics("):
                if macro in sql:
                    self.macros.append(macro[:-1])
            plan = self._con.sql(f"EXPLAIN (FORMAT json) {sql}").fetchall()[0][1]
            self.plans.append(json.dumps(json.loads(plan)))
        return self._con.execute(sql, *args, **kwargs)

    def cursor(self):  # evaluate() works in a cursor of the connection it is given
        child = Recorder(self._con.cursor())
        child.plans, child.macros = self.plans, self.macros
        return child

    def __getattr__(self, name):
        return getattr(self._con, name)


def recorded(layout, metrics, **options):
    recorder = Recorder(duckdb.connect())
    ndcg_duck.evaluate(RECS[layout], RELS, k=[5, 10], metrics=metrics, per_user=False,
                       con=recorder, **options)
    return recorder


@pytest.mark.parametrize("layout", list(RECS))
def test_default_metrics_plan_has_no_optional_step(layout):
    text = "\n".join(recorded(layout, EVERY).plans)
    for step, marker in MARKERS.items():
        assert not marker.search(text), f"the {step} variant is in the default plan"


@pytest.mark.parametrize("step", list(MARKERS))
def test_each_marker_finds_its_step_in_the_metrics_plan(step):
    assert MARKERS[step].search("\n".join(recorded("scores", EVERY, **ENABLE[step]).plans))


def test_ndcg_and_its_parts_run_the_cores_statement():
    assert recorded("lists", ["ndcg", "dcg@3", "idcg"]).macros == ["ndcg_user_scores"]
    assert recorded("lists", ["ndcg", "cg"]).macros == ["ndcg_user_metrics"]


def test_the_metrics_group_the_data_as_often_as_ndcg_alone():
    # the metrics read the core's per-user gains: with ties averaged or not, they group the data
    # no more often than NDCG alone does (no second pass to find each relevant item's own rank)
    def groupings(metrics, **options):
        return "\n".join(recorded("scores", metrics, **options).plans).count("HASH_GROUP_BY")
    assert groupings(EVERY) <= groupings(["ndcg"])
    assert groupings(EVERY, ties="average") <= groupings(["ndcg"], ties="average")
