"""Activity cohorts (--by user-activity, issue 33) on a worked example: the groups are found by
hand from the train counts, and each group's NDCG@3 is the mean of the plain-Python reference's
per-user NDCG (tests/reference) over the users the hand-made grouping puts there."""

import json

import pytest
from click.testing import CliRunner

import reference
from reference import metrics
from ndcg_duck.cli import cli

# train rows per user: u1 1, u2 2, u3 3, u4 10, u6 4 (u6 is not judged); u5 is not in train: cold
TRAIN = {"u1": 1, "u2": 2, "u3": 3, "u4": 10, "u6": 4}
RANKINGS = {"u1": ["a", "b", "c"], "u2": ["d", "a", "e"], "u3": ["x", "y", "f"],
            "u4": ["g", "h", "i"], "u5": ["j", "k", "l"], "u6": ["a"]}
JUDGMENTS = {"u1": {"b": 2, "c": 1}, "u2": {"a": 1}, "u3": {"f": 3, "z": 1},
             "u4": {"g": 1, "h": 1}, "u5": {"m": 1}}
# --activity-cuts 2,4,10: 1 | 2-3 | 4-9 (u6 only, not evaluated) | 10+; u5 cold. Shown in the
# order of the counts (by name, 10+ would come before 2-3)
BY_CUTS = {"1": ["u1"], "2-3": ["u2", "u3"], "10+": ["u4"], "cold": ["u5"]}
# --groups 2: the train users' counts 1, 2, 3, 4, 10; the smallest count that at least half of
# them have or fewer is 3, so the groups are 1-3 and 4+
BY_HALVES = {"1-3": ["u1", "u2", "u3"], "4+": ["u4"], "cold": ["u5"]}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "train.csv").write_text(
        "user_id,item_id\n" + "".join(f"{user},t{i}\n" for user, n in TRAIN.items()
                                      for i in range(n)))
    (tmp_path / "recs.csv").write_text(
        "user_id,item_id,rank\n" + "".join(f"{user},{item},{rank}\n"
                                           for user, items in RANKINGS.items()
                                           for rank, item in enumerate(items, start=1)))
    (tmp_path / "rels.csv").write_text(
        "user_id,item_id,relevance\n" + "".join(f"{user},{item},{rel}\n"
                                                for user, judged in JUDGMENTS.items()
                                                for item, rel in judged.items()))
    return tmp_path


def expected(groups: dict, rankings=RANKINGS) -> dict:
    per_user = reference.evaluate(rankings, JUDGMENTS, 3)
    found = {"(all)": (len(per_user), reference.mean_ndcg(per_user))}
    for name, users in groups.items():
        found[name] = (len(users), reference.mean_ndcg({u: per_user[u] for u in users}))
    return found


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("choice, groups", [(["--activity-cuts", "2,4,10"], BY_CUTS),
                                            (["--groups", "2"], BY_HALVES)])
def test_eval_by_user_activity_matches_the_reference(files, choice, groups):
    shown = json.loads(run("eval", files / "recs.csv", files / "rels.csv", "-k", "3", "--train",
                           files / "train.csv", "--by", "user-activity", *choice,
                           "--format", "json"))
    got = {row["segment"]: (row["users"], row["ndcg@3"]) for row in shown["segments"]}
    want = expected(groups)
    assert list(got) == list(want)  # ranges by their counts, cold last
    for name, (users, mean) in want.items():
        assert got[name][0] == users and got[name][1] == pytest.approx(mean, abs=1e-12), name


def test_compare_by_user_activity_matches_the_reference(files):
    # run b ranks each user's list backwards
    backwards = {user: items[::-1] for user, items in RANKINGS.items()}
    (files / "b.csv").write_text(
        "user_id,item_id,rank\n" + "".join(f"{user},{item},{rank}\n"
                                           for user, items in backwards.items()
                                           for rank, item in enumerate(items, start=1)))
    rows = json.loads(run("compare", files / "rels.csv", "--run", f"a={files / 'recs.csv'}",
                          "--run", f"b={files / 'b.csv'}", "-k", "3", "--train",
                          files / "train.csv", "--by", "user-activity", "--activity-cuts",
                          "2,4,10", "--format", "json"))
    want = {"a": expected(BY_CUTS), "b": expected(BY_CUTS, backwards)}
    assert [(r["segment"], r["run"]) for r in rows] == [
        (segment, run) for segment in want["a"] for run in "ab"]
    for r in rows:
        users, mean = want[r["run"]][r["segment"]]
        assert r["users"] == users and r["mean"] == pytest.approx(mean, abs=1e-12)
        if r["run"] == "b":
            assert r["diff"] == pytest.approx(mean - want["a"][r["segment"]][1], abs=1e-12)


def test_the_macros_group_the_train_users_as_by_hand(con, files):
    con.execute(f"CREATE TABLE train AS FROM '{files / 'train.csv'}'")
    cuts = dict(con.sql("FROM ndcg_user_activity('train', [2, 4, 10])").fetchall())
    (halves,), = con.sql("FROM ndcg_activity_quantiles('train', 2)").fetchall()
    assert cuts == {"u1": "1", "u2": "2-3", "u3": "2-3", "u4": "10+", "u6": "4-9"}
    assert halves == [4]


# --by item-popularity: each item's train users (pop): a 4, b 3, f 2, g 2, c 1, h 1; other items
# none. --head-share 0.5: the head is 3 of the 6 train items, a, b, and of f and g (tied at 2)
# the first by id, f. --groups 2: the smallest pop that at least half of the items have or
# fewer is 2, so the groups are 1-2 (c, f, g, h) and 3+ (a, b); items no train user has: cold
POP = {"a": 4, "b": 3, "f": 2, "g": 2, "c": 1, "h": 1}
HEAD_TAIL = {"head": {"a", "b", "f"}}, "tail"
HALVES = {"3+": {"a", "b"}, "1-2": {"c", "f", "g", "h"}}, "cold"


def expected_by_items(groups, others):
    """Per group: the users with a relevant item in it, and the means of ndcg@3, precision@3
    and recall@3 over the judgments of its items only (the plain-Python references)."""
    def group(item):
        return next((name for name, items in groups.items() if item in items), others)

    found = {}
    for name in [*groups, others]:
        values = []
        for user, judged in JUDGMENTS.items():
            mine = {item: rel for item, rel in judged.items() if group(item) == name}
            if not any(rel > 0 for rel in mine.values()):
                continue
            counted = metrics.binary_metrics(RANKINGS[user], mine, 3)
            values.append((reference.user_scores(RANKINGS[user], mine, 3)[2],
                           counted["precision"], counted["recall"]))
        shown = [item for user in JUDGMENTS for item in RANKINGS[user][:3]]
        found[name] = (len(values), *[sum(v[i] for v in values) / len(values) if values else None
                                      for i in range(3)],
                       sum(group(item) == name for item in shown) / len(shown))
    return found


@pytest.mark.parametrize("choice, groups, order", [
    (["--head-share", "0.5"], HEAD_TAIL, ["head", "tail"]),
    (["--groups", "2"], HALVES, ["1-2", "3+", "cold"])])
def test_eval_by_item_popularity_matches_the_reference(files, choice, groups, order):
    (files / "plays.csv").write_text("user_id,item_id\n" + "".join(
        f"p{n},{item}\n" for item, pop in POP.items() for n in range(pop)))
    shown = json.loads(run("eval", files / "recs.csv", files / "rels.csv", "-k", "3", "-m",
                           "ndcg,precision,recall", "--train", files / "plays.csv", "--by",
                           "item-popularity", *choice, "--format", "json"))
    got = {row["segment"]: (row["users"], row["ndcg@3"], row["precision@3"], row["recall@3"],
                            row["exposure@3"]) for row in shown["segments"][1:]}
    want = expected_by_items(*groups)
    assert list(got) == order and sorted(got) == sorted(want)
    for name, values in want.items():
        assert got[name][0] == values[0], name
        assert got[name][1:] == pytest.approx(values[1:], abs=1e-12), name


def test_item_popularity_compares_integer_and_text_ids_as_text(tmp_path):
    # judged and ranked item ids are integers, train's text (x): compared as text. The head is
    # 1 (2 train users) of the 3 train items; u1's relevant 2 is in no train row: tail
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\nu1,1,1\nu1,2,2\nu2,3,1\n")
    (tmp_path / "recs.csv").write_text("user_id,item_id,rank\nu1,1,1\nu1,3,2\nu2,3,1\n")
    (tmp_path / "train.csv").write_text("user_id,item_id\np1,1\np2,1\np3,3\np4,x\n")
    rows = json.loads(run("eval", tmp_path / "recs.csv", tmp_path / "rels.csv", "-k", "2", "-m",
                          "ndcg,recall", "--train", tmp_path / "train.csv", "--by",
                          "item-popularity", "--head-share", "0.34", "--format", "json"))
    got = {row["segment"]: (row["users"], row["ndcg@2"], row["recall@2"], row["exposure@2"])
           for row in rows["segments"][1:]}
    # head: u1 finds 1 at rank 1; tail: u1 has 2 unranked (0), u2 finds 3 at rank 1 (1);
    # of the 3 places shown (u1: 1, 3; u2: 3) one holds the head
    assert got == {"head": (1, 1.0, 1.0, pytest.approx(1 / 3)),
                   "tail": (2, 0.5, 0.5, pytest.approx(2 / 3))}
