-- What would mislead, said out loud (issue 33): recommended items the user already had in train
-- (seen items, which a recommender is rarely meant to show again), tied scores (whose order
-- only a rule decides), and the per-item view of a run (how often each item is shown, relevant
-- and hit).
--
-- train has user_id and item_id (the interactions the system learned from; other columns are
-- ignored). A ranking edge's result (user_id, items, ranks) is what every metric reads
-- (sql/ndcg_input.sql).

-- ndcg_seen_entries(ranked, train): the items of each ranking of `ranked` (a ranking edge's
-- result) that its user has in train: user_id, position (1 for the first) and item_id, one row
-- each. An item a user has in train several times is one row.
CREATE OR REPLACE TEMP MACRO ndcg_seen_entries(ranked, train) AS TABLE
    SELECT e.user_id, e.position, e.item_id
    FROM (SELECT user_id, generate_subscripts(items, 1) AS position, unnest(items) AS item_id
          FROM query_table(ranked)) AS e
    SEMI JOIN query_table(train) AS t ON t.user_id = e.user_id AND t.item_id = e.item_id;

-- ndcg_seen_any(items, had): whether the list `items` holds an item of the list `had` (NULLs never
-- match). When the two lengths multiply to at most 4096, each item of had is looked for in items
-- (list_contains: about a third of list_has_any's cost on a ranking of 20 and 10 train items);
-- longer lists use list_has_any (a hash set: no long pair of lists is compared item by item).
CREATE OR REPLACE TEMP MACRO ndcg_seen_any(items, had) AS
    CASE WHEN len(items) * len(had) <= 4096
         THEN coalesce(list_bool_or(list_transform(had, lambda x: list_contains(items, x))), false)
         ELSE list_has_any(items, had) END;

-- ndcg_seen_entries_of(ranked, lists): ndcg_seen_entries from train's rows grouped per user
-- (ndcg_train_lists, sql/ndcg_beyond.sql): each ranking meets its user's train items once, and
-- only the rankings that hold one of them (ndcg_seen_any) are taken apart item by item.
CREATE OR REPLACE TEMP MACRO ndcg_seen_entries_of(ranked, lists) AS TABLE
    SELECT user_id, position, items[position] AS item_id
    FROM (SELECT r.user_id, r.items, t.items AS had, generate_subscripts(r.items, 1) AS position
          FROM query_table(ranked) AS r JOIN query_table(lists) AS t ON t.user_id = r.user_id
          WHERE ndcg_seen_any(r.items, t.items))
    WHERE list_contains(had, items[position]);

-- ndcg_seen_of(entries): ndcg_seen's counts from its rows of ndcg_seen_entries (by name).
CREATE OR REPLACE TEMP MACRO ndcg_seen_of(entries) AS TABLE
    SELECT count(DISTINCT user_id) AS users, count(*) AS items,
           arg_min(user_id::VARCHAR, [user_id::VARCHAR, lpad(position::VARCHAR, 20, '0')])
               AS example_user,
           arg_min(item_id::VARCHAR, [user_id::VARCHAR, lpad(position::VARCHAR, 20, '0')])
               AS example_item
    FROM query_table(entries);

-- ndcg_seen(ranked, train): how many of the rankings of `ranked` (a ranking edge's result, cut
-- where the metrics read it) hold items their user has in train: users, items (the recommended
-- rows seen in train) and one example, the smallest user as text and its first such item
-- (example_user, example_item as text; NULL when there is none). One row.
CREATE OR REPLACE TEMP MACRO ndcg_seen(ranked, train) AS TABLE
    WITH entries_ AS (FROM ndcg_seen_entries(ranked, train))
    FROM ndcg_seen_of('entries_');

-- ndcg_unseen(ranked, train, depth): a ranking edge's result with each user's train items taken
-- out of their ranking before the cut (as most recommender libraries evaluate: the items below
-- move up), the tie ranks numbered again (ndcg_first_positions), each list cut to its first
-- `depth` items (NULL: all). A user without train rows keeps their ranking.
CREATE OR REPLACE TEMP MACRO ndcg_unseen(ranked, train, depth := NULL) AS TABLE
    WITH seen_ AS (SELECT user_id, list(position) AS positions
                   FROM ndcg_seen_entries(ranked, train) GROUP BY user_id),
    kept_ AS (SELECT r.user_id,
                     CASE WHEN s.positions IS NULL THEN r.items
                          ELSE list_filter(r.items,
                                           lambda item, i: NOT list_contains(s.positions, i))
                     END AS items,
                     CASE WHEN s.positions IS NULL OR r.ranks IS NULL THEN r.ranks
                          ELSE ndcg_first_positions(list_filter(r.ranks,
                                   lambda rank, i: NOT list_contains(s.positions, i)))
                     END AS ranks
              FROM query_table(ranked) AS r LEFT JOIN seen_ AS s ON s.user_id = r.user_id)
    SELECT user_id, list_slice(items, 1, coalesce(depth, len(items))) AS items,
           list_slice(ranks, 1, coalesce(depth, len(ranks))) AS ranks
    FROM kept_;

-- ndcg_score_lists(recs, depth): per user of recs (user_id, item_id, score, checked by
-- ndcg_rows_scored), user_id and scores: the best depth + 1 scores, best first (all of them
-- with a NULL depth or one past ndcg_top_depth: then sorted per user).
CREATE OR REPLACE TEMP MACRO ndcg_score_lists(recs, depth) AS TABLE
    SELECT user_id, max(score, coalesce(ndcg_top_depth(depth), 1) + 1) AS scores
    FROM ndcg_rows_scored(recs)
    WHERE ndcg_top_depth(depth) IS NOT NULL
    GROUP BY user_id
    UNION ALL
    SELECT user_id, list(score ORDER BY score DESC) AS scores
    FROM ndcg_rows_scored(recs)
    WHERE ndcg_top_depth(depth) IS NULL
    GROUP BY user_id;

-- ndcg_ties_of(users): outcome.ties_note's counts from per-user rows (user_id, tied: the user's
-- tied rows, ndcg_tied_rows): users (with a tie), tied (summed) and example_user (the smallest
-- such user, as text). One row.
CREATE OR REPLACE TEMP MACRO ndcg_ties_of(users) AS TABLE
    SELECT count(*) AS users, coalesce(sum(tied), 0) AS tied, min(user_id::VARCHAR) AS example_user
    FROM query_table(users)
    WHERE tied > 0;

-- ndcg_ties(recs, depth): the tied scores among each user's first `depth` rows (NULL: all) of
-- recs (user_id, item_id, score): users (with a tie there), tied (ndcg_tied_rows, summed) and
-- example_user (the smallest such user, as text), by ndcg_ties_of. One row. A pass of its own
-- over recs: a run whose ranking edge counted them (ndcg_ranked_scores' tied) reads those.
CREATE OR REPLACE TEMP MACRO ndcg_ties(recs, depth := NULL) AS TABLE
    WITH ndcg_tied_ AS (SELECT user_id, ndcg_tied_rows(scores, depth) AS tied
                        FROM ndcg_score_lists(recs, depth))
    FROM ndcg_ties_of('ndcg_tied_');

-- ndcg_relevant_pairs(judgments): the relevant (user_id, item_id) pairs of a judgments edge's
-- result (ndcg_judgments: relevance > 0, or >= min_relevance).
CREATE OR REPLACE TEMP MACRO ndcg_relevant_pairs(judgments) AS TABLE
    SELECT user_id, item_id
    FROM (SELECT user_id, unnest(items) AS item_id, unnest(relevant) AS relevant
          FROM query_table(judgments))
    WHERE relevant;

-- ndcg_item_counts(entries, relevant, depths): the per-item view's counts, per cutoff k and item
-- shown or relevant: k, item_id, shown (how many users' top_k hold it: the exposure count),
-- relevant (how many users of `relevant` it is relevant for) and hits (how many users' top_k
-- hold it and it is relevant for them). entries as ndcg_beyond_entries gives them (the evaluated
-- users' lists), relevant the (user_id, item_id) pairs of the evaluated users, each once
-- (ndcg_relevant_pairs), depths the cutoffs as ndcg_beyond_shown_of takes them (one row, a
-- column per cutoff named by it, 'all' for no cutoff, holding the deepest position it reads).
-- One pass over the entries, each met by its relevant pair (a hit) in one join, one group per
-- item with its counts at every cutoff in a column of their own, its relevant count joined once,
-- then a row per cutoff (UNPIVOT) where the item is shown or relevant. Counts of users: those of
-- disjoint groups of users add up, per k and item, to the counts of all (the Spark engine's
-- workers).
CREATE OR REPLACE TEMP MACRO ndcg_item_counts(entries, relevant, depths) AS TABLE
    WITH shown_ AS (SELECT e.item_id,
                           {'shown': count(CASE WHEN e.position <= COLUMNS(d.*) THEN 1 END),
                            'hits': count(CASE WHEN e.position <= COLUMNS(d.*) THEN r.user_id END)}
                    FROM query_table(entries) AS e
                    LEFT JOIN query_table(relevant) AS r
                      ON r.user_id = e.user_id AND r.item_id = e.item_id
                    CROSS JOIN query_table(depths) AS d
                    GROUP BY e.item_id),
    relevant_ AS (SELECT item_id, count(*) AS relevant FROM query_table(relevant)
                  GROUP BY item_id),
    items_ AS (SELECT coalesce(s.item_id, r.item_id) AS item_id,
                      coalesce(r.relevant, 0) AS relevant,
                      coalesce(COLUMNS(s.* EXCLUDE (item_id)),
                               {'shown': 0::BIGINT, 'hits': 0::BIGINT})
               FROM shown_ AS s FULL JOIN relevant_ AS r ON r.item_id = s.item_id)
    SELECT CASE WHEN u.k = 'all' THEN NULL ELSE u.k::BIGINT END AS k, u.item_id,
           u.c.shown AS shown, u.relevant, u.c.hits AS hits
    FROM (UNPIVOT items_ ON COLUMNS(* EXCLUDE (item_id, relevant)) INTO NAME k VALUE c) AS u
    WHERE u.c.shown > 0 OR u.relevant > 0;

-- ndcg_item_view_of(counts, popularity): the per-item view from its counts (ndcg_item_counts'
-- rows, or their sums per k and item over groups of users): k, item_id, shown, exposure_share
-- (shown / the shown items of every user at k), relevant, hits and train_users (its
-- popularity: the distinct train users with it; 0 when none). popularity: item_id and pop
-- (ndcg_beyond_popularity; empty without train).
CREATE OR REPLACE TEMP MACRO ndcg_item_view_of(counts, popularity) AS TABLE
    SELECT c.k, c.item_id, c.shown,
           c.shown / sum(c.shown) OVER (PARTITION BY c.k) AS exposure_share,
           c.relevant, c.hits, coalesce(p.pop, 0) AS train_users
    FROM query_table(counts) AS c
    LEFT JOIN query_table(popularity) AS p ON p.item_id = c.item_id;

-- ndcg_item_view(entries, relevant, depths, popularity): the per-item view of a run, per cutoff
-- of depths (as ndcg_item_counts takes them) and item shown or relevant (ndcg_item_counts, then
-- ndcg_item_view_of): k, item_id, shown, exposure_share, relevant, hits and train_users.
CREATE OR REPLACE TEMP MACRO ndcg_item_view(entries, relevant, depths, popularity) AS TABLE
    WITH counts_ AS (FROM ndcg_item_counts(entries, relevant, depths))
    FROM ndcg_item_view_of('counts_', popularity);
