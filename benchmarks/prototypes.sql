-- Scratch prototypes for a faster ndcg-duck query (benchmarks only; sql/ is not touched).
-- Each `-- name:` section is one SELECT over the views ndcg_recs (user_id, items) and ndcg_rels
-- (user_id, item_id, relevance) that ndcg_duck.evaluation.inputs.load() creates. Each returns
-- user_id, k, dcg, idcg, ndcg like ndcg_scores(ks := [5,10,20]) with the defaults
-- (linear gain, missing 'zero', idcg_cutoff 'k', empty 'zero').
-- benchmarks/prototypes.py times them and checks each against evaluate().
-- {KS} is replaced by the cutoff list literal, {DEPTH} by max(k).

-- name: current_literal_depth
-- The current macros, but with the depth given as a literal instead of ndcg_depth(...).
WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists('ndcg_recs', depth := {DEPTH})),
     ndcg_judgments_ AS (FROM ndcg_judgments('ndcg_rels'))
SELECT * FROM ndcg_scores('ndcg_ranked_', 'ndcg_judgments_', ks := {KS});

-- name: no_mark_join
-- The current core, but `evaluated` without the CASE ... IN (subquery) that DuckDB plans (and
-- runs, as a MARK join over every ranked row) even when missing = 'zero'.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0),
    dcg AS (
        SELECT h.user_id, c.k, sum(h.item_gain / log2(h.rank + 1)) AS dcg
        FROM hits AS h JOIN cutoffs AS c ON h.rank <= c.k GROUP BY h.user_id, c.k),
    ideal AS (
        SELECT user_id, item_gain,
               row_number() OVER (PARTITION BY user_id ORDER BY item_gain DESC) AS pos
        FROM gains WHERE item_gain > 0),
    idcg AS (
        SELECT i.user_id, c.k, sum(i.item_gain / log2(i.pos + 1)) AS idcg
        FROM ideal AS i JOIN cutoffs AS c ON i.pos <= c.k GROUP BY i.user_id, c.k),
    evaluated AS (SELECT DISTINCT user_id FROM ndcg_rels)
SELECT e.user_id, c.k, coalesce(d.dcg, 0.0) AS dcg, coalesce(i.idcg, 0.0) AS idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg
FROM evaluated AS e CROSS JOIN cutoffs AS c
LEFT JOIN dcg AS d ON d.user_id = e.user_id AND d.k = c.k
LEFT JOIN idcg AS i ON i.user_id = e.user_id AND i.k = c.k;

-- name: topn_ideal
-- As no_mark_join, and the ideal list as each user's top max(k) gains: QUALIFY row_number()
-- <= max(k) (a per-partition top-N) instead of numbering every judged row.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0),
    dcg AS (
        SELECT h.user_id, c.k, sum(h.item_gain / log2(h.rank + 1)) AS dcg
        FROM hits AS h JOIN cutoffs AS c ON h.rank <= c.k GROUP BY h.user_id, c.k),
    ideal AS (
        SELECT user_id, item_gain,
               row_number() OVER (PARTITION BY user_id ORDER BY item_gain DESC) AS pos
        FROM gains WHERE item_gain > 0
        QUALIFY pos <= {DEPTH}),
    idcg AS (
        SELECT i.user_id, c.k, sum(i.item_gain / log2(i.pos + 1)) AS idcg
        FROM ideal AS i JOIN cutoffs AS c ON i.pos <= c.k GROUP BY i.user_id, c.k),
    evaluated AS (SELECT DISTINCT user_id FROM ndcg_rels)
SELECT e.user_id, c.k, coalesce(d.dcg, 0.0) AS dcg, coalesce(i.idcg, 0.0) AS idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg
FROM evaluated AS e CROSS JOIN cutoffs AS c
LEFT JOIN dcg AS d ON d.user_id = e.user_id AND d.k = c.k
LEFT JOIN idcg AS i ON i.user_id = e.user_id AND i.k = c.k;

-- name: max_n_ideal
-- As no_mark_join, with the ideal list from one GROUP BY over the judgments: max(gain, max(k))
-- (DuckDB's top-n aggregate, best first) gives each evaluated user and its ideal gains at once;
-- idcg per cutoff from that short list.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0),
    dcg AS (
        SELECT h.user_id, c.k, sum(h.item_gain / log2(h.rank + 1)) AS dcg
        FROM hits AS h JOIN cutoffs AS c ON h.rank <= c.k GROUP BY h.user_id, c.k),
    users AS (
        SELECT user_id, coalesce(max(item_gain, {DEPTH}) FILTER (WHERE item_gain > 0), []) AS top
        FROM gains GROUP BY user_id),
    idcg AS (
        SELECT u.user_id, c.k,
               coalesce(list_sum(list_transform(u.top[1:c.k], lambda g, i: g / log2(i + 1))), 0.0) AS idcg
        FROM users AS u CROSS JOIN cutoffs AS c)
SELECT i.user_id, i.k, coalesce(d.dcg, 0.0) AS dcg, i.idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg
FROM idcg AS i
LEFT JOIN dcg AS d ON d.user_id = i.user_id AND d.k = i.k;

-- name: max_n_ideal_unnest
-- As max_n_ideal, the ideal gains unnested with generate_subscripts instead of a lambda.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0),
    users AS (
        SELECT user_id, max(item_gain, {DEPTH}) FILTER (WHERE item_gain > 0) AS top
        FROM gains GROUP BY user_id),
    ideal AS (
        SELECT user_id, unnest(top) AS item_gain, generate_subscripts(top, 1) AS rank FROM users),
    both_ AS (
        SELECT user_id, rank, item_gain, 0 AS side FROM hits
        UNION ALL SELECT user_id, rank, item_gain, 1 FROM ideal),
    sums AS (
        SELECT b.user_id, c.k,
               sum(b.item_gain / log2(b.rank + 1)) FILTER (WHERE side = 0) AS dcg,
               sum(b.item_gain / log2(b.rank + 1)) FILTER (WHERE side = 1) AS idcg
        FROM both_ AS b JOIN cutoffs AS c ON b.rank <= c.k GROUP BY b.user_id, c.k)
SELECT u.user_id, c.k, coalesce(s.dcg, 0.0) AS dcg, coalesce(s.idcg, 0.0) AS idcg,
       CASE WHEN s.idcg > 0 THEN coalesce(s.dcg, 0.0) / s.idcg ELSE 0.0 END AS ndcg
FROM users AS u CROSS JOIN cutoffs AS c
LEFT JOIN sums AS s ON s.user_id = u.user_id AND s.k = c.k;

-- name: window_where_topn
-- As no_mark_join, the ideal list numbered in a subquery filtered with WHERE pos <= max(k)
-- (the form DuckDB can turn into a per-partition top-N), instead of QUALIFY.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    hits AS (
        SELECT r.user_id, r.rank, g.item_gain
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0),
    dcg AS (
        SELECT h.user_id, c.k, sum(h.item_gain / log2(h.rank + 1)) AS dcg
        FROM hits AS h JOIN cutoffs AS c ON h.rank <= c.k GROUP BY h.user_id, c.k),
    ideal AS (
        SELECT * FROM (
            SELECT user_id, item_gain,
                   row_number() OVER (PARTITION BY user_id ORDER BY item_gain DESC) AS pos
            FROM gains WHERE item_gain > 0)
        WHERE pos <= {DEPTH}),
    idcg AS (
        SELECT i.user_id, c.k, sum(i.item_gain / log2(i.pos + 1)) AS idcg
        FROM ideal AS i JOIN cutoffs AS c ON i.pos <= c.k GROUP BY i.user_id, c.k),
    evaluated AS (SELECT DISTINCT user_id FROM ndcg_rels)
SELECT e.user_id, c.k, coalesce(d.dcg, 0.0) AS dcg, coalesce(i.idcg, 0.0) AS idcg,
       CASE WHEN i.idcg > 0 THEN coalesce(d.dcg, 0.0) / i.idcg ELSE 0.0 END AS ndcg
FROM evaluated AS e CROSS JOIN cutoffs AS c
LEFT JOIN dcg AS d ON d.user_id = e.user_id AND d.k = c.k
LEFT JOIN idcg AS i ON i.user_id = e.user_id AND i.k = c.k;

-- name: wide_filters
-- Cutoffs known when the SQL is written (as the Python side knows them): one GROUP BY user_id
-- with sum(...) FILTER (WHERE rank <= k) per cutoff, for the hits and for the ideal list; no
-- cutoffs table, no row x cutoff joins. Output unpivoted back to (user_id, k, ...) rows.
WITH
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    dcg AS (
        SELECT r.user_id,
               sum(g.item_gain / log2(r.rank + 1)) FILTER (WHERE r.rank <= 5) AS d5,
               sum(g.item_gain / log2(r.rank + 1)) FILTER (WHERE r.rank <= 10) AS d10,
               sum(g.item_gain / log2(r.rank + 1)) AS d20
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0
        GROUP BY r.user_id),
    ideal AS (
        SELECT user_id, item_gain,
               row_number() OVER (PARTITION BY user_id ORDER BY item_gain DESC) AS pos
        FROM gains WHERE item_gain > 0),
    idcg AS (
        SELECT user_id,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 5) AS i5,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 10) AS i10,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 20) AS i20
        FROM ideal GROUP BY user_id),
    evaluated AS (SELECT DISTINCT user_id FROM ndcg_rels),
    wide AS (
        SELECT e.user_id, d.d5, d.d10, d.d20, i.i5, i.i10, i.i20
        FROM evaluated AS e LEFT JOIN dcg AS d USING (user_id) LEFT JOIN idcg AS i USING (user_id))
SELECT user_id, k, coalesce(dcg, 0.0) AS dcg, coalesce(idcg, 0.0) AS idcg,
       CASE WHEN idcg > 0 THEN coalesce(dcg, 0.0) / idcg ELSE 0.0 END AS ndcg
FROM (
    SELECT user_id, 5 AS k, d5 AS dcg, i5 AS idcg FROM wide
    UNION ALL SELECT user_id, 10, d10, i10 FROM wide
    UNION ALL SELECT user_id, 20, d20, i20 FROM wide);

-- name: wide_filters_list_ideal
-- As wide_filters, the ideal DCGs from one aggregation over the judgments that also gives the
-- evaluated users: list(gain ORDER BY gain DESC) per user, then sums over its first k items.
WITH
    ranked AS (
        SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
        FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)),
    gains AS (SELECT user_id, item_id, relevance::DOUBLE AS item_gain FROM ndcg_rels),
    dcg AS (
        SELECT r.user_id,
               sum(g.item_gain / log2(r.rank + 1)) FILTER (WHERE r.rank <= 5) AS d5,
               sum(g.item_gain / log2(r.rank + 1)) FILTER (WHERE r.rank <= 10) AS d10,
               sum(g.item_gain / log2(r.rank + 1)) AS d20
        FROM ranked AS r JOIN gains AS g ON g.user_id = r.user_id AND g.item_id = r.item_id
        WHERE g.item_gain > 0
        GROUP BY r.user_id),
    users AS (
        SELECT user_id, list(item_gain ORDER BY item_gain DESC) FILTER (WHERE item_gain > 0) AS top
        FROM gains GROUP BY user_id),
    ideal AS (
        SELECT user_id, unnest(top[1:{DEPTH}]) AS item_gain, generate_subscripts(top[1:{DEPTH}], 1) AS pos
        FROM users),
    idcg AS (
        SELECT user_id,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 5) AS i5,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 10) AS i10,
               sum(item_gain / log2(pos + 1)) FILTER (WHERE pos <= 20) AS i20
        FROM ideal GROUP BY user_id),
    wide AS (
        SELECT u.user_id, d.d5, d.d10, d.d20, i.i5, i.i10, i.i20
        FROM users AS u LEFT JOIN dcg AS d USING (user_id) LEFT JOIN idcg AS i USING (user_id))
SELECT user_id, k, coalesce(dcg, 0.0) AS dcg, coalesce(idcg, 0.0) AS idcg,
       CASE WHEN idcg > 0 THEN coalesce(dcg, 0.0) / idcg ELSE 0.0 END AS ndcg
FROM (
    SELECT user_id, 5 AS k, d5 AS dcg, i5 AS idcg FROM wide
    UNION ALL SELECT user_id, 10, d10, i10 FROM wide
    UNION ALL SELECT user_id, 20, d20, i20 FROM wide);

-- name: lists_first
-- Each user's judgments gathered into one list first (one GROUP BY), then one 1:1 join of those
-- lists to the users' top-max(k) lists, so no ranking is copied into every judgment row; ranks,
-- DCG and the ideal list by lambdas per user. Judgments taken as unique (--unique-judgments).
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    judged AS (
        SELECT user_id, list({'item': item_id, 'gain': relevance::DOUBLE}) AS js
        FROM ndcg_rels GROUP BY user_id),
    users AS (
        SELECT j.user_id,
               list_filter(list_transform(j.js, lambda x: {'pos': list_position(t.top, x.item),
                                                           'gain': x.gain}),
                           lambda h: h.pos IS NOT NULL AND h.gain <> 0) AS hits,
               list_transform(list_reverse_sort(list_filter(list_transform(j.js, lambda x: x.gain),
                                                             lambda g: g > 0))[1:{DEPTH}],
                              lambda g, i: g / log2(i + 1)) AS ideal
        FROM judged AS j
        LEFT JOIN (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs) AS t USING (user_id)),
    sums AS (
        SELECT u.user_id, c.k,
               coalesce(list_sum(list_transform(list_filter(u.hits, lambda h: h.pos <= c.k),
                                                lambda h: h.gain / log2(h.pos + 1))), 0.0) AS dcg,
               coalesce(list_sum(u.ideal[1:c.k]), 0.0) AS idcg
        FROM users AS u CROSS JOIN cutoffs AS c)
SELECT user_id, k, dcg, idcg, CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END AS ndcg
FROM sums;

-- name: lists_first_checked
-- As lists_first, with the repeat check on the gathered lists: a user whose judged items are not
-- all distinct stops the query (the exact check counts repeats; naming the values would need more).
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    judged AS (
        SELECT user_id, list({'item': item_id, 'gain': relevance::DOUBLE}) AS js
        FROM ndcg_rels GROUP BY user_id),
    users AS (
        SELECT j.user_id,
               list_filter(list_transform(j.js, lambda x: {'pos': list_position(t.top, x.item),
                                                           'gain': x.gain}),
                           lambda h: h.pos IS NOT NULL AND h.gain <> 0) AS hits,
               list_transform(list_reverse_sort(list_filter(list_transform(j.js, lambda x: x.gain),
                                                             lambda g: g > 0))[1:{DEPTH}],
                              lambda g, i: g / log2(i + 1)) AS ideal
        FROM judged AS j
        LEFT JOIN (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs) AS t USING (user_id)
        WHERE CASE WHEN len(list_distinct(list_transform(j.js, lambda x: x.item))) = len(j.js)
                   THEN true ELSE error('repeated judgment') END),
    sums AS (
        SELECT u.user_id, c.k,
               coalesce(list_sum(list_transform(list_filter(u.hits, lambda h: h.pos <= c.k),
                                                lambda h: h.gain / log2(h.pos + 1))), 0.0) AS dcg,
               coalesce(list_sum(u.ideal[1:c.k]), 0.0) AS idcg
        FROM users AS u CROSS JOIN cutoffs AS c)
SELECT user_id, k, dcg, idcg, CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END AS ndcg
FROM sums;

-- name: lists_first_deduped
-- As lists_first, with the whole repeat contract on the gathered lists: list_distinct over the
-- {item, gain} pairs counts a (user, item) judged twice with one value once, and a user whose
-- remaining items are not all distinct has an item with two values and stops the query.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    judged AS (
        SELECT user_id, js, list_transform(js, lambda x: x.item) AS judged_items
        FROM (SELECT user_id, list_distinct(list({'item': item_id, 'gain': relevance::DOUBLE})) AS js
              FROM ndcg_rels GROUP BY user_id)),
    users AS (
        SELECT j.user_id,
               list_filter(list_transform(j.js, lambda x: {'pos': list_position(t.top, x.item),
                                                           'gain': x.gain}),
                           lambda h: h.pos IS NOT NULL AND h.gain <> 0) AS hits,
               list_transform(list_reverse_sort(list_filter(list_transform(j.js, lambda x: x.gain),
                                                             lambda g: g > 0))[1:{DEPTH}],
                              lambda g, i: g / log2(i + 1)) AS ideal
        FROM judged AS j
        LEFT JOIN (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs) AS t USING (user_id)
        WHERE CASE WHEN len(list_distinct(j.judged_items)) = len(j.judged_items)
                   THEN true ELSE error('an item judged twice with two values') END),
    sums AS (
        SELECT u.user_id, c.k,
               coalesce(list_sum(list_transform(list_filter(u.hits, lambda h: h.pos <= c.k),
                                                lambda h: h.gain / log2(h.pos + 1))), 0.0) AS dcg,
               coalesce(list_sum(u.ideal[1:c.k]), 0.0) AS idcg
        FROM users AS u CROSS JOIN cutoffs AS c)
SELECT user_id, k, dcg, idcg, CASE WHEN idcg > 0 THEN dcg / idcg ELSE 0.0 END AS ndcg
FROM sums;

-- Pieces, not whole evaluations (timed, not checked): what each stage costs on its own.

-- floor: read recs, slice to 20, unnest with ranks
SELECT count(*), sum(item_id), sum(rank) FROM (
    SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
    FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs));

-- floor: ... and join the judgments (the hits), summing DCG@20
SELECT count(*), sum(g.relevance / log2(r.rank + 1)) FROM (
    SELECT user_id, unnest(top) AS item_id, generate_subscripts(top, 1) AS rank
    FROM (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs)) AS r
JOIN ndcg_rels AS g ON g.user_id = r.user_id AND g.item_id = r.item_id WHERE g.relevance > 0;

-- floor: ideal positions with the window over all judged rows
SELECT count(*), sum(relevance / log2(pos + 1)) FROM (
    SELECT user_id, relevance,
           row_number() OVER (PARTITION BY user_id ORDER BY relevance DESC) AS pos
    FROM ndcg_rels WHERE relevance > 0) WHERE pos <= {DEPTH};

-- floor: ideal lists with list(... ORDER BY ...) per user
SELECT count(*), sum(list_sum(top[1:{DEPTH}])) FROM (
    SELECT user_id, list(relevance ORDER BY relevance DESC) AS top
    FROM ndcg_rels WHERE relevance > 0 GROUP BY user_id);

-- name: position_lookup
-- No unnest of the rankings and no (user, item) hash join: each judgment row finds its rank
-- with list_position() in its user's top-max(k) list (a join on user_id alone, 1 row per user on
-- the build side). The ideal list from max(gain, max(k)) per user.
WITH
    cutoffs AS (SELECT unnest({KS}) AS k),
    tops AS (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs),
    judged AS (
        SELECT j.user_id, j.relevance::DOUBLE AS item_gain, list_position(t.top, j.item_id) AS rank
        FROM ndcg_rels AS j LEFT JOIN tops AS t ON t.user_id = j.user_id
        WHERE j.relevance > 0),
    per_user AS (
        SELECT user_id,
               sum(item_gain / log2(rank + 1)) FILTER (WHERE rank <= 5) AS d5,
               sum(item_gain / log2(rank + 1)) FILTER (WHERE rank <= 10) AS d10,
               sum(item_gain / log2(rank + 1)) FILTER (WHERE rank <= 20) AS d20,
               max(item_gain, {DEPTH}) AS best
        FROM judged GROUP BY user_id),
    users AS (
        SELECT e.user_id, p.d5, p.d10, p.d20,
               list_transform(coalesce(p.best, []), lambda g, i: g / log2(i + 1)) AS parts
        FROM (SELECT DISTINCT user_id FROM ndcg_rels) AS e LEFT JOIN per_user AS p USING (user_id)),
    wide AS (
        SELECT user_id, d5, d10, d20,
               coalesce(list_sum(parts[1:5]), 0.0) AS i5, coalesce(list_sum(parts[1:10]), 0.0) AS i10,
               coalesce(list_sum(parts[1:20]), 0.0) AS i20
        FROM users)
SELECT user_id, k, coalesce(dcg, 0.0) AS dcg, idcg,
       CASE WHEN idcg > 0 THEN coalesce(dcg, 0.0) / idcg ELSE 0.0 END AS ndcg
FROM (
    SELECT user_id, 5 AS k, d5 AS dcg, i5 AS idcg FROM wide
    UNION ALL SELECT user_id, 10, d10, i10 FROM wide
    UNION ALL SELECT user_id, 20, d20, i20 FROM wide);

-- floor: rank lookup alone: judgments joined to their user's top 20 on user_id, list_position
SELECT count(*), sum(list_position(t.top, j.item_id)) FROM ndcg_rels AS j
JOIN (SELECT user_id, items[1:{DEPTH}] AS top FROM ndcg_recs) AS t ON t.user_id = j.user_id;

-- floor: repeats found by grouping every judgment
-- Repeated judgments, exactly: every judgment grouped by (user, item).
SELECT count(*) FROM (
    SELECT user_id, item_id, count(*) AS n FROM ndcg_rels GROUP BY user_id, item_id) WHERE n > 1;

-- floor: repeats found by a signature pre-check
-- Repeated judgments, exactly, by a pre-check: a 1024-bit signature of each user's hashed item ids
-- (a repeat sets a bit twice, so a user with as many bits as judgments has none), then grouping
-- only the judgments of the users it flags
SELECT count(*) FROM (
    SELECT user_id, item_id, count(*) AS n FROM ndcg_rels
    SEMI JOIN (SELECT user_id FROM ndcg_rels GROUP BY user_id
               HAVING bit_count(bitstring_agg((hash(item_id) % 1024)::INTEGER, 0, 1023)) < count(*))
        AS flagged USING (user_id)
    GROUP BY user_id, item_id) WHERE n > 1;
