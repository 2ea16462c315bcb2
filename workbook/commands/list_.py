"""`workbook list`: every puzzle by chapter, the learner's progress, a bar per chapter."""

from __future__ import annotations

from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .. import catalog, exitcodes, gating, toolchain
from ..i18n import pick, t
from ..results import document
from ..state import Progress
from .common import Context, load_state, title

LOOK = {
    Progress.DONE: ("✔", "bold green"),
    Progress.PASSED_SIM: ("◐", "cyan"),
    Progress.PASSED_CPU: ("◐", "cyan"),
    Progress.COMPILED: ("◆", "cyan"),
    Progress.FAILED: ("✘", "red"),
    Progress.NOT_STARTED: ("·", "dim"),
}


def label(progress: Progress, gated: bool) -> Text:
    if gated:
        return Text("– " + t("list.cannot_run_here"), style="yellow")
    glyph, style = LOOK[progress]
    return Text(f"{glyph} {t('progress.' + progress.value)}", style=style)


def main(ctx: Context) -> int:
    puzzles = catalog.all_puzzles()
    chapters = catalog.chapters()
    current = load_state(ctx)
    gpu = toolchain.gpu()
    if ctx.as_json:
        rows = [{"id": p.id, "chapter": p.chapter, "title": p.title["en"], "kind": p.kind,
                 "progress": current.of(p.id).progress.value, "hints_shown": current.of(p.id).hints_shown,
                 "hints": len(p.hints), "gate": str(gating.gate(p, gpu) or "")} for p in puzzles]
        ctx.json(document(puzzles=rows, gpu=gpu.name if gpu else None))
        return exitcodes.OK
    total = 0.0
    for number in sorted({p.chapter for p in puzzles}):
        members = [p for p in puzzles if p.chapter == number]
        done = sum(current.of(p.id).progress.credit for p in members)
        total += done
        name = pick(chapters[number].title) if number in chapters else ""
        head = Table.grid(padding=(0, 1), expand=True)
        head.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        head.add_column(no_wrap=True)
        head.add_column(no_wrap=True, justify="right")
        head.add_row(Text(t("list.chapter", n=number, title=name), style="bold"),
                     ProgressBar(total=len(members), completed=done, width=16), f"{done:g}/{len(members)}")
        ctx.out.print(head)
        table = Table(box=None, pad_edge=False, show_header=False, padding=(0, 1), expand=True)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        for puzzle in members:
            ps = current.of(puzzle.id)
            gated = gating.gate(puzzle, gpu) is not None
            table.add_row("  " + puzzle.id, Text(title(puzzle)), label(ps.progress, gated),
                          t("list.hints", shown=ps.hints_shown, total=len(puzzle.hints)))
        ctx.out.print(table)
    ctx.out.print(t("list.progress", done=f"{total:g}", total=len(puzzles)))
    if gpu is None:
        ctx.out.print(t("list.no_gpu"), style="dim")
    return exitcodes.OK
