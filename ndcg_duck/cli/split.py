"""`ndcg-duck split`: interactions into a train and a test file (splitting/protocols.py), by the
registry's options of group 'split' (options.PARAMS)."""

from __future__ import annotations

import click

from ..errors import InputError
from ..report.clashes import Input, Output, refuse_clashes
from ..splitting.protocols import write
from .common import cli, registry_options, user_errors

EXIT_CODES = """Exit status: 0 when both files were written, 1 for bad input data (the message names
the file, column, user and value), 2 for a bad command line or option value, 130 when stopped
by Ctrl-C (SIGINT), 143 by SIGTERM."""


@cli.command(name="split", epilog=EXIT_CODES)
@click.argument("interactions")
@registry_options("split", "user_col", "item_col", "relevance_col", "threads", "memory_limit",
                  "temp_dir", "s3_endpoint")
@user_errors
def split_command(interactions, out_train, out_test, s3_endpoint, **given):
    """Split the INTERACTIONS (rows of user, item and, to split by time, a timestamp; every
    other column is carried) into a train and a test file.

    A per-user holdout (--test-share or --test-last) orders each user's interactions by time
    (ties by item id, then by the whole row) or at random (--by random, --seed: the same split
    on any number of threads) and sends the last ones to test; --time-cut splits all users at
    one time. Users with fewer than --min-interactions stop the run unless --short-users says
    what to do with them. Parquet, CSV and JSON, read as eval reads them; each output is
    written under a temporary name and renamed when complete, its format by its extension.

    Example:

    \b
        ndcg-duck split examples/interactions.csv --test-share 0.2 \\
            --out-train train.parquet --out-test test.parquet
        ndcg-duck split ratings.parquet --test-last 1 --out-train train.csv --out-test test.csv
        ndcg-duck split ratings.parquet --test-share 0.2 --by random --seed 7 \\
            --threshold 4 --relevance-col rating --out-train t.parquet --out-test r.parquet
        ndcg-duck split logs/ --time-cut 2024-06-01 --time-col ts \\
            --out-train train.parquet --out-test test.parquet
    """
    if out_train is None or out_test is None:
        raise InputError("give --out-train FILE and --out-test FILE: where to write the two "
                         "parts", usage=True)
    if out_train == out_test:
        raise InputError(f"--out-train and --out-test are both {out_train}: give two files",
                         usage=True)
    refuse_clashes([Output("--out-train", out_train, "the train rows"),
                    Output("--out-test", out_test, "the test rows")],
                   [Input("interactions", "INTERACTIONS", interactions)])
    click.echo(write(interactions, given, out_train, out_test), nl=False)
