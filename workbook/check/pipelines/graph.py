"""The graph pipeline (op puzzles, second stage): the op through a MAX graph.

Only once the kernels passed their plain runs (compute-sanitizer may still be
looking: `settle` has its last word): the learner's op is packaged (`mojo
precompile`), the learner's graph file builds its graphs in a process of its
own, and the workbook's worker compiles and runs them, once checked, on the CPU
and the GPU (workbook/run/graphrun.py); the outputs are judged like the kernels'.
The graph may call the puzzle's custom op and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...child.processes import Cancelled
from ...compile import build
from ...core import settings
from ...core.i18n import msg
from ...core.results import PASSING, DeviceResult, Finding, Status
from ...course.manifest import Part
from ...judging import judge
from ...run import kernelrun
from ...run.graphrun import GraphRun, GraphWorker

if TYPE_CHECKING:
    from ..engine import Check


# True while the scheduler runs several checks at once (settings.graphs_early).
crowded = False


def wanted(check: Check, part: Part) -> bool:
    """Op puzzles only, and not with --quick (the first stage is its verdict)."""
    return check.puzzle.kind == "op" and not check.options.quick


def wanted_any(check: Check, parts: list[Part]) -> bool:
    return any(wanted(check, p) for p in parts)


def settle(check: Check, parts: list[Part], graphs: dict[str, dict[str, DeviceResult]]
           ) -> dict[str, dict[str, DeviceResult]]:
    """The graphs' results once compute-sanitizer is done too: the graphs started on the
    plain runs' verdicts, so a part whose kernels a tool then failed gets the same answer
    as one whose kernels failed a plain run (its graphs are not judged)."""
    settled: dict[str, dict[str, DeviceResult]] = {}
    for part in parts:
        found = graphs.get(part.id, {})
        if found and not kernels_passed(check, part):
            found = _kernels_first(found)
        settled[part.id] = found
    return settled


def run_parts(check: Check, parts: list[Part]) -> dict[str, dict[str, DeviceResult]]:
    """Every wanted part's graphs, side by side (each part's graphs are their own MAX
    compiles), after packaging the learner's op once for all of them. They run once every
    plain run has its verdict; where cores are to spare (settings.graphs_early) they are
    built meanwhile, held, and dropped unrun if the kernels fail."""
    wanted_parts = [p for p in parts if wanted(check, p)]
    results: dict[str, dict[str, DeviceResult]] = {p.id: {} for p in parts}
    if not wanted_parts:
        return results
    at_once = settings.graph_shards()  # one per four cores: on a laptop, one part after another
    early = settings.graphs_early(crowded)
    packaged = _package(check, wanted_parts) if early else None
    held: dict[str, Started] = {}
    try:
        if packaged is not None and packaged.ok and not check.plain_verdicts.is_set():
            held = {p.id: start(check, p, packaged, hold=True) for p in wanted_parts[:at_once]}
        check.plain_verdicts.wait()
        if check.failed_build is not None:
            return results
        if not early and any(kernels_passed(check, p) for p in wanted_parts):
            packaged = _package(check, wanted_parts)

        def one(part: Part) -> None:
            results[part.id] = run(check, part, packaged, held.pop(part.id, None))

        for first in range(0, len(wanted_parts), at_once):
            check.parallel([lambda p=p: one(p) for p in wanted_parts[first:first + at_once]])
        return results
    finally:
        for started in held.values():  # not run: the kernels' build failed, or an error
            started.drop()


def _package(check: Check, parts: list[Part]) -> build.Built:
    check.emit(parts[0].id, "graph", "phase.precompiling")
    with check.stage("graph/precompile"):
        return build.precompile(check.children, check.src)


def kernels_passed(check: Check, part: Part) -> bool:
    return all(d.status in PASSING or d.status in (Status.SKIPPED, Status.NOT_RUN)
               for d in check.kernels[part.id].values())


def _kernels_first(devices) -> dict[str, DeviceResult]:
    """The devices' graphs, not run: the part's kernels did not pass."""
    return {d: judge.device_result(d, Status.NOT_RUN, "reason.kernels_first") for d in devices}


@dataclass
class Started:
    """One part's graph workers for each device (with the case indices each holds), and
    the devices answered without a run (no GPU, the budget spent)."""

    chosen: list[int]
    answered: dict[str, DeviceResult] = field(default_factory=dict)
    workers: dict[str, list[tuple[GraphWorker, list[int]]]] = field(default_factory=dict)

    def _every(self) -> list[GraphWorker]:
        return [worker for shards in self.workers.values() for worker, _ in shards]

    def release(self) -> None:
        for worker in self._every():
            worker.release()

    def drop(self) -> None:
        for worker in self._every():
            worker.drop()


def start(check: Check, part: Part, packaged: build.Built, hold: bool = False) -> Started:
    """Start the workers of a part's graphs on each device, each for its own shapes."""
    chosen = through_max(part, check.cases[part.id])
    started = Started(chosen)
    devices = [d for d in part.devices if check.wanted(d)]
    if check.spent("MAX graph"):
        started.answered = {d: judge.device_result(d, Status.NOT_RUN, "reason.budget_spent") for d in devices}
        return started
    graph_dir = build.python_files(check.puzzle, check.options.solutions, check.given)
    cases = [check.cases[part.id][n] for n in chosen]
    for device in devices:
        if device == "gpu" and not check.gpu_runs():
            started.answered[device] = check.gated() or judge.device_result(device, Status.NOT_RUN,
                                                                            "reason.no_gpu_graph")
            continue
        repeats = check.puzzle.repeats if device == "gpu" else 1
        shards = shard(cases, settings.graph_shards())
        started.workers[device] = [
            (GraphWorker(check.children, check.puzzle, part, device, graph_dir, check.src.mojoc,
                         [cases[i] for i in indices], repeats, left=check.left, hold=hold), indices)
            for indices in shards]
    return started


def run(check: Check, part: Part, packaged: build.Built | None, started: Started | None = None
        ) -> dict[str, DeviceResult]:
    """The op through a MAX graph on each device of the part (once its kernels passed);
    `started`: its workers, already building (held until now)."""
    devices = [d for d in part.devices if check.wanted(d)]
    if not kernels_passed(check, part) or packaged is None:
        if started is not None:
            started.drop()
        return _kernels_first(devices)
    if not packaged.ok:
        with check.lock:
            if not check.result.diagnostics:
                check.result.diagnostics += packaged.diagnostics
            check.result.compiler_output = check.result.compiler_output or packaged.output
            check.result.problem = check.result.problem or packaged.problem
        return {d: judge.device_result(d, Status.COMPILE_ERROR, "reason.precompile") for d in devices}
    if started is None:
        started = start(check, part, packaged)
    started.release()
    results = dict(started.answered)

    def one(device: str) -> None:
        workers = started.workers[device]
        with check.stage(f"graph/{device}"):
            tick = check.ticker(part.id, f"graph-{device}")
            raw = merge([w.collect(tick if n == 0 else None) for n, (w, _) in enumerate(workers)],
                        [indices for _, indices in workers])
            if raw.status == "timeout":
                check.spent(f"MAX graph ({device})", timed_out=True)
        results[device] = _judge_graph(check, device, part, raw, workers[0][0].repeats, started.chosen)
        check.emit(part.id, f"graph-{device}", "phase.verdict", results[device].status)

    check.parallel([lambda d=d: one(d) for d in started.workers])
    check.children.check()
    return {d: results[d] for d in devices}


def shard(cases: list[dict], most: int) -> list[list[int]]:
    """The cases' indices in at most `most` groups, the cases of one shape always together
    (MAX compiles one graph per shape: a shape split across workers is compiled twice),
    the biggest shapes spread first."""
    shapes: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        shapes.setdefault(json.dumps(case["params"], sort_keys=True), []).append(index)
    groups: list[list[int]] = [[] for _ in range(max(1, min(most, len(shapes))))]
    for indices in sorted(shapes.values(), key=len, reverse=True):
        min(groups, key=len).extend(indices)
    return [sorted(g) for g in groups if g]


def through_max(part: Part, cases: list[dict]) -> list[int]:
    """The indices of the cases the graph stage runs: the part's `graph_cases` (by name, a
    seed's suffix aside), or every case. A name that matches no case is the author's slip,
    caught by `author verify`; here it only falls back to every case."""
    if not part.graph_cases:
        return list(range(len(cases)))
    chosen = [n for n, c in enumerate(cases) if c["name"].split(" · seed ")[0] in part.graph_cases]
    return chosen or list(range(len(cases)))


WORST = ("cancelled", "compile_error", "crash", "timeout", "error")


def merge(runs: list[GraphRun], shards: list[list[int]]) -> GraphRun:
    """One run from the shards' runs: the outputs under the cases' own indices, every graph
    the shards built, the worst status (a crash in one shard is the part's crash)."""
    if len(runs) == 1:
        return runs[0]
    bad = sorted((r for r in runs if r.status != "ok"), key=lambda r: WORST.index(r.status) if r.status in WORST
                 else len(WORST))
    merged = GraphRun(bad[0].status if bad else "ok", bad[0].message if bad else None,
                      bad[0].output if bad else "", seconds=max(r.seconds for r in runs),
                      device_name=next((r.device_name for r in runs if r.device_name), ""))
    for run, indices in zip(runs, shards):
        merged.graphs += run.graphs
        merged.outputs.update({indices[local]: out for local, out in run.outputs.items()})
    return merged


def _judge_graph(check: Check, device: str, part: Part, raw, repeats: int, chosen: list[int]) -> DeviceResult:
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
    indices = check.indices(part)
    fake = kernelrun.KernelRun("ok", outputs={indices[n]: raw.outputs[k] for k, n in enumerate(chosen)
                                               if k in raw.outputs}, seconds=raw.seconds)
    dev = judge.judge(check, device, part, fake, orders=False, only=chosen)
    dev.repeats = repeats
    dev.device_name = name
    if len(chosen) < len(indices):
        dev.tools = msg("graph.some_cases", n=len(chosen), total=len(indices))
    return dev
