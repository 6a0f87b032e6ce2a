"""Options that `eval` and `compare` share for segments and plots (click decorators)."""

from __future__ import annotations

import click

# The options eval takes beyond the registry (options.PARAMS): they break the results down and
# draw them, after the evaluation, and are compare's too.
EVAL_EXTRAS = ("segments", "by", "plot")

SEGMENTS = click.option("--segments", metavar="FILE",
                        help="A table of users and their segment (Parquet, CSV or JSON): every "
                             "result is also given per segment. Users it does not list are "
                             "'(unknown)'.")
BY = click.option("--by", metavar="COLUMN", help="The segment column of --segments.")

plot_option = click.option("--plot", metavar="OUT.png",
                           help="Draw a PNG picture of the per-user values (needs the compare "
                                "extra: pip install 'ndcg-duck[compare]').")


def segment_options(fn):
    """--segments FILE and --by COLUMN."""
    return SEGMENTS(BY(fn))
