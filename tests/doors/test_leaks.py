"""What would mislead, through the CLI and the Python API (issue 33, points 3 and 5): recommended
items seen in train counted and warned about, --exclude-seen, tied scores counted with the rule
named, and --per-item's view; every number from the worked example in WORKED's comment."""

import csv
import re
import shlex
import subprocess
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ndcg_duck
from ndcg_duck import NdcgWarning
from ndcg_duck.cli import cli
from conftest import ROOT
from test_shell import duckdb_binary

# u1 scores a 0.9, b 0.8, c 0.7 and had a and b in train; u2 scores d 0.5, e 0.5, f 0.1 (d and e
# tie: trec_eval's order e, d) and had d. u1 finds c relevant, u2 f. At k = 1:
# - as given: u1 is shown a (seen in train), u2 e (d, seen, is second): NDCG@1 0 for both;
#   1 user shown 1 seen item (u1, a); 1 tied item (u2's e, tied with d at place 2) of 1 user.
# - --exclude-seen: u1's ranking is c, u2's e, f: u1's c is a hit (NDCG@1 1), u2's e is not: 0.5.
WORKED = {
    "recs.csv": "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\n"
                "u2,d,0.5\nu2,e,0.5\nu2,f,0.1\n",
    "rels.csv": "user_id,item_id,relevance\nu1,c,1\nu2,f,1\n",
    "train.csv": "user_id,item_id\nu1,a\nu1,b\nu2,d\n",
}
SEEN = ("Warning: 1 evaluated user was recommended items they have in the train file "
        "{d}/train.csv among their first 1 items (1 item; e.g. user 'u1', item 'a'): ")
KEPT = ("they count as recommended; --exclude-seen takes them out before the cut at k, as most "
        "recommender libraries evaluate\n")
DROPPED = ("--exclude-seen took them out of the rankings before the cut at k (the items below "
           "moved up)\n")
TIED = ("Warning: 1 recommended item shares its score with another item of 1 user among their "
        "first 1 items (e.g. user 'u2'): ordered by item id, descending as text (trec_eval's "
        "rule; --ties average gives ndcg, dcg, idcg, cg and ncg each tied item's mean discount "
        "instead)\n")


@pytest.fixture
def worked(tmp_path):
    for name, text in WORKED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def test_seen_items_and_ties_are_warned_about(worked):
    result = run("eval", worked / "recs.csv", worked / "rels.csv", "-k", "1",
                 "--train", worked / "train.csv")
    assert result.exit_code == 0, result.output
    assert result.stderr == SEEN.format(d=worked) + KEPT + TIED
    assert result.stdout == "ndcg@1  0.0000\nusers   2\n"


def test_exclude_seen_drops_them_before_the_cut(worked):
    result = run("eval", worked / "recs.csv", worked / "rels.csv", "-k", "1",
                 "--train", worked / "train.csv", "--exclude-seen", "--per-item",
                 worked / "items.csv")
    assert result.exit_code == 0, result.output
    assert result.stderr == SEEN.format(d=worked) + DROPPED + TIED
    assert result.stdout == "ndcg@1  0.5000\nusers   2\n"
    # shown at k = 1: u1's c (a hit), u2's e; f relevant to u2, never shown. Train users: c, e
    # and f have none.
    with open(worked / "items.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [["k", "item_id", "shown", "exposure_share", "relevant", "hits",
                     "train_users"],
                    ["1", "c", "1", "0.5", "1", "1", "0"], ["1", "e", "1", "0.5", "0", "0", "0"],
                    ["1", "f", "0", "0.0", "1", "0", "0"]]


def test_per_item_as_given(worked):
    # shown at k = 1: u1's a (1 train user), u2's e; c and f relevant, never shown
    result = run("eval", worked / "recs.csv", worked / "rels.csv", "-k", "1",
                 "--train", worked / "train.csv", "--per-item", worked / "items.parquet")
    assert result.exit_code == 0, result.output
    assert pq.read_table(worked / "items.parquet").to_pylist() == [
        {"k": 1, "item_id": "a", "shown": 1, "exposure_share": 0.5, "relevant": 0, "hits": 0,
         "train_users": 1},
        {"k": 1, "item_id": "e", "shown": 1, "exposure_share": 0.5, "relevant": 0, "hits": 0,
         "train_users": 0},
        {"k": 1, "item_id": "c", "shown": 0, "exposure_share": 0.0, "relevant": 1, "hits": 0,
         "train_users": 0},
        {"k": 1, "item_id": "f", "shown": 0, "exposure_share": 0.0, "relevant": 1, "hits": 0,
         "train_users": 0}]


def test_python_keywords(worked):
    recs, rels, train = (str(worked / name) for name in ("recs.csv", "rels.csv", "train.csv"))
    with pytest.warns(NdcgWarning) as said:
        result = ndcg_duck.evaluate(recs, rels, 1, train=train, exclude_seen=True,
                                    per_item=True)
    assert [str(w.message) for w in said] == [
        SEEN.format(d=worked).removeprefix("Warning: ") + DROPPED.replace(
            "--exclude-seen", "exclude_seen=True").rstrip("\n"),
        TIED.removeprefix("Warning: ").replace("--ties average", "ties='average'").rstrip("\n")]
    summary, per_user = result  # unpacks as before; per_item is an attribute
    assert summary["ndcg@1"] == 0.5
    assert result.per_item.column_names == ["k", "item_id", "shown", "exposure_share",
                                            "relevant", "hits", "train_users"]
    assert result.per_item.num_rows == 3
    # no train, no per_item: no train_users column, and per_item None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = ndcg_duck.evaluate(recs, rels, 1, per_item=True)
        assert "train_users" not in plain.per_item.column_names
        assert ndcg_duck.evaluate(recs, rels, 1).per_item is None


def test_per_item_at_every_cutoff_and_judged_only(worked):
    recs, rels = str(worked / "recs.csv"), str(worked / "rels.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ndcg_duck.evaluate(recs, rels, [1, "all"], per_item=True).per_item
        judged = ndcg_duck.evaluate(recs, rels, 1, judged_only=True, per_item=True).per_item
    # k = 1: a and e shown (half each), c and f relevant, no hit; whole rankings (k empty): all
    # six items shown once (a sixth each), c and f hits
    sixth = 1 / 6
    assert [tuple(row.values()) for row in whole.to_pylist()] == [
        (1, "a", 1, 0.5, 0, 0), (1, "e", 1, 0.5, 0, 0), (1, "c", 0, 0.0, 1, 0),
        (1, "f", 0, 0.0, 1, 0), (None, "a", 1, sixth, 0, 0), (None, "b", 1, sixth, 0, 0),
        (None, "c", 1, sixth, 1, 1), (None, "d", 1, sixth, 0, 0), (None, "e", 1, sixth, 0, 0),
        (None, "f", 1, sixth, 1, 1)]
    # judged only: u1's ranking is c, u2's f, both hits
    assert [tuple(row.values()) for row in judged.to_pylist()] == [
        (1, "c", 1, 0.5, 1, 1), (1, "f", 1, 0.5, 1, 1)]


def test_seen_items_of_ids_of_another_kind_compare_as_text():
    # users are integers in the recommendations and text in train: '1' is user 1, as text
    recs = pa.table({"user_id": [1, 1], "item_id": ["a", "b"], "score": [2.0, 1.0]})
    rels = pa.table({"user_id": [1], "item_id": ["b"], "relevance": [1]})
    train = pa.table({"user_id": ["1"], "item_id": ["a"]})
    with pytest.warns(NdcgWarning, match=r"^1 evaluated user was recommended items they have "
                                         r"in the train \(Table\) among their first 1 "
                                         r"items \(1 item; e.g. user '1', item 'a'\)"):
        ndcg_duck.evaluate(recs, rels, 1, train=train)


@pytest.mark.parametrize("batch_users", [None, 1])
def test_ties_of_evaluated_users_only_batch_by_batch(worked, batch_users):
    # u3's f and g tie at places 1 and 2, but u3 has no judgments: not evaluated, not counted;
    # the warning is the worked example's (u2's e), one batch or one per user
    (worked / "more.csv").write_text(WORKED["recs.csv"] + "u3,f,0.4\nu3,g,0.4\n")
    result = run("eval", worked / "more.csv", worked / "rels.csv", "-k", "1",
                 *(("--batch-users", batch_users) if batch_users else ()))
    assert result.exit_code == 0, result.output
    assert result.stderr == TIED


def test_no_warning_without_seen_items_or_ties(worked):
    (worked / "untied.csv").write_text("user_id,item_id,score\nu1,c,3\nu2,f,2\nu2,e,1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ndcg_duck.evaluate(str(worked / "untied.csv"), str(worked / "rels.csv"), 1,
                           train=str(worked / "train.csv"))


def test_compare_says_each_runs_seen_items(worked):
    result = run("compare", worked / "rels.csv", "--run", f"a={worked / 'recs.csv'}",
                 "--run", f"b={worked / 'recs.csv'}", "-k", "1", "--train",
                 worked / "train.csv", "--exclude-seen", "--test", "none")
    assert result.exit_code == 0, result.output
    assert ("Warning: run a: " + SEEN.format(d=worked).removeprefix("Warning: ") + DROPPED
            in result.stderr)


# --- docs/leaks.md: its commands print what it shows, its Python and SQL blocks run -------------

def _blocks(text, language):
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.S | re.M)


def test_the_docs_page_shows_what_runs(monkeypatch):
    text = (ROOT / "docs" / "leaks.md").read_text(encoding="utf-8")
    monkeypatch.chdir(ROOT)
    pairs = re.findall(r"^```sh\n(ndcg-duck [^\n]*)\n```\n\n```text\n(.*?)^```$", text,
                       re.S | re.M)
    assert len(pairs) == 2
    for command, shown in pairs:
        result = run(*shlex.split(command)[1:])
        assert result.exit_code == 0 and result.output == shown, (command, result.output)
    for block in _blocks(text, "python"):
        exec(compile(block, "docs/leaks.md", "exec"), {})
    script = ".read sql/ndcg.sql\n" + "".join(_blocks(text, "sql"))
    done = subprocess.run([duckdb_binary(), "-csv"], input=script, text=True, cwd=ROOT,
                          capture_output=True)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert "users,items,example_user,example_item\n1,1,u1,a\n" in done.stdout


@pytest.mark.parametrize("threads, spread", [(2, True), (1, False)])
def test_a_small_ranked_table_read_on_every_thread_keeps_each_row(threads, spread):
    # u1 twice (a nested file may list a user twice; the scoring's check must still see both
    # rows) and u2 once, with a NULL list: the same rows out, each as often as stored
    import duckdb
    from ndcg_duck.evaluation import leaks
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute("CREATE TEMP TABLE ranked AS SELECT * FROM (VALUES ('u1', ['a', 'b'], 0), "
                "('u1', ['a', 'b'], 0), ('u2', NULL, 1)) t(user_id, items, tied)")
    name = leaks.spread(con, "ranked")
    assert (name != "ranked") is spread
    rel = con.sql(f"FROM {name}")
    assert rel.columns == ["user_id", "items", "tied"]
    assert sorted(rel.fetchall(), key=str) == [("u1", ["a", "b"], 0), ("u1", ["a", "b"], 0),
                                               ("u2", None, 1)]
