"""The GPU pipeline: the GPU kernels on a real GPU, and compute-sanitizer.

Without a GPU (or with one that lacks what the puzzle needs) the GPU launcher is
still built, for the GPU target: a kernel that only compiles for the host is a
failure, and the report's GPU line says `compiled` (or `skipped`). With one,
the kernels run `repeats` times, and compute-sanitizer's tools run beside them
from a build with line tables.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ...child.channel import Sink
from ...compile import build, launcher, occupancy, ptx
from ...core import settings, toolchain
from ...core.i18n import Msg, msg
from ...core.results import DeviceResult, Finding, Status
from ...course.manifest import Part
from ...judging import judge, methods, speed
from ...run import kernelrun, sanitizer, timing

if TYPE_CHECKING:
    from ..engine import Check


def clean_marker(binary: Path, tool: str) -> Path:
    """Beside a GPU launcher: this code was clean under `tool` (not run again)."""
    return binary.with_name(f"{binary.name}.{tool}-clean")


def sanitizer_limit(plain: float) -> float:
    """How long one compute-sanitizer tool may take: its own start-up, and the kernels
    slowed down many times, scaled from the plain run's time; never more than the
    old flat limit (ten times the run limit)."""
    return min(settings.run_timeout() * 10, max(SANITIZER_FLOOR, SANITIZER_FACTOR * plain))


SANITIZER_FLOOR = 60.0  # seconds: compute-sanitizer's own start-up takes several
SANITIZER_FACTOR = 50  # its tools slow a kernel down tens of times


def run(check: Check, parts: list[Part]) -> None:
    """Build, run and judge on the GPU. Where compute-sanitizer will run, its own
    build (with line tables, so findings name the learner's line) compiles beside
    the plain one, which gives the verdict without waiting for it."""
    tools, note = _tools(check, parts)
    later = check.options.batch
    pool = ThreadPoolExecutor(max_workers=1) if tools and not later else None
    lined = pool.submit(build.launcher, check.children, check.src, check.plan, "gpu", check.target("gpu"),
                        lines=True) if pool else None
    build_lined = (lambda: build.launcher(check.children, check.src, check.plan, "gpu", check.target("gpu"),
                                          lines=True)) if tools and later else None
    try:
        built = check.build("gpu", "gpu")
        if built is None:
            return
        ptx_check(check, parts, built.binary)
        occupancy_check(check, parts, built.binary)
        if not check.gpu_runs():
            for part in parts:
                dev = check.gated() or judge.device_result("gpu", Status.COMPILED, "reason.no_gpu",
                                               target=toolchain.gpu_target())
                check.kernels[part.id]["gpu"] = dev
                check.emit(part.id, "gpu", "phase.verdict", dev.status)
            return
        indices = [i for p in parts for i in check.indices(p)]
        known = timing.recorded(check.puzzle, "gpu")
        # FACTOR times the solution's time, but never past WORKBOOK_RUN_TIMEOUT: a GPU run's time
        # is mostly the driver's start-up, so 20 times it let a hung p01 kernel run 90 s on the
        # H200 (issue 38's hang test, 2026-11-28).
        limit = check.capped(check.options.run_timeout
                             or min(settings.run_timeout(), timing.limit_from(known, settings.run_timeout())))
        with check.stage("run/gpu"):
            raw = kernelrun.run(check.children, built.binary, check.plan, check.inputs, "gpu", check.puzzle.repeats,
                                indices, limit=limit, tick=check.ticker("", "gpu"))
        check.children.check()
        program = built.binary.read_bytes() if any(methods.ptx_rules(p) for p in parts) else b""
        for part in parts:
            dev = judge.judge(check, "gpu", part, raw, orders=False)
            dev.device_name = check.gpu.name
            _methods(check, part, dev, program)
            check.kernels[part.id]["gpu"] = dev
            check.emit(part.id, "gpu", "phase.verdict", dev.status)
        if not check.options.part and all(check.kernels[p.id]["gpu"].status == Status.PASS for p in parts):
            timing.record(check.puzzle, "gpu", raw.seconds)
        if raw.status != "timeout":
            _time_parts(check, parts, built)
        _needs_missing_sanitizer(check, parts)
        check.plain_in("gpu")  # the plain verdicts are in: an op's graphs may build beside the tools
        if raw.status == "timeout":
            check.spent("GPU", timed_out=True)  # said only if the check's budget cut it short
            # A kernel that never ends under a plain run never ends under a sanitizer
            # either: no tool runs, and the verdict is the timeout's (it hung a check
            # for 400 s when each tool got ten times the plain limit).
            for part in parts:
                if check.kernels[part.id]["gpu"].status != Status.NOT_RUN:
                    check.kernels[part.id]["gpu"].tools = msg("sanitizer.not_after_timeout")
        elif lined is not None:
            check.partial("phase.sanitizers_next")  # the plain verdict now; the tools' when they are done
            with_lines = lined.result()
            _sanitize(check, with_lines if with_lines.ok else built, parts, indices, tools,
                      sanitizer_limit(raw.seconds))
        elif build_lined is not None:
            check.partial("phase.sanitizers_next")
            _sanitize(check, built, parts, indices, tools, sanitizer_limit(raw.seconds), lined=build_lined)
        elif note is not None:
            for part in parts:
                if check.kernels[part.id]["gpu"].status != Status.NOT_RUN:
                    check.kernels[part.id]["gpu"].tools = note
    except BaseException:
        check.children.cancel()  # the sanitizer's build too, so that the pool ends at once
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True)


def _methods(check: Check, part: Part, dev: DeviceResult, program: bytes) -> None:
    """The part's stated methods, as far as the PTX of the build that ran shows them
    (workbook/judging/methods.py): what the kernel ran is what the GPU build compiled."""
    if not program or dev.status in (Status.CRASH, Status.TIMEOUT):
        return
    values_right = bool(dev.cases) and all(c.passed for c in dev.cases)
    broken = methods.ptx_findings(check, part, program, values_right)
    if broken:
        dev.findings = (dev.findings or []) + broken
        dev.status = Status.FAIL
        dev.explain("reason.method", n=len(broken))


def _time_parts(check: Check, parts: list[Part], built: build.Built) -> None:
    """Time the parts that passed and care about speed, in a run of their own after the
    verdict (never under a sanitizer): warm-up, then each launch timed by the device."""
    timed = [spec for spec in check.plan.timed if spec.part in parts
             and check.kernels[spec.part.id]["gpu"].status == Status.PASS]
    if not timed or check.spent("GPU timing"):
        return
    check.emit("", "gpu", "phase.timing")
    with check.stage("run/gpu-timing"):
        raw = _timed_run(check, built.binary, timed)
    judged = [spec for spec in timed if spec.part.speed.max_ratio_to_solution and spec.index in raw.times]
    # The solution's times from the same process, alternated with the learner's where the
    # launcher holds it (launcher.Solution); else from a launcher of its own, run after.
    beside = {spec.index: raw.times[launcher.SOLUTION_TIMES + spec.index] for spec in judged
              if launcher.SOLUTION_TIMES + spec.index in raw.times}
    how = {spec.index: "alternated" for spec in judged if spec.index in beside}
    if check.options.solutions:
        reference, how = raw.times, {spec.index: "same_run" for spec in judged}
    else:
        rest = [spec for spec in judged if spec.index not in beside]
        reference = {**(_solution_times(check, rest) if rest else {}), **beside}
        how.update({spec.index: "own_launcher" for spec in rest})
    for spec in timed:
        part = spec.part
        if spec.index not in raw.times:
            check.speeds[part.id] = speed.not_measured(part, "speed.run_failed", status=raw.status)
            continue
        case = check.timed_cases[spec.index - len(check.plan.cases)]
        measured = speed.measure(part, case, spec.names(), raw.times[spec.index], check.gpu.name)
        speed.against_solution(measured, part, reference.get(spec.index), how.get(spec.index, ""))
        check.speeds[part.id] = measured
        if measured.too_slow:
            dev = check.kernels[part.id]["gpu"]
            dev.status = Status.FAIL
            dev.explain("reason.too_slow", ratio=f"{measured.ratio_to_solution:.2f}",
                        limit=f"{measured.max_ratio_to_solution:g}")
            check.emit(part.id, "gpu", "phase.verdict", dev.status)


def _timed_run(check: Check, binary: Path, specs: list, plan: launcher.Plan | None = None) -> kernelrun.KernelRun:
    """One GPU run of the timed cases `specs` (their device times in `times`)."""
    raw = kernelrun.run(check.children, binary, plan or check.plan, check.inputs, "gpu", 1,
                        [spec.index for spec in specs], limit=check.capped(settings.run_timeout()))
    check.children.check()
    return raw


def _solution_times(check: Check, specs: list) -> dict[int, list[int]]:
    """The reference solution's device times on the same timed cases, in this check: its
    own GPU launcher (from the workbook's solutions, never the learner's folder; the build
    cache makes it free where the learner's files are the solution's), run the same way."""
    if check.spent("GPU timing"):
        return {}
    with check.stage("build/gpu-solution"):
        plan = dataclasses.replace(check.plan, solution=None)  # the solution's own kernels are `puzzle` here
        built = build.launcher(check.children, build.sources(check.puzzle, solutions=True), plan, "gpu",
                               check.target("gpu"))
    if not built.ok:
        return {}
    with check.stage("run/gpu-solution-timing"):
        return _timed_run(check, built.binary, specs, plan).times


def ptx_check(check: Check, parts: list[Part], binary: Path) -> None:
    """The PTX of the GPU build, per kernel (a puzzle about how kernels compile, one with
    a [[parts.ptx]] rule, only): the `ptx` device of each part shows every kernel's global
    loads and stores, and fails a part whose kernel lacks the vector accesses a rule asks
    for. It needs no GPU: the build for the GPU target holds the PTX on every machine."""
    if not any(p.ptx for p in check.puzzle.parts):
        return
    names = sorted({ln.name for p in check.puzzle.parts for ln in p.launches if not ln.host})  # all: see methods
    with check.stage("ptx"):
        try:
            found = ptx.read(binary, check.puzzle.module, names)
        except OSError:
            found = {}
    for part in parts:
        kernels = [ln.name for ln in part.launches if not ln.host]
        dev = DeviceResult("ptx", Status.PASS, device_name=check.target("gpu") or "")
        dev.ptx = [found[k] for k in kernels if k in found]
        missing = [k for k in kernels if k not in found]
        if missing:
            dev.status = Status.NOT_RUN
            dev.explain("reason.ptx_missing", kernels=", ".join(missing), target=dev.device_name)
        for rule in part.ptx:
            facts = found.get(rule.kernel)
            if facts is None:
                continue
            least = {"loads": rule.min_loads, "stores": rule.min_stores}
            missed = [msg(f"ptx.want_{what}" if least[what] == 1 else f"ptx.want_{what}_n", rule=getattr(rule, what),
                          count=least[what]) for what in ("loads", "stores")
                      if getattr(rule, what) and not ptx.meets(facts, what, getattr(rule, what), least[what])]
            if missed:
                dev.status = Status.FAIL
                dev.explain("reason.ptx_rule", kernel=rule.kernel, wanted=missed, loads=facts.loads.summary(),
                            stores=facts.stores.summary(), why=rule.why)
        if not part.ptx and dev.status == Status.PASS:
            dev.explain("reason.ptx_shown")
        check.kernels[part.id]["ptx"] = dev
        check.emit(part.id, "ptx", "phase.verdict", dev.status)


def occupancy_check(check: Check, parts: list[Part], binary: Path) -> None:
    """Each kernel's theoretical occupancy on an sm_90 SM (a part with an occupancy rule, or
    show_occupancy, only): the block sizes of the part's launches in this check's cases, and
    the registers and static shared memory NVIDIA's PTX compiler gives the kernel's PTX from
    the GPU build. No GPU is needed: a learner without one gets the same verdict. Where the
    compiler is missing, registers are not known: the register limit is not checked, and
    the device says so rather than passing on the other limits alone."""
    shown = [p for p in parts if p.occupancy or p.show_occupancy]
    if not shown:
        return
    names = sorted({ln.name for p in shown for ln in p.launches if not ln.host})
    missing_compiler = False
    with check.stage("occupancy"):
        try:
            found = occupancy.read(binary, check.puzzle.module, names)
        except occupancy.CompilerMissing:
            found, missing_compiler = {}, True
        except OSError:
            found = {}
    target = occupancy.SM90.name
    for part in shown:
        dev = DeviceResult("occupancy", Status.PASS, device_name=target)
        blocks: dict[str, set[int]] = {}
        for spec in check.plan.cases:
            if spec.part.id == part.id:
                for lau in spec.launches:
                    if not lau.host:
                        blocks.setdefault(lau.name, set()).add(lau.block[0] * lau.block[1] * lau.block[2])
        for kernel, sizes in sorted(blocks.items()):
            res = found.get(kernel)
            if res is not None and res.error:
                dev.status = Status.FAIL
                dev.explain("reason.occupancy_no_code", kernel=kernel, error=res.error.splitlines()[0])
                continue
            for size in sorted(sizes):
                occ = occupancy.compute(kernel, size, res.registers if res else None, res.shared if res else 0)
                occ.spills = res.spills if res else 0
                dev.occupancy.append(occ)
        if missing_compiler or any(o.registers is None for o in dev.occupancy):
            dev.explain("reason.occupancy_no_registers")
        for rule in part.occupancy:
            for occ in (o for o in dev.occupancy if o.kernel == rule.kernel):
                if occ.occupancy + 1e-9 < rule.min_occupancy:
                    dev.status = Status.FAIL
                    dev.explain("reason.occupancy_rule", kernel=occ.kernel, percent=f"{occ.percent:.1f}",
                                warps=occ.warps_per_sm, max_warps=occ.max_warps_per_sm,
                                least=f"{100 * rule.min_occupancy:g}", limit=limit_msg(occ), why=rule.why)
        if dev.status == Status.PASS and any(o.registers is None for o in dev.occupancy) and part.occupancy:
            dev.status = Status.NOT_RUN  # the register limit could decide it: no verdict without it
        check.kernels[part.id]["occupancy"] = dev
        check.emit(part.id, "occupancy", "phase.verdict", dev.status)


def limit_msg(occ: occupancy.Occupancy) -> Msg:
    """What limits a kernel's blocks per SM, with the numbers, in the learner's words."""
    first = occ.limiting[0] if occ.limiting else "warps"
    sm = occupancy.SM90
    return msg(f"occupancy.limit_{first}", block=occ.block, warps=occ.warps_per_block, blocks=occ.blocks_per_sm,
               max_blocks=sm.max_blocks_per_sm, max_warps=sm.max_warps_per_sm, registers=occ.registers,
               per_warp=occ.registers_per_block // max(occ.warps_per_block, 1), sm_registers=sm.registers_per_sm,
               shared=occ.shared, allocated=occ.shared_per_block, sm_shared=sm.shared_per_sm // occupancy.KB,
               block_shared=sm.shared_per_block // occupancy.KB)


def _tools(check: Check, parts: list[Part]) -> tuple[list[str], Msg | None]:
    """The compute-sanitizer tools this check runs (the policy's choice, and the ones
    a part always needs, --quick or not), and a note for the report when none runs."""
    if not check.gpu_runs():
        return [], None
    binary = build.launcher_binary(check.src, check.plan, "gpu", check.target("gpu"))
    clean = {tool for tool in sanitizer.TOOLS if clean_marker(binary, tool).exists()}
    branches = any(sanitizer.barrier_in_branch(path.read_text(encoding="utf-8", errors="replace"))
                   for name, path in check.src.files.items() if name in check.puzzle.edit and name.endswith(".mojo"))
    chosen, note = sanitizer.choose(check.options.sanitize, True, clean, branches) if not check.options.quick \
        else ((), None)
    needed = [t for p in parts for t in p.sanitizers]
    if needed and sanitizer.locate() is None:
        return [], note
    return [t for t in sanitizer.TOOLS if t in chosen or t in needed], note


def _needs_missing_sanitizer(check: Check, parts: list[Part]) -> None:
    """A part that is only judged under compute-sanitizer (a debugging puzzle), where
    the tool is not here: not run, and the report says why."""
    if sanitizer.locate() is not None:
        return
    for part in parts:
        if part.sanitizers:
            check.kernels[part.id]["gpu"] = judge.device_result("gpu", Status.NOT_RUN, "reason.needs_sanitizer",
                                                   tools=", ".join(part.sanitizers))


def _sanitize(check: Check, built: build.Built, parts: list[Part], indices: list[int], tools: list[str],
              limit: float, lined=None) -> None:
    """compute-sanitizer over every case (so over the one with the most threads too).
    `lined` (a function that builds the launcher with line tables, or None when `built`
    has them): the tools run on the plain build first, and only where one finds
    something is the build with lines made, and those tools run again on it, so that
    clean code (a solution, most of a course's check) never pays a third compile."""
    findings, problems, ran = _run_tools(check, built, indices, tools, limit)
    if lined is not None and findings:
        with_lines = lined()
        if with_lines.ok:
            again = [t for t in ran if any(f.tool == t for f in findings)]
            findings_again, problems_again, _ = _run_tools(check, with_lines, indices, again, limit)
            if findings_again:  # the same bugs, now with their lines (a flaky race may not repeat)
                findings = [f for f in findings if f.tool not in again] + findings_again
                problems += problems_again
    for part in parts:
        dev = check.kernels[part.id]["gpu"]
        if dev.status == Status.NOT_RUN:
            continue
        dev.tools = problems[0] if problems else msg("sanitizer.ran", tools=", ".join(ran) or "-")
        dev.findings = (dev.findings or []) + findings
        if findings:
            dev.status = Status.FAIL
            dev.explain("reason.sanitizer", n=len(findings))
    if not findings and not problems:  # this code is clean under these tools: not again
        binary = build.launcher_binary(check.src, check.plan, "gpu", check.target("gpu"))
        for tool in ran:
            clean_marker(binary, tool).write_text("")


def _run_tools(check: Check, built: build.Built, indices: list[int], tools: list[str],
               limit: float) -> tuple[list[Finding], list[Msg], list[str]]:
    """Each tool over every case: what they found, what stopped them, which ran."""
    findings: list[Finding] = []
    problems: list[Msg] = []
    learner = {name: settings.shown(path) for name, path in check.src.files.items() if name in check.puzzle.edit}
    ran: list[str] = []
    for tool in tools:
        if check.spent(f"compute-sanitizer ({', '.join(tools[len(ran):])})"):
            break
        ran.append(tool)
        check.emit("", "gpu", "phase.sanitizer", tool=tool)
        log = Sink()
        try:
            raw = kernelrun.run(check.children, built.binary, check.plan, check.inputs, "gpu", 1, indices,
                                prefix=sanitizer.wrapper(tool, log.fd), env=sanitizer.environment(tool),
                                limit=check.capped(limit), keep=(log.fd,))
            text = log.read(sanitizer.LOG_CAP).decode("utf-8", errors="replace")
        finally:
            log.close()
        if raw.status == "timeout":
            check.spent(f"compute-sanitizer ({tool})", timed_out=True)
        check.children.check()
        found = sanitizer.parse(tool, text, learner)
        findings += found
        if raw.status != "ok" and not found:
            problems.append(msg("sanitizer.could_not_run", tool=tool, why=raw.message or msg("run.died_code",
                                                                                              code="?")))
        keep = settings.keep_sanitizer_logs()
        if keep and text:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{check.puzzle.id}-{tool}.log").write_text(text)
    return findings, problems, ran
