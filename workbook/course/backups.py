"""Nothing a learner wrote is ever lost: every command that replaces a learner's
file first copies it to <workbook>/.workbook/backups/<stamp>-<puzzle>-<why>/.

A backup is read and written inside the workspace without crossing a link
(nofollow.py): a linked `.workbook/` or `backups/` is refused, never written
through, and a puzzle folder reached through a link is not the learner's to
copy or replace."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..core import nofollow, settings
from . import learner
from .manifest import Puzzle


@dataclass
class Backup:
    id: str
    puzzle: str
    reason: str
    created: str
    files: list[str]  # relative to the puzzle folder

    @property
    def dir(self) -> Path:
        return backups_dir() / self.id


def backups_dir() -> Path:
    return settings.state_dir() / "backups"


def create(puzzle: Puzzle, reason: str) -> Backup:
    """Copy the learner's current files of `puzzle`; returns the backup made."""
    return keep(puzzle.id, puzzle.dir, list(puzzle.edit), reason)


def keep(owner: str, folder: Path, names: list[str], reason: str, base: Path | None = None) -> Backup:
    """Copy some files of `folder` (a puzzle's learner files, or the workbook's own files a
    newer workbook replaces) before they are replaced, into the backups of the workspace
    `base` (the workbook folder by default). Only regular files are someone's writing: a
    link is not followed (what it points at is not theirs to keep, and a replace leaves it
    alone), a folder is left where it is, and so is anything reached through a link."""
    base = settings.root() if base is None else base
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    backup = Backup(f"{stamp}-{owner}-{reason}", owner, reason, datetime.now().isoformat(timespec="seconds"), [])
    where = nofollow.inside(base, folder)
    stored = f"{BACKUPS}/{backup.id}"
    for name in names:
        if nofollow.parts(name) is None:
            continue
        try:
            if where is not None:  # in the workspace: reached without crossing a link
                info = nofollow.lstat(base, f"{where}/{name}")
                data = nofollow.read_bytes(base, f"{where}/{name}") if info and stat.S_ISREG(info.st_mode) else None
            else:
                info = (folder / name).lstat()
                data = learner.read_bytes(folder / name) if stat.S_ISREG(info.st_mode) else None
        except OSError:
            data = None
        if data is not None:
            nofollow.write_bytes(base, f"{stored}/{name}", data, mode=0o644, keep_mode=False)
            backup.files.append(name)
    nofollow.make_folders(base, stored)
    nofollow.write_bytes(base, f"{stored}/backup.json", json.dumps(vars(backup), indent=2).encode("utf-8"),
                         mode=0o644, keep_mode=False)
    return backup


BACKUPS = ".workbook/backups"


def all_backups(puzzle_id: str | None = None) -> list[Backup]:
    found = []
    folder = backups_dir()
    if not folder.is_dir():
        return []
    for meta in sorted(folder.glob("*/backup.json")):
        try:
            backup = Backup(**json.loads(meta.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        if puzzle_id is None or backup.puzzle == puzzle_id:
            found.append(backup)
    return found


def find(backup_id: str) -> Backup | None:
    matches = [b for b in all_backups() if b.id == backup_id or b.id.startswith(backup_id)]
    return matches[0] if len(matches) == 1 else None


def restore(backup: Backup, puzzle: Puzzle) -> Backup:
    """Put a backup's files back, after backing up what is there now. Only the puzzle's
    own learner files, and only regular files of the backup (a backup.json naming
    '../../x' restores nothing there)."""
    contents = {}
    for name in backup.files:
        if name not in puzzle.edit or nofollow.parts(backup.id) is None or nofollow.parts(name) is None:
            continue
        try:  # no link followed on the way: a linked backups/ restores nothing from elsewhere
            contents[name] = nofollow.read_bytes(settings.root(), f"{BACKUPS}/{backup.id}/{name}", learner.MAX_BYTES)
        except OSError:
            continue
    return write_files(puzzle, contents, "before-restore")


class PartlyWritten(OSError):
    """Some files were replaced before one could not be: which, so nobody is told nothing changed."""

    def __init__(self, cause: OSError, written: list[str], failed: str, backup: Backup):
        super().__init__(cause.errno, cause.strerror or str(cause), cause.filename)
        self.cause, self.written, self.failed, self.backup = cause, written, failed, backup


def writable(puzzle: Puzzle, names: list[str]) -> None:
    """Raise the OSError a write of these learner files would meet, before anything is written
    (a folder, a file its owner made read-only, a read-only folder or disk)."""
    inside = puzzle.dir.resolve()
    base = settings.find_root()
    for name in names:
        path = puzzle.dir / name
        folder = path.parent if path.parent.exists() else puzzle.dir
        if folder.resolve() != inside and inside not in folder.resolve().parents:  # a folder that links out
            raise PermissionError(13, "reached through a link out of its puzzle folder", str(path))
        where = nofollow.inside(base, path) if base is not None else None
        if where is not None:
            try:
                nofollow.lstat(base, where)  # the puzzle folder itself, or one above it, a link: refused
            except nofollow.Refused:
                raise PermissionError(13, "reached through a link", str(path)) from None
        try:
            info = path.lstat()
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if info is not None and stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IWUSR:
            raise PermissionError(13, "Permission denied", str(path))
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied", str(folder))


def write_files(puzzle: Puzzle, contents: dict[str, str | bytes], reason: str) -> Backup:
    """Replace learner files with `contents` (name -> text), keeping a backup first. What
    would stop a write is found before anything changes; a write that fails anyway (a
    full disk) raises PartlyWritten, saying which files were already replaced."""
    writable(puzzle, list(contents))
    backup = create(puzzle, reason)
    written: list[str] = []
    for name, text in contents.items():
        try:
            learner.write(puzzle.dir / name, text)
        except OSError as exc:
            raise PartlyWritten(exc, written, name, backup) from exc
        written.append(name)
    return backup


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(settings.root()))
    except ValueError:
        return str(path)
