"""`workbook author sync|verify`: skeletons derived from solutions, for puzzle authors."""

from __future__ import annotations

from .. import backups, exitcodes, skeleton
from ..backups import relative
from ..i18n import t
from .common import all_puzzles, console, resolve


def drift(puzzles) -> list[str]:
    """Learner files that differ from the skeleton derived from their solution."""
    wrong = []
    for puzzle in puzzles:
        for learner, solution in zip(puzzle.learner_files(), puzzle.solution_files()):
            try:
                expected = skeleton.skeleton_of(solution)
            except (OSError, skeleton.MarkerError) as exc:
                wrong.append(f"{relative(solution)}: {exc}")
                continue
            if not skeleton.is_skeleton(learner, expected):
                wrong.append(relative(learner))
    return wrong


def sync(puzzle_ids: list[str]) -> int:
    puzzles = [resolve(p)[0] for p in puzzle_ids] if puzzle_ids else all_puzzles()
    for puzzle in puzzles:
        changed = {}
        for name, learner, solution in zip(puzzle.edit, puzzle.learner_files(), puzzle.solution_files()):
            text = skeleton.skeleton_of(solution)
            if not skeleton.is_skeleton(learner, text):
                changed[name] = text
                console.print(t("author.wrote", file=relative(learner)))
        if changed:  # the files replaced are kept, like every other command that writes
            backups.write_files(puzzle, changed, "author-sync")
    return exitcodes.OK


def verify() -> int:
    wrong = drift(all_puzzles())
    for line in wrong:
        console.print(f"[red]✘[/] {t('author.drift', file=line)}")
    if not wrong:
        console.print(t("author.no_drift"))
    return exitcodes.FAILED if wrong else exitcodes.OK
