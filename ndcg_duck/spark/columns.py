"""Spark columns by name."""

from __future__ import annotations

from ..sqltext import spark_name


def col(name: str):
    """The column `name` of a DataFrame, quoted (sqltext.spark_name): a dot, space or backtick in
    it stays part of the name."""
    from pyspark.sql import functions as F

    return F.col(spark_name(name))
