"""Reading and writing on Spark: the inputs as Spark DataFrames (Parquet, CSV, JSON, TREC, a file,
a directory of part files or a glob), the default engine's check that each user's
recommendations come from one file, and the per-user rows written as one file or as part files.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Optional

import duckdb
import pyarrow as pa

from .. import objectstore, outcome, sqltext
from ..errors import InputError
from ..evaluation import inputs
from ..report import output
from .columns import col
from .driver import connection as driver_connection
from .launch import first_line as _first_line
from .workers import connection as _connection


def refuse_s3(given, endpoint=None) -> None:
    """Spark reads object stores through Hadoop's s3a connector, whose jars (hadoop-aws) are not
    part of pyspark: an s3:// input or output, given as (the caller's words, path) pairs, or
    --s3-endpoint (`endpoint`), is an error that says what to configure."""
    if endpoint is not None:
        raise InputError(f"--s3-endpoint is the default engine's: with --engine spark, name the "
                         f"store with --spark-conf spark.hadoop.fs.s3a.endpoint={endpoint}",
                         usage=True)
    for said, path in given:
        if objectstore.is_url(path):
            s3a = "s3a://" + str(path)[len(objectstore.SCHEME):]
            raise InputError(
                f"{said} {path}: --engine spark reads and writes object stores through Hadoop's "
                f"s3a connector, not s3://: give {s3a} and add the hadoop-aws jars of your "
                f"Spark's Hadoop version (--spark-conf spark.jars.packages=org.apache.hadoop:"
                f"hadoop-aws:VERSION; spark.hadoop.fs.s3a.endpoint=URL for another store), or "
                f"leave out --engine spark: the default engine reads s3:// itself", usage=True)


def read(spark, path, fmt: Optional[str], role: str, cols: inputs.Columns = inputs.Columns()):
    """A Spark DataFrame over a file, a directory of part files, a glob, or a table of the
    session's catalog given as table:NAME (read_table)."""
    import glob

    if inputs.table_name(path) is not None:
        return read_table(spark, inputs.table_name(path), fmt, role)
    path = str(path)
    refuse_s3([(f"{role} file", path)])
    remote = "://" in path
    if not remote and not inputs.has_glob(path) and not Path(path).exists():
        raise InputError(outcome.no_file(role, path))
    sample = None
    if not remote and inputs.has_glob(path):
        matches = sorted(glob.glob(path, recursive=True))
        if not matches:
            raise InputError(outcome.no_match(role, path))
        sample = matches[0]
    fmt = fmt or (_format_inside(path) if not remote and Path(path).is_dir() else None) \
        or inputs.format_of(path, None, role, sample=sample)
    where = path if remote else os.path.abspath(path)  # the JVM's directory may be another
    return _read(spark, path, where, fmt, role, cols.of(role))  # engine.run: own names


def own_names(df, cols: inputs.Columns, role: str, what: str):
    """The DataFrame with the input's own user or item column (--rels-user-col, ...) under the
    shared name, as the default engine reads it (inputs.own_columns)."""
    renames = inputs.own_columns(df.columns, cols, role, what)
    if not renames:
        return df
    return df.select(*[col(name) for name in df.columns
                       if name not in renames and name not in renames.values()],
                     *[col(own).alias(shared) for own, shared in renames.items()])


def _read(spark, path: str, where: str, fmt: str, role: str, cols: inputs.Columns):
    """The file(s) at `path` (`where` for the JVM) in format `fmt` as a DataFrame."""
    try:
        if fmt == "trec":
            return _read_trec(spark, path, where, role, cols)
        if fmt == "csv":
            sep = "\t" if path.lower().rstrip("/").endswith(".tsv") else ","
            df = spark.read.csv(where, header=True, inferSchema=True, sep=sep)
            # whole numbers as DuckDB's CSV reader types them (BIGINT), not Spark's INT
            df = df.select(*[col(f.name).cast("long") if f.dataType.typeName() == "integer"
                             else col(f.name) for f in df.schema.fields])
            return _special_numbers(df, [cols.rank, cols.score] if role == "recommendations"
                                    else [cols.relevance])

        if fmt == "recbole":  # tab-separated, headers NAME:TYPE: each column under its NAME
            df = spark.read.csv(where, header=True, inferSchema=True, sep="\t")
            return df.select(*[(col(f.name).cast("long") if f.dataType.typeName() == "integer"
                                else col(f.name)).alias(f.name.rsplit(":", 1)[0])
                               for f in df.schema.fields])
        if fmt == "json":
            df = spark.read.json(where)
            if "_corrupt_record" in df.columns:  # one JSON document (an array), not JSON lines
                df = spark.read.json(where, multiLine=True)
            return df
        return spark.read.parquet(where)
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        raise InputError(f"cannot read {role} file {path}: {_first_line(str(exc))}") from None


SEE_TABLES = ("see the tables with SHOW TABLES IN DATABASE in spark-sql, or "
              "spark.catalog.listTables('DATABASE') in pyspark")


def read_table(spark, name: str, fmt: Optional[str], role: str):
    """The table `name` (table:NAME, perhaps qualified: db.recs, catalog.db.recs) of the
    session's catalog, whatever stores it (Hive, Delta, Iceberg), as a Spark DataFrame; a name
    that matches no table is an error that says how to list them."""
    option = {"recommendations": "--recs-format", "relevance": "--rels-format"}[role]
    if fmt is not None:
        raise InputError(f"{option} {fmt}: {role} table {name} is a table, whose columns the "
                         f"catalog gives: leave out {option}", usage=True)
    try:
        if not spark.catalog.tableExists(name):
            raise InputError(f"{role} table {name}: no such table in the Spark session's "
                             f"catalog; {SEE_TABLES}")
        return spark.table(name)
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        raise InputError(f"cannot read {role} table {name}: {_first_line(str(exc))}") from None


# a CSV number as DuckDB's reader takes it, nan and inf included (Spark's takes NaN and Inf only)
CSV_NUMBER = r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))\s*$"


def _special_numbers(df, names):
    """The named CSV columns that Spark read as text only because they hold nan or inf (as DuckDB's
    reader does not), as DOUBLE, so that the macros' own checks name the value as on the default
    engine. A pass over the column only when it came out as text (which is otherwise an error)."""
    from pyspark.sql import functions as F

    text = [f.name for f in df.schema.fields
            if f.name in names and f.dataType.typeName() == "string"]
    for name in text:
        if not df.filter(col(name).isNotNull() & ~col(name).rlike(CSV_NUMBER)).limit(1).count():
            df = df.withColumn(name, F.trim(col(name)).cast("double"))
    return df


TREC_FILE = "__ndcg_file"  # the file a TREC line came from, for check_one_file_per_user


def _read_trec(spark, path: str, where: str, role: str, cols: inputs.Columns):
    """A TREC run or qrels: Spark reads the lines, each worker parses its share with the macros
    the default engine reads TREC files with (ndcg_trec_run_lines, ndcg_trec_qrels_lines), so a
    bad line stops the run with the same message, naming the file as it was given."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    reader, value = inputs.TREC_READERS[role]
    reader = reader + "_lines"
    value_col = getattr(cols, value)
    schema = pa.schema([(cols.user, pa.string()), (cols.item, pa.string()),
                        (value_col, pa.float64()), (TREC_FILE, pa.string())])
    relative = None if remote_or_absolute(path) else os.getcwd()

    def parse(batches):
        from urllib.parse import unquote

        import pyarrow.compute as pc

        con = _connection(())
        for batch in batches:
            names = [unquote(re.sub(r"^file:(//)?", "", name))
                     for name in batch.column(0).to_pylist()]
            if relative is not None:
                names = [os.path.relpath(name, relative) for name in names]
            lines = pa.table({"filename": names, "line": batch.column(1)})
            for name in dict.fromkeys(names):  # a batch is mostly one file's lines
                con.register("ndcg_trec_lines_in", lines.filter(
                    pc.equal(lines.column(0), name)))
                try:
                    table = con.sql(f"SELECT user_id, item_id, {value}, "
                                    f"{sqltext.literal(name)} AS filename "
                                    f"FROM {reader}('ndcg_trec_lines_in')").to_arrow_table()
                except duckdb.Error as exc:
                    raise RuntimeError(str(exc).strip().splitlines()[0]) from None
                finally:
                    con.unregister("ndcg_trec_lines_in")
                yield from table.rename_columns(schema.names).cast(schema).to_batches()

    lines = spark.read.text(where).select(F.input_file_name().alias("filename"),
                                         F.col("value").alias("line"))
    return lines.mapInArrow(parse, from_arrow_schema(schema))


def remote_or_absolute(path: str) -> bool:
    return "://" in path or os.path.isabs(path)


def check_one_file_per_user(df, what: str, user_col: str) -> None:
    """The default engine's check on recommendations read from several files: each user's rows
    come from one of them (else a glob that matches two runs would evaluate their union)."""
    from pyspark.sql import functions as F

    files = df.inputFiles()
    if len(files) < 2 or user_col not in df.columns:
        return
    file = col(TREC_FILE) if TREC_FILE in df.columns else F.input_file_name()
    rows = (df.select(col(user_col).cast("string").alias("u"), file.alias("f"))
            .groupBy("u").agg(F.min("f").alias("first"), F.max("f").alias("second"))
            .filter("first <> second").limit(1).collect())
    if rows:
        who, first, second = rows[0]
        first, second = (re.sub(r"^file:(//)?", "", name) for name in (first, second))
        raise InputError(outcome.user_in_two_files(what, who, len(files), first, second))


def _format_inside(folder: str) -> Optional[str]:
    """The format of a directory of part files, from its first data file's name."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        for name in sorted(files):
            if not name.startswith(("_", ".")):
                try:
                    return inputs.format_of(name, None, "recommendations")
                except InputError:
                    return None
    return None


def is_directory_output(path: str) -> bool:
    """--per-user OUT/ (or a URI) is a directory of Parquet part files written by Spark."""
    return path.endswith(("/", os.sep)) or "://" in path


def check_output(path: str) -> None:
    """--per-user OUT before Spark starts: a file or a directory to create (a catalog table,
    table:NAME, is checked once the session is up: check_table_output)."""
    if inputs.table_name(path) is not None:
        return
    if not is_directory_output(path):
        output.check_output_path(path)
    elif "://" not in path and Path(path).exists():
        raise InputError(f"output directory {path} exists: remove it or name another", usage=True)


def check_table_output(spark, path) -> None:
    """--per-user table:NAME, before any work: a new table of the session's catalog (an
    existing one, an input table among them, is never replaced)."""
    name = inputs.table_name(path)
    if name is not None and spark.catalog.tableExists(name):
        raise InputError(f"--per-user {path}: table {name} exists: drop it or name another "
                         f"table", usage=True)


def write_per_user(rows, path: str, user_col: str, order=None) -> None:
    """Spark writes the per-user rows as Parquet part files: into the directory `path`, or into
    a temporary directory that DuckDB then copies, ordered by user (or by `order`, SQL over the
    rows' columns), into the one file `path`
    (written whole or not at all, as the default engine writes it); for table:NAME, as the new
    table NAME of the session's catalog (saveAsTable, which refuses an existing table)."""
    if inputs.table_name(path) is not None:
        rows.write.mode("errorifexists").saveAsTable(inputs.table_name(path))
        return
    if is_directory_output(path):
        rows.write.parquet(path)
        return
    target = Path(path)
    parts = target.with_name(f".{target.name}.{os.getpid()}.parts")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    con = driver_connection()
    try:
        rows.write.mode("overwrite").parquet(str(parts))
        con.execute(f"COPY (FROM read_parquet({sqltext.literal(str(parts / '*.parquet'))}) "
                    f"ORDER BY {order or sqltext.ident(user_col)}) TO {sqltext.literal(str(tmp))} "
                    f"{output.OUTPUT_FORMATS[target.suffix.lower()]}")
        os.replace(tmp, target)
    except (duckdb.Error, OSError) as exc:
        raise InputError(output.cannot_write(path, exc)) from None
    finally:
        con.close()
        shutil.rmtree(parts, ignore_errors=True)
        if tmp.exists():
            tmp.unlink()
