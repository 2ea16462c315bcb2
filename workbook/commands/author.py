"""`workbook author sync|verify`: for puzzle authors.

sync writes the skeletons from the solutions; verify checks that every puzzle
is what it claims (workbook/curriculum.py), statically, and with `--run` by
running every solution, skeleton and wrong kernel.
"""

from __future__ import annotations

from rich.text import Text

from .. import backups, catalog, curriculum, exitcodes, skeleton
from ..backups import relative
from ..i18n import language, t
from ..results import document
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


def verify(ctx: Context, *, puzzles: list[str], run: bool = False, seeds: int = curriculum.SEEDS) -> int:
    chosen = [resolve(p)[0] for p in puzzles] if puzzles else catalog.all_puzzles()
    verdicts = curriculum.static_checks(chosen)
    if run:
        with curriculum.Sandbox() as sandbox:
            for puzzle in chosen:
                if not ctx.as_json:
                    ctx.out.print(t("author.running", id=puzzle.id), style="dim")
                verdicts.append(curriculum.run_solution(sandbox, puzzle.id)[1])
                if seeds:
                    verdicts.append(curriculum.run_seeds(sandbox, puzzle.id, seeds))
                verdicts.append(curriculum.run_skeleton(sandbox, puzzle.id))
                for kernel in curriculum.wrong_kernels(puzzle):
                    verdicts += curriculum.run_wrong(sandbox, kernel)[1]
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
