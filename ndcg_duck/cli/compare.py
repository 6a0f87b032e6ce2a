"""`ndcg-duck compare`: runs scored on the same users, their differences, intervals and tests.

Every option comes from the registry (options.PARAMS), in the order `registry_options` gives."""

from __future__ import annotations

import sys

import click

from .. import outcome
from ..comparison import report as compare_report, stats
from ..evaluation import progress
from ..report import output, segments as segmenting
from ..report.clashes import Input, Output, refuse_clashes
from . import common
from .common import cli, registry_options, user_errors
from .extras import beside_inputs, refuse_tables
from ..errors import InputError


def _run_pair(text: str) -> tuple:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise InputError(f"--run {text!r}: give NAME=PATH, as in --run base=recs.parquet",
                         usage=True)
    return name.strip(), path.strip()


@cli.command(name="compare")
@click.argument("relevance", required=False)
@registry_options("runs", "baseline", "all_pairs", "test", "correction", "n_resamples", "seed",
                  "alpha", "ci", "segments", "by", "groups", "activity_cuts", "min_users",
                  "metric", "columns", "beyond", "formats", "engine", "spark",
                  "quiet", "compare_per_user", "plot", "compare_format")
@user_errors
def compare_command(relevance, runs, compare_per_user, plot, compare_format, quiet, **settings):
    """Compare runs on the same users: differences, intervals and paired tests.

    RELEVANCE is the judgments file, as for eval (and as there, it may be left out when only
    beyond-accuracy metrics are asked for). Every run is scored on the same users; the first
    run (or --baseline) is compared with each other run.

    Example:

    \b
        ndcg-duck compare examples/relevance.csv --run old=examples/recs.parquet \\
            --run new=examples/recs_new.parquet -k 5,10 \\
            --segments examples/listeners.csv --by activity --plot compare.png
        ndcg-duck compare qrels.txt --run bm25=bm25.run --run dense=dense.run \\
            --rels-format trec --recs-format trec -k 10 --test randomization --format csv
    """
    per_user, fmt = compare_per_user, compare_format
    pairs = [_run_pair(text) for text in runs]
    refuse_tables([("RELEVANCE", relevance), *((f"--run {name}", path) for name, path in pairs),
                   ("--segments", settings["segments"]), ("--train", settings["train"]),
                   ("--items", settings["items"]), ("--per-user", per_user), ("--plot", plot)],
                  settings["engine"])
    if settings["engine"] == "spark":
        from ..spark.files import refuse_s3

        if relevance is None:
            raise InputError(outcome.SPARK_NEEDS_JUDGMENTS, usage=True)

        refuse_s3([("RELEVANCE", relevance), *((f"--run {name}", path) for name, path in pairs),
                   ("--segments", settings["segments"]), ("--train", settings["train"]),
                   ("--items", settings["items"]), ("--per-user", per_user), ("--plot", plot)],
                  settings["s3_endpoint"])
    refuse_clashes(
        [Output("--per-user", per_user, "the per-user table"), Output("--plot", plot, "the plot")],
        [Input("relevance", "RELEVANCE", relevance),
         *(Input("recommendations", f"--run {name}", path) for name, path in pairs),
         *beside_inputs(settings["segments"], settings)])
    stats.require("scipy", "compare")
    # --by user-activity: a segment table made from --train (report/segments.py Cohorts)
    settings["segments"] = segmenting.source(settings["segments"], settings["by"],
                                             settings["train"], settings.pop("groups"),
                                             settings.pop("activity_cuts"))
    if fmt in ("markdown", "latex") and (settings["segments"] or settings["all_pairs"]):
        said = (segmenting.option(settings["segments"], settings["by"]) if settings["segments"]
                else "--all-pairs")
        raise InputError(f"--format {fmt} prints a row per run against one baseline, over "
                         f"every user: use --format table, json or csv with {said}",
                         usage=True)
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
