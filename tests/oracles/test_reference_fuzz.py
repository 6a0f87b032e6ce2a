"""A fuzz test across the doors (issue 29): small random files full of NaN, +-inf, +-0, huge and
tiny numbers, empty and Unicode strings and mixed types, in every recommendation layout (nested
lists, long by rank, long by score, TREC run and qrels) and file format (CSV, Parquet, JSON),
through `eval` (with `--segments`, `--train` and `--items`), `compare` and `ndcg_duck.evaluate`.

Every case ends in one of two ways:
- a named error: exit 1 or 2 (Python: ndcg_duck.InputError), one line starting `Error:`, no
  traceback, no DuckDB message; the cases whose input has no value (NaN relevance, a NaN
  score, a tie inside the counted depth, ...) must end so;
- success with the values of the plain-Python references (tests/reference/:
  NDCG, the metrics beside it, the beyond-accuracy ones), per user and in the summary.
Either way no output holds NaN or inf, and every input file keeps its bytes.

The test names contain `fuzz`: CI's second pass (.ci/run, duckdb 1.5) skips them;
NDCG_FUZZ_EXAMPLES=500 searches longer.
"""

import csv
import hashlib
import json
import math
import tempfile
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

import ndcg_duck
import reference
from reference import beyond as reference_beyond
from reference import metrics as reference_metrics
from ndcg_duck.cli import cli

NAN, INF = float("nan"), float("inf")
PLAIN_NUMBERS = [0, 1, 2, 3, 0.5, -1, -0.0]
EXTREME_NUMBERS = [NAN, INF, -INF, 1e308, -1e308, 5e-324, 1e-300, 2 ** 62, 1e20]
TEXT_IDS = ["a", "b", "é", "日本語", "𝔘x", "Z", "a,b", 'q"t', "", " "]
INT_IDS = [0, 1, 2, -3, 2 ** 62]
SEGMENTS = ["x", "y", "日本", 1, None, "", "a,b", 'q"t', "(all)"]
TREC_IDS = ["a", "b", "é", "日本語", "𝔘x", "Z", "a,b", 'q"t', "1", "02"]  # no space, not empty
FORBIDDEN = ["Traceback", "Conversion Error", "Binder Error", "Invalid Input Error",
             "Parser Error", "Catalog Error", "Out of Range Error", "Not implemented Error",
             "INTERNAL", "Internal Error", "INT32", "Invalid Error", "Serialization Error"]
SETTINGS = settings(max_examples=int(__import__("os").environ.get("NDCG_FUZZ_EXAMPLES", 0)) or 40,
                    deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class MustFail(Exception):
    """The reference's verdict: this input has no value, the run must stop with a named error."""




def numbers():
    return st.sampled_from(PLAIN_NUMBERS + EXTREME_NUMBERS)


# ---------------------------------------------------------------------------------------------
# The data: {user: [(item, rank or score)]} and {user: {item: relevance}}, written in one format.

@st.composite
def cases(draw, trec_ok=True):
    layout = draw(st.sampled_from(["lists", "ranks", "scores"] + (["trec"] if trec_ok else [])))
    fmt = draw(st.sampled_from(["parquet", "json"] if layout == "lists" else
                               ["csv", "parquet", "json"]))
    if layout == "trec":
        ids = TREC_IDS
    else:
        kind = draw(st.sampled_from(["int", "text", "mixed"]))
        ids = {"int": INT_IDS, "text": TEXT_IDS, "mixed": INT_IDS + TEXT_IDS}[kind]
    users = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique_by=str))
    items = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=5, unique_by=str))
    recs, recs2, rels = {}, {}, {}
    for user in users:
        for run in (recs, recs2):
            if draw(st.integers(0, 3)):
                ranked = draw(st.lists(st.sampled_from(items), max_size=5,
                                       unique=not draw(st.integers(0, 4)) == 0))
                run[user] = [(item, draw(numbers())) for item in ranked]
        if draw(st.integers(0, 3)) or not rels:
            judged = draw(st.dictionaries(st.sampled_from(items), relevances(),
                                          min_size=1, max_size=4, dict_class=list_dict))
            rels[user] = judged
    segments = None
    if draw(st.integers(0, 2)) == 0:  # a segments table: some users, maybe one twice
        listed = draw(st.lists(st.sampled_from(users + ids[:2]), min_size=1, max_size=4,
                               unique_by=str))
        segments = [(user, draw(st.sampled_from(SEGMENTS))) for user in listed]
        if draw(st.integers(0, 5)) == 0:
            segments.append((listed[0], draw(st.sampled_from(SEGMENTS))))
    return dict(layout=layout, fmt=fmt, recs=recs, recs2=recs2, rels=rels, users=users,
                items=items, ids=ids, segments=segments,
                segments_fmt=draw(st.sampled_from(["csv", "parquet", "json"])))


def list_dict(pairs=()):
    return dict(pairs)


def relevances():
    return numbers() | st.sampled_from(["high", True])


# ---------------------------------------------------------------------------------------------
# Writing the files

def as_column(values):
    """Parquet needs one type per column: mixed values become text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int} or kinds <= {int, float} and bool not in kinds:
        return values if kinds <= {int} else [None if v is None else float(v) for v in values]
    return [None if v is None else str(v) for v in values]


def write_table(path, columns, fmt):
    """columns: {name: [values]}; lists stay lists."""
    names = list(columns)
    rows = [dict(zip(names, vals)) for vals in zip(*columns.values())]
    if fmt == "parquet":
        arrays = {}
        for name, values in columns.items():
            if values and any(isinstance(v, list) for v in values):
                flat = as_column([x for v in values for x in v])
                lists, at = [], 0
                for v in values:
                    lists.append(flat[at:at + len(v)])
                    at += len(v)
                arrays[name] = lists
            else:
                arrays[name] = as_column(values)
        pq.write_table(pa.table(arrays) if rows else pa.table({n: [] for n in names}), path)
    elif fmt == "json":
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    else:
        with open(path, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(names)
            for row in rows:
                out.writerow([json.dumps(v) if isinstance(v, list) else
                              (repr(v) if isinstance(v, float) else v) for v in row.values()])


def write_recs(path, case, recs=None):
    layout, recs = case["layout"], case["recs"] if recs is None else recs
    if layout == "trec":
        lines = [f"{u} Q0 {item} {pos} {score!r} tag"
                 for u, ranked in recs.items() for pos, (item, score) in enumerate(ranked, 1)]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return
    if layout == "lists":
        write_table(path, {"user_id": list(recs),
                           "items": [[item for item, _ in ranked] for ranked in recs.values()]},
                    case["fmt"])
        return
    rows = [(u, item, value) for u, ranked in recs.items() for item, value in ranked]
    if not rows:
        rows = [(next(iter(case["rels"])), None, None)]  # a file needs a row: a NULL one
    write_table(path, {"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                       "rank" if layout == "ranks" else "score": [r[2] for r in rows]},
                case["fmt"])


def write_rels(path, case):
    rows = [(u, item, rel) for u, judged in case["rels"].items() for item, rel in judged.items()]
    if case["layout"] == "trec":
        path.write_text("".join(f"{u} 0 {item} {rel!r}\n" for u, item, rel in rows),
                        encoding="utf-8")
        return
    write_table(path, {"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                       "relevance": [r[2] for r in rows]}, case["fmt"])


def suffix(case):
    return "" if case["layout"] == "trec" else "." + case["fmt"]


def digests(paths):
    return {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


# ---------------------------------------------------------------------------------------------
# What the files mean, for the references

def read_id(value, fmt):
    """An id as the run should see it (keyed as text: ids typed differently are compared as
    text); None for an id that is NULL in that format (CSV has no empty string)."""
    if value is None or (fmt == "csv" and str(value) == ""):
        return None
    return str(value)


def read_number(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MustFail(f"{what} {value!r} is not a number")
    if math.isnan(value):
        raise MustFail(f"{what} is NaN")
    return float(value)


def read_relevance(value):
    rel = read_number(value, "relevance")
    if math.isinf(rel):
        raise MustFail("relevance is infinite")
    return rel


def meaning(case, ks, recs=None):
    """({user: [ranking]}, {user: {item: relevance}}) as the references read them, or MustFail.
    ks: the cutoffs (None for all), for the checks at the counted depth."""
    fmt = "trec" if case["layout"] == "trec" else case["fmt"]
    depth = None if None in ks else max(ks)
    judgments = {}
    for user, judged in case["rels"].items():
        u = read_id(user, fmt)
        if u is None or any(read_id(i, fmt) is None for i in judged):
            raise MustFail("NULL id in the relevance file")
        judgments[u] = {read_id(i, fmt): read_relevance(r) for i, r in judged.items()}
    rankings = {}
    for user, ranked in (case["recs"] if recs is None else recs).items():
        u = read_id(user, fmt)
        if u is None or any(read_id(i, fmt) is None for i, _ in ranked):
            raise MustFail("NULL id in the recommendations")
        pairs = [(read_id(i, fmt), v) for i, v in ranked]
        if case["layout"] == "ranks":
            values = [read_number(v, "rank") for _, v in pairs]
            pairs = sorted(zip([i for i, _ in pairs], values), key=lambda p: p[1])
            for at in range(len(pairs) - 1):
                if pairs[at][1] == pairs[at + 1][1] and (depth is None or at + 1 <= depth):
                    raise MustFail("two items at one rank within the counted depth")
        elif case["layout"] in ("scores", "trec"):
            values = [read_number(v, "score") for _, v in pairs]
            pairs = sorted(zip([i for i, _ in pairs], values), key=lambda p: p[0], reverse=True)
            pairs.sort(key=lambda p: p[1], reverse=True)
        ranking = [i for i, _ in pairs]
        counted = ranking if depth is None else ranking[:depth]
        judged = judgments.get(u, {})
        if any(counted.count(i) > 1 and i in judged for i in counted):
            raise MustFail("a judged item twice within the counted depth")
        rankings[u] = ranking
    if not set(rankings) & set(judgments):
        raise MustFail("no user of the relevance data has recommendations")
    return rankings, judgments


def finite(value, what):
    if not math.isfinite(value):
        raise MustFail(f"{what} is {value}")
    return value


def expected_per_user(rankings, judgments, ks, gain, metrics):
    """{user: {column: value}} from the references."""
    out = {}
    for user, judged in judgments.items():
        ranking = rankings.get(user, [])
        row = {}
        for k in ks:
            name = "all" if k is None else str(k)
            try:
                dcg, idcg, ndcg = reference.user_scores(ranking, judged, k, gain)
            except OverflowError:
                raise MustFail("a gain overflows")
            row.update({f"dcg@{name}": finite(dcg, "dcg"), f"idcg@{name}": finite(idcg, "idcg"),
                        f"ndcg@{name}": finite(ndcg, "ndcg")})
            binary = reference_metrics.binary_metrics(ranking, judged, k)
            for metric in metrics:
                if metric != "ndcg":
                    row[f"{metric}@{name}"] = binary[metric]
        out[user] = row
    return out


# ---------------------------------------------------------------------------------------------
# Running the doors and checking what they say

def invoke(args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_named_error(result):
    """Exit 1 or 2 through click (SystemExit), one `Error:` line, no DuckDB text."""
    text = result.output
    assert isinstance(result.exception, SystemExit), (result.exception, text)
    assert result.exit_code in (1, 2), (result.exit_code, text)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, text
    assert not any(word in text for word in FORBIDDEN), text


def assert_named_input_error(exc):
    message = str(exc)
    assert "\n" not in message.strip(), message
    assert not any(word in message for word in FORBIDDEN), message


def no_constants(text):
    """JSON text parsed with NaN and Infinity refused."""
    def refuse(token):
        raise AssertionError(f"{token} in the output: {text[:500]}")
    return json.loads(text, parse_constant=refuse)


def read_per_user(path):
    path = Path(path)
    if path.suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
    elif path.suffix == ".json":
        rows = no_constants(path.read_text(encoding="utf-8"))
    elif path.suffix == ".jsonl":
        rows = [no_constants(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    else:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [{key: (value if key == "user_id" or key == "segment" else
                           float(value) if value != "" else None)
                     for key, value in row.items()} for row in csv.DictReader(f)]
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float):
                assert math.isfinite(value), (key, row)
    return rows


def close(got, want):
    return got == pytest.approx(want, rel=1e-9, abs=1e-12)


def check_per_user(rows, expected):
    got = {str(row["user_id"]): row for row in rows}
    assert sorted(got) == sorted(expected), (sorted(got), sorted(expected))
    for user, want in expected.items():
        for column, value in want.items():
            assert close(got[user][column], value), (user, column, got[user][column], value)


def check_summary(summary, rows, expected, ks, metrics):
    assert summary["users"] == len(expected)
    for k in ks:
        for metric in metrics:
            column = f"{metric}@{'all' if k is None else k}"
            values = [want[column] for want in expected.values()]
            assert close(summary[column], sum(values) / len(values)), (column, summary)


OPTIONS = st.fixed_dictionaries({
    "ks": st.lists(st.sampled_from([1, 2, 3, None]), min_size=1, max_size=2, unique=True),
    "gain": st.sampled_from(["linear", "exponential", "binary"]),
    "per_user": st.sampled_from(["users.csv", "users.json", "users.jsonl", "users.parquet"]
                                + ["RECS"]),
})


def metrics_for(ks):
    return ["ndcg", "recall"] + ([] if None in ks else ["precision"])


def k_args(ks):
    return ["-k", ",".join("all" if k is None else str(k) for k in ks)]


@SETTINGS
@given(case=cases(), options=OPTIONS, door=st.sampled_from(["cli", "api"]))
def test_fuzz_eval(case, options, door):
    ks, gain = options["ks"], options["gain"]
    metrics = metrics_for(ks)
    with tempfile.TemporaryDirectory() as tmp:
        recs, rels = Path(tmp, "recs" + suffix(case)), Path(tmp, "rels" + suffix(case))
        write_recs(recs, case)
        write_rels(rels, case)
        before = digests([recs, rels])
        over_input = options["per_user"] == "RECS"
        out = recs if over_input else Path(tmp, options["per_user"])
        try:
            expected = expected_per_user(*meaning(case, ks), ks, gain, metrics)
        except MustFail:
            expected = None
        segment_args, segments = [], None
        if case["segments"] is not None and door == "cli":
            path = write_segments(tmp, case)
            before.update(digests([path]))
            segment_args = ["--segments", path, "--by", "segment"]
            try:
                segments = expected and segment_meaning(case, expected)
            except MustFail:
                expected = None
        if door == "cli":
            result = invoke(["eval", recs, rels, *k_args(ks), "-m", ",".join(metrics),
                             "--gain", gain, "--format", "json", "--per-user", out,
                             *segment_args])
            if over_input:
                assert_named_error(result)
                assert result.exit_code == 2, result.output
            elif expected is None or result.exit_code != 0:
                assert_named_error(result)
            else:
                assert result.exception is None, result.output
                summary = no_constants(result.stdout)
                rows = read_per_user(out)
                check_per_user(rows, expected)
                check_summary(summary, rows, expected, ks, metrics)
                if segments is not None:
                    check_segments(summary["segments"][1:], segments, expected, ks, metrics)
        else:
            formats = ({"recs_format": "trec", "rels_format": "trec"}
                       if case["layout"] == "trec" else {})
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ndcg_duck.NdcgWarning)
                    got = ndcg_duck.evaluate(str(recs), str(rels),
                                             k=["all" if k is None else k for k in ks],
                                             metrics=metrics, gain=gain, **formats)
            except ndcg_duck.InputError as exc:
                assert_named_input_error(exc)
            else:
                assert expected is not None, "ran on an input without a value"
                rows = got.per_user.to_pylist()
                for row in rows:
                    for key, value in row.items():
                        assert not isinstance(value, float) or math.isfinite(value), (key, row)
                check_per_user(rows, expected)
                check_summary(got.summary, rows, expected, ks, metrics)
        assert digests(before) == before


# ---------------------------------------------------------------------------------------------
# Segments

def write_segments(tmp, case):
    path = Path(tmp, "segments." + case["segments_fmt"])
    pairs = case["segments"]
    write_table(path, {"user_id": [u for u, _ in pairs], "segment": [g for _, g in pairs]},
                case["segments_fmt"])
    return path


def segment_meaning(case, expected):
    """{user: segment name} of the evaluated users, or MustFail."""
    fmt = case["segments_fmt"]
    named = {}
    for user, segment in case["segments"]:
        u = read_id(user, fmt)
        if u is None:
            raise MustFail("NULL user in the segments table")
        name = read_id(segment, fmt)
        name = None if name == "" else name
        if u in named and named[u] != name:
            raise MustFail("a user in two segments")
        named[u] = name
    if not set(named) & set(expected):
        raise MustFail("no user of the segments table is evaluated")
    return {user: named.get(user) or "(unknown)" for user in expected}


def check_segments(listed, segments, expected, ks, metrics):
    """listed: eval's per-segment entries after "(all)"."""
    got = {}
    for entry in listed:
        assert entry["segment"] not in got, ("one segment named twice", listed)
        got[entry["segment"]] = entry
    assert sorted(got) == sorted(set(segments.values())), (listed, segments)
    for name, entry in got.items():
        users = [u for u, s in segments.items() if s == name]
        assert entry["users"] == len(users), (name, entry)
        for k in ks:
            for metric in metrics:
                column = f"{metric}@{'all' if k is None else k}"
                want = sum(expected[u][column] for u in users) / len(users)
                assert close(entry[column], want), (name, column, entry, want)


# ---------------------------------------------------------------------------------------------
# compare: two runs of one layout, paired on the users of the relevance data

@SETTINGS
@given(case=cases(), k=st.sampled_from([1, 3, None]),
       test=st.sampled_from(["t", "bootstrap", "randomization"]))
def test_fuzz_compare(case, k, test):
    ks, metrics = [k], ["ndcg"]
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp, "a" + suffix(case)), Path(tmp, "b" + suffix(case))
        rels = Path(tmp, "rels" + suffix(case))
        write_recs(a, case)
        write_recs(b, case, case["recs2"])
        write_rels(rels, case)
        args = ["compare", rels, "--run", f"a={a}", "--run", f"b={b}", *k_args(ks),
                "--test", test, "--n-resamples", "50", "--min-users", "1", "--format", "json",
                "--per-user", Path(tmp, "users.csv")]
        inputs = [a, b, rels]
        try:
            want = {run: expected_per_user(*meaning(case, ks, recs), ks, "linear", metrics)
                    for run, recs in (("a", case["recs"]), ("b", case["recs2"]))}
            segments = {user: "(all)" for user in want["a"]}
        except MustFail:
            want = None
        if case["segments"] is not None:
            path = write_segments(tmp, case)
            inputs.append(path)
            args += ["--segments", path, "--by", "segment"]
            try:
                segments = want and segment_meaning(case, want["a"])
            except MustFail:
                want = None
        if case["layout"] == "trec":
            args += ["--recs-format", "trec", "--rels-format", "trec"]
        before = digests(inputs)
        result = invoke(args)
        if want is None or result.exit_code != 0:
            assert_named_error(result)
        else:
            assert result.exception is None, result.output
            rows = no_constants(result.stdout)
            read_per_user(Path(tmp, "users.csv"))
            column = f"ndcg@{'all' if k is None else k}"
            for row in rows:
                users = [u for u in want["a"]
                         if row["segment"] == "(all)" or segments[u] == row["segment"]]
                assert row["users"] == len(users), (row, segments)
                means = {run: sum(want[run][u][column] for u in users) / len(users)
                         for run in want}
                assert close(row["mean"], means[row["run"]]), (row, means)
                if row["run"] == "b":
                    assert close(row["diff"], means["b"] - means["a"]), (row, means)
        assert digests(inputs) == before


# ---------------------------------------------------------------------------------------------
# Beyond accuracy: --train and --items

@st.composite
def beyond_cases(draw):
    case = draw(cases(trec_ok=False))
    ids, items = case["ids"], case["items"]
    case["train"] = draw(st.lists(st.tuples(st.sampled_from(case["users"] + ids[:2]),
                                            st.sampled_from(items + ids[:2])),
                                  min_size=1, max_size=6))
    case["kind"] = draw(st.sampled_from(["embedding", "category", None]))
    catalogue, features = [], []
    if case["kind"]:
        catalogue = draw(st.lists(st.sampled_from(items + ids[:2]), min_size=1, max_size=6,
                                  unique_by=str))
        if draw(st.integers(0, 5)) == 0:
            catalogue.append(catalogue[0])
        for _ in catalogue:
            if case["kind"] == "embedding":
                size = 2 if draw(st.integers(0, 5)) else 3
                features.append(draw(st.lists(numbers(), min_size=size,
                                              max_size=size)))
            else:
                features.append(draw(st.lists(st.sampled_from(["s", "t", "日"]), max_size=2,
                                              unique=True)))
    case.update(catalogue=catalogue, features=features,
                train_fmt=draw(st.sampled_from(["csv", "parquet", "json"])),
                items_fmt=draw(st.sampled_from(["parquet", "json"])))
    return case


BEYOND = ["coverage", "gini", "entropy", "novelty", "popularity", "tail"]


def beyond_meaning(case, k, rankings, judgments):
    """(summary {column: value}, per user {user: {column: value}}) of the beyond metrics."""
    fmt = case["train_fmt"]
    train = [(read_id(u, fmt), read_id(i, fmt)) for u, i in case["train"]]
    if any(u is None or i is None for u, i in train):
        raise MustFail("NULL id in train")
    pop, train_users = reference_beyond.popularity(train)
    embedding = category = None
    if case["kind"]:
        ids = [read_id(i, case["items_fmt"]) for i in case["catalogue"]]
        if None in ids or len(set(ids)) < len(ids):
            raise MustFail("an item NULL or twice in the items file")
        features = dict(zip(ids, case["features"]))
        if case["kind"] == "embedding":
            vectors = list(features.values())
            if (len({len(v) for v in vectors}) > 1
                    or any(x != x for v in vectors for x in v)
                    or any(all(x == 0 for x in v) for v in vectors)):
                raise MustFail("embeddings of two lengths, NaN or zeros")
            embedding = {i: [float(x) for x in v] for i, v in features.items()}
        else:
            if any(not v for v in features.values()):
                raise MustFail("an empty category list")
            category = features
        catalogue = set(ids)
    else:
        catalogue = {i for _, i in train}
    tops = {u: rankings[u][:k] for u in judgments if u in rankings}
    summary = dict(zip([f"{m}@{k}" for m in BEYOND[:3]],
                       reference_beyond.run_metrics(tops, catalogue)))
    heads = reference_beyond.head(pop, catalogue)
    per_user = {}
    for user in judgments:
        top = tops.get(user) or []
        values = reference_beyond.user_metrics(top, pop, train_users, heads)
        row = dict(zip([f"{m}@{k}" for m in BEYOND[3:]], values or (None,) * 3))
        if case["kind"]:
            if len(top) >= 2 and any(i not in catalogue for i in top):
                raise MustFail("a shown item without features for ild")
            try:
                row[f"ild@{k}"] = reference_beyond.ild(
                    top, embedding=embedding,
                    category={i: set(c) for i, c in (category or {}).items()} or None)
            except (ZeroDivisionError, OverflowError, KeyError):
                raise MustFail("ild has no value")
        per_user[user] = row
    for value in list(summary.values()) + [v for row in per_user.values() for v in row.values()]:
        if value is not None:
            finite(value, "a beyond metric")
    return summary, per_user


@SETTINGS
@given(case=beyond_cases(), k=st.sampled_from([1, 2, 3]), door=st.sampled_from(["cli", "api"]))
def test_fuzz_beyond(case, k, door):
    metrics = BEYOND + (["ild"] if case["kind"] else [])
    with tempfile.TemporaryDirectory() as tmp:
        recs, rels = Path(tmp, "recs" + suffix(case)), Path(tmp, "rels" + suffix(case))
        train = Path(tmp, "train." + case["train_fmt"])
        write_recs(recs, case)
        write_rels(rels, case)
        write_table(train, {"user_id": [u for u, _ in case["train"]],
                            "item_id": [i for _, i in case["train"]]}, case["train_fmt"])
        inputs = [recs, rels, train]
        items = None
        if case["kind"]:
            items = Path(tmp, "items." + case["items_fmt"])
            write_table(items, {"item_id": case["catalogue"], case["kind"]: case["features"]},
                        case["items_fmt"])
            inputs.append(items)
        before = digests(inputs)
        try:
            rankings, judgments = meaning(case, [k])
            summary_want, want = beyond_meaning(case, k, rankings, judgments)
        except MustFail:
            want = None
        if door == "cli":
            out = Path(tmp, "users.json")
            result = invoke(["eval", recs, rels, "-k", k, "-m", ",".join(metrics),
                             "--train", train, "--format", "json", "--per-user", out]
                            + (["--items", items] if items else []))
            if want is None or result.exit_code != 0:
                assert_named_error(result)
                got = None
            else:
                assert result.exception is None, result.output
                got = no_constants(result.stdout), read_per_user(out)
        else:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ndcg_duck.NdcgWarning)
                    result = ndcg_duck.evaluate(str(recs), str(rels), k=k, metrics=metrics,
                                                train=str(train),
                                                items=str(items) if items else None)
            except ndcg_duck.InputError as exc:
                assert_named_input_error(exc)
                got = None
            else:
                assert want is not None, "ran on an input without a value"
                got = result.summary, result.per_user.to_pylist()
        if got is not None:
            summary, rows = got
            for column, value in summary_want.items():
                assert close(summary[column], value), (column, summary, summary_want)
            by_user = {str(row["user_id"]): row for row in rows}
            assert sorted(by_user) == sorted(want)
            for user, row in want.items():
                for column, value in row.items():
                    got_value = by_user[user][column]
                    assert (got_value is None if value is None else close(got_value, value)), (
                        user, column, got_value, value)
        assert digests(inputs) == before
