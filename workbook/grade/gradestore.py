"""The grades a class run keeps, so that a rerun grades only what changed.

One JSON file per submission x puzzle in the run's output folder (kept/), named
by a digest of everything the grade depends on: the submission's learner files
for that puzzle (their bytes), the workbook, its toolchain and the puzzle
(grading.definitions_digest), the seed, the devices, the sandbox and the
settings that change a verdict. A late submission, a fixed file, a new
workbook: only those cells are graded again.

Kept grades are data, never code (JSON, not pickles), and one is used only
when it is a regular file owned by this user, of a sane size, that parses and
names the very key and puzzle asked for; anything else is graded again. Only a
task's own answer is kept: a grade the grader made up for a task that died or
ran out of time is not (the next run tries again). To grade everything
afresh, remove kept/.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
from pathlib import Path

from ..core.results import Status

FOLDER = "kept"
MAX_BYTES = 64 << 20  # a puzzle's result is kilobytes; a file past this was not written here
STATUSES = {s.value for s in Status}


def key(pid: str, definitions: str, files: dict[str, bytes], *, seed: int | None, devices: tuple[str, ...],
        gpu: bool, unsandboxed: bool, settings: dict[str, str | None]) -> str:
    """The digest a cell's grade is kept under."""
    h = hashlib.sha256()
    h.update(f"{pid}\0{definitions}\0seed={seed}\0devices={','.join(sorted(devices))}\0gpu={gpu}\0"
             f"unsandboxed={unsandboxed}\0".encode())
    for name, value in sorted(settings.items()):
        h.update(f"{name}={value}\0".encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def valid(answer: object, pid: str) -> bool:
    """Whether a task's answer is a grade of `pid` as grading.grade_one gives one."""
    if not isinstance(answer, dict):
        return False
    puzzle = answer.get("puzzle")
    return (isinstance(puzzle, dict) and puzzle.get("id") == pid and puzzle.get("status") in STATUSES
            and isinstance(puzzle.get("files", {}), dict))


class Store:
    """kept/ in a class run's output folder."""

    def __init__(self, out: Path):
        self.dir = out / FOLDER
        self._lock = threading.Lock()

    def _usable(self) -> bool:
        try:
            info = self.dir.lstat()
        except OSError:
            return False
        return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()

    def get(self, digest: str, pid: str) -> dict | None:
        """The kept answer under `digest`, or None (none, or not one to trust)."""
        if not self._usable():
            return None
        try:
            fd = os.open(self.dir / f"{digest}.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > MAX_BYTES:
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != digest or not valid(data.get("answer"), pid):
            return None
        return data["answer"]

    def put(self, digest: str, answer: dict) -> None:
        """Keep a task's answer (written whole, then renamed into place: never half a file)."""
        with self._lock:
            try:
                self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError:
                return
            if not self._usable():
                return
            final = self.dir / f"{digest}.json"
            partial = self.dir / f".{digest}.{os.getpid()}-{threading.get_ident()}"
            text = json.dumps({"key": digest, "answer": answer}, ensure_ascii=False)
            try:
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(partial, final)
            except OSError:
                with contextlib.suppress(OSError):
                    partial.unlink()
