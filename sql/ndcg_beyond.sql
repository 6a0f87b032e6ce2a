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
-- coverage, gini and entropy are one value per run (per cutoff); the others one value per user,
-- averaged over the users that have one (ild needs two items). Recommended items outside the
-- catalogue count in no c(i) (they are reported by ndcg_beyond_outside) and are never in the
-- head; their pop is train's (0 when train lacks them too).

-- ndcg_beyond_lists(rankings, ks): per user of rankings (a ranking edge's result) and cutoff:
-- user_id, k (NULL: no cutoff) and top (the first k ranked items, a LIST). What top_k is
-- without judged_only: the judgments need not be read (the evaluated users are chosen later,
-- or, without judgments, every user counts). Stops on an item twice in one ranking, judged or
-- not (the core stops on a judged one only: an unjudged repeat gains 0 wherever it is, but
-- would count twice in the exposure); duplicates 'first' drops repeats in the edge before.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_lists(rankings, ks := [10]) AS TABLE
    SELECT r.user_id, c.k, r.items[1:c.depth] AS top
    FROM (FROM query_table(rankings)
          WHERE coalesce(list_unique(items) = len(items), true)
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

-- ndcg_beyond_popularity(train, catalogue, head_share): every catalogue item and every train
-- item with item_id, pop (distinct train users; 0 for none), head (true for the floor(head_share
-- * n) most popular catalogue items, ties by item id ascending as text) and users (U, the same
-- on every row). catalogue as ndcg_beyond_catalogue returns it. The head is found without
-- sorting the catalogue: the pop level where it ends (edge) comes from the count of items per
-- pop level, and only that level's items are ordered by id to fill its remaining places (quota).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_popularity(train, catalogue, head_share := 0.2) AS TABLE
    -- pop: the distinct (user, item) pairs counted per item (faster than count(DISTINCT))
    WITH pop_ AS (SELECT item_id, count(user_id) AS pop
                  FROM (SELECT DISTINCT user_id, item_id FROM query_table(train))
                  GROUP BY item_id
                  HAVING ndcg_require(item_id IS NOT NULL, 'train: rows have no item id (NULL)')
                     AND ndcg_require(count(*) = count(user_id),
                                      'train: item ' || ndcg_show(item_id)
                                      || ' has rows without a user id (NULL)')),
    items_ AS (SELECT coalesce(c.item_id, p.item_id) AS item_id, coalesce(p.pop, 0) AS pop,
                      c.item_id IS NOT NULL AS listed
               FROM query_table(catalogue) AS c FULL OUTER JOIN pop_ AS p ON p.item_id = c.item_id),
    levels_ AS (SELECT pop, count(*) AS items,
                       sum(count(*)) OVER (ORDER BY pop DESC) AS through
                FROM items_ WHERE listed GROUP BY pop),
    size_ AS (SELECT floor(head_share * coalesce(sum(items), 0)) AS size FROM levels_),
    edge_ AS (SELECT l.pop AS edge, s.size - (l.through - l.items) AS quota
              FROM levels_ AS l CROSS JOIN size_ AS s
              WHERE l.through >= s.size AND l.through - l.items < s.size),
    ties_ AS (SELECT item_id FROM items_
              WHERE listed AND pop = (SELECT edge FROM edge_)
              QUALIFY row_number() OVER (ORDER BY item_id::VARCHAR) <= (SELECT quota FROM edge_))
    SELECT i.item_id, i.pop,
           (i.listed AND coalesce(i.pop > (SELECT edge FROM edge_), false))
           OR i.item_id IN (SELECT item_id FROM ties_) AS head,
           (SELECT count(DISTINCT user_id) FROM query_table(train)) AS users
    FROM items_ AS i
    WHERE ndcg_require(head_share >= 0 AND head_share <= 1,
                       'head_share must be between 0 and 1, not ' || ndcg_show(head_share));

-- ndcg_beyond_entries(tops): the items of each user's deepest top_k, one row each: user_id,
-- position (1 for the first) and item_id. Every user of tops has a list at every cutoff, and a
-- cutoff's list is the deepest list's first k items (k NULL: the deepest itself), so the item at
-- position p is in top_k when p <= k: one unnest serves every cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_entries(tops) AS TABLE
    SELECT user_id, generate_subscripts(top, 1) AS position, unnest(top) AS item_id
    FROM query_table(tops)
    WHERE k IS NOT DISTINCT FROM (SELECT CASE WHEN count(k) < count(*) THEN NULL ELSE max(k) END
                                  FROM query_table(tops));

-- ndcg_beyond_cutoffs_of(tops): the cutoffs of tops (k, NULL for no cutoff) with depth, the
-- deepest position each one holds.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cutoffs_of(tops) AS TABLE
    SELECT k, coalesce(k, 9223372036854775807) AS depth
    FROM (SELECT DISTINCT k FROM query_table(tops));

-- ndcg_beyond_exposure_of(entries, tops): ndcg_beyond_exposure from the entries of tops
-- (ndcg_beyond_entries).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure_of(entries, tops) AS TABLE
    SELECT c.k, e.item_id, count(*) AS c
    FROM query_table(entries) AS e
    JOIN ndcg_beyond_cutoffs_of(tops) AS c ON e.position <= c.depth
    GROUP BY c.k, e.item_id;

-- ndcg_beyond_exposure(tops): per cutoff k and shown item: k, item_id and c (how many users'
-- top_k hold it), every shown item, inside the catalogue or not. One pass over the lists, read
-- by ndcg_beyond_run_of and ndcg_beyond_outside_of. k may be any key (the Spark engine's
-- workers pass a struct of cutoff and segment); the default engine, whose lists are each
-- user's deepest one cut at every k, unnests them once with ndcg_beyond_exposure_of instead.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_exposure(tops) AS TABLE
    SELECT k, item_id, count(*) AS c
    FROM (SELECT k, unnest(top) AS item_id FROM query_table(tops))
    GROUP BY k, item_id;

-- ndcg_beyond_run_of(exposure, catalogue): the per-run metrics from ndcg_beyond_exposure and
-- ndcg_beyond_catalogue: per cutoff k that shows a catalogue item, coverage, gini and entropy
-- (DOUBLEs). They read how many catalogue items share each count c (items), not each item: the
-- t items of count c that follow b items of smaller counts hold places j = n - m + b + 1 ..
-- n - m + b + t of gini's sum, whose (2j - n - 1) c terms add up to t (n - 2m + 2b + t) c, an
-- integer summed exactly.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_of(exposure, catalogue) AS TABLE
    WITH n_ AS (SELECT count(*) AS n FROM query_table(catalogue)),
    counts_ AS (SELECT e.k, e.c, count(*) AS items
                FROM query_table(exposure) AS e
                SEMI JOIN query_table(catalogue) AS c ON c.item_id = e.item_id
                GROUP BY e.k, e.c),
    ranked_ AS (SELECT k, c, items, n,
                       coalesce(sum(items) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN
                                                 UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS b,
                       sum(items) OVER (PARTITION BY k) AS m,
                       sum(items * c) OVER (PARTITION BY k) AS total
                FROM counts_ CROSS JOIN n_)
    SELECT k, any_value(m) / any_value(n) AS coverage,
           sum(items::HUGEINT * (n - 2 * m + 2 * b + items) * c)::DOUBLE / any_value(n * total)
               AS gini,
           -fsum(items * (c / total * log2(c / total))) AS entropy
    FROM ranked_ GROUP BY k;

-- ndcg_beyond_run_at(exposure, keys, catalogue): ndcg_beyond_run_of at every k of `keys` (a
-- relation with k and users: the cutoffs, or groups, whose lists were read, and how many users'
-- lists): k, coverage, gini, entropy (0 when no catalogue item is shown) and users.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run_at(exposure, keys, catalogue) AS TABLE
    WITH run_ AS (FROM ndcg_beyond_run_of(exposure, catalogue))
    SELECT u.k, coalesce(r.coverage, 0.0) AS coverage, coalesce(r.gini, 0.0) AS gini,
           coalesce(r.entropy, 0.0) AS entropy, u.users
    FROM query_table(keys) AS u LEFT JOIN run_ AS r ON r.k IS NOT DISTINCT FROM u.k;

-- ndcg_beyond_run(tops, catalogue): ndcg_beyond_run_at over the lists of ndcg_beyond_tops: per
-- cutoff k, coverage, gini, entropy (0 when no catalogue item is shown) and users (how many
-- users' lists were read).
CREATE OR REPLACE TEMP MACRO ndcg_beyond_run(tops, catalogue) AS TABLE
    WITH exposure_ AS (FROM ndcg_beyond_exposure(tops)),
    users_ AS (SELECT k, count(DISTINCT user_id) AS users FROM query_table(tops) GROUP BY k)
    FROM ndcg_beyond_run_at('exposure_', 'users_', catalogue);

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

-- ndcg_beyond_user_of(entries, tops, popularity): the per-user metrics that read pop: per user
-- and cutoff, user_id, k, novelty, popularity and tail (DOUBLEs; no row for an empty list).
-- entries as ndcg_beyond_entries returns it for tops; popularity as ndcg_beyond_popularity
-- returns it: an item it lacks has pop 0 and is not in the head. Each item's three values are
-- computed once, joined to the entries once, then averaged per cutoff.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user_of(entries, tops, popularity) AS TABLE
    WITH users_ AS (SELECT any_value(users) AS users FROM query_table(popularity)),
    values_ AS (SELECT item_id, -log2((pop + 1) / (users + 1)) AS novelty,
                       pop::DOUBLE AS popularity, CASE WHEN head THEN 0.0 ELSE 1.0 END AS tail
                FROM query_table(popularity))
    SELECT e.user_id, c.k,
           avg(coalesce(v.novelty, -log2(1 / (users_.users + 1)))) AS novelty,
           avg(coalesce(v.popularity, 0.0)) AS popularity, avg(coalesce(v.tail, 1.0)) AS tail
    FROM query_table(entries) AS e
    LEFT JOIN values_ AS v ON v.item_id = e.item_id
    JOIN ndcg_beyond_cutoffs_of(tops) AS c ON e.position <= c.depth
    CROSS JOIN users_
    GROUP BY e.user_id, c.k;

-- ndcg_beyond_user(tops, popularity): ndcg_beyond_user_of over the entries of tops.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_user(tops, popularity) AS TABLE
    WITH entries_ AS (FROM ndcg_beyond_entries(tops))
    FROM ndcg_beyond_user_of('entries_', tops, popularity);

-- ndcg_beyond_unit(embedding, scale, squared): the embedding divided by its length, given its
-- largest absolute number (scale) and the squared length of embedding / scale (the sum of its
-- squares, computed once, not once per number). A cosine does not depend on the length, so
-- each number is divided by the scale first: squares of 1e200 (or 1e-200) would overflow (or
-- vanish), squares of numbers no larger than 1 cannot.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_unit(embedding, scale, squared) AS
    list_transform(embedding, lambda x: (x / scale) / sqrt(squared));

-- ndcg_beyond_jaccard_distance(a, b): 1 - |a intersect b| / |a union b| of two category lists.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_jaccard_distance(a, b) AS
    1.0 - len(list_intersect(a, b)) / len(list_distinct(list_concat(a, b)));

-- ndcg_beyond_cosine_ild(n, total): ild of n unit vectors from their sum `total`: the mean over
-- the n(n-1)/2 pairs of 1 - cosine. Sum over pairs a < b of u_a . u_b = (|total|^2 - n) / 2,
-- as |total|^2 = sum over a, b of u_a . u_b and each u_a . u_a = 1: one pass over the list,
-- not one per pair.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_ild(n, total) AS
    1.0 - (list_dot_product(total, total) - n) / (n * (n - 1));

-- ndcg_beyond_features(items): the items table as item_id, unit (the embedding as a unit vector,
-- DOUBLE[], or NULL) and category (a distinct VARCHAR list or NULL), with the checks: an item
-- twice, embeddings of different lengths (each against one item's length), a NULL, NaN or
-- infinite number in an embedding, an embedding of zeros (it has no direction), an empty
-- category list.
-- items has item_id and the columns embedding and category (either may be all NULL). The
-- repeat check reads the ids alone; the others are folded into the one pass over the rows:
-- NULL numbers are counted (list_count skips them), NaN and infinite ones found in the scale
-- (the largest absolute number: NaN sorts above every number),
-- and the one item whose length every other is checked against is joined to every row.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_features(items) AS TABLE
    WITH twice_ AS (SELECT count(*) AS times, item_id FROM query_table(items)
                    GROUP BY item_id HAVING count(*) > 1 ORDER BY item_id::VARCHAR LIMIT 1),
    first_ AS (SELECT item_id, len(embedding::DOUBLE[]) AS width FROM query_table(items)
               WHERE embedding IS NOT NULL LIMIT 1),
    read_ AS (SELECT item_id, embedding::DOUBLE[] AS embedding,
                     list_distinct(category::VARCHAR[]) AS category
              FROM query_table(items)),
    scaled_ AS (SELECT *, list_max(list_transform(embedding, lambda x: abs(x))) AS scale
                FROM read_),
    rows_ AS (SELECT item_id, embedding, category, scale,
                     list_sum(list_transform(embedding, lambda x: (x / scale) * (x / scale)))
                         AS squared
              FROM scaled_)
    SELECT r.item_id, ndcg_beyond_unit(r.embedding, r.scale, r.squared) AS unit, r.category
    FROM rows_ AS r LEFT JOIN first_ AS f ON true
    WHERE (SELECT ndcg_require(count(*) = 0, 'items: item ' || ndcg_show(any_value(item_id))
                                             || ' has ' || any_value(times)
                                             || ' rows: give each item one row') FROM twice_)
      AND ndcg_require(r.embedding IS NULL OR len(r.embedding) = f.width,
                       'items: embeddings have different lengths: item ' || ndcg_show(r.item_id)
                       || ' has ' || len(r.embedding) || ' numbers, item ' || ndcg_show(f.item_id)
                       || ' has ' || f.width || ': give every item one length')
      AND ndcg_require(r.embedding IS NULL OR list_count(r.embedding) = len(r.embedding),
                       'items: item ' || ndcg_show(r.item_id)
                       || ' has a NULL number in its embedding: fill it in')
      AND ndcg_require(r.embedding IS NULL OR coalesce(isfinite(r.scale), true),
                       'items: item ' || ndcg_show(r.item_id) || ' has '
                       || ndcg_show(list_filter(r.embedding, lambda x: NOT isfinite(x))[1])
                       || ' in its embedding: give finite numbers')
      AND ndcg_require(r.embedding IS NULL OR r.scale IS NULL OR r.scale > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an embedding of zeros, '
                       || 'which has no direction for a cosine')
      AND ndcg_require(r.category IS NULL OR len(r.category) > 0,
                       'items: item ' || ndcg_show(r.item_id) || ' has an empty category list');

-- ndcg_beyond_cosine_mode(features): true when any item of features has an embedding: ild then
-- reads embeddings (and every shown item needs one), else categories.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_cosine_mode(features) AS TABLE
    SELECT coalesce(bool_or(unit IS NOT NULL), false) AS cosine FROM query_table(features);

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

-- ndcg_beyond_ild_vectors(tops, features, vectors): ild by embeddings as ndcg_beyond_ild_cosine
-- computes it, from vectors: item_id and the numbers of each item's unit vector (features'
-- unit) as DOUBLE columns named d1, d2, ... (one per number). Each list's sum of unit vectors
-- is then one plain sum() per column, where ndcg_beyond_ild_cosine gathers each list's vectors
-- with list() (about 3x the time). Both join the vectors with a LEFT JOIN (every shown item has
-- one: ndcg_beyond_shown checks): with an inner one DuckDB 2.0 sums the vectors per item below
-- the join first (its partial aggregate pushdown), 2-3x slower.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild_vectors(tops, features, vectors) AS TABLE
    WITH sums_ AS (SELECT s.user_id, s.k, count(*) AS n, sum(COLUMNS(v.* EXCLUDE (item_id)))
                   FROM ndcg_beyond_shown(tops, features, true) AS s
                   LEFT JOIN query_table(vectors) AS v ON v.item_id = s.item_id
                   GROUP BY s.user_id, s.k)
    SELECT user_id, k, ndcg_beyond_cosine_ild(n, [*COLUMNS('^d[0-9]+$')]) AS ild FROM sums_;

-- ndcg_beyond_ild(tops, features): ild per user and cutoff (users with two items or more):
-- user_id, k, ild. features as ndcg_beyond_features returns it. Embeddings when any item has
-- one, else categories: each variant reads no list unless its mode is chosen.
CREATE OR REPLACE TEMP MACRO ndcg_beyond_ild(tops, features) AS TABLE
    FROM ndcg_beyond_ild_cosine(tops, features)
    UNION ALL
    FROM ndcg_beyond_ild_jaccard(tops, features);

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
