"""A part's devices in the report: each device's line, its cases, checks and findings, and the
GPU's facts (speed, memory traffic, PTX, occupancy). A line every part would repeat is said
once (shared_lines).
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..core.i18n import pick, t
from ..core.results import (
    CaseResult,
    DeviceResult,
    Finding,
    OutputCheck,
    PartResult,
    PuzzleResult,
    Status,
)
from .casemap import case_name, render_case_detail
from .style import DEVICE_ORDER, STYLE, badge, device_label, fmt, indented, reasons, say

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
            console.print(Panel(Text(dev.output[-3000:]), title=t("status." + dev.status.value), border_style="red"))
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
