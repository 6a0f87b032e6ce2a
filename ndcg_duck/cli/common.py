"""What the commands share: the `ndcg-duck` group (`cli`, `main`), the click options of the
registry's Params (options.PARAMS: every option of eval and compare, --segments, --by and --plot
among them), and the wrapper that turns InputError and signals into exit codes."""

from __future__ import annotations

import functools
import sys

import click

from .. import interrupts, objectstore, options
from ..errors import InputError
from ..metrics import check_names

CONTEXT = {"help_option_names": ["-h", "--help"]}
EXIT_CODES = """Exit status: 0 when the evaluation ran, 1 for bad input data (the message names
the file, column, user, item and value), 2 for a bad command line or option value, 130 when
stopped by Ctrl-C (SIGINT), 143 by SIGTERM."""


def _checked(param):
    """A click callback that checks a value as the Python API does, as a usage error."""
    def callback(ctx, click_param, value):
        if param.kind == "multiple":
            value = value or None
        if value is None:
            return param.default if param.kind == "multiple" else None
        try:
            if param.name == "metrics":  # may name --metrics-sql's measures (an eager option)
                own = ctx.params.get("metrics_sql")
                return check_names(value, own.names() if own is not None else ())
            return param.check(value)
        except InputError as exc:  # click names the option itself
            raise click.BadParameter(str(exc).removeprefix(param.option + " ")) from None
    return callback


def click_option(param):
    """The click option of a registry Param; its value arrives under the Param's name."""
    names = [name for name in (param.short, param.option, param.name) if name]
    kwargs = {"help": param.help, "metavar": param.metavar}
    if param.kind == "flag":
        kwargs.update(is_flag=True, default=False)
    elif param.choices:
        kwargs.update(type=click.Choice([c for c in param.choices if c is not None]),
                      default=param.default, show_default=param.default is not None)
    elif param.kind == "multiple":
        kwargs.update(multiple=True, callback=_checked(param))
    elif param.kind == "int":
        kwargs.update(type=click.IntRange(min=param.minimum, max=param.maximum),
                      default=param.default, show_default=param.default is not None)
    elif param.kind == "level":
        kwargs.update(type=click.FloatRange(0, 1, min_open=True, max_open=True),
                      default=param.default, show_default=True)
    elif param.kind == "float":
        kwargs.update(type=click.FLOAT, default=param.default, callback=_checked(param))
    else:
        kwargs.update(default=param.default, show_default=param.shown,
                      callback=_checked(param) if param.check else None,
                      # read before -m, which may name its measures
                      is_eager=param.name == "metrics_sql")
    return click.option(*names, **kwargs)


def registry_options(*names):
    """The click options of registry Params, in the order of `names`: each the name of a group
    (its Params in the registry's order) or of one Param."""
    chosen = []
    for name in names:
        grouped = [p for p in options.PARAMS if p.group == name and p.cli]
        chosen += grouped or [options.BY_NAME[name]]

    def wrap(fn):
        for param in reversed(chosen):
            fn = click_option(param)(fn)
        return fn
    return wrap


def user_errors(fn):
    """Turn InputError into click's usage (exit 2) or data (exit 1) errors, and run the command
    so that SIGINT and SIGTERM stop it promptly: one line on stderr, exit 130 or 143, the
    files it was writing left as they were (interrupts.py). The command's s3:// inputs and
    outputs use its --s3-endpoint (objectstore.py)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with interrupts.stoppable(), objectstore.using(kwargs.get("s3_endpoint")):
                return fn(*args, **kwargs)
        except interrupts.Interrupted as exc:
            click.echo(interrupts.MESSAGE, err=True)
            sys.exit(exc.exit_code)
        except InputError as exc:
            if exc.usage:
                raise click.UsageError(str(exc)) from None
            raise click.ClickException(str(exc)) from None
    return wrapper


def stderr_is_terminal() -> bool:
    """Whether to show progress: stderr is a terminal (tests patch this)."""
    return sys.stderr.isatty()


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="ndcg-duck")
def cli():
    """NDCG, DCG and ideal DCG per user and on average, computed in DuckDB."""


def main():
    cli()
