"""Progress on stderr for runs that take a while: the step the run is at and, when it runs in
batches of users, the batches done of the total, a percentage and an estimate of the time left.

The run reports through step(), batches() and watch(); they do nothing unless a display is
shown (the CLI shows one when stderr is a terminal and --quiet is not given).
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator, Optional

DELAY = 2.0  # seconds before anything is shown: quick runs stay quiet
INTERVAL = 0.5
WIDTH = 79


class Display:
    """What the run is doing, written over one line of `stream`."""

    def __init__(self, stream):
        self.stream = stream
        self.start = time.monotonic()
        self.step_name = "starting"
        self.done = 0
        self.total = 0
        self.batches_started: Optional[float] = None
        self.con = None
        self.shown = False
        self.lock = threading.Lock()

    def line(self) -> str:
        now = time.monotonic()
        parts = [f"ndcg-duck: {self.step_name}"]
        if self.total > 1:
            parts.append(f"batch {min(self.done + 1, self.total)} of {self.total} "
                         f"({100 * self.done // self.total}% done)")
        elif self.con is not None:
            try:
                percent = self.con.query_progress()
            except Exception:  # the connection is between queries: nothing to say
                percent = -1
            if percent > 0:
                parts.append(f"{percent:.0f}% of this query")
        parts.append(f"{now - self.start:.0f}s")
        if self.total > 1 and self.done and self.batches_started is not None:
            left = (now - self.batches_started) / self.done * (self.total - self.done)
            parts.append(f"about {_duration(left)} left")
        return ", ".join(parts)

    def show(self, force: bool = False) -> None:
        """Write the line, once DELAY has passed (at once when `force`)."""
        if not force and time.monotonic() - self.start < DELAY:
            return
        with self.lock:
            text = self.line()[:WIDTH]
            self.stream.write("\r" + text.ljust(WIDTH))
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        with self.lock:
            if self.shown:
                self.stream.write("\r" + " " * WIDTH + "\r")
                self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


_current: ContextVar[Optional[Display]] = ContextVar("ndcg_duck_progress", default=None)


@contextmanager
def shown(enabled: bool, stream=None):
    """Show the progress of the run inside the block on `stream` (stderr), from DELAY seconds on,
    and clear the line at the end. Nothing when not enabled."""
    if not enabled:
        yield
        return
    display = Display(stream or sys.stderr)
    token = _current.set(display)
    done = threading.Event()

    def tick():
        while not done.wait(INTERVAL):
            display.show()

    worker = threading.Thread(target=tick, daemon=True)
    worker.start()
    try:
        yield display
    finally:
        done.set()
        worker.join()
        _current.reset(token)
        display.clear()


def watch(con) -> None:
    """The connection whose query progress to show between batch updates."""
    display = _current.get()
    if display is not None:
        display.con = con
        con.execute("SET enable_progress_bar = true")
        con.execute("SET enable_progress_bar_print = false")


def step(name: str) -> None:
    """The run has started a new step."""
    display = _current.get()
    if display is not None:
        display.step_name = name
        display.done = display.total = 0
        display.show()


def batches(ranges: Iterable) -> Iterator:
    """Each batch of `ranges` in turn, counted for the display."""
    ranges = list(ranges)
    display = _current.get()
    if display is None:
        yield from ranges
        return
    display.total, display.done = len(ranges), 0
    display.batches_started = time.monotonic()
    for item in ranges:
        display.show()
        yield item
        display.done += 1
    display.show()
