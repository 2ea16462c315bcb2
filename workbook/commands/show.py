"""`workbook show ID`: the puzzle text, rendered, the files to edit, and what runs where."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .. import exitcodes, toolchain
from ..backups import relative
from ..i18n import language, pick, t
from .common import Context, resolve, title


def main(ctx: Context, *, puzzle: str) -> int:
    chosen, _ = resolve(puzzle)
    path = chosen.text_path(language())
    if not path.exists():
        path = chosen.text_path("en")
    ctx.out.print(Panel(Text.assemble((chosen.id, "bold"), "  ", title(chosen)), expand=True))
    ctx.out.print(Markdown(path.read_text(encoding="utf-8")))
    files = Table(title=t("show.files"), title_justify="left", show_header=False, box=None)
    for file in chosen.learner_files():
        files.add_row("✎", Text(relative(file)))
    ctx.out.print(files)
    parts = Table(title=t("show.parts"), title_justify="left", box=None)
    parts.add_column(t("show.col.part"), no_wrap=True)
    parts.add_column(t("show.col.title"), overflow="fold")
    parts.add_column(t("show.col.devices"), no_wrap=True)
    for part in chosen.parts:
        parts.add_row(Text(part.id), Text(pick(part.title)), ", ".join(t("device." + d) for d in part.devices))
    ctx.out.print(parts)
    if len(chosen.parts) > 1:
        ctx.out.print(t("show.one_part", id=chosen.id, part=chosen.parts[-1].id), style="dim")
    if toolchain.gpu() is None and any("gpu" in p.devices for p in chosen.parts):
        key = "show.no_gpu_sim" if all(p.sim for p in chosen.parts if "gpu" in p.devices) else "show.no_gpu_compile"
        ctx.out.print(t(key), style="cyan")
    ctx.out.print(t("show.how", id=chosen.id))
    return exitcodes.OK
