"""Every type a user can hand over gets a value or a named error, one table per door
(docs/errors.md: which types are accepted and how). Values are checked against plain Python."""

import math

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest

from ndcg_duck import InputError, evaluate
from ndcg_duck.sqlfiles import register

# The example: user u1 ranks items 1, 2, 3 (in that order); item 1 is judged 0, item 2 is judged 1.
GAINS = [0, 1, 0]  # by position
NDCG = sum(g / math.log2(i + 2) for i, g in enumerate(GAINS)) / (1 / math.log2(2))

ID_ERROR = "{what}: column {column!r} is {type}, not an id: ids must be integers or text; convert it"
NUMBER_ERROR = "{what}: column {column!r} is {type}, not a number; convert it, or name another column"
RECS, RELS = "recommendations (Table)", "relevance (Table)"

# role: the column given this type ('item' in both inputs); sql: the value made from i (1, 2, 3)
# as that type; the result: NDCG (as the plain-Python one above) or the error.
TYPES = {
    "item boolean": ("item", "i = 2", ID_ERROR.format(what=RECS, column="item_id", type="BOOLEAN")),
    "item decimal": ("item", "i::DECIMAL(9, 2)",
                     ID_ERROR.format(what=RECS, column="item_id", type="DECIMAL(9,2)")),
    "item hugeint": ("item", "i::HUGEINT", NDCG),  # Arrow holds it as a DECIMAL(38,0)
    "item float": ("item", "i::DOUBLE", ID_ERROR.format(what=RECS, column="item_id", type="DOUBLE")),
    "item date": ("item", "DATE '2020-01-01' + i::INTEGER",
                  ID_ERROR.format(what=RECS, column="item_id", type="DATE")),
    "item list": ("item", "[i]", ID_ERROR.format(what=RECS, column="item_id", type="BIGINT[]")),
    "item struct": ("item", "{'id': i}",
                    ID_ERROR.format(what=RECS, column="item_id", type="STRUCT(id BIGINT)")),
    "item map": ("item", "MAP {i: 1}",
                 ID_ERROR.format(what=RECS, column="item_id", type="MAP(BIGINT, INTEGER)")),
    "item blob": ("item", "i::VARCHAR::BLOB", ID_ERROR.format(what=RECS, column="item_id", type="BLOB")),
    "item uuid": ("item", "('00000000-0000-0000-0000-00000000000' || i)::UUID", NDCG),
    "user timestamp": ("user", "TIMESTAMP '2020-01-01 00:00:00'",
                       ID_ERROR.format(what=RECS, column="user_id", type="TIMESTAMP")),
    "relevance boolean": ("relevance", "i = 2", NDCG),  # true counts 1, false 0
    "relevance decimal": ("relevance", "(i - 1)::DECIMAL(9, 2)", NDCG),
    "relevance hugeint": ("relevance", "(i - 1)::HUGEINT", NDCG),
    "relevance float": ("relevance", "(i - 1)::FLOAT", NDCG),
    "relevance date": ("relevance", "DATE '2020-01-01'",
                       NUMBER_ERROR.format(what=RELS, column="relevance", type="DATE")),
    "relevance text": ("relevance", "(i - 1)::VARCHAR",
                       NUMBER_ERROR.format(what=RELS, column="relevance", type="VARCHAR")),
    "relevance list": ("relevance", "[i - 1]",
                       NUMBER_ERROR.format(what=RELS, column="relevance", type="BIGINT[]")),
    "relevance map": ("relevance", "MAP {i: 1}",
                      NUMBER_ERROR.format(what=RELS, column="relevance", type="MAP(BIGINT, INTEGER)")),
    "rank boolean": ("rank", "i > 1", NUMBER_ERROR.format(what=RECS, column="rank", type="BOOLEAN")),
    "rank decimal": ("rank", "i::DECIMAL(9, 2)", NDCG),
    "rank hugeint": ("rank", "i::HUGEINT", NDCG),
    "rank timestamp": ("rank", "TIMESTAMP '2020-01-01 00:00:00' + to_days(i::INTEGER)",
                       NUMBER_ERROR.format(what=RECS, column="rank", type="TIMESTAMP")),
    "score float": ("score", "(4 - i)::FLOAT", NDCG),
    "score blob": ("score", "i::VARCHAR::BLOB", NUMBER_ERROR.format(what=RECS, column="score", type="BLOB")),
}


def _tables(role: str, sql: str):
    con = duckdb.connect()
    typed = {r: (sql if r == role else plain) for r, plain in
             (("user", "'u1'"), ("item", "i"), ("relevance", "i - 1"), ("rank", "i"),
              ("score", "4 - i"))}
    order = "score" if role == "score" else "rank"
    recs = con.sql(f"SELECT {typed['user']} AS user_id, {typed['item']} AS item_id, "
                   f"{typed[order]} AS {order} FROM range(1, 4) t(i)").to_arrow_table()
    rels = con.sql(f"SELECT {typed['user']} AS user_id, {typed['item']} AS item_id, "
                   f"{typed['relevance']} AS relevance FROM range(1, 3) t(i)").to_arrow_table()
    return recs, rels


@pytest.mark.parametrize("case", list(TYPES))
def test_each_type_gets_a_value_or_a_named_error(case):
    role, sql, expected = TYPES[case]
    recs, rels = _tables(role, sql)
    if isinstance(expected, str):
        with pytest.raises(InputError) as caught:
            evaluate(recs, rels, per_user=False)
        assert str(caught.value) == expected
    else:
        assert evaluate(recs, rels, per_user=False).summary["ndcg@10"] == pytest.approx(expected)


RELS_FRAME = pd.DataFrame({"user_id": ["u1", "u1"], "item_id": ["1", "2"], "relevance": [0, 1]})
NESTED = "recommendations (Table): column 'items' is a list of {type}, not of item ids: " \
         "ids must be integers or text; convert it"

# pandas and polars columns: (recommendations, relevance) -> NDCG or the error
FRAMES = {
    "pandas Int64": (pd.DataFrame({"user_id": ["u1"] * 3, "item_id": pd.array([1, 2, 3], "Int64"),
                                   "rank": [1, 2, 3]}),
                     RELS_FRAME.assign(item_id=pd.array([1, 2], "Int64")), NDCG),
    "pandas string[python]": (pd.DataFrame({"user_id": pd.array(["u1"] * 3, "string[python]"),
                                            "item_id": ["1", "2", "3"], "rank": [1, 2, 3]}),
                              RELS_FRAME, NDCG),
    "pandas string[pyarrow]": (pd.DataFrame({"user_id": ["u1"] * 3, "rank": [1, 2, 3],
                                             "item_id": pd.array(["1", "2", "3"], "string[pyarrow]")}),
                               RELS_FRAME, NDCG),
    "pandas category": (pd.DataFrame({"user_id": ["u1"] * 3, "rank": [1, 2, 3],
                                      "item_id": pd.Categorical(["1", "2", "3"])}),
                        RELS_FRAME.assign(item_id=pd.Categorical(["1", "2"])), NDCG),
    "pandas numpy arrays": (pd.DataFrame({"user_id": ["u1"], "items": [np.array(["1", "2", "3"])]}),
                            RELS_FRAME, NDCG),
    "pandas datetime": (pd.DataFrame({"user_id": ["u1"] * 3, "item_id": ["1", "2", "3"],
                                      "rank": [1, 2, 3]}),
                        RELS_FRAME.assign(relevance=pd.to_datetime(["2020-01-01"] * 2)),
                        "relevance (DataFrame): column 'relevance' is TIMESTAMP, not a number; "
                        "convert it, or name another column"),
    "polars Categorical": (pl.DataFrame({"user_id": ["u1"] * 3, "item_id": ["1", "2", "3"],
                                         "rank": [1, 2, 3]}, schema_overrides={"item_id": pl.Categorical}),
                           RELS_FRAME, NDCG),
    "polars Enum": (pl.DataFrame({"user_id": ["u1"] * 3, "item_id": ["1", "2", "3"], "rank": [1, 2, 3]},
                                 schema_overrides={"item_id": pl.Enum(["1", "2", "3"])}),
                    RELS_FRAME, NDCG),
    "polars Decimal": (pl.DataFrame({"user_id": ["u1"] * 3, "item_id": ["1", "2", "3"], "rank": [1, 2, 3]}),
                       pl.DataFrame({"user_id": ["u1", "u1"], "item_id": ["1", "2"], "relevance": [0, 1]},
                                    schema_overrides={"relevance": pl.Decimal(9, 2)}), NDCG),
    "polars List": (pl.DataFrame({"user_id": ["u1"], "items": [[["1"], ["2"]]]}), RELS_FRAME,
                    NESTED.format(type="VARCHAR[]")),
    "polars Struct": (pl.DataFrame({"user_id": ["u1"], "items": [[{"id": "1"}]]}), RELS_FRAME,
                      NESTED.format(type="STRUCT(id VARCHAR)")),
}


@pytest.mark.parametrize("case", list(FRAMES))
def test_each_dataframe_dtype_gets_a_value_or_a_named_error(case):
    recs, rels, expected = FRAMES[case]
    if isinstance(expected, str):
        with pytest.raises(InputError) as caught:
            evaluate(recs, rels, per_user=False)
        assert str(caught.value) == expected
    else:
        assert evaluate(recs, rels, per_user=False).summary["ndcg@10"] == pytest.approx(expected)


@pytest.mark.parametrize("call, message", [
    (dict(k=2.5), "k=2.5: cutoff 2.5 is not an integer >= 1, 'all' or 'trec'"),
    (dict(per_user="no"), "per_user 'no' is not True or False"),
    (dict(judged_only="false"), "judged_only 'false' is not True or False"),
    (dict(unique_judgments=1), "unique_judgments 1 is not True or False"),
])
def test_keywords_of_the_wrong_type_are_refused_naming_the_keyword(call, message):
    recs, rels = _tables("item", "i")
    with pytest.raises(InputError) as caught:
        evaluate(recs, rels, **call)
    assert str(caught.value) == message and caught.value.usage


def _shell_con():
    con = duckdb.connect()
    register(con)
    con.execute("CREATE TABLE recs AS SELECT 'u1' AS user_id, [1, 2, 3] AS items")
    return con


# The shell's door: the SQL macros (the same script as `.read sql/ndcg.sql`), by the relevance
# column's type, and the list macros' values: NDCG (plain Python) or the error.
SHELL = {
    "relevance boolean": ("i = 2", NDCG),  # true counts 1, false 0
    "relevance decimal": ("(i - 1)::DECIMAL(9, 2)", NDCG),
    "relevance hugeint": ("(i - 1)::HUGEINT", NDCG),
    "relevance text": ("(i - 1)::VARCHAR",
                       "relevance: column relevance is VARCHAR, not a number or a boolean: convert it"),
    "relevance date": ("DATE '2020-01-01'",
                       "relevance: column relevance is DATE, not a number or a boolean: convert it"),
    "items repeated": ("SELECT ndcg_items([1, 2, 2], MAP {1: 0, 2: 1})",
                       "items: item 2 is listed twice: remove the repeat (a judged item counts once)"),
    "items repeated unjudged": ("SELECT ndcg_items([1, 2, 3, 3], MAP {1: 0, 2: 1})", NDCG),
    "items NULL": ("SELECT ndcg_items([1, NULL], MAP {1: 0, 2: 1})",
                   "items: the item at position 2 is NULL: drop it or fill it in"),
    "truth NULL": ("SELECT ndcg_items([1, 2], MAP {1: NULL, 2: 1})",
                   "truth: item 1 has relevance NULL: give a number"),
    "truth boolean": ("SELECT ndcg_items([1, 2, 3], MAP {1: false, 2: true})", NDCG),
    "list NULL": ("SELECT ndcg_list_dcg([0, NULL, 1])",
                  "relevances: the relevance at position 2 is NULL: give a number (0 for an item "
                  "without a judgment)"),
    "list text": ("SELECT ndcg_list(['0', '1'])",
                  "relevances: a value is VARCHAR, not a number or a boolean: convert it"),
}


@pytest.mark.parametrize("case", list(SHELL))
def test_each_type_in_the_shell_gets_a_value_or_a_named_error(case):
    sql, expected = SHELL[case]
    con = _shell_con()
    if not sql.startswith("SELECT"):
        con.execute(f"CREATE TABLE rels AS SELECT 'u1' AS user_id, i AS item_id, {sql} AS relevance "
                    f"FROM range(1, 3) t(i)")
        sql = "SELECT ndcg FROM ndcg_per_user('recs', 'rels')"
    if isinstance(expected, str):
        with pytest.raises(duckdb.Error) as caught:
            con.sql(sql).fetchall()
        assert str(caught.value) == f"Invalid Input Error: ndcg-duck: {expected}"
    else:
        assert con.sql(sql).fetchall()[0][0] == pytest.approx(expected)


SHELL_ORDER = "recommendations: column {column} is {type}, not a number: convert it"
SHELL_LIST = ("recommendations: column items is {type}[], not a list of item ids: ids must be "
              "integers or text; convert it")


def shell_id(column: str, type: str, recs: str = "") -> tuple:
    """The errors for ids of a type ids may not have, in both tables: whichever table the query
    reads first is named (recs: the recommendations' own message, for a list column)."""
    message = "{what}: column {column} is {type}, not an id: ids must be integers or text; convert it"
    return (recs or message.format(what="recommendations", column=column, type=type),
            message.format(what="relevance", column=column, type=type))


# The shell macros' other columns: (macro, the column given this type ('user' or 'item' in both
# tables, as ids must be alike to be compared), its values made from i (1, 2, 3)) -> NDCG or the
# errors it may give.
SHELL_COLUMNS = {
    "item boolean": ("ndcg_per_user_ranks", "item", "i = 2", shell_id("item_id", "BOOLEAN")),
    "item date": ("ndcg_per_user_scores", "item", "DATE '2020-01-01' + i::INTEGER",
                  shell_id("item_id", "DATE")),
    "item blob": ("ndcg_mean_ranks", "item", "i::VARCHAR::BLOB", shell_id("item_id", "BLOB")),
    "item struct": ("ndcg_per_user_ranks", "item", "{'id': i}",
                    shell_id("item_id", "STRUCT(id BIGINT)")),
    "items of structs": ("ndcg_per_user", "item", "{'id': i}",
                         shell_id("item_id", "STRUCT(id BIGINT)",
                                  SHELL_LIST.format(type="STRUCT(id BIGINT)"))),
    "item float": ("ndcg_mean_scores", "item", "i::DOUBLE", shell_id("item_id", "DOUBLE")),
    "item float, lists": ("ndcg_mean", "item", "i::DOUBLE",
                          shell_id("item_id", "DOUBLE",
                                   SHELL_LIST.format(type="DOUBLE"))),
    "item hugeint": ("ndcg_per_user_scores", "item", "i::HUGEINT", NDCG),
    "item uuid": ("ndcg_per_user", "item", "('00000000-0000-0000-0000-00000000000' || i)::UUID",
                  NDCG),
    "user date": ("ndcg_per_user", "user", "DATE '2020-01-01'", shell_id("user_id", "DATE")),
    "user boolean": ("ndcg_per_user_scores", "user", "true", shell_id("user_id", "BOOLEAN")),
    "rank text": ("ndcg_per_user_ranks", "rank", "i::VARCHAR",
                  SHELL_ORDER.format(column="rank", type="VARCHAR")),  # '10' < '2' as text
    "rank boolean": ("ndcg_mean_ranks", "rank", "i > 1",
                     SHELL_ORDER.format(column="rank", type="BOOLEAN")),
    "rank decimal": ("ndcg_per_user_ranks", "rank", "i::DECIMAL(9, 2)", NDCG),
    "score boolean": ("ndcg_per_user_scores", "score", "i < 2",
                      SHELL_ORDER.format(column="score", type="BOOLEAN")),
    "score date": ("ndcg_mean_scores", "score", "DATE '2020-01-01' - i::INTEGER",
                   SHELL_ORDER.format(column="score", type="DATE")),
    "score blob": ("ndcg_per_user_scores", "score", "i::VARCHAR::BLOB",
                   SHELL_ORDER.format(column="score", type="BLOB")),
}


@pytest.mark.parametrize("case", list(SHELL_COLUMNS))
def test_each_column_type_in_the_shell_gets_a_value_or_a_named_error(case):
    macro, role, sql, expected = SHELL_COLUMNS[case]
    con = duckdb.connect()
    register(con)
    typed = {r: (sql if r == role else plain) for r, plain in
             (("user", "'u1'"), ("item", "i"), ("rank", "i"), ("score", "4 - i"))}
    if macro in ("ndcg_per_user", "ndcg_mean"):
        recs = f"SELECT {typed['user']} AS user_id, list({typed['item']} ORDER BY i) AS items"
    else:
        order = "score" if macro.endswith("scores") else "rank"
        recs = (f"SELECT {typed['user']} AS user_id, {typed['item']} AS item_id, "
                f"{typed[order]} AS {order}")
    con.execute(f"CREATE TABLE recs AS {recs} FROM range(1, 4) t(i)")
    con.execute(f"CREATE TABLE rels AS SELECT {typed['user']} AS user_id, {typed['item']} AS "
                f"item_id, i - 1 AS relevance FROM range(1, 3) t(i)")
    query = f"SELECT ndcg FROM {macro}('recs', 'rels')"
    if not isinstance(expected, float):
        with pytest.raises(duckdb.Error) as caught:
            con.sql(query).fetchall()
        accepted = (expected,) if isinstance(expected, str) else expected
        assert str(caught.value) in [f"Invalid Input Error: ndcg-duck: {e}" for e in accepted]
    else:
        assert con.sql(query).fetchall()[0][0] == pytest.approx(expected)


# train= and items= (the beyond-accuracy inputs): their ids by type, read as the main inputs'
# are. The recommendations show items 1, 2, 3 (as text: a UUID's text for the UUID rows); the
# catalogue (items, or else train's items) holds 1 to 4: coverage@3 = 3/4.
UUID = "('00000000-0000-0000-0000-00000000000' || i)"
BEYOND = {
    "train enum": ("train", "i::VARCHAR", "(i::VARCHAR)::ENUM('1', '2', '3', '4')", 3 / 4),
    "items enum": ("items", "i::VARCHAR", "(i::VARCHAR)::ENUM('1', '2', '3', '4')", 3 / 4),
    "train uuid": ("train", UUID, f"{UUID}::UUID", 3 / 4),
    "items uuid": ("items", UUID, f"{UUID}::UUID", 3 / 4),
    "train boolean": ("train", "i::VARCHAR", "i = 2",
                      ID_ERROR.format(what="train (Table)", column="item_id", type="BOOLEAN")),
    "items date": ("items", "i::VARCHAR", "DATE '2020-01-01' + i::INTEGER",
                   ID_ERROR.format(what="items (Table)", column="item_id", type="DATE")),
}


@pytest.mark.parametrize("case", list(BEYOND))
def test_each_type_of_train_and_items_ids_gets_a_value_or_a_named_error(case):
    given, shown, sql, expected = BEYOND[case]
    con = duckdb.connect()
    recs = con.sql(f"SELECT 'u1' AS user_id, {shown} AS item_id, i AS rank "
                   f"FROM range(1, 4) t(i)").to_arrow_table()
    rels = con.sql(f"SELECT 'u1' AS user_id, {shown} AS item_id, i - 1 AS relevance "
                   f"FROM range(1, 3) t(i)").to_arrow_table()
    table = con.sql(f"SELECT 't' || i AS user_id, {sql} AS item_id FROM range(1, 5) t(i)"
                    ).to_arrow_table()
    call = dict(k=3, per_user=False, metrics="coverage", **{given: table})
    if isinstance(expected, str):
        with pytest.raises(InputError) as caught:
            evaluate(recs, rels, **call)
        assert str(caught.value) == expected
    else:
        assert evaluate(recs, rels, **call).summary["coverage@3"] == pytest.approx(expected)


# --- the types of what ndcg-duck writes: every metric a DOUBLE, counts integers -----------------

def every_metric_inputs():
    """A small run for every metric in metrics.METRICS (train and items for the beyond-accuracy
    ones): the recommendations, judgments and keyword options."""
    from ndcg_duck import metrics
    recs = pd.DataFrame({"user_id": [1, 1, 1, 2, 2], "item_id": [1, 2, 3, 1, 4],
                         "rank": [1, 2, 3, 1, 2]})
    rels = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [2, 3, 4], "relevance": [1, 2, 1]})
    train = pd.DataFrame({"user_id": [1, 2], "item_id": [1, 4]})
    items = pd.DataFrame({"item_id": [1, 2, 3, 4],
                          "embedding": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]})
    return recs, rels, dict(k=[2], metrics=[m.name for m in metrics.METRICS], train=train,
                            items=items)


def per_user_types_expected():
    """{per-user column: 'double' or 'integer'} for every metric of metrics.METRICS written per
    user (a per-run metric, such as coverage, has no per-user value), cutoff 2."""
    from ndcg_duck import metrics
    expected = {}
    for metric in metrics.METRICS:
        if metric.summary == "run":
            continue
        name = metric.name if metric.cutoff in ("none", "optional") else f"{metric.name}@2"
        expected[name] = "integer" if metric.summary == "sum" else "double"
    return expected


def test_every_metric_per_user_is_a_double_and_every_count_an_integer(tmp_path):
    """The per-user table of evaluate and of eval --per-user (Parquet): every metric a DOUBLE
    (hit_rate was a DECIMAL(2,1), which pandas and scipy cannot subtract from a float), counts
    (num_rel, num_rel_ret) integers; compare's per-user table and Spark's rows are made from the
    same SQL (Spark: tests/spark/test_spark.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from ndcg_duck import compare
    from ndcg_duck.cli import cli

    def kinds(schema, skip=("user_id",)):
        return {field.name: ("double" if pa.types.is_float64(field.type) else
                             "integer" if pa.types.is_integer(field.type) else str(field.type))
                for field in schema if field.name not in skip}

    recs, rels, options = every_metric_inputs()
    expected = {**per_user_types_expected(), "dcg@2": "double", "idcg@2": "double"}
    assert kinds(evaluate(recs, rels, **options).per_user.schema) == expected
    for name, frame in (("recs", recs), ("rels", rels), ("train", options["train"]),
                        ("items", options["items"])):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    got = CliRunner().invoke(cli, ["eval", str(tmp_path / "recs.parquet"),
                                   str(tmp_path / "rels.parquet"), "-k", "2",
                                   "-m", ",".join(options["metrics"]),
                                   "--train", str(tmp_path / "train.parquet"),
                                   "--items", str(tmp_path / "items.parquet"),
                                   "--per-user", str(tmp_path / "users.parquet")])
    assert got.exit_code == 0, got.output
    assert kinds(pq.read_schema(tmp_path / "users.parquet")) == expected
    from ndcg_duck.metrics import BY_NAME
    # not beyond accuracy; compare refuses gm_map and gm_bpref, geometric means: test_compare
    accuracy = [m for m in options["metrics"] if not BY_NAME[m].needs
                and m not in ("gm_map", "gm_bpref")]
    table = compare(rels, {"a": recs, "b": recs.assign(rank=-recs["rank"])}, k=2,
                    metrics=accuracy, per_user=True).per_user
    compared = kinds(table.schema)  # 'ndcg@2 a', 'ndcg@2 b', 'ndcg@2 b-a': the metric's type
    assert compared == {f"{name} {run}": expected[name] for name in expected
                        if name.split("@")[0] in accuracy for run in ("a", "b", "b-a")}
