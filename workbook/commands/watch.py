"""`workbook watch [ID]`: run a puzzle, and again on each save that changes its files."""

from __future__ import annotations

import contextlib
import signal
import threading

from .. import exitcodes
from ..i18n import t
from ..watch import TerminalKeys, Watcher
from .common import console, resolve


def _stop(signum, frame):  # noqa: ARG001 - signal handler signature
    raise KeyboardInterrupt


@contextlib.contextmanager
def _quit_on_signals():
    """SIGTERM or a closed terminal (SIGHUP) quit like Ctrl-C: the run in progress is killed first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            saved[sig] = signal.signal(sig, _stop)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def watch(puzzle_id: str | None) -> int:
    if puzzle_id is not None:
        resolve(puzzle_id)  # an unknown id is exit 2 with the closest ids, before anything starts
    with _quit_on_signals(), TerminalKeys() as keys:
        if not keys.active:
            console.print(t("watch.no_keys"), style="dim")
        Watcher(puzzle_id, keys, console).run()
    return exitcodes.OK
