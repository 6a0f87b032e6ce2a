"""Ctrl-C (SIGINT) and SIGTERM stop a run promptly: the command line exits 130 or 143 with one
line saying so, no traceback, an existing output file untouched and no temporary file left; the
Python API raises KeyboardInterrupt and leaves the caller's connection as it was.

Each run reads data big enough to take seconds with one thread; the signal goes once the process
has used a second of CPU time (well inside the evaluation: start-up takes a fraction of that),
and the run must end within a few seconds of it (it would go on for several more otherwise)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import duckdb
import pytest

from conftest import JAVA, ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads the CPU time of the run from /proc")
USERS = 400_000
PROMPT = 5.0  # seconds from the signal to the end of the run, at most


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interrupts")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT u AS user_id, (u * 7 + j) % 1000 AS item_id, (j * 37) % 50 AS score "
                f"FROM range({USERS}) t(u), range(50) s(j)) TO '{folder / 'recs.parquet'}'")
    con.execute(f"COPY (SELECT u AS user_id, (u * 3 + j) % 1000 AS item_id, j % 3 + 1 AS relevance "
                f"FROM range({USERS}) t(u), range(5) s(j)) TO '{folder / 'rels.parquet'}'")
    return folder


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(pid: int) -> float:
    """The CPU time of `pid` and of its live descendants (Spark's JVM and Python workers)."""
    parents = {}
    for entry in os.listdir("/proc"):
        try:
            parents[int(entry)] = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError):
            continue
    tree, total = {pid}, 0.0
    for _ in range(len(parents)):
        grown = tree | {child for child, parent in parents.items() if parent in tree}
        if grown == tree:
            break
        tree = grown
    for member in tree:
        try:
            total += _cpu_seconds(member)
        except OSError:
            pass
    return total


def interrupted(args, signum, cwd, cpu=1.0, measure=_cpu_seconds):
    """Run `args`, send `signum` once it has used `cpu` seconds of CPU (by `measure`); return
    (exit code, stdout, stderr, seconds from the signal to the end)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while process.poll() is None and measure(process.pid) < cpu:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before the signal: give it more data"
    sent = time.monotonic()
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err, time.monotonic() - sent


def cli(*args):
    return [sys.executable, "-c", "from ndcg_duck.cli import main; main()", *map(str, args)]


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("command", ["eval", "eval in batches", "compare"])
def test_a_signal_stops_the_command_line(data, tmp_path, command, signum, code):
    out = tmp_path / "per_user.parquet"
    out.write_bytes(b"the user's own file")
    recs, rels = data / "recs.parquet", data / "rels.parquet"
    if command == "compare":
        args = cli("compare", rels, "--run", f"a={recs}", "--run", f"b={recs}", "-k", "10",
                   "--threads", "1", "--per-user", out)
    else:
        args = cli("eval", recs, rels, "-k", "10", "--threads", "1", "--per-user", out)
        if command == "eval in batches":
            args += ["--batch-users", "20000"]
    status, stdout, stderr, seconds = interrupted(args, signum, tmp_path)
    assert (status, stdout, stderr) == (code, "", "ndcg-duck: interrupted\n")
    assert seconds < PROMPT
    assert out.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["per_user.parquet"]  # no temporary file


@pytest.mark.skipif(not JAVA, reason="no Java runtime (java on PATH or JAVA_HOME): Spark "
                                       "cannot start here")
def test_a_signal_stops_a_spark_run(data, tmp_path):
    """Ctrl-C once Spark's JVM has worked for 10 CPU seconds (reading and scoring): the same one
    line and exit 130, no py4j traceback (SparkContext's own SIGINT handler printed them), the
    user's file untouched, no temporary file or part directory left."""
    out = tmp_path / "per_user.parquet"
    out.write_bytes(b"the user's own file")
    args = cli("eval", data / "recs.parquet", data / "rels.parquet", "-k", "10", "--engine",
               "spark", "--per-user", out)
    status, stdout, stderr, seconds = interrupted(args, signal.SIGINT, tmp_path, cpu=10.0,
                                                  measure=_tree_cpu_seconds)
    assert (status, stdout, stderr) == (130, "", "ndcg-duck: interrupted\n")
    assert seconds < 4 * PROMPT  # the JVM's shutdown shares 2 cores with the other test worker
    assert out.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["per_user.parquet"]


def test_evaluate_raises_keyboard_interrupt_and_leaves_the_connection(data, tmp_path):
    script = textwrap.dedent(f"""
        import duckdb, ndcg_duck
        con = duckdb.connect()
        con.execute("CREATE TEMP TABLE mine AS SELECT 1 AS x")
        con.execute("SET threads = 1")
        before = con.sql("SELECT current_setting('threads'), "
                         "(SELECT count(*) FROM duckdb_tables())").fetchall()
        try:
            ndcg_duck.evaluate({str(data / 'recs.parquet')!r}, {str(data / 'rels.parquet')!r},
                               con=con)
        except KeyboardInterrupt:
            after = con.sql("SELECT current_setting('threads'), "
                            "(SELECT count(*) FROM duckdb_tables())").fetchall()
            print("KeyboardInterrupt", before == after, con.sql("FROM mine").fetchall())
    """)
    status, stdout, stderr, seconds = interrupted([sys.executable, "-c", script], signal.SIGINT,
                                                  tmp_path)
    assert (status, stdout, stderr) == (0, "KeyboardInterrupt True [(1,)]\n", "")
    assert seconds < PROMPT
