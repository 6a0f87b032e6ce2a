"""Spark columns by name."""

from __future__ import annotations

from ..sqltext import spark_name


def col(name: str):
    """The column `name` of a DataFrame, quoted (sqltext.spark_name): a dot, space or backtick in
    it stays part of the name."""
    from pyspark.sql import functions as F

    return F.col(spark_name(name))


ARROW_DOT = "\u2024"  # one dot leader: what a dot in a column name becomes for mapInArrow


def arrow_name(name: str) -> str:
    """A column's name in the batches of for_arrow's DataFrame: each dot made ARROW_DOT."""
    return name.replace(".", ARROW_DOT)


def for_arrow(df):
    """df with its columns renamed by arrow_name (by position), for mapInArrow: PySpark's
    mapInArrow looks every column up by its name, where a dot reads as a struct's field
    (iprec_at_recall_0.50, a run named v1.2); the function reads them by arrow_name."""
    return df.toDF(*[arrow_name(name) for name in df.columns])
