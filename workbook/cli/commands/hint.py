"""`workbook hint ID [N]`: the next hint each time, gentle first; `N` reads a hint shown
before again; `--all` shows them all, after asking, since the last hints give the solution away.

Each part's hints climb (hints.toml's `level`): the idea, then where to look, then what to
write. A hint with code of the answer in it (a fenced block) is announced twice before it is
read: the hint before it ends by saying the next one shows code, and the hint itself opens
with that line, above its panel."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from ...core import exitcodes
from ...core.i18n import WorkbookError, pick, t
from ...course import state
from .common import Context, confirm, load_state, resolve

LEVELS = ("idea", "where", "what")


def shows_code(hint: dict) -> bool:
    """Whether a hint shows code of the answer: a fenced block in it (names in `backticks` are not)."""
    return "```" in hint.get("en", "") or "```" in hint.get("ko", "")


def main(ctx: Context, *, puzzle: str, number: int | None = None, show_all: bool = False, part: str | None = None,
         yes: bool = False) -> int:
    chosen, named_part = resolve(puzzle)
    part = part or named_part
    if part:
        chosen.part(part)
    hints = [h for h in chosen.hints if part is None or h.get("part") in (None, part)]
    if not hints:
        ctx.out.print(t("hint.none", id=chosen.id))
        return exitcodes.OK
    seen = load_state(ctx).of(chosen.id).hints_shown  # what to allow and ask; the count itself is kept under the lock
    if number is not None:
        if not 1 <= number <= len(hints):
            raise WorkbookError("hint.no_such", id=chosen.id, n=number, total=len(hints))
        if number > seen + 1:
            raise WorkbookError("hint.not_yet", id=chosen.id, n=number, next=seen + 1)
    elif show_all and seen < len(hints) and not confirm(ctx, t("hint.ask_all", id=chosen.id, n=len(hints) - seen), yes):
        ctx.out.print(t("hint.all_cancelled", id=chosen.id))
        return exitcodes.OK
    shown, problem = state.show_hints(chosen.id, len(hints), show_all, number)
    seen = max(seen, shown)
    picked = list(enumerate(hints, 1)) if show_all else [(shown, hints[shown - 1])]
    for n, h in picked:
        label = t("hint.title", n=n, total=len(hints)) + (f" · {h['part']}" if h.get("part") else "")
        if h.get("level") in LEVELS:
            label += " · " + t("hint.level." + h["level"])
        if shows_code(h):
            ctx.out.print(Text("▶ " + t("hint.shows_code"), style="bold yellow"))
        ctx.out.print(Panel(Markdown(pick(h)), title=label, title_align="left", border_style="yellow"))
    if not show_all:
        left = len(hints) - seen
        ctx.out.print(t("hint.more", n=left, id=chosen.id) if left else t("hint.last", id=chosen.id), style="dim")
        if left and shows_code(hints[seen]):
            ctx.out.print(t("hint.next_shows_code"), style="yellow")
        if seen > 1:
            ctx.out.print(t("hint.again", id=chosen.id, seen=seen), style="dim")
    ctx.warn(problem)
    return exitcodes.OK
