"""Cutoffs (-k): what users write (5, '5,10', 'all', 'trec') and how they are named in output."""

from __future__ import annotations

from typing import Iterable, Optional, Union

from .errors import InputError

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs
LARGEST = 2 ** 63 - 1  # the largest cutoff or depth: the SQL counts positions in a BIGINT

Cutoff = Optional[int]  # None means no cutoff ("all")


def parse_cutoffs(values: Union[str, int, None, Iterable[Union[str, int, None]]]) -> tuple:
    """Cutoffs from ints, 'all', 'trec' or comma lists of them, in order, without repeats."""
    if values is None or isinstance(values, (str, int, float)) or \
            not isinstance(values, Iterable):
        values = [values]
    cutoffs: list = []
    for value in values:
        pieces = value.split(",") if isinstance(value, str) else [value]
        for piece in pieces:
            for k in _cutoff(piece):
                if k not in cutoffs:
                    cutoffs.append(k)
    if not cutoffs:
        raise InputError("no cutoff given: use -k with an integer >= 1 or 'all'", usage=True)
    return tuple(cutoffs)


def _cutoff(piece) -> tuple:
    if piece is None:
        return (None,)
    if isinstance(piece, bool):
        raise InputError(f"cutoff {piece!r} is not an integer >= 1 or 'all'", usage=True)
    text = str(piece).strip().lower()
    if text == "all":
        return (None,)
    if text == "trec":
        return TREC_CUTOFFS
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1 or isinstance(piece, float):
        raise InputError(f"cutoff {piece!r} is not an integer >= 1, 'all' or 'trec'", usage=True)
    if k > LARGEST:
        raise InputError(f"cutoff {piece!r} is beyond the largest cutoff, {LARGEST}: use 'all' "
                         f"for no cutoff", usage=True)
    return (k,)


def label(k: Cutoff) -> str:
    """How a cutoff appears in metric names: 10 -> '10', None -> 'all'."""
    return "all" if k is None else str(k)


def at_k(metric: str, k: Cutoff) -> str:
    """A metric's name at cutoff k: ('ndcg', 10) -> 'ndcg@10', ('ndcg', None) -> 'ndcg@all'."""
    return f"{metric}@{label(k)}"
