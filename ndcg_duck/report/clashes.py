"""No output may touch an input: before any work, every file a run writes (--per-user, --plot) is
compared with every file it reads (recommendations, relevance, compare's runs, --segments,
--train, --items; each glob's matches and each directory's files, as loading expands them).

Two paths are the same file when their real paths (symlinks resolved) are equal or when they are
one file on disk (st_dev and st_ino: a hard link, or a path spelt another way). An output inside
an input directory is refused too (the next run would read it as part of the dataset), and so is
an output directory (Spark's OUT/) that holds an input. An s3:// output is compared with the
s3:// inputs the same way, by URL (the same object, or an object inside an input prefix). Other
outputs ('-' for stdout, other URIs) and other inputs (tables in memory, tables of Spark's catalog
given as table:NAME, other URIs) are not compared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, NamedTuple, Optional

from .. import objectstore
from ..errors import InputError
from ..evaluation.inputs import files_read, table_name


class Output(NamedTuple):
    said: str  # the caller's name for it: '--per-user' (CLI) or 'plot=' (Python)
    path: Optional[str]
    what: str  # what is written there: 'the per-user table'


class Input(NamedTuple):
    role: str  # 'relevance', 'segments', ...
    said: str  # the caller's name for it: 'RELEVANCE', '--segments', 'rels='
    source: object  # a path, glob or directory, or a table in memory (not compared)


def _local(path) -> bool:
    return (isinstance(path, (str, Path)) and str(path) not in ("", "-")
            and "://" not in str(path) and table_name(path) is None)


def _url(path) -> bool:
    return isinstance(path, str) and objectstore.is_url(path)


def _identity(path: str):
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _within(inner: str, outer: str) -> bool:
    """inner is outer or lies under it (both real paths)."""
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def _words(said: str, path) -> str:
    return f"{said}{str(path)!r}" if said.endswith("=") else f"{said} {path}"


def refuse_clashes(outputs: Iterable[Output], inputs: Iterable[Input]) -> None:
    """Raise a usage InputError naming both sides, in the caller's words, when an output is an
    input, lies inside an input directory or (a directory) holds an input."""
    inputs = list(inputs)
    _refuse_url_clashes([out for out in outputs if _url(out.path)], inputs)
    outputs = [out for out in outputs if _local(out.path)]
    if not outputs:
        return
    read = []  # (input, kind, its files)
    for given in inputs:
        if _local(given.source):
            kind, files = files_read(str(given.source))
            read.append((given, kind, files))
    for out in outputs:
        real, same = os.path.realpath(out.path), _identity(str(out.path))
        said = _words(out.said, out.path)

        def clash(text):
            return InputError(f"{said} {text}: write {out.what} elsewhere", usage=True)

        for given, kind, files in read:
            whole = f"the {given.role} {kind} {given.said} ({given.source})"
            if kind == "directory":
                top = os.path.realpath(given.source)
                if _within(real, top):
                    raise clash(f"{'is' if real == top else 'is inside'} {whole}")
                if _within(top, real):
                    raise clash(f"holds {whole}")
            for file in files:
                name = {"file": whole, "glob": f"{file}, matched by {whole}",
                        "directory": f"{file}, in {whole}"}[kind]
                file_real = os.path.realpath(file)
                if file_real == real or (same is not None and _identity(file) == same):
                    raise clash(f"is {name}")
                if _within(file_real, real):
                    raise clash(f"holds {name}")


def _refuse_url_clashes(outputs: list, inputs: list) -> None:
    """refuse_clashes for s3:// outputs: against the s3:// inputs, by URL."""
    if not outputs:
        return
    read = [(given, *files_read(given.source, given.role)) for given in inputs
            if _url(given.source)]
    for out in outputs:
        said, where = _words(out.said, out.path), _same_url(out.path)
        for given, kind, files in read:
            whole = f"the {given.role} {kind} {given.said} ({given.source})"
            top = _same_url(given.source).rstrip("/") + "/"
            if kind == "directory" and where.startswith(top):
                raise InputError(f"{said} is inside {whole}: write {out.what} elsewhere",
                                 usage=True)
            for file in files:
                if _same_url(file) == where:
                    name = {"file": whole, "glob": f"{file}, matched by {whole}",
                            "directory": f"{file}, in {whole}"}[kind]
                    raise InputError(f"{said} is {name}: write {out.what} elsewhere",
                                     usage=True)


def _same_url(url: str) -> str:
    """An s3:// URL as compared: the scheme in lower case (bucket and key are as given)."""
    return objectstore.SCHEME + url[len(objectstore.SCHEME):]
