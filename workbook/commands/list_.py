"""`workbook list`: every puzzle, its title, the learner's status, and overall progress."""

from __future__ import annotations

from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .. import engine, exitcodes, toolchain
from ..i18n import t
from .common import all_puzzles, console, load_state, title


def progress_label(ps, puzzle, gate: str) -> Text:
    if gate:
        return Text(t("list.cannot_run_here"), style="yellow")
    if ps.done or (ps.status == "pass" and "gpu" not in ps.devices):
        return Text("✔ " + t("list.done"), style="bold green")
    if ps.status in ("pass", "compiled") and ps.devices.get("cpu") == "pass":
        return Text("◐ " + t("list.cpu_only"), style="cyan")
    if ps.status == "compiled":
        return Text("◆ " + t("list.compiled_only"), style="cyan")
    if ps.status in ("not_started",) and not ps.last_run:
        return Text("· " + t("list.not_started"), style="dim")
    return Text("✘ " + t("status." + ps.status), style="red")


def list_puzzles() -> int:
    puzzles = all_puzzles()
    current = load_state()
    gpu = toolchain.gpu()
    table = Table(box=None, pad_edge=False)
    table.add_column(t("list.col.id"), style="bold")
    table.add_column(t("list.col.title"))
    table.add_column(t("list.col.status"))
    table.add_column(t("list.col.hints"), justify="right")
    done = 0.0
    for puzzle in puzzles:
        ps = current.of(puzzle.id)
        gate = engine.gpu_gate(puzzle, gpu)
        label = progress_label(ps, puzzle, gate)
        done += 1.0 if str(label).startswith("✔") else 0.5 if str(label).startswith(("◐", "◆")) else 0.0
        table.add_row(puzzle.id, title(puzzle), label, f"{ps.hints_shown}/{len(puzzle.hints)}")
    console.print(table)
    bar = ProgressBar(total=max(len(puzzles), 1), completed=done, width=40)
    console.print(bar)
    console.print(t("list.progress", done=f"{done:g}", total=len(puzzles)))
    if gpu is None:
        console.print(t("list.no_gpu"), style="dim")
    return exitcodes.OK
