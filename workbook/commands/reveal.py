"""`workbook reveal ID`: the reference solution, highlighted, with a diff against the
learner's files. Asks before showing spoilers; changes nothing unless `--apply`."""

from __future__ import annotations

import difflib

from rich.syntax import Syntax

from .. import backups, exitcodes, skeleton
from ..i18n import t
from .common import confirm, console, fail, resolve


def solution_text(path) -> str:
    try:
        return skeleton.clean_solution(path.read_text(encoding="utf-8"))
    except OSError:
        fail(t("reveal.missing", path=backups.relative(path)))


def reveal(puzzle_id: str, yes: bool, apply: bool) -> int:
    puzzle, _ = resolve(puzzle_id)
    if not confirm(t("reveal.ask", id=puzzle.id), yes):
        console.print(t("reveal.cancelled"))
        return exitcodes.OK
    solutions = {name: solution_text(path) for name, path in zip(puzzle.edit, puzzle.solution_files())}
    for name, learner in zip(puzzle.edit, puzzle.learner_files()):
        lexer = "python" if name.endswith(".py") else "mojo"
        console.rule(t("reveal.solution_of", file=backups.relative(learner)))
        console.print(Syntax(solutions[name], lexer, line_numbers=True, theme="ansi_dark", word_wrap=True))
        mine = learner.read_text(encoding="utf-8") if learner.exists() else ""
        diff = "".join(difflib.unified_diff(mine.splitlines(True), solutions[name].splitlines(True),
                                            t("reveal.yours"), t("reveal.solution")))
        console.rule(t("reveal.diff_of", file=name))
        console.print(Syntax(diff, "diff", theme="ansi_dark") if diff else t("reveal.same"))
    if apply:
        backup = backups.write_files(puzzle, solutions, "reveal-apply")
        console.print(t("reveal.applied", backup=backups.relative(backup.dir)))
    else:
        console.print(t("reveal.not_applied", id=puzzle.id), style="dim")
    return exitcodes.OK
