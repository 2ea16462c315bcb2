"""`workbook backups [ID]` lists the backups; `workbook restore BACKUP` puts one back."""

from __future__ import annotations

from rich.table import Table

from .. import backups, catalog, exitcodes
from ..i18n import t
from .common import console, fail, resolve


def list_backups(puzzle_id: str | None) -> int:
    pid = resolve(puzzle_id)[0].id if puzzle_id else None
    found = backups.all_backups(pid)
    if not found:
        console.print(t("backups.none"))
        return exitcodes.OK
    table = Table(box=None)
    table.add_column(t("backups.col.id"), style="bold")
    table.add_column(t("backups.col.puzzle"))
    table.add_column(t("backups.col.reason"))
    table.add_column(t("backups.col.files"))
    for b in found:
        table.add_row(b.id, b.puzzle, t("backups.reason." + b.reason), ", ".join(b.files))
    console.print(table)
    console.print(t("backups.how_restore"), style="dim")
    return exitcodes.OK


def restore(backup_id: str) -> int:
    backup = backups.find(backup_id)
    if backup is None:
        fail(t("backups.unknown", id=backup_id))
    try:
        puzzle = catalog.load(backup.puzzle)
    except catalog.CatalogError as exc:
        fail(str(exc))
    safety = backups.restore(backup, puzzle)
    console.print(t("backups.restored", id=backup.id, safety=backups.relative(safety.dir)))
    return exitcodes.OK
