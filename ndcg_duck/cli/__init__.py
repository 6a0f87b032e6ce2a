"""The ndcg-duck command line: the group and what the commands share (common.py), `eval` and
`sql` (eval.py), `compare` (compare.py), and what eval does with segments and plots (extras.py)."""

from . import eval, compare, split  # noqa: F401  (each adds its commands to the group)
from .common import cli, main

__all__ = ["cli", "main"]
