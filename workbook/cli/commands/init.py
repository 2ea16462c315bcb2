"""`workbook init DIR`: a workspace of one's own, with the skeletons in the learner's language."""

from __future__ import annotations

from pathlib import Path

from ...core import exitcodes, settings
from ...core.i18n import language, t
from ...course import catalog, workspace
from .common import Context


def main(ctx: Context, *, folder: str) -> int:
    target = Path(folder).expanduser().resolve()
    existed = workspace.is_workspace(target)
    update = workspace.create(target, language())
    if existed:
        ctx.out.print(t("init.updated", dir=str(target), added=len(update.added)))
    else:
        count = len(catalog.puzzle_ids(target))
        ctx.out.print(t("init.done", dir=str(target), n=count, language=t("language." + language())))
        ctx.out.print(t("init.next", dir=folder), style="bold")
    notices(ctx, update)
    return exitcodes.OK


def notices(ctx: Context, update: workspace.Update | None) -> None:
    """What a newer workbook brought into the workspace, in a line or two (on stderr, so
    --json stays one document)."""
    if update is None:
        return
    if update.added and not update.created:
        ctx.err.print(t("workspace.added", ids=", ".join(update.added)), style="cyan")
    if update.kept:
        ctx.err.print(t("workspace.kept", files=", ".join(update.kept)), style="yellow")
    if update.unlinked:
        ctx.err.print(t("workspace.unlinked", files=", ".join(update.unlinked)), style="yellow")
    for skipped in update.skipped:
        ctx.err.print(skipped.text(), style="yellow", highlight=False)


def bring_up_to_date(ctx: Context) -> None:
    """Before a command in a workspace: this workbook's puzzles come in, the learner's files stay."""
    root = settings.find_root()
    if root is not None and workspace.is_workspace(root):
        notices(ctx, workspace.sync(root))
