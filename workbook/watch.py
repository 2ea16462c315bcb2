"""Watch mode: run a puzzle, run it again on each save that changes its files, redraw the report.

`Watcher` is the loop, and needs no terminal: keys come from a callable (`read_key(timeout)`
returns a key or None), the report goes to a Rich console, and `stop()` may end it. Each run is
a child `python -m workbook run ID` whose output is captured; when it ends the screen is cleared
and the output printed. A newer save cancels a run still going, and quitting kills the run's
whole process tree (its device workers run in sessions of their own, so a process-group kill of
the run would miss them).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

import psutil
import typer
from rich.console import Console
from rich.text import Text

from . import build, catalog, state
from .i18n import language, t

POLL = 0.3  # seconds between looks at the puzzle's files

KeyReader = Callable[[float], "str | None"]


@dataclass
class Run:
    """One child run of `workbook run`."""

    target: str  # what was passed to `workbook run`: an id, or id.part
    digest: str  # the learner files' content when it started
    proc: subprocess.Popen
    output: IO[bytes]
    started: float
    returncode: int | None = None
    cancelled: bool = False
    text: str = ""


def _gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def kill_tree(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """Kill a child and everything it started, however deep, and wait until they are gone.

    The child is stopped first so that it cannot start anything new while its descendants are
    collected; the descendants die while it still holds them, then it dies and is reaped."""
    family: list[psutil.Process] = []
    try:
        top = psutil.Process(proc.pid)
        try:
            top.suspend()
        except psutil.Error:
            pass
        seen: set[int] = set()
        for _ in range(5):  # stop each wave of descendants, then look again for ones they just started
            wave = [p for p in top.children(recursive=True) if p.pid not in seen]
            if not wave:
                break
            for p in wave:
                seen.add(p.pid)
                family.append(p)
                try:
                    p.suspend()
                except psutil.Error:
                    pass
    except psutil.Error:
        pass
    for p in family:
        try:
            p.kill()
        except psutil.Error:
            pass
    deadline = time.monotonic() + timeout
    while family and not all(_gone(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        proc.kill()
    except OSError:
        pass
    proc.wait()


class Watcher:
    """The watch loop for one puzzle at a time; `run()` returns when the learner quits."""

    def __init__(
        self,
        puzzle_id: str | None,
        read_key: KeyReader,
        out: Console,
        stop: Callable[[], bool] | None = None,
        command: Callable[[str], list[str]] | None = None,
        poll: float = POLL,
    ):
        self.requested = puzzle_id
        self.read_key = read_key
        self.out = out
        self.stop = stop or (lambda: False)
        self.command = command
        self.poll = poll
        self.target = ""  # the id (or id.part) being watched
        self.puzzle: catalog.Puzzle | None = None
        self.runs: list[Run] = []
        self.current: Run | None = None
        self.last_digest: str | None = None
        self.quitting = False

    # --- what to run -------------------------------------------------------------------------

    def argv(self, target: str) -> list[str]:
        if self.command is not None:
            return self.command(target)
        return [sys.executable, "-m", "workbook", "--lang", language(), "run", target]

    def env(self) -> dict[str, str]:
        env = dict(os.environ, COLUMNS=str(self.out.width), PYTHONUNBUFFERED="1")
        env.pop("LINES", None)
        if self.out.is_terminal:
            env["FORCE_COLOR"] = "1"
        else:
            env.pop("FORCE_COLOR", None)
        return env

    def _select(self, target: str) -> None:
        pid, _part = catalog.resolve_id(target)
        self.puzzle = catalog.load(pid)
        self.target = target
        self.last_digest = None

    def next_pending(self) -> catalog.Puzzle | None:
        """The next puzzle not yet passed, other than this one: after it in order, else before it."""
        current = state.load()
        puzzles = catalog.all_puzzles()
        ids = [p.id for p in puzzles]
        here = ids.index(self.puzzle.id) + 1 if self.puzzle and self.puzzle.id in ids else 0
        for puzzle in puzzles[here:] + puzzles[:here]:
            if (self.puzzle is None or puzzle.id != self.puzzle.id) and current.of(puzzle.id).status != "pass":
                return puzzle
        return None

    def digest(self) -> str:
        return build.digest_of(self.puzzle.learner_files())

    # --- runs ----------------------------------------------------------------------------------

    def start(self) -> None:
        self.cancel()
        digest = self.digest()
        self.last_digest = digest
        output = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            self.argv(self.target), stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            env=self.env(), start_new_session=True,  # Ctrl-C reaches the watch, which then stops the run
        )
        self.current = Run(self.target, digest, proc, output, time.monotonic())
        self.runs.append(self.current)

    def cancel(self) -> None:
        """Stop the run in progress, if any, with everything it started."""
        run, self.current = self.current, None
        if run is None:
            return
        if run.proc.poll() is None:
            run.cancelled = True
        kill_tree(run.proc)
        run.returncode = run.proc.returncode
        run.output.close()

    def _finished(self) -> None:
        run = self.current
        if run is None or run.proc.poll() is None:
            return
        self.current = None
        kill_tree(run.proc)  # it has ended; this reaps it and anything it left behind
        run.returncode = run.proc.returncode
        run.output.seek(0)
        run.text = run.output.read().decode("utf-8", errors="replace")
        run.output.close()
        self.redraw(run)

    def redraw(self, run: Run) -> None:
        self.out.clear()
        self.out.print(t("watch.header", id=run.target, time=time.strftime("%H:%M:%S")), style="dim")
        self.out.print(Text.from_ansi(run.text.rstrip("\n")), soft_wrap=True)
        if run.returncode == 0 and state.load().of(self.puzzle.id).status == "pass":
            following = self.next_pending()
            if following is None:
                self.out.print(t("watch.passed_last", id=self.puzzle.id), style="bold green")
            else:
                self.out.print(t("watch.passed", id=self.puzzle.id, next=following.id), style="bold green")
        self.status_line()

    def status_line(self) -> None:
        self.out.rule(style="dim")
        self.out.print(t("watch.watching", id=self.target), style="dim")
        self.out.print(t("watch.keys"), style="bold")

    # --- keys ----------------------------------------------------------------------------------

    def on_key(self, key: str) -> None:
        key = key.lower()
        if key in ("q", "\x03", "\x04"):
            self.quitting = True
        elif key == "r":
            self.out.print(t("watch.running", id=self.target), style="dim")
            self.start()
        elif key == "h":
            self.show_hint()
        elif key == "n":
            following = self.next_pending()
            if following is None:
                self.out.print(t("watch.no_next"), style="yellow")
                return
            self.cancel()
            self._select(following.id)
            self.out.print(t("watch.switched", id=following.id), style="bold")
            self.start()

    def show_hint(self) -> None:
        """The puzzle's next hint, from the hint command itself, printed below the report."""
        from .commands import hint as hint_command

        saved = hint_command.console
        hint_command.console = self.out
        try:
            hint_command.hint(self.target, False)
        except (typer.Exit, SystemExit):  # a failed lookup: its message is already printed
            pass
        finally:
            hint_command.console = saved

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> int:
        if self.requested is None:
            from .commands.run import next_pending

            first = next_pending(catalog.all_puzzles(), state.load())
            if first is None:
                self.out.print(t("run.all_done"))
                return 0
            self._select(first.id)
        else:
            self._select(self.requested)
        self.out.print(t("watch.running", id=self.target), style="dim")
        try:
            self.start()
            while not self.quitting and not self.stop():
                key = self.read_key(self.poll)
                if key:
                    self.on_key(key)
                    if self.quitting:
                        break
                self._finished()
                digest = self.digest()
                if digest != self.last_digest:
                    if self.current is not None:
                        self.cancel()
                        self.out.print(t("watch.cancelled"), style="yellow")
                    self.out.print(t("watch.changed", id=self.target), style="dim")
                    self.start()
        except KeyboardInterrupt:
            pass
        finally:
            self.cancel()
        self.out.print(t("watch.bye"), style="dim")
        return 0


class TerminalKeys:
    """Single key presses from a terminal: cbreak mode while in use, restored on exit.

    Without a terminal (or without termios) no key ever comes, and Ctrl-C still stops the watch."""

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream or sys.stdin
        self.fd: int | None = None
        self.saved = None

    @property
    def active(self) -> bool:
        return self.fd is not None

    def __enter__(self) -> TerminalKeys:
        try:
            import termios
            import tty

            if self.stream.isatty():
                fd = self.stream.fileno()
                self.saved = termios.tcgetattr(fd)
                tty.setcbreak(fd)
                self.fd = fd
        except (ImportError, OSError, ValueError):
            self.fd = None
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            self.fd = None

    def __call__(self, timeout: float) -> str | None:
        if self.fd is None:
            time.sleep(timeout)
            return None
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(self.fd, 64).decode("utf-8", errors="ignore")
        if not data or data.startswith("\x1b"):  # arrows and other escape sequences mean nothing here
            return None
        return data[0]
