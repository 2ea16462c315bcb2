"""One puzzle, end to end: manifest → build → run per device → compare → result.

Two stages:
1. kernels: the learner's kernels, launched directly by a generated launcher
   (workbook/compile/launcher.py) on every device here: the GPU, the simulator where
   no GPU can run them, and the CPU for an op puzzle's CPU kernel. A verdict
   seconds after an edit.
2. graph (op puzzles only, and only once the kernels pass): the op called
   through a MAX graph on the CPU and the GPU. MAX compiles the graph, so this
   stage is slow when cold; `quick` stops before it.
Nothing here prints: the result is plain data for report.py, and progress goes
to an `events` callback while the learner waits.

This module holds what a check shares (`Check`: the cases, the plan, the
sources, the events) and the order of things; each device's pipeline is a
module of workbook/check/pipelines/, and judge.py says what a run's outputs mean.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import math
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..child import protocol
from ..child.processes import Cancelled, Children
from ..compile import build, launcher, symbols
from ..core import settings, toolchain
from ..core.i18n import Msg, msg
from ..core.results import NOT_RAN, DeviceResult, PartResult, PuzzleResult, Status, verdict
from ..course import gating, skeleton
from ..course.manifest import Part, Puzzle, with_choices
from ..judging import judge
from ..judging.speed import compare as compare_speeds
from ..judging.speed import not_measured
from ..run import sanitizer
from . import verdicts
from .pipelines import gpu, host
from .pipelines import graph as graph_pipeline

DEVICE_CHOICES = ("cpu", "gpu", "sim")
BUDGET_SLACK = 5.0  # seconds: a run cut at the budget ends within this of it


@dataclass
class Options:
    solutions: bool = False  # use the reference solutions instead of the learner's files
    part: str | None = None  # run only this part
    seed: int | None = None  # the cases' seed; None: one drawn from the learner's files (seed_of)
    seeds: tuple[int, ...] = ()  # several seeds in one run (author verify): every seed's cases, one build
    # One check of a batch (check of several puzzles, author verify): the batch's time counts, not
    # each first verdict. Sanitizers run on the plain build, the one with line tables is made only
    # if they find something, and no build yields the cores to another.
    batch: bool = False
    force: bool = False  # run an untouched skeleton anyway (tests and authors)
    # compute-sanitizer on GPU parts: "all", "auto" (racecheck once per content), "off"
    sanitize: str = "auto"
    quick: bool = False  # stop after the first stage (the kernels)
    devices: tuple[str, ...] = ()  # only these devices (cpu, gpu, sim); () means every one that fits
    run_timeout: float | None = None  # seconds for running the kernels; None: the settings' limit
    cache: bool = True  # reuse the verdict of a check whose every input was the same (verdicts.py)

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


def seed_of(puzzle: Puzzle, solutions: bool = False, given: dict[str, bytes] | None = None) -> int:
    """The cases' seed when none is given: drawn from the files being checked, so that
    every version of the learner's code meets its own values and seeded sizes, while a
    run of the same code again meets the same cases (and its cached build and verdict)."""
    given = build.learner_bytes(puzzle, solutions) if given is None else given
    h = hashlib.sha256(puzzle.id.encode())
    for name in puzzle.edit:
        h.update(given.get(name, b"<missing>"))
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


def check_puzzle(puzzle: Puzzle, options: Options | None = None, events: Events | None = None,
                 children: Children | None = None) -> PuzzleResult:
    """Check one puzzle. `children` lets a caller cancel the run from another thread."""
    owned = Children() if children is None else children
    try:
        result = Check(puzzle, options or Options(), events, owned).run()
        from ..judging import sourcenumbers

        sourcenumbers.attach(result, puzzle, (options or Options()).solutions)  # code nothing here judged
        return result
    finally:
        if children is None:
            owned.kill_all()


class Check:
    """One check of one puzzle: the state the stages share."""

    def __init__(self, puzzle: Puzzle, options: Options, events: Events | None, children: Children):
        self.puzzle, self.options, self.children = puzzle, options, children
        self._events = events
        self.started = time.perf_counter()
        self.cpu_before = children.cpu_seconds()  # the children may be shared with earlier checks
        # A graded check's children carry the run's deadline (every wait on them ends by
        # then, the compiler's too): the check's own budget is never longer.
        left = children.left()
        self.deadline = self.started + min(settings.check_budget(), math.inf if left is None else max(0.0, left))
        self.budget_bound = False  # a run's limit was cut to what was left of the budget
        self.lock = threading.Lock()
        # The learner's files, read once: the seed, the cache's key and the builds all see these bytes.
        self.given = build.learner_bytes(puzzle, options.solutions)
        self.seed = options.seed if options.seed is not None else seed_of(puzzle, options.solutions, self.given)
        self.result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.PASS, puzzle.kind, seed=self.seed,
                                   solutions=options.solutions, quick=options.quick)
        self.parts = [puzzle.part(options.part)] if options.part else list(puzzle.parts)
        self.kernels: dict[str, dict[str, DeviceResult]] = {p.id: {} for p in self.parts}
        self.failed_build: build.Built | None = None
        # Set once the plain runs of every device have their verdicts (the graph stage waits
        # for it, not for compute-sanitizer), or the kernel stage ended another way.
        self.plain_verdicts = threading.Event()
        self.host_built = threading.Event()  # the host launcher's build ended (or there is none)
        self._plain_awaited: set[str] = set()
        self._plain_seen: set[str] = set()
        self.gpu = toolchain.gpu()
        self.gate = gating.gate(puzzle, self.gpu)

    # --- the check's total budget -------------------------------------------------

    def left(self) -> float:
        """Seconds left of the check's budget (settings.check_budget)."""
        return self.deadline - time.perf_counter()

    def capped(self, limit):
        """A run's time limit, never past the check's budget (a number, or a function
        asked as the run goes)."""
        def cap(value: float) -> float:
            left = max(0.1, self.left())
            if not value or left < value:
                self.budget_bound = True  # a timeout from here on is the budget's
                return left
            return value

        return (lambda: cap(limit())) if callable(limit) else cap(limit)

    def spent(self, what: str, timed_out: bool = False) -> bool:
        """Whether the budget is spent (a run that `timed_out` under a limit the budget
        cut short spent it: it ended about when the budget did, give or take a launcher's
        own alarm, set a second past its limit, and its stopping); if so, say once that
        `what` and the rest were not run. A run whose own limit shrank below the budget
        once it was cut (timing.py) and ended long before the budget did is its own timeout."""
        if self.left() > 1.0 and not (timed_out and self.budget_bound and self.left() <= BUDGET_SLACK):
            return False
        with self.lock:
            if self.result.budget_spent is None:
                self.result.budget_spent = msg("check.budget_spent", seconds=round(settings.check_budget()),
                                               what=what)
        return True

    # --- events ----------------------------------------------------------------

    def emit(self, part: str, device: str, key: str, status: Status | None = None, **values) -> None:
        if status is not None and status not in NOT_RAN and device in DEVICE_CHOICES \
                and self.result.first_verdict is None:
            self.result.first_verdict = time.perf_counter() - self.started
        if self._events:
            self._events(Event(part, device, Msg(key, values), status))

    def ticker(self, part: str, device: str) -> Callable[[protocol.Source], None]:
        """A callback for a run's wait loop: report its phase when it changes (read from
        the run's channel: protocol.read_phase)."""
        last: list = [None]

        def tick(source: protocol.Source) -> None:
            phase, numbers, _ = protocol.read_phase(source)
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
        key = verdicts.key(self.puzzle, self.given, self.options, self.seed, self.machine()) \
            if self.options.cache else None
        cached = verdicts.get(key) if key else None
        if cached is not None:
            return cached
        try:
            with self.stage("sources"):
                self.src = build.sources(self.puzzle, self.options.solutions, self.given)
            # The launch sizes the learner picks (choices) are read from the files compiled.
            self.puzzle = with_choices(self.puzzle, [self.src.src.joinpath(n).read_text(encoding="utf-8")
                                                             for n in self.puzzle.edit if n.endswith(".mojo")])
            self.result.stages["before"] = time.perf_counter() - self.started
            reference = load_reference(self.puzzle)
            self.cases = {p.id: [] for p in self.parts}
            for seed in self.options.seeds or (self.seed,):
                rng = np.random.default_rng(seed)
                for p in self.parts:
                    self.cases[p.id] += [_seeded(c, seed) if self.options.seeds else c
                                         for c in reference.cases(rng, p.id)]
            self.expected = {p.id: [reference.expected(c, p.id) for c in self.cases[p.id]] for p in self.parts}
            self.invariants = getattr(reference, "invariants", None)
            timed = self._speed_cases(reference)
            self.plan = launcher.make_plan(self.puzzle, [(p, self.cases[p.id], self.expected[p.id])
                                                         for p in self.parts], timed)
            self._solution_beside(timed)
            self.timed_cases = [case for _, case, _ in timed]
            graphs: dict[str, dict[str, DeviceResult]] = {}

            def graph_stage() -> None:
                """The op's graphs, run once every plain run has its verdict (perhaps built
                meanwhile): compute-sanitizer may still be looking, and its findings are
                settled below."""
                graphs.update(graph_pipeline.run_parts(self, self.parts))

            def kernel_stage() -> None:
                try:
                    self._kernel_stage()
                finally:
                    self.plain_verdicts.set()  # whatever ended it: the graph stage never waits forever
                if self.failed_build is None and any(graph_pipeline.kernels_passed(self, p) for p in self.parts
                                                     if graph_pipeline.wanted(self, p)):
                    self.partial("phase.kernels_done")  # the graphs may still be building

            if graph_pipeline.wanted_any(self, self.parts):
                self.parallel([kernel_stage, graph_stage])
            else:
                self._kernel_stage()
            if self.failed_build is not None:
                return self._compile_failed(self.failed_build)
            graphs = graph_pipeline.settle(self, self.parts, graphs)
            for part in self.parts:
                graph = graphs[part.id]
                devices = self.kernels[part.id]
                result.parts.append(PartResult(part.id, verdict([d.status for d in [*devices.values(),
                                                                                      *graph.values()]]),
                                               devices, part.atol, part.rtol, graph, self.speeds.get(part.id)))
            compare_speeds([p.speed for p in result.parts if p.speed is not None])
        except Cancelled:
            raise
        except launcher.PlanError as exc:  # the manifest and the reference disagree: the author's bug
            result.problem = msg("grade.plan_error" if self.children.graded else "engine.plan_error", detail=str(exc))
            result.status = Status.CRASH
            result.seconds = time.perf_counter() - self.started
            return result
        result.status = self._within_budget(verdict([p.status for p in result.parts]))
        result.seconds = time.perf_counter() - self.started
        self._count_cpu()
        if key:
            verdicts.put(key, result)
        return result

    def _within_budget(self, status: Status) -> Status:
        """A check whose budget ran out before a wanted run started is a timeout, not a pass
        (a device left out might have failed) nor `not_run` (the build took the budget):
        the same verdict whichever stage the budget ran out in. A failure found before it
        ran out stands: that is a verdict on the code."""
        if self.result.budget_spent is None or status not in (Status.PASS, *NOT_RAN):
            return status
        self.result.problem = self.result.problem or self.result.budget_spent
        return Status.TIMEOUT

    def _speed_cases(self, reference) -> list[tuple[Part, dict, dict]]:
        """The parts timed on the GPU ([parts.speed]) and their cases, where a GPU runs
        them; every other timed part says plainly why it was not measured."""
        self.speeds = {}
        timed = []
        for part in self.parts:
            if part.speed is None:
                continue
            if not self.gpu_runs():
                self.speeds[part.id] = not_measured(part, "speed.no_gpu")
            elif self.options.quick or not self.wanted("gpu"):
                self.speeds[part.id] = not_measured(part, "speed.not_asked")
            elif not hasattr(reference, "speed_case"):
                self.speeds[part.id] = not_measured(part, "speed.no_case")
            else:
                case = reference.speed_case(np.random.default_rng(self.seed), part.id)
                timed.append((part, case, reference.expected(case, part.id)))
                self.speeds[part.id] = not_measured(part, "speed.not_passed")  # until measured
        return timed

    def _solution_beside(self, timed: list[tuple[Part, dict, dict]]) -> None:
        """Where a timed part's speed is judged against the reference solution, build the
        solution into the learner's GPU launcher, to be timed alternately with the learner's
        kernels in one process (launcher.Solution). Not for --solutions (the learner's kernels
        are the solution's), nor where the solution can't be had: then it is timed in a
        launcher of its own, as the GPU pipeline falls back to."""
        if self.options.solutions or not any(p.speed and p.speed.max_ratio_to_solution for p, _, _ in timed):
            return
        try:
            module, folder, digest, texts = build.solution_package(self.puzzle)
            launcher.attach_solution(self.plan, with_choices(self.puzzle, texts), module, folder, digest)
        except (OSError, UnicodeDecodeError, launcher.PlanError):
            self.plan.solution = None

    def machine(self) -> str:
        """What runs here, as far as a verdict goes: the GPU and its target, compute-sanitizer."""
        gpu = f"{self.gpu.name}/{self.gpu.target}" if self.gpu else "no GPU"
        return f"{gpu};gate={self.gate};sanitizer={sanitizer.locate()}"

    def partial(self, key: str) -> None:
        """Tell the watcher, and `run`, what is in so far (the verdicts of the plain runs),
        before a slow stage that would otherwise hold them back: without a GPU the compile
        for the GPU, then compute-sanitizer, the MAX graphs."""
        if self._events:
            self._events(Event("", "stage", msg(key), result=self._first_stage()))

    def host_done(self) -> None:
        """The host pipeline's verdicts are in (the simulator's, the CPU's). Where no GPU runs the
        kernels they are the first verdict, and the GPU build still compiling is only a check
        that the kernels build for it: say them now rather than after it (issue 40)."""
        with self.lock:
            gpu_pending = "gpu" in self._plain_awaited and "gpu" not in self._plain_seen
        if gpu_pending and not self.gpu_runs() and self.failed_build is None:
            self.partial("phase.gpu_check_next")

    def _first_stage(self) -> PuzzleResult:
        """The result as the kernels left it: what watch shows while the graph builds, and what
        `run` prints at once. A copy: the devices' results may still change (a sanitizer's
        findings), and the first verdict is what it was."""
        first = PuzzleResult(self.puzzle.id, self.result.title, Status.PASS, self.puzzle.kind, seed=self.seed,
                             solutions=self.options.solutions, quick=True)
        for part in self.parts:
            with self.lock:
                devices = copy.deepcopy(self.kernels[part.id])
            first.parts.append(PartResult(part.id, verdict([d.status for d in devices.values()]), devices,
                                          part.atol, part.rtol))
        first.status = verdict([p.status for p in first.parts])
        first.seconds = time.perf_counter() - self.started
        first.first_verdict = self.result.first_verdict
        return first

    def _not_started(self) -> PuzzleResult:
        self.result.status = Status.NOT_STARTED
        for part in self.parts:
            devices = {d: judge.device_result(d, Status.NOT_RUN, "reason.untouched") for d in self.devices_of(part)}
            self.result.parts.append(PartResult(part.id, Status.NOT_STARTED, devices, part.atol, part.rtol))
        return self.result

    def _compile_failed(self, built: build.Built) -> PuzzleResult:
        result = self.result
        result.status = Status.COMPILE_ERROR
        result.diagnostics = built.diagnostics
        result.compiler_output = "" if built.diagnostics else built.output
        result.problem = built.problem
        if built.problem is not None and built.problem.key == "build.compile_timeout" and self.spent("compile"):
            result.problem = None  # the compiler was stopped by the check's budget, not by its own limit
            result.status = self._within_budget(Status.NOT_RUN)  # no verdict on the code: a timeout
        for part in self.parts:
            # A device judged before the other build failed keeps its verdict (the simulator's,
            # before the compile for the GPU failed): `run` has shown it already.
            judged = {d: dev for d, dev in self.kernels[part.id].items() if dev.status != Status.NOT_RUN}
            devices = {d: judged.get(d) or judge.device_result(d, Status.NOT_RUN, "reason.compile_error")
                       for d in self.devices_of(part)}
            result.parts.append(PartResult(part.id, Status.COMPILE_ERROR, devices, part.atol, part.rtol))
        result.seconds = time.perf_counter() - self.started
        self._count_cpu()
        return result

    def _count_cpu(self) -> None:
        """The CPU-seconds of this check's children, per program: where a cold check's time goes."""
        before, after = self.cpu_before, self.children.cpu_seconds()
        self.result.cpu = {kind: round(seconds - before.get(kind, 0.0), 2) for kind, seconds in after.items()
                           if seconds - before.get(kind, 0.0) > 0}

    def parallel(self, jobs: list[Callable[[], None]]) -> None:
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

    def wanted(self, device: str) -> bool:
        return not self.options.devices or device in self.options.devices

    def gpu_runs(self) -> bool:
        return self.gpu is not None and self.gate is None

    def sim_wanted(self, part: Part) -> bool:
        """The simulator runs a part's GPU kernels everywhere it can, a GPU or not: it
        sees what a plain GPU run can't (a write past the end, a race that happened
        to go right), and it stands in for the GPU where there is none."""
        if "gpu" not in part.devices:
            return False
        if self.options.devices:
            return "sim" in self.options.devices
        return part.sim or not self.gpu_runs()

    def devices_of(self, part: Part) -> list[str]:
        names = [d for d in part.devices if self.wanted(d)]
        if self.sim_wanted(part):
            names.append("sim")
        return names or list(part.devices)

    def indices(self, part: Part) -> list[int]:
        return [spec.index for spec in self.plan.cases if spec.part.id == part.id]

    # --- stage 1: the kernels ------------------------------------------------------

    def _kernel_stage(self) -> None:
        self.inputs = Path(tempfile.mkdtemp(prefix="workbook-inputs-")) / protocol.INPUTS_BIN
        flat_cases = [c for p in self.parts for c in self.cases[p.id]]
        launcher.write_inputs(self.plan, flat_cases, self.inputs, self.timed_cases)
        host_parts = [p for p in self.parts if ("cpu" in p.devices and self.wanted("cpu")) or self.sim_wanted(p)]
        gpu_parts = [p for p in self.parts if "gpu" in p.devices and self.wanted("gpu")]
        # A PTX or occupancy rule is checked on the GPU build, which every machine makes, --quick or not.
        build_gpu = bool(gpu_parts) and (self.gpu_runs() or not self.options.quick
                                         or any(p.ptx or p.occupancy for p in gpu_parts))
        pipelines: dict[str, Callable[[], None]] = {}
        if host_parts:
            pipelines["host"] = lambda: host.run(self, host_parts)
        if build_gpu:
            pipelines["gpu"] = lambda: gpu.run(self, gpu_parts)
        self._plain_awaited = set(pipelines)
        if "host" not in pipelines:
            self.host_built.set()
        try:
            self.parallel([self._plain(pipeline, name) for name, pipeline in pipelines.items()])
        finally:
            self.inputs.unlink(missing_ok=True)
            self.inputs.parent.rmdir()
        for part in gpu_parts:
            if "gpu" not in self.kernels[part.id]:
                self.kernels[part.id]["gpu"] = self.gated() or judge.device_result("gpu", Status.NOT_RUN,
                                                                                   "reason.quick_no_gpu")

    def _plain(self, pipeline: Callable[[], None], name: str) -> Callable[[], None]:
        def job() -> None:
            try:
                pipeline()
            finally:
                if name == "host":
                    self.host_built.set()  # it built nothing, or stopped before: the GPU's build goes on
                self.plain_in(name)
            if name == "host":
                self.host_done()
        return job

    def plain_in(self, pipeline: str) -> None:
        """A pipeline's plain runs have their verdicts (said again at its end: only the
        first time counts); once every pipeline's are in, the graph stage may start."""
        with self.lock:
            self._plain_seen.add(pipeline)
            if self._plain_seen >= self._plain_awaited:
                self.plain_verdicts.set()

    def gated(self) -> DeviceResult | None:
        if self.gate is None:
            return None
        return judge.device_result("gpu", Status.SKIPPED, "reason.gate", why=self.gate,
                                   name=self.gpu.name if self.gpu else "")

    def target(self, which: str) -> str | None:
        if which != "gpu":
            return None
        return self.gpu.target if self.gpu and not settings.gpu_target() else toolchain.gpu_target()

    @contextlib.contextmanager
    def stage(self, name: str):
        """Time one stage (several may overlap: each is its own wall time), for the report's
        JSON and the benchmark's breakdown of where the seconds go."""
        started = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                self.result.stages[name] = self.result.stages.get(name, 0.0) + time.perf_counter() - started

    def build(self, which: str, device: str) -> build.Built | None:
        """Build a launcher; on a compile error remember it (and return None).

        Where no GPU runs its program, the GPU's build is only a check that the kernels
        compile for it: where someone waits for the first verdict (`events`: run, watch), it
        starts once the simulator's build has ended, so that it never slows that verdict, and
        not at all when that build failed (its compile error is the verdict; the GPU's would
        say it again, later). It used to run beside it at a lower priority: on a busy machine
        it then got no CPU for minutes, and ran past the compiler's time limit, a compile
        error on correct code (issue 40). Where nobody waits for a first verdict (a batch, a
        grade) both build at once: the cores one would leave idle are the check's loss."""
        if which == "host":
            try:
                return self._build(which, device)
            finally:
                self.host_built.set()
        if not self.gpu_runs() and not self.options.batch and self._events is not None:
            self.host_built.wait()
            if self.failed_build is not None:
                return None
        return self._build(which, device)

    def _build(self, which: str, device: str) -> build.Built | None:
        self.emit("", device, "phase.compiling")
        with self.stage(f"build/{which}"):
            built = build.launcher(self.children, self.src, self.plan, which, self.target(which))
            if not built.ok and which == "gpu" and self.plan.solution is not None and build.solution_failed(built):
                self.plan.solution = None  # timed in a launcher of its own instead; the learner's build must not fail
                built = build.launcher(self.children, self.src, self.plan, which, self.target(which))
        if built.link_seconds:
            with self.lock:
                self.result.stages[f"link/{which}"] = built.link_seconds
        if built.ok:
            return built
        with self.lock:
            if self.failed_build is None or (not self.failed_build.diagnostics and built.diagnostics):
                self.failed_build = built
        return None

    def symbolize(self, binary: Path, sites: list, wanted: set[int], hints: dict[int, str]):
        """Places in the learner's files for the simulator's sites (symbols.Resolver)."""
        learner = {key: real for key, real in build.path_map(self.src).items() if key.startswith("/")}
        return symbols.Resolver(learner, settings.shown).resolve(binary, sites, wanted, hints)

    # --- judging one device's outputs ------------------------------------------------

    def case_name(self, index: int) -> str:
        """The name of case `index` of the plan ("" if there is none)."""
        if not 0 <= index < len(self.plan.cases):
            return ""
        part = self.plan.cases[index].part
        return self.cases[part.id][index - self.indices(part)[0]]["name"]

    # --- stage 2: the op through a MAX graph ----------------------------------------

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------



