"""Watch mode: run a puzzle, run it again on each save that changes its files, redraw the report.

`Watcher` is an event loop and needs no terminal: keys come from a callable
(`read_key(timeout)` returns a key or None), the report goes to a Rich
console, and `stop()` may end it. Each run is the engine itself, in a thread,
with a `Children` of its own (workbook/child/processes.py): a newer save cancels the
run still going, which stops everything it started, and quitting does the
same. The run thread only posts events; this loop alone draws.
"""

from __future__ import annotations

import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from rich.console import Console
from rich.text import Text

from ..check import engine
from ..child.processes import Cancelled, Children
from ..compile import build
from ..core.i18n import WorkbookError, pick, t
from ..core.results import PASSING, PuzzleResult, Status
from ..course import catalog, learner, manifest, state
from ..view import report
from .commands.common import Context, learner_files
from .commands.run import target_problem

SETTLE, SETTLE_TRIES = 0.1, 20  # a save is over when the files stay the same this long
POLL = 0.3  # seconds between looks at the puzzle's files

# What runs after a first verdict shown early (engine.Check.partial's key -> what watch says).
NEXT = {"phase.sanitizers_next": "watch.sanitizers_next", "phase.kernels_done": "watch.graph_next",
        "phase.gpu_check_next": "watch.gpu_check_next"}

KeyReader = Callable[[float], "str | None"]
Check = Callable[..., PuzzleResult]  # engine.check_puzzle, or a stand-in in tests


@dataclass
class Run:
    """One run of the engine, in a thread of its own."""

    number: int
    target: str  # the id (or id.part) being run
    digest: str  # the learner files' content when it started
    children: Children
    thread: threading.Thread
    started: float
    result: PuzzleResult | None = None
    cancelled: bool = False


class Watcher:
    """The watch loop for one puzzle at a time; `run()` returns when the learner quits."""

    def __init__(self, puzzle_id: str | None, read_key: KeyReader, out: Console,
                 stop: Callable[[], bool] | None = None, check: Check = engine.check_puzzle,
                 poll: float = POLL, options: engine.Options | None = None):
        self.requested = puzzle_id
        self.read_key = read_key
        self.ctx = Context(out=out, err=out)
        self.stop = stop or (lambda: False)
        self.check = check
        self.poll = poll
        self.options = options or engine.Options()
        self.target = ""  # the id (or id.part) being watched
        self.puzzle: manifest.Puzzle | None = None
        self.part: str | None = None
        self.runs: list[Run] = []
        self.current: Run | None = None
        self.last_digest: str | None = None
        self.quitting = False
        self.events: queue.Queue = queue.Queue()
        self.shown: PuzzleResult | None = None  # the result on screen, for `d`

    @property
    def out(self) -> Console:
        return self.ctx.out

    # --- what to run -------------------------------------------------------------------------

    def _select(self, target: str) -> None:
        pid, part = catalog.resolve_id(target)
        self.puzzle = catalog.load(pid)
        self.part = part
        self.target = target
        self.last_digest = None

    def digest(self) -> str:
        return build.digest_of(self.puzzle.learner_files())

    # --- runs ----------------------------------------------------------------------------------

    def start(self) -> None:
        self.cancel()
        digest = self.digest()
        self.last_digest = digest
        number = len(self.runs) + 1
        children = Children()
        options = engine.Options(**{**vars(self.options), "part": self.part})
        puzzle = self.puzzle

        def work() -> None:
            try:
                learner.require(puzzle)  # a file saved as a folder, a link, or not text: said, and watched on
                result = self.check(puzzle, options, events=lambda e: self.events.put((number, "event", e)),
                                    children=children)
                target_problem(result)
                self.events.put((number, "done", result))
            except Cancelled:
                self.events.put((number, "cancelled", None))
            except WorkbookError as exc:
                self.events.put((number, "error", exc.msg.text()))
            except Exception as exc:  # noqa: BLE001 - shown in the watch, which keeps going
                self.events.put((number, "error", f"{type(exc).__name__}: {exc}"))
            finally:
                children.kill_all()

        thread = threading.Thread(target=work, name=f"workbook-run-{number}", daemon=True)
        self.current = Run(number, self.target, digest, children, thread, time.monotonic())
        self.runs.append(self.current)
        thread.start()

    def cancel(self) -> None:
        """Stop the run in progress, if any, with everything it started."""
        run, self.current = self.current, None
        if run is None:
            return
        if run.thread.is_alive():
            run.cancelled = True
        run.children.cancel()
        run.thread.join(timeout=30)

    def _handle(self) -> None:
        """Draw what the run thread posted: the first stage, then the result."""
        while True:
            try:
                number, kind, payload = self.events.get_nowait()
            except queue.Empty:
                return
            run = self.current
            if run is None or run.number != number:
                continue  # a cancelled run's last words
            if kind == "event" and payload.device == "stage" and payload.result is not None:
                self.redraw(payload.result, partial=True, next_key=payload.phase.key)
            elif kind == "done":
                self.current = None
                self._remember(payload)
                self.redraw(payload)
                run.result = payload
            elif kind in ("error", "cancelled"):
                self.current = None
                if kind == "error":
                    self.out.print(payload, style="bold red")
                    self.status_line()

    def _remember(self, result: PuzzleResult) -> None:
        if self.options.records_progress and not self.part:  # the part is chosen here, not in options
            self.ctx.warn(state.remember(result.id, result.status.value,
                                         {d: s.value for d, s in result.device_statuses().items()}))

    def redraw(self, result: PuzzleResult, partial: bool = False, next_key: str = "") -> None:
        """The compact view, cut to the terminal's height: the whole report is a key away."""
        self.shown = result
        self.out.clear()
        self.out.print(t("watch.header", id=self.target, time=time.strftime("%H:%M:%S")), style="dim")
        after: list = []
        if partial:
            after.append(Text(t(NEXT.get(next_key, "watch.graph_next")), style="cyan"))
        elif result.status == Status.COMPILED:  # nothing here judged it: not a pass (exit code 5)
            after.append(Text(t("watch.not_judged", id=self.puzzle.id), style="bold yellow"))
        elif result.status in PASSING:
            following = self.following()
            after.append(Text(t("watch.passed_last", id=self.puzzle.id) if following is None else
                              t("watch.passed", id=self.puzzle.id, next=following.id), style="bold green"))
        status = [Text(t("watch.watching", id=self.target)), Text(t("watch.keys"))]
        room = self.out.height - 3 - self._lines(*after, *status)  # the header, the rule, the prompt line
        shown = []
        for item in report.compact(result, pick(self.puzzle.title), learner_files(self.puzzle)):
            height = self._lines(item)
            if height > room:
                break  # the rest is a key away (d)
            shown.append(item)
            room -= height
        for item in [*shown, *after]:
            self.out.print(item)
        self.status_line()

    def _lines(self, *items) -> int:
        return sum(len(self.out.render_lines(item, self.out.options, pad=False)) for item in items)

    def details(self) -> None:
        """The whole report of the run shown last (`d`)."""
        if self.shown is None:
            return
        report.render_result(self.out, self.shown, pick(self.puzzle.title), learner_files(self.puzzle))
        self.status_line()

    def following(self) -> manifest.Puzzle | None:
        """The first puzzle in course order not finished here, other than this one."""
        others = [p for p in catalog.all_puzzles() if p.id != self.puzzle.id]
        return state.load().next_pending(others)

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
            from .commands import hint

            try:
                hint.main(self.ctx, puzzle=self.target)
            except WorkbookError as exc:
                self.out.print(exc.msg.text(), style="red")
        elif key == "d":
            self.details()
        elif key == "n":
            following = self.following()
            if following is None:
                self.out.print(t("watch.no_next"), style="yellow")
                return
            self.cancel()
            self._select(following.id)
            self.out.print(t("watch.switched", id=following.id), style="bold")
            self.start()

    # --- the loop ------------------------------------------------------------------------------

    def _settled(self, digest: str) -> str:
        """The files' content once a save is over: a save may truncate first and write after,
        and a run of the half-written file (or a second run for the same save) is wasted."""
        for _ in range(SETTLE_TRIES):
            time.sleep(SETTLE)
            again = self.digest()
            if again == digest:
                break
            digest = again
        return digest

    def run(self) -> int:
        if self.requested is None:
            first = state.load().next_pending(catalog.all_puzzles())
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
                self._handle()
                digest = self.digest()
                if digest != self.last_digest:
                    digest = self._settled(digest)
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
