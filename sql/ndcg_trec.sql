-- TREC files as trec_eval reads them: plain text, one entry a line, fields separated by any run of
-- spaces or tabs. Paths may be globs. Blank lines are skipped; words after the fields named below
-- are ignored (some runs carry comments there).

-- ndcg_trec_spaces(line): the line with each tab, line feed, form feed and carriage return made a
-- space (the line itself when it has none).
CREATE OR REPLACE TEMP MACRO ndcg_trec_spaces(line) AS
    CASE WHEN contains(line, chr(9)) OR contains(line, chr(10)) OR contains(line, chr(12))
              OR contains(line, chr(13))
         THEN replace(replace(replace(replace(line, chr(9), ' '), chr(10), ' '), chr(12), ' '),
                      chr(13), ' ')
         ELSE line END;

-- ndcg_trec_nonempty(parts): a list of strings without its empty ones (the list itself when it
-- has none).
CREATE OR REPLACE TEMP MACRO ndcg_trec_nonempty(parts) AS
    CASE WHEN list_contains(parts, '') THEN list_filter(parts, lambda w: w <> '') ELSE parts END;

-- ndcg_trec_split(line): a line's words (VARCHAR list): its runs of characters other than spaces,
-- tabs, and the other ASCII white space of regular expressions' \s (line feed, form feed, carriage
-- return). Splitting at spaces costs a third of regexp_extract_all(line, '\S+'), which gives the
-- same words; the other white space is made spaces (ndcg_trec_spaces) and the empty words between
-- two spaces dropped (ndcg_trec_nonempty) only in a line that has them: a run written with one
-- space between fields, the common case, is split and nothing more (3.9 -> 2.5 CPU s for 10M lines).
CREATE OR REPLACE TEMP MACRO ndcg_trec_split(line) AS
    ndcg_trec_nonempty(string_split(ndcg_trec_spaces(line), ' '));

-- ndcg_trec_has_words(line): whether the line has a word (is not blank): a test on the line, so
-- that a filter on it does not split every line twice. A line whose first byte comes after the
-- space's ('!' and up: no white space) has one, which a comparison tells; the others are
-- searched (a TREC run of 10M lines: 0.42 -> 0.05 CPU s).
CREATE OR REPLACE TEMP MACRO ndcg_trec_has_words(line) AS
    line >= '!' OR regexp_matches(line, '\S');

-- ndcg_trec_words(path): each non-blank line of the text file(s) at path, and its words.
-- Returns filename, line (VARCHAR) and words (VARCHAR list).
CREATE OR REPLACE TEMP MACRO ndcg_trec_words(path) AS TABLE
    SELECT filename, line, ndcg_trec_split(line) AS words
    -- chr(31), the unit separator, never occurs in a TREC file: each line is one value
    FROM read_csv(path, columns = {'line': 'VARCHAR'}, header = false, delim = chr(31),
                  quote = '', escape = '', auto_detect = false, filename = true)
    WHERE ndcg_trec_has_words(line);

-- ndcg_trec_lines(lines): as ndcg_trec_words, for lines already read: the table `lines`
-- (filename, line), e.g. a Spark worker's share of the files.
CREATE OR REPLACE TEMP MACRO ndcg_trec_lines(lines) AS TABLE
    SELECT filename, line, ndcg_trec_split(line) AS words
    FROM query_table(lines)
    WHERE ndcg_trec_has_words(line);

-- ndcg_trec_number(words, n, filename, line, form): the n-th word of a line as a DOUBLE; stops,
-- naming the file, the form its lines take and the line, when there is no such word or it is not
-- a number.
CREATE OR REPLACE TEMP MACRO ndcg_trec_number(words, n, filename, line, form) AS
    coalesce(TRY_CAST(words[n] AS DOUBLE),
             error('ndcg-duck: ' || filename || ': a TREC ' || form || ', not: ' || line));

-- ndcg_trec_run_score(words, filename, line): a run line's score, its 5th word (lines
-- `query Q0 doc rank score tag`; the rank is ignored, as trec_eval does).
CREATE OR REPLACE TEMP MACRO ndcg_trec_run_score(words, filename, line) AS
    ndcg_trec_number(words, 5, filename, line, 'run line is "query Q0 doc rank score tag"');

-- ndcg_trec_qrels_relevance(words, filename, line): a qrels line's relevance, its 4th word
-- (lines `query iteration doc relevance`; used exactly, never truncated).
CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels_relevance(words, filename, line) AS
    ndcg_trec_number(words, 4, filename, line, 'qrels line is "query iteration doc relevance"');

-- ndcg_trec_run(path): a run. Returns user_id (query), item_id (doc) and score (DOUBLE): the
-- long layout ranked by score, for ndcg_ranked_scores and the _scores macros.
CREATE OR REPLACE TEMP MACRO ndcg_trec_run(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_run_score(words, filename, line) AS score
    FROM ndcg_trec_words(path);

-- ndcg_trec_qrels(path): relevance judgments (qrels). Returns user_id (query), item_id (doc)
-- and relevance (DOUBLE).
CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels(path) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_qrels_relevance(words, filename, line) AS relevance
    FROM ndcg_trec_words(path);

-- ndcg_trec_run_lines(lines), ndcg_trec_qrels_lines(lines): the same, from lines already read
-- (the table `lines`: filename, line), e.g. a Spark worker's share of the files.
CREATE OR REPLACE TEMP MACRO ndcg_trec_run_lines(lines) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_run_score(words, filename, line) AS score
    FROM ndcg_trec_lines(lines);

CREATE OR REPLACE TEMP MACRO ndcg_trec_qrels_lines(lines) AS TABLE
    SELECT words[1] AS user_id, words[3] AS item_id,
           ndcg_trec_qrels_relevance(words, filename, line) AS relevance
    FROM ndcg_trec_lines(lines);
