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
    load_state(ctx)  # says once if the progress file had to be rebuilt or repaired
    seen, problem = state.show_hints(chosen.id, len(hints), show_all)
    picked = list(enumerate(hints, 1)) if show_all else [(seen, hints[seen - 1])]
    for number, h in picked:
        label = t("hint.title", n=number, total=len(hints)) + (f" · {h['part']}" if h.get("part") else "")
        ctx.out.print(Panel(Markdown(pick(h)), title=label, title_align="left", border_style="yellow"))
    if not show_all:
        left = len(hints) - seen
        ctx.out.print(t("hint.more", n=left, id=chosen.id) if left else t("hint.last", id=chosen.id), style="dim")
    ctx.warn(problem)
    return exitcodes.OK
