"""`workbook reset ID`: put the skeleton back; the learner's version is backed up first."""

from __future__ import annotations

from ...core import exitcodes
from ...core.i18n import language, t
from ...course import backups, skeleton
from .common import Context, confirm, replace_files, resolve


def main(ctx: Context, *, puzzle: str, yes: bool = False) -> int:
    chosen, _ = resolve(puzzle)
    if not confirm(ctx, t("reset.ask", id=chosen.id), yes):
        ctx.out.print(t("reset.cancelled"))
        return exitcodes.OK
    fresh = {name: skeleton.skeleton_of(path, language()) for name, path in zip(chosen.edit, chosen.solution_files())}
    backup = replace_files(chosen, fresh, "reset")
    ctx.out.print(t("reset.done", id=chosen.id, backup=backups.relative(backup.dir)))
    return exitcodes.OK
