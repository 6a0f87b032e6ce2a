"""Stopping a run on Ctrl-C (SIGINT) or SIGTERM: promptly, cleanly, and saying so.

A Python signal handler runs only when the main thread runs Python code, and a long DuckDB query
(or a Spark job) keeps it in C++ (or in a socket read) for minutes. So `stoppable` also asks
for each signal byte to be written to a pipe (signal.set_wakeup_fd, which the C-level handler
does at once) and a watcher thread that reads the pipe interrupts every DuckDB connection the
run has `watching` (con.interrupt()) and cancels the active Spark jobs. The query then fails at
once, the run's cleanup (temporary files, cursors, settings) runs as the exception unwinds, and
`stoppable` turns whatever surfaced (DuckDB's "Query interrupted", an InputError wrapping it)
into Interrupted, a KeyboardInterrupt: the command line prints one line and exits 128 + the
signal's number (130 for SIGINT, 143 for SIGTERM); the Python API raises it to its caller.

Spark: the handler does not raise while the main thread waits inside a py4j call (raising there
breaks py4j's socket protocol, and py4j prints tracebacks); the watcher cancels the running job,
so the call fails and unwinds, and it goes on cancelling every job the run starts until the run
ends. A SparkContext started inside the block installs a SIGINT handler of its own (one that
calls into py4j from the handler): `reclaim` puts the run's handler back.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from contextlib import contextmanager

MESSAGE = "ndcg-duck: interrupted"


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; `signum` is its number."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _State:
    def __init__(self):
        self.active = False
        self.caught = None  # the first signal's number
        self.raised = False  # whether the handler has raised Interrupted in the main thread
        self.connections = []
        self.handlers = {}  # {signal: the handler the run wants for it (its own, or the caller's)}
        self.lock = threading.Lock()

    def stop(self, signum: int, spark: bool = True) -> bool:
        """Record the first signal and cancel the run's work (Spark's jobs too unless `spark` is
        False); False for a later one."""
        with self.lock:
            if self.caught is not None:
                return False
            self.caught = signum
            connections = list(self.connections)
        for con in connections:
            try:
                con.interrupt()
            except Exception:  # closed already, or between queries
                pass
        if spark:
            _cancel_spark()
        return True


_state = _State()


def _cancel_spark() -> None:
    """Cancel the jobs of an active SparkContext (only when pyspark is in use)."""
    if "pyspark" not in sys.modules:
        return
    try:
        from pyspark import SparkContext

        context = SparkContext._active_spark_context
        if context is not None:
            context.cancelAllJobs()
    except Exception:
        pass


@contextmanager
def watching(con):
    """Interrupt the DuckDB connection `con` (for the block) when the run is stopped."""
    with _state.lock:
        _state.connections.append(con)
        caught = _state.caught
    try:
        if caught is not None:  # stopped before this connection started
            con.interrupt()
        yield con
    finally:
        with _state.lock:
            _state.connections.remove(con)


def reclaim() -> None:
    """Put the run's signal handlers back where a library replaced them: SparkContext sets its
    own SIGINT handler, even where the caller ignored SIGINT (as `nohup` and `&` do)."""
    if _state.active and threading.current_thread() is threading.main_thread():
        for signum, handler in _state.handlers.items():
            signal.signal(signum, handler)


def _inside_py4j(frame) -> bool:
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("py4j"):
            return True
        frame = frame.f_back
    return False


def check() -> None:
    """Raise Interrupted if the run was stopped (for loops between queries)."""
    if _state.active and _state.caught is not None:
        raise Interrupted(_state.caught)


@contextmanager
def stoppable(signals=(signal.SIGINT, signal.SIGTERM)):
    """Run the block so that `signals` stop it promptly, raising Interrupted. Outside the main
    thread (no signal reaches it), or inside another stoppable block, the block just runs. A
    signal whose handler the caller set (not Python's default) is left to that handler."""
    if _state.active or threading.current_thread() is not threading.main_thread():
        yield
        return
    ours = [s for s in signals
            if signal.getsignal(s) in (signal.default_int_handler, signal.SIG_DFL)]
    if not ours:
        yield
        return

    def handler(signum, frame):
        waiting = _inside_py4j(frame)  # the watcher cancels Spark's job: py4j is busy here
        _state.stop(signum, spark=not waiting)
        if not waiting and not _state.raised:  # once, even where the watcher recorded it first
            _state.raised = True
            raise Interrupted(_state.caught)

    read, write = os.pipe()
    os.set_blocking(write, False)
    previous = {s: signal.signal(s, handler) for s in ours}
    old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _state.active, _state.caught, _state.raised = True, None, False
    _state.handlers = {s: handler if s in ours else signal.getsignal(s) for s in signals}

    def watch():
        while True:
            stopped = _state.caught is not None
            if not select.select([read], [], [], 0.1 if stopped else None)[0]:
                _cancel_spark()  # stopped: no job the run starts afterwards may run either
                continue
            data = os.read(read, 64)
            for number in data:
                if number in ours:
                    _state.stop(number)
            if not data or 0 in data:  # closed, or told to stop (no signal is number 0)
                return

    watcher = threading.Thread(target=watch, name="ndcg-duck-interrupts", daemon=True)
    watcher.start()
    try:
        try:
            yield
        except BaseException as exc:
            if _state.caught is not None:
                raise Interrupted(_state.caught) from None
            if isinstance(exc, KeyboardInterrupt):  # another SIGINT handler's (SparkContext's,
                raise Interrupted(signal.SIGINT) from None  # before `reclaim`)
            raise
        if _state.caught is not None:
            raise Interrupted(_state.caught)
    finally:
        signal.set_wakeup_fd(old_fd)
        for s, old in previous.items():
            signal.signal(s, old)
        os.write(write, b"\0")
        watcher.join()
        os.close(read)
        os.close(write)
        _state.active, _state.handlers = False, {}
