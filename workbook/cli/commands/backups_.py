"""`workbook backups [ID]` lists the backups; `workbook restore BACKUP` puts one back."""

from __future__ import annotations

from rich.table import Table

from ...core import exitcodes
from ...core.i18n import WorkbookError, t
from ...course import backups, catalog
from .common import Context, resolve


def list_backups(ctx: Context, *, puzzle: str | None = None) -> int:
    pid = resolve(puzzle)[0].id if puzzle else None
    found = backups.all_backups(pid)
    if not found:
        ctx.out.print(t("backups.none"))
        return exitcodes.OK
    table = Table(box=None)
    table.add_column(t("backups.col.id"), style="bold", no_wrap=True)
    table.add_column(t("backups.col.puzzle"), no_wrap=True)
    table.add_column(t("backups.col.reason"), no_wrap=True)
    table.add_column(t("backups.col.files"), overflow="fold")
    for b in found:
        table.add_row(b.id, b.puzzle, t("backups.reason." + b.reason), ", ".join(b.files))
    ctx.out.print(table)
    ctx.out.print(t("backups.how_restore"), style="dim")
    return exitcodes.OK


def restore(ctx: Context, *, backup: str) -> int:
    found = backups.find(backup)
    if found is None:
        raise WorkbookError("backups.unknown", id=backup)
    puzzle = catalog.load(found.puzzle)
    safety = backups.restore(found, puzzle)
    ctx.out.print(t("backups.restored", id=found.id, safety=backups.relative(safety.dir)))
    return exitcodes.OK
