"""The beyond-accuracy metrics through `ndcg-duck eval` and evaluate(): the worked example's exact
output, random data in every recommendation layout against tests/reference/beyond.py, and the
usage and data errors (sql/ndcg_beyond.sql's own checks are in tests/sql/test_beyond_sql.py)."""

import json
import math
import warnings

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from reference import beyond as ref
from ndcg_duck import InputError, NdcgWarning, evaluate
from conftest import ROOT, row
from test_cli import run

EX = "examples/beyond/"
EXAMPLE = [EX + "recs.json", EX + "rels.csv", "--train", EX + "train.csv", "--items",
           EX + "items.json"]
ALL = "ndcg,coverage,gini,entropy,novelty,popularity,tail,ild"


def test_cli_worked_example():
    """The example of tests/sql/test_beyond_sql.py::test_hand_worked through the CLI, k = 2: u1
    shows a, b; u2 a, d; u3 x (outside the catalogue a..e). ndcg: u1 1, u2 1/log2(3), u3 0. coverage
    3/5, gini 0.5, entropy 1.5; novelty (0.5 + 1 + 2) / 3, popularity (2 + 1.5 + 0) / 3, tail
    (0.5 + 0.5 + 1) / 3; ild (1 + 0) / 2 over u1 and u2 (u3 has one item)."""
    result = run("eval", *EXAMPLE, "-k", "2", "-m", ALL)
    assert result.exit_code == 0, result.output
    ndcg = (1 + 1 / math.log2(3)) / 3
    assert result.stdout == (
        f"ndcg@2        {ndcg:.4f}\n"
        "coverage@2    0.6000\n"
        "gini@2        0.5000\n"
        "entropy@2     1.5000\n"
        f"novelty@2     {3.5 / 3:.4f}\n"
        f"popularity@2  {3.5 / 3:.4f}\n"
        f"tail@2        {2 / 3:.4f}\n"
        "ild@2         0.5000\n"
        "users         3\n"
        "ild@2 without a value: 1 user (no recommendations, or fewer than two items), left out "
        "of its mean\n"
        "coverage@2, gini@2, entropy@2, novelty@2, popularity@2, tail@2, ild@2: counted the "
        "lists of 3 evaluated users (judged, with recommendations)\n")
    assert result.stderr == (
        "Warning: 1 recommended item is not in the catalogue (items file "
        "examples/beyond/items.json), e.g. item 'x': counted in no coverage, gini or entropy, "
        "and never in tail's head\n")


def test_ild_alone_still_names_items_outside_the_catalogue():
    """A run of ild alone still says, as the whole run does, that item x (u3's only item: no
    ild for u3) is outside the catalogue."""
    result = run("eval", *EXAMPLE, "-k", "2", "-m", "ild")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ild@2  0.5000\nusers  3\n")
    assert result.stderr == (
        "Warning: 1 recommended item is not in the catalogue (items file "
        "examples/beyond/items.json), e.g. item 'x': counted in no coverage, gini or entropy, "
        "and never in tail's head\n")


def test_cli_says_whose_lists_empty_skip_leaves_out(tmp_path):
    """--empty skip leaves out u3 (its one judgment has relevance 0, so its ideal DCG is 0) and
    with it u3's list: novelty@2 per user is u1 0.5, u2 1, u3 2 (test_cli_worked_example's
    hand-worked values), so (0.5 + 1) / 2 = 0.75 instead of 3.5 / 3;
    the summary says whose lists counted."""
    rels = tmp_path / "rels.csv"
    rels.write_text("user_id,item_id,relevance\nu1,a,1\nu2,d,1\nu3,a,0\n")
    result = run("eval", EX + "recs.json", str(rels), "--train", EX + "train.csv", "-k", "2",
                 "-m", "novelty", "--empty", "skip")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "novelty@2  0.7500\n"
        "users      2\n"
        "ideal DCG 0 (nothing relevant): 1 user, left out\n"
        "novelty@2: counted the lists of 2 evaluated users (judged, with recommendations); "
        "--empty skip left out the lists of 1 user whose ideal DCG is 0\n")


def test_cli_json_and_per_user(tmp_path):
    out = tmp_path / "users.parquet"
    result = run("eval", *EXAMPLE, "-k", "2", "-m", "coverage,ild", "--format", "json",
                 "--per-user", str(out))
    assert result.exit_code == 0, result.output
    import json
    summary = json.loads(result.stdout)
    assert summary["coverage@2"] == 0.6 and summary["ild@2"] == 0.5
    assert summary["users_without_ild@2"] == 1 and summary["users"] == 3
    import pyarrow.parquet as pq
    table = pq.read_table(out)
    assert table.column_names == ["user_id", "ild@2"]  # coverage is one value per run
    assert table.to_pylist() == [{"user_id": "u1", "ild@2": 1.0},
                                 {"user_id": "u2", "ild@2": 0.0},
                                 {"user_id": "u3", "ild@2": None}]


def test_python_keywords_and_warning():
    with pytest.warns(NdcgWarning, match=r"2 recommended items are not in the catalogue \(the "
                                         r"items of the train file"):
        result = evaluate(EX + "recs.json", EX + "rels.csv", 2, metrics=["coverage", "novelty"],
                          train=EX + "train.csv", head_share=0.5)
    # catalogue = train's items a, b, c, e (d and x are outside): a and b are shown: 2 of 4
    assert result.summary["coverage@2"] == 0.5
    assert result.summary["novelty@2"] == pytest.approx(3.5 / 3)


def test_no_warning_when_every_item_is_in_the_catalogue():
    recs = pa.table({"user_id": ["u1", "u2"], "items": [["a", "b"], ["c"]]})
    rels = pa.table({"user_id": ["u1", "u2"], "item_id": ["a", "c"], "relevance": [1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate(recs, rels, 2, metrics="coverage", train=EX + "train.csv")
    assert result.summary["coverage@2"] == 0.75


CASES = [
    (["-m", "novelty"], 2, "Error: novelty@10 needs --train, the interactions the system learned "
                           "from (rows of user and item)\n"),
    (["-m", "ild", "--train", EX + "train.csv"], 2,
     "Error: ild@10 needs --items, the catalogue (rows of item, and embedding or category)\n"),
    (["-m", "gini@5"], 2, "Error: gini@5 needs --items (the catalogue) or --train (its items are "
                          "then the catalogue)\n"),
    (["-m", "novelty", "--train", EX + "train.csv", "--beyond-as", "rectools",
      "--novelty-smoothing", "add_one", "--novelty-unseen", "count", "--novelty-smoothing",
      "none"], 2,
     "Error: --novelty-unseen count needs --novelty-smoothing add_one: an item unseen in train "
     "would score -log2(0), infinite; choose another --novelty-unseen (one, skip or zero)\n"),
    (["-m", "gini", "--train", EX + "train.csv", "--beyond-as", "recbol"], 2,
     "Error: Invalid value for '--beyond-as': 'recbol' is not one of 'elliot', 'evidently', "
     "'lenskit', 'msrec', 'recbole', 'rectools'.\n"),
    (["-m", "gini", "--train", EX + "train.csv", "--beyond-users", "all"], 2,
     "Error: Invalid value for '--beyond-users': 'all' is not one of 'evaluated', "
     "'recommended'.\n"),
    (["-m", "gini", "--train", EX + "train.csv", "--beyond-as", "evidently", "--judged-only"], 2,
     "Error: --judged-only takes the unjudged items out of each list, so a user without "
     "judgments has none: --beyond-users recommended (or a --beyond-as preset that sets it) "
     "cannot count them; leave out one, or give --beyond-users evaluated\n"),
    (["-m", "tail", "--train", EX + "train.csv", "--head-share", "1.5"], 2,
     "Error: Invalid value for '--head-share': head_share 1.5 is not a number between 0 and 1\n"),
    (["-m", "coverage", "--items", "{tmp}/items.txt"], 2,
     "Error: cannot tell the format of items file {tmp}/items.txt from its extension: use a "
     ".parquet, .csv or .json name\n"),
    (["-m", "coverage", "--items", "{tmp}/twice.csv"], 1,
     "Error: items file {tmp}/twice.csv: item a has 2 rows: give each item one row\n"),
    (["-m", "novelty", "--train", "{tmp}/nouser.csv"], 1,
     "Error: train file {tmp}/nouser.csv: item b has rows without a user id (NULL)\n"),
    (["-m", "novelty", "--train", "{tmp}/noitem.csv"], 1,
     "Error: train file {tmp}/noitem.csv: no column 'item_id' (columns found: user_id, "
     "thing); name it with --item-col\n"),
    (["-m", "ild", "--items", "{tmp}/lengths.json"], 1,
     "Error: items file {tmp}/lengths.json: embeddings have different lengths: item {first}"),
    (["-m", "ild", "--items", "{tmp}/nan.json"], 1,
     "Error: items file {tmp}/nan.json: item b has a NULL number in its embedding: fill it in\n"),
    (["-m", "ild", "--items", "{tmp}/infinity.json"], 1,
     "Error: items file {tmp}/infinity.json: item c has -inf in its embedding: give finite "
     "numbers\n"),
    (["-m", "ild", "--items", "{tmp}/realnan.json"], 1,
     "Error: items file {tmp}/realnan.json: item a has nan in its embedding: give finite "
     "numbers\n"),
    (["-m", "ild", "--items", "{tmp}/empty.json"], 1,
     "Error: items file {tmp}/empty.json: item c has an empty category list\n"),
    (["-m", "ild", "--items", "{tmp}/partial.json"], 1,
     "Error: items file {tmp}/partial.json: 1 recommended item(s) have no category for ild, "
     "e.g. item d\n"),
    (["-m", "ild", "--items", "{tmp}/mixed.json"], 1,
     "Error: items file {tmp}/mixed.json: 1 recommended item(s) have no embedding for ild, "
     "e.g. item b\n"),
    (["-m", "ild", "--items", "{tmp}/zeros.json"], 1,
     "Error: items file {tmp}/zeros.json: item d has an embedding of zeros, which has no "
     "direction for a cosine\n"),
    (["-m", "ild", "--items", "{tmp}/scalar.json"], 1,
     "Error: items file {tmp}/scalar.json: column 'embedding' is DOUBLE, not a list of "
     "numbers\n"),
]


def _bad_files(tmp):
    import json
    (tmp / "items.txt").write_text("item_id\na\n")
    (tmp / "twice.csv").write_text("item_id\na\na\nb\n")
    (tmp / "nouser.csv").write_text("user_id,item_id\nt1,a\n,b\n")
    (tmp / "noitem.csv").write_text("user_id,thing\nt1,a\n")
    items = ["a", "b", "c", "d", "x"]

    def write(name, rows):
        (tmp / name).write_text(json.dumps(rows))
    write("lengths.json", [{"item_id": i, "embedding": [1.0, 0.0] + ([1.0] if i == "b" else [])}
                           for i in items])
    write("nan.json", [{"item_id": i, "embedding": [1.0, None if i == "b" else 0.0]}
                       for i in items])
    write("infinity.json", [{"item_id": i, "embedding": [1.0, -math.inf if i == "c" else 0.0]}
                            for i in items])
    write("realnan.json", [{"item_id": i, "embedding": [math.nan if i == "a" else 1.0, 0.0]}
                           for i in items])
    write("empty.json", [{"item_id": i, "category": [] if i == "c" else ["s"]} for i in items])
    write("partial.json", [{"item_id": i, "category": ["s"]} for i in items if i != "d"])
    write("mixed.json", [{"item_id": i, "category": ["s"], "embedding": None if i == "b" else
                          [1.0, 0.0]} for i in items])
    write("zeros.json", [{"item_id": i, "embedding": [0.0, 0.0] if i == "d" else [1.0, 0.0]}
                         for i in items])
    write("scalar.json", [{"item_id": i, "embedding": 1.0} for i in items])


@pytest.mark.parametrize("flags, code, message", CASES)
def test_errors(tmp_path, flags, code, message):
    _bad_files(tmp_path)
    flags = [f.replace("{tmp}", str(tmp_path)) for f in flags]
    result = run("eval", EX + "recs.json", EX + "rels.csv", *flags)
    assert result.exit_code == code, result.output
    if "{first}" in message:  # which two items it names depends on the order it reads them
        head = message.replace("{tmp}", str(tmp_path)).split("{first}")[0]
        assert result.stderr.splitlines()[-1].startswith(head)
    else:
        assert result.stderr.splitlines()[-1] + "\n" == message.replace("{tmp}", str(tmp_path))
    assert "Traceback" not in result.output


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e-160, 1.0])
def test_ild_of_huge_and_tiny_embeddings(scale):
    """Cosine does not depend on length: embeddings near 1e200 (whose squares overflow) and near
    1e-200 (whose squares vanish) give the ild of the same vectors near 1, computed here with
    math (tests/reference/beyond.py); once 1.61 for 1.06, and "an embedding of zeros". Near
    1e-160 the squares are subnormal (a few bits each): summed as they are, the length is off."""
    vectors = {"a": [3.0, -1.0, 0.5], "b": [0.25, 2.0, -1.0], "c": [1.0, 1.0, 4.0]}
    recs = pa.table({"user_id": ["u1"], "items": [["a", "b", "c"]]})
    rels = pa.table({"user_id": ["u1"], "item_id": ["a"], "relevance": [1]})
    items = pa.table({"item_id": list(vectors),
                      "embedding": [[x * scale for x in v] for v in vectors.values()]})
    result = evaluate(recs, rels, 3, metrics="ild", items=items)
    assert result.summary["ild@3"] == pytest.approx(ref.ild(list(vectors), embedding=vectors),
                                                    rel=1e-12)


def test_python_error_in_keywords():
    with pytest.raises(InputError, match=r"^novelty@10 needs train=, the interactions"):
        evaluate(EX + "recs.json", EX + "rels.csv", metrics="novelty")


def test_ids_compared_as_text():
    """Integer recommended items against a text train file: compared as text, and said."""
    recs = pa.table({"user_id": ["u1"], "items": [[1, 2]]})
    rels = pa.table({"user_id": ["u1"], "item_id": [1], "relevance": [1]})
    train = pa.table({"user_id": ["t1", "t2"], "item_id": ["1", "3"]})
    with pytest.warns(NdcgWarning, match="compared as text"):
        result = evaluate(recs, rels, 2, metrics="coverage,popularity", train=train)
    assert result.summary["coverage@2"] == 0.5  # item 1 of catalogue {1, 3}
    assert result.summary["popularity@2"] == 0.5  # (1 + 0) / 2


# --- random data in every layout against the plain-Python reference ------------------------------

ITEM = st.integers(0, 9)


@settings(max_examples=30, deadline=None)
@given(lists=st.lists(st.lists(ITEM, min_size=1, max_size=6, unique=True), min_size=1,
                      max_size=6),
       judged=st.lists(st.tuples(st.integers(0, 5), ITEM, st.integers(0, 2)), min_size=1,
                       max_size=12),
       train=st.lists(st.tuples(st.integers(0, 3), ITEM), min_size=1, max_size=15),
       vectors=st.lists(st.lists(st.integers(1, 5), min_size=3, max_size=3), min_size=10,
                        max_size=10),
       k=st.integers(1, 4), share=st.sampled_from([0.0, 0.2, 0.5]),
       layout=st.sampled_from(["lists", "ranks", "scores"]), judged_only=st.booleans())
def test_against_reference(lists, judged, train, vectors, k, share, layout, judged_only):
    """Every beyond metric from evaluate() equals the reference over the same top_k: the users
    of the judgments with a ranking, each ranking cut (after judged_only) at k."""
    rankings = {f"u{n}": items for n, items in enumerate(lists)}
    rels = {}
    for user, item, relevance in judged:
        rels.setdefault((f"u{user}", item), relevance)
    if not any(user in rankings for user, _ in rels):
        return  # no judged user has a ranking: a different error
    if layout == "lists":
        recs = pa.table({"user_id": list(rankings), "items": list(rankings.values())})
    else:
        rows = [(u, item, place) for u, items in rankings.items()
                for place, item in enumerate(items, start=1)]
        order = {"rank": [r for _, _, r in rows]} if layout == "ranks" else \
            {"score": [100.0 - r for _, _, r in rows]}
        recs = pa.table({"user_id": [u for u, _, _ in rows], "item_id": [i for _, i, _ in rows],
                         **order})
    rels_table = pa.table({"user_id": [u for u, _ in rels], "item_id": [i for _, i in rels],
                           "relevance": list(rels.values())})
    train_table = pa.table({"user_id": [u for u, _ in train], "item_id": [i for _, i in train]})
    embedding = {i: [float(v) for v in vec] for i, vec in enumerate(vectors)}
    items = pa.table({"item_id": list(embedding), "embedding": list(embedding.values())})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NdcgWarning)
        result = evaluate(recs, rels_table, k, metrics=ALL, train=train_table, items=items,
                          head_share=share, judged_only=judged_only)

    judged_users = {u for u, _ in rels}
    tops = {}
    for user, items_ in rankings.items():
        if user not in judged_users:
            continue
        kept = [i for i in items_ if not judged_only or rels.get((user, i), -1) >= 0]
        tops[user] = kept[:k]
    catalogue = set(embedding)
    pop, users = ref.popularity(train)
    coverage, gini, entropy = ref.run_metrics(tops, catalogue)
    s = result.summary
    assert (s[f"coverage@{k}"], s[f"gini@{k}"], s[f"entropy@{k}"]) == pytest.approx(
        (coverage, gini, entropy))
    heads = ref.head(pop, catalogue, share)
    want = {u: ref.user_metrics(t, pop, users, heads) for u, t in tops.items()}
    got = {row["user_id"]: row for row in result.per_user.to_pylist()}
    for user, values in want.items():
        names = ("novelty", "popularity", "tail")
        expected = values if values is not None else (None, None, None)
        assert tuple(got[user][f"{n}@{k}"] for n in names) == pytest.approx(expected), user
        assert got[user][f"ild@{k}"] == pytest.approx(ref.ild(tops[user], embedding=embedding))
    present = [v for v in want.values() if v is not None]
    if present:
        assert s[f"novelty@{k}"] == pytest.approx(sum(v[0] for v in present) / len(present))


def test_readme_example_prints_what_the_readme_shows():
    from test_docs_examples import example
    args, printed = example("# Beyond accuracy", "docs/beyond-accuracy.md",
                            "prints (the warning on stderr)")
    result = run(*args)
    assert result.exit_code == 0
    assert result.stdout + result.stderr == printed


def test_readme_table_has_a_row_per_beyond_metric():
    from ndcg_duck.metrics import METRICS
    from test_docs_examples import page
    text = page("docs/beyond-accuracy.md")
    # and the page of the peers' definitions, which has the ones added with them
    text += page("docs/beyond-peers.md")
    rows = [line for line in text.splitlines() if line.startswith("| `") and "@k`" in line]
    named = {line.split("|")[1].strip(" `").split("@")[0] for line in rows}
    assert named == {metric.name for metric in METRICS if metric.needs}


# --- compare -------------------------------------------------------------------------------------

RECS_B = [{"user_id": "u1", "items": ["c", "b", "a"]}, {"user_id": "u2", "items": ["e", "d"]},
          {"user_id": "u3", "items": ["b"]}]


def test_compare_pairs_per_user_ones_and_shows_per_run_ones(tmp_path):
    """Run b at k = 2: u1 c, b; u2 e, d; u3 b. coverage: a shows a, b, d (3/5), b shows b, c, d, e
    (4/5): one value per run, the difference 0.2, no test. novelty (pop a=3, b=c=e=1, d=0; U = 3)
    per user: a gives 0.5, 1, 2 (test_cli_worked_example); b gives u1 (1 + 1) / 2 = 1, u2 (1 +
    2) / 2 = 1.5, u3 1: differences 0.5, 0.5, -1, mean 0."""
    import json
    from ndcg_duck import compare
    (tmp_path / "b.json").write_text(json.dumps(RECS_B))
    result = compare(EX + "rels.csv", {"a": EX + "recs.json", "b": str(tmp_path / "b.json")}, 2,
                     metrics="coverage,novelty", train=EX + "train.csv",
                     items=EX + "items.json", test="t")
    rows = {(r["metric"], r["run"]): r for r in result.rows}
    assert rows[("coverage", "a")]["mean"] == 0.6
    assert rows[("coverage", "b")]["mean"] == 0.8
    assert rows[("coverage", "b")]["diff"] == pytest.approx(0.2)
    assert rows[("coverage", "b")]["p_value"] is None
    assert rows[("coverage", "b")]["note"].startswith("one value per run")
    novelty = rows[("novelty", "b")]
    assert novelty["mean"] == pytest.approx(3.5 / 3) and novelty["diff"] == pytest.approx(0)
    assert (novelty["wins"], novelty["ties"], novelty["losses"]) == (2, 0, 1)
    assert novelty["tested"]
    diffs = [0.5, 0.5, -1.0]
    from scipy import stats
    assert novelty["p_value"] == pytest.approx(stats.ttest_1samp(diffs, 0).pvalue)


def test_compare_counts_every_recommended_user_with_beyond_users_recommended(tmp_path):
    """Run b adds u4 (a, c), who is not judged. Evaluated users: b's coverage@2 shows b, c, d, e
    (4/5); every user of the recommendations: a too (5/5), from 4 users' lists. novelty stays a
    mean over the users both runs have lists for (u4 is only in b)."""
    import json
    from ndcg_duck import compare
    (tmp_path / "b.json").write_text(json.dumps(RECS_B + [{"user_id": "u4",
                                                           "items": ["a", "c"]}]))
    runs = {"a": EX + "recs.json", "b": str(tmp_path / "b.json")}

    def rows(**options):
        result = compare(EX + "rels.csv", runs, 2, metrics="coverage,novelty",
                         train=EX + "train.csv", items=EX + "items.json", **options)
        return {(r["metric"], r["run"]): r for r in result.rows}
    assert rows()[("coverage", "b")]["mean"] == pytest.approx(0.8)
    got = rows(beyond_users="recommended")
    assert got[("coverage", "a")]["mean"] == pytest.approx(0.6)
    assert (got[("coverage", "b")]["mean"], got[("coverage", "b")]["users"]) == (
        pytest.approx(1.0), 4)
    assert got[("novelty", "b")]["mean"] == pytest.approx(3.5 / 3)


def test_compare_cli_takes_train_and_items(tmp_path):
    import json
    (tmp_path / "b.json").write_text(json.dumps(RECS_B))
    result = run("compare", EX + "rels.csv", "--run", f"a={EX}recs.json", "--run",
                 f"b={tmp_path / 'b.json'}", "-k", "2", "-m", "coverage", "--items",
                 EX + "items.json", "--format", "csv")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith("coverage,2,(all),a,,3,0.6,")
    assert lines[2].startswith("coverage,2,(all),b,a,3,0.8,")


@pytest.mark.parametrize("knob, value", [("BYTES_PER_NUMBER", 10**12), ("ILD_MOST_USERS", 10)])
def test_ild_in_chunks_of_users_equals_one_chunk(monkeypatch, knob, value):
    """ild runs on chunks of users, as few as the memory limit allows (BYTES_PER_NUMBER) and
    at most ILD_MOST_USERS a chunk: many small chunks give every user's value as one."""
    from ndcg_duck.evaluation import batches, beyond
    import random
    rng = random.Random(5)
    users = [f"u{n:03d}" for n in range(60)]
    recs = pa.table({"user_id": users,
                     "items": [rng.sample(range(30), rng.randint(1, 6)) for _ in users]})
    rels = pa.table({"user_id": users, "item_id": [0] * len(users), "relevance": [1] * len(users)})
    items = pa.table({"item_id": list(range(30)),
                      "embedding": [[rng.uniform(0.1, 1) for _ in range(4)] for _ in range(30)]})
    whole = evaluate(recs, rels, 3, metrics="ild", items=items).per_user
    monkeypatch.setattr(batches, "FEWEST_USERS", 7)
    monkeypatch.setattr(beyond, knob, value)
    chunked = evaluate(recs, rels, 3, metrics="ild", items=items).per_user
    assert chunked.column("ild@3").to_pylist() == pytest.approx(
        whole.column("ild@3").to_pylist(), nan_ok=True)
    calls = []
    real = batches.user_ranges
    monkeypatch.setattr(batches, "user_ranges", lambda *a: calls.append(real(*a)) or calls[-1])
    evaluate(recs, rels, 3, metrics="ild", items=items)
    assert len(calls[-1]) > 3  # it did run in chunks


def test_ild_at_several_cutoffs_each_against_the_reference():
    """ild is summed one cutoff at a time (a statement per cutoff, grouped by user): at 2, 3 and
    all, each user's value is the plain-Python mean over the pairs of that cutoff's list."""
    import random
    rng = random.Random(11)
    users = [f"u{n:02d}" for n in range(12)]
    lists = [rng.sample(range(15), rng.randint(1, 5)) for _ in users]
    vectors = {i: [rng.uniform(-1, 1) for _ in range(3)] for i in range(15)}
    recs = pa.table({"user_id": users, "items": lists})
    rels = pa.table({"user_id": users, "item_id": [0] * len(users), "relevance": [1] * len(users)})
    items = pa.table({"item_id": list(vectors), "embedding": list(vectors.values())})
    got = {r["user_id"]: r for r in
           evaluate(recs, rels, [2, 3, "all"], metrics="ild", items=items).per_user.to_pylist()}
    for user, top in zip(users, lists):
        for k, name in ((2, "ild@2"), (3, "ild@3"), (None, "ild@all")):
            want = ref.ild(top[:k], embedding=vectors)
            assert got[user][name] == (None if want is None else pytest.approx(want)), (user, k)


def test_user_means_at_several_cutoffs_each_against_the_reference():
    """novelty, popularity and tail at several cutoffs at once: at 1, 3 and all, each user's
    values are the plain-Python means of that cutoff's list (lists of 1 to 6 items, so some are
    shorter than a cutoff), none taken from another cutoff's."""
    import random
    rng = random.Random(7)
    users = [f"u{n:02d}" for n in range(12)]
    lists = [rng.sample(range(15), rng.randint(1, 6)) for _ in users]
    train = [(f"t{rng.randrange(8)}", rng.randrange(15)) for _ in range(40)]
    recs = pa.table({"user_id": users, "items": lists})
    rels = pa.table({"user_id": users, "item_id": [0] * len(users), "relevance": [1] * len(users)})
    items = pa.table({"item_id": list(range(15))})
    train_table = pa.table({"user_id": [u for u, _ in train], "item_id": [i for _, i in train]})
    got = {r["user_id"]: r for r in evaluate(
        recs, rels, [1, 3, "all"], metrics="novelty,popularity,tail", train=train_table,
        items=items).per_user.to_pylist()}
    pop, n = ref.popularity(train)
    heads = ref.head(pop, set(range(15)))
    for user, top in zip(users, lists):
        for k, at in ((1, "1"), (3, "3"), (None, "all")):
            want = ref.user_metrics(top[:k], pop, n, heads)
            assert tuple(got[user][f"{m}@{at}"] for m in ("novelty", "popularity", "tail")) == \
                pytest.approx(want), (user, k)


@pytest.mark.parametrize("memory, during", [("4GB", 20), ("100MB", 12)])
def test_item_aggregates_by_array_then_the_threshold_is_put_back(monkeypatch, memory, during):
    """beyond.by_array raises DuckDB's perfect_ht_threshold to 20 for the two aggregates by item
    (the shown items' exposure, train's rows per item) when 2 threads' arrays (2^20 ids x 8
    bytes x 3 counts, times 8: 403 MB) fit in the memory limit, not in 100MB; the run's cursor
    then has its threshold (12) back, and the values are the same either way."""
    from contextlib import contextmanager
    from ndcg_duck.evaluation import beyond
    from ndcg_duck.evaluation.evaluate import running
    seen = []
    real = beyond.by_array

    @contextmanager
    def spy(con, counts):
        with real(con, counts):
            seen.append(row(con, "SELECT current_setting('perfect_ht_threshold')")[0])
            yield
    monkeypatch.setattr(beyond, "by_array", spy)
    with running(EX + "recs.json", EX + "rels.csv", 2, metrics="coverage,novelty".split(","),
                 train=EX + "train.csv", items=EX + "items.json", threads=2,
                 memory_limit=memory) as ran:
        assert ran.evaluation.summary["coverage@2"] == 0.6
        assert ran.evaluation.summary["novelty@2"] == pytest.approx(3.5 / 3)
        assert seen == [during, during]
        assert row(ran.cursor, "SELECT current_setting('perfect_ht_threshold')") == (12,)


def test_ild_missing_embeddings_counted_over_every_chunk(monkeypatch):
    """Items 3 and 27 lack an embedding and are shown to users of different chunks (u001's list
    is 2, 3; u013's 26, 27): the message counts both and names the smallest as text (27), in
    chunks as in one."""
    from ndcg_duck.evaluation import batches, beyond
    users = [f"u{n:03d}" for n in range(60)]
    recs = pa.table({"user_id": users, "items": [[2 * n % 30, (2 * n + 1) % 30] for n in range(60)]})
    rels = pa.table({"user_id": users, "item_id": [0] * 60, "relevance": [1] * 60})
    items = pa.table({"item_id": list(range(30)),
                      "embedding": [None if i in (3, 27) else [1.0, float(i)] for i in range(30)]})
    monkeypatch.setattr(batches, "FEWEST_USERS", 7)
    monkeypatch.setattr(beyond, "BYTES_PER_NUMBER", 10**12)
    with pytest.raises(InputError) as err:
        evaluate(recs, rels, 3, metrics="ild", items=items)
    assert str(err.value) == ("items (Table): 2 recommended item(s) have no embedding for ild, "
                              "e.g. item 27")


def test_segments_give_per_run_metrics_per_segment(tmp_path):
    """Catalogue = train's items a, b, c, e (n = 4). Segment x = u1 (a, b) and u3 (x, outside):
    c = a:1, b:1: coverage 2/4, gini (0 + 0 + 1 + 3) / (4 * 2) = 0.5. y = u2 (a, d): coverage
    1/4, gini 3 / 4. novelty per segment is the mean of its users' (u1 0.5, u3 2; u2 1)."""
    segments = tmp_path / "segments.csv"
    segments.write_text("user_id,group\nu1,x\nu2,y\nu3,x\n")
    result = run("eval", EX + "recs.json", EX + "rels.csv", "-k", "2", "-m",
                 "coverage,gini,novelty", "--train", EX + "train.csv", "--segments",
                 str(segments), "--by", "group")
    assert result.exit_code == 0, result.output
    assert result.stdout.split("by group:\n", 1)[1] == (
        "segment  users  novelty@2  coverage@2  gini@2\n"
        "(all)        3     1.1667      0.5000  0.5833\n"
        "x            2     1.2500      0.5000  0.5000\n"
        "y            1     1.0000      0.2500  0.7500\n")


def _random_runs(tmp_path, users=300, seed=3):
    import json
    import random
    rng = random.Random(seed)
    ids = [f"u{n:04d}" for n in range(users)]
    a = [{"user_id": u, "items": rng.sample(range(200), 5)} for u in ids]
    b = [{"user_id": u, "items": rng.sample(range(120), 5)} for u in ids]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    (tmp_path / "rels.csv").write_text("user_id,item_id,relevance\n"
                                       + "".join(f"{u},0,1\n" for u in ids))
    (tmp_path / "items.csv").write_text("item_id\n" + "".join(f"{i}\n" for i in range(200)))
    return a, b


def test_compare_bootstrap_gives_per_run_metrics_no_interval(tmp_path):
    """--test bootstrap prints no interval for coverage, gini or entropy (their resamples can only
    lose items: docs/beyond-accuracy.md) and says so, on the row and in the notes."""
    _random_runs(tmp_path, users=40)
    args = ["compare", str(tmp_path / "rels.csv"), "--run", f"a={tmp_path / 'a.json'}", "--run",
            f"b={tmp_path / 'b.json'}", "-k", "5", "-m", "coverage,gini",
            "--items", str(tmp_path / "items.csv"), "--test", "bootstrap", "--n-resamples", "100"]
    note = ("one value per run (not a mean over users): interval: none (a distinct count's "
            "bootstrap is biased: docs/compare.md), no test")
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert f"coverage@5, gini@5: {note}" in result.output.splitlines()
    rows = json.loads(run(*args, "--format", "json").output)
    assert [(row["run"], row["note"], row["ci_low"], row["ci_high"], row["diff_ci_low"],
             row["diff_ci_high"]) for row in rows] == [(name, note, None, None, None, None)
                                                        for name in "abab"]


def test_no_bootstrap_interval_holds_for_coverage():
    """Why compare --test bootstrap prints no interval for coverage: a simulation with a known
    truth. A population of 600 users, each shown 3 of 1000 items drawn by a Zipf popularity; its
    coverage is known exactly. From 40 seeded samples of 60 of its users, scipy's percentile and
    BCa bootstrap intervals (95%) of coverage cover the population's value far less often than 95%
    (a sample can only show fewer items: here never)."""
    import numpy as np
    from scipy import stats
    from ndcg_duck.means import rng_keyword as _rng_keyword

    rng = np.random.default_rng(20261126)
    items, population, sample = 1000, 600, 60
    p = 1 / np.arange(1, items + 1) ** 1.1
    shown = np.zeros((population, items), bool)
    for user in range(population):
        shown[user, rng.choice(items, 3, replace=False, p=p / p.sum())] = True
    truth = shown.any(axis=0).mean()
    covered = {"percentile": 0, "BCa": 0}
    repetitions = 40
    for _ in range(repetitions):
        lists = shown[rng.choice(population, sample, replace=False)]

        def coverage(users, axis=-1):
            return lists[users.astype(int)].any(axis=-2).mean(axis=-1)
        for method in covered:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # BCa's on a degenerate resample
                ci = stats.bootstrap((np.arange(sample),), coverage, n_resamples=199,
                                     method=method, vectorized=True,
                                     **{_rng_keyword(stats.bootstrap): rng}).confidence_interval
            covered[method] += bool(ci.low <= truth <= ci.high)
    assert 0.2 < truth < 0.9
    assert covered["percentile"] / repetitions < 0.5
    assert covered["BCa"] / repetitions < 0.5


def test_compare_segments_give_per_run_metrics_per_segment(tmp_path):
    """Segment x = u1, u3; y = u2; catalogue a..e (n = 5). Run a in x shows a, b (u3's x is
    outside): c sorted 0,0,0,1,1, gini (2 + 4) / (5 * 2) = 0.6. Run b in x shows u1's c, b and
    u3's b: c 0,0,0,1,2, gini (2 + 8) / (5 * 3) = 2/3: the difference 1/15."""
    import json
    from ndcg_duck import compare
    (tmp_path / "b.json").write_text(json.dumps(RECS_B))
    (tmp_path / "segments.csv").write_text("user_id,group\nu1,x\nu2,y\nu3,x\n")
    result = compare(EX + "rels.csv", {"a": EX + "recs.json", "b": str(tmp_path / "b.json")}, 2,
                     metrics="gini", items=EX + "items.json",
                     segments=str(tmp_path / "segments.csv"), by="group", min_users=1)
    rows = {(r["segment"], r["run"]): r for r in result.rows}
    assert rows[("x", "a")]["mean"] == pytest.approx(0.6)
    assert rows[("x", "b")]["mean"] == pytest.approx(2 / 3)
    assert rows[("x", "b")]["diff"] == pytest.approx(1 / 15)
    assert rows[("x", "b")]["users"] == 2 and rows[("y", "b")]["users"] == 1
    assert [r["segment"] for r in result.rows if r["run"] == "a"] == ["(all)", "x", "y"]


def test_the_peers_page_sql_gives_the_tails_worked_by_hand():
    """docs/beyond-peers.md's SQL block (its commands are checked with every page's, in
    tests/doors/test_docs_examples.py): RecBole's tail of the example files, by hand."""
    import re
    page = (ROOT / "docs" / "beyond-peers.md").read_text(encoding="utf-8")
    block, = re.findall(r"```sql\n(.*?)```", page, re.S)
    con = duckdb.connect()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        con.execute((ROOT / "sql" / "ndcg.sql").read_text(encoding="utf-8"))
        statements = [part for part in block.split(";") if part.strip()]
        for statement in statements[:-1]:
            con.execute(statement)
        assert con.sql(statements[-1]).fetchall() == [("a", 4, False), ("b", 2, False),
                                                      ("c", 1, True), ("d", 1, False)]


@pytest.mark.parametrize("keywords, message", [
    (dict(novelty_smoothing="none"),
     "novelty_unseen='count' needs novelty_smoothing='add_one': an item unseen in train would "
     "score -log2(0), infinite; choose another novelty_unseen= (one, skip or zero)"),
    (dict(beyond_as="recbol"),
     "beyond_as 'recbol' is not one of: elliot, evidently, lenskit, msrec, recbole, rectools"),
    (dict(gini_items="all"), "gini_items 'all' is not one of: catalogue, shown"),
    (dict(beyond_users="all"), "beyond_users 'all' is not one of: evaluated, recommended"),
])
def test_beyond_options_in_python_words(keywords, message):
    with pytest.raises(InputError) as raised:
        evaluate(EX + "recs.json", EX + "rels.csv", 2, metrics="novelty,gini",
                 train=EX + "train.csv", **keywords)
    assert str(raised.value) == message and raised.value.usage
