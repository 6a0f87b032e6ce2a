"""Evaluation options, their checks, and the one place they become SQL macro arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

from .errors import InputError

GAINS = ("linear", "exponential", "binary")
MISSING = ("zero", "skip")
EMPTY = ("zero", "skip")
IDCG_CUTOFFS = ("k", "list")
DUPLICATES = ("error", "first")
RANKED_MACROS = {"lists": "ndcg_ranked_lists", "ranks": "ndcg_ranked_ranks",
                 "scores": "ndcg_ranked_scores"}
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

Cutoff = Optional[int]  # None means no cutoff ("all")


def parse_cutoffs(values: Union[str, int, None, Iterable[Union[str, int, None]]]) -> tuple:
    """Cutoffs from ints, 'all', 'trec' or comma lists of them, in order, without repeats."""
    if values is None or isinstance(values, (str, int)):
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
    return (k,)


def label(k: Cutoff) -> str:
    """How a cutoff appears in metric names: 10 -> '10', None -> 'all'."""
    return "all" if k is None else str(k)


@dataclass(frozen=True)
class Options:
    """What to compute. Every field is checked on creation."""

    k: tuple = (10,)
    gain: str = "linear"
    missing: str = "zero"
    idcg_cutoff: str = "k"
    empty: str = "zero"
    max_depth: Optional[int] = None
    duplicates: str = "error"

    def __post_init__(self):
        object.__setattr__(self, "k", parse_cutoffs(self.k))
        for name, allowed in (("gain", GAINS), ("missing", MISSING), ("empty", EMPTY),
                              ("idcg_cutoff", IDCG_CUTOFFS), ("duplicates", DUPLICATES)):
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"{name} {value!r} is not one of: {', '.join(allowed)}", usage=True)
        if self.max_depth is not None and (
                isinstance(self.max_depth, bool) or not isinstance(self.max_depth, int)
                or self.max_depth < 1):
            raise InputError(f"max_depth {self.max_depth!r} is not an integer >= 1", usage=True)

    @property
    def metrics(self) -> list:
        return [f"ndcg@{label(k)}" for k in self.k]

    def ks_sql(self) -> str:
        """The cutoffs as a SQL list literal; NULL stands for 'all'."""
        return "[" + ", ".join("NULL" if k is None else str(int(k)) for k in self.k) + "]::BIGINT[]"

    def depth_sql(self) -> str:
        """How many items of each ranking can count, as the SQL that ndcg_depth computes."""
        depth = "NULL" if self.max_depth is None else str(int(self.max_depth))
        return f"ndcg_depth({self.ks_sql()}, {depth})"

    def ranked_cte(self, layout: str, recs: str = "ndcg_recs") -> str:
        """SQL CTEs that end in `ndcg_ranked_`: the ranked items of `recs` (in `layout`) that can
        count. With duplicates 'first', repeats are dropped before the depth cut."""
        macro = RANKED_MACROS[layout]
        if self.duplicates == "first":
            return (f"ndcg_every_ AS (FROM {macro}('{recs}', depth := NULL)), "
                    f"ndcg_ranked_ AS (FROM ndcg_first_occurrence('ndcg_every_', "
                    f"depth := {self.depth_sql()}))")
        return f"ndcg_ranked_ AS (FROM {macro}('{recs}', depth := {self.depth_sql()}))"

    def user_scores_args(self) -> str:
        """The named arguments of ndcg_user_scores for these options."""
        return f"ks := {self.ks_sql()}, gain := '{self.gain}', idcg_cutoff := '{self.idcg_cutoff}'"

    def evaluated_args(self) -> str:
        """The named arguments of ndcg_evaluated for these options."""
        return f"missing := '{self.missing}', empty := '{self.empty}'"
