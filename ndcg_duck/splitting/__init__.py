"""Splitting interactions into train and test (`ndcg-duck split`, `ndcg_duck.split`): the
protocols are sql/ndcg_split.sql's macros; protocols.py loads, checks, runs and writes."""

from .protocols import split

__all__ = ["split"]
