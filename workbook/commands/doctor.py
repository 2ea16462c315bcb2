"""`workbook doctor`: what the workbook found on this machine, and how to fix what's wrong."""

from __future__ import annotations

import shutil
import sys

from rich.table import Table

from .. import catalog, exitcodes, toolchain
from ..i18n import t
from .common import console


def doctor() -> int:
    problems: list[str] = []
    table = Table(show_header=False, box=None)
    table.add_row(t("doctor.python"), sys.version.split()[0] + f"  ({sys.executable})")
    mojo = toolchain.mojo_binary()
    # The compiler says its own version (its wheel may be installed without the `mojo` wrapper).
    versions = {"mojo": toolchain.mojo_version(), "max": toolchain.package_version("max")}
    for name, found in versions.items():
        pinned = toolchain.PINNED[name]
        mark = "✔" if found == pinned else "✘"
        table.add_row(name, f"{mark} {found or t('doctor.missing')}  ({t('doctor.pinned', v=pinned)})")
        if found != pinned:
            problems.append(t("doctor.fix_pin", name=name, v=pinned))
    table.add_row(t("doctor.compiler"), str(mojo or t("doctor.missing")))
    if mojo is None:
        problems.append(t("doctor.fix_mojo"))
    gpu = toolchain.gpu()
    if gpu:
        cc = f"{gpu.compute_capability}" if gpu.compute_capability else "?"
        table.add_row(t("doctor.gpu"), t("doctor.gpu_found", name=gpu.name, cc=cc, driver=gpu.driver))
    else:
        table.add_row(t("doctor.gpu"), t("doctor.gpu_none", target=toolchain.gpu_target()))
        if shutil.which("nvidia-smi"):
            problems.append(t("doctor.fix_gpu"))
    table.add_row(t("doctor.target"), toolchain.gpu_target())
    table.add_row(t("doctor.cache"), str(toolchain.cache_dir()))
    table.add_row(t("doctor.max_cache"), str(toolchain.max_cache_dir()))
    table.add_row(t("doctor.root"), str(catalog.root()))
    sanitizer = shutil.which("compute-sanitizer")
    table.add_row("compute-sanitizer", sanitizer or t("doctor.missing"))
    try:
        puzzles = catalog.all_puzzles()
        table.add_row(t("doctor.puzzles"), ", ".join(p.id for p in puzzles))
        from .. import engine

        for p in puzzles:
            gate = engine.gpu_gate(p, gpu)
            if gate:
                table.add_row("", f"{p.id}: {gate}")
    except catalog.CatalogError as exc:
        problems.append(str(exc))
    console.print(table)
    if problems:
        console.print(f"[bold red]{t('doctor.problems')}[/]")
        for problem in problems:
            console.print(f"  ✘ {problem}")
        return exitcodes.TOOLCHAIN
    console.print(f"[bold green]{t('doctor.all_good')}[/]")
    return exitcodes.OK
