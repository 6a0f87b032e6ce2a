"""Progress on stderr for runs that take a while: DuckDB's own query progress, as a percentage."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

DELAY = 2.0  # seconds before anything is shown: quick runs stay quiet
INTERVAL = 0.2


@contextmanager
def progress(con, enabled: bool, stream=None):
    """Show the progress of the queries `con` runs inside the block, on `stream` (stderr), once
    the block has run for DELAY seconds. Nothing when not enabled."""
    stream = stream or sys.stderr
    if not enabled:
        yield
        return
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    done = threading.Event()
    shown = threading.Event()
    start = time.monotonic()

    def show():
        if done.wait(DELAY):
            return
        while not done.is_set():
            try:
                percent = con.query_progress()
            except Exception:  # the connection is busy finishing: try again next tick
                percent = -1
            part = f", {percent:.0f}% of the current step" if percent > 0 else ""
            stream.write(f"\rndcg-duck: {time.monotonic() - start:.0f}s{part}   ")
            stream.flush()
            shown.set()
            done.wait(INTERVAL)

    worker = threading.Thread(target=show, daemon=True)
    worker.start()
    try:
        yield
    finally:
        done.set()
        worker.join()
        if shown.is_set():
            stream.write("\r" + " " * 60 + "\r")
            stream.flush()
