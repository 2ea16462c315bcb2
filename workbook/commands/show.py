"""`workbook show ID`: the puzzle text, rendered, and the files to edit."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from .. import exitcodes
from ..backups import relative
from ..i18n import language, pick, t
from .common import console, resolve, title


def show(puzzle_id: str) -> int:
    puzzle, _ = resolve(puzzle_id)
    path = puzzle.text_path(language())
    if not path.exists():
        path = puzzle.text_path("en")
    console.print(Panel(f"[bold]{puzzle.id}[/]  {title(puzzle)}", expand=True))
    console.print(Markdown(path.read_text(encoding="utf-8")))
    files = Table(title=t("show.files"), title_justify="left", show_header=False, box=None)
    for file in puzzle.learner_files():
        files.add_row("✎", relative(file))
    console.print(files)
    parts = Table(title=t("show.parts"), title_justify="left", box=None)
    parts.add_column(t("show.col.part"))
    parts.add_column(t("show.col.title"))
    parts.add_column(t("show.col.devices"))
    parts.add_column(t("show.col.run"))
    for part in puzzle.parts:
        devices = ", ".join(t("device." + d) for d in part.devices)
        command = f"workbook run {puzzle.id}" + (f" --part {part.id}" if len(puzzle.parts) > 1 else "")
        parts.add_row(part.id, pick(part.title), devices, command)
    console.print(parts)
    console.print(t("show.how", id=puzzle.id))
    return exitcodes.OK
