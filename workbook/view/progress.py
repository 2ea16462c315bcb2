"""Live progress while the learner waits: what each device is doing, with the time.

One compact Rich display, one line per device (compiling, case 3 of 7,
building the graph, racecheck...), that disappears into the report when the
run ends. Nothing of it under --json, in a pipe, or in CI logs.

The first verdict is not held back for what runs after it: `on_first` gets the
engine's first stage (engine.Check.partial) as soon as it is in, and prints it
above the live lines (in a pipe, as plain lines), which go on with what is
still running. It is called once, on the engine's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from ..check.engine import Event
from ..core import settings
from ..core.i18n import t
from .report import badge

LABELS = {"build": "report.progress.build", "graph": "device.graph"}


def wanted(console: Console, as_json: bool) -> bool:
    return console.is_terminal and not as_json and settings.progress_allowed()


class LiveProgress:
    """A context manager and an engine `events` callback at once."""

    def __init__(self, console: Console, title: str, enabled: bool = True,
                 on_first: Callable[[Event], None] | None = None):
        self.console, self.title, self.enabled = console, title, enabled
        self.rows: dict[str, list] = {}  # device -> [phase text, started, status or None, ended]
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.live: Live | None = None
        self.on_first = on_first
        self.first: Event | None = None  # the first stage, once it was handed on

    def __enter__(self) -> LiveProgress:
        if self.enabled:
            self.live = Live(self, console=self.console, transient=True, refresh_per_second=8)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
            self.live = None

    def __call__(self, event: Event) -> None:
        if event.device == "stage":
            if event.result is not None and self.on_first is not None and self.first is None:
                self.first = event
                self.on_first(event)
                with self.lock:  # what it showed is done: the live lines go on with the rest
                    self.rows = {k: row for k, row in self.rows.items() if row[2] is None}
            return
        key = f"{event.device}:{event.part}" if event.part and event.device.startswith("graph") else event.device
        with self.lock:
            row = self.rows.setdefault(key, [None, time.monotonic(), None, None])
            row[0] = event.phase.text()
            if event.status is not None:
                row[2], row[3] = event.status, time.monotonic()

    def __rich__(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", max_width=44)
        table.add_column(justify="right", no_wrap=True)
        table.add_row(Spinner("dots", style="cyan"), Text(self.title, style="bold"),
                      Text(f"{time.monotonic() - self.started:5.1f}s", style="dim"))
        with self.lock:
            rows = list(self.rows.items())
        for key, (phase, started, status, ended) in rows:
            device = key.split(":")[0]
            label = t(LABELS.get(device, "device." + device.replace("graph-", ""))) if not device.startswith(
                "graph-") else t("report.through_graph", device=t("device." + device[6:]))
            state = badge(status) if status is not None else Text(phase or "", style="cyan")
            seconds = (ended or time.monotonic()) - started
            table.add_row(Text(label, style="bold"), state, Text(f"{seconds:5.1f}s", style="dim"))
        return table
