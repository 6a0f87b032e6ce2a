-- Beyond accuracy: how much of the catalogue a run shows, how concentrated its exposure is, and
-- how novel, popular and diverse each user's list is (issue 22).
--
-- top_k(u) = the first k items of user u's ranking, from the core's ranking edge after
-- max_depth, judged_only and duplicates exactly as every metric reads it (ndcg_ranked_judged);
-- the evaluated users are the users of the judgments who have a ranking. c(i) = the number of
-- evaluated users whose top_k holds item i; the catalogue is the items table, else the items of
-- train; n = its size; pop(i) = the number of distinct train users with item i (0 if none);
-- U = the number of distinct train users.
--   coverage@k   = |union of top_k(u), within the catalogue| / n        (RecBole ItemCoverage)
--   gini@k       = sum_{j=1..n} (2j - n - 1) c_(j) / (n sum c), c sorted ascending over every
--                  catalogue item, zeros included (RecBole GiniIndex). The zeros add nothing, so
--                  only the m items with c > 0 are summed, at positions j = n - m + 1 .. n.
--   entropy@k    = -sum_{c(i) > 0} q_i log2 q_i, q_i = c(i) / sum c  (Shannon 1948, in bits)
--   novelty@k    = mean over top_k(u) of -log2((pop(i) + 1) / (U + 1))  (self-information, Zhou
--                  et al. 2010, PNAS 107(10); add-one so an item unseen in train is finite)
--   popularity@k = mean over top_k(u) of pop(i)     (ARP, Abdollahpouri et al. 2019, FLAIRS)
--   tail@k       = the share of top_k(u) outside the head: the head is the floor(head_share * n)
--                  most popular catalogue items by pop (ties: item id ascending as text)
--   ild@k        = mean over pairs of distinct positions a < b in top_k(u) of
--                  1 - cosine(embedding_a, embedding_b) when items have embeddings, else
--                  1 - |C_a intersect C_b| / |C_a union C_b| of their category sets
--                  (intra-list diversity, Ziegler et al. 2005, WWW)
--   coverage_count@k = the number of catalogue items shown (coverage@k * n)
--   personalization@k = 1 - the mean over ordered pairs of users of |top_k(u) & top_k(v)| / L,
--                  L the mean list length: 1 - sum_i c(i) (c(i) - 1) / (U (U - 1) L), U users
-- coverage, gini, entropy, coverage_count and personalization are one value per run (per
-- cutoff); the others one value per user, averaged over the users that have one (ild needs two
-- items). These are the defaults: each macro's named options (popularity_by, tail_rule,
-- novelty_smoothing, gini_items, entropy_base, ild_divisor, ...) give the definitions of
-- RecBole, Elliot, RecTools, Evidently and Microsoft recommenders instead
-- (docs/beyond-peers.md; ndcg_duck/options.py's BEYOND_PEERS names them per peer). Recommended items outside the
-- catalogue count in no c(i) (they are reported by ndcg_beyond_outside) and are never in the
-- head; their pop is train's (0 when train lacks them too).

-- ndcg_beyond_once(items): whether no item is twice in the list `items` (true for a NULL or empty
-- list). A list of at most 64 items checks that each item is found first at its own position
-- (list_position: about a third of list_unique's cost on such short lists), a longer one counts
-- its distinct items (list_unique: no long list is searched in quadratic time).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_once(items) AS
    coalesce(CASE WHEN len(items) <= 64
                  THEN list_bool_and(list_transform(items,
                                                    lambda x, i: list_position(items, x) = i))
                  ELSE list_unique(items) = len(items) END, true);

-- ndcg_beyond_lists(rankings, ks): per user of rankings (a ranking edge's result) and cutoff:
-- user_id, k (NULL: no cutoff) and top (the first k ranked items, a LIST). What top_k is
-- without judged_only: the judgments need not be read (the evaluated users are chosen later,
-- or, without judgments, every user counts). Stops on an item twice in one ranking, judged or
-- not (the core stops on a judged one only: an unjudged repeat gains 0 wherever it is, but
-- would count twice in the exposure); duplicates 'first' drops repeats in the edge before.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_lists(rankings, ks := [10]) AS TABLE
    SELECT r.user_id, c.k, r.items[1:c.depth] AS top
    FROM (FROM query_table(rankings)
          WHERE ndcg_beyond_once(items)
             OR ndcg_require(false, ndcg_twice(user_id, ndcg_items_repeated(items)[1]))) AS r
    CROSS JOIN ndcg_cutoffs(ks) AS c;

-- ndcg_beyond_tops(rankings, judgments, ks, judged_only): per evaluated user and cutoff: user_id,
-- k (NULL: no cutoff) and top (the user's top_k, a LIST). rankings as a ranking edge returns it,
-- judgments as ndcg_judgments does; the core's ndcg_ranked_judged applies judged_only.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_tops(rankings, judgments, ks := [10],
        judged_only := false) AS TABLE
    SELECT u.user_id, c.k, u.ranked[1:c.depth] AS top
    FROM ndcg_ranked_judged(rankings, judgments, judged_only) AS u
    CROSS JOIN ndcg_cutoffs(ks) AS c
    WHERE u.has_judgments AND u.has_ranking;

-- ndcg_beyond_catalogue(items, train): the catalogue's item ids (item_id): the items table's,
-- or, when items is NULL, the distinct items of train. Stops on a NULL item id, and on an item
-- twice in items.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_catalogue(items, train) AS TABLE
    SELECT item_id FROM query_table(coalesce(items, train))
    GROUP BY item_id
    HAVING ndcg_require(item_id IS NOT NULL,
                        CASE WHEN items IS NULL THEN 'train' ELSE 'items' END
                        || ': ' || count(*) || ' row(s) have no item id (NULL)')
       AND ndcg_require(items IS NULL OR count(*) = 1,
                        'items: item ' || ndcg_show(item_id) || ' has ' || count(*)
                        || ' rows: give each item one row');

-- ndcg_train_lists(train): train's rows grouped per user, one pass over train for all that read
-- them (popularity, ndcg_beyond_popularity_of; the seen-items check, sql/ndcg_leaks.sql's
-- ndcg_seen_entries_of): user_id and items (a LIST of the user's item ids, one per row:
-- repeats and NULLs kept, in no order). One row per user id, NULL included.
CREATE OR REPLACE TEMP MACRO ndcg_train_lists(train) AS TABLE
    SELECT user_id, list(item_id) AS items FROM query_table(train) GROUP BY user_id;

-- ndcg_beyond_popularity_of(train, lists, catalogue, head_share, popularity_by, tail_rule): from
-- train's rows (user_id, item_id) and the same grouped per user (lists, as ndcg_train_lists
-- returns them), every catalogue item and every
-- train item with item_id, pop (popularity@k's count of the item in train: distinct users when
-- popularity_by is 'users', interaction rows when 'interactions'; 0 for none), by_users and by_rows (both counts), tail (whether the item is in the long tail, by
-- tail_rule, ranking items by pop), users (U, the distinct train users) and interactions (the
-- train rows), the last two the same on every row. catalogue as ndcg_beyond_catalogue returns
-- it. tail_rule:
--   'catalogue'  the head is the floor(head_share * n) most popular catalogue items (ties by item
--                id ascending as text); every other item is tail, unseen in train or not
--   'short_head' the head is the most popular train items (ties as above) down to the first
--                whose running sum of pop reaches head_share of the sum over train items
--                (Elliot's Popularity.get_short_head, head_share 0.8); tail the other train items
--   'train_tail' the tail is the max(1, m - ceil(head_share * m)) least popular of the m train
--                items (ties by item id ascending as text; RecBole's TailPercentage, tail_ratio
--                1 - head_share)
-- Under the last two an item never seen in train is not tail. The catalogue's head is found
-- without sorting the catalogue: the pop level where it ends (edge) comes from the count of
-- items per pop level, and only that level's items are ordered by id to fill its remaining places
-- (quota). The other rules sort the train items; each rule's steps read nothing unless chosen.
-- An item's by_rows counts its rows of train (grouped by item alone, straight from train, whose
-- item ids a Parquet file describes: DuckDB may then count them in an array), by_users its rows
-- less its repeats: the rows that are not the first of the item in their user's list (one per
-- distinct (user, item) pair remains, without a table of the pairs): a list of at most 64 rows
-- finds its firsts by position (list_position), a longer one is sorted and compares each row
-- with the one before (no long list is searched in quadratic time).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_popularity_of(train, lists, catalogue, head_share := 0.2,
        popularity_by := 'users', tail_rule := 'catalogue') AS TABLE
    WITH sorted_ AS (SELECT user_id, CASE WHEN len(items) <= 64 THEN items
                                          ELSE list_sort(items) END AS items
                     FROM query_table(lists)),
    rows_ AS (SELECT user_id, unnest(items) AS item_id, unnest(CASE WHEN len(items) <= 64
                  THEN list_transform(items, lambda x, i: list_position(items, x) = i)
                  ELSE list_transform(items, lambda x, i: i = 1 OR x <> items[i - 1]) END) AS first
              FROM sorted_),
    repeats_ AS (SELECT item_id, count(*) AS repeats FROM rows_ WHERE NOT first GROUP BY item_id),
    rows_of_ AS (SELECT item_id, count(*) AS by_rows
                 FROM query_table(train)
                 GROUP BY item_id
                 HAVING ndcg_require(item_id IS NOT NULL,
                                     'train: ' || count(*) || ' row(s) have no item id (NULL)')
                    AND ndcg_require(count(*) = count(user_id),
                                     'train: item ' || ndcg_show(item_id)
                                     || ' has rows without a user id (NULL)')),
    pop_ AS (SELECT o.item_id, o.by_rows - coalesce(r.repeats, 0) AS by_users, o.by_rows
             FROM rows_of_ AS o LEFT JOIN repeats_ AS r ON r.item_id = o.item_id),
    items_ AS (SELECT coalesce(c.item_id, p.item_id) AS item_id,
                      coalesce(CASE WHEN popularity_by = 'users' THEN p.by_users
                                    ELSE p.by_rows END, 0) AS pop,
                      coalesce(p.by_users, 0) AS by_users, coalesce(p.by_rows, 0) AS by_rows,
                      c.item_id IS NOT NULL AS listed, p.item_id IS NOT NULL AS seen
               FROM query_table(catalogue) AS c FULL OUTER JOIN pop_ AS p ON p.item_id = c.item_id),
    levels_ AS (SELECT pop, count(*) AS items,
                       sum(count(*)) OVER (ORDER BY pop DESC) AS through
                FROM items_ WHERE listed AND tail_rule = 'catalogue' GROUP BY pop),
    size_ AS (SELECT floor(head_share * coalesce(sum(items), 0)) AS size FROM levels_),
    edge_ AS (SELECT l.pop AS edge, s.size - (l.through - l.items) AS quota
              FROM levels_ AS l CROSS JOIN size_ AS s
              WHERE l.through >= s.size AND l.through - l.items < s.size),
    ties_ AS (SELECT item_id FROM items_
              WHERE listed AND pop = (SELECT edge FROM edge_)
              QUALIFY row_number() OVER (ORDER BY item_id::VARCHAR) <= (SELECT quota FROM edge_)),
    -- short_head: the train items by pop descending, with the pop of the items before each
    short_ AS (SELECT item_id, row_number() OVER w AS place,
                      coalesce(sum(pop) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                               0) AS before,
                      sum(pop) OVER () AS total
               FROM items_ WHERE seen AND tail_rule = 'short_head'
               WINDOW w AS (ORDER BY pop DESC, item_id::VARCHAR)),
    -- train_tail: the train items by pop ascending, and how many there are
    least_ AS (SELECT item_id, row_number() OVER (ORDER BY pop, item_id::VARCHAR) AS place,
                      count(*) OVER () AS m
               FROM items_ WHERE seen AND tail_rule = 'train_tail')
    SELECT i.item_id, i.pop, i.by_users, i.by_rows,
           CASE tail_rule
               WHEN 'catalogue' THEN NOT ((i.listed AND coalesce(i.pop > (SELECT edge FROM edge_),
                                                                 false))
                                          OR i.item_id IN (SELECT item_id FROM ties_))
               WHEN 'short_head' THEN i.item_id IN (SELECT item_id FROM short_
                                                    WHERE place > 1 AND before >= head_share * total)
               ELSE i.item_id IN (SELECT item_id FROM least_
                                  WHERE place <= greatest(1, m - ceil(head_share * m)))
           END AS tail,
           (SELECT count(user_id) FROM query_table(lists)) AS users,
           (SELECT sum(by_rows) FROM pop_) AS interactions
    FROM items_ AS i
    WHERE ndcg_require(head_share >= 0 AND head_share <= 1,
                       'head_share must be between 0 and 1, not ' || ndcg_show(head_share))
      AND ndcg_option('popularity_by', popularity_by, ['users', 'interactions'])
      AND ndcg_option('tail_rule', tail_rule, ['catalogue', 'short_head', 'train_tail']);

-- ndcg_beyond_popularity(train, catalogue, head_share, popularity_by, tail_rule):
-- ndcg_beyond_popularity_of (its options passed on) over train's rows (user_id, item_id)
-- grouped per user by ndcg_train_lists. A run that reads train's lists twice (popularity and the
-- seen-items check) makes them once and calls ndcg_beyond_popularity_of.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_popularity(train, catalogue, head_share := 0.2,
        popularity_by := 'users', tail_rule := 'catalogue') AS TABLE
    WITH lists_ AS (FROM ndcg_train_lists(train))
    FROM ndcg_beyond_popularity_of(train, 'lists_', catalogue, head_share := head_share,
                                   popularity_by := popularity_by, tail_rule := tail_rule);

-- ndcg_beyond_entries(tops): the items of each user's deepest top_k, one row each: user_id,
-- position (1 for the first) and item_id. Every user of tops has a list at every cutoff, and a
-- cutoff's list is the deepest list's first k items (k NULL: the deepest itself), so the item at
-- position p is in top_k when p <= k: one unnest serves every cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_entries(tops) AS TABLE
    SELECT user_id, generate_subscripts(top, 1) AS position, unnest(top) AS item_id
    FROM query_table(tops)
    WHERE k IS NOT DISTINCT FROM (SELECT CASE WHEN count(k) < count(*) THEN NULL ELSE max(k) END
                                  FROM query_table(tops));

-- ndcg_beyond_cut(deepest, ks): per user of `deepest` (user_id and top: the user's list at the
-- deepest cutoff of ks, as ndcg_beyond_lists or ndcg_beyond_tops return it for that one cutoff)
-- and per cutoff of ks: user_id, k (NULL: no cutoff) and top, the first k items of the deepest
-- list. A cutoff's top_k is the first k items of the same ranking, so the deepest list alone is
-- kept and every other is cut from it where it is read.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cut(deepest, ks) AS TABLE
    SELECT t.user_id, c.k, t.top[1:c.depth] AS top
    FROM query_table(deepest) AS t CROSS JOIN ndcg_cutoffs(ks) AS c;

-- ndcg_beyond_cutoffs_of(tops): the cutoffs of tops (k, NULL for no cutoff) with depth, the
-- deepest position each one holds.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cutoffs_of(tops) AS TABLE
    SELECT k, coalesce(k, 9223372036854775807) AS depth
    FROM (SELECT DISTINCT k FROM query_table(tops));

-- ndcg_beyond_shown_of(entries, depths): every item of entries (ndcg_beyond_entries' rows) once,
-- with its exposure at every cutoff: item_id and, per column of depths (one row, a column per
-- cutoff named by it, 'all' for no cutoff, holding the deepest position the cutoff reads), how
-- many users' top_k hold the item (0 when only deeper lists do). One group per item, each
-- cutoff counted by a column of its own: half the work of a group per cutoff and item.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_shown_of(entries, depths) AS TABLE
    SELECT e.item_id, count(CASE WHEN e.position <= COLUMNS(d.*) THEN 1 END)
    FROM query_table(entries) AS e CROSS JOIN query_table(depths) AS d
    GROUP BY e.item_id;

-- ndcg_beyond_exposure_in(shown): ndcg_beyond_exposure's rows (k, item_id, c) from
-- ndcg_beyond_shown_of's: a row per cutoff and item its top_k lists show (c > 0).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure_in(shown) AS TABLE
    SELECT CASE WHEN k = 'all' THEN NULL ELSE k::BIGINT END AS k, item_id, c
    FROM (UNPIVOT (FROM query_table(shown)) ON COLUMNS(* EXCLUDE (item_id))
          INTO NAME k VALUE c)
    WHERE c > 0;

-- ndcg_beyond_exposure(tops): per cutoff k and shown item: k, item_id and c (how many users'
-- top_k hold it), every shown item, inside the catalogue or not. One pass over the lists, read
-- by ndcg_beyond_run_of and ndcg_beyond_outside_of. k may be any key (the Spark engine's
-- workers pass a struct of cutoff and segment); the default engine, whose lists are each
-- user's deepest one cut at every k, unnests them once and counts each item at every cutoff
-- in one group (ndcg_beyond_shown_of, ndcg_beyond_exposure_in) instead.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure(tops) AS TABLE
    SELECT k, item_id, count(*) AS c
    FROM (SELECT k, unnest(top) AS item_id FROM query_table(tops))
    GROUP BY k, item_id;

-- ndcg_beyond_run_of(exposure, catalogue, gini_items, gini_divisor, gini_orientation,
-- catalogue_size, entropy_base, entropy_divisor): the per-run metrics from ndcg_beyond_exposure
-- and ndcg_beyond_catalogue: per cutoff k that shows a catalogue item, coverage, gini, entropy
-- (DOUBLEs) and coverage_count (m, how many catalogue items are shown). They read how many
-- catalogue items share each count c (items), not each item: the t items of count c that
-- follow b items of smaller counts hold places j = N - m + b + 1 .. N - m + b + t of gini's sum,
-- whose (2j - N - 1) c terms add up to t (N - 2m + 2b + t) c, an integer summed exactly.
-- The options (each peer's definition; the defaults are the ones above):
--   catalogue_size    'items': n is the catalogue's size; 'items_plus_one': one more (RecBole's
--                     padding item, in its ItemCoverage and GiniIndex)
--   gini_items        'catalogue': N = n, never-shown items in the sum as zeros; 'shown': N = m,
--                     the shown items only (Evidently's PopularityBias.get_gini)
--   gini_divisor      'n': the sum over N sum c; 'n_minus_1': over (N - 1) sum c (Elliot's
--                     GiniIndex, Evidently), NULL when N = 1
--   gini_orientation  'inequality': 0 when every item is shown equally often; 'equality':
--                     1 - that (Elliot's GiniIndex: higher is more equal)
--   entropy_base      '2' (bits) or 'e' (nats: RecBole's ShannonEntropy)
--   entropy_divisor   'none', or 'shown': divided by m (RecBole's ShannonEntropy)
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_of(exposure, catalogue, gini_items := 'catalogue',
        gini_divisor := 'n', gini_orientation := 'inequality', catalogue_size := 'items',
        entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH n_ AS (SELECT count(*) + CASE WHEN catalogue_size = 'items' THEN 0 ELSE 1 END AS n
                FROM query_table(catalogue)),
    counts_ AS (SELECT e.k, e.c, count(*) AS items
                FROM query_table(exposure) AS e
                SEMI JOIN query_table(catalogue) AS c ON c.item_id = e.item_id
                GROUP BY e.k, e.c),
    ranked_ AS (SELECT k, c, items, n,
                       coalesce(sum(items) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN
                                                 UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS b,
                       sum(items) OVER (PARTITION BY k) AS m,
                       sum(items * c) OVER (PARTITION BY k) AS total
                FROM counts_ CROSS JOIN n_),
    sized_ AS (SELECT *, CASE WHEN gini_items = 'catalogue' THEN n ELSE m END AS size
               FROM ranked_),
    run_ AS (SELECT k, any_value(m) AS m, any_value(m) / any_value(n) AS coverage,
                    sum(items::HUGEINT * (size - 2 * m + 2 * b + items) * c)::DOUBLE
                        / any_value(CASE WHEN gini_divisor = 'n' THEN size
                                         ELSE nullif(size - 1, 0) END * total) AS gini,
                    -fsum(items * (c / total * CASE WHEN entropy_base = '2' THEN log2(c / total)
                                                    ELSE ln(c / total) END)) AS entropy
             FROM sized_ GROUP BY k)
    SELECT k, coverage,
           CASE WHEN gini_orientation = 'inequality' THEN gini ELSE 1 - gini END AS gini,
           entropy / CASE WHEN entropy_divisor = 'none' THEN 1 ELSE m END AS entropy,
           m AS coverage_count
    FROM run_
    WHERE ndcg_option('gini_items', gini_items, ['catalogue', 'shown'])
      AND ndcg_option('gini_divisor', gini_divisor, ['n', 'n_minus_1'])
      AND ndcg_option('gini_orientation', gini_orientation, ['inequality', 'equality'])
      AND ndcg_option('entropy_base', entropy_base, ['2', 'e'])
      AND ndcg_option('entropy_divisor', entropy_divisor, ['none', 'shown'])
      AND ndcg_option('catalogue_size', catalogue_size, ['items', 'items_plus_one']);

-- ndcg_beyond_personalization_of(exposure, keys): per key k of `keys` (k and users, U: how many
-- users' lists were read), personalization = 1 - the mean over ordered pairs of users u != v of
-- |top_k(u) intersect top_k(v)| / L, L the mean list length (k when every list is full). An
-- item shown to c users is in c (c - 1) ordered pairs' overlaps, so the mean overlap is
-- sum c (c - 1) / (U (U - 1)) over every shown item, inside the catalogue or not; L = sum c / U.
-- NULL with fewer than two users or no item shown (Evidently's PersonalizationMetric).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_personalization_of(exposure, keys) AS TABLE
    SELECT u.k, 1 - sum(e.c * (e.c - 1))::DOUBLE
                    / nullif(any_value(u.users - 1) * sum(e.c), 0) AS personalization
    FROM query_table(keys) AS u
    LEFT JOIN query_table(exposure) AS e ON e.k IS NOT DISTINCT FROM u.k
    GROUP BY u.k;

-- ndcg_beyond_run_at(exposure, keys, catalogue, ...): ndcg_beyond_run_of (its options passed on)
-- at every k of `keys` (a relation with k and users: the cutoffs, or groups, whose lists were
-- read, and how many users' lists): k, coverage, gini, entropy (0 when no catalogue item is
-- shown), users, coverage_count and personalization (ndcg_beyond_personalization_of).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_at(exposure, keys, catalogue,
        gini_items := 'catalogue', gini_divisor := 'n', gini_orientation := 'inequality',
        catalogue_size := 'items', entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH run_ AS (SELECT *, true AS found
                  FROM ndcg_beyond_run_of(exposure, catalogue, gini_items := gini_items,
                                          gini_divisor := gini_divisor,
                                          gini_orientation := gini_orientation,
                                          catalogue_size := catalogue_size,
                                          entropy_base := entropy_base,
                                          entropy_divisor := entropy_divisor)),
    personal_ AS (FROM ndcg_beyond_personalization_of(exposure, keys))
    SELECT u.k, coalesce(r.coverage, 0.0) AS coverage,
           CASE WHEN r.found THEN r.gini ELSE 0.0 END AS gini,
           coalesce(r.entropy, 0.0) AS entropy, u.users,
           coalesce(r.coverage_count, 0) AS coverage_count, p.personalization
    FROM query_table(keys) AS u LEFT JOIN run_ AS r ON r.k IS NOT DISTINCT FROM u.k
    LEFT JOIN personal_ AS p ON p.k IS NOT DISTINCT FROM u.k;

-- ndcg_beyond_run(tops, catalogue, ...): ndcg_beyond_run_at (its options passed on) over the
-- lists of ndcg_beyond_tops: per cutoff k, coverage, gini, entropy (0 when no catalogue item is
-- shown), users (how many users' lists were read), coverage_count and personalization.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run(tops, catalogue, gini_items := 'catalogue',
        gini_divisor := 'n', gini_orientation := 'inequality', catalogue_size := 'items',
        entropy_base := '2', entropy_divisor := 'none') AS TABLE
    WITH exposure_ AS (FROM ndcg_beyond_exposure(tops)),
    users_ AS (SELECT k, count(DISTINCT user_id) AS users FROM query_table(tops) GROUP BY k)
    FROM ndcg_beyond_run_at('exposure_', 'users_', catalogue, gini_items := gini_items,
                            gini_divisor := gini_divisor, gini_orientation := gini_orientation,
                            catalogue_size := catalogue_size, entropy_base := entropy_base,
                            entropy_divisor := entropy_divisor);

-- ndcg_beyond_outside_of(exposure, catalogue): the shown items outside the catalogue, over every
-- cutoff's lists: outside (how many distinct items) and example (one of them, the smallest as
-- text; NULL when none). One row. It reads exposure's item_id alone, so the entries of
-- ndcg_beyond_entries serve as well.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_outside_of(exposure, catalogue) AS TABLE
    SELECT count(DISTINCT e.item_id) AS outside, min(e.item_id::VARCHAR) AS example
    FROM query_table(exposure) AS e
    ANTI JOIN query_table(catalogue) AS c ON c.item_id = e.item_id;

-- ndcg_beyond_outside(tops, catalogue): ndcg_beyond_outside_of over the lists of
-- ndcg_beyond_tops.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_outside(tops, catalogue) AS TABLE
    WITH exposure_ AS (FROM ndcg_beyond_exposure(tops))
    FROM ndcg_beyond_outside_of('exposure_', catalogue);

-- ndcg_beyond_novelty(p, n, smoothing, unseen): the self-information of an item that p of n train
-- users (or interaction rows) hold: -log2((p + 1) / (n + 1)) with smoothing 'add_one', -log2(p /
-- n) with 'none'. An item unseen in train (p = 0) by unseen: 'count' takes p = 0 as it is (with
-- add_one only: -log2(0) is infinite), 'one' as p = 1 (RecTools' MeanInvUserFreq), 'skip' gives
-- NULL, left out of the mean (Evidently's NoveltyMetric), 'zero' gives 0, still counted in the
-- mean (Microsoft recommenders' novelty).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_novelty(p, n, smoothing, unseen) AS
    CASE WHEN p = 0 AND unseen = 'skip' THEN NULL
         WHEN p = 0 AND unseen = 'zero' THEN 0.0
         ELSE -log2((CASE WHEN p = 0 AND unseen = 'one' THEN 1 ELSE p END
                     + CASE WHEN smoothing = 'add_one' THEN 1 ELSE 0 END)
                    / (n + CASE WHEN smoothing = 'add_one' THEN 1 ELSE 0 END)) END;

-- ndcg_beyond_values_of(shown, popularity, novelty_by, novelty_smoothing, novelty_unseen,
-- tail_rule, popularity_unseen): what each shown item adds to the per-user metrics that read
-- pop: per item of shown (item_id, each once: ndcg_beyond_shown_of's rows), item_id, novelty,
-- popularity and tail (DOUBLEs; popularity NULL when left out of the mean). popularity as
-- ndcg_beyond_popularity returns it (with the same tail_rule): an item it lacks has pop 0 and
-- is tail under the rule 'catalogue' only. novelty reads the item's count of distinct train
-- users over U (novelty_by 'users') or of interaction rows over the train rows
-- ('interactions', as Microsoft recommenders' novelty does), by ndcg_beyond_novelty.
-- popularity_unseen 'zero' counts an item unseen in train (pop 0) as 0, 'skip' leaves it out of
-- popularity's mean (Evidently's PopularityBias.get_apr).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_values_of(shown, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count', tail_rule := 'catalogue',
        popularity_unseen := 'zero') AS TABLE
    WITH totals_ AS (SELECT CASE WHEN novelty_by = 'users' THEN any_value(users)
                                 ELSE any_value(interactions) END AS n
                     FROM query_table(popularity)
                     WHERE ndcg_option('novelty_by', novelty_by, ['users', 'interactions'])
                       AND ndcg_option('novelty_smoothing', novelty_smoothing, ['add_one', 'none'])
                       AND ndcg_option('novelty_unseen', novelty_unseen,
                                       ['count', 'one', 'skip', 'zero'])
                       AND ndcg_option('popularity_unseen', popularity_unseen, ['zero', 'skip'])
                       AND ndcg_require(novelty_smoothing = 'add_one' OR novelty_unseen <> 'count',
                               'novelty_unseen ''count'' needs novelty_smoothing ''add_one'': an '
                               || 'item unseen in train would score -log2(0), infinite; choose '
                               || 'novelty_unseen ''one'', ''skip'' or ''zero'''))
    SELECT s.item_id,
           ndcg_beyond_novelty(CASE WHEN p.item_id IS NULL THEN 0
                                    WHEN novelty_by = 'users' THEN p.by_users
                                    ELSE p.by_rows END, totals_.n, novelty_smoothing,
                               novelty_unseen) AS novelty,
           CASE WHEN coalesce(p.pop, 0) > 0 OR popularity_unseen = 'zero'
                THEN coalesce(p.pop::DOUBLE, 0.0) END AS popularity,
           CASE WHEN p.item_id IS NULL THEN CASE WHEN tail_rule = 'catalogue' THEN 1.0 ELSE 0.0 END
                WHEN p.tail THEN 1.0 ELSE 0.0 END AS tail
    FROM query_table(shown) AS s
    LEFT JOIN query_table(popularity) AS p ON p.item_id = s.item_id
    CROSS JOIN totals_;

-- ndcg_beyond_user_in(entries, item_values, tops): the per-user metrics that read pop: per user and
-- cutoff, user_id, k, novelty, popularity and tail (DOUBLEs; no row for an empty list; novelty
-- or popularity NULL when every item is left out), the means of their items' values. entries
-- as ndcg_beyond_entries returns it for tops; tops is read for its cutoffs (column k) alone, so
-- a relation of the cutoffs serves as well (DuckDB plans that join better than a view of the
-- lists cut per cutoff); item_values ndcg_beyond_values_of's rows, holding
-- every item of entries: the join is an inner one, which DuckDB runs 2-3x faster than a LEFT
-- JOIN (above all from a table, with integer item ids of a narrow range).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user_in(entries, item_values, tops) AS TABLE
    SELECT e.user_id, c.k, avg(v.novelty) AS novelty, avg(v.popularity) AS popularity,
           avg(v.tail) AS tail
    FROM query_table(entries) AS e
    JOIN query_table(item_values) AS v ON v.item_id = e.item_id
    JOIN ndcg_beyond_cutoffs_of(tops) AS c ON e.position <= c.depth
    GROUP BY e.user_id, c.k;

-- ndcg_beyond_user_of(entries, tops, popularity, novelty_by, novelty_smoothing, novelty_unseen,
-- tail_rule, popularity_unseen): ndcg_beyond_user_in over the values (ndcg_beyond_values_of,
-- its options passed on) of the items found in entries.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user_of(entries, tops, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count',
        tail_rule := 'catalogue', popularity_unseen := 'zero') AS TABLE
    WITH shown_ AS (SELECT DISTINCT item_id FROM query_table(entries)),
    values_ AS (FROM ndcg_beyond_values_of('shown_', popularity, novelty_by := novelty_by,
                                           novelty_smoothing := novelty_smoothing,
                                           novelty_unseen := novelty_unseen,
                                           tail_rule := tail_rule,
                                           popularity_unseen := popularity_unseen))
    FROM ndcg_beyond_user_in(entries, 'values_', tops);

-- ndcg_beyond_user(tops, popularity, ...): ndcg_beyond_user_of over the entries of tops (its
-- options passed on).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user(tops, popularity, novelty_by := 'users',
        novelty_smoothing := 'add_one', novelty_unseen := 'count',
        tail_rule := 'catalogue', popularity_unseen := 'zero') AS TABLE
    WITH entries_ AS (FROM ndcg_beyond_entries(tops))
    FROM ndcg_beyond_user_of('entries_', tops, popularity, novelty_by := novelty_by,
                             novelty_smoothing := novelty_smoothing,
                             novelty_unseen := novelty_unseen, tail_rule := tail_rule,
                             popularity_unseen := popularity_unseen);

-- ndcg_beyond_plain(squares): whether `squares`, the sum of the squares of an embedding's
-- numbers as they are, is their length squared to the last bits: finite (no square overflowed)
-- and at least 1e-200 (the squares that vanish below 1e-308 weigh less than 1e-105 of it).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_plain(squares) AS
    coalesce(isfinite(squares) AND squares >= 1e-200, false);

-- ndcg_beyond_unit(embedding, scale, length): the embedding divided by its length, given the
-- length of embedding / scale (computed once per item, not once per number). scale is NULL when
-- the numbers' own squares sum to the length squared (ndcg_beyond_plain), else their largest
-- absolute number: a cosine does not depend on the length, so each number is then divided by
-- the scale first: squares of 1e200 (or 1e-200) would overflow (or vanish), squares of numbers
-- no larger than 1 cannot.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_unit(embedding, scale, length) AS
    CASE WHEN scale IS NULL THEN list_transform(embedding, lambda x: x / length)
         ELSE list_transform(embedding, lambda x: (x / scale) / length) END;

-- ndcg_beyond_unit_at(embedding, scale, length, d): number d of ndcg_beyond_unit(embedding, scale,
-- length), by the same arithmetic (the same bits), without making the list: a table of the unit
-- vectors as one column per number is taken straight from the embeddings.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_unit_at(embedding, scale, length, d) AS
    CASE WHEN scale IS NULL THEN embedding[d] / length ELSE (embedding[d] / scale) / length END;

-- ndcg_beyond_jaccard_distance(a, b): 1 - |a intersect b| / |a union b| of two category lists.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_jaccard_distance(a, b) AS
    1.0 - len(list_intersect(a, b)) / len(list_distinct(list_concat(a, b)));

-- ndcg_beyond_cosine_ild(n, total): ild of n unit vectors from their sum `total`: the mean over
-- the n(n-1)/2 pairs of 1 - cosine. Sum over pairs a < b of u_a . u_b = (|total|^2 - n) / 2,
-- as |total|^2 = sum over a, b of u_a . u_b and each u_a . u_a = 1: one pass over the list,
-- not one per pair.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_ild(n, total) AS
    1.0 - (list_dot_product(total, total) - n) / (n * (n - 1));

-- ndcg_beyond_checked(items): the items table as item_id, embedding (DOUBLE[] or NULL), scale and
-- length (what ndcg_beyond_unit and ndcg_beyond_unit_at divide by) and category (a VARCHAR list
-- as given, or NULL: made a set where it is read, ndcg_beyond_categories, so a run whose ild
-- reads embeddings never pays for it), with the checks: an item twice, embeddings of
-- different lengths (each against one item's length), a NULL, NaN or infinite number in an
-- embedding, an embedding of zeros (it has no direction), a category list without a category
-- (empty, or only NULLs).
-- items has item_id and the columns embedding and category (either may be all NULL). The
-- repeat check reads the ids alone; the others are folded into the one pass over the rows:
-- NULL numbers are counted (list_count skips them) first, NaN and infinite ones found in the
-- scale (the largest absolute number: NaN sorts above every number),
-- and the one item whose length every other is checked against is joined to every row. The
-- length is the native list_dot_product of the numbers as they are (one pass, no lambda) when
-- that is exact (ndcg_beyond_plain: nearly always); only the others (NaN, infinite, huge or tiny
-- numbers, zeros) are scaled first, and their scale is what the checks read.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_checked(items) AS TABLE
    WITH twice_ AS (SELECT count(*) AS times, item_id FROM query_table(items)
                    GROUP BY item_id HAVING count(*) > 1 ORDER BY item_id::VARCHAR LIMIT 1),
    first_ AS (SELECT item_id, len(embedding::DOUBLE[]) AS width FROM query_table(items)
               WHERE embedding IS NOT NULL LIMIT 1),
    read_ AS (SELECT item_id, embedding::DOUBLE[] AS embedding, category::VARCHAR[] AS category
              FROM query_table(items)),
    -- list_dot_product stops on a NULL number anywhere in its input's vector, in its own words,
    -- and DuckDB 1.5 may compute it before a filter's check: the check is the CASE's condition,
    -- which DuckDB evaluates before the branch
    plain_ AS (SELECT *,
                      CASE WHEN ndcg_require(embedding IS NULL
                                             OR list_count(embedding) = len(embedding),
                                             'items: item ' || ndcg_show(item_id)
                                             || ' has a NULL number in its embedding: fill it in')
                           THEN list_dot_product(embedding, embedding) END AS squares
               FROM read_),
    scaled_ AS (SELECT *, CASE WHEN NOT ndcg_beyond_plain(squares)
                               THEN list_max(list_transform(embedding, lambda x: abs(x))) END
                              AS scale
                FROM plain_),
    rows_ AS (SELECT item_id, embedding, category, scale,
                     sqrt(CASE WHEN scale IS NULL THEN squares
                               ELSE list_sum(list_transform(embedding,
                                                            lambda x: (x / scale) * (x / scale)))
                          END) AS length
              FROM scaled_)
    SELECT r.item_id, r.embedding, r.scale, r.length, r.category
    FROM rows_ AS r LEFT JOIN first_ AS f ON true
    WHERE (SELECT ndcg_require(count(*) = 0, 'items: item ' || ndcg_show(any_value(item_id))
                                             || ' has ' || any_value(times)
                                             || ' rows: give each item one row') FROM twice_)
      AND ndcg_require(r.embedding IS NULL OR len(r.embedding) = f.width,
                       'items: embeddings have different lengths: item ' || ndcg_show(r.item_id)
                       || ' has ' || len(r.embedding) || ' numbers, item ' || ndcg_show(f.item_id)
                       || ' has ' || f.width || ': give every item one length')
      AND ndcg_require(r.embedding IS NULL OR coalesce(isfinite(r.scale), true),
                       'items: item ' || ndcg_show(r.item_id) || ' has '
                       || ndcg_show(list_filter(r.embedding, lambda x: NOT isfinite(x))[1])
                       || ' in its embedding: give finite numbers')
      AND ndcg_require(r.embedding IS NULL OR r.scale IS NULL OR r.scale > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an embedding of zeros, '
                       || 'which has no direction for a cosine')
      AND ndcg_require(r.category IS NULL OR list_count(r.category) > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an empty category list');

-- ndcg_beyond_categories(category): an item's category list as the set jaccard reads (each
-- category once, NULLs dropped), from the list as given (ndcg_beyond_checked's category).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_categories(category) AS list_distinct(category);

-- ndcg_beyond_features(items): the items table as item_id, unit (the embedding as a unit vector,
-- DOUBLE[], or NULL) and category (ndcg_beyond_categories: a distinct VARCHAR list, or NULL),
-- with ndcg_beyond_checked's checks.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_features(items) AS TABLE
    SELECT item_id, ndcg_beyond_unit(embedding, scale, length) AS unit,
           ndcg_beyond_categories(category) AS category
    FROM ndcg_beyond_checked(items);

-- ndcg_beyond_cosine_mode(features): true when any item of features has an embedding: ild then
-- reads embeddings (and every shown item needs one), else categories.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_mode(features) AS TABLE
    SELECT EXISTS (FROM query_table(features) WHERE unit IS NOT NULL) AS cosine;

-- ndcg_beyond_at(tops, features, cosine): the items of every top_k of two items or more, when
-- ild reads embeddings (cosine true) or categories (false), else none: user_id, k, position,
-- item_id.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_at(tops, features, cosine) AS TABLE
    WITH mode_ AS (FROM ndcg_beyond_cosine_mode(features))
    SELECT user_id, k, generate_subscripts(top, 1) AS position, unnest(top) AS item_id
    FROM query_table(tops)
    WHERE len(top) >= 2 AND (SELECT mode_.cosine = cosine FROM mode_);

-- ndcg_beyond_missing(shown, features, cosine): the items of `shown` (ndcg_beyond_at's rows, by
-- name)
-- without what ild reads (an embedding when cosine, else a category): item_id, each once. The
-- check joins the ids alone, never the embeddings.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_missing(shown, features, cosine) AS TABLE
    SELECT DISTINCT a.item_id
    FROM query_table(shown) AS a
    ANTI JOIN (SELECT item_id FROM query_table(features)
               WHERE CASE WHEN cosine THEN unit IS NOT NULL ELSE category IS NOT NULL END) AS f
      ON f.item_id = a.item_id;

-- ndcg_beyond_missing_check(n, example, cosine): true, or stops when n (> 0) shown items lack
-- what ild reads, naming the count and one of them (example, as text).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_missing_check(n, example, cosine) AS
    ndcg_require(n = 0, 'items: ' || n || ' recommended item(s) have no '
                        || CASE WHEN cosine THEN 'embedding' ELSE 'category' END
                        || ' for ild, e.g. item ' || ndcg_show(example));

-- ndcg_beyond_shown(tops, features, cosine): ndcg_beyond_at's rows; stops when a shown item
-- lacks what ild reads, naming one (the smallest as text) and the count.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_shown(tops, features, cosine) AS TABLE
    WITH at_ AS (FROM ndcg_beyond_at(tops, features, cosine)),
    missing_ AS (SELECT count(*) AS n, min(item_id::VARCHAR) AS example
                 FROM ndcg_beyond_missing('at_', features, cosine))
    SELECT * FROM at_
    WHERE (SELECT ndcg_beyond_missing_check(n, example, cosine) FROM missing_);

-- ndcg_beyond_ild_cosine(tops, features): ild by embeddings per user and cutoff (when any item
-- has one): user_id, k, ild, in one pass per list (ndcg_beyond_cosine_ild).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_cosine(tops, features) AS TABLE
    SELECT user_id, k,
           ndcg_beyond_cosine_ild(count(*), list_transform(range(1, max(len(unit)) + 1),
               lambda d: list_sum(list_transform(list(unit), lambda u: u[d])))) AS ild
    FROM ndcg_beyond_shown(tops, features, true) AS s
    LEFT JOIN query_table(features) AS f ON f.item_id = s.item_id
    GROUP BY user_id, k;

-- ndcg_beyond_ild_jaccard(tops, features): ild by categories per user and cutoff (when no item
-- has an embedding): user_id, k, ild, the mean over pairs of positions.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_jaccard(tops, features) AS TABLE
    WITH shown_ AS (SELECT s.user_id, s.k, s.position, f.category
                    FROM ndcg_beyond_shown(tops, features, false) AS s
                    JOIN query_table(features) AS f ON f.item_id = s.item_id)
    SELECT a.user_id, a.k, avg(ndcg_beyond_jaccard_distance(a.category, b.category)) AS ild
    FROM shown_ AS a JOIN shown_ AS b
      ON a.user_id = b.user_id AND a.k IS NOT DISTINCT FROM b.k AND a.position < b.position
    GROUP BY a.user_id, a.k;

-- ndcg_beyond_ild_vectors(tops, features, vectors, cutoff): ild by embeddings as
-- ndcg_beyond_ild_cosine computes it, of the lists of tops at the one cutoff `cutoff` (its k;
-- NULL: no cutoff): user_id, k, ild and `lacking`: how many of the list's items have no vector
-- (no embedding, or not in features). vectors: item_id and the numbers of each item's unit
-- vector (features' unit) as DOUBLE columns named d1, d2, ... (one per number). Each list's sum
-- of unit vectors is then one plain sum() per column, where ndcg_beyond_ild_cosine gathers each
-- list's vectors with list() (about 3x the time). One cutoff a call, so the sums are grouped
-- by user alone (one key, not user and cutoff: benchmarks/reports/2026-11-26-ild32f.md). The join that fetches the vectors counts the
-- lacking ones too, so the check is not a second join of every shown item: a list with
-- lacking > 0 has no ild, and the caller stops with ndcg_beyond_shown's message (which names
-- how many items and one of them) when any list has one. The LEFT JOIN: with an inner one
-- DuckDB 2.0 sums the vectors per item below the join first (its partial aggregate
-- pushdown), 2-3x slower.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_vectors(tops, features, vectors, cutoff) AS TABLE
    WITH at_ AS (FROM query_table(tops) WHERE k IS NOT DISTINCT FROM cutoff),
    sums_ AS (SELECT s.user_id, count(*) AS n, count(*) - count(v.item_id) AS lacking,
                     sum(COLUMNS(v.* EXCLUDE (item_id)))
              FROM ndcg_beyond_at('at_', features, true) AS s
              LEFT JOIN query_table(vectors) AS v ON v.item_id = s.item_id
              GROUP BY s.user_id)
    SELECT user_id, CAST(cutoff AS BIGINT) AS k,
           CASE WHEN lacking = 0 THEN ndcg_beyond_cosine_ild(n, [*COLUMNS('^d[0-9]+$')]) END
               AS ild,
           lacking
    FROM sums_;

-- ndcg_beyond_ild(tops, features): ild per user and cutoff (users with two items or more):
-- user_id, k, ild. features as ndcg_beyond_features returns it. Embeddings when any item has
-- one, else categories: each variant reads no list unless its mode is chosen.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild(tops, features) AS TABLE
    FROM ndcg_beyond_ild_cosine(tops, features)
    UNION ALL
    FROM ndcg_beyond_ild_jaccard(tops, features);

-- ndcg_beyond_ild_as(ild, tops, ild_divisor, ild_short): ild per user and cutoff (user_id, k,
-- ild) from ndcg_beyond_ild's rows (the mean over pairs) as a peer defines it. ild_divisor
-- 'pairs' keeps the mean over the n (n - 1) / 2 pairs; 'items' divides the pairs' sum by the n
-- items instead, (n - 1) / 2 times the mean (Evidently's DiversityMetric.get_ild). ild_short
-- 'skip' gives a one-item list no value; 'zero' gives it 0, counted in the mean (RecTools'
-- IntraListDiversity, Evidently). tops (the same lists) gives each list's length.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_as(ild, tops, ild_divisor := 'pairs',
        ild_short := 'skip') AS TABLE
    SELECT i.user_id, i.k,
           i.ild * CASE WHEN ild_divisor = 'pairs' THEN 1 ELSE (len(t.top) - 1) / 2 END AS ild
    FROM query_table(ild) AS i
    JOIN query_table(tops) AS t ON t.user_id = i.user_id AND t.k IS NOT DISTINCT FROM i.k
    WHERE ndcg_option('ild_divisor', ild_divisor, ['pairs', 'items'])
      AND ndcg_option('ild_short', ild_short, ['skip', 'zero'])
    UNION ALL
    SELECT user_id, k, 0.0 AS ild FROM query_table(tops)
    WHERE len(top) = 1 AND ild_short = 'zero';

-- For the shell: the beyond-accuracy metrics at one cutoff k, with train and items passed by
-- name as recs and rels are (items may be NULL: the catalogue is then train's items).

-- ndcg_metrics_beyond_of(rankings, rels, train, items, k, head_share, judged_only): rankings a
-- ranking edge's result by name, rels the judgments (user_id, item_id, relevance; they choose
-- the evaluated users and, with judged_only, the judged items). Returns user_id (NULL for the
-- per-run metrics), metric ('coverage@10', 'novelty@10', ...) and value: one row per run metric
-- and one per user and per-user metric (novelty, popularity, tail).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_of(rankings, rels, train, items := NULL,
        k := 10, head_share := 0.2, judged_only := false) AS TABLE
    WITH ndcg_judgments_ AS (FROM ndcg_judgments(rels)),
    ndcg_tops_ AS (FROM ndcg_beyond_tops(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                                         judged_only := judged_only)),
    ndcg_catalogue_ AS (FROM ndcg_beyond_catalogue(items, train)),
    ndcg_popularity_ AS (FROM ndcg_beyond_popularity(train, 'ndcg_catalogue_',
                                                     head_share := head_share)),
    run_ AS (UNPIVOT (SELECT k, coverage, gini, entropy
                      FROM ndcg_beyond_run('ndcg_tops_', 'ndcg_catalogue_'))
             ON coverage, gini, entropy INTO NAME metric VALUE value),
    user_ AS (UNPIVOT (FROM ndcg_beyond_user('ndcg_tops_', 'ndcg_popularity_'))
              ON novelty, popularity, tail INTO NAME metric VALUE value)
    SELECT NULL AS user_id, ndcg_metric_name(metric, k) AS metric, value FROM run_
    UNION ALL
    SELECT user_id, ndcg_metric_name(metric, k) AS metric, value FROM user_;

-- ndcg_metrics_beyond_ild_of(rankings, rels, items, k, judged_only): ild@k per evaluated user
-- with two items or more: user_id, metric ('ild@10'), value. items has item_id, category and
-- embedding (either may be all NULL).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_ild_of(rankings, rels, items, k := 10,
        judged_only := false) AS TABLE
    WITH ndcg_judgments_ AS (FROM ndcg_judgments(rels)),
    ndcg_tops_ AS (FROM ndcg_beyond_tops(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                                         judged_only := judged_only)),
    ndcg_features_ AS (FROM ndcg_beyond_features(items))
    SELECT user_id, ndcg_metric_name('ild', k) AS metric, ild AS value
    FROM ndcg_beyond_ild('ndcg_tops_', 'ndcg_features_');

-- ndcg_metrics_beyond(recs, rels, train, items, k, head_share, max_depth, judged_only): recs
-- nested (user_id, items LIST in rank order); rows as ndcg_metrics_beyond_of.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond(recs, rels, train, items := NULL, k := 10,
        head_share := 0.2, max_depth := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := max_depth))
    FROM ndcg_metrics_beyond_of('ndcg_ranked_', rels, train, items := items, k := k,
                                head_share := head_share, judged_only := judged_only);

-- ndcg_metrics_beyond_ild(recs, rels, items, k, max_depth, judged_only): recs nested; rows as
-- ndcg_metrics_beyond_ild_of.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_ild(recs, rels, items, k := 10,
        max_depth := NULL, judged_only := false) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := max_depth))
    FROM ndcg_metrics_beyond_ild_of('ndcg_ranked_', rels, items, k := k,
                                    judged_only := judged_only);

-- ndcg_metrics_beyond_mean(per_user): the rows of ndcg_metrics_beyond or ndcg_metrics_beyond_ild
-- (by name) summed up: metric, value (a per-run metric's value; a per-user metric's mean over
-- the users that have one) and users (how many users have a value; NULL for a per-run metric).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_beyond_mean(per_user) AS TABLE
    SELECT metric, fsum(value) / count(value) AS value,
           CASE WHEN count(user_id) > 0 THEN count(user_id) END AS users
    FROM query_table(per_user)
    GROUP BY metric;
