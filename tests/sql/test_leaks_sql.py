"""What would mislead (sql/ndcg_leaks.sql, issue 33): recommended items seen in train
(ndcg_seen, ndcg_unseen), tied scores (ndcg_ties) and the per-item view (ndcg_item_view), each
against a worked example counted by hand in the comments."""

import pytest

# u1 scores a 0.9, b 0.5, c 0.5, d 0.1: trec_eval's order a, c, b, d (the tie of b and c by item
# id descending as text); u2 e 1.0, f 1.0, g 0.3: f, e, g; u3 h alone.
SCORED = """
CREATE OR REPLACE TABLE recs AS SELECT * FROM (VALUES
    ('u1', 'a', 0.9), ('u1', 'b', 0.5), ('u1', 'c', 0.5), ('u1', 'd', 0.1),
    ('u2', 'e', 1.0), ('u2', 'f', 1.0), ('u2', 'g', 0.3), ('u3', 'h', 0.5))
    t(user_id, item_id, score);
-- u1 had c (twice) and d in train, u2 had f; u9 is in train only
CREATE OR REPLACE TABLE train AS SELECT * FROM (VALUES
    ('u1', 'c'), ('u1', 'c'), ('u1', 'd'), ('u2', 'f'), ('u9', 'a')) t(user_id, item_id);
CREATE OR REPLACE TABLE ranked AS FROM ndcg_ranked_scores('recs');
CREATE OR REPLACE TABLE ranked_one AS FROM ndcg_ranked_scores('recs', depth := 1);
CREATE OR REPLACE TABLE averaged AS FROM ndcg_ranked_scores('recs', ties := 'average');
"""


@pytest.fixture
def scored(con):
    con.execute(SCORED)
    return con


def test_ties_counted_within_the_depth(scored):
    # the first 2 places: u1 0.9, 0.5 (the next is 0.5 too: place 2 is tied), u2 1.0, 1.0 (both
    # tied): 3 tied places of 2 users. Every place: u1's two 0.5s and u2's two 1.0s: 4. The
    # first place only: u2's 1.0 (tied with the second).
    assert scored.sql("FROM ndcg_ties('recs', depth := 2)").fetchall() == [(2, 3, "u1")]
    assert scored.sql("FROM ndcg_ties('recs')").fetchall() == [(2, 4, "u1")]
    assert scored.sql("FROM ndcg_ties('recs', depth := 1)").fetchall() == [(1, 1, "u2")]
    # a cut past what the top-n aggregates gather: every row sorted, the same count
    assert scored.sql("FROM ndcg_ties('recs', depth := 500)").fetchall() == [(2, 4, "u1")]


def test_the_score_edge_counts_its_ties(scored):
    # ndcg_ranked_scores_tied: the edge's lists and, per user, ndcg_ties' count. At depth 2: u1
    # 0.9, 0.5 | 0.5 (the tie straddles place 2: the exact fallback) 1; u2 1.0, 1.0 | 0.3 2; u3
    # 0. At depth 1: u1 0.9 | 0.5 0; u2 1.0 | 1.0 (straddling) 1; u3 0.
    for depth, tied in ((2, {"u1": 1, "u2": 2, "u3": 0}), (1, {"u1": 0, "u2": 1, "u3": 0})):
        rows = scored.sql(f"FROM ndcg_ranked_scores_tied('recs', {depth}) ORDER BY user_id"
                          ).fetchall()
        edge = scored.sql(f"FROM ndcg_ranked_scores('recs', depth := {depth}) ORDER BY user_id"
                          ).fetchall()
        assert [row[:3] for row in rows] == edge
        assert {row[0]: row[3] for row in rows} == tied
    with pytest.raises(Exception, match="ndcg_ranked_scores_tied: depth must be from 1 to 100, "
                                        "not 101"):
        scored.sql("FROM ndcg_ranked_scores_tied('recs', 101)").fetchall()



def test_the_averaging_edge_returns_a_straddling_tie_whole(scored):
    # ndcg_ranked_scores_tied with ties 'average': the first depth items, a tie straddling place
    # depth whole (the core averages over all its members), tie ranks (NULL: no two of the best
    # depth + 1 scores equal) and tied as for 'trec'. Depth 2: u1 a .9, c .5 | b .5 (straddling:
    # read again) d .1: a, c, b ranks 1, 2, 2, tied 1; u2 f, e 1.0 | g .3: ranks 1, 1, tied 2.
    # Depth 1: u1 a .9 | c .5: no tie; u2 f 1.0 | e 1.0 (straddling): f, e ranks 1, 1, tied 1.
    expected = {2: [("u1", ["a", "c", "b"], [1, 2, 2], 1), ("u2", ["f", "e"], [1, 1], 2),
                    ("u3", ["h"], None, 0)],
                1: [("u1", ["a"], None, 0), ("u2", ["f", "e"], [1, 1], 1),
                    ("u3", ["h"], None, 0)]}
    for depth, rows in expected.items():
        assert scored.sql(f"FROM ndcg_ranked_scores_tied('recs', {depth}, ties := 'average') "
                          f"ORDER BY user_id").fetchall() == rows


def long_lists(con, extra=()) -> list:
    """The table recs (user_id, item_id, score) of users 0-5 with lists of 1 to 150 rows whose
    scores have runs of equal ones, 0.0 and -0.0 and the infinities, and the rows `extra`: its
    rows."""
    scores = [float("inf"), 2.0, 2.0, 1.5, 0.0, -0.0, 0.0, -1.0, -1.0, float("-inf")]
    rows = [(user, item, scores[(item * 7 + user) % len(scores)])
            for user, length in enumerate((1, 2, 99, 100, 101, 150))
            for item in range(1, length + 1)] + list(extra)
    con.execute("CREATE TABLE recs (user_id INTEGER, item_id INTEGER, score DOUBLE)")
    con.executemany("INSERT INTO recs VALUES (?, ?, ?)", rows)
    return rows


@pytest.mark.parametrize("depth", [1, 2, 10, 99, 100])
def test_the_averaging_edge_of_long_lists_against_python(con, depth):
    """ndcg_ranked_scores_tied (ties 'average') on lists of 1 to 150 rows with runs of equal
    scores, 0.0 and -0.0 and the infinities, against plain Python: trec_eval's order cut at depth
    but for the rest of a tie straddling it, each position's tie rank (its score's first
    position), NULL when no two of the best depth + 1 scores are equal, and the tied places
    among the first depth."""
    rows = long_lists(con, [(9, item, 1.0 if item < 50 else 2.0)  # long runs
                            for item in range(1, 150)])
    expected = []
    for user in sorted({r[0] for r in rows}):
        mine = sorted((r for r in rows if r[0] == user), key=lambda r: (r[2], str(r[1])),
                      reverse=True)
        best = [r[2] for r in mine]
        kept = [r for r in mine if len(mine) <= depth or r[2] >= best[depth - 1]]
        ranks = [best.index(r[2]) + 1 for r in kept]
        gathered = best[:depth + 1]
        if len(set(gathered)) == len(gathered):
            ranks = None
        first = best[:depth]
        tied = sum(1 for i, s in enumerate(first)
                   if (i > 0 and best[i - 1] == s) or (i + 1 < len(best) and best[i + 1] == s))
        expected.append((user, [r[1] for r in kept], ranks, tied))
    assert con.sql(f"FROM ndcg_ranked_scores_tied('recs', {depth}, ties := 'average') "
                   f"ORDER BY user_id").fetchall() == expected


WHOLE_EDGES = ["ndcg_ranked_scores_tied_all", "ndcg_ranked_scores_tied_short"]


@pytest.mark.parametrize("edge", WHOLE_EDGES)
def test_the_whole_ranking_counts_its_ties(scored, edge):
    # ndcg_ranked_scores_tied_all (the window) and _short (lists gathered per user): every row
    # ranked (a, c, b, d; f, e, g; h) and each user's tied rows anywhere in the list: u1's two
    # 0.5s 2, u2's two 1.0s 2, u3 0 (4 in all, as ndcg_ties counts them without a depth)
    rows = scored.sql(f"FROM {edge}('recs') ORDER BY user_id").fetchall()
    assert rows == [("u1", ["a", "c", "b", "d"], None, 2), ("u2", ["f", "e", "g"], None, 2),
                    ("u3", ["h"], None, 0)]


@pytest.mark.parametrize("edge", WHOLE_EDGES)
def test_the_whole_ranking_of_long_lists_against_python(con, edge):
    """ndcg_ranked_scores_tied_all and _short on lists of 1 to 150 rows with integer ids (whose
    text order, trec_eval's for ties, is not their numeric one: 9 before 10 before 1), runs of
    equal scores, 0.0 and -0.0 and the infinities, against trec_eval's rule in plain Python."""
    rows = long_lists(con)
    expected = []
    for user in sorted({r[0] for r in rows}):
        mine = sorted((r for r in rows if r[0] == user), key=lambda r: (r[2], str(r[1])),
                      reverse=True)
        best = [r[2] for r in mine]
        tied = sum(1 for i, s in enumerate(best)
                   if (i > 0 and best[i - 1] == s) or (i + 1 < len(best) and best[i + 1] == s))
        expected.append((user, [r[1] for r in mine], None, tied))
    assert con.sql(f"FROM {edge}('recs') ORDER BY user_id").fetchall() == expected
    assert sum(row[3] for row in expected) > 0 and expected[0][3] == 0


@pytest.mark.parametrize("scores, descending", [
    ("[3.0, 2.0, 2.0, 1.0]", True), ("[1.0, 2.0]", False), ("[2.0, 1.0, 1.5]", False),
    ("[5.0]", True), ("[]::DOUBLE[]", True), ("['inf'::DOUBLE, 0.0, -0.0, 0.0, '-inf']", True)])
def test_descending_tells_a_list_already_best_first(con, scores, descending):
    """ndcg_descending, which lets ndcg_scores_ordered keep a list gathered in order: no value
    greater than the one before it (equal ones, -0.0 and 0.0 among them, may follow each other)."""
    assert con.sql(f"SELECT ndcg_descending({scores})").fetchall() == [(descending,)]


@pytest.mark.parametrize("users, short", [
    ([1] * 100 + [2] * 3 + [3], True),          # grouped, the longest 100
    ([1] * 3 + [2] * 101 + [3], False),         # a user of 101 rows
    ([1, 1, 2, 2, 1, 3], False),                # user 1's rows apart: not grouped by user
    ([], True)])
def test_lists_short_from_the_first_rows(con, users, short):
    """ndcg_lists_short: the first rows grouped by user and none of their users longer than
    100 (what leaks.folds reads to pick ndcg_ranked_scores_tied_short)."""
    con.execute("CREATE TABLE recs (user_id INTEGER)")
    for user in users:
        con.execute("INSERT INTO recs VALUES (?)", [user])
    assert con.sql("FROM ndcg_lists_short('recs', 1000)").fetchall() == [(short,)]
    # only the first n rows count: the first 100 of user 2's 101, after user 1's three
    if users[:3] == [1] * 3 and not short:
        assert con.sql("FROM ndcg_lists_short('recs', 103)").fetchall() == [(True,)]


def test_no_ties(con):
    con.execute("CREATE TABLE recs AS SELECT * FROM (VALUES ('u1', 'a', 2), ('u1', 'b', 1)) "
                "t(user_id, item_id, score)")
    assert con.sql("FROM ndcg_ties('recs', depth := 10)").fetchall() == [(0, 0, None)]


def test_seen_items_counted(scored):
    # whole rankings: u1's c (place 2) and d (place 4), u2's f (place 1): 3 items of 2 users;
    # the example is the smallest user's first. Cut at 1: u1 shows a (not seen), u2 f.
    assert scored.sql("FROM ndcg_seen('ranked', 'train')").fetchall() == [(2, 3, "u1", "c")]
    assert scored.sql("FROM ndcg_seen('ranked_one', 'train')").fetchall() == [(1, 1, "u2", "f")]


@pytest.mark.parametrize("items, had, seen", [
    ("[1, 2, 3]", "[5, 3]", True), ("[1, 2, 3]", "[5, NULL]", False), ("[]::INT[]", "[1]", False),
    ("range(100)", "range(99, 200)", True), ("range(100)", "range(100, 200)", False)])
def test_seen_any_short_and_long_lists(con, items, had, seen):
    """ndcg_seen_any: lists whose lengths multiply to at most 4096 item by item, longer ones by
    list_has_any; NULLs never match."""
    assert con.sql(f"SELECT ndcg_seen_any({items}, {had})").fetchall() == [(seen,)]


def test_unseen_drops_train_items_before_the_cut(scored):
    # u1 a, c, b, d without c and d: a, b; u2 f, e, g without f: e, g; u3 keeps h
    rows = scored.sql("FROM ndcg_unseen('ranked', 'train', depth := 2) ORDER BY user_id"
                      ).fetchall()
    assert rows == [("u1", ["a", "b"], None), ("u2", ["e", "g"], None), ("u3", ["h"], None)]
    # tie ranks closed up: u1 1, 2, 2, 4 without places 2 and 4: 1, 2; u2 1, 1, 3 without
    # place 1: 1, 3 numbered again 1, 2
    rows = scored.sql("FROM ndcg_unseen('averaged', 'train') ORDER BY user_id").fetchall()
    assert rows == [("u1", ["a", "b"], [1, 2]), ("u2", ["e", "g"], [1, 2]),
                    ("u3", ["h"], [1])]


ITEMS = """
CREATE OR REPLACE TABLE recs AS SELECT * FROM (VALUES
    ('u1', ['a', 'b', 'c']), ('u2', ['b', 'a']), ('u3', ['d'])) t(user_id, items);
CREATE OR REPLACE TABLE rels AS SELECT * FROM (VALUES
    ('u1', 'a', 1), ('u1', 'c', 1), ('u2', 'b', 0), ('u2', 'c', 2), ('u3', 'a', 1),
    ('u4', 'b', 1)) t(user_id, item_id, relevance);
CREATE OR REPLACE TABLE train AS SELECT * FROM (VALUES
    ('t1', 'a'), ('t2', 'a'), ('t1', 'b'), ('t1', 'b')) t(user_id, item_id);
CREATE OR REPLACE TABLE ranked AS FROM ndcg_ranked_lists('recs');
CREATE OR REPLACE TABLE judg AS FROM ndcg_judgments('rels');
CREATE OR REPLACE TABLE tops AS FROM ndcg_beyond_tops('ranked', 'judg', ks := [1, 2]);
CREATE OR REPLACE TABLE entries AS FROM ndcg_beyond_entries('tops');
CREATE OR REPLACE TABLE relevant AS FROM ndcg_relevant_pairs('judg');
CREATE OR REPLACE TABLE cat AS FROM ndcg_beyond_catalogue(NULL, 'train');
CREATE OR REPLACE TABLE pop AS FROM ndcg_beyond_popularity('train', 'cat');
CREATE OR REPLACE TABLE depths AS SELECT 1 AS "1", 2 AS "2";
"""


def test_item_view_by_hand(con):
    con.execute(ITEMS)
    # top_1: u1 a, u2 b, u3 d (3 shown); top_2: u1 a b, u2 b a, u3 d (5 shown). Relevant: a for
    # u1 and u3, c for u1 and u2 (u2's b is judged 0), b for u4. Hits: a in u1's lists (at 1
    # and 2); u2's a and b are not relevant to u2. Train users: a 2, b 1 (t1 twice), c, d 0.
    rows = con.sql("SELECT k, item_id, shown, round(exposure_share, 12), relevant, hits, "
                   "train_users FROM ndcg_item_view('entries', 'relevant', 'depths', 'pop') "
                   "ORDER BY k, item_id").fetchall()
    third = round(1 / 3, 12)
    assert rows == [(1, "a", 1, third, 2, 1, 2), (1, "b", 1, third, 1, 0, 1),
                    (1, "c", 0, 0.0, 2, 0, 0), (1, "d", 1, third, 0, 0, 0),
                    (2, "a", 2, 0.4, 2, 1, 2), (2, "b", 2, 0.4, 1, 0, 1),
                    (2, "c", 0, 0.0, 2, 0, 0), (2, "d", 1, 0.2, 0, 0, 0)]
