"""The graph pipeline (op puzzles, second stage): the op through a MAX graph.

Only once the kernels passed: the learner's op is packaged (`mojo precompile`),
the learner's graph is built and run by a worker process on the CPU and the
GPU, and its outputs are judged like the kernels'. The graph may call the
puzzle's custom op and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import build, judge, kernelrun
from ..catalog import Part
from ..graphrun import GraphWorker
from ..i18n import msg
from ..processes import Cancelled
from ..results import PASSING, DeviceResult, Finding, Status

if TYPE_CHECKING:
    from ..engine import Check


def wanted(check: Check, part: Part) -> bool:
    """Op puzzles only, and not with --quick (the first stage is its verdict)."""
    return check.puzzle.kind == "op" and not check.options.quick


def run(check: Check, part: Part) -> dict[str, DeviceResult]:
    """The op through a MAX graph on each device of the part (once its kernels passed)."""
    devices = [d for d in part.devices if check.wanted(d)]
    kernel_statuses = [d.status for d in check.kernels[part.id].values()]
    if not all(s in PASSING or s in (Status.SKIPPED, Status.NOT_RUN) for s in kernel_statuses):
        return {d: judge.device_result(d, Status.NOT_RUN, "reason.kernels_first") for d in devices}
    check.emit(part.id, "graph", "phase.precompiling")
    with check.stage("graph/precompile"):
        packaged = build.precompile(check.children, check.src)
    if not packaged.ok:
        with check.lock:
            check.result.diagnostics += packaged.diagnostics
            check.result.compiler_output = check.result.compiler_output or packaged.output
            check.result.problem = check.result.problem or packaged.problem
        return {d: judge.device_result(d, Status.COMPILE_ERROR, "reason.precompile") for d in devices}
    graph_dir = build.python_files(check.puzzle, check.options.solutions, check.given)
    results: dict[str, DeviceResult] = {}
    runnable = []
    for d in devices:
        if d == "gpu" and not check.gpu_runs():
            results[d] = check.gated() or judge.device_result(d, Status.NOT_RUN, "reason.no_gpu_graph")
        else:
            runnable.append(d)

    def one(device: str) -> None:
        repeats = check.puzzle.repeats if device == "gpu" else 1
        worker = GraphWorker(check.children, check.puzzle, part, device, graph_dir, check.src.mojoc,
                             check.cases[part.id], repeats)
        with check.stage(f"graph/{device}"):
            raw = worker.collect(check.ticker(part.id, f"graph-{device}"))
        results[device] = _judge_graph(check, device, part, raw, repeats)
        check.emit(part.id, f"graph-{device}", "phase.verdict", results[device].status)

    check.parallel([lambda d=d: one(d) for d in runnable])
    check.children.check()
    return {d: results[d] for d in devices}


def _judge_graph(check: Check, device: str, part: Part, raw, repeats: int) -> DeviceResult:
    name = (check.gpu.name if check.gpu else "GPU") if device == "gpu" else "CPU"
    bypass = [g for g in raw.graphs if g["others"] or g["missing"] or not g["outputs_from_op"]]
    if bypass:
        g = bypass[0]
        finding = Finding("graph", "bypass", msg("finding.graph_bypass", ops=", ".join(part.ops),
                                               others=", ".join(g["others"]) or "-",
                                               missing=", ".join(g["missing"]) or "-"))
        dev = DeviceResult(device, Status.FAIL, [msg("reason.graph_bypass")], device_name=name,
                           findings=[finding])
        return dev
    if raw.status == "cancelled":
        raise Cancelled()
    if raw.status != "ok":
        status = {"compile_error": Status.COMPILE_ERROR, "timeout": Status.TIMEOUT}.get(raw.status, Status.CRASH)
        reasons = [raw.message] if raw.message else []
        return DeviceResult(device, status, reasons, seconds=raw.seconds, device_name=name, output=raw.output)
    fake = kernelrun.KernelRun("ok", outputs={i: raw.outputs[n] for n, i in enumerate(check.indices(part))
                                               if n in raw.outputs}, seconds=raw.seconds)
    dev = judge.judge(check, device, part, fake, orders=False)
    dev.repeats = repeats
    dev.device_name = name
    return dev
