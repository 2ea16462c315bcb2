"""The learner's progress, in one small file: <workbook>/.workbook/state.json.

Which puzzles passed (and on which devices), when, and how many hints were
shown. A corrupt or unreadable file is set aside and rebuilt: it never stops a
command.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .catalog import root

VERSION = 1


def state_dir() -> Path:
    return root() / ".workbook"


def state_file() -> Path:
    return state_dir() / "state.json"


@dataclass
class PuzzleState:
    status: str = "not_started"  # the last verdict of `run`/`check` on the learner's files
    devices: dict[str, str] = field(default_factory=dict)  # device -> its status then
    passed_at: str | None = None  # when it last passed
    last_run: str | None = None
    hints_shown: int = 0

    @property
    def done(self) -> bool:
        return self.status == "pass" and self.devices.get("gpu") == "pass"

    @property
    def done_on_cpu_only(self) -> bool:
        """Passed everything that could run here, but the GPU part only compiled."""
        return self.status == "pass" and self.devices.get("gpu") in ("compiled", "skipped", None) \
            and "gpu" in self.devices


@dataclass
class State:
    puzzles: dict[str, PuzzleState] = field(default_factory=dict)
    warning: str = ""  # set when the file was corrupt and had to be rebuilt

    def of(self, puzzle_id: str) -> PuzzleState:
        return self.puzzles.setdefault(puzzle_id, PuzzleState())


def now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def load() -> State:
    path = state_file()
    if not path.exists():
        return State()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("unknown format")
        puzzles = {pid: PuzzleState(**raw) for pid, raw in data.get("puzzles", {}).items()}
        return State(puzzles)
    except (OSError, ValueError, TypeError) as exc:
        aside = path.with_name(f"state.corrupt-{int(time.time())}.json")
        try:
            path.replace(aside)
        except OSError:
            aside = None
        state = State()
        state.warning = f"{path}: {exc}" + (f" (kept as {aside.name})" if aside else "")
        return state


def save(state: State) -> None:
    """Write atomically, so a crash mid-write never leaves half a file."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data = {"version": VERSION, "puzzles": {pid: vars(ps) for pid, ps in sorted(state.puzzles.items())}}
    tmp = folder / f"state.json.tmp{os.getpid()}"
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(state_file())


def record(state: State, puzzle_id: str, status: str, devices: dict[str, str]) -> None:
    """Remember a verdict on the learner's own files."""
    ps = state.of(puzzle_id)
    ps.status, ps.devices, ps.last_run = status, devices, now()
    if status == "pass":
        ps.passed_at = ps.last_run


def remember(puzzle_id: str, status: str, devices: dict[str, str]) -> None:
    """Record a verdict: the file is read again right before writing, so what another
    command saved meanwhile (watch mode's hint count, say) is kept."""
    current = load()
    record(current, puzzle_id, status, devices)
    save(current)
