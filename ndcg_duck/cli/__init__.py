"""The ndcg-duck command line: `eval` and `sql` (eval.py), `compare` (compare.py), and the
options eval and compare share for segments and plots (extras.py)."""

from . import compare  # noqa: F401  (adds the compare command)
from .eval import cli, main

__all__ = ["cli", "main"]
