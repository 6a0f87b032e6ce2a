"""The ndcg-duck command line: `ndcg-duck eval` and `ndcg-duck sql`.

Every option of `eval` comes from the registry in options.py (PARAMS): its name, default,
allowed values and help are written there once. `eval` has one path for every engine: --engine
picks the result object (report/result.py's DuckDBResult, or ndcg_duck.spark.SparkResult) and
the command asks it for the per-user table, the plot, the segments and the summary.
"""

from __future__ import annotations

import click

from .. import means, outcome
from ..errors import InputError
from ..evaluation import intervals
from ..report import output, segments as segmenting, tables, trec
from ..report.popularity import WHAT
from ..report.segments import Popularity
from ..report.clashes import Input, Output, refuse_clashes
from ..report.result import DuckDBResult
from . import common
from .common import EXIT_CODES, cli, registry_options, user_errors
from .extras import beside_inputs, check_eval_extras, refuse_tables, with_segments
from ..sqlfiles import script


@cli.command(name="eval", epilog=EXIT_CODES)
@click.argument("recs")
@click.argument("relevance", required=False)
@registry_options("metric", "columns", "beyond", "formats", "engine", "spark", "output", "extras",
                  "intervals", "n_resamples", "seed")
@user_errors
def eval_command(recs, relevance, per_user, per_item, format, quiet, segments, by, groups,
                 activity_cuts, plot, engine, spark_master, spark_conf, eval_ci, ci_method,
                 n_resamples, seed, **settings):
    """Evaluate the rankings in RECS against the judgments in RELEVANCE.

    RELEVANCE may be left out when only beyond-accuracy metrics are asked for (coverage, gini,
    entropy, novelty, popularity, tail, ild, coverage_count, personalization: -m, with --train
    or --items): they read the lists alone, of every user of RECS.

    RECS holds one row per user with a list of item ids in rank order, or one row per
    (user, item) with a rank or a score. RELEVANCE holds (user, item, relevance) rows, or
    lists of relevant items. Parquet, CSV and JSON files, globs, directories of part files
    (read as one dataset), or TREC runs and qrels (by content, or --recs-format trec,
    --rels-format trec). With --engine spark, also tables of the session's catalog:
    table:db.recs.

    Which columns are used: a column named with an option must exist. RECS: a list column
    (--items-col, default items) first; otherwise long rows (--item-col) ordered by the column
    named with --rank-col or --score-col, or else by whichever of `rank` and `score` exists
    (both, unnamed, is an error that asks which). RELEVANCE: long rows with a relevance column
    (--relevance-col); a file of only the user and item columns counts every row as
    relevance 1; otherwise lists of relevant items (--items-col, binary).

    Example:

    \b
        ndcg-duck eval examples/recs.parquet examples/relevance.csv -k 5,10,20
        ndcg-duck eval runs/model_a/ qrels.csv -k 10,all --format json
        ndcg-duck eval run.txt qrels.txt -k trec --missing skip
        ndcg-duck eval recs.csv rels.csv --score-col score --per-user - > users.csv
        ndcg-duck eval recs.csv rels.csv -m ndcg,recall --ci 0.95 --format latex
        ndcg-duck eval logs/recs/ logs/rels/ --engine spark --per-user per_user/
        ndcg-duck eval recs.parquet -m coverage@10,novelty@10 --train train.parquet
    """
    refuse_tables([("RECS", recs), ("RELEVANCE", relevance), ("--segments", segments),
                   ("--train", settings["train"]), ("--items", settings["items"]),
                   ("--per-user", per_user), ("--per-item", per_item), ("--plot", plot)], engine)
    if engine == "spark":
        from ..spark.files import refuse_s3

        if relevance is None:
            raise InputError(outcome.SPARK_NEEDS_JUDGMENTS, usage=True)

        refuse_s3([("RECS", recs), ("RELEVANCE", relevance), ("--segments", segments),
                   ("--train", settings["train"]), ("--items", settings["items"]),
                   ("--per-user", per_user), ("--per-item", per_item), ("--plot", plot)],
                  settings["s3_endpoint"])
    refuse_clashes(
        [Output("--per-user", per_user, "the per-user table"),
         Output("--per-item", per_item, "the per-item view"), Output("--plot", plot, "the plot")],
        [Input("recommendations", "RECS", recs), Input("relevance", "RELEVANCE", relevance),
         *beside_inputs(segments, settings)])
    # --by user-activity: a segment table made from --train (report/segments.py Cohorts)
    segments = segmenting.source(segments, by, settings["train"], groups, activity_cuts)
    if format == "trec" and (segments is not None or plot):
        raise InputError(f"--format trec prints trec_eval's lines, which have no segments or "
                         f"plot: use --format table, json or csv with "
                         f"{segmenting.option(segments, by)} and --plot", usage=True)
    if format in tables.FORMATS and segments is not None:
        raise InputError(f"--format {format} prints one row for the run: use --format table, "
                         f"json or csv with {segmenting.option(segments, by)}", usage=True)
    spec = _interval_spec(eval_ci, ci_method, n_resamples, seed, format, engine)
    # --format trec with --per-user -: trec_eval -q's lines, then the `all` ones, all on stdout
    trec_lines = format == "trec" and per_user == "-"
    engine_result, on_spark = DuckDBResult, {}  # --engine picks the result object, no more
    if engine == "spark":
        from ..spark import SparkResult as engine_result
        on_spark = dict(master=spark_master, conf_pairs=spark_conf, output=per_user,
                        popularity=segments if isinstance(segments, Popularity) else None)
    if per_user and per_user != "-":
        engine_result.check_output(per_user)
    if per_item is not None:
        engine_result.check_per_item(per_item)
    check_eval_extras(segments, by, plot)
    rows = None
    keep = bool(per_user or segments or plot or spec)  # the per-user table is needed
    with engine_result(recs, relevance, settings, per_user=keep, per_item=per_item is not None,
                       by_segment=segments is not None,
                       show_progress=not quiet and common.stderr_is_terminal(),
                       **on_spark) as result:
        if per_user:
            if trec_lines:
                result.write_trec_lines()
            else:
                result.write_per_user(per_user, format)
        if per_item is not None:
            result.write_per_item(per_item)
        if plot:
            result.plot(plot)
        ci = None
        if spec is not None:
            values, said = result.intervals(spec)
        if segments is not None:
            rows, more = result.segments(segments, by, spec)
            if spec is not None:
                said = intervals.merge(said, more)
        if spec is not None:
            ci = {"values": values, "info": spec.info(said), "line": spec.describe(said)}
        summary, notes = result.summary(), result.notes()
    for note in notes:
        click.echo(f"Warning: {note}", err=True)
    shown = _summary(summary, recs, format, settings, ci, judged=relevance is not None)
    if rows is not None:
        metrics = [name for name in rows[0] if name not in ("segment", "users", "intervals")]
        label = f"{by} ({WHAT})" if isinstance(segments, Popularity) else by
        shown = with_segments(shown, summary, rows, metrics, label, format, ci)
    click.echo(shown, nl=False, err=per_user == "-" and not trec_lines)


def _interval_spec(level, method, n_resamples, seed, fmt, engine):
    """--ci's interval (evaluation/intervals.py Spec), or None without --ci; checked before any
    work."""
    if level is None:
        if method is not None:
            raise InputError("--ci-method needs --ci LEVEL (e.g. --ci 0.95)", usage=True)
        return None
    if fmt == "trec":
        raise InputError("--format trec prints trec_eval's lines, which have no intervals: use "
                         "--format table, json, csv, markdown or latex with --ci", usage=True)
    if engine == "spark" and method == "bootstrap":
        raise InputError("--ci-method bootstrap resamples every user's value in one process, "
                         "which --engine spark does not gather: use --ci-method t (from exact "
                         "sums on the workers), or --engine duckdb", usage=True)
    means.require("scipy", "--ci")
    return intervals.Spec(level, method or "t", n_resamples, seed)


def _summary(summary: dict, recs, fmt: str, settings: dict, ci=None, judged: bool = True
             ) -> str:
    """The summary as --format asks: trec_eval's `all` lines for trec (report/trec.py), a table
    for a paper for markdown and latex (report/tables.py). judged: RELEVANCE was given."""
    if fmt == "trec":
        return trec.summary_lines(summary, settings, trec.run_id(recs, settings["recs_format"]))
    if fmt in tables.FORMATS:
        return tables.eval_table(summary, tables.run_name(recs), fmt, ci)
    return output.format_summary(summary, fmt, settings["missing"], settings["empty"], ci,
                                 judged)


@cli.command(name="sql")
@click.option("--persistent", is_flag=True,
              help="CREATE OR REPLACE MACRO instead of TEMP MACRO: run the script once in a "
                   "DuckDB database file and its macros stay there.")
def sql_command(persistent):
    """Print the macro SQL, to run in another DuckDB session or embed in a pipeline.

    The script is self-contained (sql/ndcg.sql is the same text), so it runs from any
    directory. Without --persistent the macros are TEMP: they last for the session.

    Example:

    \b
        ndcg-duck sql > ndcg.sql
        duckdb -c ".read ndcg.sql" -c "SELECT * FROM ndcg_mean('recs', 'rels')"
        ndcg-duck sql --persistent | duckdb my.duckdb     # once; then in any session:
        duckdb my.duckdb -c "SELECT * FROM ndcg_mean('recs', 'rels')"
    """
    click.echo(script(persistent=persistent), nl=False)
