"""One puzzle, end to end: manifest → build → run per device → compare → result.

Two stages:
1. kernels: the learner's kernels, launched directly by a generated launcher
   (workbook/launcher.py) on every device here: the GPU, the simulator where
   no GPU can run them, and the CPU for an op puzzle's CPU kernel. A verdict
   seconds after an edit.
2. graph (op puzzles only, and only once the kernels pass): the op called
   through a MAX graph on the CPU and the GPU. MAX compiles the graph, so this
   stage is slow when cold; `quick` stops before it.
Nothing here prints: the result is plain data for report.py, and progress goes
to an `events` callback while the learner waits.
"""

from __future__ import annotations

import hashlib
import importlib.util
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import (
    build,
    compare,
    gating,
    kernelrun,
    launcher,
    protocol,
    sanitizer,
    settings,
    simfindings,
    skeleton,
    symbols,
    timing,
    toolchain,
)
from .catalog import Part, Puzzle
from .graphrun import GraphWorker
from .i18n import Msg, msg
from .processes import Cancelled, Children
from .results import (
    NOT_RAN,
    PASSING,
    CaseResult,
    DeviceResult,
    Finding,
    LaunchAccess,
    PartResult,
    Picture,
    PuzzleResult,
    Status,
    verdict,
)

DEVICE_CHOICES = ("cpu", "gpu", "sim")


@dataclass
class Options:
    solutions: bool = False  # use the reference solutions instead of the learner's files
    part: str | None = None  # run only this part
    seed: int | None = None  # the cases' seed; None: one drawn from the learner's files (seed_of)
    seeds: tuple[int, ...] = ()  # several seeds in one run (author verify): every seed's cases, one build
    force: bool = False  # run an untouched skeleton anyway (tests and authors)
    # compute-sanitizer on GPU parts: "all", "auto" (racecheck once per content), "off"
    sanitize: str = "auto"
    quick: bool = False  # stop after the first stage (the kernels)
    devices: tuple[str, ...] = ()  # only these devices (cpu, gpu, sim); () means every one that fits
    run_timeout: float | None = None  # seconds for running the kernels; None: the settings' limit

    @property
    def records_progress(self) -> bool:
        """A full check of the learner's own files on every device: only its verdict is
        progress (`run` and `watch` remember it; --quick, --part, --device don't count)."""
        return not (self.solutions or self.part or self.quick or self.devices)


def sanitize_mode(flag: bool | None) -> str:
    """The CLI's --sanitize (all tools), --no-sanitize (off) or neither (auto)."""
    return {True: "all", False: "off", None: "auto"}[flag]


@dataclass
class Event:
    """Progress while the learner waits: what one device (or the build) is doing now."""

    part: str
    device: str  # cpu, gpu, sim, graph-cpu, graph-gpu; "stage" when the kernels' verdicts are all in
    phase: Msg
    status: Status | None = None  # set when this device's verdict is in
    result: PuzzleResult | None = None  # with device "stage": the first stage's result, before the graph


Events = Callable[[Event], None]


def seed_of(puzzle: Puzzle, solutions: bool = False) -> int:
    """The cases' seed when none is given: drawn from the files being checked, so that
    every version of the learner's code meets its own values and seeded sizes, while a
    run of the same code again meets the same cases (and its cached build)."""
    h = hashlib.sha256(puzzle.id.encode())
    for path in (puzzle.solution_files() if solutions else puzzle.learner_files()):
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<missing>")
    return int.from_bytes(h.digest()[:4], "little") % 2**31


def _seeded(case: dict, seed: int) -> dict:
    """A case of one of several seeds run together: its name says which seed."""
    label = case.get("label", {})
    return {**case, "name": f"{case['name']} · seed {seed}",
            "label": {lang: f"{text} · seed {seed}" for lang, text in label.items()}}


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


def _clean_marker(binary: Path, tool: str) -> Path:
    """Beside a GPU launcher: this code was clean under `tool` (not run again)."""
    return binary.with_name(f"{binary.name}.{tool}-clean")


def check_puzzle(puzzle: Puzzle, options: Options | None = None, events: Events | None = None,
                 children: Children | None = None) -> PuzzleResult:
    """Check one puzzle. `children` lets a caller cancel the run from another thread."""
    owned = Children() if children is None else children
    try:
        return _Check(puzzle, options or Options(), events, owned).run()
    finally:
        if children is None:
            owned.kill_all()


class _Check:
    """One check of one puzzle: the state the stages share."""

    def __init__(self, puzzle: Puzzle, options: Options, events: Events | None, children: Children):
        self.puzzle, self.options, self.children = puzzle, options, children
        self._events = events
        self.started = time.perf_counter()
        self.lock = threading.Lock()
        self.seed = options.seed if options.seed is not None else seed_of(puzzle, options.solutions)
        self.result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.PASS, puzzle.kind, seed=self.seed,
                                   solutions=options.solutions, quick=options.quick)
        self.parts = [puzzle.part(options.part)] if options.part else list(puzzle.parts)
        self.kernels: dict[str, dict[str, DeviceResult]] = {p.id: {} for p in self.parts}
        self.failed_build: build.Built | None = None
        self.gpu = toolchain.gpu()
        self.gate = gating.gate(puzzle, self.gpu)

    # --- events ----------------------------------------------------------------

    def emit(self, part: str, device: str, key: str, status: Status | None = None, **values) -> None:
        if status is not None and status not in NOT_RAN and device in DEVICE_CHOICES \
                and self.result.first_verdict is None:
            self.result.first_verdict = time.perf_counter() - self.started
        if self._events:
            self._events(Event(part, device, Msg(key, values), status))

    def ticker(self, part: str, device: str) -> Callable[[Path], None]:
        """A callback for a run's wait loop: report its phase when it changes."""
        last: list = [None]

        def tick(folder: Path) -> None:
            phase, numbers, _ = protocol.read_phase(folder)
            if (phase, numbers) != last[0]:
                last[0] = (phase, numbers)
                if phase == "running" and len(numbers) == 2:
                    self.emit(part, device, "phase.case", k=numbers[0], n=numbers[1])
                elif phase == "loading":
                    self.emit(part, device, "phase.graph_build")
        return tick

    # --- the whole check --------------------------------------------------------

    def run(self) -> PuzzleResult:
        result = self.result
        if not (self.options.solutions or self.options.force or self.puzzle.skeleton_runs) \
                and is_untouched(self.puzzle):
            return self._not_started()
        try:
            self.src = build.sources(self.puzzle, self.options.solutions)
            reference = load_reference(self.puzzle)
            self.cases = {p.id: [] for p in self.parts}
            for seed in self.options.seeds or (self.seed,):
                rng = np.random.default_rng(seed)
                for p in self.parts:
                    self.cases[p.id] += [_seeded(c, seed) if self.options.seeds else c
                                         for c in reference.cases(rng, p.id)]
            self.expected = {p.id: [reference.expected(c, p.id) for c in self.cases[p.id]] for p in self.parts}
            self.invariants = getattr(reference, "invariants", None)
            self.plan = launcher.make_plan(self.puzzle, [(p, self.cases[p.id], self.expected[p.id])
                                                         for p in self.parts])
            self._kernel_stage()
            if self.failed_build is not None:
                return self._compile_failed(self.failed_build)
            if self.puzzle.kind == "op" and not self.options.quick and self._events:
                self._events(Event("", "stage", msg("phase.kernels_done"), result=self._first_stage()))
            for part in self.parts:
                graph = self._graph_stage(part) if self._graph_wanted(part) else {}
                devices = self.kernels[part.id]
                result.parts.append(PartResult(part.id, verdict([d.status for d in [*devices.values(),
                                                                                      *graph.values()]]),
                                               devices, part.atol, part.rtol, graph))
        except Cancelled:
            raise
        except launcher.PlanError as exc:  # the manifest and the reference disagree: the author's bug
            result.problem = msg("engine.plan_error", detail=str(exc))
            result.status = Status.CRASH
            result.seconds = time.perf_counter() - self.started
            return result
        result.status = verdict([p.status for p in result.parts])
        result.seconds = time.perf_counter() - self.started
        return result

    def _first_stage(self) -> PuzzleResult:
        """The result as the kernels left it: what watch shows while the graph builds."""
        first = PuzzleResult(self.puzzle.id, self.result.title, Status.PASS, self.puzzle.kind, seed=self.seed,
                             solutions=self.options.solutions, quick=True)
        for part in self.parts:
            devices = self.kernels[part.id]
            first.parts.append(PartResult(part.id, verdict([d.status for d in devices.values()]), devices,
                                          part.atol, part.rtol))
        first.status = verdict([p.status for p in first.parts])
        first.seconds = time.perf_counter() - self.started
        first.first_verdict = self.result.first_verdict
        return first

    def _not_started(self) -> PuzzleResult:
        self.result.status = Status.NOT_STARTED
        for part in self.parts:
            devices = {d: _device(d, Status.NOT_RUN, "reason.untouched") for d in self._devices_of(part)}
            self.result.parts.append(PartResult(part.id, Status.NOT_STARTED, devices, part.atol, part.rtol))
        return self.result

    def _compile_failed(self, built: build.Built) -> PuzzleResult:
        result = self.result
        result.status = Status.COMPILE_ERROR
        result.diagnostics = built.diagnostics
        result.compiler_output = "" if built.diagnostics else built.output
        result.problem = built.problem
        for part in self.parts:
            devices = {d: _device(d, Status.NOT_RUN, "reason.compile_error") for d in self._devices_of(part)}
            result.parts.append(PartResult(part.id, Status.COMPILE_ERROR, devices, part.atol, part.rtol))
        result.seconds = time.perf_counter() - self.started
        return result

    def _parallel(self, jobs: list[Callable[[], None]]) -> None:
        """Run jobs in threads, each starting and waiting for its own children. An
        interrupt or an error in any of them (or here) stops every child first, so
        the threads end at once instead of waiting out their time limits."""
        if not jobs:
            return
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            futures = [pool.submit(job) for job in jobs]
            try:
                for future in futures:
                    future.result()
            except BaseException:
                self.children.cancel()
                raise

    # --- which devices -----------------------------------------------------------

    def _wanted(self, device: str) -> bool:
        return not self.options.devices or device in self.options.devices

    def _gpu_runs(self) -> bool:
        return self.gpu is not None and self.gate is None

    def _sim_wanted(self, part: Part) -> bool:
        """The simulator runs a part's GPU kernels everywhere it can, a GPU or not: it
        sees what a plain GPU run can't (a write past the end, a race that happened
        to go right), and it stands in for the GPU where there is none."""
        if "gpu" not in part.devices:
            return False
        if self.options.devices:
            return "sim" in self.options.devices
        return part.sim or not self._gpu_runs()

    def _devices_of(self, part: Part) -> list[str]:
        names = [d for d in part.devices if self._wanted(d)]
        if self._sim_wanted(part):
            names.append("sim")
        return names or list(part.devices)

    def _indices(self, part: Part) -> list[int]:
        return [spec.index for spec in self.plan.cases if spec.part.id == part.id]

    # --- stage 1: the kernels ------------------------------------------------------

    def _kernel_stage(self) -> None:
        self.inputs = Path(tempfile.mkdtemp(prefix="workbook-inputs-")) / protocol.INPUTS_BIN
        flat_cases = [c for p in self.parts for c in self.cases[p.id]]
        launcher.write_inputs(self.plan, flat_cases, self.inputs)
        host_parts = [p for p in self.parts if ("cpu" in p.devices and self._wanted("cpu")) or self._sim_wanted(p)]
        gpu_parts = [p for p in self.parts if "gpu" in p.devices and self._wanted("gpu")]
        build_gpu = bool(gpu_parts) and (self._gpu_runs() or not self.options.quick)
        try:
            jobs = []
            if host_parts:
                jobs.append(lambda: self._host_pipeline(host_parts))
            if build_gpu:
                jobs.append(lambda: self._gpu_pipeline(gpu_parts))
            self._parallel(jobs)
        finally:
            self.inputs.unlink(missing_ok=True)
            self.inputs.parent.rmdir()
        for part in gpu_parts:
            if "gpu" not in self.kernels[part.id]:
                self.kernels[part.id]["gpu"] = self._gated() or _device("gpu", Status.NOT_RUN, "reason.quick_no_gpu")

    def _gated(self) -> DeviceResult | None:
        if self.gate is None:
            return None
        return _device("gpu", Status.SKIPPED, "reason.gate", why=self.gate, name=self.gpu.name if self.gpu else "")

    def _target(self, which: str) -> str | None:
        if which != "gpu":
            return None
        return self.gpu.target if self.gpu and not settings.gpu_target() else toolchain.gpu_target()

    def _build(self, which: str, device: str) -> build.Built | None:
        """Build a launcher; on a compile error remember it (and return None)."""
        self.emit("", device, "phase.compiling")
        built = build.launcher(self.children, self.src, self.plan, which, self._target(which))
        if built.ok:
            return built
        with self.lock:
            if self.failed_build is None or (not self.failed_build.diagnostics and built.diagnostics):
                self.failed_build = built
        return None

    def _host_pipeline(self, parts: list[Part]) -> None:
        cpu_parts = [p for p in parts if "cpu" in p.devices and self._wanted("cpu")]
        sim_parts = [p for p in parts if self._sim_wanted(p)]
        runnable = [p for p in sim_parts if p.sim and self.src.sim_problem is None]
        for part in sim_parts:
            if part not in runnable:
                self.kernels[part.id]["sim"] = self._sim_refused(part)
        if not cpu_parts and not runnable:
            return  # nothing to build: a host build of code the simulator can't run would not even compile
        built = self._build("host", "sim" if runnable else "cpu")
        if built is None:
            return
        for mode, mode_parts, repeats in (("cpu", cpu_parts, 1), ("sim", runnable, launcher.SIM_ORDERS)):
            if not mode_parts:
                continue
            indices = [i for p in mode_parts for i in self._indices(p)]
            raw = kernelrun.run(self.children, built.binary, self.plan, self.inputs, mode, repeats, indices,
                                limit=self.options.run_timeout or self._limit(mode), tick=self.ticker("", mode),
                                symbolize=self.symbolize)
            self.children.check()
            for part in mode_parts:
                dev = self._judge(mode, part, raw, orders=mode == "sim")
                self.kernels[part.id][mode] = dev
                self.emit(part.id, mode, "phase.verdict", dev.status)
            whole = not self.options.part and len(mode_parts) == len([p for p in self.puzzle.parts
                                                                      if mode in p.devices or mode == "sim"])
            if whole and all(self.kernels[p.id][mode].status == Status.PASS for p in mode_parts):
                timing.record(self.puzzle, mode, raw.seconds)

    def _limit(self, mode: str) -> Callable[[], float]:
        """How long the kernels may run on the simulator or the CPU (timing.py): a multiple
        of the solution's own time. Unknown, it is measured only if a run is still going
        after timing.FLOOR seconds, beside that run."""
        default = settings.run_timeout()
        known = timing.recorded(self.puzzle, mode)
        if known is not None or self.options.solutions:
            value = timing.limit_from(known, default)
            return lambda: value
        measured: dict[str, float | None] = {}
        started = time.monotonic()

        def limit() -> float:
            if "started" not in measured and time.monotonic() - started > timing.FLOOR:
                measured["started"] = time.monotonic()
                threading.Thread(target=self._measure_solution, args=(mode, measured), daemon=True).start()
            return timing.limit_from(measured.get("seconds"), default)
        return limit

    def _measure_solution(self, mode: str, into: dict) -> None:
        """Run the reference solution on the same cases, to learn how long a right kernel takes."""
        try:
            src = build.sources(self.puzzle, solutions=True)
            built = build.launcher(self.children, src, self.plan, "host")
            if not built.ok:
                return
            indices = [i for p in self.parts if (mode in p.devices or mode == "sim") for i in self._indices(p)]
            raw = kernelrun.run(self.children, built.binary, self.plan, self.inputs, mode,
                                launcher.SIM_ORDERS if mode == "sim" else 1, indices, limit=settings.run_timeout())
            if raw.status == "ok" and not raw.findings:
                into["seconds"] = raw.seconds
                if not self.options.part:
                    timing.record(self.puzzle, mode, raw.seconds)
        except Exception:  # noqa: BLE001 - a measure that fails leaves the default limit
            return

    def symbolize(self, binary: Path, sites: list, wanted: set[int], hints: dict[int, str]):
        """Places in the learner's files for the simulator's sites (symbols.Resolver)."""
        learner = {key: real for key, real in build.path_map(self.src).items() if key.startswith("/")}
        return symbols.Resolver(learner, _shown).resolve(binary, sites, wanted, hints)

    def _sim_refused(self, part: Part) -> DeviceResult:
        problem = self.src.sim_problem
        if problem is not None:
            return _device("sim", Status.NOT_RUN, "reason.sim_unsupported", what=problem.what)
        return _device("sim", Status.NOT_RUN, "reason.sim_not_for_part")

    def _gpu_pipeline(self, parts: list[Part]) -> None:
        """Build, run and judge on the GPU. Where compute-sanitizer will run, its own
        build (with line tables, so findings name the learner's line) compiles beside
        the plain one, which gives the verdict without waiting for it."""
        tools, note = self._sanitizer_tools(parts)
        pool = ThreadPoolExecutor(max_workers=1) if tools else None
        lined = pool.submit(build.launcher, self.children, self.src, self.plan, "gpu", self._target("gpu"),
                            lines=True) if pool else None
        try:
            built = self._build("gpu", "gpu")
            if built is None:
                return
            if not self._gpu_runs():
                for part in parts:
                    dev = self._gated() or _device("gpu", Status.COMPILED, "reason.no_gpu",
                                                   target=toolchain.gpu_target())
                    self.kernels[part.id]["gpu"] = dev
                    self.emit(part.id, "gpu", "phase.verdict", dev.status)
                return
            indices = [i for p in parts for i in self._indices(p)]
            known = timing.recorded(self.puzzle, "gpu")
            limit = self.options.run_timeout or timing.limit_from(known, settings.run_timeout())
            raw = kernelrun.run(self.children, built.binary, self.plan, self.inputs, "gpu", self.puzzle.repeats,
                                indices, limit=limit, tick=self.ticker("", "gpu"))
            self.children.check()
            for part in parts:
                dev = self._judge("gpu", part, raw, orders=False)
                dev.device_name = self.gpu.name
                self.kernels[part.id]["gpu"] = dev
                self.emit(part.id, "gpu", "phase.verdict", dev.status)
            if not self.options.part and all(self.kernels[p.id]["gpu"].status == Status.PASS for p in parts):
                timing.record(self.puzzle, "gpu", raw.seconds)
            self._needs_missing_sanitizer(parts)
            if raw.status == "timeout":
                # A kernel that never ends under a plain run never ends under a sanitizer
                # either: no tool runs, and the verdict is the timeout's (it hung a check
                # for 400 s when each tool got ten times the plain limit).
                for part in parts:
                    if self.kernels[part.id]["gpu"].status != Status.NOT_RUN:
                        self.kernels[part.id]["gpu"].tools = msg("sanitizer.not_after_timeout")
            elif lined is not None:
                with_lines = lined.result()
                self._sanitize(with_lines if with_lines.ok else built, parts, indices, tools,
                               sanitizer_limit(raw.seconds))
            elif note is not None:
                for part in parts:
                    if self.kernels[part.id]["gpu"].status != Status.NOT_RUN:
                        self.kernels[part.id]["gpu"].tools = note
        except BaseException:
            self.children.cancel()  # the sanitizer's build too, so that the pool ends at once
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=True)

    def _sanitizer_tools(self, parts: list[Part]) -> tuple[list[str], Msg | None]:
        """The compute-sanitizer tools this check runs (the policy's choice, and the ones
        a part always needs, --quick or not), and a note for the report when none runs."""
        if not self._gpu_runs():
            return [], None
        binary = build.launcher_binary(self.src, self.plan, "gpu", self._target("gpu"))
        clean = {tool for tool in sanitizer.TOOLS if _clean_marker(binary, tool).exists()}
        branches = any(sanitizer.barrier_in_branch(path.read_text(encoding="utf-8", errors="replace"))
                       for name, path in self.src.files.items() if name in self.puzzle.edit and name.endswith(".mojo"))
        chosen, note = sanitizer.choose(self.options.sanitize, True, clean, branches) if not self.options.quick \
            else ((), None)
        needed = [t for p in parts for t in p.sanitizers]
        if needed and sanitizer.locate() is None:
            return [], note
        return [t for t in sanitizer.TOOLS if t in chosen or t in needed], note

    def _needs_missing_sanitizer(self, parts: list[Part]) -> None:
        """A part that is only judged under compute-sanitizer (a debugging puzzle), where
        the tool is not here: not run, and the report says why."""
        if sanitizer.locate() is not None:
            return
        for part in parts:
            if part.sanitizers:
                self.kernels[part.id]["gpu"] = _device("gpu", Status.NOT_RUN, "reason.needs_sanitizer",
                                                       tools=", ".join(part.sanitizers))

    def _sanitize(self, built: build.Built, parts: list[Part], indices: list[int], tools: list[str],
                  limit: float) -> None:
        """compute-sanitizer over every case (so over the one with the most threads too)."""
        findings: list[Finding] = []
        problems: list[Msg] = []
        learner = {name: _shown(path) for name, path in self.src.files.items() if name in self.puzzle.edit}
        for tool in tools:
            self.emit("", "gpu", "phase.sanitizer", tool=tool)
            log = Path(tempfile.mkdtemp(prefix="workbook-sanitizer-")) / f"{tool}.log"
            raw = kernelrun.run(self.children, built.binary, self.plan, self.inputs, "gpu", 1, indices,
                                prefix=sanitizer.wrapper(tool, log), env=sanitizer.environment(tool), limit=limit)
            self.children.check()
            text = log.read_text(errors="replace") if log.exists() else ""
            found = sanitizer.parse(tool, text, learner)
            findings += found
            if raw.status != "ok" and not found:
                problems.append(msg("sanitizer.could_not_run", tool=tool, why=raw.message or msg("run.died_code",
                                                                                                  code="?")))
            keep = settings.keep_sanitizer_logs()
            if keep and log.exists():
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{self.puzzle.id}-{tool}.log").write_text(text)
            log.unlink(missing_ok=True)
            log.parent.rmdir()
        for part in parts:
            dev = self.kernels[part.id]["gpu"]
            if dev.status == Status.NOT_RUN:
                continue
            dev.tools = problems[0] if problems else msg("sanitizer.ran", tools=", ".join(tools))
            dev.findings = (dev.findings or []) + findings
            if findings:
                dev.status = Status.FAIL
                dev.explain("reason.sanitizer", n=len(findings))
        if not findings and not problems:  # this code is clean under these tools: not again
            binary = build.launcher_binary(self.src, self.plan, "gpu", self._target("gpu"))
            for tool in tools:
                _clean_marker(binary, tool).write_text("")

    # --- judging one device's outputs ------------------------------------------------

    def _judge(self, device: str, part: Part, raw: kernelrun.KernelRun, orders: bool) -> DeviceResult:
        name = {"cpu": "CPU", "sim": "simulator"}.get(device, "GPU")
        if raw.status in ("crash", "timeout"):
            status = Status.TIMEOUT if raw.status == "timeout" else Status.CRASH
            dev = DeviceResult(device, status, [raw.message] if raw.message else [], seconds=raw.seconds,
                               device_name=name, output=raw.output)
            if raw.timeout is not None and device in ("sim", "cpu"):
                index = raw.timeout.get("case", -1)
                limit = raw.limit or self.options.run_timeout or settings.run_timeout()
                dev.findings = [simfindings.timeout(raw.timeout, self.plan, self._case_name(index), limit)]
            return dev
        repeats = launcher.SIM_ORDERS if orders else (self.puzzle.repeats if device == "gpu" else 1)
        dev = DeviceResult(device, Status.PASS, repeats=repeats, seconds=raw.seconds, device_name=name)
        indices = self._indices(part)
        for n, index in enumerate(indices):
            case = self.cases[part.id][n]
            got = raw.outputs.get(index)
            if got is None or len(got) < repeats:
                dev.cases.append(CaseResult(case["name"], case["params"], [], [], passed=False,
                                            label=case.get("label", {}), ran=False))
                continue
            inv = (lambda c, outs, p=part.id: self.invariants(c, outs, p)) if self.invariants else None
            dev.cases.append(compare.check_case(case, part, got, self.expected[part.id][n], inv, orders))
        errors = [o for c in dev.cases for o in c.outputs]
        abs_errs = [o.max_abs_error for o in errors if o.max_abs_error is not None]
        rel_errs = [o.max_rel_error for o in errors if o.max_rel_error is not None]
        dev.max_abs_error = max(abs_errs) if abs_errs else None
        dev.max_rel_error = max(rel_errs) if rel_errs else None
        if device in ("sim", "cpu") or raw.findings:
            dev.findings = simfindings.merge([
                simfindings.describe(f, self.plan, self._case_name(f.get("case", -1))) for f in raw.findings
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
        if raw.status == "fatal" and not dev.findings:
            dev.explain("reason.sim_stopped")
        if device == "sim":
            self._picture(dev, raw, indices)
            dev.access = self._access(raw, indices)
            broken = self._budgets(part, dev, raw)
            if broken:
                dev.findings = (dev.findings or []) + broken
                dev.status = Status.FAIL
                dev.explain("reason.budget", n=len(broken))
        return dev

    def _budgets(self, part: Part, dev: DeviceResult, raw: kernelrun.KernelRun) -> list[Finding]:
        """What the part's text asks of memory traffic (its manifest's budgets), checked on
        the simulator's counts: one finding per broken limit, at the first case that broke
        it, naming the thread, its count and the lines that made the accesses."""
        found: list[Finding] = []
        for budget in part.budgets:
            for name, limit in budget.limits:
                for access in dev.access:
                    if budget.kernel and access.kernel != budget.kernel:
                        continue
                    broken = budget_check(name, limit, access, self._launch_spec(access))
                    if broken is None:
                        continue
                    who, count = broken
                    lines = self._budget_lines(raw, access.kernel, name)
                    message = msg("finding.budget_" + ("min" if name.startswith("min_") else "max"),
                                  kernel=access.kernel, who=who, count=count, limit=limit,
                                  what=msg("budget." + name), lines=lines or "?", why=budget.why)
                    found.append(Finding("sim", "budget", message, kernel=access.kernel, case=access.case))
                    break
        return found

    def _launch_spec(self, access: LaunchAccess) -> launcher.LaunchSpec | None:
        spec = self.plan.cases[access.index] if 0 <= access.index < len(self.plan.cases) else None
        return next((lau for lau in spec.launches if lau.name == access.kernel), None) if spec else None

    def _budget_lines(self, raw: kernelrun.KernelRun, kernel: str, name: str) -> str:
        """The learner's lines that made the kind of access a budget limits."""
        column = {"max_global_reads": 3, "max_global_writes": 4, "max_shared_reads": 5, "max_shared_writes": 6,
                  "min_shared_writes": 6, "max_writes_per_element": 4}[name]
        ids = {n for n, site in enumerate(raw.sites, 1) if len(site) == 7 and site[2] == kernel and site[column]}
        if not ids or raw.binary is None:
            return ""
        places = self.symbolize(raw.binary, raw.sites, ids, {})
        return ", ".join(str(n) for n in sorted({p.line for p in places.values()}))

    def _access(self, raw: kernelrun.KernelRun, indices: list[int]) -> list[LaunchAccess]:
        """Per launch of this part's cases: what its threads read and wrote."""
        found = []
        for counts in raw.counts:
            if counts.case not in indices:
                continue
            table = counts.per_thread
            names = kernelrun.COUNTERS
            spec = self.plan.cases[counts.case]
            found.append(LaunchAccess(
                self._case_name(counts.case), counts.label, int(table.shape[0]),
                {n: int(table[:, k].min()) if table.size else 0 for k, n in enumerate(names)},
                {n: int(table[:, k].max()) if table.size else 0 for k, n in enumerate(names)},
                {n: int(table[:, k].sum()) for k, n in enumerate(names)},
                {buf.name: raw.most_writes.get((counts.case, k), 0) for k, buf in enumerate(spec.outputs())},
                per_thread=table, index=counts.case))
        return found

    def _launch_of(self, index: int, name: str) -> launcher.LaunchSpec | None:
        spec = self.plan.cases[index]
        return next((lau for lau in spec.launches if lau.name == name), spec.launches[0] if spec.launches else None)

    def _case_name(self, index: int) -> str:
        """The name of case `index` of the plan ("" if there is none)."""
        if not 0 <= index < len(self.plan.cases):
            return ""
        part = self.plan.cases[index].part
        return self.cases[part.id][index - self._indices(part)[0]]["name"]

    def _picture(self, dev: DeviceResult, raw: kernelrun.KernelRun, indices: list[int]) -> None:
        """Who wrote which element, for the first failing case (or the first case)."""
        chosen = next((i for i, c in zip(indices, dev.cases) if c.ran and not c.passed), None)
        if chosen is None:
            return
        spec = self.plan.cases[chosen]
        launch = spec.launches[-1] if spec.launches else None
        if launch is None:
            return
        picture = Picture(launch.block, launch.grid)
        for k, buf in enumerate(spec.outputs()):
            ids = raw.writers.get((chosen, k))
            if ids is not None:
                picture.outputs[buf.name] = (list(buf.shape), ids.tolist())
        picture.shared = [(alloc, ids.tolist()) for alloc, ids in raw.shared.get(chosen, [])]
        for alloc, array in enumerate(raw.arrays.get(chosen, [])):
            place = array.get("place")
            found = simfindings.array_name(place)
            if found:
                picture.shared_names[alloc] = found.group(1)
            rank = int(array.get("rank", 1)) or 1
            picture.shared_shapes[alloc] = [int(d) for d in array.get("shape", [])[:rank]]
        dev.cases[indices.index(chosen)].picture = picture

    # --- stage 2: the op through a MAX graph ----------------------------------------

    def _graph_wanted(self, part: Part) -> bool:
        return self.puzzle.kind == "op" and not self.options.quick

    def _graph_stage(self, part: Part) -> dict[str, DeviceResult]:
        devices = [d for d in part.devices if self._wanted(d)]
        kernel_statuses = [d.status for d in self.kernels[part.id].values()]
        if not all(s in PASSING or s in (Status.SKIPPED, Status.NOT_RUN) for s in kernel_statuses):
            return {d: _device(d, Status.NOT_RUN, "reason.kernels_first") for d in devices}
        self.emit(part.id, "graph", "phase.precompiling")
        packaged = build.precompile(self.children, self.src)
        if not packaged.ok:
            with self.lock:
                self.result.diagnostics += packaged.diagnostics
                self.result.compiler_output = self.result.compiler_output or packaged.output
                self.result.problem = self.result.problem or packaged.problem
            return {d: _device(d, Status.COMPILE_ERROR, "reason.precompile") for d in devices}
        graph_dir = build.python_files(self.puzzle, self.options.solutions)
        results: dict[str, DeviceResult] = {}
        runnable = []
        for d in devices:
            if d == "gpu" and not self._gpu_runs():
                results[d] = self._gated() or _device(d, Status.NOT_RUN, "reason.no_gpu_graph")
            else:
                runnable.append(d)

        def one(device: str) -> None:
            repeats = self.puzzle.repeats if device == "gpu" else 1
            worker = GraphWorker(self.children, self.puzzle, part, device, graph_dir, self.src.mojoc,
                                 self.cases[part.id], repeats)
            raw = worker.collect(self.ticker(part.id, f"graph-{device}"))
            results[device] = self._judge_graph(device, part, raw, repeats)
            self.emit(part.id, f"graph-{device}", "phase.verdict", results[device].status)

        self._parallel([lambda d=d: one(d) for d in runnable])
        self.children.check()
        return {d: results[d] for d in devices}

    def _judge_graph(self, device: str, part: Part, raw, repeats: int) -> DeviceResult:
        name = (self.gpu.name if self.gpu else "GPU") if device == "gpu" else "CPU"
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
        fake = kernelrun.KernelRun("ok", outputs={i: raw.outputs[n] for n, i in enumerate(self._indices(part))
                                                   if n in raw.outputs}, seconds=raw.seconds)
        dev = self._judge(device, part, fake, orders=False)
        dev.repeats = repeats
        dev.device_name = name
        return dev


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def sanitizer_limit(plain: float) -> float:
    """How long one compute-sanitizer tool may take: its own start-up, and the kernels
    slowed down many times, scaled from the plain run's time; never more than the
    old flat limit (ten times the run limit)."""
    return min(settings.run_timeout() * 10, max(SANITIZER_FLOOR, SANITIZER_FACTOR * plain))


SANITIZER_FLOOR = 60.0  # seconds: compute-sanitizer's own start-up takes several
SANITIZER_FACTOR = 50  # its tools slow a kernel down tens of times


BUDGET_COUNTERS = {"max_global_reads": "global_reads", "max_global_writes": "global_writes",
                   "max_shared_reads": "shared_reads", "max_shared_writes": "shared_writes"}


def budget_check(name: str, limit: int, access: LaunchAccess, launch: launcher.LaunchSpec | None
                 ) -> tuple[Msg, int] | None:
    """(who broke it, their count) if one launch's counts break one budget limit."""
    table = access.per_thread
    if table is None:
        return None
    if name == "max_writes_per_element":
        worst = max(access.writes_per_element.values(), default=0)
        return (msg("budget.an_element"), worst) if worst > limit else None
    if name == "min_shared_writes":
        per_block = launch.block[0] * launch.block[1] * launch.block[2] if launch else table.shape[0]
        column = table[:, kernelrun.COUNTERS.index("shared_writes")]
        blocks = [int(column[b:b + per_block].sum()) for b in range(0, len(column), max(1, per_block))]
        low = min(range(len(blocks)), key=blocks.__getitem__) if blocks else 0
        return (msg("budget.block", b=simfindings.block_id(launch, low)), blocks[low]) \
            if blocks and blocks[low] < limit else None
    column = table[:, kernelrun.COUNTERS.index(BUDGET_COUNTERS[name])]
    if not len(column) or int(column.max()) <= limit:
        return None
    worst = int(column.argmax())
    return simfindings.global_thread(launch, worst), int(column[worst])


def _device(device: str, status: Status, key: str, **values) -> DeviceResult:
    result = DeviceResult(device, status)
    result.explain(key, **values)
    return result


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(settings.root()))
    except ValueError:
        return str(path)
