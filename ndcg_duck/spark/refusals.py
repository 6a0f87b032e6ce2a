"""Spark's failures in the caller's words: a check that stopped a worker is the default engine's
one-line message naming the input; a worker without ndcg-duck's Python says how to ship it; any
other Spark failure is its first line."""

from __future__ import annotations

import contextlib
import re
from typing import Optional

from .. import outcome
from ..errors import InputError
from ..evaluation import beyond
from .launch import first_line as _first_line

SHIP = ("Spark's Python workers cannot import {module}: they run another Python than "
        "ndcg-duck's. Give them ndcg-duck's environment, e.g. venv-pack -o ndcg-env.tar.gz, "
        "then --spark-conf spark.archives=ndcg-env.tar.gz#env --spark-conf "
        "spark.pyspark.python=./env/bin/python (docs/spark.md)")


@contextlib.contextmanager
def refusals(recs_what: str, rels_what: str, given: Optional[beyond.Inputs] = None):
    """A check that stopped a worker reaches the caller as the default engine's one-line
    message, naming the input (given: how the beyond-accuracy inputs are named); any other
    Spark failure as its first line."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        text = str(exc)
        named = outcome.named_input(text, recs_what, rels_what, given)
        if named is not None:
            raise InputError(named) from None
        missing = re.search(r"No module named '(duckdb|ndcg_duck|pyarrow)", text)
        if missing:
            raise InputError(SHIP.format(module=missing.group(1))) from None
        errors = re.findall(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception): .*)$", text, re.M)
        raise InputError(f"Spark failed: {errors[-1] if errors else _first_line(text)}") from None
