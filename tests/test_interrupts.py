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

from conftest import ROOT

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


def interrupted(args, signum, cwd):
    """Run `args`, send `signum` once it has used a second of CPU; return (exit code, stdout,
    stderr, seconds from the signal to the end)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while process.poll() is None and _cpu_seconds(process.pid) < 1.0:
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
