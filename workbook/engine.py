"""One puzzle, end to end: manifest → build → run per device → compare → result.

Nothing here prints: the result is plain data for report.py to render.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import build, compare, runner, sanitizer, skeleton, toolchain
from .catalog import Part, Puzzle, root
from .results import DeviceResult, PartResult, PuzzleResult, Status, worst


@dataclass
class Options:
    solutions: bool = False  # use the reference solutions instead of the learner's files
    part: str | None = None  # run only this part
    seed: int | None = None  # input cases are fresh each run unless a seed is given
    force: bool = False  # run an untouched skeleton anyway (tests and authors)
    # compute-sanitizer on GPU parts: "all" runs memcheck, racecheck and initcheck;
    # "auto" runs racecheck (a missing barrier rarely shows in plain runs) once per
    # content, where a GPU and the tool are here; "off" runs none.
    sanitize: str = "auto"


def sanitize_mode(flag: bool | None) -> str:
    """The CLI's --sanitize (all tools), --no-sanitize (off) or neither (auto)."""
    return {True: "all", False: "off", None: "auto"}[flag]


def is_untouched(puzzle: Puzzle) -> bool:
    """True when every learner file is still exactly the skeleton."""
    try:
        return all(skeleton.is_skeleton(learner, skeleton.skeleton_of(solution))
                   for learner, solution in zip(puzzle.learner_files(), puzzle.solution_files()))
    except (OSError, skeleton.MarkerError):
        return False


def load_reference(puzzle: Puzzle):
    path = puzzle.dir / puzzle.reference
    spec = importlib.util.spec_from_file_location(f"workbook_reference_{puzzle.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu_gate(puzzle: Puzzle, gpu: toolchain.Gpu | None) -> str:
    """Why this GPU can't run the puzzle, or "" when it can (or there is no GPU)."""
    if gpu is None:
        return ""
    needs = puzzle.gpu
    if needs.vendor and gpu.vendor not in ("unknown", needs.vendor):
        return f"needs a {needs.vendor} GPU; this one is {gpu.vendor}"
    cc = gpu.compute_capability
    if needs.min_compute_capability and cc is not None and cc < needs.min_compute_capability:
        return f"needs compute capability {needs.min_compute_capability} or newer; {gpu.name} has {cc}"
    return ""


def check_puzzle(puzzle: Puzzle, options: Options) -> PuzzleResult:
    start = time.perf_counter()
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.PASS, seed=seed, solutions=options.solutions)
    parts = [puzzle.part(options.part)] if options.part else list(puzzle.parts)

    if not options.solutions and not options.force and is_untouched(puzzle):
        result.status = Status.NOT_STARTED
        for part in parts:
            devices = {d: _explained(DeviceResult(d, Status.NOT_RUN), "reason.untouched") for d in part.devices}
            result.parts.append(PartResult(part.id, Status.NOT_STARTED, devices, part.atol, part.rtol))
        return result

    ws = build.prepare(puzzle, options.solutions)
    compiled = build.precompile(ws)
    if not compiled.ok:
        return _compile_failed(result, compiled, parts, start)

    gpu = toolchain.gpu()
    gate = gpu_gate(puzzle, gpu)
    reference = load_reference(puzzle)
    rng = np.random.default_rng(seed)
    need_probe = any("gpu" in p.devices for p in parts) and (gpu is None or gate)

    # Every child process starts now, so the CPU and GPU builds (and racecheck)
    # overlap; the GPU probe compiles meanwhile where no GPU will run the kernels.
    with ThreadPoolExecutor(max_workers=1) as pool:
        probe_future = pool.submit(build.probe, ws) if need_probe else None
        planned = [_start(ws, part, reference.cases(rng, part.id), puzzle.repeats, options, gpu, gate)
                   for part in parts]
        probe = probe_future.result() if probe_future else None
    if probe is not None and not probe.ok:
        for plan in planned:
            plan.cancel()
        return _compile_failed(result, probe, parts, start)
    for plan in planned:
        devices = {d: _device_result(d, run, plan.part, plan.cases, reference, gpu, gate)
                   for d, run in plan.runs.items()}
        if "gpu" in devices:
            plan.sanitizer.collect(devices["gpu"])
        result.parts.append(PartResult(plan.part.id, _part_status(devices), devices, plan.part.atol, plan.part.rtol))

    result.status = _puzzle_status([p.status for p in result.parts])
    result.seconds = time.perf_counter() - start
    return result


@dataclass
class _Started:
    """One part's child processes, started and not yet collected."""

    part: Part
    cases: list[dict]
    runs: dict[str, runner.DeviceRun | None]  # None: this device can't run it here
    sanitizer: SanitizerRuns

    def cancel(self) -> None:
        self.sanitizer.cancel()
        for run in self.runs.values():
            if run:
                run.cancel()


def _start(ws: build.Workspace, part: Part, cases: list[dict], repeats: int, options: Options,
           gpu: toolchain.Gpu | None, gate: str) -> _Started:
    runs: dict[str, runner.DeviceRun | None] = {}
    for device in part.devices:
        runnable = device == "cpu" or (gpu is not None and not gate)
        runs[device] = runner.DeviceRun(ws, part, device, cases, repeats if device == "gpu" else 1) \
            if runnable else None
    return _Started(part, cases, runs, SanitizerRuns(ws, part, cases, options.sanitize, runs.get("gpu") is not None))


def _compile_failed(result: PuzzleResult, compiled: build.CompileResult, parts: list[Part],
                    start: float) -> PuzzleResult:
    result.status = Status.COMPILE_ERROR
    result.diagnostics = compiled.diagnostics
    result.compiler_output = "" if compiled.diagnostics else compiled.output
    for part in parts:
        devices = {d: _explained(DeviceResult(d, Status.NOT_RUN), "reason.compile_error") for d in part.devices}
        result.parts.append(PartResult(part.id, Status.COMPILE_ERROR, devices, part.atol, part.rtol))
    result.seconds = time.perf_counter() - start
    return result


def _device_result(device: str, run: runner.DeviceRun | None, part: Part, cases: list[dict],
                   reference, gpu: toolchain.Gpu | None, gate: str) -> DeviceResult:
    if run is None:
        if gate:
            return _explained(DeviceResult(device, Status.SKIPPED, device_name=gpu.name if gpu else ""),
                              "reason.gate", why=gate)
        return _explained(DeviceResult(device, Status.COMPILED), "reason.no_gpu", target=toolchain.gpu_target())
    raw = run.collect()
    name = (gpu.name if gpu else "GPU") if device == "gpu" else "CPU"
    if raw.status != "ok":
        status = {"compile_error": Status.COMPILE_ERROR, "timeout": Status.TIMEOUT}.get(raw.status, Status.CRASH)
        return DeviceResult(device, status, raw.message, seconds=raw.seconds, device_name=name)
    invariants = getattr(reference, "invariants", None)
    checked = []
    for index, case in enumerate(cases):
        expected = reference.expected(case, part.id)
        inv = (lambda c, outs, p=part.id: invariants(c, outs, p)) if invariants else None
        checked.append(compare.check_case(case, part, raw.outputs[index], expected, inv))
    errors = [o for c in checked for o in c.outputs]
    abs_errs = [o.max_abs_error for o in errors if o.max_abs_error is not None]
    rel_errs = [o.max_rel_error for o in errors if o.max_rel_error is not None]
    racy = any(c.nondeterministic for c in checked)
    passed = all(c.passed for c in checked)
    result = DeviceResult(
        device, Status.PASS if passed else Status.FAIL, "",
        max(abs_errs) if abs_errs else None, max(rel_errs) if rel_errs else None,
        checked, run.repeats, raw.seconds, name,
    )
    if racy:
        result.explain("reason.race")
    elif any(o.nan_count or o.inf_count for o in errors):
        result.explain("reason.nan")
    return result


def _explained(result: DeviceResult, key: str, **values) -> DeviceResult:
    result.explain(key, **values)
    return result


class SanitizerRuns:
    """The part's first case, run once under each chosen compute-sanitizer tool,
    started beside the plain runs; findings fail the GPU device."""

    def __init__(self, ws: build.Workspace, part: Part, cases: list[dict], mode: str, gpu_runs: bool):
        self.ws, self.part, self.runs, self.note = ws, part, [], ""
        self.marker = ws.dir / f".racecheck-clean-{part.id}"
        binary = sanitizer.locate()
        if mode == "off" or "gpu" not in part.devices:
            return
        if not gpu_runs:
            self.note = "the sanitizer needs a GPU to run the kernels: not run" if mode == "all" else ""
            return
        if binary is None:
            self.note = ("compute-sanitizer was not found: it comes with NVIDIA's CUDA toolkit "
                         "(put its bin/ folder on PATH, or set CUDA_HOME)")
            return
        tools = sanitizer.TOOLS if mode == "all" else () if self.marker.exists() else ("racecheck",)
        if mode == "auto" and not tools:
            self.note = "racecheck: clean for this code (checked before)"
        self.logs = Path(tempfile.mkdtemp(prefix="workbook-sanitizer-"))
        for tool in tools:
            log = self.logs / f"{tool}.log"
            run = runner.DeviceRun(ws, part, "gpu", cases[:1], 1, prefix=sanitizer.wrapper(tool, log),
                                   env=sanitizer.environment(tool))
            self.runs.append((tool, log, run))

    def cancel(self) -> None:
        for _, _, run in self.runs:
            run.cancel()

    def collect(self, gpu: DeviceResult) -> None:
        gpu.sanitizer_note = self.note
        if not self.runs:
            return
        learner = {name: str(path.relative_to(root())) if path.is_relative_to(root()) else str(path)
                   for name, path in self.ws.sources.items() if name in self.ws.puzzle.edit}
        findings, problems = [], []
        for tool, log, run in self.runs:
            raw = run.collect()
            text = log.read_text(errors="replace") if log.exists() else ""
            found = sanitizer.parse(tool, text, learner)
            findings += found
            if raw.status != "ok" and not found:
                problems.append(f"{tool} could not run: {raw.status} {raw.message[:200]}")
        self._keep_logs()
        gpu.sanitizer = findings
        ran = ", ".join(tool for tool, _, _ in self.runs)
        gpu.sanitizer_note = "; ".join(problems) or f"ran {ran}"
        if findings:
            gpu.status = Status.FAIL
            gpu.explain("reason.sanitizer", n=len(findings))
        elif not problems and any(tool == "racecheck" for tool, _, _ in self.runs):
            self.marker.write_text("")

    def _keep_logs(self) -> None:
        keep = os.environ.get("WORKBOOK_KEEP_SANITIZER_LOGS")  # for recording the tool's output in tests
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            for tool, log, _ in self.runs:
                if log.exists():
                    shutil.copy(log, Path(keep) / f"{self.ws.puzzle.id}-{self.part.id}-{tool}.log")
        shutil.rmtree(self.logs, ignore_errors=True)


def _part_status(devices: dict[str, DeviceResult]) -> Status:
    return _puzzle_status([d.status for d in devices.values()])


def _puzzle_status(statuses: list[Status]) -> Status:  # noqa: D401
    """Passes when every device that ran passed and every GPU kernel compiled;
    `compiled` when nothing here could run it but it all compiled."""
    ran = [s for s in statuses if s not in (Status.COMPILED, Status.SKIPPED, Status.NOT_RUN)]
    if not ran:
        return Status.COMPILED if statuses else Status.NOT_RUN
    return worst(ran)

