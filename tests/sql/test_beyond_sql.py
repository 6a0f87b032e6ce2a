"""The beyond-accuracy macros (sql/ndcg_beyond.sql): hand-worked examples, random data against
the plain-Python reference in tests/reference/beyond.py, and the input checks."""

import math

import duckdb
import pytest
from hypothesis import given, settings, strategies as st

from reference import beyond as ref

SETUP = """
CREATE OR REPLACE TABLE recs AS SELECT * FROM (VALUES {recs}) t(user_id, items);
CREATE OR REPLACE TABLE rels AS SELECT * FROM (VALUES {rels}) t(user_id, item_id, relevance);
CREATE OR REPLACE TABLE train AS SELECT * FROM (VALUES {train}) t(user_id, item_id);
CREATE OR REPLACE TABLE items AS SELECT * FROM (VALUES {items}) t(item_id, category, embedding);
CREATE OR REPLACE TABLE ranked AS FROM ndcg_ranked_lists('recs');
CREATE OR REPLACE TABLE judg AS FROM ndcg_judgments('rels');
CREATE OR REPLACE TABLE tops AS FROM ndcg_beyond_tops('ranked', 'judg', ks := {ks});
CREATE OR REPLACE TABLE cat AS FROM ndcg_beyond_catalogue({catalogue}, 'train');
CREATE OR REPLACE TABLE pop AS FROM ndcg_beyond_popularity('train', 'cat', head_share := {share});
"""


def setup(con, recs, rels, train, items, ks="[2, NULL]", catalogue="'items'", share=0.2):
    def values(rows):
        return ", ".join("(" + ", ".join(_sql(v) for v in r) + ")" for r in rows)
    con.execute(SETUP.format(recs=values(recs), rels=values(rels), train=values(train),
                             items=values(items), ks=ks, catalogue=catalogue, share=share))


def _sql(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_sql(v) for v in value) + "]::" + (
            "VARCHAR[]" if value and isinstance(value[0], str) else "DOUBLE[]")
    return repr(float(value)) if isinstance(value, float) else str(value)


RECS = [("u1", ["a", "b", "c"]), ("u2", ["a", "d"]), ("u3", ["x"])]
RELS = [("u1", "a", 1), ("u2", "d", 1), ("u3", "a", 1)]
TRAIN = [("t1", "a"), ("t2", "a"), ("t3", "a"), ("t1", "b"), ("t2", "c"), ("t1", "e")]
ITEMS = [("a", ["s", "t"], [1.0, 0.0]), ("b", ["s"], [0.0, 1.0]), ("c", ["t"], [1.0, 1.0]),
         ("d", ["u"], [1.0, 0.0]), ("e", ["u"], [0.5, 0.5])]


def test_hand_worked(con):
    """k = 2: u1 shows a, b; u2 a, d; u3 x (outside the catalogue a..e, n = 5). c = a:2, b:1,
    d:1, so coverage 3/5; c ascending 0,0,1,1,2: gini (0 + 0 + 0*1 + 2*1 + 4*2) / (5 * 4) = 0.5;
    q = 1/2, 1/4, 1/4: entropy 1.5 bits. pop a=3, b=c=e=1, d=0, U = 3; head = floor(0.2*5) = 1
    item, a. u1: novelty (-log2(4/4) - log2(2/4)) / 2 = 0.5, popularity (3+1)/2 = 2, tail 1/2,
    ild 1 - cos([1,0],[0,1]) = 1. u2: novelty (0 + 2)/2 = 1, popularity 1.5, tail 0.5, ild 0.
    u3: x has pop 0: novelty -log2(1/4) = 2, popularity 0, tail 1, no ild."""
    setup(con, RECS, RELS, TRAIN, ITEMS)
    run = con.sql("FROM ndcg_beyond_run('tops', 'cat') WHERE k = 2").fetchall()
    # users 3, coverage_count 3 (a, b, d); personalization: the ordered pairs (u1, u2) and
    # (u2, u1) share a, the others nothing: mean overlap 2/6 over a mean length 5/3: 1 - 1/5
    assert run == [(2, 0.6, 0.5, 1.5, 3, 3, pytest.approx(0.8))]
    assert con.sql("FROM ndcg_beyond_outside('tops', 'cat')").fetchall() == [(1, "x")]
    users = con.sql("SELECT user_id, novelty, popularity, tail FROM ndcg_beyond_user('tops', 'pop')"
                    " WHERE k = 2 ORDER BY user_id").fetchall()
    assert users == [("u1", 0.5, 2.0, 0.5), ("u2", 1.0, 1.5, 0.5), ("u3", 2.0, 0.0, 1.0)]
    con.execute("CREATE TABLE feat AS FROM ndcg_beyond_features('items')")
    ild = con.sql("SELECT user_id, ild FROM ndcg_beyond_ild('tops', 'feat') WHERE k = 2"
                  " ORDER BY user_id").fetchall()
    assert ild == [("u1", 1.0), ("u2", 0.0)]
    # Without a cutoff u1 shows a, b, c: c = a:2, b:1, c:1, d:1 over n = 5: gini
    # (0 + 2*1 + 4*1 + 6*2... ) sorted 0,1,1,1,2: (-4*0 - 2 + 0 + 2 + 4*2) / (5*5) = 8/25.
    assert con.sql("SELECT gini FROM ndcg_beyond_run('tops', 'cat') WHERE k IS NULL"
                   ).fetchall() == [(pytest.approx(8 / 25),)]


def test_exposure_per_item_at_every_cutoff(con):
    """The default engine's exposure: u1 a, b, c; u2 a, d; u3 x (lists cut at 2 and uncut).
    Grouped once per item with a column per cutoff (ndcg_beyond_shown_of): a 2 and 2, b 1 and 1,
    c 0 and 1 (third in u1's list), d 1 and 1, x 1 and 1; as rows (ndcg_beyond_exposure_in) c
    is not shown at 2, and the rows are ndcg_beyond_exposure's, counted from each list."""
    setup(con, RECS, RELS, TRAIN, ITEMS)
    con.execute("CREATE TABLE entries AS FROM ndcg_beyond_entries('tops')")
    con.execute("CREATE TABLE depths AS PIVOT (SELECT coalesce(k::VARCHAR, 'all') AS k, depth "
                "FROM ndcg_cutoffs([2, NULL])) ON k USING any_value(depth)")
    con.execute("CREATE TABLE shown AS FROM ndcg_beyond_shown_of('entries', 'depths')")
    assert con.sql('SELECT item_id, "2", "all" FROM shown ORDER BY item_id').fetchall() == [
        ("a", 2, 2), ("b", 1, 1), ("c", 0, 1), ("d", 1, 1), ("x", 1, 1)]
    rows = "SELECT k, item_id, c FROM {} ORDER BY k NULLS LAST, item_id"
    exposure = con.sql(rows.format("ndcg_beyond_exposure_in('shown')")).fetchall()
    assert exposure == [(2, "a", 2), (2, "b", 1), (2, "d", 1), (2, "x", 1), (None, "a", 2),
                        (None, "b", 1), (None, "c", 1), (None, "d", 1), (None, "x", 1)]
    assert exposure == con.sql(rows.format("ndcg_beyond_exposure('tops')")).fetchall()
    # each shown item's values (x: outside popularity, pop 0 and tail), read by an inner join
    con.execute("CREATE TABLE vals AS FROM ndcg_beyond_values_of('shown', 'pop')")
    assert con.sql("SELECT item_id, novelty, popularity, tail FROM vals ORDER BY item_id"
                   ).fetchall() == [("a", 0.0, 3.0, 0.0), ("b", 1.0, 1.0, 1.0),
                                    ("c", 1.0, 1.0, 1.0), ("d", 2.0, 0.0, 1.0),
                                    ("x", 2.0, 0.0, 1.0)]
    assert con.sql("SELECT user_id, novelty, popularity, tail FROM "
                   "ndcg_beyond_user_in('entries', 'vals', 'tops') WHERE k = 2 ORDER BY user_id"
                   ).fetchall() == [("u1", 0.5, 2.0, 0.5), ("u2", 1.0, 1.5, 0.5),
                                    ("u3", 2.0, 0.0, 1.0)]


def test_every_cutoff_cut_from_the_deepest_list(con):
    """The default engine keeps each user's deepest list alone (u1 a, b, c; u2 a, d; u3 x, no
    cutoff) and cuts every cutoff's from it (ndcg_beyond_cut): at 2 u1 a, b, the others whole;
    the same rows as ndcg_beyond_tops at both cutoffs."""
    setup(con, RECS, RELS, TRAIN, ITEMS)
    con.execute("CREATE TABLE deepest AS SELECT user_id, top FROM tops WHERE k IS NULL")
    rows = "SELECT user_id, k, top FROM {} ORDER BY user_id, k NULLS LAST"
    cut = con.sql(rows.format("ndcg_beyond_cut('deepest', [2, NULL]::BIGINT[])")).fetchall()
    assert cut == [("u1", 2, ["a", "b"]), ("u1", None, ["a", "b", "c"]),
                   ("u2", 2, ["a", "d"]), ("u2", None, ["a", "d"]),
                   ("u3", 2, ["x"]), ("u3", None, ["x"])]
    assert cut == con.sql(rows.format("tops")).fetchall()


def test_ild_by_categories(con):
    """Without embeddings: u1's a {s,t}, b {s}, c {t}: Jaccard 1/2, 1/2, 0: ild (1/2+1/2+1)/3."""
    items = [(i, c, None) for i, c, _ in ITEMS]
    setup(con, RECS, RELS, TRAIN, items)
    con.execute("CREATE TABLE feat AS FROM ndcg_beyond_features('items')")
    got = con.sql("SELECT ild FROM ndcg_beyond_ild('tops', 'feat') WHERE k IS NULL AND "
                  "user_id = 'u1'").fetchall()
    assert got == [(pytest.approx(2 / 3),)]


def test_catalogue_from_train(con):
    """Without items, the catalogue is train's items a, b, c, e (n = 4): k = 2 shows a, b in it."""
    setup(con, RECS, RELS, TRAIN, ITEMS, catalogue="NULL")
    assert con.sql("SELECT coverage FROM ndcg_beyond_run('tops', 'cat') WHERE k = 2"
                   ).fetchall() == [(0.5,)]


@pytest.mark.parametrize("items, once", [
    ("['a', 'b', 'c']", True), ("['a', 'b', 'a']", False), ("[]::VARCHAR[]", True),
    ("NULL::VARCHAR[]", True), ("range(70)", True), ("range(70) || [3]", False),
    ("[3] || range(70)", False)])
def test_an_item_twice_in_short_and_long_lists(con, items, once):
    """ndcg_beyond_once: lists of at most 64 items by position, longer ones by list_unique."""
    assert con.sql(f"SELECT ndcg_beyond_once({items})").fetchall() == [(once,)]


def test_beyond_lists_stop_on_a_repeat_in_a_long_ranking(con):
    con.execute("CREATE OR REPLACE TABLE r AS SELECT 'u1' AS user_id, "
                "[x::VARCHAR FOR x IN range(70)] || ['5'] AS items")
    with pytest.raises(duckdb.Error, match="user u1 ranks item 5 twice"):
        con.sql("FROM ndcg_beyond_lists('r', ks := [10])").fetchall()


def test_popularity_of_long_train_lists(con):
    """A user with more train rows than ndcg_beyond_popularity_of searches by position (64) has
    them sorted: t1's 71 rows alternate a, b (35 each) then c; t2 has a once. Distinct users:
    a 2, b 1, c 1; rows: a 36, b 35, c 1; U = 2, 72 interactions; the seen-items check finds
    t1's b and c among its recommendations b, x, c (positions 1 and 3)."""
    train = [("t1", "ab"[i % 2]) for i in range(70)] + [("t1", "c"), ("t2", "a")]
    setup(con, [("t1", ["b", "x", "c"])], [("t1", "b", 1)], train, ITEMS)
    assert con.sql("SELECT item_id, by_users, by_rows, users, interactions FROM pop "
                   "WHERE by_rows > 0 ORDER BY item_id").fetchall() == [
        ("a", 2, 36, 2, 72), ("b", 1, 35, 2, 72), ("c", 1, 1, 2, 72)]
    con.execute("CREATE OR REPLACE TABLE lists AS FROM ndcg_train_lists('train')")
    assert con.sql("SELECT user_id, position, item_id FROM ndcg_seen_entries_of('ranked', "
                   "'lists') ORDER BY position").fetchall() == [("t1", 1, "b"), ("t1", 3, "c")]


@pytest.mark.parametrize("items, message", [
    ([("a", ["s"], [1.0, 0.0]), ("a", ["t"], [0.0, 1.0])], "item a has 2 rows"),
    ([("a", ["s"], [1.0, 0.0]), ("b", ["t"], [0.0, 1.0, 2.0])], "different lengths"),
    ([("a", ["s"], [1.0, float("nan")]), ("b", ["t"], [0.0, 1.0])],
     "item a has nan in its embedding: give finite numbers"),
    ([("a", ["s"], [1.0, 0.0]), ("b", ["t"], [float("inf"), 1.0])],
     "item b has inf in its embedding: give finite numbers"),
    ([("a", ["s"], [1.0, None]), ("b", ["t"], [0.0, 1.0])], "item a has a NULL number"),
    ([("a", [], None), ("b", ["t"], None)], "item a has an empty category list"),
])
def test_bad_items(con, items, message):
    rows = ", ".join("(" + ", ".join(_item_sql(v) for v in r) + ")" for r in items)
    con.execute(f"CREATE TABLE items AS SELECT * FROM (VALUES {rows}) t(item_id, category, "
                "embedding)")
    with pytest.raises(duckdb.Error, match=message):
        con.sql("FROM ndcg_beyond_features('items')").fetchall()


def test_categories_are_sets_and_need_one_category(con):
    """A category list is read as a set: a ['s', 's', NULL] and b ['s'] share everything (ild
    0), and a list holding no category, only NULLs, is refused as an empty one would be."""
    setup(con, [("u1", ["a", "b"])], [("u1", "a", 1)], TRAIN, ITEMS)
    con.execute("CREATE OR REPLACE TABLE items AS SELECT * FROM (VALUES "
                "('a', ['s', 's', NULL]::VARCHAR[], NULL::DOUBLE[]), "
                "('b', ['s']::VARCHAR[], NULL::DOUBLE[])) t(item_id, category, embedding)")
    con.execute("CREATE TABLE feat AS FROM ndcg_beyond_features('items')")
    assert con.sql("SELECT item_id, category FROM feat ORDER BY item_id").fetchall() == [
        ("a", ["s"]), ("b", ["s"])]
    assert con.sql("SELECT user_id, ild FROM ndcg_beyond_ild('tops', 'feat') WHERE k = 2"
                   ).fetchall() == [("u1", 0.0)]
    con.execute("UPDATE items SET category = [NULL, NULL]::VARCHAR[] WHERE item_id = 'b'")
    with pytest.raises(duckdb.Error, match="item b has an empty category list"):
        con.sql("FROM ndcg_beyond_features('items')").fetchall()


def _item_sql(value):
    if isinstance(value, list) and not value:
        return "[]::VARCHAR[]"
    if isinstance(value, list) and any(isinstance(v, float) and not math.isfinite(v)
                                       for v in value):
        return "[" + ", ".join(f"'{v}'::DOUBLE" if isinstance(v, float) and not math.isfinite(v)
                               else repr(v) for v in value) + "]"
    if isinstance(value, list) and None in value:
        return "[" + ", ".join("NULL" if v is None else repr(v) for v in value) + "]::DOUBLE[]"
    return _sql(value)


def test_ild_item_missing_from_items(con):
    setup(con, [("u1", ["a", "z", "y"])], [("u1", "a", 1)], TRAIN, ITEMS)
    con.execute("CREATE TABLE feat AS FROM ndcg_beyond_features('items')")
    with pytest.raises(duckdb.Error, match=r"2 recommended item\(s\).*e.g. item y"):
        con.sql("FROM ndcg_beyond_ild('tops', 'feat')").fetchall()


@pytest.fixture(scope="module")
def shared():
    """One connection for every hypothesis example (registering the macros is the slow part)."""
    import ndcg_duck
    connection = duckdb.connect()
    ndcg_duck.register(connection)
    yield connection
    connection.close()


ITEM_IDS = st.sampled_from([f"i{n}" for n in range(8)])


@settings(max_examples=25, deadline=None)
@given(lists=st.lists(st.lists(ITEM_IDS, min_size=1, max_size=5, unique=True), min_size=1,
                     max_size=6),
       train=st.lists(st.tuples(st.sampled_from(["t1", "t2", "t3", "t4"]), ITEM_IDS),
                      min_size=1, max_size=15),
       catalogue=st.sets(ITEM_IDS, min_size=1),
       vectors=st.lists(st.lists(st.integers(1, 5), min_size=3, max_size=3), min_size=8,
                        max_size=8),
       k=st.integers(1, 4), share=st.sampled_from([0.0, 0.2, 0.5, 1.0]))
def test_against_reference(shared, lists, train, catalogue, vectors, k, share):
    con = shared
    recs = [(f"u{n}", items) for n, items in enumerate(lists)]
    rels = [(user, "i0", 1) for user, _ in recs]
    embedding = {f"i{n}": [float(v) for v in vec] for n, vec in enumerate(vectors)}
    items = [(i, [i], embedding[i]) for i in sorted(catalogue)]
    setup(con, recs, rels, train, items, ks=f"[{k}]", share=share)
    tops = {u: t[:k] for u, t in recs}
    pop, users = ref.popularity(train)
    got = con.sql("SELECT coverage, gini, entropy, personalization "
                  "FROM ndcg_beyond_run('tops', 'cat')").fetchall()
    want = ref.run_metrics(tops, catalogue)
    assert got[0][:3] == pytest.approx(want)
    # personalization from the exposure counts: the pair-by-pair mean (none for one user)
    assert got[0][3] == (pytest.approx(ref.personalization(tops)) if len(tops) > 1 else None)
    heads = ref.head(pop, catalogue, share)
    got = dict(((u, (n, p, t)) for u, n, p, t in con.sql(
        "SELECT user_id, novelty, popularity, tail FROM ndcg_beyond_user('tops', 'pop')"
    ).fetchall()))
    want = {u: ref.user_metrics(t, pop, users, heads) for u, t in tops.items()}
    assert got.keys() == want.keys()
    for user in want:
        assert got[user] == pytest.approx(want[user]), user
    # ild with every shown item in the catalogue's features
    con.execute("CREATE OR REPLACE TABLE items AS SELECT * FROM (VALUES " + ", ".join(
        f"('{i}', ['{i}'], {embedding[i]}::DOUBLE[])" for i in embedding)
        + ") t(item_id, category, embedding)")
    con.execute("CREATE OR REPLACE TABLE feat AS FROM ndcg_beyond_features('items')")
    got = dict(con.sql("SELECT user_id, ild FROM ndcg_beyond_ild('tops', 'feat')").fetchall())
    want = {u: ref.ild(t, embedding=embedding) for u, t in tops.items() if len(t) >= 2}
    assert got == pytest.approx(want)


def test_shell_macros(con):
    """ndcg_metrics_beyond / _ild / _mean on the hand-worked example above (k = 2)."""
    setup(con, RECS, RELS, TRAIN, ITEMS)
    con.execute("CREATE TABLE b AS FROM ndcg_metrics_beyond('recs', 'rels', 'train', 'items', k := 2)")
    con.execute("CREATE TABLE bi AS FROM ndcg_metrics_beyond_ild('recs', 'rels', 'items', k := 2)")
    got = con.sql("FROM ndcg_metrics_beyond_mean('b') ORDER BY metric").fetchall()
    assert got == [("coverage@2", 0.6, None), ("entropy@2", 1.5, None), ("gini@2", 0.5, None),
                   ("novelty@2", pytest.approx(3.5 / 3), 3), ("popularity@2", pytest.approx(3.5 / 3), 3),
                   ("tail@2", pytest.approx(2 / 3), 3)]
    assert con.sql("FROM ndcg_metrics_beyond_mean('bi')").fetchall() == [("ild@2", 0.5, 2)]


def test_tops_follow_judged_only_and_max_depth(con):
    """top_k is the core's ranking after judged_only (b unjudged drops out, c moves up) and the
    ranking edge's depth (max_depth 1 keeps a only)."""
    setup(con, [("u1", ["a", "b", "c"])], [("u1", "a", 1), ("u1", "c", 0)], TRAIN, ITEMS)
    got = con.sql("SELECT top FROM ndcg_beyond_tops('ranked', 'judg', ks := [2], "
                  "judged_only := true)").fetchall()
    assert got == [(["a", "c"],)]
    con.execute("CREATE TABLE shallow AS FROM ndcg_ranked_lists('recs', depth := 1)")
    got = con.sql("SELECT top FROM ndcg_beyond_tops('shallow', 'judg', ks := [2])").fetchall()
    assert got == [(["a"],)]


@pytest.mark.parametrize("query, message", [
    ("FROM ndcg_beyond_run_of('ex', 'cat', gini_items := 'all')",
     "gini_items must be one of catalogue, shown, not all"),
    ("FROM ndcg_beyond_run_of('ex', 'cat', entropy_base := '10')",
     "entropy_base must be one of 2, e, not 10"),
    ("FROM ndcg_beyond_popularity('train', 'cat', tail_rule := 'head')",
     "tail_rule must be one of catalogue, short_head, train_tail, not head"),
    ("FROM ndcg_beyond_user('tops', 'pop', novelty_smoothing := 'none')",
     "novelty_unseen 'count' needs novelty_smoothing 'add_one': an item unseen in train would "
     "score -log2(0), infinite; choose novelty_unseen 'one', 'skip' or 'zero'"),
    ("FROM ndcg_beyond_user('tops', 'pop', novelty_unseen := 'drop')",
     "novelty_unseen must be one of count, one, skip, zero, not drop"),
])
def test_the_peer_options_are_checked_where_they_are_used(con, query, message):
    setup(con, RECS, RELS, TRAIN, ITEMS)
    con.execute("CREATE TABLE ex AS FROM ndcg_beyond_exposure('tops')")
    with pytest.raises(duckdb.Error, match="ndcg-duck: " + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        con.sql(query).fetchall()
