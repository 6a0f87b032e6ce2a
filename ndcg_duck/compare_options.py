"""Options that `eval` and `compare` share for segments and plots (click decorators)."""

from __future__ import annotations

import click

segment_options = [
    click.option("--segments", metavar="FILE",
                 help="A table of users and their segment (Parquet, CSV or JSON): every result "
                      "is also given per segment. Users it does not list are '(unknown)'."),
    click.option("--by", metavar="COLUMN", help="The segment column of --segments."),
]

plot_option = click.option("--plot", metavar="OUT.png",
                           help="Draw a PNG picture of the per-user values (needs the compare "
                                "extra: pip install 'ndcg-duck[compare]').")


def apply(decorators):
    def wrap(fn):
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn
    return wrap
