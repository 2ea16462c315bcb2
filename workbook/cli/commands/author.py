"""`workbook author sync|verify`: for puzzle authors.

sync writes the skeletons from the solutions; verify checks that every puzzle
is what it claims (workbook/author/curriculum.py), statically, and with `--run` by
running every solution, skeleton, wrong kernel and right kernel written another way.
"""

from __future__ import annotations

import functools

from rich.text import Text

from ...author import curriculum
from ...check import scheduler
from ...core import exitcodes
from ...core.i18n import language, t
from ...core.results import document
from ...course import backups, catalog, skeleton
from ...course.backups import relative
from .common import Context, resolve


def sync(ctx: Context, *, puzzles: list[str]) -> int:
    """Write each skeleton in the current language (the committed ones are English:
    `--lang en author sync`)."""
    chosen = [resolve(p)[0] for p in puzzles] if puzzles else catalog.all_puzzles()
    for puzzle in chosen:
        changed = {}
        for name, learner, solution in zip(puzzle.edit, puzzle.learner_files(), puzzle.solution_files()):
            text = skeleton.skeleton_of(solution, language())
            if not (learner.exists() and learner.read_text(encoding="utf-8") == text):
                changed[name] = text
                ctx.out.print(t("author.wrote", file=relative(learner)))
        if changed:  # the files replaced are kept, like every other command that writes
            backups.write_files(puzzle, changed, "author-sync")
    return exitcodes.OK


def verify(ctx: Context, *, puzzles: list[str], run: bool = False, seeds: int = curriculum.SEEDS,
           jobs: int | None = None) -> int:
    chosen = [resolve(p)[0] for p in puzzles] if puzzles else catalog.all_puzzles()
    verdicts = curriculum.static_checks(chosen)
    if run:
        tasks = []
        for puzzle in chosen:
            tasks.append(functools.partial(_solution_checks, puzzle.id, seeds))
            tasks += [functools.partial(_wrong_checks, kernel) for kernel in curriculum.wrong_kernels(puzzle)]
            tasks += [functools.partial(_right_checks, kernel) for kernel in curriculum.right_kernels(puzzle)]

        def said(found: list[curriculum.Verdict]) -> None:
            if not ctx.as_json and found:
                bad = sum(not v.ok for v in found)
                ctx.out.print(t("author.ran", what=found[0].what.split(":")[0], failed=bad),
                              style="red" if bad else "dim")

        for found in scheduler.run_all(tasks, jobs or scheduler.default_jobs(), said):
            verdicts += found
    failed = [v for v in verdicts if not v.ok]
    if ctx.as_json:
        ctx.json(document(checks=[vars(v) for v in verdicts], failed=len(failed), ok=not failed))
        return exitcodes.FAILED if failed else exitcodes.OK
    for v in verdicts:
        if not v.ok or v.skipped:
            mark, style = ("–", "dim") if v.skipped else ("✘", "red")
            ctx.out.print(Text(f"{mark} {v.what}" + (f": {v.detail}" if v.detail else ""), style=style),
                          overflow="fold")
    passed = sum(v.ok and not v.skipped for v in verdicts)
    skipped = sum(v.skipped for v in verdicts)
    ctx.out.print(t("author.summary", passed=passed, failed=len(failed), skipped=skipped),
                  style="bold red" if failed else "bold green")
    return exitcodes.FAILED if failed else exitcodes.OK


def _solution_checks(pid: str, seeds: int) -> list[curriculum.Verdict]:
    """The solution on every device, over many seeds, and the skeleton: in a sandbox of its
    own, so that checks can run side by side."""
    with curriculum.Sandbox() as sandbox:
        found = [curriculum.run_solution(sandbox, pid)[1]]
        if seeds:
            found.append(curriculum.run_seeds(sandbox, pid, seeds))
        found.append(curriculum.run_skeleton(sandbox, pid))
    return found


def _wrong_checks(kernel: curriculum.WrongKernel) -> list[curriculum.Verdict]:
    """One wrong kernel, in a sandbox of its own."""
    with curriculum.Sandbox() as sandbox:
        return curriculum.run_wrong(sandbox, kernel)[1]


def _right_checks(kernel: curriculum.RightKernel) -> list[curriculum.Verdict]:
    """One right kernel written another way, in a sandbox of its own."""
    with curriculum.Sandbox() as sandbox:
        return curriculum.run_right(sandbox, kernel)[1]
