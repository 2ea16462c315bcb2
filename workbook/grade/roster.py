"""Who is in a class: the submissions a class run grades, each with the name it is shown by.

A class is a folder whose every subfolder is one submission (a learner's
workbook, or its puzzles/ folder's parent), or a roster file that names them:
one submission a line, `name, path` (CSV, so a name may be quoted) or a path
alone (named by its folder); blank lines and lines starting with # are
skipped, and a relative path is read from the roster's folder. A folder given
on the command line is a class when it holds no puzzles/ of its own and holds
subfolders; otherwise it is one submission.

Names come from the class: a folder's name may hold anything a file name may
(markup, commas, a newline); everything that shows one escapes it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from ..core.i18n import WorkbookError

MAX_ROSTER_BYTES = 4 << 20  # a roster of a few thousand names is far smaller


@dataclass(frozen=True)
class Submission:
    name: str
    path: Path


def is_class(folder: Path) -> bool:
    """A folder of submissions rather than one submission: no puzzles/ of its own, and subfolders."""
    if not folder.is_dir() or folder.is_symlink() or (folder / "puzzles").exists():
        return False
    return any(_member(entry) for entry in folder.iterdir())


def _member(entry: Path) -> bool:
    """A subfolder that is a submission: a real folder, not hidden (.git, .workbook)."""
    return not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink()


def members(folder: Path, skip: tuple[Path, ...] = ()) -> list[Submission]:
    """Every subfolder of a class folder, by name (`skip`: the class run's own output folder)."""
    skipped = {p.resolve() for p in skip}
    found = [Submission(entry.name, entry) for entry in sorted(folder.iterdir(), key=lambda e: e.name)
             if _member(entry) and entry.resolve() not in skipped]
    return found


def read_roster(path: Path) -> list[Submission]:
    """The submissions a roster file names, in its order."""
    try:
        raw = path.read_bytes()[:MAX_ROSTER_BYTES + 1]
    except OSError as exc:
        raise WorkbookError("class.roster_unreadable", path=str(path), why=exc.strerror or str(exc)) from None
    if len(raw) > MAX_ROSTER_BYTES:
        raise WorkbookError("class.roster_unreadable", path=str(path), why=f"larger than {MAX_ROSTER_BYTES >> 20} MB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WorkbookError("class.roster_unreadable", path=str(path), why="not UTF-8 text") from None
    found: list[Submission] = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [cell.strip() for cell in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if number == 1 and [c.lower() for c in cells[:2]] == ["name", "path"]:
            continue  # a header
        if len(cells) == 1:
            name, where = "", cells[0]
        elif len(cells) == 2:
            name, where = cells
        else:
            raise WorkbookError("class.roster_line", path=str(path), line=number)
        if not where:
            raise WorkbookError("class.roster_line", path=str(path), line=number)
        folder = Path(where).expanduser()
        if not folder.is_absolute():
            folder = path.parent / folder
        found.append(Submission(name or folder.name, folder))
    return found


def unique(submissions: list[Submission]) -> list[Submission]:
    """The same folder once; the same name twice told apart (`name (2)`)."""
    seen_paths: set[Path] = set()
    seen_names: set[str] = set()
    found = []
    for sub in submissions:
        where = sub.path.absolute()
        if where in seen_paths:
            continue
        seen_paths.add(where)
        name, n = sub.name, 1
        while name in seen_names:
            n += 1
            name = f"{sub.name} ({n})"
        seen_names.add(name)
        found.append(Submission(name, sub.path))
    return found


def gather(arguments: list[str], roster: Path | None, skip: tuple[Path, ...] = ()) -> list[Submission]:
    """The class from the command line: each argument a class folder (its subfolders) or one
    submission, then the roster's."""
    found: list[Submission] = []
    for raw in arguments:
        path = Path(raw)
        if is_class(path):
            found += members(path, skip)
        else:
            found.append(Submission(path.name or raw, path))
    if roster is not None:
        found += read_roster(roster)
    return unique(found)
