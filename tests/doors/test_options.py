"""The one option registry (ndcg_duck.options.PARAMS) drives click, evaluate() and the SQL
arguments; messages are in the caller's words (issue 13 points 15 and 16)."""

import inspect
import re

import click
import pytest
from click.testing import CliRunner

import ndcg_duck
from conftest import ROOT
from ndcg_duck import options, statements
from ndcg_duck.cli import cli
from ndcg_duck.comparison.compare import compare_runs
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
        assert allowed == tuple(c for c in options.BY_NAME[name].choices if c is not None), \
            (path, name)


# the registry's groups each command takes, and the Params it takes one by one
COMMAND_PARAMS = {
    "eval": ("metric", "beyond", "columns", "formats", "engine", "spark", "output", "extras",
             "intervals", "n_resamples", "seed"),
    "compare": ("compare", "compare_cli", "metric", "beyond", "columns", "formats", "engine",
                "spark", "extras", "quiet"),
    "split": ("split", "user_col", "item_col", "relevance_col", "threads", "memory_limit",
              "temp_dir", "s3_endpoint"),
}


@pytest.mark.parametrize("command_name", sorted(COMMAND_PARAMS))
def test_every_click_option_is_a_registry_option_with_its_default_and_choices(command_name):
    """Every option of eval and compare is declared once, in the registry: its click option is
    the Param's, with its flag, help, default and choices."""
    command = cli.commands[command_name]
    clicked = {param.name: param for param in command.params if isinstance(param, click.Option)
               and param.name != "help"}
    not_in_registry = sorted(set(clicked) - set(options.BY_NAME))
    assert not not_in_registry, f"{command_name}: options not in options.PARAMS: {not_in_registry}"
    for name, option in clicked.items():
        param = options.BY_NAME[name]
        assert param.option in option.opts
        assert option.help == param.help
        if param.choices:
            assert isinstance(option.type, click.Choice)
            assert tuple(option.type.choices) == tuple(c for c in param.choices if c is not None)
        if param.kind not in ("multiple", "flag"):
            assert option.default == param.default
    wanted = {p.name for p in PARAMS if p.group in COMMAND_PARAMS[command_name]
              or p.name in COMMAND_PARAMS[command_name]}
    assert set(clicked) == wanted


def test_the_option_check_sees_an_option_outside_the_registry():
    """The test above fails for a click option declared beside the registry."""
    command = cli.commands["compare"]
    extra = click.Option(["--colour"], help="Not in the registry.")
    command.params.append(extra)
    try:
        with pytest.raises(AssertionError, match=r"options not in options.PARAMS: \['colour'\]"):
            test_every_click_option_is_a_registry_option_with_its_default_and_choices("compare")
    finally:
        command.params.remove(extra)


@pytest.mark.parametrize("given, message", [
    ({"test": "wilcoxon"}, "test 'wilcoxon' is not one of: t, randomization, bootstrap, none"),
    ({"correction": "fdr"}, "correction 'fdr' is not one of: holm, bonferroni, none"),
    ({"n_resamples": 0}, "n_resamples 0 is not an integer >= 1"),
    ({"n_resamples": None}, "n_resamples None is not an integer >= 1"),
    ({"min_users": True}, "min_users True is not an integer >= 1"),
    ({"seed": -1}, "seed -1 is not an integer >= 0"),
    ({"alpha": 1}, "alpha 1 is not a number between 0 and 1"),
    ({"ci": "0.9"}, "ci '0.9' is not a number between 0 and 1"),
    ({"segments": "listeners.csv"}, "--segments FILE and --by COLUMN go together: give both"),
    ({"by": "user-activity", "train": "t.csv", "groups": 1}, "groups 1 is not an integer >= 2"),
    ({"by": "user-activity", "train": "t.csv", "activity_cuts": [5, 5]},
     "--activity-cuts 5,5: give increasing whole numbers >= 2, each the first count of a group, "
     "as in 5,20,100 (groups 1-4, 5-19, 20-99, 100+)"),
])
def test_compare_checks_its_options_by_the_registry(given, message):
    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.compare(RELS, {"a": RECS, "b": RECS}, **given)
    assert str(raised.value) == message and raised.value.usage


def test_compare_keywords_have_the_registry_defaults():
    signature = inspect.signature(compare_runs)
    for name in options.group("compare") + ("segments", "by", "plot"):
        assert signature.parameters[name].default == options.BY_NAME[name].default, name


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
    assert statements.sql_args(chosen, "scores", "scores") == (
        "ks := [5, NULL]::BIGINT[], ties := 'average', judged_only := true, "
        "idcg_cutoff := 'list'")
    assert statements.sql_args(chosen, "judgments") == (
        "gain := 'binary', gain_map := MAP([1.0]::DOUBLE[], [3.0]::DOUBLE[]), "
        "min_relevance := NULL, unique_judgments := true")
    assert statements.sql_args(chosen, "scores", "lists").count("ties := 'trec'") == 1  # lists have no ties
    assert statements.sql_args(chosen, "evaluated") == "missing := 'skip', empty := 'skip'"


def test_a_new_option_is_one_entry(monkeypatch):
    """A Param added to the registry is a CLI flag, a keyword of evaluate() and an argument of
    the SQL macros, with nothing else to change."""
    extra = options.Param("min_rel_demo", "metric", default="no", choices=("no", "yes"),
                          sql="evaluated", help="A demonstration option.")
    level = options.Param("level_demo", "metric", kind="float", check=float, sql="evaluated",
                          help="A number.")
    monkeypatch.setattr(options, "PARAMS", options.PARAMS + (extra, level))
    from ndcg_duck.cli import eval as cli_module

    @click.command()
    @cli_module.registry_options("metric")
    def probe(**given):
        click.echo(statements.sql_args(Options(**given), "evaluated"))

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
     f"with recs_user_col= (or user_col= for both files)"),
    ({"rels_user_col": "who"},
     f"relevance file {RELS}: no column 'who', named by rels_user_col= (columns found: "
     f"user_id, item_id, relevance); check rels_user_col="),
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
