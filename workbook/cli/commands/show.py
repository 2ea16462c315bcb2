"""`workbook show ID`: the puzzle text, rendered, the files to edit, and what runs where.
Longer than the terminal, and on a terminal, it goes through a pager (PAGER, else less)."""

from __future__ import annotations

import os

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ...core import exitcodes, toolchain
from ...core.i18n import language, pick, t
from ...course.backups import relative
from .common import Context, resolve, title


def main(ctx: Context, *, puzzle: str) -> int:
    chosen, _ = resolve(puzzle)
    path = chosen.text_path(language())
    if not path.exists():
        path = chosen.text_path("en")
    shown: list[RenderableType] = [Panel(Text.assemble((chosen.id, "bold"), "  ", title(chosen)), expand=True),
                                   Markdown(path.read_text(encoding="utf-8"))]
    files = Table(title=t("show.files"), title_justify="left", show_header=False, box=None)
    for file in chosen.learner_files():
        files.add_row("✎", Text(relative(file)))
    shown.append(files)
    parts = Table(title=t("show.parts"), title_justify="left", box=None)
    parts.add_column(t("show.col.part"), no_wrap=True)
    parts.add_column(t("show.col.title"), overflow="fold")
    parts.add_column(t("show.col.devices"), no_wrap=True)
    for part in chosen.parts:
        parts.add_row(Text(part.id), Text(pick(part.title)), ", ".join(t("device." + d) for d in part.devices))
    shown.append(parts)
    if len(chosen.parts) > 1:
        shown.append(Text(t("show.one_part", id=chosen.id, part=chosen.parts[-1].id), style="dim"))
    if toolchain.gpu() is None and any("gpu" in p.devices for p in chosen.parts):
        key = "show.no_gpu_sim" if all(p.sim for p in chosen.parts if "gpu" in p.devices) else "show.no_gpu_compile"
        shown.append(Text(t(key), style="cyan"))
    shown.append(Text(t("show.how", id=chosen.id)))
    if needs_pager(ctx.out, shown):
        os.environ.setdefault("LESS", "-R")  # less shows the colours instead of their escape codes
        with ctx.out.pager(styles=True):
            for item in shown:
                ctx.out.print(item)
    else:
        for item in shown:
            ctx.out.print(item)
    return exitcodes.OK


def needs_pager(console: Console, shown: list[RenderableType]) -> bool:
    """A person at a terminal, and more lines than it has."""
    if not console.is_terminal:
        return False
    lines = sum(len(console.render_lines(item, console.options, pad=False)) for item in shown)
    return lines > console.height
