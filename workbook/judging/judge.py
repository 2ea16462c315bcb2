"""Judging what a run left: a DeviceResult per part and device.

The outputs of every case against the reference (compare.py), the repeats
against each other, the simulator's findings in the learner's terms
(simfindings.py), who wrote what (the pictures), what every thread read and
wrote, the part's access budgets and its stated methods (methods.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..compile import launcher
from ..compile.symbols import Place
from ..core import settings
from ..core.i18n import Msg, msg
from ..core.results import CaseResult, DeviceResult, Finding, LaunchAccess, LineTraffic, Picture, SharedPicture, Status
from ..course import manifest
from ..course.manifest import Part
from ..run import kernelrun, simfindings
from . import compare, methods, ncu

if TYPE_CHECKING:
    from ..check.engine import Check


def device_result(device: str, status: Status, key: str, **values) -> DeviceResult:
    """A device's result that is only a status and the reason for it."""
    result = DeviceResult(device, status)
    result.explain(key, **values)
    return result


def judge(check: Check, device: str, part: Part, raw: kernelrun.KernelRun, orders: bool,
          only: list[int] | None = None) -> DeviceResult:
    """`only`: the positions, among the part's cases, that this run was asked for (the
    graph stage's `graph_cases`); the others are not this device's to judge."""
    name = {"cpu": "CPU", "sim": "simulator"}.get(device, "GPU")
    if raw.status in ("crash", "timeout"):
        status = Status.TIMEOUT if raw.status == "timeout" else Status.CRASH
        dev = DeviceResult(device, status, [raw.message] if raw.message else [], seconds=raw.seconds,
                           device_name=name, output=raw.output)
        if raw.timeout is not None and device in ("sim", "cpu"):
            index = raw.timeout.get("case", -1)
            limit = raw.limit or check.options.run_timeout or settings.run_timeout()
            dev.findings = [simfindings.timeout(raw.timeout, check.plan, check.case_name(index), limit)]
        elif raw.status == "timeout" and raw.timeout is not None and raw.timeout.get("kernels"):
            # The GPU: the case it was in and that case's kernels (kernelrun._gpu_timeout).
            limit = raw.limit or check.options.run_timeout or settings.run_timeout()
            dev.reasons = [msg("run.timeout_gpu", seconds=round(limit), case=check.case_name(raw.timeout["case"]),
                               kernels=", ".join(raw.timeout["kernels"]))]
        return dev
    repeats = launcher.SIM_ORDERS if orders else (check.puzzle.repeats if device == "gpu" else 1)
    dev = DeviceResult(device, Status.PASS, repeats=repeats, seconds=raw.seconds, device_name=name)
    indices = check.indices(part)
    for n, index in enumerate(indices):
        if only is not None and n not in only:
            continue
        case = check.cases[part.id][n]
        got = raw.outputs.get(index)
        if got is None or len(got) < repeats:
            # No outputs: never reached, or stopped inside by a fault the simulator named (it ran).
            stopped = any(f.get("case", -1) == index for f in raw.findings)
            dev.cases.append(CaseResult(case["name"], case["params"], [], [], passed=False,
                                        label=case.get("label", {}), ran=False, stopped=stopped))
            continue
        inv = (lambda c, outs, p=part.id: check.invariants(c, outs, p)) if check.invariants else None
        dev.cases.append(compare.check_case(case, part, got, check.expected[part.id][n], inv, orders))
    errors = [o for c in dev.cases for o in c.outputs]
    abs_errs = [o.max_abs_error for o in errors if o.max_abs_error is not None]
    rel_errs = [o.max_rel_error for o in errors if o.max_rel_error is not None]
    dev.max_abs_error = max(abs_errs) if abs_errs else None
    dev.max_rel_error = max(rel_errs) if rel_errs else None
    if device in ("sim", "cpu") or raw.findings:
        dev.findings = simfindings.merge([
            simfindings.describe(f, check.plan, check.case_name(f.get("case", -1))) for f in raw.findings
            if f.get("case", -1) in indices])
    if device == "sim":
        dev.tools = msg("sim.checked")
    if not all(c.passed for c in dev.cases) or dev.findings:
        dev.status = Status.FAIL
    if any(c.nondeterministic for c in dev.cases):
        dev.explain("reason.race")
    if any(c.order_dependent for c in dev.cases):
        dev.explain("reason.order")
    if dev.findings:
        dev.explain("reason.sim_findings", n=len({f.kind for f in dev.findings}))  # one per case: count kinds
    if any(o.nan_count or o.inf_count for o in errors) and not dev.reasons:
        dev.explain("reason.nan")
    missing = sum(not c.ran for c in dev.cases)
    if raw.status == "fatal" and not dev.findings and missing:
        dev.explain("reason.sim_stopped")  # one of this part's cases: another part's stop is not this one's
    elif missing and not dev.reasons:  # never a case that did not run without a word
        dev.explain("reason.outputs_missing", n=missing)
    if device == "sim":
        _picture(check, dev, raw, indices)
        dev.access = _access(check, raw, indices)
        broken = _budgets(check, part, dev, raw)
        if broken:
            dev.findings = (dev.findings or []) + broken
            dev.status = Status.FAIL
            dev.explain("reason.budget", n=len(broken))
        stated = methods.sim_findings(check, part, dev, raw)
        if stated:
            dev.findings = (dev.findings or []) + stated
            dev.status = Status.FAIL
            dev.explain("reason.method", n=len(stated))
        if part.traffic or part.show_traffic:
            kernels = {a.kernel for a in dev.access}
            dev.traffic = traffic(check, raw, kernels)
            dev.traffic_counted = ncu.counted() if dev.traffic else None
            costly = traffic_findings(part, dev.traffic)
            if costly:
                dev.findings = (dev.findings or []) + costly
                dev.status = Status.FAIL
                dev.explain("reason.traffic", n=len(costly))
    return dev


# result.json's sites: [pc, caller, kernel, global reads, global writes, shared reads, shared
# writes, global requests, sectors, ideal sectors, shared requests, wavefronts, ideal wavefronts]
SITE_TRAFFIC = 7


def traffic(check: Check, raw: kernelrun.KernelRun, kernels: set[str]) -> list[LineTraffic]:
    """Per line of the learner's kernels: its warp-wide requests to global and shared memory
    and what they would cost a GPU (wbsim.c prices them), loads and stores apart."""
    ids = {n for n, site in enumerate(raw.sites, 1)
           if len(site) >= SITE_TRAFFIC + 6 and site[2] in kernels and (site[SITE_TRAFFIC] or site[SITE_TRAFFIC + 3])}
    if not ids or raw.binary is None:
        return []
    places = check.symbolize(raw.binary, raw.sites, ids, {})
    lines: dict[tuple, list[int]] = {}
    for sid in sorted(ids):
        site, place = raw.sites[sid - 1], places.get(sid)
        where = (place.file, place.line, " / ".join([place.text, *(t for _, t in place.also)]),
                 tuple(n for n, _ in place.also), place.about) if place else ("", 0, "", (), False)
        for space, at in (("global", SITE_TRAFFIC), ("shared", SITE_TRAFFIC + 3)):
            requests, cost, ideal = (int(v) for v in site[at:at + 3])
            if not requests:
                continue
            reads, writes = (site[3], site[4]) if space == "global" else (site[5], site[6])
            key = (site[2], *where, space, "load" if reads >= writes else "store")
            total = lines.setdefault(key, [0, 0, 0])
            total[0] += requests
            total[1] += cost
            total[2] += ideal
    found = []
    for (kernel, file, line, text, also, about, space, access), (requests, cost, ideal) in lines.items():
        found.append(LineTraffic(
            kernel, file, line, space, access, requests, cost, ideal, round(cost / requests, 2),
            round(ideal / requests, 2), round((cost - ideal) / requests, 2) if space == "shared" else 0.0, text,
            list(also), about))
    found.sort(key=lambda x: (x.kernel, x.file, x.line, x.space, x.access))
    return found


def traffic_findings(part: Part, lines: list[LineTraffic]) -> list[Finding]:
    """One finding per line that costs more than the part's traffic limits allow."""
    found: list[Finding] = []
    for limit in part.traffic:
        for name, most in limit.limits:
            space = "global" if name == "max_sectors_per_request" else "shared"
            for x in lines:
                if x.space != space or (limit.kernel and x.kernel != limit.kernel) \
                        or (limit.access and x.access != limit.access):
                    continue
                value = x.per_request if space == "global" else x.conflicts_per_request
                if value <= most:
                    continue
                message = msg("finding.traffic_" + space, kernel=x.kernel, line=x.label if x.line else "?",
                              access=msg("traffic." + x.access), value=f"{value:g}", limit=f"{most:g}",
                              ideal=f"{x.ideal_per_request:g}", why=limit.why)
                found.append(Finding("sim", "traffic", message, kernel=x.kernel, file=x.file,
                                     line=x.line or None, source=x.source))
    return found


def _budgets(check: Check, part: Part, dev: DeviceResult, raw: kernelrun.KernelRun) -> list[Finding]:
    """What the part's text asks of memory traffic (its manifest's budgets), checked on
    the simulator's counts of the budget's kernel alone: one finding per broken limit, at
    the first case that broke it, naming the kernel, the thread (or the element), its count
    and the lines that made the accesses, the busiest first, and saying when the values were
    right: then the rule is all that failed."""
    found: list[Finding] = []
    values_right = bool(dev.cases) and all(c.passed for c in dev.cases)
    for budget in part.budgets:
        for name, limit in budget.limits:
            for access in dev.access:
                if budget.kernel and access.kernel != budget.kernel:
                    continue
                spec = check.plan.cases[access.index] if 0 <= access.index < len(check.plan.cases) else None
                most = budget_limit(limit, spec)
                if most is None:
                    continue
                shapes = {b.name: b.shape for b in spec.buffers.values()} if spec else {}
                broken = budget_check(name, most, access, _launch_spec(check, access), shapes)
                if broken is None:
                    continue
                who, count = broken
                lines, busiest = _budget_lines(check, raw, access.kernel, name)
                key = "finding.budget_element" if name == "max_writes_per_element" else \
                    "finding.budget_" + ("min" if name.startswith("min_") else "max")
                message = msg(key, kernel=access.kernel, who=who, count=count, limit=most,
                              what=msg("budget." + name), why=budget.why,
                              where=msg("budget.lines", lines=lines) if "," in lines else
                              msg("budget.line", line=lines or "?"),
                              values=msg("budget.values_right") if values_right else "")
                finding = Finding("sim", "budget", message, kernel=access.kernel, case=access.case)
                simfindings.locate(finding, busiest, None)  # the line, and the stores the compiler merged into it
                found.append(finding)
                break
    return found


def budget_limit(limit: int | str, spec: launcher.CaseSpec | None) -> int | None:
    """A budget's limit for one case: a number, or a size expression of the case's
    parameters and the puzzle's constants (a lane's share of a count that grows with the
    size); None where the case is unknown."""
    if isinstance(limit, int):
        return limit
    if spec is None:
        return None
    return manifest.evaluate(limit, spec.names())


def _launch_spec(check: Check, access: LaunchAccess) -> launcher.LaunchSpec | None:
    spec = check.plan.cases[access.index] if 0 <= access.index < len(check.plan.cases) else None
    return next((lau for lau in spec.launches if lau.name == access.kernel), None) if spec else None


def _budget_lines(check: Check, raw: kernelrun.KernelRun, kernel: str, name: str) -> tuple[str, Place | None]:
    """The lines of `kernel` (no other launch's) that made the kind of access a budget
    limits, the busiest first, and the busiest line's place."""
    column = {"max_global_reads": 3, "max_global_writes": 4, "max_shared_reads": 5, "max_shared_writes": 6,
              "min_shared_writes": 6, "max_writes_per_element": 4, "max_global_reads_per_warp": 3}[name]
    ids = {n for n, site in enumerate(raw.sites, 1) if len(site) >= 7 and site[2] == kernel and site[column]}
    if not ids or raw.binary is None:
        return "", None
    places = check.symbolize(raw.binary, raw.sites, ids, {})
    made: dict[str, int] = {}
    where: dict[str, Place] = {}
    for sid, place in places.items():
        made[place.label] = made.get(place.label, 0) + int(raw.sites[sid - 1][column])
        where.setdefault(place.label, place)
    order = sorted(made, key=lambda label: (-made[label], int(label.lstrip("≈").split("/")[0])))
    return ", ".join(order), where[order[0]] if order else None


def _access(check: Check, raw: kernelrun.KernelRun, indices: list[int]) -> list[LaunchAccess]:
    """Per launch of this part's cases: what its threads read and wrote."""
    found = []
    for counts in raw.counts:
        if counts.case not in indices:
            continue
        table = counts.per_thread
        names = kernelrun.COUNTERS
        # The buffers this launch wrote, and the most writes it made to one element of each:
        # its own writes only, never another launch's of the same case.
        wrote = raw.launch_writes.get((counts.case, counts.launch), {})
        how = raw.methods.get((counts.case, counts.launch))
        found.append(LaunchAccess(
            check.case_name(counts.case), counts.label, int(table.shape[0]),
            {n: int(table[:, k].min()) if table.size else 0 for k, n in enumerate(names)},
            {n: int(table[:, k].max()) if table.size else 0 for k, n in enumerate(names)},
            {n: int(table[:, k].sum()) for k, n in enumerate(names)},
            {buf: most for buf, (most, _) in wrote.items()},
            per_thread=table, index=counts.case,
            busiest_element={buf: element for buf, (_, element) in wrote.items()},
            methods={k: v for k, v in how.counts.items() if v} if how else {},
            buffers={b: {k: v for k, v in use.items() if v} for b, use in how.buffers.items()} if how else {},
            launch=counts.launch))
    return found


def _picture(check: Check, dev: DeviceResult, raw: kernelrun.KernelRun, indices: list[int]) -> None:
    """Who wrote which element, for the first failing case (or the first case)."""
    chosen = next((i for i, c in zip(indices, dev.cases) if c.ran and not c.passed), None)
    if chosen is None:
        return
    spec = check.plan.cases[chosen]
    launch = spec.launches[-1] if spec.launches else None
    if launch is None:
        return
    picture = Picture(launch.block, launch.grid)
    for k, buf in enumerate(spec.outputs()):
        ids = raw.writers.get((chosen, k))
        if ids is not None:
            picture.outputs[buf.name] = (list(buf.shape), ids.tolist())
    for shared in raw.shared.get(chosen, []):
        found = simfindings.array_name(shared.place)
        picture.shared.append(SharedPicture(
            found.group(1) if found else "", shared.kernel, shared.block, shared.grid, shared.shape,
            shared.writers.tolist(), shared.alloc + 1, shared.place.file if shared.place else "",
            shared.place.line if shared.place else 0))
    dev.cases[indices.index(chosen)].picture = picture


BUDGET_COUNTERS = {"max_global_reads": "global_reads", "max_global_writes": "global_writes",
                   "max_shared_reads": "shared_reads", "max_shared_writes": "shared_writes"}


def budget_check(name: str, limit: int, access: LaunchAccess, launch: launcher.LaunchSpec | None,
                 shapes: dict[str, tuple[int, ...]] | None = None) -> tuple[Msg | str, int] | None:
    """(who broke it, their count) if one launch's counts break one budget limit: a thread,
    a block or a warp, or for max_writes_per_element the element (`shapes`: the buffers'
    shapes, to name it as the learner indexes it)."""
    table = access.per_thread
    if table is None:
        return None
    if name == "max_writes_per_element":
        if not access.writes_per_element:
            return None
        buffer = max(access.writes_per_element, key=lambda b: access.writes_per_element[b])
        worst = access.writes_per_element[buffer]
        if worst <= limit:
            return None
        shape = list((shapes or {}).get(buffer, ()))
        element = access.busiest_element.get(buffer, -1)
        return (simfindings.element(buffer, shape, element, element) if element >= 0 else buffer), worst
    if name == "min_shared_writes":
        per_block = launch.block[0] * launch.block[1] * launch.block[2] if launch else table.shape[0]
        column = table[:, kernelrun.COUNTERS.index("shared_writes")]
        blocks = [int(column[b:b + per_block].sum()) for b in range(0, len(column), max(1, per_block))]
        low = min(range(len(blocks)), key=blocks.__getitem__) if blocks else 0
        return (msg("budget.block", b=simfindings.block_id(launch, low)), blocks[low]) \
            if blocks and blocks[low] < limit else None
    if name == "max_global_reads_per_warp":
        return _per_warp(table[:, kernelrun.COUNTERS.index("global_reads")], limit, launch)
    column = table[:, kernelrun.COUNTERS.index(BUDGET_COUNTERS[name])]
    if not len(column) or int(column.max()) <= limit:
        return None
    worst = int(column.argmax())
    return simfindings.global_thread(launch, worst), int(column[worst])


WARP = 32  # lanes of an NVIDIA warp: a block's threads 0..31, 32..63, ...


def _per_warp(column, limit: int, launch: launcher.LaunchSpec | None) -> tuple[Msg, int] | None:
    """(the warp, its count) when the threads of one warp read global memory more than
    `limit` times together: where lanes should get their neighbours' values by shuffles,
    a warp reads its own elements once, plus a few past its end."""
    per_block = launch.block[0] * launch.block[1] * launch.block[2] if launch else len(column)
    worst, where = -1, (0, 0)
    for start in range(0, len(column), max(1, per_block)):
        block = column[start:start + per_block]
        for w in range(0, len(block), WARP):
            count = int(block[w:w + WARP].sum())
            if count > worst:
                worst, where = count, (start // max(1, per_block), w // WARP)
    if worst <= limit:
        return None
    return msg("budget.warp", w=where[1], b=simfindings.block_id(launch, where[0])), worst
