"""`ndcg-duck compare`: runs scored on the same users, their differences, intervals and tests."""

from __future__ import annotations

import sys

import click

from .. import options
from ..comparison import report as compare_report, stats
from ..evaluation import progress
from ..report import output
from ..report.clashes import Input, Output, refuse_clashes
from . import common
from .common import (click_option, cli, plot_option, registry_options, segment_options,
                     user_errors)
from .extras import beside_inputs
from ..errors import InputError


def _run_pair(text: str) -> tuple:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise InputError(f"--run {text!r}: give NAME=PATH, as in --run base=recs.parquet",
                         usage=True)
    return name.strip(), path.strip()


@cli.command(name="compare")
@click.argument("relevance")
@click.option("--run", "runs", multiple=True, metavar="NAME=PATH",
              help="A run to compare: its name and its recommendations file (any layout eval "
                   "reads). Repeat: two or more; the first is the baseline.")
@click.option("--baseline", metavar="NAME", help="The run the others are compared with "
                                                 "(default: the first).")
@click.option("--all-pairs", is_flag=True, help="Compare every pair of runs instead.")
@click.option("--test", type=click.Choice(stats.TESTS), default="t", show_default=True,
              help="Paired test: t-test, randomization (sign flips), bootstrap, or none. With "
                   "--engine spark the bootstrap is a Poisson bootstrap and the randomization "
                   "draws per stratum of users: reproducible on any partitioning, the same "
                   "within Monte Carlo error, not draw for draw (README).")
@click.option("--correction", type=click.Choice(stats.CORRECTIONS),
              help="Correction of p-values over every test made (runs x metrics x segments). "
                   "Default: holm when there is more than one test.")
@click.option("--n-resamples", type=click.IntRange(min=1), default=10000, show_default=True,
              help="Resamples of the randomization and bootstrap tests.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="Seed of the randomization and bootstrap tests.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Significance level (marked with *).")
@click.option("--ci", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Level of the confidence intervals.")
@segment_options
@click.option("--min-users", type=click.IntRange(min=1), default=30, show_default=True,
              help="Segments with fewer users get means but no test.")
@registry_options("metric", "beyond", "columns", "formats", "engine", "spark")
@click_option(options.BY_NAME["quiet"])
@click.option("--per-user", "per_user", metavar="OUT",
              help="Write each user's values per run and the differences to OUT (.parquet, "
                   ".csv, .json, .jsonl). With --engine spark, OUT/ (ending in /) or a URI is a "
                   "directory of Parquet part files that Spark writes.")
@plot_option
@click.option("--format", "fmt", type=click.Choice(compare_report.FORMATS), default="table",
              show_default=True, help="table, or tidy rows (one per metric, cutoff, segment "
                                      "and run) as json, csv or parquet (to a redirected stdout).")
@user_errors
def compare_command(relevance, runs, per_user, plot, fmt, quiet, **settings):
    """Compare runs on the same users: differences, intervals and paired tests.

    RELEVANCE is the judgments file, as for eval. Every run is scored on the same users; the
    first run (or --baseline) is compared with each other run.

    Example:

    \b
        ndcg-duck compare examples/relevance.csv --run old=examples/recs.parquet \\
            --run new=examples/recs_new.parquet -k 5,10 \\
            --segments examples/listeners.csv --by activity --plot compare.png
        ndcg-duck compare qrels.txt --run bm25=bm25.run --run dense=dense.run \\
            --rels-format trec --recs-format trec -k 10 --test randomization --format csv
    """
    pairs = [_run_pair(text) for text in runs]
    refuse_clashes(
        [Output("--per-user", per_user, "the per-user table"), Output("--plot", plot, "the plot")],
        [Input("relevance", "RELEVANCE", relevance),
         *(Input("recommendations", f"--run {name}", path) for name, path in pairs),
         *beside_inputs(settings["segments"], settings)])
    stats.require("scipy", "compare")
    engine = settings.pop("engine")
    master, conf = settings.pop("spark_master"), settings.pop("spark_conf")
    if fmt == "parquet" and sys.stdout.isatty():
        raise InputError("--format parquet writes binary rows: redirect stdout to a file, as in "
                         "> results.parquet", usage=True)
    if per_user and engine == "spark":
        from ..spark import check_output

        check_output(per_user)  # a file, or a directory of part files (OUT/) Spark writes
    elif per_user:
        output.check_output_path(per_user)
    from ..comparison.compare import compare_runs

    if engine == "spark":
        from ..spark.compare import COMPARE_OPTIONS, run_cli

        own = {name: settings.pop(name) for name in COMPARE_OPTIONS}
        segments, by = settings.pop("segments"), settings.pop("by")
        result, notes = run_cli(relevance, pairs, master, conf,
                                not quiet and common.stderr_is_terminal(), settings, own,
                                segments, by, per_user, plot)
    else:
        with progress.shown(enabled=not quiet and common.stderr_is_terminal()):
            result, notes = compare_runs(relevance, pairs,
                                         per_user=bool(per_user), plot=plot, **settings)
    for note in notes:
        click.echo(f"Warning: {note}", err=True)
    if per_user and result.per_user is not None:  # (Spark has written it)
        output.write_table(result.per_user, per_user)
    shown = compare_report.render(result.rows, result.info, fmt)
    if isinstance(shown, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(shown)
        sys.stdout.buffer.flush()
    else:
        click.echo(shown, nl=False)
