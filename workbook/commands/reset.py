"""`workbook reset ID`: put the skeleton back; the learner's version is backed up first."""

from __future__ import annotations

from .. import backups, exitcodes, skeleton
from ..i18n import t
from .common import confirm, console, resolve


def reset(puzzle_id: str, yes: bool) -> int:
    puzzle, _ = resolve(puzzle_id)
    if not confirm(t("reset.ask", id=puzzle.id), yes):
        console.print(t("reset.cancelled"))
        return exitcodes.OK
    fresh = {name: skeleton.skeleton_of(path) for name, path in zip(puzzle.edit, puzzle.solution_files())}
    backup = backups.write_files(puzzle, fresh, "reset")
    console.print(t("reset.done", id=puzzle.id, backup=backups.relative(backup.dir)))
    return exitcodes.OK
