"""The exception and warning types ndcg-duck raises for bad input or bad options."""

import re


class InputError(ValueError):
    """Bad input data or options: the message names the file, column, user or value and says
    what to do. The CLI prints it and exits with status 1 (data) or 2 (usage)."""

    def __init__(self, message: str, *, usage: bool = False):
        super().__init__(message)
        self.usage = usage


class NdcgWarning(UserWarning):
    """Something the run did that may not be what was meant: ids compared as text, a gain map
    level that never occurs. evaluate() warns with it; the CLI prints it on stderr."""


def duckdb_message(exc: Exception) -> str:
    """The first line of a DuckDB error without DuckDB's "Invalid Input Error: " kind and, for the
    macros' own checks, without their "ndcg-duck: " mark."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    own = re.search(r"ndcg-duck: (.*)", text)
    if own:
        return own.group(1)
    return re.sub(r"^[A-Z][A-Za-z ]*Error: ", "", text)
