"""The one option registry (ndcg_duck.options.PARAMS) drives click, evaluate() and the SQL
arguments; messages are in the caller's words (issue 13 points 15 and 16)."""

import inspect
import re

import click
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT
from ndcg_duck import options
from ndcg_duck.cli import cli
from ndcg_duck.cli.extras import EVAL_EXTRAS
from ndcg_duck.options import PARAMS, Options, in_python_words

RECS = str(ROOT / "examples" / "recs.parquet")
RELS = str(ROOT / "examples" / "relevance.csv")


def sql_allowed_lists():
    """Every ndcg_option('name', value, [allowed]) call in the macro files."""
    found = []
    for path in sorted((ROOT / "sql").glob("ndcg_*.sql")):
        text = path.read_text(encoding="utf-8")
        for name, allowed in re.findall(r"ndcg_option\('(\w+)',\s*\w+,\s*\[([^\]]*)\]\)", text):
            found.append((path.name, name, tuple(re.findall(r"'([^']*)'", allowed))))
    return found


def test_the_sql_macros_allow_what_the_registry_allows():
    found = sql_allowed_lists()
    assert len({name for _, name, _ in found}) >= 5  # gain, idcg_cutoff, ties, missing, empty
    for path, name, allowed in found:
        assert name in options.BY_NAME, f"{path}: ndcg_option '{name}' is not in the registry"
        assert allowed == options.BY_NAME[name].choices, (path, name)


def test_every_registry_option_is_a_click_option_with_its_default_and_choices():
    command = cli.commands["eval"]
    by_name = {param.name: param for param in command.params}
    for param in PARAMS:
        clicked = by_name[param.name]
        assert param.option in clicked.opts
        assert clicked.help == param.help
        if param.choices:
            assert isinstance(clicked.type, click.Choice)
            assert tuple(clicked.type.choices) == tuple(c for c in param.choices if c is not None)
        if param.kind not in ("multiple", "flag"):
            assert clicked.default == param.default
    assert set(by_name) == {"recs", "relevance"} | {p.name for p in PARAMS} | set(EVAL_EXTRAS)


def test_every_python_option_is_a_keyword_of_evaluate_with_its_default():
    signature = inspect.signature(ndcg_duck.evaluate)
    for param in options.PYTHON:
        assert signature.parameters[param.name].default == param.default
    assert {"per_user", "con"} <= set(signature.parameters)  # per_user=True/False in Python
    assert not {"format", "quiet"} & set(signature.parameters)  # the command line's own


def test_the_sql_arguments_come_from_the_registry():
    chosen = Options(k=[5, "all"], gain="binary", gain_map={1: 3}, ties="average",
                     judged_only=True, idcg_cutoff="list", unique_judgments=True,
                     missing="skip", empty="skip")
    assert chosen.sql_args("scores", "scores") == (
        "ks := [5, NULL]::BIGINT[], ties := 'average', judged_only := true, "
        "idcg_cutoff := 'list'")
    assert chosen.sql_args("judgments") == (
        "gain := 'binary', gain_map := MAP([1.0]::DOUBLE[], [3.0]::DOUBLE[]), "
        "min_relevance := NULL, unique_judgments := true")
    assert chosen.sql_args("scores", "lists").count("ties := 'trec'") == 1  # lists have no ties
    assert chosen.sql_args("evaluated") == "missing := 'skip', empty := 'skip'"


def test_a_new_option_is_one_entry(monkeypatch):
    """A Param added to the registry is a CLI flag, a keyword of evaluate() and an argument of
    the SQL macros, with nothing else to change."""
    extra = options.Param("min_rel_demo", "metric", default="no", choices=("no", "yes"),
                          sql="evaluated", help="A demonstration option.")
    level = options.Param("level_demo", "metric", kind="float", check=float,
                          to_sql=lambda v: "NULL" if v is None else repr(v), sql="evaluated",
                          help="A number.")
    monkeypatch.setattr(options, "PARAMS", options.PARAMS + (extra, level))
    from ndcg_duck.cli import eval as cli_module

    @click.command()
    @cli_module.registry_options("metric")
    def probe(**given):
        click.echo(Options(**given).sql_args("evaluated"))

    result = CliRunner().invoke(probe, ["--min-rel-demo", "yes", "--level-demo", "2.5"])
    assert result.output == ("missing := 'zero', empty := 'zero', min_rel_demo := 'yes', "
                             "level_demo := 2.5\n")
    bad = CliRunner().invoke(probe, ["--level-demo", "two"])
    assert bad.exit_code == 2 and "'two' is not a valid float" in bad.output
    assert "--min-rel-demo [no|yes]" in CliRunner().invoke(probe, ["--help"]).output
    with pytest.raises(ndcg_duck.InputError, match="min_rel_demo 'maybe' is not one of: no, yes"):
        Options(min_rel_demo="maybe")


# --- the caller's words ---------------------------------------------------------------------------

@pytest.mark.parametrize("given, message", [
    ({"user_col": "uid"},
     f"recommendations file {RECS}: no column 'uid' (columns found: user_id, items); name it "
     f"with user_col="),
    ({"relevance_col": "grade"},
     f"relevance file {RELS}: no column 'grade', named by relevance_col= (columns found: "
     f"user_id, item_id, relevance); check relevance_col="),
    ({"memory_limit": "lots"}, "memory_limit='lots': Memory must have a number (e.g. 1GB)"),
    ({"colour": "red"}, "unknown option colour=: the options are " +
     ", ".join(p.name for p in options.PYTHON)),
])
def test_python_messages_name_keywords_not_flags(given, message):
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.evaluate(RECS, RELS, **given)
    assert str(raised.value) == message


@pytest.mark.parametrize("cli_words, python_words", [
    ("name it with --user-col", "name it with user_col="),
    ("keep the first occurrence with --duplicates first", "keep the first occurrence with "
                                                          "duplicates='first'"),
    ("or --recs-format", "or recs_format="),
    ("with --rank-col 'rank' or --score-col 'score'", "with rank_col='rank' or score_col='score'"),
    ("trec_eval -J is --judged-only", "trec_eval -J is judged_only=True"),
    ("use -k with an integer", "use k= with an integer"),
    ("--gain-map-like --user-colour", "--gain-map-like --user-colour"),  # not our flags
])
def test_in_python_words(cli_words, python_words):
    assert in_python_words(cli_words) == python_words


def test_a_repeated_item_in_python_words(tmp_path):
    import pyarrow as pa

    recs = pa.table({"user_id": ["u1"], "items": [["a", "a"]]})
    rels = pa.table({"user_id": ["u1"], "item_id": ["a"], "relevance": [1]})
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.evaluate(recs, rels)
    assert str(raised.value) == ("recommendations (Table): user u1 ranks item a twice: remove "
                                 "the repeat, or keep the first occurrence with "
                                 "duplicates='first'")
