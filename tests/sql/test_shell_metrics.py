"""The metrics beside NDCG through the real duckdb shell (door 1), and the worked CG example of
the source texts."""

import subprocess

import pyarrow as pa
import pytest

import ndcg_duck
from conftest import ROOT
from test_shell import SETUP, duckdb_binary, shell

# Jarvelin and Kekalainen (2002), "Cumulated gain-based evaluation of IR techniques", section
# 2.2: the gain vector G' = <3, 2, 3, 0, 0, 1, 2, 2, 3, 0, ...> gives the cumulated gain vector
# CG' = <3, 5, 8, 8, 8, 9, 11, 13, 16, 16, ...>: CG at rank p is the sum of the first p gains.
JK_GAINS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
JK_CG = [3, 5, 8, 8, 8, 9, 11, 13, 16, 16]
JK_SETUP = (
    "CREATE TABLE jk AS SELECT 'q' AS user_id, [" + ", ".join(f"'d{i}'" for i in range(1, 11))
    + "] AS items; CREATE TABLE jk_rels AS SELECT * FROM (VALUES "
    + ", ".join(f"('q', 'd{i}', {g})" for i, g in enumerate(JK_GAINS, 1))
    + ") t(user_id, item_id, relevance);\n")


def test_cg_worked_example_from_the_shell():
    query = " UNION ALL ".join(
        f"SELECT {p} AS p, value FROM ndcg_metrics_per_user('jk', 'jk_rels', k := {p}) "
        f"WHERE metric = 'cg@{p}'" for p in range(1, 11))
    rows = shell(JK_SETUP + f"SELECT value FROM ({query}) ORDER BY p;")
    assert [float(value) for (value,) in rows[1:]] == JK_CG


def test_found_reads_the_ends_of_the_ranks():
    # ndcg_found counts the sorted ranks <= k: all of them past the last, none above the first
    # (read off the list's ends), else by filtering; an empty or NULL list, or no k, counts 0.
    cases = [("[2, 5, 9]", k) for k in (1, 2, 6, 9, 100, "NULL")] + [("[]::BIGINT[]", 5),
                                                                       ("NULL::BIGINT[]", 5)]
    query = " UNION ALL ".join(f"SELECT {i} AS i, ndcg_found({ranks}, {k}) AS n"
                               for i, (ranks, k) in enumerate(cases))
    rows = shell(f"SELECT n FROM ({query}) ORDER BY i;")
    assert [int(n) for (n,) in rows[1:]] == [0, 1, 2, 3, 3, 0, 0, 0]

def test_cg_worked_example_from_python():
    recs = pa.table({"user_id": ["q"], "items": [[f"d{i}" for i in range(1, 11)]]})
    rels = pa.table({"user_id": ["q"] * 10, "item_id": [f"d{i}" for i in range(1, 11)],
                     "relevance": JK_GAINS})
    result = ndcg_duck.evaluate(recs, rels, k=list(range(1, 11)), metrics="cg")
    assert [result.summary[f"cg@{p}"] for p in range(1, 11)] == JK_CG


def test_metrics_mean_from_the_shell():
    # test_shell's data at k=2: q1 ranks b (1), a (3), both relevant; q2 ranks x, y, z with z
    # relevant (third); q3 has no recommendations (a = 2); q9 is not judged.
    rows = shell("SELECT metric, round(value, 4), users FROM ndcg_metrics_mean('recs', 'rels', "
                 "k := 2) ORDER BY metric;")
    assert rows[1:] == [
        ["bing", "0.5", "3"],             # q1: 1/log2(2) twice, / 2; q2: 1/log2(2 + 3 - 1); q3: 0
        ["bpref", "0.6667", "3"],         # q1, q2: no judged nonrelevant item above: 1; q3: 0
        ["cg@2", "1.3333", "3"],          # q1: 1 + 3
        ["dcg@2", "0.9643", "3"],         # q1: 1 + 3/log2(3) = 2.8928
        ["err@2", "0.0892", "3"],         # q1: 1/16 + (15/16) (7/16) / 2 = 0.267578125
        # q1: gains 1, 3, costs 3, 4: (1/log2(2 + 3 - 1) + 3/log2(2 + 4 - 4)) / 4 = 0.875; q2:
        # z at 3, costs 1, 1, 1: (1/log2(2 + 3 - 1)) / 1 = 0.5; q3: 0
        ["g", "0.4583", "3"],
        # geometric means, each user floored at 0.00001: bpref 1, 1, 0; map 1, 1/3, 0
        ["gm_bpref", "0.0215", "3"],      # (1 * 1 * 0.00001)^(1/3) = 0.021544
        ["gm_map", "0.0149", "3"],        # (1 * (1/3) * 0.00001)^(1/3) = 0.014938
        ["hit_rate@2", "0.3333", "3"],
        ["idcg@2", "2.2103", "3"],        # q1 3 + 1/log2(3) = 3.6309, q2 1, q3 2
        ["infap", "0.4444", "3"],         # q1: 1 and (1 + 1 (1 + e)/(1 + 2e)) / 2; q2: z: 1/3
        ["iprec_11pt_avg", "0.4444", "3"],  # q1: 1 at every recall; q2: 1/3 (its one hit); q3: 0
    ] + [[f"iprec_at_recall_{tenths / 10:.2f}", "0.4444", "3"]  # as 11pt_avg, at each level
         for tenths in range(11)] + [
        ["judged@2", "0.3333", "3"],      # q1: b and a; q2: x, y not judged
        ["map@2", "0.3333", "3"],         # q1: (1/1 + 2/2) / 2
        ["mrr@2", "0.3333", "3"],
        ["ncg@2", "0.3333", "3"],         # q1: (1 + 3) / (3 + 1); q2: 0 / 1; q3: 0 / 2
        ["ndcg@2", "0.2656", "3"],
        # q1: (1/3 + 2.8928/3.6309) / 2 = 0.5650; q2: DCG@3 0.5 / IDCG 1 = 0.5; q3: 0
        ["ndcg_rel", "0.355", "3"],
        ["num_nonrel_judged_ret", "0.0", "3"],  # no ranked item is judged 0
        ["num_rel", "4.0", "3"],          # 2 + 1 + 1, summed
        ["num_rel_ret", "3.0", "3"],      # 2 + 1 (z, third) + 0
        ["num_ret", "5.0", "3"],          # 2 + 3 + 0, summed
        ["precision@2", "0.3333", "3"],
        ["r_precision", "0.3333", "3"],   # q1: 2 of 2; q2: x is not z; q3: none
        ["rbp", "0.0681", "3"],           # q1: 0.1 (1/3 + 0.9 (3/3)); q2: 0.1 (0.81); q3: 0
        ["rbp_resid", "0.3063", "3"],     # q1: all judged: 0; q2: 0.9^3 + 0.1 (1 + 0.9); q3: 0
        ["recall@2", "0.3333", "3"],
        ["relative_precision@2", "0.3333", "3"],  # q1: 2 / min(2, R 2); q2: 0 / min(2, 1)
        # q1: nDCG at the ideal's level changes 1 and 2, 1/3 and 0.7967: 0.5650; q2: at 1, 0,
        # and (3 ranked >= 1 + 2) at the end, 0.5 / 1: 0.25; q3: 0
        ["rndcg", "0.2717", "3"],
        # rprec_mult_x: precision at c = floor(x R + 0.9): q1 (R 2, both ranked relevant)
        # c = 1, 1, 2, 2, 2, 3, 3, 4, 4, 4: 1 (five times), 2/3, 2/3, 1/2, 1/2, 1/2; q2 (R 1, z
        # third) c = 1 or 2: 0; q3: 0
        ["rprec_mult_0.20", "0.3333", "3"], ["rprec_mult_0.40", "0.3333", "3"],
        ["rprec_mult_0.60", "0.3333", "3"], ["rprec_mult_0.80", "0.3333", "3"],
        ["rprec_mult_1.00", "0.3333", "3"], ["rprec_mult_1.20", "0.2222", "3"],
        ["rprec_mult_1.40", "0.2222", "3"], ["rprec_mult_1.60", "0.1667", "3"],
        ["rprec_mult_1.80", "0.1667", "3"], ["rprec_mult_2.00", "0.1667", "3"],
        ["set_f", "0.5", "3"],            # q1: 1; q2: P 1/3, R 1: 2 (1/3) / (4/3) = 1/2; q3: 0
        ["set_map", "0.4444", "3"],       # q1: 2^2 / (2 2); q2: 1 / (3 1); q3: 0
        ["set_precision", "0.4444", "3"],  # q1: 2/2; q2: 1/3; q3 (nothing ranked): 0
        ["set_relative_precision", "0.6667", "3"],  # q1: 2 / min(2, 2); q2: 1 / min(3, 1); q3: 0
        ["unj@2", "0.3333", "3"],         # q2: x, y not judged: 2 / 2
        ["utility", "0.3333", "3"],       # q1: 2 - 0; q2: 1 - 2; q3 (no ranking): 0
    ]


def test_set_f_beta_from_the_shell():
    # beta 2: q1 P = R = 1: 1; q2 P 1/3, R 1: 3 (1/3) / (2/3 + 1) = 3/5; q3: 0
    rows = shell("WITH ranked AS (FROM ndcg_ranked_lists('recs')), judged AS "
                 "(FROM ndcg_judgments('rels')) SELECT user_id, value FROM ndcg_metric_scores("
                 "'ranked', 'judged', ks := [NULL], set_f_beta := 2) WHERE metric = 'set_f' "
                 "ORDER BY user_id;")
    assert [(user, float(value)) for user, value in rows[1:]] == [
        ("q1", 1.0), ("q2", pytest.approx(0.6, abs=1e-15)), ("q3", 0.0)]


@pytest.mark.parametrize("macro, recs", [("ndcg_metrics_mean_ranks", "recs_long"),
                                         ("ndcg_metrics_mean_scores", "recs_scored")])
def test_long_layouts_give_the_same_metrics(macro, recs):
    lists = shell("SELECT metric, value, users FROM ndcg_metrics_mean('recs', 'rels', k := 3, "
                  "judged_only := true, min_relevance := 2) ORDER BY metric;")
    assert shell(f"SELECT metric, value, users FROM {macro}('{recs}', 'rels', k := 3, "
                 f"judged_only := true, min_relevance := 2) ORDER BY metric;") == lists


def test_bad_relevance_stops_the_metric_macros():
    bad = "CREATE TABLE bad AS SELECT 'q1' AS user_id, 'a' AS item_id, 'nan'::DOUBLE AS relevance;\n"
    done = subprocess.run([duckdb_binary(), "-csv"], text=True, capture_output=True, cwd=ROOT,
                          input=SETUP + bad + "FROM ndcg_metrics_per_user('recs', 'bad');",
                          timeout=60)
    assert "ndcg-duck: relevance: user q1, item a has relevance nan: give a finite number" \
        in done.stderr


# judged@k, ncg@k and err@k by hand. User u: ranking a, b, c, f; judgments a 2, c 3, e 1, f 0
# (b is not judged, e not ranked). User v: judged, no ranking (every metric 0).
#   judged@2 = 1/2 (a), judged@3 = 2/3 (a, c), judged@10 = 3/4 (a, c, f of the 4 ranked)
#   ncg@2 = cg (2 + 0) / ideal cg (3 + 2) = 2/5, ncg@3 = ncg@10 = (2 + 3) / (3 + 2 + 1) = 5/6
#   err (gdeval: r = (2^g - 1) / 16): a r 3/16 at 1, c r 7/16 at 3:
#     err@2 = 3/16, err@3 = 3/16 + (13/16) (7/16) / 3 = 235/768
HAND_SETUP = (
    "CREATE TABLE hand AS SELECT 'u' AS user_id, ['a', 'b', 'c', 'f'] AS items; "
    "CREATE TABLE hand_rels AS SELECT * FROM (VALUES ('u', 'a', 2), ('u', 'c', 3), ('u', 'e', 1), "
    "('u', 'f', 0), ('v', 'x', 1)) t(user_id, item_id, relevance);\n")
HAND = {("u", 2): {"judged": 1 / 2, "ncg": 2 / 5, "err": 3 / 16},
        ("u", 3): {"judged": 2 / 3, "ncg": 5 / 6, "err": 235 / 768},
        ("u", 10): {"judged": 3 / 4, "ncg": 5 / 6, "err": 235 / 768}}


def test_judged_ncg_err_worked_example_from_the_shell():
    query = " UNION ALL ".join(
        f"SELECT user_id, metric, value FROM ndcg_metrics_per_user('hand', 'hand_rels', k := {k})"
        f" WHERE metric IN ('judged@{k}', 'ncg@{k}', 'err@{k}')" for k in (2, 3, 10))
    rows = shell(HAND_SETUP + f"SELECT * FROM ({query}) ORDER BY ALL;")
    got = {(user, metric): float(value) for user, metric, value in rows[1:]}
    want = {(user, f"{name}@{k}"): value for (user, k), values in HAND.items()
            for name, value in values.items()}
    want.update({("v", f"{name}@{k}"): 0.0 for name in ("judged", "ncg", "err")
                 for k in (2, 3, 10)})
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_judged_ncg_err_worked_example_from_python():
    recs = pa.table({"user_id": ["u"], "items": [["a", "b", "c", "f"]]})
    rels = pa.table({"user_id": ["u", "u", "u", "u", "v"], "item_id": ["a", "c", "e", "f", "x"],
                     "relevance": [2, 3, 1, 0, 1]})
    result = ndcg_duck.evaluate(recs, rels, k=[2, 3, 10], metrics=["Judged", "NCG", "ERR"])
    for (_, k), values in HAND.items():
        for name, value in values.items():  # the mean over u and v (0)
            assert result.summary[f"{name}@{k}"] == pytest.approx(value / 2, rel=1e-12)



@pytest.mark.parametrize("position_gains", [True, False])
def test_judged_ranked_items_by_position_or_from_the_judged_side(con, position_gains):
    # ndcg_user_gains over whole rankings finds the judged ranked items position by position,
    # or (position_gains false) from the judged side: the same lists, worked out by hand. u1
    # ranks the unjudged x twice (it gains nothing: no error) and leaves its judged z unranked;
    # u2 has no judgments, u3 no ranking, u4 an empty one.
    con.execute("CREATE TABLE recs AS SELECT * FROM (VALUES ('u1', ['a', 'x', 'b', 'x', 'c']), "
                "('u2', ['y']), ('u4', []::VARCHAR[])) t(user_id, items)")
    con.execute("CREATE TABLE rels AS SELECT * FROM (VALUES ('u1', 'c', 2), ('u1', 'z', 3), "
                "('u1', 'b', 0), ('u1', 'a', 1), ('u3', 'd', 1), ('u4', 'e', 1)) "
                "t(user_id, item_id, relevance)")
    con.execute("CREATE TABLE ranked AS FROM ndcg_ranked_lists('recs')")
    con.execute("CREATE TABLE judged AS FROM ndcg_judgments('rels')")
    rows = con.sql(f"""
        SELECT user_id, length, judged_ranks, judged_gains, judged_relevances, relevant_ranks,
               nonrelevant_ranks, typeof(judged_ranks), gains
        FROM ndcg_user_gains('ranked', 'judged', position_gains := {position_gains})
        ORDER BY user_id""").fetchall()
    gains = {"u1": [1.0, 0.0, 0.0, 0.0, 2.0], "u2": [0.0], "u3": [], "u4": []}
    assert rows == [
        (user, length, ranks, judged_gains, levels, relevant, nonrelevant, "BIGINT[]",
         gains[user] if position_gains else None)
        for user, length, ranks, judged_gains, levels, relevant, nonrelevant in [
            ("u1", 5, [1, 3, 5], [1.0, 0.0, 2.0], [1, 0, 2], [1, 5], [3]),
            ("u2", 1, [], [], [], [], []),
            ("u3", 0, [], [], [], [], []),
            ("u4", 0, [], [], [], [], [])]]
