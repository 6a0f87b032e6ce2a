"""Evaluation options, their checks, and the one place they become SQL macro arguments."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Union

from .errors import InputError

GAINS = ("linear", "exponential", "binary")
MISSING = ("zero", "skip")
EMPTY = ("zero", "skip")
IDCG_CUTOFFS = ("k", "list")
DUPLICATES = ("error", "first")
RANKED_MACROS = {"lists": "ndcg_ranked_lists", "ranks": "ndcg_ranked_ranks",
                 "scores": "ndcg_ranked_scores"}
TIES = ("trec", "average")
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


def parse_gain_map(value: Union[str, Mapping, Iterable, None]) -> Optional[tuple]:
    """A gain map from "LEVEL=GAIN,..." text, a {level: gain} mapping or (level, gain) pairs, as a
    tuple of (level, gain) float pairs; None or an empty mapping means no map."""
    if value is None:
        return None
    if isinstance(value, str):
        pairs = [_gain_pair(piece) for piece in value.split(",")]
    else:
        items = value.items() if isinstance(value, Mapping) else value
        pairs = [_gain_pair(pair) for pair in items]
        if not pairs:
            return None
    levels = [level for level, _ in pairs]
    for level in levels:
        if levels.count(level) > 1:
            raise InputError(f"gain map lists relevance level {level:g} twice", usage=True)
    return tuple(pairs)


def _gain_pair(piece) -> tuple:
    """One LEVEL=GAIN piece (text) or (level, gain) pair, as two finite floats."""
    try:
        if isinstance(piece, str):
            level, gain = piece.split("=")
        else:
            level, gain = piece
        level, gain = _number(level), _number(gain)
    except (TypeError, ValueError):
        raise InputError(f"gain map piece {piece!r} is not LEVEL=GAIN with two numbers, "
                         f"as in 1=3,2=9,4=4.5", usage=True) from None
    return level, gain


def _number(text) -> float:
    if isinstance(text, bool):
        raise ValueError(text)
    number = float(text.strip() if isinstance(text, str) else text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number


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
    ties: str = "trec"
    gain_map: Optional[tuple] = None
    judged_only: bool = False
    unique_judgments: bool = False
    min_relevance: Optional[float] = None

    def __post_init__(self):
        object.__setattr__(self, "k", parse_cutoffs(self.k))
        object.__setattr__(self, "gain_map", parse_gain_map(self.gain_map))
        for name, allowed in (("gain", GAINS), ("missing", MISSING), ("empty", EMPTY),
                              ("idcg_cutoff", IDCG_CUTOFFS), ("duplicates", DUPLICATES),
                              ("ties", TIES)):
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"{name} {value!r} is not one of: {', '.join(allowed)}", usage=True)
        if self.max_depth is not None and (
                isinstance(self.max_depth, bool) or not isinstance(self.max_depth, int)
                or self.max_depth < 1):
            raise InputError(f"max_depth {self.max_depth!r} is not an integer >= 1", usage=True)
        if self.min_relevance is not None:
            try:
                object.__setattr__(self, "min_relevance", _number(self.min_relevance))
            except (TypeError, ValueError):
                raise InputError(f"min_relevance {self.min_relevance!r} is not a number",
                                 usage=True) from None
        for name in ("judged_only", "unique_judgments"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} {getattr(self, name)!r} is not True or False", usage=True)

    def ks_sql(self) -> str:
        """The cutoffs as a SQL list literal; NULL stands for 'all'."""
        return "[" + ", ".join("NULL" if k is None else str(int(k)) for k in self.k) + "]::BIGINT[]"

    def ties_for(self, layout: str) -> str:
        """Only a ranking by score has ties: lists and ranks are taken as given."""
        return self.ties if layout == "scores" else "trec"

    def depth_sql(self, layout: str) -> str:
        """How many items of each ranking to read, as the SQL that ndcg_depth computes."""
        depth = "NULL" if self.max_depth is None else str(int(self.max_depth))
        return (f"ndcg_depth({self.ks_sql()}, {depth}, judged_only := "
                f"{str(self.judged_only).lower()}, ties := '{self.ties_for(layout)}')")

    def gain_map_sql(self) -> str:
        """The gain map as a SQL MAP(DOUBLE, DOUBLE) literal, or NULL."""
        if self.gain_map is None:
            return "NULL"
        levels = ", ".join(repr(level) for level, _ in self.gain_map)
        gains = ", ".join(repr(gain) for _, gain in self.gain_map)
        return f"MAP([{levels}]::DOUBLE[], [{gains}]::DOUBLE[])"

    def ranked_cte(self, layout: str, recs: str = "ndcg_recs") -> str:
        """SQL CTEs that end in `ndcg_ranked_`: the ranked items of `recs` (in `layout`) that can
        count. With duplicates 'first', repeats are dropped before the depth cut."""
        macro = RANKED_MACROS[layout]
        ties = f", ties := '{self.ties}'" if layout == "scores" else ""
        depth = self.depth_sql(layout)
        if self.duplicates == "first":
            return (f"ndcg_every_ AS (FROM {macro}('{recs}', depth := NULL{ties})), "
                    f"ndcg_ranked_ AS (FROM ndcg_first_occurrence('ndcg_every_', depth := {depth}))")
        return f"ndcg_ranked_ AS (FROM {macro}('{recs}', depth := {depth}{ties}))"

    def judgments_args(self) -> str:
        """The named arguments of ndcg_judgments (the judgments edge) for these options."""
        min_relevance = "NULL" if self.min_relevance is None else repr(self.min_relevance)
        return (f"gain := '{self.gain}', gain_map := {self.gain_map_sql()}, "
                f"min_relevance := {min_relevance}, "
                f"unique_judgments := {str(self.unique_judgments).lower()}")

    def user_scores_args(self, layout: str) -> str:
        """The named arguments of ndcg_user_scores for these options and recommendation layout."""
        return (f"ks := {self.ks_sql()}, idcg_cutoff := '{self.idcg_cutoff}', "
                f"judged_only := {str(self.judged_only).lower()}, ties := '{self.ties_for(layout)}'")

    def evaluated_args(self) -> str:
        """The named arguments of ndcg_evaluated for these options."""
        return f"missing := '{self.missing}', empty := '{self.empty}'"
