"""Starting Spark for a command line run (eval and compare --engine spark), and its log rule.

Without --progress (show_progress False) the JVM's own output goes to a temporary log file. The
rule, the same for eval and compare (cli_session): the log is deleted after the run, unless the
run failed in Spark (its message then names the log: "(Spark's log: PATH)") or Spark could not
start (session's message names it: "(its log: PATH)"); a log a message names is kept.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Optional

from .. import interrupts
from ..errors import InputError

INSTALL = ("the Spark engine needs pyspark and Java 17 or newer: pip install 'ndcg-duck[spark]', "
           "and install a Java 17+ runtime (java on PATH, or JAVA_HOME)")


def first_line(text: str) -> str:
    """A message's first non-blank line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "no message"


LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"


def parse_conf(pairs) -> dict:
    """--spark-conf KEY=VALUE pieces as a dict."""
    conf = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--spark-conf {pair!r} is not KEY=VALUE, as in "
                             f"spark.executor.memory=4g", usage=True)
        conf[key.strip()] = value
    return conf


def session(master: str, conf: dict, show_progress: bool, log):
    """A Spark session for one CLI run, and whether this run started it. The JVM's own output goes to `log` (an open file), or
    to the terminal with Spark's progress bar when show_progress; Spark's loggers stay quiet
    there (a refused input is reported by ndcg-duck, in one line)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError(INSTALL) from None
    java = (f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()} "
            f"-Dndcg_duck.log_level={'off' if show_progress else 'warn'}")
    conf = dict(conf)
    python = _local_python(master, conf)
    conf["spark.driver.extraJavaOptions"] = (java + " " + conf.get(
        "spark.driver.extraJavaOptions", "")).strip()
    conf.setdefault("spark.ui.showConsoleProgress", str(show_progress).lower())
    builder = SparkSession.builder.master(master).appName("ndcg-duck")
    for key, value in conf.items():
        builder = builder.config(key, value)
    if SparkSession.getActiveSession() is not None:  # in a notebook or a test: use it, keep it
        return builder.getOrCreate(), False
    saved, environment = os.dup(2), os.environ.get("PYSPARK_PYTHON")
    try:
        if log is not None:  # the JVM inherits stderr when it starts: give it the log file
            os.dup2(log.fileno(), 2)
        if python:  # pyspark reads the workers' interpreter from the environment
            os.environ["PYSPARK_PYTHON"] = python
        spark = builder.getOrCreate()
        interrupts.reclaim()  # SparkContext replaced the SIGINT handler with its own
        return spark, True
    except Exception as exc:
        where = f" (its log: {log.name})" if log is not None else ""
        raise InputError(f"could not start Spark at {master}{where}: {first_line(str(exc))}; "
                         f"{INSTALL}") from None
    finally:
        if python and environment is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        os.dup2(saved, 2)
        os.close(saved)


def _local_python(master: str, conf: dict) -> Optional[str]:
    """With a local master, the workers run the interpreter ndcg-duck runs in (the one that has
    duckdb), not the `python3` on PATH, unless the user chose one (--spark-conf
    spark.pyspark.python, or PYSPARK_PYTHON): the interpreter set in `conf`, or None."""
    if not master.startswith("local") or os.environ.get("PYSPARK_PYTHON") \
            or "spark.pyspark.python" in conf:
        return None
    import sys

    conf["spark.pyspark.python"] = sys.executable
    conf.setdefault("spark.pyspark.driver.python", sys.executable)
    return sys.executable



def log_rule(message: str, log: Optional[str]) -> tuple:
    """(the message to show, whether to keep the log file `log` (its path, or None without a
    log)) for a run that stopped with InputError `message`: a Spark failure names the log, and
    a log a message names is kept."""
    if log is None:
        return message, False
    if message.startswith("Spark failed"):
        return f"{message} (Spark's log: {log})", True
    return message, message.startswith("could not start")


@contextlib.contextmanager
def cli_session(master: str, conf: dict, show_progress: bool):
    """The Spark session of one command line run (session), its JVM output in a temporary log
    unless show_progress; stopped at the end if this run started it, the log kept or deleted
    by log_rule (the message of a failure says where the kept log is)."""
    import tempfile
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support")
    log = None if show_progress else tempfile.NamedTemporaryFile(
        "w", prefix="ndcg-duck-spark-", suffix=".log", delete=False)
    spark, owned, keep = None, False, False
    try:
        spark, owned = session(master, conf, show_progress, log)
        yield spark
    except InputError as exc:
        text, keep = log_rule(str(exc), log and log.name)
        if text != str(exc):
            raise InputError(text, usage=exc.usage) from None
        raise
    finally:
        if owned:
            spark.stop()
        if log is not None:
            log.close()
            if not keep:
                os.unlink(log.name)
