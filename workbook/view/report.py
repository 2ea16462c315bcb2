"""Rendering results with Rich. Computing happens elsewhere: this module only draws.

`--json` and this view are two renderings of the same PuzzleResult. Every
view is designed for an 80-column terminal first: nothing a learner needs is
cut (counts, case names, finding lines and source lines wrap under
themselves, never back at column 0), and nothing relies on colour alone: each
state of the error map has a glyph of its own, so NO_COLOR, a pipe or
colour-blind eyes still read it. Wrapping columns use overflow="fold": Rich's
"ellipsis" strips trailing spaces by characters, not cells, and so cuts the
last Korean word of a full line.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..core.i18n import pick, t
from ..core.results import (
    CaseResult,
    DeviceResult,
    Diagnostic,
    PartResult,
    PuzzleResult,
    Status,
    to_data,
)
from .casemap import case_name, element
from .devices import device_line, finding_line, render_part, render_shared, render_speed, shared_lines
from .style import DEVICE_ORDER, badge, budget_line, device_label, indented, reasons, say

# ---------------------------------------------------------------------------
# `workbook run`: the full report
# ---------------------------------------------------------------------------


def render_result(console: Console, result: PuzzleResult, title: str, files: list[str] | None = None) -> None:
    """The full report. `files`: the learner's files, named when they are still the skeleton."""
    console.print(header(result, title))
    if result.status == Status.NOT_STARTED:
        console.print(not_started(result, files))
        return
    if result.problem:
        console.print(Text(say(result.problem), style="bold red"))
    if (line := budget_line(result)) is not None:
        console.print(line)
    if result.diagnostics or result.compiler_output:
        render_diagnostics(console, result)
    render_parts(console, result)
    render_speed(console, result)
    render_timing(console, result)
    for line in closing(result):
        console.print(line)


def render_parts(console: Console, result: PuzzleResult) -> None:
    """Each part's devices; a line every part shows alike is said once, after them."""
    common = shared_lines(result)
    for part in result.parts:
        render_part(console, result, part, common)
    render_shared(console, result, common)


def render_timing(console: Console, result: PuzzleResult) -> None:
    timing = t("report.total_time", seconds=f"{result.seconds:.1f}")
    if result.first_verdict is not None and result.first_verdict < result.seconds - 0.5:
        timing += " · " + t("report.first_verdict", seconds=f"{result.first_verdict:.1f}")
    console.print(Text(timing, style="dim"))
    if result.quick:
        console.print(Text(t("report.quick"), style="dim"))


def header(result: PuzzleResult, title: str, first: bool = False) -> Panel:
    """The box the report opens with; `first`: the first verdict's, while the run goes on."""
    head = Text.assemble((f"{result.id}  ", "bold"), (title, "bold"), "   ", badge(result.status))
    sub = t("report.seed", seed=result.seed)
    if result.solutions:
        sub += " · " + t("report.using_solutions")
    if result.cached:
        sub += " · " + t("report.cached")
    lines = [head, Text(sub, style="dim")]
    if first:
        lines.insert(1, Text(t("report.stream.header"), style="cyan"))
    return Panel(Group(*lines), box=box.ROUNDED, expand=True)


# ---------------------------------------------------------------------------
# `workbook run` without waiting: the first verdict at once, the rest appended
# ---------------------------------------------------------------------------

# What runs after the first verdict, by the engine's stage event (engine.Check.partial).
STILL_RUNNING = {"phase.gpu_check_next": "report.stream.gpu_check", "phase.kernels_done": "report.stream.graph",
                 "phase.sanitizers_next": "report.stream.sanitizers"}


def render_first(console: Console, first: PuzzleResult, title: str, next_key: str) -> None:
    """The first verdict (the simulator's where no GPU runs the kernels), as soon as it is
    in: the report's box and every device judged so far, then what is still running. What
    that adds comes after it (`render_rest`), and the verdict of the whole run at the end."""
    console.print(header(first, title, first=True))
    render_parts(console, first)
    seconds = first.first_verdict if first.first_verdict is not None else first.seconds
    console.print(Text(t("report.stream.pending", seconds=f"{seconds:.1f}",
                         what=t(STILL_RUNNING.get(next_key, "report.stream.rest_of_run"))), style="bold cyan"))


def _added(first: PartResult | None, final: PartResult, stage: str) -> dict[str, DeviceResult]:
    """The devices of `final` that the first verdict did not show, or showed otherwise."""
    shown = (getattr(first, stage) if first else {})
    return {name: dev for name, dev in getattr(final, stage).items()
            if name not in shown or to_data(shown[name]) != to_data(dev)}


def render_rest(console: Console, first: PuzzleResult, final: PuzzleResult) -> None:
    """What the run added after its first verdict (`render_first`), then the whole run's
    verdict: a compile error of the GPU build, the GPU's line, the graph's, the speed."""
    console.rule(Text(t("report.stream.after"), style="bold"), align="left")
    if final.problem and final.problem != first.problem:
        console.print(Text(say(final.problem), style="bold red"))
    if (line := budget_line(final)) is not None:
        console.print(line)
    if final.diagnostics or final.compiler_output:
        render_diagnostics(console, final)
    earlier = {p.id: p for p in first.parts}
    for part in final.parts:
        kernels, graph = _added(earlier.get(part.id), part, "kernels"), _added(earlier.get(part.id), part, "graph")
        if kernels or graph:
            render_part(console, final, PartResult(part.id, part.status, kernels, part.atol, part.rtol, graph,
                                                   part.speed))
    render_speed(console, final)
    render_timing(console, final)
    for line in closing(final):  # the whole run's verdict, and the first thing to fix
        console.print(line)


def not_started(result: PuzzleResult, files: list[str] | None) -> Text:
    """Which file is still the skeleton, and where to start: said once."""
    if files:
        key = "report.not_started_file" if len(files) == 1 else "report.not_started_files"
        return Text(t(key, files=", ".join(files), id=result.id))
    return Text(t("report.not_started", id=result.id))


def render_diagnostics(console: Console, result: PuzzleResult) -> None:
    console.print(Text(t("report.compile_failed"), style="bold red"))
    for diag in result.diagnostics:
        where = Table.grid(padding=(0, 1))
        where.add_column(no_wrap=True)
        where.add_column(ratio=1, overflow="fold")
        where.add_row(Text(f"{diag.file}:{diag.line}:{diag.column}:", style="bold"), Text(diag.message, style="red"))
        console.print(where)
        if diag.source:
            console.print(source_excerpt(diag))
        for extra in (diag.explanation, diag.hint):
            if extra:
                console.print(indented(Text("→ " + say(extra), style="yellow"), 2))
        for note in diag.notes:
            console.print(indented(Text(t("report.note") + ": " + note, style="dim"), 2))
    if result.compiler_output:
        console.print(Panel(Text(result.compiler_output), title=t("report.compiler_output"), border_style="red"))


def source_excerpt(diag) -> Table:
    """The lines around an error, highlighted, with a caret under the column; a long line
    wraps inside the code column, never over the line numbers."""
    lexer = "python" if diag.file.endswith(".py") else "mojo"
    code = "\n".join(text for _, text in diag.source)
    lines = Syntax(code, lexer, theme="ansi_dark").highlight(code).split("\n")
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, justify="right")
    table.add_column(no_wrap=True)
    table.add_column(ratio=1, overflow="fold")
    for (number, _), line in zip(diag.source, lines):
        here = number == diag.line
        table.add_row(Text(("❯ " if here else "  ") + str(number), style="bold red" if here else "dim"),
                      Text("│", style="dim"), line)
        if here:
            table.add_row("", "", Text(" " * max(diag.column - 1, 0) + "^", style="bold red"))
    return table


# ---------------------------------------------------------------------------
# The report's last lines: the verdict, and the first thing to fix
# ---------------------------------------------------------------------------


def closing(result: PuzzleResult) -> list[RenderableType]:
    """What a report ends with, so that the last screen of an 80 x 24 terminal, which has
    scrolled past the header, still says how it went and where to start: the verdict again,
    then the first thing to fix (the first compile error, the first finding with its line,
    the first wrong case and element, or why a device stopped)."""
    if result.status == Status.NOT_STARTED:
        return []
    shown: list[RenderableType] = [Text.assemble((t("report.verdict") + " ", "bold"), badge(result.status))]
    if result.status == Status.COMPILED:
        return shown + not_judged(result)
    fix = first_fix(result)
    if fix:
        shown.append(Text(t("report.fix_first"), style="bold"))
        shown += fix
    return shown


def not_judged(result: PuzzleResult) -> list[RenderableType]:
    """Code that compiled and that nothing here could run: said plainly (right and wrong code get
    the same), then what could still be checked: that it compiles, and the numbers the text fixes
    (workbook/judging/sourcenumbers.py), each beside the text's."""
    shown: list[RenderableType] = [indented(Text(t("report.not_judged"), style="bold yellow"))]
    if not result.source_numbers:
        return shown
    shown.append(Text(t("report.numbers_title"), style="bold"))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(Text("✔", style="green"), t("report.numbers_compiles"))
    for place in result.source_numbers:
        agree = [n.agrees for n in place.numbers]
        glyph, style = ("✘", "red") if False in agree else ("?", "yellow") if None in agree else ("✔", "green")
        if not place.line:
            grid.add_row(Text("?", style="yellow"), t("report.numbers_missing", what=pick(place.what),
                                                          code=place.source))
            continue
        said = " · ".join(
            t("report.number_agrees", name=n.name, value=n.value) if n.agrees else
            t("report.number_differs", name=n.name, value=n.value, expected=n.expected) if n.agrees is False else
            t("report.number_unread", name=n.name, written=n.written, expected=n.expected)
            for n in place.numbers)
        grid.add_row(Text(glyph, style=style), Text.assemble((f"{place.file}:{place.line} ", "bold"),
                                                             pick(place.what) + ": ", (said, style)))
    shown.append(Padding(grid, (0, 0, 0, 2)))
    shown.append(indented(t("report.numbers_not_verdict"), style="dim"))
    return shown


def _diagnostic_row(diag: Diagnostic) -> Table:
    where = Table.grid(padding=(0, 1))
    where.add_column(no_wrap=True)
    where.add_column(ratio=1, overflow="fold")
    where.add_row(Text(f"{diag.file}:{diag.line}:{diag.column}:", style="bold"), Text(diag.message, style="red"))
    return where


def first_fix(result: PuzzleResult) -> list[RenderableType]:
    """The one thing to look at first, most certain first; empty when nothing failed."""
    if result.problem:
        return [indented(Text(say(result.problem), style="red"))]
    if result.diagnostics:
        diag = result.diagnostics[0]
        shown: list[RenderableType] = [Padding(_diagnostic_row(diag), (0, 0, 0, 2))]
        for extra in (diag.explanation, diag.hint):
            if extra:
                shown.append(indented(Text("→ " + say(extra), style="yellow"), 4))
        return shown
    if result.compiler_output:
        return [indented(Text("\n".join(result.compiler_output.splitlines()[-3:]), style="red"))]
    devices = [d for part in result.parts for d in part.all_devices()]
    finding = next((f for d in devices for f in d.findings or []), None)
    if finding is not None:
        return [finding_line(finding, {c.name: case_name(c) for d in devices for c in d.cases})]
    failing = next(((d, c) for d in devices for c in d.cases if c.ran and not c.passed), None)
    if failing is not None:
        case = failing[1]
        checks = [indented(f"✘ {case_name(case)}: {pick(label)} ({pick(detail)})", style="red")
                  for label, ok, detail in case.invariants if not ok][:1]  # the puzzle's own words first
        return checks + first_wrong(*failing)
    broken = next((d for d in devices if d.status in (Status.FAIL, Status.CRASH, Status.TIMEOUT,
                                                          Status.COMPILE_ERROR) and d.reasons), None)
    if broken is not None:
        return [indented(Text(f"{device_label(broken.device)}: {reasons(broken)}", style="red"))]
    slow = next((p for p in result.parts if p.speed is not None and p.speed.too_slow), None)
    if slow is not None:
        return [indented(t("speed.against_solution", part=slow.id, ratio=f"{slow.speed.ratio_to_solution:.2f}",
                           limit=f"{slow.speed.max_ratio_to_solution:g}",
                           solution=f"{slow.speed.solution_median_us:.1f}"), style="red")]
    return []


# ---------------------------------------------------------------------------
# `workbook watch`: the compact view
# ---------------------------------------------------------------------------


def compact(result: PuzzleResult, title: str, files: list[str] | None = None) -> list[RenderableType]:
    """What `watch` leads with, most important first (so a short terminal can drop the end):
    the verdict, a line per device, the first compile error or the first finding with its
    line, and the first wrong case with its first wrong element."""
    shown: list[RenderableType] = [Text.assemble((f"{result.id}  ", "bold"), (title, "bold"), "   ",
                                                 badge(result.status))]
    if result.status == Status.NOT_STARTED:
        return [*shown, not_started(result, files)]
    if result.problem:
        shown.append(Text(say(result.problem), style="bold red"))
    if (line := budget_line(result)) is not None:
        shown.append(line)
    if result.diagnostics:
        diag = result.diagnostics[0]
        where = Table.grid(padding=(0, 1))
        where.add_column(no_wrap=True)
        where.add_column(ratio=1, overflow="fold")
        where.add_row(Text(f"{diag.file}:{diag.line}:{diag.column}:", style="bold"),
                      Text(diag.message, style="red"))
        shown.append(where)
        for extra in (diag.explanation, diag.hint):
            if extra:
                shown.append(indented(Text("→ " + say(extra), style="yellow"), 2))
        if diag.source:
            shown.append(source_excerpt(Diagnostic(diag.file, diag.line, diag.column, diag.message,
                                                   [s for s in diag.source if s[0] == diag.line])))
    elif result.compiler_output:
        shown.append(Text("\n".join(result.compiler_output.splitlines()[-4:]), style="red"))
    many = len(result.parts) > 1
    for part in result.parts:
        for dev in [*sorted(part.kernels.values(), key=lambda d: DEVICE_ORDER.index(d.device)
                            if d.device in DEVICE_ORDER else 9), *part.graph.values()]:
            line = device_line(dev, "graph" if dev in part.graph.values() else "kernels")
            shown.append(Text.assemble((f"{part.id} · ", "dim"), line) if many else line)
    devices = [d for part in result.parts for d in part.all_devices()]
    finding = next((f for d in devices for f in d.findings or []), None)
    if finding is not None:
        names = {c.name: case_name(c) for d in devices for c in d.cases}
        shown.append(finding_line(finding, names))
    failing = next(((d, c) for d in devices for c in d.cases if c.ran and not c.passed), None)
    if failing is not None:
        shown += first_wrong(*failing)
    for name in ("ptx", "occupancy"):
        wrong = next((d for d in devices if d.device == name and d.status == Status.FAIL), None)
        if wrong is not None:
            shown.append(indented(reasons(wrong), style="red"))
    return shown


def first_wrong(dev: DeviceResult, case: CaseResult) -> list[RenderableType]:
    """The first failing case in two lines: which output, how many wrong, the first of them."""
    out = next((o for o in case.outputs if not o.passed), None)
    if out is None:
        check = next(((pick(label), pick(detail)) for label, ok, detail in case.invariants if not ok), None)
        what = f"{check[0]} ({check[1]})" if check else (t("report.order") if case.order_dependent else
                                                          t("report.race"))
        return [indented(f"✘ {case_name(case)}: {what}", style="red")]
    lines: list[RenderableType] = [indented(Text(t("report.compact.case", case=case_name(case), output=out.name,
                                                   wrong=out.mismatches, size=out.size), style="bold"))]
    if out.first_wrong:
        index, got, expected = out.first_wrong[0]
        lines.append(indented(t("report.compact.element", element=out.name + element(index, out.shape),
                                got=f"{got:.6g}", expected=f"{expected:.6g}"), 4, style="red"))
    return lines


# ---------------------------------------------------------------------------
# `workbook check`: the summary table
# ---------------------------------------------------------------------------


def summary_table(results: list[PuzzleResult], titles: dict[str, str]) -> Table:
    """The terse table of `workbook check`: one line per puzzle, even at 80 columns."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    table.add_column(t("report.col.puzzle"), no_wrap=True)
    # The only column that gives way at 80 columns: its title is cut to one line, never the ids,
    # verdicts or times (a column of no_wrap cells would make Rich shrink every column).
    table.add_column(t("report.col.title"), ratio=1)
    table.add_column(t("report.col.status"), no_wrap=True)
    shown = [d for d in DEVICE_ORDER if any(d in r.device_statuses() for r in results)]
    for d in shown:
        table.add_column(t("device_short." + d), justify="center", no_wrap=True)
    table.add_column(t("report.col.time"), justify="right", no_wrap=True)
    for r in results:
        devices = r.device_statuses()
        cells = [badge(devices[d], short=True) if d in devices else Text("·", style="dim") for d in shown]
        table.add_row(r.id, Text(titles.get(r.id, r.title), no_wrap=True, overflow="ellipsis"), badge(r.status),
                      *cells, t("report.cached_short") if r.cached else f"{r.seconds:.0f}s")
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
