"""`workbook watch [ID]`: run a puzzle, and again on each save that changes its files."""

from __future__ import annotations

from ...check import engine
from ...core import exitcodes, settings
from ...core.i18n import t
from ..watch import TerminalKeys, Watcher
from .common import Context, resolve


def main(ctx: Context, *, puzzle: str | None = None, sanitize: bool | None = None,
         devices: list[str] | None = None, quick: bool = False) -> int:
    from .run import check_devices

    settings.check_all()
    if puzzle is not None:
        resolve(puzzle)  # an unknown id is exit 2 with the closest ids, before anything starts
    options = engine.Options(sanitize=engine.sanitize_mode(sanitize), devices=check_devices(devices), quick=quick)
    with TerminalKeys() as keys:
        if not keys.active:
            ctx.out.print(t("watch.no_keys"), style="dim")
        Watcher(puzzle, keys, ctx.out, options=options).run()
    return exitcodes.OK
