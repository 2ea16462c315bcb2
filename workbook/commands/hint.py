"""`workbook hint ID`: the next hint each time, gentle first; `--all` shows them all."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.panel import Panel

from .. import exitcodes, state
from ..i18n import pick, t
from .common import Context, load_state, resolve


def main(ctx: Context, *, puzzle: str, show_all: bool = False, part: str | None = None) -> int:
    chosen, named_part = resolve(puzzle)
    part = part or named_part
    if part:
        chosen.part(part)
    hints = [h for h in chosen.hints if part is None or h.get("part") in (None, part)]
    if not hints:
        ctx.out.print(t("hint.none", id=chosen.id))
        return exitcodes.OK
    seen = load_state(ctx).of(chosen.id).hints_shown
    if show_all:
        picked = list(enumerate(hints, 1))
        seen = len(hints)
    else:
        index = min(seen, len(hints) - 1)
        picked = [(index + 1, hints[index])]
        seen = min(seen + 1, len(hints))
    state.count_hint(chosen.id, seen)
    for number, h in picked:
        label = t("hint.title", n=number, total=len(hints)) + (f" · {h['part']}" if h.get("part") else "")
        ctx.out.print(Panel(Markdown(pick(h)), title=label, title_align="left", border_style="yellow"))
    if not show_all:
        left = len(hints) - seen
        ctx.out.print(t("hint.more", n=left, id=chosen.id) if left else t("hint.last", id=chosen.id), style="dim")
    return exitcodes.OK
