"""`workbook hint ID`: the next hint each time, gentle first; `--all` shows them all."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.panel import Panel

from .. import exitcodes, state
from ..i18n import pick, t
from .common import console, load_state, resolve


def hint(puzzle_id: str, show_all: bool, part: str | None = None) -> int:
    puzzle, named_part = resolve(puzzle_id)
    part = part or named_part
    hints = [h for h in puzzle.hints if part is None or h.get("part") in (None, part)]
    if not hints:
        console.print(t("hint.none", id=puzzle.id))
        return exitcodes.OK
    current = load_state()
    ps = current.of(puzzle.id)
    if show_all:
        chosen = list(enumerate(hints, 1))
        ps.hints_shown = len(hints)
    else:
        index = min(ps.hints_shown, len(hints) - 1)
        chosen = [(index + 1, hints[index])]
        ps.hints_shown = min(ps.hints_shown + 1, len(hints))
    state.save(current)
    for number, h in chosen:
        label = t("hint.title", n=number, total=len(hints)) + (f" · {h['part']}" if h.get("part") else "")
        console.print(Panel(Markdown(pick(h)), title=label, title_align="left", border_style="yellow"))
    if not show_all:
        left = len(hints) - ps.hints_shown
        console.print(t("hint.more", n=left, id=puzzle.id) if left else t("hint.last", id=puzzle.id), style="dim")
    return exitcodes.OK
