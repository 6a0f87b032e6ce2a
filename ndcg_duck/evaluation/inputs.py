"""Load recommendations and relevance judgments into a DuckDB connection as canonical views.

After loading, `ndcg_recs` holds the recommendations in one of three layouts (user_id, items),
(user_id, item_id, rank) or (user_id, item_id, score), and `ndcg_rels` holds the judgments as
(user_id, item_id, relevance). Column names are the user's; ids keep their types unless the two
inputs disagree, in which case both sides are compared as text (and the run says so).

Which columns are used, in this order (a column named by an option must exist):
- recommendations: a list column (--items-col) makes the nested layout; otherwise long rows
  (--item-col) ordered by the column named with --rank-col or --score-col, or else by the one
  of `rank` and `score` that exists (both existing, unnamed, is an error that asks which);
- relevance: long rows (--item-col) with the relevance column (--relevance-col); a file of only
  the user and item columns counts every row as relevance 1, and a file with other columns but
  no relevance column is an error; otherwise lists of relevant items (--items-col, binary).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple, Optional

import duckdb

from .. import objectstore
from ..errors import InputError, duckdb_message
from ..outcome import no_file, no_match, no_rows, user_in_two_files
from ..options import BY_NAME, FORMATS  # noqa: F401  (FORMATS is part of this module's API)
from ..sqltext import ident, literal, text_list

EXTENSIONS = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "csv",
    ".json": "json", ".jsonl": "json", ".ndjson": "json",
    ".inter": "recbole",
}
COMPRESSED = (".gz", ".zst")
READERS = {"parquet": "read_parquet", "csv": "read_csv", "json": "read_json"}
# RecBole's atomic files (.inter): tab-separated, each header NAME:TYPE; read as CSV, each column
# under its NAME
RECBOLE_HEADER = re.compile(r"^[^\t:]+:(token|token_seq|float|float_seq)$")
# TREC text files: a run (recommendations) or qrels (relevance), read by the macros of
# sql/ndcg_trec.sql into user_id, item_id and score or relevance.
TREC_READERS = {"recommendations": ("ndcg_trec_run", "score"),
                "relevance": ("ndcg_trec_qrels", "relevance")}
TREC_FORMS = {"recommendations": ("run", "query Q0 doc rank score tag"),
              "relevance": ("qrels", "query iteration doc relevance")}
INTEGER = re.compile(r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|DECIMAL\(\d+,0\))$")
NUMBER = re.compile(r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL.*)$")
# Ids (users, items) are integers of any width (a DECIMAL without decimals too: Arrow's HUGEINT)
# or text; an ENUM (a pandas category, a polars
# Categorical or Enum) or a UUID is read as its text. Anything else is refused (need_id).
TEXT_LIKE = re.compile(r"^(VARCHAR|ENUM\(.*\)|UUID|JSON)$", re.S)  # JSON: a JSON file's column of
# mixed types, e.g. [1, "a"]: each id as its own text ("a" as a, 1 as 1)
IDS = "ids must be integers or text"
FILE_COLUMN = "ndcg_file_"  # the file each row came from, for inputs of several files
FORMAT_FLAGS = {"recommendations": "--recs-format", "relevance": "--rels-format"}
ROLES = ("user", "item", "items", "rank", "score", "relevance")
# an input's own names for the columns both files have (--rels-user-col, ...): its option prefix
OWN = {"recommendations": "recs", "relevance": "rels"}
OWN_ROLES = ("user", "item")


@dataclass(frozen=True)
class Columns:
    """The column names in the user's files; one name serves both files. `named` holds the roles
    ('user', 'relevance', ...) whose name the caller gave: such a column must exist."""

    user: str = BY_NAME["user_col"].shown
    item: str = BY_NAME["item_col"].shown
    items: str = BY_NAME["items_col"].shown
    rank: str = BY_NAME["rank_col"].shown
    score: str = BY_NAME["score_col"].shown
    relevance: str = BY_NAME["relevance_col"].shown
    named: frozenset = field(default_factory=frozenset)
    own: tuple = ()  # (input, role, name): one input's own name for the user or item column

    def __post_init__(self):  # None, as the command line passes a column not named: the default
        for role in ROLES:
            if getattr(self, role) is None:
                object.__setattr__(self, role, BY_NAME[f"{role}_col"].shown)

    @classmethod
    def given(cls, **names) -> "Columns":
        """Columns from evaluate()'s keywords (user_col=...; None: not named, the default)."""
        chosen = {role: names.get(f"{role}_col") for role in ROLES}
        own = tuple((role_of, role, names[f"{prefix}_{role}_col"])
                    for role_of, prefix in OWN.items() for role in OWN_ROLES
                    if names.get(f"{prefix}_{role}_col") is not None)
        return cls(**{role: name for role, name in chosen.items() if name is not None},
                   named=frozenset(role for role, name in chosen.items() if name is not None),
                   own=own)

    def renames(self, input_role: str) -> dict:
        """{role: the input's own name} for the columns the input (`recommendations`,
        `relevance`) names its own way (--recs-user-col, ...): read under the shared name."""
        return {role: name for of, role, name in self.own
                if of == input_role and name != getattr(self, role)}

    def of(self, input_role: str) -> "Columns":
        """The columns as named in that input's file (its own user and item names)."""
        return replace(self, **self.renames(input_role))


def own_flag(input_role: str, role: str) -> str:
    """The option that names `role`'s column in one input only: --rels-user-col."""
    return f"--{OWN.get(input_role, 'recs')}-{role}-col"


def flags_for(input_role: str, role: str) -> str:
    """How a message says which option names `role`'s column in that input: its own option, and
    the shared one (both files)."""
    if input_role not in OWN:
        return BY_NAME[f"{role}_col"].option
    return f"{own_flag(input_role, role)} (or {BY_NAME[f'{role}_col'].option} for both files)"


def _is_list(sql_type: str) -> bool:
    return re.search(r"\[\d*\]$", sql_type) is not None


def element_type(sql_type: str) -> str:
    return re.sub(r"\[\d*\]$", "", sql_type)


# --- finding the files and their format ----------------------------------------------------------

def has_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def _hidden(path: Path, top: Path) -> bool:
    """Spark's _SUCCESS and _committed files, .crc checksums and other hidden files."""
    return any(part.startswith((".", "_")) for part in path.relative_to(top).parts)


def _extension_format(path: str):
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() not in COMPRESSED]
    return EXTENSIONS.get(suffixes[-1] if suffixes else "")


def _head_lines(path: str) -> Optional[list]:
    """The first lines of the text file at `path` (whole lines, from its first 64 KiB); a
    compressed one (.gz, .zst) decompressed by DuckDB's reader, as the run reads it. None when it
    cannot be read or is not text."""
    if Path(path).suffix.lower() in COMPRESSED:
        con = duckdb.connect()
        try:
            rows = con.execute(
                f"SELECT line FROM read_csv({literal(path)}, columns = {{'line': 'VARCHAR'}}, "
                f"header = false, delim = chr(31), quote = '', escape = '', auto_detect = false) "
                f"LIMIT 64").fetchall()
        except duckdb.Error:
            return None
        finally:
            con.close()
        lines = [row[0] or "" for row in rows]
        return None if any("\0" in line for line in lines) else lines
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536)
    except OSError:
        return None
    if b"\0" in head:
        return None
    lines = head.decode("utf-8", "replace").splitlines()
    return lines[:-1] if len(head) == 65536 else lines  # the last line may be cut


def _trec_kind(path: str):
    """'run' or 'qrels' when most of the first 20 lines of the text file at `path` (compressed
    or not) have that shape: a run `query Q0 doc rank score tag`, qrels `query iteration doc
    relevance`."""
    lines = _head_lines(path)
    if lines is None:
        return None
    lines = [words for words in (line.split() for line in lines) if words][:20]
    if not lines:
        return None

    def number(text):
        try:
            float(text)
            return True
        except ValueError:
            return False

    # most of the first lines have the shape (a bad line is the reader's to report)
    runs = sum(len(w) >= 6 and number(w[3]) and number(w[4]) for w in lines)
    qrels = sum(len(w) == 4 and number(w[1]) and number(w[3]) for w in lines)
    for kind, count in (("run", runs), ("qrels", qrels)):
        if count * 5 >= len(lines) * 4:
            return kind
    return None


def _recbole(path: str) -> bool:
    """Whether the first line of the local text file at `path` is a RecBole atomic file's
    header: tab-separated NAME:TYPE fields (user_id:token, rating:float, ...)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(65536).decode("utf-8", "replace").rstrip("\r\n")
    except OSError:
        return False
    fields = first.split("\t")
    return len(fields) >= 2 and all(RECBOLE_HEADER.match(f) for f in fields)


def format_of(path: str, fmt: str | None, role: str, sample: str | None = None) -> str:
    """The format of the file(s) at `path`: the one given, the extension's, or TREC when the
    extension says nothing and the content (of `sample`, one of the files) is a TREC run or
    qrels. A CSV file or one of no known extension whose header is a RecBole atomic file's is
    read as one."""
    if fmt:
        return fmt
    found = _extension_format(sample or path)
    if found in ("csv", None) and _recbole(sample or path):
        return "recbole"
    if found:
        return found
    if role not in TREC_FORMS:  # train and items files: no TREC form, no format flag
        raise InputError(f"cannot tell the format of {role} file {sample or path} from its "
                         f"extension: use a .parquet, .csv or .json name", usage=True)
    kind = _trec_kind(sample or path)
    want, form = TREC_FORMS[role]
    if kind == want:
        return "trec"
    if kind is not None:
        other = "recommendations" if role == "relevance" else "relevance"
        raise InputError(f"{role} file {sample or path} looks like TREC {kind} ("
                         f"{TREC_FORMS[other][1]}), not a TREC {want} ({form}): give the "
                         f"recommendations first, then the relevance judgments", usage=True)
    raise InputError(
        f"cannot tell the format of {role} file {sample or path} from its extension or its "
        f"content; use a .parquet, .csv or .json name, or {FORMAT_FLAGS[role]}", usage=True)


def _data_files(folder: Path) -> list[Path]:
    """The files of a directory read as one dataset: all but the hidden ones, in order."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p, folder))


def _directory_files(folder: Path, fmt: str | None, role: str) -> tuple[list[str], str]:
    """The data files of a directory (read as one dataset, like a Spark output), and their
    format."""
    files = _data_files(folder)
    if not files:
        raise InputError(f"{role} directory {folder} holds no data files: give a file, a glob "
                         f"or a directory of .parquet, .csv or .json files")
    return _directory_format([str(p) for p in files], str(folder), fmt, role)


def _directory_format(files: list, folder: str, fmt: str | None, role: str,
                      sample=None) -> tuple[list[str], str]:
    """The files of a directory `folder` of the format that it holds (or `fmt`), and that
    format. `sample(file)`: where to read a file of no known extension (default: the file)."""
    if fmt is None:
        formats = {_extension_format(p) for p in files}
        if len(formats) == 1 and None not in formats:
            fmt = formats.pop()
        elif formats == {None}:
            fmt = format_of(files[0], None, role,
                            sample=sample(files[0]) if sample else None)
        else:
            kinds = sorted(f".{Path(p).suffix.lstrip('.') or '(none)'}" for p in files)
            raise InputError(f"{role} directory {folder} holds files of more than one kind "
                             f"({', '.join(dict.fromkeys(kinds))}): give a glob such as "
                             f"'{folder.rstrip('/')}/**/*.parquet'"
                             + (f", or {FORMAT_FLAGS[role]}" if role in FORMAT_FLAGS else ""),
                             usage=True)
    if fmt != "trec":
        matching = [p for p in files if _extension_format(p) == fmt]
        files = matching or files
    return files, fmt


def _glob_files(con, path: str) -> list[str]:
    try:
        return [row[0] for row in con.sql(f"SELECT file FROM glob({literal(path)}) "
                                          f"ORDER BY file").fetchall()]
    except duckdb.Error:
        return []


def files_read(path: str, role: str = "input") -> tuple[str, list[str]]:
    """What a path input names, as loading reads it, without reading it: ('directory', its data
    files), ('glob', the files it matches) or ('file', [path]). A missing local file or a glob
    matching nothing is for loading to report; an s3:// URL is listed (objectstore.listing), and
    what it cannot find is reported at once."""
    if objectstore.is_url(path):
        return objectstore.listing(path, role)
    if Path(path).is_dir():
        return "directory", [str(p) for p in _data_files(Path(path))]
    if has_glob(path):
        con = duckdb.connect()
        try:
            return "glob", _glob_files(con, path)
        finally:
            con.close()
    return "file", [path]


class Source(NamedTuple):
    what: str  # how messages name it: "recommendations file x.csv"
    countable: bool  # Parquet or in memory: counting its rows costs next to nothing
    files: list  # the files it reads, when more than one: [] otherwise
    reader: str  # SQL that reads it with a FILE_COLUMN, when `files` is not empty


def attach_source(con, source, name: str, fmt: str | None, role: str,
                  cols: Columns = Columns()) -> Source:
    """Make `source` (a path, glob, directory, DuckDB relation, Arrow table or pandas/polars
    DataFrame) the view or table `name` in `con`. A TREC file's columns get the names in
    `cols`."""
    if isinstance(source, (str, Path)):
        return _attach_path(con, str(source), name, fmt, role, cols)
    try:
        if isinstance(source, duckdb.DuckDBPyRelation):
            source = source.to_arrow_table()
        elif type(source).__module__.split(".")[0] == "polars":
            source = source.to_arrow()
        try:
            con.register(name, source)
        except Exception:  # a pandas column DuckDB cannot scan (numpy arrays in object cells)
            if type(source).__module__.split(".")[0] != "pandas":
                raise
            import pyarrow as pa  # here: a run of files imports it not at all (0.08 s)
            con.register(name, pa.Table.from_pandas(source, preserve_index=False))
    except Exception:  # duckdb raises several types for objects it cannot scan
        raise InputError(f"cannot use {role} of type {type(source).__name__}: pass a path, a "
                         f"DuckDB relation, an Arrow table or a pandas/polars DataFrame") from None
    return Source(f"{role} ({type(source).__name__})", True, [], "")


TABLE = "table:"  # table:db.recs names a table of Spark's catalog (--engine spark reads it)


def table_name(source) -> Optional[str]:
    """The name of the catalog table that `source` gives as table:NAME (as written, perhaps
    empty), or None for a path or a table in memory."""
    if isinstance(source, str) and source.startswith(TABLE):
        return source[len(TABLE):].strip()
    return None


def described(role: str, path) -> str:
    """How messages name an input given by its path, on every engine: 'relevance file PATH',
    'recommendations directory PATH' for a local directory of part files, or 'recommendations
    table db.recs' for a catalog table given as table:db.recs."""
    if table_name(path) is not None:
        return f"{role} table {table_name(path)}"
    kind = "directory" if "://" not in str(path) and Path(path).is_dir() else "file"
    return f"{role} {kind} {path}"


def _attach_path(con, path: str, name: str, fmt, role: str, cols: Columns) -> Source:
    if table_name(path) is not None:  # the CLI's words for a Spark table (cli/extras.py)
        raise InputError(f"{role} {path}: {TABLE}NAME names a table of Spark's catalog, which "
                         f"only the Spark engine reads: pass spark.table({table_name(path)!r}) "
                         f"to ndcg_duck.spark.evaluate", usage=True)
    if objectstore.is_url(path):
        return _attach_url(con, path, name, fmt, role, cols)
    what = described(role, path)
    if Path(path).is_dir():
        files, fmt = _directory_files(Path(path), fmt, role)
        target = text_list(files)
    elif has_glob(path):
        files = _glob_files(con, path)
        if not files:
            raise InputError(no_match(role, path))
        fmt = format_of(path, fmt, role, sample=files[0])
        target = literal(path)
    elif not Path(path).exists():
        raise InputError(no_file(role, path))
    else:
        files = [path]
        fmt = format_of(path, fmt, role)
        target = literal(path)
    return _read_files(con, target, files, fmt, name, what, role, cols)


def _read_files(con, target: str, files: list, fmt: str, name: str, what: str, role: str,
                cols: Columns, url_of=None) -> Source:
    """The view `name` over the files that `target` (SQL: a path, a glob or a list of paths)
    reads in format `fmt`. url_of(sql), when the files are copies of objects: the SQL of the
    object's URL of a copy's path `sql`."""
    if fmt == "trec":
        reader, value = TREC_READERS[role]
        select = (f"user_id AS {ident(cols.user)}, item_id AS {ident(cols.item)}, "
                  f"{value} AS {ident(getattr(cols, value))}")
        by_file = (f"SELECT words[1] AS {ident(cols.user)}, filename AS {FILE_COLUMN} "
                   f"FROM ndcg_trec_words({target})")
    elif fmt == "recbole":
        reader = "read_csv"
        target = f"{target}, delim = '\t', header = true"
        try:
            headers = [row[0] for row in con.sql(f"DESCRIBE FROM {reader}({target})").fetchall()]
        except duckdb.Error as exc:
            raise InputError(f"cannot read {what}: {_read_problem(exc, fmt)}") from None
        select = ", ".join(f"{ident(h)} AS {ident(h.rsplit(':', 1)[0])}" for h in headers)
        by_file = (f"SELECT {select}, {FILE_COLUMN} FROM {reader}({target}, "
                   f"filename = {literal(FILE_COLUMN)})")
    else:
        reader, select = READERS[fmt], "*"
        by_file = f"SELECT * FROM {reader}({target}, filename = {literal(FILE_COLUMN)})"
    if url_of is not None:
        by_file = (f"SELECT * REPLACE ({url_of(FILE_COLUMN)} AS {FILE_COLUMN}) "
                   f"FROM ({by_file})")
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {select} "
                    f"FROM {reader}({target})")
    except duckdb.Error as exc:
        raise InputError(objectstore.as_urls(f"cannot read {what}: {_read_problem(exc, fmt)}")
                         ) from None
    return Source(what, fmt == "parquet", files if len(files) > 1 else [], by_file)


def _attach_url(con, url: str, name: str, fmt, role: str, cols: Columns) -> Source:
    """An s3:// file, glob or directory as the view `name` (objectstore.py): Parquet as a pyarrow
    dataset DuckDB scans (only the columns and rows a query asks for are fetched), other formats
    as local copies read by DuckDB's own readers, as the same files on disk would be."""
    kind, urls = objectstore.listing(url, role)
    what = f"{role} {kind} {url}"
    if fmt is None and kind != "directory":
        fmt = _extension_format(urls[0] if kind == "glob" else url)

    def copy(one):  # a local copy of the object `one` (made once per run)
        return objectstore.local_copies([one], what)[0]
    if kind == "directory":
        urls, fmt = _directory_format(urls, url, fmt, role, sample=copy)
    elif fmt is None:
        try:
            fmt = format_of(url, None, role, sample=copy(urls[0]))
        except InputError as exc:
            raise InputError(objectstore.as_urls(str(exc)), usage=exc.usage) from None
    if fmt == "parquet":
        data = objectstore.dataset(urls, what)
        con.register(f"{name}_arrow", data)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS FROM {name}_arrow")
        by_file = ""
        if len(urls) > 1 and role == "recommendations" and cols.user in data.schema.names:
            # each file's users, for _one_file_per_user (a stream read once, when it checks)
            import pyarrow as pa
            scanner = data.scanner(columns=[cols.user, "__filename"])
            schema = pa.schema([scanner.projected_schema.field(0),
                                pa.field(FILE_COLUMN, pa.string())])
            con.register(f"{name}_files", pa.RecordBatchReader.from_batches(schema, (
                pa.RecordBatch.from_arrays(batch.columns, schema=schema)
                for batch in scanner.to_batches())))
            by_file = (f"SELECT {ident(cols.user)}, {literal(objectstore.SCHEME)} || "
                       f"{FILE_COLUMN} AS {FILE_COLUMN} FROM {name}_files")
        return Source(what, True, urls if len(urls) > 1 else [], by_file)
    local = [copy(one) for one in urls]
    folder = objectstore.copies_folder().rstrip("/") + "/"
    return _read_files(con, text_list(local) if len(local) > 1 else literal(local[0]), urls,
                       fmt, name, what, role, cols,
                       url_of=lambda sql: f"{literal(objectstore.SCHEME)} || "
                                          f"{sql}[{len(folder) + 1}:]")


# DuckDB's CSV reader (which reads CSV and TREC files) in its own words, and in ours
_CSV_PROBLEMS = (
    (r"state machine reached an invalid state",
     lambda m: "a carriage return (\\r) that does not end its line with \\n, where the other "
               "lines end in \\n: give the file one kind of line ending (\\n or \\r\\n)"),
    (r"CSV Error on Line: (\d+)\s+Original Line: (.*)\s+Expected Number of Columns: 1 Found",
     lambda m: f"line {m.group(1)} holds the control character U+001F (unit separator), "
               f"which a TREC file cannot hold: {m.group(2).strip().replace(chr(31), '<U+001F>')}"),
    (r"Error when sniffing file",
     lambda m: "its lines could not be split into columns by any delimiter (, | ; or tab) and "
               "quoting: check that every line has the same fields, that the lines end alike "
               "(\\n or \\r\\n) and that the text is UTF-8"),
)


def _read_problem(exc: Exception, fmt: Optional[str] = None) -> str:
    """What a failed read of a file says to the user: DuckDB's first line, or for what DuckDB
    says in words of its reader's options (_CSV_PROBLEMS, Parquet's magic bytes), ours."""
    text = duckdb_message(exc)
    if fmt == "parquet" and re.search(r"magic bytes|too small to be a Parquet file", text, re.I):
        return "not a Parquet file, or corrupt or truncated (" + text + ")"
    for pattern, words in _CSV_PROBLEMS:
        found = re.search(pattern, str(exc))
        if found:
            return words(found)
    return text


def schema_of(con, name: str, what: str) -> dict:
    try:
        return {row[0]: row[1] for row in con.sql(f"DESCRIBE {name}").fetchall()}
    except duckdb.Error as exc:
        raise InputError(f"cannot read {what}: {_read_problem(exc)}") from None


def _found(schema: dict) -> str:
    return ", ".join(schema) or "none"


def need_column(schema: dict, column: str, what: str, flag: str) -> None:
    if column not in schema:
        found = _found(schema)
        if len(schema) == 1 and any(sep in found for sep in ",;\t|"):
            raise InputError(f"{what}: its rows could not be split into columns (one column "
                             f"found: {found}); check that every row has the same number of "
                             f"fields")
        raise InputError(f"{what}: no column {column!r} (columns found: {found}); "
                         f"name it with {flag}")


def _missing_named(schema: dict, cols: Columns, role: str, what: str) -> InputError:
    """A column the caller named, absent where it is needed."""
    column, flag = getattr(cols, role), BY_NAME[f"{role}_col"].option
    return InputError(f"{what}: no column {column!r}, named by {flag} (columns found: "
                      f"{_found(schema)}); check {flag}")


def _need_number(schema: dict, column: str, what: str, boolean: bool = False) -> None:
    """A rank, score (numbers) or relevance column (numbers or booleans: the judgments edge,
    ndcg_relevance_number in sql/ndcg_checks.sql, counts true as 1 and false as 0)."""
    if not (NUMBER.match(schema[column]) or (boolean and schema[column] == "BOOLEAN")):
        raise InputError(f"{what}: column {column!r} is {schema[column]}, not a number; "
                         f"convert it, or name another column")


def _id_kind(sql_type: str):
    """'integer' or 'text' for the type of an id, None for a type ids may not have."""
    return "integer" if INTEGER.match(sql_type) else "text" if TEXT_LIKE.match(sql_type) else None


def need_id(sql_type: str, column: str, what: str, listed: bool = False) -> None:
    """Stops on a column of ids (`listed`: of lists of item ids) of a type ids may not have."""
    if _id_kind(sql_type) is None:
        held = (f"a list of {sql_type}, not of item ids" if listed
                else f"{sql_type}, not an id")
        raise InputError(f"{what}: column {column!r} is {held}: {IDS}; convert it")


def recs_layout(schema: dict, cols: Columns, what: str) -> str:
    """Which layout the recommendations are in: 'lists', 'ranks' or 'scores'. A column named by
    the caller must exist where it is used (the rank or score of long rows)."""
    need_column(schema, cols.user, what, flags_for("recommendations", "user"))
    if cols.items in schema and not ("item" in cols.named and cols.item in schema):
        if not _is_list(schema[cols.items]):
            raise InputError(f"{what}: column {cols.items!r} is {schema[cols.items]}, not a list "
                             f"of item ids; give lists, or long rows with --item-col and "
                             f"--rank-col or --score-col")
        return "lists"
    if cols.item not in schema:
        raise InputError(f"{what}: no column {cols.items!r} (a list of item ids) or {cols.item!r} "
                         f"(one item per row) (columns found: {_found(schema)}); name it with "
                         f"--items-col or {flags_for('recommendations', 'item')}")
    named = [role for role in ("rank", "score") if role in cols.named]
    if len(named) == 2:
        raise InputError(f"{what}: --rank-col and --score-col both given: name only the column "
                         f"that orders each user's items", usage=True)
    for role in named:
        if getattr(cols, role) not in schema:
            raise _missing_named(schema, cols, role, what)
    present = named or [role for role in ("rank", "score") if getattr(cols, role) in schema]
    if len(present) == 2:
        raise InputError(f"{what}: has both a {cols.rank!r} and a {cols.score!r} column: say "
                         f"which one orders each user's items, with --rank-col {cols.rank!r} "
                         f"or --score-col {cols.score!r}", usage=True)
    if not present:
        raise InputError(f"{what}: long rows need a column {cols.rank!r} or {cols.score!r} "
                         f"(columns found: {_found(schema)}); name it with --rank-col or "
                         f"--score-col")
    role = present[0]
    _need_number(schema, getattr(cols, role), what)
    return "ranks" if role == "rank" else "scores"


def rels_layout(schema: dict, cols: Columns, what: str) -> str:
    """Which layout the judgments are in: 'long' (with a relevance column), 'binary' (long rows
    of only the user and item: each counts 1) or 'lists'. A relevance column named by the caller
    must exist; a file with columns other than the user and item but no relevance column is an
    error (a typo, another name for it, or the recommendations given as judgments)."""
    need_column(schema, cols.user, what, flags_for("relevance", "user"))
    if cols.item in schema:
        if cols.relevance in schema:
            _need_number(schema, cols.relevance, what, boolean=True)
            return "long"
        if "relevance" in cols.named:
            raise _missing_named(schema, cols, "relevance", what)
        others = [name for name in schema if name not in (cols.user, cols.item)]
        if not others:
            return "binary"
        numeric = [name for name in others if NUMBER.match(schema[name])]
        hint = (f" ({numeric[0]!r} looks numeric: --relevance-col {numeric[0]!r}?)"
                if numeric else "")
        raise InputError(f"{what}: no relevance column {cols.relevance!r} (columns found: "
                         f"{_found(schema)}); name it with --relevance-col{hint}. Only a file "
                         f"of just the user and item columns counts every row as relevant")
    if cols.items in schema and _is_list(schema[cols.items]):
        return "lists"
    raise InputError(f"{what}: no column {cols.item!r} (one judged item per row) or "
                     f"{cols.items!r} (a list of relevant items) (columns found: "
                     f"{_found(schema)}); name it with {flags_for('relevance', 'item')} or "
                     f"--items-col")


class Loaded(NamedTuple):
    layout: str  # of the recommendations: 'lists', 'ranks' or 'scores'
    recs_what: str  # how messages name the recommendations, e.g. "recommendations file x.csv"
    rels_what: str
    recs_countable: bool  # Parquet or in memory: counting its rows costs next to nothing
    as_text: tuple = ()  # ids compared as text: (kind, type in recs, type in rels) for each


def load(con, recs, rels, cols: Columns, recs_format=None, rels_format=None,
         require_rows: bool = True) -> Loaded:
    """Create the views ndcg_recs and ndcg_rels over the inputs, checking their columns.
    require_rows=False accepts an input without rows (the Spark engine's share of a worker).
    rels None: no judgments (the beyond-accuracy metrics read the lists alone), ndcg_recs only
    and rels_what None."""
    recs_src = _attach_own(con, recs, "ndcg_recs_src", recs_format, "recommendations", cols)
    rels_src = (None if rels is None else
                _attach_own(con, rels, "ndcg_rels_src", rels_format, "relevance", cols))
    recs_what, rels_what = recs_src.what, rels_src and rels_src.what
    for name, what in (("ndcg_recs_src", recs_what), ("ndcg_rels_src", rels_what)):
        if what is None:
            continue
        try:
            empty = not con.sql(f"SELECT 1 FROM {name} LIMIT 1").fetchall()
        except duckdb.Error as exc:
            raise InputError(f"cannot read {what}: {_read_problem(exc)}") from None
        if empty and require_rows:
            raise InputError(no_rows(what))
    recs_schema = schema_of(con, "ndcg_recs_src", recs_what)
    layout = recs_layout(recs_schema, cols, recs_what)
    if recs_src.files:
        _one_file_per_user(con, recs_src, cols.of("recommendations"))
    recs_item = (element_type(recs_schema[cols.items]) if layout == "lists"
                 else recs_schema[cols.item])
    need_id(recs_schema[cols.user], cols.user, recs_what)
    need_id(recs_item, cols.items if layout == "lists" else cols.item, recs_what,
            listed=layout == "lists")
    if rels is None:
        _recs_view(con, cols, layout, recs_schema, recs_item, False, False)
        return Loaded(layout, recs_what, None, recs_src.countable)
    rels_schema = schema_of(con, "ndcg_rels_src", rels_what)
    rels_kind = rels_layout(rels_schema, cols, rels_what)
    rels_item = (element_type(rels_schema[cols.items]) if rels_kind == "lists"
                 else rels_schema[cols.item])
    need_id(rels_schema[cols.user], cols.user, rels_what)
    need_id(rels_item, cols.items if rels_kind == "lists" else cols.item, rels_what,
            listed=rels_kind == "lists")
    user_text = ids_as_text(recs_schema[cols.user], rels_schema[cols.user])
    item_text = ids_as_text(recs_item, rels_item)
    as_text = tuple((kind, left, right) for kind, text, left, right in (
        ("user", user_text, recs_schema[cols.user], rels_schema[cols.user]),
        ("item", item_text, recs_item, rels_item)) if text)
    _recs_view(con, cols, layout, recs_schema, recs_item, user_text, item_text)

    rels_user = id_column(cols.user, rels_schema[cols.user], user_text)
    if rels_kind in ("long", "binary"):
        relevance = ident(cols.relevance) if rels_kind == "long" else "1"
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels AS SELECT {rels_user} AS user_id, "
                    f"{id_column(cols.item, rels_item, item_text)} AS item_id, {relevance} AS relevance "
                    f"FROM ndcg_rels_src")
    else:
        con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_rels_lists AS SELECT {rels_user} AS "
                    f"user_id, {id_column(cols.items, rels_item, item_text, True)} AS items "
                    f"FROM ndcg_rels_src")
        con.execute("CREATE OR REPLACE TEMP VIEW ndcg_rels AS "
                    "FROM ndcg_judged_lists('ndcg_rels_lists')")
    return Loaded(layout, recs_what, rels_what, recs_src.countable, as_text)


def _recs_view(con, cols: Columns, layout: str, schema: dict, item: str, user_text: bool,
               item_text: bool) -> None:
    """The view ndcg_recs over ndcg_recs_src: user_id and items (lists), or user_id, item_id and
    rank or score; ids as text where they are compared so (user_text, item_text)."""
    user = id_column(cols.user, schema[cols.user], user_text)
    if layout == "lists":
        body = f"{user} AS user_id, {id_column(cols.items, item, item_text, True)} AS items"
    else:
        order = cols.rank if layout == "ranks" else cols.score
        body = (f"{user} AS user_id, {id_column(cols.item, item, item_text)} AS item_id, "
                f"{ident(order)} AS {layout[:-1]}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW ndcg_recs AS SELECT {body} FROM ndcg_recs_src")


def own_columns(names, cols: Columns, input_role: str, what: str) -> dict:
    """{own name: shared name} for the columns that input (with columns `names`) names its own
    way (--rels-user-col, ...), each checked to exist; both engines read them so."""
    renames = cols.renames(input_role)
    for role, column in renames.items():
        if column not in names:
            flag = own_flag(input_role, role)
            raise InputError(f"{what}: no column {column!r}, named by {flag} (columns found: "
                             f"{', '.join(names) or 'none'}); check {flag}")
    return {column: getattr(cols, role) for role, column in renames.items()}


def _attach_own(con, source, name: str, fmt, role: str, cols: Columns) -> Source:
    """attach_source, then, where the input names the user or item column its own way
    (--rels-user-col, ...), the view `name` with that column under the shared name (a column of
    the shared name in the same file is left out). The column named must exist."""
    if not cols.renames(role):
        return attach_source(con, source, name, fmt, role, cols)
    found = attach_source(con, source, f"{name}_own", fmt, role, cols.of(role))
    schema = schema_of(con, f"{name}_own", found.what)
    renames = own_columns(list(schema), cols, role, found.what)
    dropped = [c for c in schema if c in renames or c in renames.values()]
    select = ", ".join(f"{ident(own)} AS {ident(shared)}" for own, shared in renames.items())
    kept = [c for c in schema if c not in dropped]
    rest = f"* EXCLUDE ({', '.join(ident(c) for c in dropped)}), " if kept else ""
    con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {rest}{select} FROM {name}_own")
    return found


def _one_file_per_user(con, source: Source, cols: Columns) -> None:
    """Recommendations read from several files: each user's rows must come from one of them, or
    a glob that matches two runs would silently evaluate their union."""
    user = ident(cols.user)
    try:
        rows = con.sql(f"SELECT {user}::VARCHAR, min({FILE_COLUMN}), max({FILE_COLUMN}) "
                       f"FROM ({source.reader}) GROUP BY {user} "
                       f"HAVING min({FILE_COLUMN}) <> max({FILE_COLUMN}) LIMIT 1").fetchall()
    except duckdb.Error as exc:
        raise InputError(f"cannot read {source.what}: {_read_problem(exc)}") from None
    if rows:
        (who, first, second), = rows
        raise InputError(user_in_two_files(source.what, who, len(source.files), first, second))


def ids_as_text(left: str, right: str) -> bool:
    """Compare ids as text when one side is text and the other integers."""
    return _id_kind(left) != _id_kind(right)


def id_column(column: str, sql_type: str, as_text: bool, listed: bool = False) -> str:
    """The id column (of type sql_type; `listed`: a list column of such ids) as compared: text
    ids other than VARCHAR (an ENUM, a UUID) as their text, and any id as text when `as_text`."""
    if sql_type == "JSON":
        return (f"list_transform({ident(column)}, lambda x: json_extract_string(x, '$'))"
                if listed else f"json_extract_string({ident(column)}, '$')")
    text = as_text or (_id_kind(sql_type) == "text" and sql_type != "VARCHAR")
    return ident(column) + (("::VARCHAR[]" if listed else "::VARCHAR") if text else "")
