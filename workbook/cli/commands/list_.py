"""`workbook list`: every puzzle by chapter, the learner's progress, a bar per chapter."""

from __future__ import annotations

from rich.cells import cell_len
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ...core import exitcodes, toolchain
from ...core.i18n import pick, t
from ...core.results import document
from ...course import catalog, gating
from ...course.state import Progress
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


def title_cell(puzzle, applied: bool) -> Text:
    """The title; `reveal --apply` put the solution in: said after it (the verdict's column
    stays as narrow as its longest verdict, and every chapter's columns line up)."""
    text = Text(title(puzzle))
    if applied:
        text.append(" · " + t("list.solution_applied"), style="dim")
    return text


def counts(progresses: list[Progress]) -> tuple[int, int]:
    """Passes on a GPU, and passes without one (the simulator, or the CPU): two counts,
    not one number with a simulator pass as half a point."""
    gpu = sum(p == Progress.DONE for p in progresses)
    sim = sum(p in (Progress.PASSED_SIM, Progress.PASSED_CPU) for p in progresses)
    return gpu, sim


def main(ctx: Context) -> int:
    puzzles = catalog.all_puzzles()
    chapters = catalog.chapters()
    current = load_state(ctx)
    gpu = toolchain.gpu()
    if ctx.as_json:
        rows = [{"id": p.id, "chapter": p.chapter, "title": p.title["en"], "kind": p.kind,
                 "progress": current.of(p.id).progress.value, "hints_shown": current.of(p.id).hints_shown,
                 "hints": len(p.hints), "solution_applied": current.of(p.id).solution_applied,
                 "gate": str(gating.gate(p, gpu) or "")} for p in puzzles]
        on_gpu, on_sim = counts([current.of(p.id).progress for p in puzzles])
        ctx.json(document(puzzles=rows, gpu=gpu.name if gpu else None,
                          passed={"gpu": on_gpu, "sim": on_sim, "total": len(puzzles)}))
        return exitcodes.OK
    gpu_gates = {p.id: gating.gate(p, gpu) is not None for p in puzzles}
    # One width for each column over every chapter: the tables line up, and a long verdict in
    # one chapter does not squeeze that chapter's titles alone.
    status_width = max(cell_len(label(current.of(p.id).progress, gpu_gates[p.id]).plain) for p in puzzles)
    hints_width = max(cell_len(t("list.hints", shown=current.of(p.id).hints_shown, total=len(p.hints)))
                      for p in puzzles)
    for number in sorted({p.chapter for p in puzzles}):
        members = [p for p in puzzles if p.chapter == number]
        on_gpu, on_sim = counts([current.of(p.id).progress for p in members])
        name = pick(chapters[number].title) if number in chapters else ""
        head = Table.grid(padding=(0, 1), expand=True)
        head.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        head.add_column(no_wrap=True)
        head.add_column(no_wrap=True, justify="right")
        tally = Text.assemble(("✔", "bold green"), f"{on_gpu} ", ("◐", "cyan"), f"{on_sim} /{len(members)}")
        head.add_row(Text(t("list.chapter", n=number, title=name), style="bold"),
                     ProgressBar(total=len(members), completed=on_gpu + on_sim, width=16), tally)
        ctx.out.print(head)
        table = Table(box=None, pad_edge=False, show_header=False, padding=(0, 1), expand=True)
        table.add_column(style="bold", no_wrap=True, width=5)
        table.add_column(overflow="fold", ratio=1)  # a long title wraps: nothing is cut
        table.add_column(no_wrap=True, width=status_width)
        table.add_column(justify="right", no_wrap=True, width=hints_width)
        for puzzle in members:
            ps = current.of(puzzle.id)
            table.add_row("  " + puzzle.id, title_cell(puzzle, bool(ps.solution_applied)),
                          label(ps.progress, gpu_gates[puzzle.id]),
                          t("list.hints", shown=ps.hints_shown, total=len(puzzle.hints)))
        ctx.out.print(table)
    on_gpu, on_sim = counts([current.of(p.id).progress for p in puzzles])
    ctx.out.print(Text.assemble(("✔ ", "bold green"), t("list.passed_gpu", n=on_gpu, total=len(puzzles)), "   ",
                                ("◐ ", "cyan"), t("list.passed_sim", n=on_sim, total=len(puzzles))))
    if gpu is None:
        ctx.out.print(t("list.no_gpu"), style="dim")
    return exitcodes.OK
