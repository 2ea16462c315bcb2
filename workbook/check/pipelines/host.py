"""The host pipeline: an op's CPU kernels, and the GPU kernels on the simulator.

Both run from one program (the host launcher, built with the simulator's runtime
and its watch on every access), in two processes: mode `cpu`, then mode `sim`,
each over every case of the parts it serves. The time limit of each is scaled
from the reference solution's own time (timing.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...compile import build, launcher
from ...core import settings
from ...core.results import DeviceResult, Status
from ...course.manifest import Part
from ...judging import judge
from ...run import kernelrun, timing

if TYPE_CHECKING:
    from ..engine import Check


def run(check: Check, parts: list[Part]) -> None:
    """Build the host launcher once; run the CPU kernels, then the simulator; judge each."""
    cpu_parts = [p for p in parts if "cpu" in p.devices and check.wanted("cpu")]
    sim_parts = [p for p in parts if check.sim_wanted(p)]
    runnable = [p for p in sim_parts if p.sim and check.src.sim_problem is None]
    for part in sim_parts:
        if part not in runnable:
            check.kernels[part.id]["sim"] = _refused(check, part)
    if not cpu_parts and not runnable:
        return  # nothing to build: a host build of code the simulator can't run would not even compile
    built = check.build("host", "sim" if runnable else "cpu")
    if built is None:
        return
    for mode, mode_parts, repeats in (("cpu", cpu_parts, 1), ("sim", runnable, launcher.SIM_ORDERS)):
        if not mode_parts:
            continue
        if check.spent(mode):  # the budget went on the build: what is left is not run, and said so
            for part in mode_parts:
                check.kernels[part.id][mode] = judge.device_result(mode, Status.NOT_RUN, "reason.budget_spent")
            continue
        indices = [i for p in mode_parts for i in check.indices(p)]
        with check.stage(f"run/{mode}"):
            raw = kernelrun.run(check.children, built.binary, check.plan, check.inputs, mode, repeats, indices,
                                limit=check.capped(check.options.run_timeout or time_limit(check, mode)),
                                tick=check.ticker("", mode), symbolize=check.symbolize)
        check.children.check()
        if raw.status == "timeout":
            check.spent(mode, timed_out=True)  # said only if it was the check's budget that ran out
        for part in mode_parts:
            with check.stage("judge"):
                dev = judge.judge(check, mode, part, raw, orders=mode == "sim")
            check.kernels[part.id][mode] = dev
            check.emit(part.id, mode, "phase.verdict", dev.status)
        whole = not check.options.part and len(mode_parts) == len([p for p in check.puzzle.parts
                                                                  if mode in p.devices or mode == "sim"])
        if whole and all(check.kernels[p.id][mode].status == Status.PASS for p in mode_parts):
            timing.record(check.puzzle, mode, raw.seconds / _seed_count(check))


def time_limit(check: Check, mode: str) -> Callable[[], float]:
    """How long the kernels may run on the simulator or the CPU (timing.py): a multiple
    of the solution's own time. Unknown, it is measured only if a run is still going
    after timing.FLOOR seconds, beside that run."""
    default = settings.run_timeout()
    seeds = _seed_count(check)
    known = timing.recorded(check.puzzle, mode)
    if known is not None or check.options.solutions:
        value = timing.limit_from(None if known is None else known * seeds, default * seeds)
        return lambda: value
    measured: dict[str, float | None] = {}
    started = time.monotonic()

    def limit() -> float:
        if "started" not in measured and time.monotonic() - started > timing.FLOOR:
            measured["started"] = time.monotonic()
            threading.Thread(target=_measure_solution, args=(check, mode, measured), daemon=True).start()
        return timing.limit_from(measured.get("seconds"), default * seeds)
    return limit


def _seed_count(check: Check) -> int:
    """How many seeds' cases one run holds (author verify runs many at once): records are
    per seed, so a run of 20 seeds is given 20 times the time of one."""
    return max(1, len(check.options.seeds))


def _measure_solution(check: Check, mode: str, into: dict) -> None:
    """Run the reference solution on the same cases, to learn how long a right kernel takes."""
    try:
        src = build.sources(check.puzzle, solutions=True)
        built = build.launcher(check.children, src, check.plan, "host")
        if not built.ok:
            return
        indices = [i for p in check.parts if (mode in p.devices or mode == "sim") for i in check.indices(p)]
        raw = kernelrun.run(check.children, built.binary, check.plan, check.inputs, mode,
                            launcher.SIM_ORDERS if mode == "sim" else 1, indices, limit=settings.run_timeout())
        if raw.status == "ok" and not raw.findings:
            into["seconds"] = raw.seconds
            if not check.options.part:
                timing.record(check.puzzle, mode, raw.seconds / _seed_count(check))
    except Exception:  # noqa: BLE001 - a measure that fails leaves the default limit
        return


def _refused(check: Check, part: Part) -> DeviceResult:
    problem = check.src.sim_problem
    if problem is not None:
        return judge.device_result("sim", Status.NOT_RUN, "reason.sim_unsupported", what=problem.what,
                                   file=problem.file, line=problem.line)
    return judge.device_result("sim", Status.NOT_RUN, "reason.sim_not_for_part")
