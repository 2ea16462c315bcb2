"""The learner's progress, in one small file: <workbook>/.workbook/state.json.

Which puzzles passed (and on which devices), when, and how many hints were
shown. Every progress question ("is it done?", "done without a GPU?", "what
is next?") is answered here, from a `Progress` value views only draw. A
corrupt or unreadable file is set aside and rebuilt, and an entry of the wrong
shape is reset on its own: it never stops a command.

Every change is a read, a change and a write under a file lock
(.workbook/state-lock), so commands running at once (18 `hint`s, a
`watch` and a `run`) each keep what they did. A change that can't be saved (a
read-only .workbook/, a full disk) comes back as a message for the learner:
the verdict it was about is still shown.

state.json and its lock are reached without following a link (nofollow.py): a
`.workbook/` that is a link is refused (the change is not saved, and says
why), a state.json that is a link is set aside like a corrupt one, and the new
file is renamed over the old, never written through it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from enum import Enum

import filelock

from ..core import nofollow, settings
from ..core.i18n import Msg, msg

VERSION = 1


class Progress(str, Enum):
    NOT_STARTED = "not_started"
    FAILED = "failed"  # the last verdict on the learner's files was not a pass
    DONE = "done"  # passed, on a real GPU where the puzzle has GPU parts
    PASSED_SIM = "passed_sim"  # passed, the GPU kernels on the simulator (no GPU here)
    PASSED_CPU = "passed_cpu"  # passed on the CPU; the GPU kernels only compiled
    COMPILED = "compiled"  # everything compiled; nothing here could run it

    @property
    def finished_here(self) -> bool:
        """Nothing more to do for it on this machine."""
        return self in (Progress.DONE, Progress.PASSED_SIM, Progress.PASSED_CPU, Progress.COMPILED)


@dataclass
class PuzzleState:
    status: str = "not_started"  # the last verdict of `run`/`check` on the learner's files
    devices: dict[str, str] = field(default_factory=dict)  # device -> its status then
    passed_at: str | None = None  # when it last passed
    last_run: str | None = None
    hints_shown: int = 0
    solution_applied: str | None = None  # when `reveal --apply` put the solution in: a pass after it is not all theirs

    @property
    def progress(self) -> Progress:
        if self.last_run is None or self.status == "not_started":
            return Progress.NOT_STARTED
        if self.status not in ("pass", "compiled"):
            return Progress.FAILED
        gpu = self.devices.get("gpu")
        if gpu in (None, "pass") and self.status == "pass":
            return Progress.DONE
        if self.devices.get("sim") == "pass":
            return Progress.PASSED_SIM
        if self.devices.get("cpu") == "pass":
            return Progress.PASSED_CPU
        return Progress.COMPILED


@dataclass
class State:
    puzzles: dict[str, PuzzleState] = field(default_factory=dict)
    warning: str = ""  # set when the file was corrupt and had to be rebuilt
    repaired: list[str] = field(default_factory=list)  # puzzles whose entry had to be reset

    def of(self, puzzle_id: str) -> PuzzleState:
        return self.puzzles.setdefault(puzzle_id, PuzzleState())

    def next_pending(self, puzzles: list, after: str | None = None):
        """The next puzzle not finished here, in course order. With `after`, the
        search starts just past that puzzle, wraps around, and skips it."""
        ids = [p.id for p in puzzles]
        start = ids.index(after) + 1 if after in ids else 0
        for puzzle in puzzles[start:] + puzzles[:start]:
            if puzzle.id != after and not self.of(puzzle.id).progress.finished_here:
                return puzzle
        return None


def now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def state_file():
    return settings.state_dir() / "state.json"


def _entry(raw) -> PuzzleState | None:
    """One puzzle's entry, each field checked: a field of the wrong type is reset (None:
    the entry is not an object at all)."""
    if not isinstance(raw, dict):
        return None
    entry = PuzzleState()
    for f in fields(PuzzleState):
        value = raw.get(f.name, getattr(entry, f.name))
        if f.name == "hints_shown":
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6
        elif f.name == "devices":
            ok = isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        elif f.name == "status":
            ok = isinstance(value, str)
        else:
            ok = value is None or isinstance(value, str)
        if ok:
            setattr(entry, f.name, value)
    return entry


STATE = ".workbook/state.json"  # in the workbook folder


def load() -> State:
    path = state_file()
    if not os.path.lexists(path):
        return State()
    try:
        data = json.loads(nofollow.read_bytes(settings.root(), STATE).decode("utf-8"))
        if not isinstance(data, dict) or data.get("version") != VERSION \
                or not isinstance(data.get("puzzles", {}), dict):
            raise ValueError("unknown format")
        state = State()
        for pid, raw in data.get("puzzles", {}).items():
            entry = _entry(raw)
            state.puzzles[pid] = entry or PuzzleState()
            if entry is None or any(raw.get(f.name, getattr(entry, f.name)) != getattr(entry, f.name)
                                    for f in fields(PuzzleState)):
                state.repaired.append(pid)
        return state
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        aside = path.with_name(f"state.corrupt-{int(time.time())}.json")
        try:
            if isinstance(exc, nofollow.Refused) and os.path.islink(path.parent):
                raise OSError("a link")  # .workbook/ itself: nothing is renamed through it
            path.replace(aside)  # a link is renamed, not followed
        except OSError:
            aside = None
        state = State()
        state.warning = f"{path}: {exc}" + (f" (kept as {aside.name})" if aside else "")
        return state


def save(state: State) -> None:
    """Write atomically, so a crash mid-write never leaves half a file (nor one written through a link)."""
    data = {"version": VERSION, "puzzles": {pid: vars(ps) for pid, ps in sorted(state.puzzles.items())}}
    nofollow.write_bytes(settings.root(), STATE, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"),
                         partial=f"state.json.tmp{os.getpid()}-{threading.get_ident()}")


LOCK_WAIT = 20.0  # seconds to wait for another command's change
LOCK_FILE = "state-lock"  # beside state.json


def change(edit: Callable[[State], None]) -> Msg | None:
    """Read the state, `edit` it, write it back, all under the lock; None when it was saved,
    else why not (the learner's verdict or hint still stands, only its record is missing)."""
    folder = settings.state_dir()
    try:
        nofollow.make_folders(settings.root(), ".workbook")  # a link there: refused, never followed
        if not os.access(folder, os.W_OK | os.X_OK):  # a read-only .workbook/: no lock file either
            raise PermissionError(13, "read-only", str(folder))
        with filelock.FileLock(str(folder / LOCK_FILE), timeout=LOCK_WAIT):
            current = load()
            edit(current)
            save(current)
    except filelock.Timeout:
        return msg("state.not_saved", why=msg("state.locked", seconds=int(LOCK_WAIT)))
    except OSError as exc:
        return msg("state.not_saved", why=f"{exc.strerror or exc} ({exc.filename or folder})")
    return None


def remember(puzzle_id: str, status: str, devices: dict[str, str]) -> Msg | None:
    """Record a verdict on the learner's own files (what another command saved meanwhile,
    a hint count, is kept)."""
    def edit(current: State) -> None:
        ps = current.of(puzzle_id)
        ps.status, ps.devices, ps.last_run = status, devices, now()
        if status == "pass":
            ps.passed_at = ps.last_run

    return change(edit)


def show_hints(puzzle_id: str, total: int, everything: bool, number: int | None = None) -> tuple[int, Msg | None]:
    """Count the hints shown, deciding which under the lock (two `hint` commands at once see
    two hints, not the same one twice): hint `number` again (it counts only if it is the
    next), all of them, or the next one. Returns the hint to show (the last of all) and why
    the count could not be saved, if not."""
    seen: list[int] = []

    def edit(current: State) -> None:
        ps = current.of(puzzle_id)
        if number is not None:
            ps.hints_shown = max(ps.hints_shown, number)
            seen.append(number)
        else:
            ps.hints_shown = total if everything else min(ps.hints_shown + 1, total)
            seen.append(ps.hints_shown)

    problem = change(edit)
    if not seen:  # not saved: what it would have been, from the file as it is
        try:
            edit(load())
        except OSError:
            seen.append(number or 1)
    return seen[-1], problem


def applied_solution(puzzle_id: str) -> Msg | None:
    """Remember that the learner's files were replaced by the solution (`reveal --apply`)."""
    def edit(current: State) -> None:
        current.of(puzzle_id).solution_applied = now()

    return change(edit)


def initial(folder) -> None:
    """An empty progress file in `folder` (a new workspace's .workbook/), unless one is there
    (a link there counts as one: never written through)."""
    data = json.dumps({"version": VERSION, "puzzles": {}}, indent=2).encode("utf-8")
    nofollow.create(folder.parent, f"{folder.name}/state.json", data)
