"""The one owner of every child process the workbook starts.

Compilers, kernel launchers, MAX graph workers and compute-sanitizer all start
through `Children.start`, and every way out stops them:
- a normal end: each child is waited for, or killed at its time limit;
- Ctrl-C, SIGTERM, SIGHUP: `guard()` turns them into KeyboardInterrupt in the
  main thread, and stops every child of every `Children` before exiting;
- an exception anywhere: `Children` is a context manager that kills what is
  left on the way out;
- the workbook itself killed with SIGKILL: every child asks the kernel to kill
  it when its parent dies (PR_SET_PDEATHSIG, set by `workbook._exec` before it
  execs the program, and by the worker and the launchers themselves), and
  enforces its own time limit.

Children run in process groups of their own, so a kill reaches everything a
child started, and the terminal's Ctrl-C reaches only the workbook, which
then stops them in order.

One rule keeps PR_SET_PDEATHSIG safe: it fires when the *thread* that started
the child ends, so a child is always waited for by the thread that started it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

POLL = 0.05
SOFT_GRACE = 1.0  # seconds a child asked to stop has to say where it was
_ALL: weakref.WeakSet[Children] = weakref.WeakSet()


class Cancelled(Exception):
    """The run was stopped from outside (a newer save in watch mode, or quitting)."""


@dataclass
class Outcome:
    """How a wait ended: the exit code, or a time limit, or a cancel."""

    returncode: int | None
    timed_out: bool = False
    cancelled: bool = False
    seconds: float = 0.0


class Child:
    def __init__(self, proc: subprocess.Popen, log: Path | None):
        self.proc = proc
        self.log = log
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self, limit: int = 4000) -> str:
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")[-limit:]


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_tree(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """Kill a child, its process group and everything it started, however deep,
    then reap it. The child is stopped first, so it can start nothing new."""
    family = _descendants(proc.pid)
    for p in [psutil.Process(proc.pid)] if proc.poll() is None else []:
        with contextlib.suppress(psutil.Error):
            p.suspend()
    family += [p for p in _descendants(proc.pid) if p not in family]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for p in family:
        with contextlib.suppress(psutil.Error):
            p.kill()
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    for p in family:
        with contextlib.suppress(psutil.Error):
            p.wait(timeout=max(0.0, deadline - time.monotonic()))


class Children:
    """The child processes of one run; `cancel()` (from any thread) stops them all."""

    def __init__(self) -> None:
        self._live: list[Child] = []
        self._lock = threading.Lock()
        self.cancelled = threading.Event()
        _ALL.add(self)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc) -> None:
        self.kill_all()

    def start(self, argv: list[str], *, log: Path | None = None, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> Child:
        """Start a program in a process group of its own, dying with this process."""
        if self.cancelled.is_set():
            raise Cancelled()
        out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed right after Popen
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "workbook._exec", str(os.getpid()), *argv],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})}, cwd=str(cwd) if cwd else None, start_new_session=True,
            )
        finally:
            if log:
                out.close()
        child = Child(proc, log)
        with self._lock:
            self._live.append(child)
        return child

    def wait(self, child: Child, limit: Callable[[], float | None] | float | None = None,
             tick: Callable[[], None] | None = None, soft: int | None = None) -> Outcome:
        """Wait for a child; kill it past its time limit (`limit` may be a function,
        asked again at each poll: the limit can depend on what the child is doing).
        `soft`: a signal that asks the child to stop and say where it was, sent at the
        limit; it is killed if it has not ended a moment later."""
        while child.proc.poll() is None:
            if self.cancelled.is_set():
                self.kill(child)
                return Outcome(None, cancelled=True, seconds=time.monotonic() - child.started)
            seconds = limit() if callable(limit) else limit
            if seconds is not None and time.monotonic() - child.started > seconds:
                if soft is not None:
                    with contextlib.suppress(OSError):
                        child.proc.send_signal(soft)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        child.proc.wait(SOFT_GRACE)
                self.kill(child)
                return Outcome(child.proc.returncode, timed_out=True, seconds=time.monotonic() - child.started)
            if tick:
                tick()
            time.sleep(POLL)
        self.kill(child)  # it ended; this reaps anything it left behind
        seconds = time.monotonic() - child.started
        if self.cancelled.is_set():  # killed by a cancel from another thread
            return Outcome(None, cancelled=True, seconds=seconds)
        return Outcome(child.proc.returncode, seconds=seconds)

    def run(self, argv: list[str], *, timeout: float, log: Path, cwd: Path | None = None,
            env: dict[str, str] | None = None, tick: Callable[[], None] | None = None) -> Outcome:
        return self.wait(self.start(argv, log=log, cwd=cwd, env=env), timeout, tick)

    def kill(self, child: Child) -> None:
        kill_tree(child.proc)
        with self._lock:
            if child in self._live:
                self._live.remove(child)

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for child in live:
            self.kill(child)

    def cancel(self) -> None:
        """Stop everything this run started, and refuse to start more."""
        self.cancelled.set()
        self.kill_all()

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()


def kill_everything() -> None:
    """Every child of every run in this process (the last thing before exiting)."""
    for children in list(_ALL):
        children.cancel()


def _interrupt(signum, frame):  # noqa: ARG001 - the signal handler signature
    raise KeyboardInterrupt


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """For the main thread of a command: SIGTERM and SIGHUP end it like Ctrl-C,
    and nothing it started outlives it, however it ends."""
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                saved[sig] = signal.signal(sig, _interrupt)
    try:
        yield
    finally:
        kill_everything()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
