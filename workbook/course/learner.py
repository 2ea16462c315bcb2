"""The learner's files: what is accepted as one, and how the workbook writes one.

A learner file is a regular file inside its puzzle's folder, UTF-8 text of a
sane size. Anything else (a folder where the file should be, a link to
/etc/passwd, a binary, a 2 GB file) is bad input with a clear message: the
workbook never reads through a link (its lines would reach the report and the
JSON) and never writes through one (`reset` would overwrite whatever it points
at). Writing replaces the file itself, atomically: a crash mid-write leaves
the old file or the new one, never half of one, and a link is replaced by a
file rather than followed. Inside the workbook folder, no folder on the way is
followed either (nofollow.py): a puzzle folder that links elsewhere is refused.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from ..core import nofollow, settings
from ..core.i18n import WorkbookError
from .manifest import Puzzle

MAX_BYTES = 1 << 20  # far above any puzzle's file; a submission may not be larger


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(settings.root()))
    except ValueError:
        return str(path)


def problem(path: Path, folder: Path) -> tuple[str, dict] | None:
    """What is wrong with `path` as a learner file of the puzzle in `folder` (a message key
    and its values), or None. Reads nothing through a link."""
    where = {"file": shown(path)}
    try:
        real_folder = folder.resolve()
        parent = path.parent.resolve()
    except (OSError, RuntimeError):
        return "learner.outside", where
    if parent != real_folder and real_folder not in parent.parents:
        return "learner.outside", where
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "error.missing_file", where
    except OSError as exc:
        return "learner.unreadable", {**where, "why": exc.strerror or str(exc)}
    if stat.S_ISLNK(info.st_mode):
        return "learner.symlink", where
    if not stat.S_ISREG(info.st_mode):
        return "learner.not_file", where
    if info.st_size > MAX_BYTES:
        return "learner.too_big", {**where, "kb": MAX_BYTES // 1024}
    try:
        data = read_bytes(path)
    except OSError as exc:
        return "learner.unreadable", {**where, "why": exc.strerror or str(exc)}
    if b"\0" in data:
        return "learner.binary", where
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return "learner.not_utf8", {**where, "line": line}
    return None


def read_bytes(path: Path) -> bytes:
    """A file's bytes, refusing a link (O_NOFOLLOW) and stopping past the size cap."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(21, "not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)


def require(puzzle: Puzzle) -> None:
    """Every learner file of `puzzle` is one the workbook will read, or a WorkbookError says
    which is not and why (exit 2)."""
    for path in puzzle.learner_files():
        found = problem(path, puzzle.dir)
        if found is not None:
            key, values = found
            raise WorkbookError(key, id=puzzle.id, **values)


def write(path: Path, text: str | bytes) -> None:
    """Replace the file at `path` with `text`: written beside it, then renamed over it, so a
    link there is replaced (never followed) and no reader sees half a file. Its mode is kept.
    In the workbook folder, each folder from it down is opened without following a link
    (a link on the way: nofollow.Refused, an OSError); elsewhere (grading's own copy),
    from the file's folder."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    base = settings.find_root()
    name = nofollow.inside(base, path) if base is not None else None
    if name is None:
        base, name = path.parent, path.name
        base.mkdir(parents=True, exist_ok=True)
    partial = f".{path.name}.workbook-{os.getpid()}-{threading.get_ident()}.tmp"  # sweep.py's LEARNER_PARTIAL
    nofollow.write_bytes(base, name, data, partial=partial)
