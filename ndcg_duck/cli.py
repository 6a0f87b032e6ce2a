"""The ndcg-duck command line: `ndcg-duck eval` and `ndcg-duck sql`."""

from __future__ import annotations

import functools
import sys

import click
import duckdb

from . import inputs, options, output
from .errors import InputError
from .evaluate import evaluate
from .progress import progress
from .sqlfiles import script


def _cutoffs(ctx, param, value):
    try:
        return options.parse_cutoffs(value or ("10",))
    except InputError as exc:
        raise click.BadParameter(str(exc)) from None


def _gain_map(ctx, param, value):
    try:
        return options.parse_gain_map(value)
    except InputError as exc:
        raise click.BadParameter(str(exc)) from None


def _apply(decorators):
    def wrap(fn):
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn
    return wrap


column_options = _apply([
    click.option("--user-col", default="user_id", show_default=True, help="User id column."),
    click.option("--item-col", default="item_id", show_default=True,
                 help="Item id column (long layouts)."),
    click.option("--items-col", default="items", show_default=True,
                 help="List-of-item-ids column (nested layout)."),
    click.option("--rank-col", default="rank", show_default=True,
                 help="Rank column (long recommendations)."),
    click.option("--score-col", default="score", show_default=True,
                 help="Score column (long recommendations, ranked by score descending)."),
    click.option("--relevance-col", default="relevance", show_default=True,
                 help="Relevance column (long judgments)."),
])

format_options = _apply([
    click.option("--recs-format", type=click.Choice(inputs.FORMATS),
                 help="Format of RECS when its extension does not say; trec: a TREC run."),
    click.option("--rels-format", type=click.Choice(inputs.FORMATS),
                 help="Format of RELEVANCE when its extension does not say; trec: TREC qrels."),
])

metric_options = _apply([
    click.option("-k", "k", multiple=True, callback=_cutoffs, metavar="K[,K...]",
                 help="Cutoff: an integer >= 1, 'all' (no cutoff) or 'trec' (trec_eval's "
                      "5,10,15,20,30,100,200,500,1000). Repeat or use commas. Default 10."),
    click.option("--gain", type=click.Choice(options.GAINS), default="linear", show_default=True,
                 help="Gain of a relevance value: rel, 2^rel - 1, or 1 if rel > 0."),
    click.option("--gain-map", callback=_gain_map, metavar="LEVEL=GAIN[,...]",
                 help="Gains for listed relevance levels, e.g. 1=3,2=9,4=4.5 (trec_eval's "
                      "ndcg.1=3,...); other levels gain by --gain."),
    click.option("--ties", type=click.Choice(options.TIES), default="trec", show_default=True,
                 help="Equal scores: order by item id descending (trec_eval), or give each "
                      "tied item the mean discount of the tie (scikit-learn). Scores only."),
    click.option("--judged-only", is_flag=True,
                 help="Take unjudged items (no judgment, or a negative one) out of each "
                      "ranking before scoring (trec_eval -J)."),
    click.option("--missing", type=click.Choice(options.MISSING), default="zero",
                 show_default=True,
                 help="Users in RELEVANCE without recommendations: score 0, or leave out."),
    click.option("--empty", type=click.Choice(options.EMPTY), default="zero", show_default=True,
                 help="Users whose ideal DCG is 0: score 0, or leave out."),
    click.option("--idcg-cutoff", type=click.Choice(options.IDCG_CUTOFFS), default="k",
                 show_default=True,
                 help="Cut the ideal list at k, or at min(k, length of the user's ranking)."),
    click.option("--max-depth", type=click.IntRange(min=1), default=None,
                 help="Only the first N items of each ranking count."),
    click.option("--unique-judgments", is_flag=True,
                 help="The relevance file has at most one row per (user, item): skip the check "
                      "for repeated judgments (faster on large files; a repeat would count twice)."),
    click.option("--duplicates", type=click.Choice(options.DUPLICATES), default="error",
                 show_default=True,
                 help="An item twice in one ranking: stop with an error, or keep its first "
                      "occurrence (later items move up)."),
])


engine_options = _apply([
    click.option("--threads", type=click.IntRange(min=1), help="DuckDB worker threads."),
    click.option("--memory-limit", help="Memory DuckDB may use before it spills to disk, "
                                         "e.g. 4GB."),
    click.option("--temp-dir", type=click.Path(file_okay=False),
                 help="Where DuckDB spills what does not fit in --memory-limit."),
    click.option("--batch-users", type=click.IntRange(min=1), metavar="N",
                 help="Evaluate at most N users per query, by ranges of user ids (default: as "
                      "many as the memory limit allows)."),
    click.option("--quiet", is_flag=True,
                 help="No progress on stderr (shown only on a terminal, after 2 seconds)."),
])


spark_options = _apply([
    click.option("--engine", type=click.Choice(["duckdb", "spark"]), default="duckdb",
                 show_default=True,
                 help="Where to evaluate: DuckDB in this process, or Apache Spark (each worker "
                      "runs the same DuckDB macros on its users; needs ndcg-duck[spark] and Java "
                      "17+)."),
    click.option("--spark-master", default="local[*]", show_default=True, metavar="URL",
                 help="With --engine spark: the Spark master (local[N], spark://HOST:PORT, yarn, "
                      "k8s://...)."),
    click.option("--spark-conf", multiple=True, metavar="KEY=VALUE",
                 help="With --engine spark: a Spark setting, e.g. spark.executor.memory=8g. "
                      "Repeat for more."),
])


def _user_errors(fn):
    """Turn InputError into click's usage (exit 2) or data (exit 1) errors."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            if exc.usage:
                raise click.UsageError(str(exc)) from None
            raise click.ClickException(str(exc)) from None
    return wrapper


@click.group()
@click.version_option(package_name="ndcg-duck")
def cli():
    """NDCG, DCG and ideal DCG per user and on average, computed in DuckDB."""


@cli.command(name="eval")
@click.argument("recs")
@click.argument("relevance")
@metric_options
@column_options
@format_options
@engine_options
@spark_options
@click.option("--per-user", "per_user", metavar="OUT",
              help="Write one row per evaluated user to OUT (.parquet, .csv, .json, .jsonl). "
                   "With --engine spark, OUT/ (ending in /) or a URI is a directory of Parquet "
                   "part files that Spark writes.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True, help="How to print the summary.")
@_user_errors
def eval_command(recs, relevance, per_user, fmt, quiet, engine, spark_master, spark_conf,
                 **settings):
    """Evaluate the rankings in RECS against the judgments in RELEVANCE.

    RECS holds one row per user with a list of item ids in rank order, or one row per
    (user, item) with a rank or a score. RELEVANCE holds (user, item, relevance) rows, or
    lists of relevant items. Parquet, CSV and JSON files, or TREC runs and qrels
    (--recs-format trec, --rels-format trec); globs allowed.
    """
    if engine == "spark":
        from .spark import run_cli
        show = not quiet and sys.stderr.isatty()
        summary = run_cli(recs, relevance, per_user, spark_master, spark_conf, show, settings)
        click.echo(output.format_summary(summary, fmt, settings["missing"]), nl=False)
        return
    if per_user:
        output.check_output_path(per_user)
    con = duckdb.connect()
    with progress(con, enabled=not quiet and sys.stderr.isatty()):
        result = evaluate(recs, relevance, per_user=bool(per_user), con=con, **settings)
    if per_user:
        output.write_table(result.per_user, per_user)
    click.echo(output.format_summary(result.summary, fmt, settings["missing"]), nl=False)


@cli.command(name="sql")
def sql_command():
    """Print the macro SQL, to run in another DuckDB session or embed in a pipeline."""
    click.echo(script(), nl=False)


def main():
    cli()
