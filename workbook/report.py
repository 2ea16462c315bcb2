"""Rendering results with Rich. Computing happens elsewhere: this module only draws.

`--json` and this view are two renderings of the same PuzzleResult.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from .i18n import pick, t
from .results import CaseResult, DeviceResult, OutputCheck, PartResult, PuzzleResult, Status

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


def badge(status: Status) -> Text:
    return Text(f"{ICON[status]} {t('status.' + status.value)}", style=STYLE[status])


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2e}"


def reason(dev: DeviceResult) -> str:
    """The device's reason in the learner's language (crash output stays as it came)."""
    if dev.reason_keys:
        return "; ".join(t(key, **values) for key, values in dev.reason_keys)
    return dev.reason


def device_label(device: str) -> str:
    return t("device." + device)


def render_result(console: Console, result: PuzzleResult, title: str) -> None:
    """The full report of `workbook run`."""
    head = Text.assemble((f"{result.id}  ", "bold"), (title, "bold"), "   ", badge(result.status))
    sub = t("report.seed", seed=result.seed)
    if result.solutions:
        sub += "   " + t("report.using_solutions")
    console.print(Panel(Group(head, Text(sub, style="dim")), box=box.ROUNDED, expand=True))
    if result.status == Status.NOT_STARTED:
        console.print(t("report.not_started", id=result.id))
        return
    if result.diagnostics or result.compiler_output:
        render_diagnostics(console, result)
    for part in result.parts:
        render_part(console, result, part)
    console.print(Text(t("report.total_time", seconds=f"{result.seconds:.1f}"), style="dim"))


def render_diagnostics(console: Console, result: PuzzleResult) -> None:
    console.print(Text(t("report.compile_failed"), style="bold red"))
    for diag in result.diagnostics:
        console.print(Text.assemble((f"{diag.file}:{diag.line}:{diag.column}", "bold"), ": ",
                                    (diag.message, "red")))
        if diag.source:
            console.print(source_excerpt(diag))
        for note in diag.notes:
            console.print(Text("  " + t("report.note") + ": " + note, style="dim"))
    if result.compiler_output:
        console.print(Panel(result.compiler_output, title=t("report.compiler_output"), border_style="red"))


def source_excerpt(diag) -> Text:
    """The learner's lines around an error, highlighted, with a caret under the column."""
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
        console.rule(Text.assemble(t("report.part") + f" {part.id}  ", badge(part.status)))
    for device in part.devices.values():
        render_device(console, part, device)


def render_device(console: Console, part: PartResult, dev: DeviceResult) -> None:
    name = device_label(dev.device) + (f" ({dev.device_name})" if dev.device_name not in ("", "CPU") else "")
    line = Text.assemble((f"{name}  ", "bold"), badge(dev.status))
    if dev.status in (Status.PASS, Status.FAIL):
        line.append("   " + t("report.errors", abs=fmt(dev.max_abs_error), rel=fmt(dev.max_rel_error)))
        line.append("   " + t("report.tolerance", atol=f"{part.atol:g}", rtol=f"{part.rtol:g}"), style="dim")
    console.print(line)
    if dev.status == Status.COMPILED:
        console.print(Text("  " + t("report.gpu_not_run", reason=reason(dev)), style="cyan"))
        return
    if dev.status in (Status.NOT_RUN, Status.SKIPPED):
        console.print(Text("  " + reason(dev), style="dim"))
        return
    if dev.status == Status.COMPILE_ERROR:
        console.print(Panel(dev.reason[-3000:], title=t("report.compiler_output"), border_style="red"))
        return
    if dev.status in (Status.CRASH, Status.TIMEOUT):
        console.print(Panel(dev.reason[-3000:], title=t("status." + dev.status.value), border_style="red"))
        return
    console.print(cases_table(dev))
    if dev.sanitizer is not None or dev.sanitizer_note:
        render_sanitizer(console, dev)
    if dev.repeats > 1:
        console.print(Text("  " + t("report.repeats", n=dev.repeats), style="dim"))
    if dev.reason:
        console.print(Text("  " + reason(dev), style="bold red"))
    failing = next((c for c in dev.cases if not c.passed), None)
    if failing is not None:
        render_case_detail(console, failing)


def render_sanitizer(console: Console, dev: DeviceResult) -> None:
    if not dev.sanitizer:
        style = "green" if dev.sanitizer is not None else "yellow"
        label = t("report.sanitizer_clean") if dev.sanitizer is not None else t("report.sanitizer_skipped")
        console.print(Text(f"  {label}: {dev.sanitizer_note}", style=style))
        return
    table = Table(title=t("report.sanitizer_title"), title_justify="left", box=box.SIMPLE, pad_edge=False)
    for key in ("tool", "kind", "kernel", "where", "count"):
        table.add_column(t("report.col.san_" + key))
    for f in dev.sanitizer:
        where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "—")
        table.add_row(f.tool, Text(f.kind, style="red"), f.kernel or "—", where, str(f.count))
    console.print(table)


def case_name(case: CaseResult) -> str:
    return pick(case.label) if case.label else case.name


def cases_table(dev: DeviceResult) -> Table:
    table = Table(box=box.SIMPLE_HEAVY, pad_edge=False, show_edge=False)
    table.add_column(t("report.col.case"))
    table.add_column(t("report.col.status"))
    table.add_column(t("report.col.output"))
    table.add_column(t("report.col.max_abs"), justify="right")
    table.add_column(t("report.col.max_rel"), justify="right")
    table.add_column(t("report.col.mismatches"), justify="right")
    table.add_column(t("report.col.invariants"))
    for case in dev.cases:
        status = Status.PASS if case.passed else Status.FAIL
        invariants = Text()
        for label, ok, detail in case.invariants:
            label = pick(label) if isinstance(label, dict) else label
            invariants.append(("✔ " if ok else "✘ ") + f"{label} ({detail})  ", style="green" if ok else "red")
        if case.nondeterministic:
            invariants.append(t("report.race"), style="bold red")
        for k, out in enumerate(case.outputs):
            table.add_row(
                case_name(case) if k == 0 else "", badge(status) if k == 0 else "",
                out.name, _error_cell(out.max_abs_error, out), _error_cell(out.max_rel_error, out),
                Text(f"{out.mismatches}/{out.size}", style="red" if out.mismatches else ""),
                invariants if k == 0 else "",
            )
    return table


def _error_cell(value: float | None, out: OutputCheck) -> Text:
    """An error figure; NaN/Inf outputs say so rather than the error of their finite part."""
    if out.nan_count or out.inf_count:
        return Text("NaN/Inf", style="magenta")
    return Text(fmt(value), style="" if out.passed else "red")


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
        text.append(" " + t("report.map." + key) + "   ", style="dim")
    if per_cell > 1:
        text.append(t("report.map.per_cell", n=per_cell), style="dim")
    return text


def render_case_detail(console: Console, case: CaseResult) -> None:
    for out in case.outputs:
        if out.passed:
            continue
        console.print(Text.assemble(("  " + t("report.first_failure", case=case_name(case), output=out.name), "bold"),
                                    ("  " + t("report.shape", shape="×".join(map(str, out.shape))), "dim")))
        if out.nan_count or out.inf_count:
            console.print(Text("  " + t("report.nan_inf", nan=out.nan_count, inf=out.inf_count), style="magenta"))
        console.print(error_map(out))
        values = Table(box=None, pad_edge=False)
        values.add_column(t("report.col.index"), justify="right", style="dim")
        values.add_column(t("report.col.got"), justify="right")
        values.add_column(t("report.col.expected"), justify="right")
        bad = {i for i, _, _ in out.first_wrong}  # sorted, so it covers every wrong one shown first
        shown = list(enumerate(zip(out.first_got, out.first_expected)))
        later = [(i, (g, e)) for i, g, e in out.first_wrong if i >= len(shown)]
        for number, (i, (g, e)) in enumerate(shown + later):
            if number == len(shown):
                values.add_row("…", "", "")
            values.add_row(str(i), Text(f"{g:.6g}", style="red" if i in bad else ""), f"{e:.6g}")
        console.print(values)
        return  # one output in detail is enough; the table lists the rest


def summary_table(results: list[PuzzleResult], titles: dict[str, str]) -> Table:
    """The terse table of `workbook check`."""
    table = Table(box=box.SIMPLE_HEAVY)
    table.add_column(t("report.col.puzzle"))
    table.add_column(t("report.col.title"))
    table.add_column(t("report.col.status"))
    table.add_column(device_label("cpu"))
    table.add_column(device_label("gpu"))
    table.add_column(t("report.col.max_abs"), justify="right")
    table.add_column(t("report.col.time"), justify="right")
    for r in results:
        devices = r.devices
        cells = [badge(devices[d].status) if d in devices else Text("—", style="dim") for d in ("cpu", "gpu")]
        errors = [d.max_abs_error for d in devices.values() if d.max_abs_error is not None]
        table.add_row(r.id, titles.get(r.id, r.title), badge(r.status), *cells,
                      fmt(max(errors)) if errors else "—", f"{r.seconds:.1f}s")
    return table
