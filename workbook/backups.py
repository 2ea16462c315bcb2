"""Nothing a learner wrote is ever lost: every command that replaces a learner's
file first copies it to <workbook>/.workbook/backups/<stamp>-<puzzle>-<why>/."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from . import settings
from .catalog import Puzzle


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


def keep(owner: str, folder: Path, names: list[str], reason: str) -> Backup:
    """Copy some files of `folder` (a puzzle's, by default its learner files) before they are replaced."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    backup = Backup(f"{stamp}-{owner}-{reason}", owner, reason, datetime.now().isoformat(timespec="seconds"), [])
    for name in names:
        path = folder / name
        if path.exists():
            target = backup.dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            backup.files.append(name)
    backup.dir.mkdir(parents=True, exist_ok=True)
    (backup.dir / "backup.json").write_text(json.dumps(vars(backup), indent=2), encoding="utf-8")
    return backup


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
    """Put a backup's files back, after backing up what is there now."""
    safety = create(puzzle, "before-restore")
    for name in backup.files:
        shutil.copy2(backup.dir / name, puzzle.dir / name)
    return safety


def write_files(puzzle: Puzzle, contents: dict[str, str], reason: str) -> Backup:
    """Replace learner files with `contents` (name -> text), keeping a backup first."""
    backup = create(puzzle, reason)
    for name, text in contents.items():
        (puzzle.dir / name).write_text(text, encoding="utf-8")
    return backup


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(settings.root()))
    except ValueError:
        return str(path)
