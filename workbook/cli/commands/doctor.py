"""`workbook doctor`: what the workbook found on this machine, and how to fix what's wrong."""

from __future__ import annotations

import shutil
import sys

from rich.table import Table

from ...child import containment
from ...core import exitcodes, settings, toolchain
from ...core.i18n import WorkbookError, t
from ...core.results import document
from ...course import catalog, gating, manifest
from ...run import sanitizer
from .common import Context


def _setting(read, problems: list[str]) -> str:
    """A setting's value for the table; a bad one is a problem to fix, not a failed doctor."""
    try:
        return str(read())
    except settings.SettingError as exc:
        if exc.msg.text() not in problems:
            problems.append(exc.msg.text())
        return "?"


def _cache_notes() -> list:
    """Where the cache is if not where it was asked to be, and the last entry ignored in it
    (cachetrust.py): notes, not problems: the cache is only a cache."""
    from ...core import cachetrust

    try:
        return cachetrust.notes()
    except (OSError, settings.SettingError):
        return []


def main(ctx: Context) -> int:
    problems: list[str] = []
    toolchain.ask_gpu_afresh()  # never an answer kept from before: this is where one looks when in doubt
    _setting(settings.check_all, problems)
    target = _setting(toolchain.gpu_target, problems)
    rows: list[tuple[str, str]] = [(t("doctor.python"), sys.version.split()[0] + f"  ({sys.executable})")]
    mojo = toolchain.mojo_binary()
    # The compiler says its own version (its wheel may be installed without the `mojo` wrapper).
    versions = {"mojo": toolchain.mojo_version(), "max": toolchain.package_version("max")}
    for name, found in versions.items():
        pinned = toolchain.PINNED[name]
        mark = "✔" if found == pinned else "✘"
        rows.append((name, f"{mark} {found or t('doctor.missing')}  ({t('doctor.pinned', v=pinned)})"))
        if found != pinned:
            problems.append(t("doctor.fix_pin", name=name, v=pinned))
    rows.append((t("doctor.compiler"), str(mojo or t("doctor.missing"))))
    if mojo is None:
        problems.append(t("doctor.fix_mojo"))
    gpu = toolchain.gpu()
    if gpu:
        cc = f"{gpu.compute_capability}" if gpu.compute_capability else "?"
        rows.append((t("doctor.gpu"), t("doctor.gpu_found", name=gpu.name, cc=cc, driver=gpu.driver)))
    else:
        rows.append((t("doctor.gpu"), t("doctor.gpu_none", target=target)))
        if shutil.which("nvidia-smi") and not settings.no_gpu():
            problems.append(t("doctor.fix_gpu"))
    rows.append((t("doctor.target"), target))
    rows.append((t("doctor.sim"), t("doctor.sim_what")))
    # The simulator's launcher is compiled by Mojo, then linked by the workbook with the C
    # compiler Mojo itself links with, against Mojo's runtime libraries; lines come from
    # the llvm-symbolizer that ships with Mojo.
    from ...compile import symbols

    for label, found, fix in ((t("doctor.cc"), toolchain.c_compiler(), "doctor.fix_cc"),
                              (t("doctor.mojo_libs"), toolchain.mojo_libs(), "doctor.fix_mojo_libs"),
                              ("llvm-symbolizer", symbols.symbolizer(), None)):
        rows.append((label, str(found or t("doctor.missing"))))
        if found is None and fix:
            problems.append(t(fix))
    rows.append((t("doctor.cache"), _setting(settings.cache_dir, problems)))
    cache_notes = _cache_notes()
    rows += [(t("doctor.cache_note"), note.text()) for note in cache_notes]
    rows.append((t("doctor.max_cache"), str(settings.max_cache_dir())))
    found = settings.find_root()
    rows.append((t("doctor.root"), str(found) if found else t("doctor.no_root")))
    rows.append((t("doctor.curriculum"), str(settings.curriculum())))
    rows.append(("compute-sanitizer", str(sanitizer.locate() or t("doctor.missing"))))
    # How a learner child's whole tree (shared memory, every process) is bounded: a cgroup,
    # or the watcher where none can be had here (workbook/child/containment.py).
    contained = _setting(lambda: containment.support().describe(), problems)
    shown = t("doctor.containment_watcher", why=containment.support().why) if contained == containment.WATCHER \
        else contained
    rows.append((t("doctor.containment"), shown))
    gated = []
    try:
        puzzles = catalog.all_puzzles()
        rows.append((t("doctor.puzzles"), str(len(puzzles))))
        for p in puzzles:
            why = gating.gate(p, gpu)
            if why:
                gated.append(f"{p.id}: {why.text()}")
                rows.append(("", gated[-1]))
    except manifest.CatalogError as exc:
        problems.append(exc.msg.text())
    except WorkbookError:  # no workspace here: nothing to count, and not a problem of the toolchain
        pass
    if ctx.as_json:
        ctx.json(document(versions=versions, gpu=gpu.name if gpu else None, target=target,
                          root=str(found) if found else None, curriculum=str(settings.curriculum()),
                          sanitizer=str(sanitizer.locate() or ""), containment=contained, gated=gated,
                          problems=problems,
                          cache=_setting(settings.cache_dir, problems),
                          cache_notes=[{"key": n.key, "text": n.text("en")} for n in cache_notes],
                          ok=not problems))
        return exitcodes.TOOLCHAIN if problems else exitcodes.OK
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for row in rows:
        table.add_row(*row)
    ctx.out.print(table)
    if problems:
        ctx.out.print(t("doctor.problems"), style="bold red")
        for problem in problems:
            ctx.out.print(f"  ✘ {problem}")
        return exitcodes.TOOLCHAIN
    ctx.out.print(t("doctor.all_good"), style="bold green")
    return exitcodes.OK
