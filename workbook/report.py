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

from .i18n import Msg, pick, t
from .results import (
    CaseResult,
    DeviceResult,
    Diagnostic,
    Finding,
    OutputCheck,
    PartResult,
    Picture,
    PuzzleResult,
    SharedPicture,
    Status,
    to_data,
)

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
# Error map cells: ok, close to the tolerance, wrong, NaN/Inf: a glyph each, and a colour.
CELL = [(".", "green"), ("~", "yellow"), ("X", "bold red"), ("?", "magenta")]
CELL_KEYS = ("ok", "close", "wrong", "nan")
MAP_WIDTH = 32  # cells per row of a vector's map
PICTURE_ROWS = 16  # rows of the who-wrote-what picture
DEVICE_ORDER = ("cpu", "sim", "gpu", "ptx", "occupancy")


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


def indented(text: Text | str, indent: int = 2, style: str = "") -> Padding:
    """A line that wraps under itself instead of back at column 0."""
    return Padding(text if isinstance(text, Text) else Text(text, style=style), (0, 0, 0, indent), expand=False)


def device_label(device: str, stage: str = "kernels") -> str:
    label = t("device." + device)
    return t("report.through_graph", device=label) if stage == "graph" else label


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
    if result.budget_spent and result.budget_spent != result.problem:
        console.print(Text(say(result.budget_spent), style="bold yellow"))
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
    if final.budget_spent and final.budget_spent != final.problem:
        console.print(Text(say(final.budget_spent), style="bold yellow"))
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
        console.print(Panel(result.compiler_output, title=t("report.compiler_output"), border_style="red"))


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


QUIET = (Status.NOT_RUN, Status.SKIPPED, Status.COMPILED)  # a device line that is only a status and why


def _quiet_key(dev: DeviceResult) -> tuple | None:
    """What a device line that is only a status and its reason says; None for one with more."""
    if dev.status not in QUIET or dev.device in ("ptx", "occupancy") or dev.findings:
        return None
    return dev.status, tuple(m.text() for m in dev.reasons)


def shared_lines(result: PuzzleResult) -> set[tuple[str, str]]:
    """The (stage, device) lines every part shows alike, only a status and its reason (the
    GPU "compiled, no GPU here" in each of p30's five parts, or every device "not run" after
    a compile error): said once after the parts, not once per part, so the report's end is
    what matters and not the same two lines again and again."""
    if len(result.parts) < 2:
        return set()
    found = set()
    first = result.parts[0]
    for stage, devices in (("kernels", first.kernels), ("graph", first.graph)):
        for name, dev in devices.items():
            key = _quiet_key(dev)
            if key is None:
                continue
            if all(name in (p.kernels if stage == "kernels" else p.graph)
                   and _quiet_key((p.kernels if stage == "kernels" else p.graph)[name]) == key
                   for p in result.parts):
                found.add((stage, name))
    return found


def render_shared(console: Console, result: PuzzleResult, common: set[tuple[str, str]]) -> None:
    first = result.parts[0] if result.parts else None
    if first is None or not common:
        return
    shown = False
    for stage, devices in (("kernels", first.kernels), ("graph", first.graph)):
        for name in sorted(devices, key=lambda d: DEVICE_ORDER.index(d) if d in DEVICE_ORDER else 9):
            if (stage, name) not in common:
                continue
            if not shown:
                console.rule(Text(t("report.every_part", parts=", ".join(p.id for p in result.parts))), align="left")
                shown = True
            render_device(console, first, devices[name], stage)


def render_part(console: Console, result: PuzzleResult, part: PartResult,
                common: set[tuple[str, str]] | None = None) -> None:
    common = common or set()
    kernels = [d for d in part.kernels if ("kernels", d) not in common]
    graph = [d for d in part.graph if ("graph", d) not in common]
    if not kernels and not graph:
        return  # everything it would say is said once for every part
    if len(result.parts) > 1:
        console.rule(Text.assemble(t("report.part") + f" {part.id}  ", badge(part.status)), align="left")
    for name in sorted(kernels, key=lambda d: DEVICE_ORDER.index(d) if d in DEVICE_ORDER else 9):
        render_device(console, part, part.kernels[name], "kernels")
    if graph:
        console.print(Text(t("report.graph_stage"), style="bold"))
        for name in graph:
            render_device(console, part, part.graph[name], "graph")


def _precision(precision: str) -> str:
    """The tensor cores' precision after a FLOP rate (plain float32 says nothing)."""
    return "" if precision == "fp32" else f" ({precision})"


def _amount(value: float, unit: str) -> str:
    """2.68e8 B -> '268 MB': decimal prefixes, three figures."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def render_speed(console: Console, result: PuzzleResult) -> None:
    """The timed parts ([parts.speed]): a table of what was measured, or plainly why not;
    the method, the GPU's peak and its source, and with several parts their ratio."""
    timed = [p for p in result.parts if p.speed is not None]
    if not timed:
        return
    judged = any(p.speed.max_ratio_to_solution for p in timed)
    console.print(Text(t("speed.title_judged" if judged else "speed.title"), style="bold"))
    measured = [p for p in timed if p.speed.measured]
    unmeasured: dict[str, list[str]] = {}  # a reason, said once for the parts it holds for
    for part in timed:
        if not part.speed.measured:
            unmeasured.setdefault(say(part.speed.reason), []).append(part.id)
    for reason, ids in unmeasured.items():
        label = f"{t('report.part')} {', '.join(ids)}: " if len(result.parts) > 1 else ""
        console.print(indented(label + reason, style="dim"))
    if measured:
        several = len(measured) > 1
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
        table.add_column(t("speed.col.part"), no_wrap=True)
        for key in ("median", "fastest", "work", "rate", "peak", *(["ratio"] if several else [])):
            table.add_column(t(f"speed.col.{key}"), justify="right", no_wrap=True)
        for part in measured:
            s = part.speed
            work = " + ".join(w for w in (_amount(s.bytes, "B") if s.bytes is not None else "",
                                          _amount(s.flops, "FLOP") if s.flops is not None else "") if w)
            rate = " + ".join(r for r in (_amount(s.gb_per_s * 1e9, "B/s") if s.gb_per_s is not None else "",
                                          _amount(s.gflop_per_s * 1e9, "FLOP/s") + _precision(s.precision)
                                          if s.gflop_per_s is not None else "") if r)
            peaks = [v for v in (s.percent_of_peak_bandwidth, s.percent_of_peak_flops) if v is not None]
            row = [part.id, f"{s.median_us:.1f}", f"{s.min_us:.1f}", work, rate,
                   " + ".join(f"{v:.0f}%" for v in peaks) or "—"]
            if several:
                row.append(f"{s.ratio_to_fastest:.2f}" if s.ratio_to_fastest is not None else "—")
            table.add_row(*row)
        console.print(Padding(table, (0, 0, 0, 2)))
        if several:
            slow = max(measured, key=lambda p: p.speed.median_us)
            fast = min(measured, key=lambda p: p.speed.median_us)
            console.print(indented(t("speed.ratio", slow=slow.id, fast=fast.id,
                                     ratio=f"{slow.speed.ratio_to_fastest:.1f}")))
        spread = [f"{part.id} {part.speed.q1_us:.1f}–{part.speed.q3_us:.1f} µs" for part in measured
                  if part.speed.q1_us is not None and part.speed.q3_us is not None]
        if spread:
            console.print(indented(t("speed.spread", parts="; ".join(spread)), style="dim"))
        for part in measured:
            s = part.speed
            if s.ratio_to_solution is not None:
                console.print(indented(t("speed.against_solution", part=part.id, ratio=f"{s.ratio_to_solution:.2f}",
                                         limit=f"{s.max_ratio_to_solution:g}", solution=f"{s.solution_median_us:.1f}"),
                                       style="bold red" if s.too_slow else "green"))
                if s.solution_timing in ("alternated", "own_launcher") and s.solution_q1_us is not None:
                    how = t(f"speed.solution_{s.solution_timing}", solution=f"{s.solution_median_us:.1f}",
                            q1=f"{s.solution_q1_us:.1f}", q3=f"{s.solution_q3_us:.1f}")
                    console.print(indented(how, style="dim"))
            elif s.max_ratio_to_solution:
                console.print(indented(t("speed.no_solution_time", part=part.id), style="yellow"))
        cases = ", ".join(dict.fromkeys(p.speed.case for p in measured))
        console.print(indented(t("speed.case", cases=cases), style="dim"))
        first = measured[0].speed
        if first.peak_source:
            console.print(indented(t("speed.peak", gpu=first.gpu, source=first.peak_source), style="dim"))
        else:
            console.print(indented(t("speed.peak_unknown", gpu=first.gpu), style="dim"))
        console.print(indented(say(timed[0].speed.method), style="dim"))  # how, where something was measured


def device_line(dev: DeviceResult, stage: str) -> Text:
    """The device, its verdict and its largest errors, in a line."""
    name = device_label(dev.device, stage)
    if dev.device == "gpu" and dev.device_name not in ("", "GPU"):
        name += f" ({dev.device_name})"
    line = Text.assemble((f"{name}  ", "bold"), badge(dev.status))
    if dev.status in (Status.PASS, Status.FAIL) and dev.cases:
        if any(o.nan_count or o.inf_count for c in dev.cases for o in c.outputs):
            line.append("   " + t("report.errors", abs="NaN/Inf", rel="NaN/Inf"), style="magenta")
        else:
            line.append("   " + t("report.errors", abs=fmt(dev.max_abs_error), rel=fmt(dev.max_rel_error)))
    return line


def render_device(console: Console, part: PartResult, dev: DeviceResult, stage: str) -> None:
    console.print(device_line(dev, stage))
    if dev.device == "ptx":
        render_ptx(console, part, dev)
        return
    if dev.device == "occupancy":
        render_occupancy(console, dev)
        return
    if dev.status in (Status.COMPILED, Status.NOT_RUN, Status.SKIPPED):
        console.print(indented(reasons(dev), style="cyan" if dev.status == Status.COMPILED else "dim"))
        return
    if dev.status in (Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT):
        if dev.reasons:
            console.print(indented(reasons(dev), style="bold red"))
        if dev.findings:
            render_findings(console, dev)
        if dev.output:
            console.print(Panel(dev.output[-3000:], title=t("status." + dev.status.value), border_style="red"))
        return
    if dev.cases:
        console.print(indented(t("report.tolerance", atol=f"{part.atol:g}", rtol=f"{part.rtol:g}"), style="dim"))
        console.print(cases_table(dev))
        if any(c.stopped for c in dev.cases):
            console.print(indented(t("report.cases_stopped"), style="dim"))
        render_checks(console, dev)
    if dev.findings:
        render_findings(console, dev)
    elif dev.tools is not None:
        style = "green" if dev.findings is not None else "yellow"
        console.print(indented(say(dev.tools), style=style))
    if dev.repeats > 1 and dev.device != "sim":
        console.print(indented(t("report.repeats", n=dev.repeats), style="dim"))
    if dev.device == "sim" and dev.cases:
        console.print(indented(t("report.sim_orders"), style="dim"))
    if dev.traffic:
        render_traffic(console, dev)
    if dev.reasons:
        console.print(indented(reasons(dev), style="bold red"))
    failing = first_failing(dev)
    if failing is not None:
        render_case_detail(console, failing)


def render_traffic(console: Console, dev: DeviceResult) -> None:
    """The simulator's traffic counters, a row per line: what a GPU would move for it."""
    console.print(indented(t("report.traffic_title"), style="bold"))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column(t("report.col.line"), justify="right", no_wrap=True)
    table.add_column(t("report.col.memory"), no_wrap=True)
    table.add_column(t("report.col.requests"), justify="right", no_wrap=True)
    table.add_column(t("report.col.cost"), no_wrap=True)
    table.add_column("", overflow="fold", ratio=1)
    kernels = {x.kernel for x in dev.traffic}
    flagged = {(f.kernel, f.line) for f in dev.findings or [] if f.kind == "traffic"}
    for x in dev.traffic:
        if x.space == "global":
            cost = t("report.traffic_sectors", value=f"{x.per_request:g}", ideal=f"{x.ideal_per_request:g}")
        else:
            cost = t("report.traffic_conflicts", value=f"{x.conflicts_per_request:g}")
        where = f"{x.kernel}: {x.source}" if len(kernels) > 1 else x.source
        style = "red" if (x.kernel, x.line) in flagged else ""
        table.add_row(x.label if x.line else "?", f"{t('report.traffic_' + x.space)} {t('traffic.' + x.access)}",
                      str(x.requests), Text(cost, style=style), Text(where, style="dim"))
    console.print(Padding(table, (0, 0, 0, 2)))
    console.print(indented(t("report.traffic_note"), style="dim"))
    merged = next((x for x in dev.traffic if x.also), None)
    if merged is not None:
        console.print(indented(t("report.traffic_merged", lines=merged.label), style="dim"))
    if any(x.approximate for x in dev.traffic):
        console.print(indented(t("report.traffic_about"), style="dim"))
    if dev.traffic_counted is not None:
        console.print(indented(say(dev.traffic_counted), style="dim"))
def ptx_lines(dev: DeviceResult) -> list[str]:
    """A line per kernel: its global loads and stores, as the PTX has them."""
    return [t("report.ptx_kernel", kernel=k.kernel, loads=k.loads.summary(), load_bits=k.loads.widest_bits,
              stores=k.stores.summary(), store_bits=k.stores.widest_bits) for k in dev.ptx]


def render_ptx(console: Console, part: PartResult, dev: DeviceResult) -> None:
    for line in ptx_lines(dev):
        console.print(indented(line))
    if dev.ptx:
        console.print(indented(t("report.ptx_source", target=dev.device_name), style="dim"))
    if dev.reasons:
        console.print(indented(reasons(dev), style="bold red" if dev.status == Status.FAIL else "dim"))
    if "gpu" in part.kernels and part.kernels["gpu"].status in (Status.COMPILED, Status.SKIPPED, Status.NOT_RUN):
        console.print(indented(t("report.ptx_no_speed"), style="dim"))


def occupancy_lines(dev: DeviceResult) -> list[Text]:
    """Two lines per kernel and block size: what it asks of an SM, then the blocks each
    resource leaves room for (the limiting one marked) and the warps that makes."""
    lines = []
    for occ in dev.occupancy:
        lines.append(Text(t("report.occ.asks", kernel=occ.kernel, threads=occ.block, warps=occ.warps_per_block,
                            registers="?" if occ.registers is None else occ.registers, shared=occ.shared)))
        limits = Text("  ")
        for k, name in enumerate(("warps", "blocks", "registers", "shared")):
            value = occ.limits.get(name)
            shown = "?" if value is None else "-" if value >= 1 << 30 else str(value)
            limits.append((" · " if k else "") + t(f"report.occ.by_{name}", n=shown),
                          style="bold yellow" if name in occ.limiting else "")
        limits.append(" → " + t("report.occ.value", blocks=occ.blocks_per_sm, percent=f"{occ.percent:.1f}",
                                warps=occ.warps_per_sm, max_warps=occ.max_warps_per_sm),
                      style="bold" if occ.occupancy >= 1 else "")
        lines.append(limits)
    return lines


def render_occupancy(console: Console, dev: DeviceResult) -> None:
    if dev.occupancy:
        for line in occupancy_lines(dev):
            console.print(indented(line))
        console.print(indented(t("report.occ.source", target=dev.device_name), style="dim"))
        spilled = [o.kernel for o in dev.occupancy if o.spills]
        if spilled:
            console.print(indented(t("report.occ.spills", kernels=", ".join(sorted(set(spilled)))), style="yellow"))
    if dev.reasons:
        console.print(indented(reasons(dev), style="bold red" if dev.status == Status.FAIL else "dim"))


def first_failing(dev: DeviceResult) -> CaseResult | None:
    return next((c for c in dev.cases if c.ran and not c.passed), None)


def case_name(case: CaseResult) -> str:
    return pick(case.label) if case.label else case.name


def cases_table(dev: DeviceResult) -> Table:
    """One row per case and output. Case names and output names wrap; figures and
    counts never wrap and are never cut."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column(t("report.col.case"), overflow="fold", ratio=1, min_width=10)
    table.add_column(t("report.col.status"), no_wrap=True)
    table.add_column(t("report.col.output"), overflow="fold", max_width=16)
    table.add_column(t("report.col.max_abs"), justify="right", no_wrap=True)
    table.add_column(t("report.col.max_rel"), justify="right", no_wrap=True)
    table.add_column(t("report.col.mismatches"), justify="right", no_wrap=True)
    for case in dev.cases:
        if case.stopped:  # it ran, and stopped at the finding listed below the table
            table.add_row(case_name(case), Text("✘ " + t("report.case_stopped"), style=STYLE[Status.FAIL]), "—",
                          "", "", "")
            continue
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
                console.print(indented(f"✘ {case_name(case)}: {text} ({pick(detail)})", style="red"))
    if labels_ok:
        console.print(indented(t("report.checks_passed", checks=", ".join(labels_ok)), style="green"))
    if any(c.nondeterministic for c in dev.cases):
        console.print(indented("⚡ " + t("report.race"), style="bold red"))
    if any(c.order_dependent for c in dev.cases):
        console.print(indented("⚡ " + t("report.order"), style="bold red"))


def _error_cell(value: float | None, out: OutputCheck) -> Text:
    """An error figure; NaN/Inf outputs say so rather than the error of their finite part."""
    if out.nan_count or out.inf_count:
        return Text("NaN/Inf", style="magenta")
    return Text(fmt(value), style="" if out.passed else "red")


def render_findings(console: Console, dev: DeviceResult) -> None:
    title = t("report.findings_sim") if dev.device == "sim" else t("report.findings_tool")
    console.print(indented(title, style="bold red"))
    names = {c.name: case_name(c) for c in dev.cases}
    for f in dev.findings or []:
        console.print(finding_line(f, names))
    if dev.tools is not None and dev.device != "sim":
        console.print(indented(say(dev.tools), style="dim"))


def finding_places(f: Finding) -> list[tuple[str, int, str]]:
    """Each line of the learner's code a finding names, with its text: a race names two, and
    an access the compiler merged across lines names each of them."""
    places = [(f.file, f.line, f.source)] if f.file and f.line else []
    places += [(f.file, line, text) for line, text in f.also] if places else []
    if f.other_file and f.other_line:
        places.append((f.other_file, f.other_line, f.other_source))
        places += [(f.other_file, line, text) for line, text in f.other_also]
    return list(dict.fromkeys(places))


def finding_where(f: Finding, case_names: dict[str, str] | None = None) -> str:
    """Where a finding was seen, besides its lines: the tool, kernel, case (by its name in
    the learner's language where the cases are known) and how often."""
    where = []
    if f.tool not in ("sim", "graph"):
        where.append(f.tool)
    if f.kernel:
        where.append(f.kernel)
    if f.file and not f.line:
        where.append(f.file)
    if f.case:
        where.append(t("report.in_case", case=(case_names or {}).get(f.case, f.case)))
    if f.count > 1:
        where.append(t("report.seen_times", n=f.count) if f.tool == "sim" else f"×{f.count}")
    return " · ".join(where)


def finding_line(f: Finding, case_names: dict[str, str] | None = None) -> Padding:
    """A finding, then the lines it names, then where it was seen: each line wrapping
    under its own start."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(Text("✘", style="red"), Text(f.message.text(), style="red"))
    for file, line, source in finding_places(f):
        place = Text(f"{file}:{line}", style="bold")
        if source:
            place.append(f"  │ {source}")
        grid.add_row("", place)
    for note in f.line_notes:  # lines the compiler merged, or a line that is only near
        grid.add_row("", Text(note.text(), style="yellow"))
    where = finding_where(f, case_names)
    if where:
        grid.add_row("", Text(where, style="dim"))
    if f.detail:
        grid.add_row("", Text(f.detail, style="dim"))
    return Padding(grid, (0, 0, 0, 3), expand=False)


# ---------------------------------------------------------------------------
# The first failing case: where the errors are, and who wrote them
# ---------------------------------------------------------------------------


def map_legend() -> Text:
    text = Text()
    for (glyph, style), key in zip(CELL, CELL_KEYS):
        text.append(glyph, style=style)
        text.append(" " + t("report.map." + key) + "   ", style="dim")
    text.rstrip()
    return text


def _cells(out: OutputCheck) -> tuple[list[int], list[int]]:
    shape = out.map_shape or [len(out.error_map)]
    step = out.map_step or [1] * len(shape)
    return shape, step


def _row_label(out: OutputCheck, row: int) -> str:
    """A matrix row's index; for more dimensions, the indexes before the last one."""
    if len(out.shape) <= 2:
        return str(row)
    index, rest = [], row
    for size in reversed(out.shape[:-1]):
        rest, i = divmod(rest, size)
        index.append(str(i))
    return ",".join(reversed(index))


def error_map(out: OutputCheck) -> Group:
    """Where the errors are, at a glance: one glyph per element (or per run or block of
    elements), a matrix drawn as a matrix with its row and column numbers."""
    shape, step = _cells(out)
    lines: list[RenderableType] = []
    if len(shape) == 2:
        rows, cols = shape
        labels = [_row_label(out, r * step[0]) for r in range(rows)]
        gutter = max(len(x) for x in labels) + 4
        lines.append(indented(t("report.map.axes", output=out.name), style="dim"))
        head = Text(" " * gutter, style="dim")
        for c in range(0, cols, 4):
            head.append(f"{c * step[1]:<8}", style="dim")
        head.rstrip()
        lines.append(head)
        for r in range(rows):
            text = Text(f"  {labels[r]:>{gutter - 3}} ", style="dim")
            for cell in out.error_map[r * cols:(r + 1) * cols]:
                glyph, style = CELL[cell]
                text.append(glyph + " ", style=style)
            text.rstrip()
            lines.append(text)
        many = step[0] > 1 or step[1] > 1
        per_cell = t("report.map.per_block", rows=step[0], cols=step[1]) if many else ""
    else:
        per = step[0]
        for row in range(0, len(out.error_map), MAP_WIDTH):
            text = Text(f"  {row * per:>6} ", style="dim")
            for cell in out.error_map[row:row + MAP_WIDTH]:
                glyph, style = CELL[cell]
                text.append(glyph + " ", style=style)
            text.rstrip()
            lines.append(text)
        per_cell = t("report.map.per_cell", n=per) if per > 1 else ""
    lines.append(indented(map_legend(), 2))
    if per_cell:
        lines.append(indented(per_cell, style="dim"))
    return Group(*lines)


def element(index: int, shape: list[int]) -> str:
    """A flat index as the learner indexes the output: [i], or [row, col]."""
    if len(shape) < 2:
        return f"[{index}]"
    parts, rest = [], index
    for size in reversed(shape):
        rest, i = divmod(rest, size)
        parts.append(str(i))
    return "[" + ", ".join(reversed(parts)) + "]"


def render_case_detail(console: Console, case: CaseResult) -> None:
    for out in case.outputs:
        if out.passed:
            continue
        console.print(indented(Text.assemble(
            (t("report.first_failure", case=case_name(case), output=out.name), "bold"),
            ("  " + t("report.shape", shape="×".join(map(str, out.shape))), "dim"))))
        if out.nan_count or out.inf_count:
            key = "report.nan_written" if _nan_written(out, case.picture) else "report.nan_inf"
            console.print(indented(t(key, nan=out.nan_count, inf=out.inf_count), style="magenta"))
        console.print(error_map(out))
        console.print(values_table(out))
        if case.picture:
            render_picture(console, case.picture, out)
        return  # one output in detail is enough; the table lists the rest


def values_table(out: OutputCheck) -> Padding:
    """The first values, then the first wrong ones, each with its element as [i] or [row, col]."""
    values = Table(box=None, pad_edge=False)
    values.add_column(t("report.col.element"), justify="right", style="dim", no_wrap=True)
    values.add_column(t("report.col.got"), justify="right", no_wrap=True)
    values.add_column(t("report.col.expected"), justify="right", no_wrap=True)
    bad = {i for i, _, _ in out.first_wrong}
    shown = list(enumerate(zip(out.first_got, out.first_expected)))
    later = [(i, (g, e)) for i, g, e in out.first_wrong if i >= len(shown)]
    for number, (i, (g, e)) in enumerate(shown + later):
        if number == len(shown):
            values.add_row("…", "", "")
        got = Text(f"{g:.6g}", style="red" if i in bad else "")
        if i in bad:
            got.append(" ✘", style="red")
        values.add_row(f"{out.name}{element(i, out.shape)}", got, f"{e:.6g}")
    return Padding(values, (0, 0, 0, 2), expand=False)


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


Dims = tuple[int, int, int]


def _thread_label(thread_id: int, block: Dims, grid: Dims, blocks: bool) -> str:
    """A simulator writer id (block * threads + thread) as the learner names it:
    thread_idx.x, or x,y; with `blocks`, the block's the same way, then ':'."""
    if thread_id < 0:
        return "·"
    per_block = block[0] * block[1] * block[2]
    index, thread = divmod(thread_id, per_block)
    tx, ty = thread % block[0], thread // block[0]
    label = f"{tx},{ty}" if block[1] > 1 else str(tx)
    if blocks:
        bx, by = index % grid[0], index // grid[0]
        label = (f"{bx},{by}" if grid[1] > 1 else str(bx)) + ":" + label
    return label


def _who(block: Dims, blocks: bool) -> str:
    """How a cell names its writer, in words."""
    return t(("report.picture_who_xy" if block[1] > 1 else "report.picture_who_x") + ("_blocks" if blocks else ""))


def picture_legend(picture: Picture, matrix: bool) -> str:
    """What a cell of the picture says, in words: which axis is which, and how a thread is named."""
    blocks = picture.grid[0] * picture.grid[1] * picture.grid[2] > 1
    parts = [t("report.picture_cells_matrix")] if matrix else []
    parts.append(_who(picture.block, blocks))
    parts.append(t("report.picture_marks"))
    return " ".join(parts)


def render_picture(console: Console, picture: Picture, out: OutputCheck) -> None:
    """Which simulated thread wrote each element of the failing output (and of
    the first block's shared memory): a wrong element next to its writer."""
    if out.name not in picture.outputs:
        return
    shape, ids = picture.outputs[out.name]
    console.print(indented(t("report.picture", output=out.name), style="bold"))
    console.print(indented(picture_legend(picture, len(shape) >= 2), style="dim"))
    wrong = out.error_map if len(out.error_map) == len(ids) else None
    blocks = picture.grid[0] * picture.grid[1] * picture.grid[2] > 1
    console.print(_grid(shape, [_thread_label(i, picture.block, picture.grid, blocks) for i in ids],
                        [i >= 0 for i in ids], wrong, console.width))
    for shared in picture.shared:
        render_shared_picture(console, shared, picture)


def shared_title(shared: SharedPicture, several_kernels: bool) -> str:
    """The array as the learner's code names it (and where), or its number where no line says."""
    where = f"{shared.file}:{shared.line}" if shared.file and shared.line else ""
    if shared.name:
        key = "report.picture_shared_in" if several_kernels else "report.picture_shared_named"
        return t(key, name=shared.name, kernel=shared.kernel, where=where or "?")
    return t("report.picture_shared_unnamed", n=shared.number, kernel=shared.kernel)


def render_shared_picture(console: Console, shared: SharedPicture, picture: Picture) -> None:
    """One shared array of block 0, laid out as it was allocated (a 2D array by rows and
    columns), its writers named by the block size of the kernel that used it."""
    several = len({s.kernel for s in picture.shared}) > 1 or shared.block != picture.block
    console.print(indented(shared_title(shared, several), style="bold"))
    matrix = len(shared.shape) >= 2
    outside = any(i >= shared.block[0] * shared.block[1] * shared.block[2] for i in shared.writers)  # a cluster's
    who = _who(shared.block, outside)
    same = who == _who(picture.block, picture.grid[0] * picture.grid[1] * picture.grid[2] > 1)
    legend = ([t("report.picture_cells_shared")] if matrix else []) + ([] if same else [who])
    if legend:
        console.print(indented(" ".join(legend), style="dim"))
    console.print(_grid(shared.shape, [_thread_label(i, shared.block, shared.grid, outside) for i in shared.writers],
                        [i >= 0 for i in shared.writers], None, console.width))


def _grid(shape: list[int], labels: list[str], written: list[bool], cells: list[int] | None, width: int) -> Text:
    """The writers laid out as the buffer is: a matrix by rows and columns (numbered), a
    vector in rows of as many cells as fit. Columns that don't fit are said, not hidden."""
    marked = cells is not None and any(c >= 2 and w for c, w in zip(cells, written))
    matrix = len(shape) >= 2
    cols = shape[-1] if matrix else len(labels)
    rows = len(labels) // max(cols, 1) if matrix else 1
    cell = max([len(x) for x in labels] + [1]) + (1 if marked else 0)  # a wrong value's writer gets a "!"
    gutter = 8
    if matrix:  # the column numbers above must fit their cells too
        cell = max(cell, len(str(cols - 1)))
    fit = max(1, (width - gutter) // (cell + 1))
    if not matrix:  # a vector: rows of `fit` cells, each row labelled with its first index
        cols, rows = fit, -(-len(labels) // fit)
    shown = min(cols, fit)
    text = Text()
    if matrix:
        text.append(" " * gutter, style="dim")
        for c in range(shown):
            text.append(f"{c:>{cell}} ", style="dim")
        text.rstrip()
        text.append("\n")
    for r in range(min(rows, PICTURE_ROWS)):
        text.append(f"  {r if matrix else r * cols:>5} ", style="dim")
        for c in range(shown):
            k = r * cols + c
            if k >= len(labels):
                break
            bad = cells is not None and cells[k] >= 2 and written[k]
            style = "magenta" if not written[k] else ("red" if bad else "")
            text.append((labels[k] + ("!" if bad else "")).rjust(cell) + " ", style=style)
        text.rstrip()
        text.append("\n")
    notes = []
    if matrix and shown < cols:
        notes.append(t("report.picture_columns", shown=shown, cols=cols))
    if rows > PICTURE_ROWS:
        notes.append(t("report.picture_rows", shown=PICTURE_ROWS, rows=rows))
    if notes:
        text.append("  " + " ".join(notes) + "\n", style="dim")
    text.rstrip()
    return text


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
    (workbook/sourcenumbers.py), each beside the text's."""
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
    if result.budget_spent and result.budget_spent != result.problem:
        shown.append(Text(say(result.budget_spent), style="bold yellow"))
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
