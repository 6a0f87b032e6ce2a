"""--format markdown and --format latex: tables for papers from eval and compare, their exact
text worked by hand (the means below), the daggers where scipy's paired t-test says so."""

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from ndcg_duck.cli import cli

# eight users, relevant items a and b each; base ranks a then x for everyone (precision@1 = 1,
# precision@2 = 1/2); new ranks a then b for u1..u7 (1) and a then x for u8 (1/2)
USERS = [f"u{i}" for i in range(1, 9)]
RELS = "user_id,item_id,relevance\n" + "".join(f"{u},{i},1\n" for u in USERS for i in "ab")
BASE = "user_id,item_id,rank\n" + "".join(f"{u},a,1\n{u},x,2\n" for u in USERS)
NEW = "user_id,item_id,rank\n" + "".join(f"{u},a,1\n{u},{'x' if u == 'u8' else 'b'},2\n"
                                         for u in USERS)
# by hand: new's precision@2 is (7 + 1/2) / 8 = 0.9375; its differences from base are 1/2 (seven
# users) and 0; precision@1's are all 0: no test, so the family is one test
P2_BASE, P2_NEW = [0.5] * 8, [1.0] * 7 + [0.5]


@pytest.fixture
def files(tmp_path):
    for name, text in (("rels.csv", RELS), ("base.csv", BASE), ("new.csv", NEW)):
        (tmp_path / name).write_text(text)
    return tmp_path


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def compare(files, *args):
    return invoke("compare", files / "rels.csv", "--run", f"base={files / 'base.csv'}", "--run",
                  f"new={files / 'new.csv'}", "-m", "precision", "-k", "1,2", *args)


def test_the_dagger_is_where_scipys_t_test_finds_a_difference():
    p = scipy.stats.ttest_rel(P2_NEW, P2_BASE).pvalue
    assert p < 0.05  # the one test made (precision@1's differences are all 0): Holm leaves it


def test_compare_markdown(files):
    result = compare(files, "--format", "markdown")
    assert (result.exit_code, result.output) == (0, (
        "| run | precision@1 | precision@2 |\n"
        "|:---|---:|---:|\n"
        "| base | **1.0000** | 0.5000 |\n"
        "| new | **1.0000** | **0.9375**† |\n"
        "\n"
        "Table: Means over the 8 users every run scores. Bold: the best of each accuracy metric. "
        "†: differs from base (the baseline) by a paired t-test, p < 0.05 after no correction "
        "over 1 test.\n"))


def test_compare_latex(files):
    # the randomization test enumerates the 2^7 signs of the 7 nonzero differences: 2 of them
    # (all +, all -) reach |sum| = 3.5, p = 2/128 = 0.0156: below 0.05, not below 0.01
    result = compare(files, "--format", "latex", "--test", "randomization", "--alpha", "0.01")
    assert "\\textbf{0.9375} \\\\\n" in result.output and "dagger$ \\\\" not in result.output
    result = compare(files, "--format", "latex", "--test", "randomization")
    assert (result.exit_code, result.output) == (0, (
        "\\begin{table}\n"
        "  \\centering\n"
        "  \\caption{Means over the 8 users every run scores. Bold: the best of each accuracy "
        "metric. $^\\dagger$: differs from base (the baseline) by a paired randomization test "
        "(10000 resamples, seed 42), p < 0.05 after no correction over 1 test.}\n"
        "  \\begin{tabular}{lrr}\n"
        "    \\toprule\n"
        "    run & precision@1 & precision@2 \\\\\n"
        "    \\midrule\n"
        "    base & \\textbf{1.0000} & 0.5000 \\\\\n"
        "    new & \\textbf{1.0000} & \\textbf{0.9375}$^\\dagger$ \\\\\n"
        "    \\bottomrule\n"
        "  \\end{tabular}\n"
        "\\end{table}\n"))


def test_eval_markdown_and_latex_with_intervals(files):
    result = invoke("eval", files / "new.csv", files / "rels.csv", "-m", "precision,num_rel",
                    "-k", "2", "--format", "markdown")
    assert (result.exit_code, result.output) == (0, (
        "| run | precision@2 | num_rel |\n"
        "|:---|---:|---:|\n"
        "| new | 0.9375 | 16 |\n"
        "\n"
        "Table: Means over 8 users.\n"))
    result = invoke("eval", files / "new.csv", files / "rels.csv", "-m", "precision", "-k", "2",
                    "--format", "latex", "--ci", "0.95")
    # 0.9375 -+ t(0.975, 7) * sqrt((7 * 0.0625^2 + 0.4375^2) / 7 / 8) = 0.9375 -+ 2.3646 * 0.0625:
    # [0.7897, 1.0853], clipped to [0, 1]
    low, high = scipy.stats.t.interval(0.95, 7, loc=0.9375, scale=scipy.stats.sem(P2_NEW))
    assert (round(low, 4), round(high, 4)) == (0.7897, 1.0853)
    assert (result.exit_code, result.output) == (0, (
        "\\begin{table}\n"
        "  \\centering\n"
        "  \\caption{Means over 8 users. 95\\% intervals: Student's t over users; clipped to the "
        "metric's range [0, 1]: precision@2.}\n"
        "  \\begin{tabular}{lr}\n"
        "    \\toprule\n"
        "    run & precision@2 \\\\\n"
        "    \\midrule\n"
        "    new & 0.9375 [0.7897, 1.0000] \\\\\n"
        "    \\bottomrule\n"
        "  \\end{tabular}\n"
        "\\end{table}\n"))


@pytest.mark.parametrize("args, message", [
    (["--all-pairs"], "Error: --format latex prints a row per run against one baseline, over "
                      "every user: use --format table, json or csv with --all-pairs\n"),
    (["--segments", "{d}/groups.csv", "--by", "group"],
     "Error: --format latex prints a row per run against one baseline, over every user: use "
     "--format table, json or csv with --segments\n"),
])
def test_compare_tables_refuse_what_they_cannot_show(files, args, message):
    (files / "groups.csv").write_text("user_id,group\nu1,g\n")
    result = compare(files, "--format", "latex", *[a.format(d=files) for a in args])
    assert result.exit_code == 2
    assert result.output.endswith(message)
