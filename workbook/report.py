"""Rendering results with Rich. Computing happens elsewhere: this module only draws.

`--json` and this view are two renderings of the same PuzzleResult. Every
view is designed for an 80-column terminal first: long cells are cut with an
ellipsis rather than wrapped, and wide detail goes below a table, not in it.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from .i18n import Msg, pick, t
from .results import CaseResult, DeviceResult, Finding, OutputCheck, PartResult, Picture, PuzzleResult, Status

STYLE = {
    Status.PASS: "bold green",
    Status.FAIL: "bold red",
    Status.COMPILE_ERROR: "bold red",
    Status.CRASH: "bold red",
    Status.TIMEOUT: "bold red",
    Status.NOT_STARTED: "bold yellow",
    Status.NOT_RUN: "dim",
    Status.SKIPPED: "yellow",
    Status.COMPILED: "cyan",
}
ICON = {
    Status.PASS: "✔", Status.FAIL: "✘", Status.COMPILE_ERROR: "✘", Status.CRASH: "✘",
    Status.TIMEOUT: "⏱", Status.NOT_STARTED: "…", Status.NOT_RUN: "–", Status.SKIPPED: "–",
    Status.COMPILED: "◆",
}
# Error map cells: ok, close to the tolerance, wrong, NaN/Inf.
CELL = [("■", "green"), ("■", "yellow"), ("■", "red"), ("■", "magenta")]
MAP_WIDTH = 32
PICTURE_COLUMNS = 12  # cells of the who-wrote-what picture per row
DEVICE_ORDER = ("cpu", "sim", "gpu")


def badge(status: Status, short: bool = False) -> Text:
    if short:
        return Text(ICON[status], style=STYLE[status])
    return Text(f"{ICON[status]} {t('status.' + status.value)}", style=STYLE[status])


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2e}"


def say(message: Msg | None) -> str:
    return message.text() if message else ""


def reasons(dev: DeviceResult) -> str:
    return "; ".join(m.text() for m in dev.reasons)


def device_label(device: str, stage: str = "kernels") -> str:
    label = t("device." + device)
    return t("report.through_graph", device=label) if stage == "graph" else label


# ---------------------------------------------------------------------------
# `workbook run`: the full report
# ---------------------------------------------------------------------------


def render_result(console: Console, result: PuzzleResult, title: str) -> None:
    head = Text.assemble((f"{result.id}  ", "bold"), (title, "bold"), "   ", badge(result.status))
    sub = t("report.seed", seed=result.seed)
    if result.solutions:
        sub += " · " + t("report.using_solutions")
    if result.cached:
        sub += " · " + t("report.cached")
    console.print(Panel(Group(head, Text(sub, style="dim")), box=box.ROUNDED, expand=True))
    if result.status == Status.NOT_STARTED:
        console.print(t("report.not_started", id=result.id))
        return
    if result.problem:
        console.print(Text(say(result.problem), style="bold red"))
    if result.diagnostics or result.compiler_output:
        render_diagnostics(console, result)
    for part in result.parts:
        render_part(console, result, part)
    timing = t("report.total_time", seconds=f"{result.seconds:.1f}")
    if result.first_verdict is not None and result.first_verdict < result.seconds - 0.5:
        timing += " · " + t("report.first_verdict", seconds=f"{result.first_verdict:.1f}")
    console.print(Text(timing, style="dim"))
    if result.quick:
        console.print(Text(t("report.quick"), style="dim"))


def render_diagnostics(console: Console, result: PuzzleResult) -> None:
    console.print(Text(t("report.compile_failed"), style="bold red"))
    for diag in result.diagnostics:
        console.print(Text.assemble((f"{diag.file}:{diag.line}:{diag.column}", "bold"), ": ",
                                    (diag.message, "red")))
        if diag.source:
            console.print(source_excerpt(diag))
        if diag.hint:
            console.print(Text("  " + say(diag.hint), style="yellow"))
        for note in diag.notes:
            console.print(Text("  " + t("report.note") + ": " + note, style="dim"), overflow="fold")
    if result.compiler_output:
        console.print(Panel(result.compiler_output, title=t("report.compiler_output"), border_style="red"))


def source_excerpt(diag) -> Text:
    """The lines around an error, highlighted, with a caret under the column."""
    lexer = "python" if diag.file.endswith(".py") else "mojo"
    code = "\n".join(text for _, text in diag.source)
    lines = Syntax(code, lexer, theme="ansi_dark").highlight(code).split("\n")
    width = len(str(diag.source[-1][0]))
    out = Text()
    for (number, _), line in zip(diag.source, lines):
        mark = "❯" if number == diag.line else " "
        out.append(f"{mark} {number:>{width}} │ ", style="bold red" if number == diag.line else "dim")
        out.append_text(line)
        out.append("\n")
        if number == diag.line:
            out.append(" " * (width + 5 + max(diag.column - 1, 0)) + "^\n", style="bold red")
    out.rstrip()
    return out


def render_part(console: Console, result: PuzzleResult, part: PartResult) -> None:
    if len(result.parts) > 1:
        console.rule(Text.assemble(t("report.part") + f" {part.id}  ", badge(part.status)), align="left")
    for name in sorted(part.kernels, key=lambda d: DEVICE_ORDER.index(d) if d in DEVICE_ORDER else 9):
        render_device(console, part, part.kernels[name], "kernels")
    if part.graph:
        console.print(Text(t("report.graph_stage"), style="bold"))
        for dev in part.graph.values():
            render_device(console, part, dev, "graph")


def render_device(console: Console, part: PartResult, dev: DeviceResult, stage: str) -> None:
    name = device_label(dev.device, stage)
    if dev.device == "gpu" and dev.device_name not in ("", "GPU"):
        name += f" ({dev.device_name})"
    line = Text.assemble((f"{name}  ", "bold"), badge(dev.status))
    if dev.status in (Status.PASS, Status.FAIL) and dev.cases:
        if any(o.nan_count or o.inf_count for c in dev.cases for o in c.outputs):
            line.append("   " + t("report.errors", abs="NaN/Inf", rel="NaN/Inf"), style="magenta")
        else:
            line.append("   " + t("report.errors", abs=fmt(dev.max_abs_error), rel=fmt(dev.max_rel_error)))
    console.print(line)
    if dev.status in (Status.COMPILED, Status.NOT_RUN, Status.SKIPPED):
        console.print(Text("  " + reasons(dev), style="cyan" if dev.status == Status.COMPILED else "dim"))
        return
    if dev.status in (Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT):
        if dev.reasons:
            console.print(Text("  " + reasons(dev), style="bold red"))
        if dev.findings:
            render_findings(console, dev)
        if dev.output:
            console.print(Panel(dev.output[-3000:], title=t("status." + dev.status.value), border_style="red"))
        return
    if dev.cases:
        console.print(Text("  " + t("report.tolerance", atol=f"{part.atol:g}", rtol=f"{part.rtol:g}"), style="dim"))
        console.print(cases_table(dev))
        render_checks(console, dev)
    if dev.findings:
        render_findings(console, dev)
    elif dev.tools is not None:
        style = "green" if dev.findings is not None else "yellow"
        console.print(Text("  " + say(dev.tools), style=style))
    if dev.repeats > 1 and dev.device != "sim":
        console.print(Text("  " + t("report.repeats", n=dev.repeats), style="dim"))
    if dev.device == "sim" and dev.cases:
        console.print(Text("  " + t("report.sim_orders"), style="dim"))
    if dev.reasons:
        console.print(Text("  " + reasons(dev), style="bold red"))
    failing = next((c for c in dev.cases if c.ran and not c.passed), None)
    if failing is not None:
        render_case_detail(console, failing)


def case_name(case: CaseResult) -> str:
    return pick(case.label) if case.label else case.name


def cases_table(dev: DeviceResult) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column(t("report.col.case"), no_wrap=True, overflow="ellipsis", max_width=28)
    table.add_column(t("report.col.status"), no_wrap=True)
    table.add_column(t("report.col.output"), no_wrap=True, overflow="ellipsis", max_width=14)
    table.add_column(t("report.col.max_abs"), justify="right", no_wrap=True)
    table.add_column(t("report.col.max_rel"), justify="right", no_wrap=True)
    table.add_column(t("report.col.mismatches"), justify="right", no_wrap=True)
    for case in dev.cases:
        if not case.ran:
            table.add_row(case_name(case), badge(Status.NOT_RUN), "—", "", "", "")
            continue
        status = Status.PASS if case.passed else Status.FAIL
        mark = ""
        if case.nondeterministic or case.order_dependent:
            mark = " ⚡"
        for k, out in enumerate(case.outputs):
            table.add_row(
                case_name(case) if k == 0 else "", Text.assemble(badge(status), (mark, "bold red")) if k == 0 else "",
                out.name, _error_cell(out.max_abs_error, out), _error_cell(out.max_rel_error, out),
                Text(f"{out.mismatches}/{out.size}", style="red" if out.mismatches else ""),
            )
    return table


def render_checks(console: Console, dev: DeviceResult) -> None:
    """The puzzle's own checks (invariants): a line for the passing kinds, each failure in full."""
    labels_ok: list[str] = []
    for case in dev.cases:
        for label, ok, detail in case.invariants:
            text = pick(label)
            if ok:
                if text not in labels_ok:
                    labels_ok.append(text)
            else:
                console.print(Text(f"  ✘ {case_name(case)}: {text} ({pick(detail)})", style="red"))
    if labels_ok:
        console.print(Text("  " + t("report.checks_passed", checks=", ".join(labels_ok)), style="green"))
    if any(c.nondeterministic for c in dev.cases):
        console.print(Text("  ⚡ " + t("report.race"), style="bold red"))
    if any(c.order_dependent for c in dev.cases):
        console.print(Text("  ⚡ " + t("report.order"), style="bold red"))


def _error_cell(value: float | None, out: OutputCheck) -> Text:
    """An error figure; NaN/Inf outputs say so rather than the error of their finite part."""
    if out.nan_count or out.inf_count:
        return Text("NaN/Inf", style="magenta")
    return Text(fmt(value), style="" if out.passed else "red")


def render_findings(console: Console, dev: DeviceResult) -> None:
    title = t("report.findings_sim") if dev.device == "sim" else t("report.findings_tool")
    console.print(Text("  " + title, style="bold red"))
    for f in dev.findings or []:
        console.print(finding_line(f), overflow="fold")
    if dev.tools is not None and dev.device != "sim":
        console.print(Text("  " + say(dev.tools), style="dim"))


def finding_line(f: Finding) -> Text:
    """A finding, then where: each line of the learner's code it names, with its text
    (a race names two), then the kernel, the case and how many threads did the same."""
    text = Text("   ✘ ", style="red")
    text.append(f.message.text(), style="red")
    places = [(f.file, f.line, f.source)] if f.file and f.line else []
    if f.other_file and f.other_line and (f.other_file, f.other_line) != (f.file, f.line):
        places.append((f.other_file, f.other_line, f.other_source))
    for file, line, source in places:
        text.append(f"\n     {file}:{line}", style="bold")
        if source:
            text.append(f"  │ {source}")
    where = []
    if f.tool not in ("sim", "graph"):
        where.append(f.tool)
    if f.kernel:
        where.append(f.kernel)
    if f.file and not f.line:
        where.append(f.file)
    if f.case:
        where.append(t("report.in_case", case=f.case))
    if f.count > 1:
        where.append(t("report.seen_times", n=f.count) if f.tool == "sim" else f"×{f.count}")
    if where:
        text.append("\n     " + " · ".join(where), style="dim")
    if f.detail:
        text.append("\n     " + f.detail, style="dim")
    return text


def error_map(out: OutputCheck) -> Text:
    """One cell per element (or per run of elements): where the errors are, at a glance."""
    text = Text()
    per_cell = max(1, -(-out.size // len(out.error_map))) if out.error_map else 1
    for row in range(0, len(out.error_map), MAP_WIDTH):
        text.append(f"  {row * per_cell:>6} ", style="dim")
        for cell in out.error_map[row:row + MAP_WIDTH]:
            glyph, style = CELL[cell]
            text.append(glyph + " ", style=style)
        text.append("\n")
    text.append("         ")
    for (glyph, style), key in zip(CELL, ("ok", "close", "wrong", "nan")):
        text.append(glyph, style=style)
        text.append(" " + t("report.map." + key) + "  ", style="dim")
    if per_cell > 1:
        text.append("\n         " + t("report.map.per_cell", n=per_cell), style="dim")
    return text


def render_case_detail(console: Console, case: CaseResult) -> None:
    for out in case.outputs:
        if out.passed:
            continue
        console.print(Text.assemble(("  " + t("report.first_failure", case=case_name(case), output=out.name), "bold"),
                                    ("  " + t("report.shape", shape="×".join(map(str, out.shape))), "dim")))
        if out.nan_count or out.inf_count:
            key = "report.nan_written" if _nan_written(out, case.picture) else "report.nan_inf"
            console.print(Text("  " + t(key, nan=out.nan_count, inf=out.inf_count), style="magenta"))
        console.print(error_map(out))
        values = Table(box=None, pad_edge=False)
        values.add_column(t("report.col.index"), justify="right", style="dim")
        values.add_column(t("report.col.got"), justify="right")
        values.add_column(t("report.col.expected"), justify="right")
        bad = {i for i, _, _ in out.first_wrong}
        shown = list(enumerate(zip(out.first_got, out.first_expected)))
        later = [(i, (g, e)) for i, g, e in out.first_wrong if i >= len(shown)]
        for number, (i, (g, e)) in enumerate(shown + later):
            if number == len(shown):
                values.add_row("…", "", "")
            values.add_row(str(i), Text(f"{g:.6g}", style="red" if i in bad else ""), f"{e:.6g}")
        console.print(values)
        if case.picture:
            render_picture(console, case.picture, out)
        return  # one output in detail is enough; the table lists the rest


def _nan_written(out: OutputCheck, picture: Picture | None) -> bool:
    """Whether every NaN element of `out` was written by some thread (the simulator's
    picture says so): then it was computed from a NaN, not forgotten."""
    if picture is None or out.name not in picture.outputs:
        return False
    _, ids = picture.outputs[out.name]
    if len(out.error_map) != len(ids):
        return False
    nan = [k for k, cell in enumerate(out.error_map) if cell == 3]
    return bool(nan) and all(ids[k] >= 0 for k in nan)


def _thread_label(thread_id: int, picture: Picture) -> str:
    """A simulator writer id (block * threads + thread) as the learner names it."""
    if thread_id < 0:
        return "·"
    per_block = picture.block[0] * picture.block[1] * picture.block[2]
    block, thread = divmod(thread_id, per_block)
    blocks = picture.grid[0] * picture.grid[1] * picture.grid[2]
    tx, ty = thread % picture.block[0], thread // picture.block[0]
    label = f"{tx},{ty}" if picture.block[1] > 1 else str(tx)
    if blocks > 1:
        bx, by = block % picture.grid[0], block // picture.grid[0]
        label = (f"{bx},{by}" if picture.grid[1] > 1 else str(bx)) + ":" + label
    return label


def render_picture(console: Console, picture: Picture, out: OutputCheck) -> None:
    """Which simulated thread wrote each element of the failing output (and of
    the first block's shared memory): a wrong element next to its writer."""
    if out.name not in picture.outputs:
        return
    shape, ids = picture.outputs[out.name]
    console.print(Text("  " + t("report.picture", output=out.name), style="bold"))
    console.print(Text("  " + t("report.picture_legend"), style="dim"))
    console.print(_grid(shape, ids, picture, out.error_map if len(out.error_map) == len(ids) else None))
    for alloc, shared_ids in picture.shared:
        name, shape = picture.shared_names.get(alloc, ""), picture.shared_shapes.get(alloc, [len(shared_ids)])
        title = t("report.picture_shared_named", name=name) if name else t("report.picture_shared", n=alloc + 1)
        console.print(Text("  " + title, style="bold"))
        console.print(_grid(shape, shared_ids, picture, None))


def _grid(shape: list[int], ids: list[int], picture: Picture, cells: list[int] | None) -> Text:
    cols = shape[-1] if len(shape) >= 2 else PICTURE_COLUMNS
    rows = len(ids) // cols if len(shape) >= 2 else -(-len(ids) // cols)
    shown_cols = min(cols, PICTURE_COLUMNS)
    labels = [_thread_label(i, picture) for i in ids]
    width = max([len(x) for x in labels] + [1])
    text = Text()
    for r in range(min(rows, 16)):
        text.append(f"  {r * cols:>5} ", style="dim")
        for c in range(shown_cols):
            k = r * cols + c
            if k >= len(ids):
                break
            style = "magenta" if ids[k] < 0 else ("red" if cells and cells[k] >= 2 else "")
            text.append(labels[k].rjust(width) + " ", style=style)
        if shown_cols < cols:
            text.append("…", style="dim")
        text.append("\n")
    if rows > 16:
        text.append("        …\n", style="dim")
    text.rstrip()
    return text


# ---------------------------------------------------------------------------
# `workbook check`: the summary table
# ---------------------------------------------------------------------------


def summary_table(results: list[PuzzleResult], titles: dict[str, str]) -> Table:
    """The terse table of `workbook check`: one line per puzzle, even at 80 columns."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    table.add_column(t("report.col.puzzle"), no_wrap=True)
    table.add_column(t("report.col.title"), no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column(t("report.col.status"), no_wrap=True)
    shown = [d for d in DEVICE_ORDER if any(d in r.device_statuses() for r in results)]
    for d in shown:
        table.add_column(t("device_short." + d), justify="center", no_wrap=True)
    table.add_column(t("report.col.time"), justify="right", no_wrap=True)
    for r in results:
        devices = r.device_statuses()
        cells = [badge(devices[d], short=True) if d in devices else Text("·", style="dim") for d in shown]
        table.add_row(r.id, Text(titles.get(r.id, r.title)), badge(r.status), *cells,
                      t("report.cached_short") if r.cached else f"{r.seconds:.0f}s")
    return table


def done_line(result: PuzzleResult) -> Text:
    """One puzzle's verdict as its check ends (`check` with several at once)."""
    line = Text.assemble((f"  {result.id:<5}", "bold"), badge(result.status))
    line.append(f"  {result.seconds:.0f} s" if not result.cached else "  " + t("report.cached_short"), style="dim")
    return line


def legend() -> Text:
    text = Text("  ")
    for status in (Status.PASS, Status.FAIL, Status.COMPILED, Status.SKIPPED):
        text.append_text(badge(status, short=True))
        text.append(" " + t("status." + status.value) + "  ", style="dim")
    return text
