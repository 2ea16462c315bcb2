"""`workbook reveal ID`: the reference solution, highlighted, with a diff against the
learner's files. Asks before showing spoilers; changes nothing unless `--apply`."""

from __future__ import annotations

import difflib

from rich.syntax import Syntax

from ...core import exitcodes
from ...core.i18n import WorkbookError, language, t
from ...course import backups, learner, skeleton, state
from .common import Context, confirm, replace_files, resolve


def solution_text(path) -> str:
    try:
        return skeleton.clean_solution(learner.read_bytes(path).decode("utf-8"), language())
    except (OSError, UnicodeDecodeError):
        raise WorkbookError("reveal.missing", path=backups.relative(path)) from None


def yours(path, folder) -> str:
    """The learner's file as text for the diff; a link, a folder or a missing file is no
    text of theirs (never read through a link: it may point anywhere)."""
    found = learner.problem(path, folder)
    if found is not None and found[0] not in ("learner.binary", "learner.not_utf8"):
        return ""
    try:
        return learner.read_bytes(path).decode("utf-8", errors="replace")
    except OSError:
        return ""


def main(ctx: Context, *, puzzle: str, yes: bool = False, apply: bool = False) -> int:
    chosen, _ = resolve(puzzle)
    if not confirm(ctx, t("reveal.ask", id=chosen.id), yes):
        ctx.out.print(t("reveal.cancelled"))
        return exitcodes.OK
    solutions = {name: solution_text(path) for name, path in zip(chosen.edit, chosen.solution_files())}
    for name, learner_file in zip(chosen.edit, chosen.learner_files()):
        lexer = "python" if name.endswith(".py") else "mojo"
        ctx.out.rule(t("reveal.solution_of", file=backups.relative(learner_file)))
        ctx.out.print(Syntax(solutions[name], lexer, line_numbers=True, theme="ansi_dark", word_wrap=True))
        mine = yours(learner_file, chosen.dir)
        diff = "".join(difflib.unified_diff(mine.splitlines(True), solutions[name].splitlines(True),
                                            t("reveal.yours"), t("reveal.solution")))
        ctx.out.rule(t("reveal.diff_of", file=name))
        # The diff wraps as the listing does: its long lines (p36's TMA coordinates and strides) are the lesson.
        ctx.out.print(Syntax(diff, "diff", theme="ansi_dark", word_wrap=True) if diff else t("reveal.same"))
    if apply:
        backup = replace_files(chosen, solutions, "reveal-apply")
        ctx.warn(state.applied_solution(chosen.id))
        ctx.out.print(t("reveal.applied", backup=backups.relative(backup.dir)))
    else:
        ctx.out.print(t("reveal.not_applied", id=chosen.id), style="dim")
    return exitcodes.OK
