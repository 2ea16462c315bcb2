"""Checking the curriculum itself: `workbook author verify`.

What a puzzle claims must stay true, and this is where it is checked:
- statically: every manifest loads; every text a learner reads exists in
  English and Korean; every skeleton is the one its solution derives; every
  reference case has a unique name and labels in both languages, the same
  shapes whatever the seed (but for seeded cases), and an expected value for
  every output; every part has a case beyond every constant and a seeded one
  (or says why not: fixed_size), and a case off the 16-bit float grids when
  its outputs are floats; every special point of a part's math
  ([[parts.special]]) is hit by a case named for it on every seed, as the
  reference's hits() finds in the case's inputs; every budget has a wrong
  kernel that breaks it; every wrong kernel under tests/wrong/ says why it is
  wrong and what must catch it; every right kernel under tests/right/ says
  why it is right and how it differs from the solution;
- by running (`--run`): every solution passes on every device here; every
  skeleton is `not_started` untouched and never passes when forced; every
  wrong kernel fails, on the device and for the reason its wrong.toml states;
  every right kernel passes on every device here.

The tests run the same checks (tests/test_curriculum.py), one per kernel.
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..check import engine
from ..compile import launcher
from ..core import toolchain
from ..core.i18n import LANGUAGES
from ..core.results import NOT_RAN, PASSING, PuzzleResult, Status
from ..course import catalog, manifest, skeleton
from ..course.manifest import Puzzle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

WRONG = Path("tests") / "wrong"
RIGHT = Path("tests") / "right"
DEVICES = ("cpu", "gpu", "sim", "ptx", "occupancy", "graph-cpu", "graph-gpu")
RIGHT_DEVICES = ("cpu", "gpu", "sim")  # where a right kernel's verdict is a pass


@dataclass
class Expectation:
    """What must catch a wrong kernel (tests/wrong/<id>/<name>/wrong.toml, [[expect]])."""

    device: str  # cpu, gpu, sim, ptx, occupancy, graph-cpu, graph-gpu, or "puzzle" for a compile error
    status: str = "fail"
    finding: str = ""  # a finding kind that must be reported (race_shared, out_of_bounds, ...)
    reason: str = ""  # a reason key that must be given (reason.order, reason.race, ...)
    case: str = ""  # a case that must fail
    output: str = ""  # an output that must be wrong in that case
    needs: str = ""  # "gpu" or "sanitizer": checkable only where that is here
    line: int = 0  # the finding must name this line of the learner's file
    other_line: int = 0  # a race: the line of the other access
    threads: int = 0  # the finding must count this many threads


@dataclass
class WrongKernel:
    puzzle: str
    name: str
    dir: Path
    why: str
    expect: list[Expectation] = field(default_factory=list)
    part: str | None = None  # run only this part
    run_timeout: float | None = None  # a shorter limit, for a kernel that never ends
    # Why only the simulator (or only a GPU) can see what is wrong: the differential check
    # (tools/differential.py) accepts a verdict that differs between the two only with one.
    sim_only: str = ""
    gpu_only: str = ""

    @property
    def id(self) -> str:
        return f"{self.puzzle}/{self.name}"

    def needs_graph(self) -> bool:
        return any(e.device.startswith("graph") for e in self.expect)


@dataclass
class RightKernel:
    """A correct kernel written another way than the solution (tests/right/<id>/<name>/,
    right.toml): another reduction order, loop shape, barrier placement, layout. It must
    pass on every device it names that is here: the checks fail only what the text asks."""

    puzzle: str
    name: str
    dir: Path
    why: str  # why it is correct
    differs: str  # how it differs from the solution
    part: str | None = None  # run only this part
    devices: tuple[str, ...] = RIGHT_DEVICES  # where it must pass (those of them here)
    unknown: tuple[str, ...] = ()  # keys of right.toml that mean nothing here (a typo)

    @property
    def id(self) -> str:
        return f"{self.puzzle}/{self.name}"


@dataclass
class Verdict:
    """One check's outcome."""

    puzzle: str
    what: str
    ok: bool
    detail: str = ""
    skipped: bool = False


# ---------------------------------------------------------------------------
# Wrong kernels
# ---------------------------------------------------------------------------


def wrong_kernels(puzzle: Puzzle, repo: Path | None = None) -> list[WrongKernel]:
    base = (repo or catalog.root()) / WRONG / puzzle.id
    if not base.is_dir():
        return []
    found = []
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        meta = folder / "wrong.toml"
        data = tomllib.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
        expect = [Expectation(**raw) for raw in data.get("expect", [])]
        found.append(WrongKernel(puzzle.id, folder.name, folder, str(data.get("why", "")), expect, data.get("part"),
                                 data.get("run_timeout"), str(data.get("sim_only", "")),
                                 str(data.get("gpu_only", ""))))
    return found


RIGHT_KEYS = ("why", "differs", "part", "devices")


def right_kernels(puzzle: Puzzle, repo: Path | None = None) -> list[RightKernel]:
    """The correct variants of a puzzle (tests/right/<id>/<name>/, right.toml)."""
    base = (repo or catalog.root()) / RIGHT / puzzle.id
    if not base.is_dir():
        return []
    found = []
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        meta = folder / "right.toml"
        data = tomllib.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
        devices = data.get("devices", RIGHT_DEVICES)
        found.append(RightKernel(puzzle.id, folder.name, folder, str(data.get("why", "")),
                                 str(data.get("differs", "")), data.get("part"),
                                 tuple(devices) if isinstance(devices, (list, tuple)) else (str(devices),),
                                 tuple(sorted(set(data) - set(RIGHT_KEYS)))))
    return found


def applicable(e: Expectation, gpu_runs: bool) -> bool:
    if e.needs == "gpu" or e.device in ("gpu", "graph-gpu"):
        if not gpu_runs:
            return False
    if e.needs == "sanitizer":
        from ..run import sanitizer

        return gpu_runs and sanitizer.locate() is not None
    return True


def _device(result: PuzzleResult, device: str):
    stage, _, name = device.partition("-") if device.startswith("graph") else ("kernels", "", device)
    for part in result.parts:
        found = (part.graph if stage == "graph" else part.kernels).get(name)
        if found is not None:
            yield part, found


def meets(result: PuzzleResult, e: Expectation) -> tuple[bool, str]:
    """Whether a run shows what the expectation says, and what it showed instead."""
    if e.device == "puzzle":
        ok = result.status.value == e.status
        return ok, f"puzzle status {result.status.value}"
    seen = list(_device(result, e.device))
    if not seen:
        return False, f"{e.device} did not report"
    problems = []
    for _part, dev in seen:
        if dev.status.value != e.status:
            problems.append(f"{e.device} status {dev.status.value} ({dev.reason})")
            continue
        if e.finding and not any(_names(f, e) for f in dev.findings or []):
            kinds = ", ".join(sorted({f"{f.kind}@{f.line}" + (f"/{f.other_line}" if f.other_line else "")
                                      + (f"×{f.threads}t" if f.threads else "") for f in dev.findings or []}))
            wanted = e.finding + (f" at line {e.line}" if e.line else "") + (f" by {e.threads} threads"
                                                                              if e.threads else "")
            problems.append(f"{e.device} findings: {kinds or 'none'}, not {wanted}")
            continue
        if e.reason and not any(m.key == e.reason for m in dev.reasons):
            problems.append(f"{e.device} reasons: {', '.join(m.key for m in dev.reasons) or 'none'}")
            continue
        if e.case:
            case = next((c for c in dev.cases if c.name == e.case), None)
            if case is None or case.passed:
                problems.append(f"case '{e.case}' {'passed' if case else 'is missing'}")
                continue
            stopped = not case.ran  # the run stopped inside this case (a read outside memory)
            if e.output and not stopped and not any(o.name == e.output and not o.passed for o in case.outputs):
                problems.append(f"output '{e.output}' of '{e.case}' passed")
                continue
        return True, ""
    return False, "; ".join(problems)


def _names(f, e: Expectation) -> bool:
    """Whether finding `f` is the one `e` expects: its kind, and its lines and thread count if given."""
    if f.kind != e.finding:
        return False
    if e.line and f.line != e.line and not (e.other_line == 0 and f.other_line == e.line):
        return False
    if e.other_line and f.other_line != e.other_line and f.line != e.other_line:
        return False
    return not e.threads or f.threads == e.threads


class Sandbox:
    """A private copy of the puzzles and solutions, where learner files can be swapped."""

    def __init__(self, repo: Path | None = None):
        self.repo = repo or catalog.root()
        self.dir = Path(tempfile.mkdtemp(prefix="workbook-verify-"))
        for name in ("puzzles", "solutions"):
            shutil.copytree(self.repo / name, self.dir / name, ignore=shutil.ignore_patterns("__pycache__"))

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def puzzle(self, pid: str, *overlays: Path) -> Puzzle:
        """The puzzle with its learner files set to the solution, then each overlay folder over it."""
        puzzle = catalog.load(pid, self.dir)
        for name, solution in zip(puzzle.edit, puzzle.solution_files()):
            shutil.copyfile(solution, puzzle.dir / name)
        for overlay in overlays:
            for path in overlay.rglob("*"):
                if path.is_file() and path.name not in ("wrong.toml", "right.toml"):
                    target = puzzle.dir / path.relative_to(overlay)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
        return puzzle

    def skeleton(self, pid: str) -> Puzzle:
        puzzle = catalog.load(pid, self.dir)
        for name, solution in zip(puzzle.edit, puzzle.solution_files()):
            (puzzle.dir / name).write_text(skeleton.skeleton_of(solution), encoding="utf-8")
        return puzzle


def every_device(puzzle: Puzzle) -> tuple[str, ...]:
    """Every device here: the simulator too, where a GPU runs, so the two can be compared."""
    devices = ["cpu", "gpu"]
    if any("gpu" in p.devices and p.sim for p in puzzle.parts):
        devices.append("sim")
    return tuple(devices)


def devices_for(kernel: WrongKernel, puzzle: Puzzle, gpu_runs: bool) -> tuple[str, ...]:
    """The devices a wrong kernel's expectations name (a GPU build nobody checks costs
    seconds); every device where one is about the whole puzzle or its graph."""
    named = {e.device for e in kernel.expect if applicable(e, gpu_runs)}
    if named & {"ptx", "occupancy"}:  # the PTX comes from the GPU build
        named.add("gpu")
    if not named or named & {"puzzle", "graph-cpu", "graph-gpu"}:
        return every_device(puzzle)
    return tuple(d for d in every_device(puzzle) if d in named)


def run_wrong(sandbox: Sandbox, kernel: WrongKernel, seed: int = 5) -> tuple[PuzzleResult, list[Verdict]]:
    """Run one wrong kernel and judge each applicable expectation."""
    puzzle = sandbox.puzzle(kernel.puzzle, kernel.dir)
    gpu_runs = toolchain.gpu() is not None
    # Nothing checkable here (only a GPU catches it): a full run still compiles it for the GPU.
    gpu_only = not any(applicable(e, gpu_runs) for e in kernel.expect)
    quick = not gpu_only and not kernel.needs_graph() and not any(e.device == "puzzle" or e.needs == "sanitizer"
                                                                  for e in kernel.expect)
    options = engine.Options(seed=seed, part=kernel.part, quick=quick, devices=devices_for(kernel, puzzle, gpu_runs),
                             sanitize="all" if any(e.needs == "sanitizer" for e in kernel.expect) else "auto",
                             run_timeout=kernel.run_timeout)
    result = engine.check_puzzle(puzzle, options)
    verdicts = []
    for e in kernel.expect:
        what = f"{kernel.id}: {e.device} {e.status}" + (f" ({e.finding or e.reason})" if e.finding or e.reason else "")
        if not applicable(e, gpu_runs):
            verdicts.append(Verdict(kernel.puzzle, what, True, "needs " + (e.needs or "a GPU"), skipped=True))
            continue
        ok, detail = meets(result, e)
        verdicts.append(Verdict(kernel.puzzle, what, ok, detail))
    if gpu_only:
        # Only a GPU can catch it (p36: the simulator can't run TMA or wgmma). Here it must
        # still compile: a wrong kernel that stops at the compiler teaches nothing.
        verdicts.append(Verdict(kernel.puzzle, f"{kernel.id}: compiles (a GPU judges it)",
                                result.status == Status.COMPILED, seen(result)))
    else:
        verdicts.append(Verdict(kernel.puzzle, f"{kernel.id}: does not pass", result.status not in PASSING,
                                seen(result)))
    return result, verdicts


def right_devices(kernel: RightKernel, puzzle: Puzzle) -> tuple[str, ...]:
    """The devices a right kernel must pass on that its parts run on: the CPU where a part
    has a CPU kernel (op puzzles), the GPU and the simulator where one has GPU kernels."""
    parts = [p for p in puzzle.parts if kernel.part in (None, p.id)]
    runs = {"cpu": any("cpu" in p.devices for p in parts), "gpu": any("gpu" in p.devices for p in parts),
            "sim": any("gpu" in p.devices and p.sim for p in parts)}
    return tuple(d for d in kernel.devices if runs.get(d))


def run_right(sandbox: Sandbox, kernel: RightKernel, seed: int = 5) -> tuple[PuzzleResult, list[Verdict]]:
    """Run one right kernel: it passes on every device it names that is here, and no device
    fails it (a PTX or occupancy rule included). Where a GPU runs, the check is the full one
    a learner gets (compute-sanitizer too); elsewhere the kernels' stage alone."""
    puzzle = sandbox.puzzle(kernel.puzzle, kernel.dir)
    gpu_runs = toolchain.gpu() is not None
    wanted = right_devices(kernel, puzzle)
    here = tuple(d for d in wanted if d != "gpu" or gpu_runs)
    options = engine.Options(seed=seed, part=kernel.part, quick=not gpu_runs and bool(here),  # else: compile it
                             devices=tuple(d for d in every_device(puzzle) if d in here) or wanted, cache=False)
    result = engine.check_puzzle(puzzle, options)
    verdicts = []
    for device in wanted:
        what = f"{kernel.id}: passes on {device}"
        if device not in here:
            verdicts.append(Verdict(kernel.puzzle, what, True, "needs a GPU", skipped=True))
            continue
        got = [(part.id, dev) for part in result.parts for name, dev in part.kernels.items() if name == device]
        bad = [f"{pid}: {dev.status.value}" + (f" ({', '.join(sorted({f.kind for f in dev.findings or []}))})"
                                               if dev.findings else "")
               for pid, dev in got if dev.status != Status.PASS]
        if not got:
            bad = [f"{device} did not report (puzzle {result.status.value})"]
        verdicts.append(Verdict(kernel.puzzle, what, not bad, "; ".join(bad)))
    if not here:  # only a GPU runs it (p36): here it must still compile, as a wrong one must
        verdicts.append(Verdict(kernel.puzzle, f"{kernel.id}: compiles (a GPU judges it)",
                                result.status == Status.COMPILED, seen(result)))
    else:
        verdicts.append(Verdict(kernel.puzzle, f"{kernel.id}: no device fails it", result.status in PASSING,
                                seen(result)))
    return result, verdicts


def seen(result: PuzzleResult) -> str:
    """What each device showed, in a line: 'sim fail (out_of_bounds) · gpu pass'."""
    shown = [f"puzzle {result.status.value}"]
    for part in result.parts:
        for stage, devices in (("", part.kernels), ("graph-", part.graph)):
            for name, dev in devices.items():
                why = sorted({f.kind for f in dev.findings or []} | {m.key.split(".")[-1] for m in dev.reasons})
                shown.append(f"{part.id}/{stage}{name} {dev.status.value}" + (f" ({', '.join(why)})" if why else ""))
    return " · ".join(shown)


def run_solution(sandbox: Sandbox, pid: str, seed: int = 5) -> tuple[PuzzleResult, Verdict]:
    puzzle = sandbox.puzzle(pid)
    result = engine.check_puzzle(puzzle, engine.Options(seed=seed, devices=every_device(puzzle), batch=True))
    bad = [f"{d}: {s.value}" for d, s in result.device_statuses().items() if s not in PASSING and s not in NOT_RAN]
    ok = result.status in PASSING and not bad
    return result, Verdict(pid, f"{pid}: the solution passes on every device here", ok,
                           ", ".join(bad) or f"status {result.status.value}")


SEEDS = 40  # solution runs over this many seeds in one build: a seed-dependent false FAIL never lands
SEED_BATCH = 40  # seeds per build: the same case of every seed shares its code (launcher.py), so it compiles like one


def run_seeds(sandbox: Sandbox, pid: str, count: int = SEEDS, first: int = 1000) -> Verdict:
    """The solution over `count` seeds (the simulator and the CPU kernels): every case of
    every seed must pass, or a correct kernel would be failed on some learner's seed."""
    puzzle = sandbox.puzzle(pid)
    seeds = list(range(first, first + count))
    failed: list[str] = []
    for start in range(0, count, SEED_BATCH):
        batch = tuple(seeds[start:start + SEED_BATCH])
        result = engine.check_puzzle(puzzle, engine.Options(seeds=batch, quick=True, devices=("sim", "cpu")))
        for part in result.parts:
            for dev in part.kernels.values():
                if dev.status in NOT_RAN:
                    continue
                bad = [c.name for c in dev.cases if not c.passed]
                if dev.status != Status.PASS:
                    failed.append(f"{part.id}/{dev.device} {dev.status.value}: "
                                  + (", ".join(bad[:4]) or dev.reason))
    return Verdict(pid, f"{pid}: the solution passes on {count} seeds ({seeds[0]}..{seeds[-1]})", not failed,
                   "; ".join(failed[:3]))


def run_skeleton(sandbox: Sandbox, pid: str, seed: int = 5) -> Verdict:
    puzzle = sandbox.skeleton(pid)
    untouched = engine.check_puzzle(puzzle, engine.Options(seed=seed, quick=True))
    forced = engine.check_puzzle(puzzle, engine.Options(seed=seed, force=True, quick=True,
                                                        devices=every_device(puzzle)))
    # A skeleton must compile (the learner's first run shows their kernel's result, not an
    # error in code they were given) and must never pass.
    fine = forced.status not in (Status.PASS, Status.COMPILE_ERROR)
    if puzzle.skeleton_runs:  # a debugging puzzle: the skeleton is the buggy code, and runs
        ok = untouched.status not in (Status.PASS, Status.NOT_STARTED) and fine
    else:
        ok = untouched.status == Status.NOT_STARTED and fine
    return Verdict(pid, f"{pid}: the skeleton is not_started (or runs and fails), compiles, and fails when forced", ok,
                   f"untouched {untouched.status.value}, forced {forced.status.value}")


# ---------------------------------------------------------------------------
# Static checks
# ---------------------------------------------------------------------------


def static_checks(puzzles: list[Puzzle], repo: Path | None = None) -> list[Verdict]:
    repo = repo or catalog.root()
    found: list[Verdict] = []
    chapters = catalog.chapters(repo)
    for p in puzzles:
        found.append(Verdict(p.id, f"{p.id}: chapter {p.chapter} exists", p.chapter in chapters))
        missing = [lang for lang in LANGUAGES if lang not in p.title]
        missing += [f"{part.id} title.{lang}" for part in p.parts for lang in LANGUAGES if lang not in part.title]
        missing += [f"text.{lang}.md" for lang in LANGUAGES if not p.text_path(lang).exists()]
        missing += [f"hint {i + 1}.{lang}" for i, h in enumerate(p.hints) for lang in LANGUAGES if not h.get(lang)]
        found.append(Verdict(p.id, f"{p.id}: every text in English and Korean", not missing, ", ".join(missing)))
        found.append(Verdict(p.id, f"{p.id}: at least two hints", len(p.hints) >= 2, f"{len(p.hints)} hints"))
        found += _drift(p)
        found += _reference(p)
        found += _sizes(p)
        found += _off_grid(p)
        found += _special(p)
        found += _budgets(p, repo)
        found += _methods(p, repo)
        found += _budget_sizes(p)
        for kernel in wrong_kernels(p, repo):
            problems = []
            if not kernel.why:
                problems.append("no why")
            if not kernel.expect:
                problems.append("no [[expect]]")
            if kernel.sim_only and kernel.gpu_only:
                problems.append("sim_only and gpu_only both: a kernel only one device sees says which")
            for path in kernel.dir.rglob("*"):
                name = path.relative_to(kernel.dir).as_posix()
                if path.is_file() and path.name != "wrong.toml" and name not in p.edit:
                    problems.append(f"{name} is not a learner file")
            found.append(Verdict(p.id, f"{kernel.id}: says why and what must catch it", not problems,
                                 ", ".join(problems)))
        for right in right_kernels(p, repo):
            found.append(Verdict(p.id, f"{right.id}: says why it is right and how it differs",
                                 not (problems := _right_problems(p, right)), ", ".join(problems)))
    return found


def _right_problems(p: Puzzle, kernel: RightKernel) -> list[str]:
    problems = []
    if not (kernel.dir / "right.toml").exists():
        problems.append("no right.toml")
    if not kernel.why:
        problems.append("no why (why it is correct)")
    if not kernel.differs:
        problems.append("no differs (how it differs from the solution)")
    if kernel.unknown:
        problems.append(f"unknown keys {', '.join(kernel.unknown)} (use {', '.join(RIGHT_KEYS)})")
    if kernel.part is not None and kernel.part not in {part.id for part in p.parts}:
        problems.append(f"part '{kernel.part}' is not one of {', '.join(part.id for part in p.parts)}")
    if not kernel.devices or not set(kernel.devices) <= set(RIGHT_DEVICES):
        problems.append(f"devices must name some of {', '.join(RIGHT_DEVICES)}")
    files = [path for path in kernel.dir.rglob("*") if path.is_file() and path.name != "right.toml"]
    if not files:
        problems.append("no learner file")
    for path in files:
        name = path.relative_to(kernel.dir).as_posix()
        if name not in p.edit:
            problems.append(f"{name} is not a learner file")
        else:
            solution = (p.solution_dir / name).read_bytes() if (p.solution_dir / name).exists() else b""
            if path.read_bytes() == solution:
                problems.append(f"{name} is the solution itself")
    return problems


def _budgets(p: Puzzle, repo: Path) -> list[Verdict]:
    """A part's access budget says what its text asks; a wrong kernel must show it bites.
    A checkout without tests/wrong (a learner's copy) has no wrong kernels to look at."""
    found = []
    kernels = wrong_kernels(p, repo)
    for part in p.parts:
        if not part.budgets:
            continue
        if not (repo / WRONG).is_dir():
            found.append(Verdict(p.id, f"{p.id}.{part.id}: a wrong kernel breaks its access budget", True,
                                 "no tests/wrong here", skipped=True))
            continue
        biting = [k.id for k in kernels if (k.part in (None, part.id)) and
                  any(e.finding == "budget" and e.device == "sim" for e in k.expect)]
        found.append(Verdict(p.id, f"{p.id}.{part.id}: a wrong kernel breaks its access budget", bool(biting),
                             ", ".join(biting) or "none has an expectation finding = \"budget\""))
    return found


def _methods(p: Puzzle, repo: Path) -> list[Verdict]:
    """A part's stated method ([[parts.method]]) says how its text asks the kernel to work;
    a wrong kernel that gets the right values another way must show the rule bites."""
    found = []
    kernels = wrong_kernels(p, repo)
    for part in p.parts:
        if not part.methods:
            continue
        what = f"{p.id}.{part.id}: a wrong kernel breaks its stated method"
        if not (repo / WRONG).is_dir():
            found.append(Verdict(p.id, what, True, "no tests/wrong here", skipped=True))
            continue
        biting = [k.id for k in kernels if (k.part in (None, part.id)) and
                  any(e.finding == "method" and e.device == "sim" for e in k.expect)]
        found.append(Verdict(p.id, what, bool(biting), ", ".join(biting) or "none has an expectation "
                             "finding = \"method\""))
    return found


def _method_limits(part) -> set[tuple[str, str, str]]:
    """A part's stated methods' size expressions, as (kernel, key, expression)."""
    found = set()
    for rule in part.methods:
        for key, value in (("max_narrow", rule.max_narrow), ("max_barriers", rule.max_barriers),
                           *(("threads", t) for t in rule.threads)):
            if isinstance(value, str):
                found.add((rule.kernel, f"method.{key}", value))
    return found


def _budget_sizes(p: Puzzle) -> list[Verdict]:
    """A budget limit (or a stated method's count) given as a size expression names only the
    case's parameters and the constants, and gives a whole number of at least 0 for every
    case (the judge evaluates it per case: a name it does not know would stop a learner's check)."""
    found = []
    for part in p.parts:
        exprs = {(b.kernel, name, limit) for b in part.budgets for name, limit in b.limits if isinstance(limit, str)}
        exprs |= _method_limits(part)
        if not exprs:
            continue
        problems = []
        try:
            ref = engine.load_reference(p)
            cases = ref.cases(np.random.default_rng(1), part.id)
            plan = launcher.make_plan(p, [(part, cases, [ref.expected(c, part.id) for c in cases])])
            for spec in plan.cases:
                for kernel, name, limit in sorted(exprs):
                    try:
                        value = manifest.evaluate(limit, spec.names())
                    except (manifest.ManifestError, ZeroDivisionError) as exc:
                        problems.append(f"{kernel or 'every kernel'}.{name} = \"{limit}\": {exc}")
                        continue
                    if value < 0:
                        problems.append(f"{kernel or 'every kernel'}.{name} = \"{limit}\" is {value} for "
                                        f"'{spec.params}'")
        except Exception as exc:  # noqa: BLE001 - _reference reports the reference's own trouble
            problems.append(f"{type(exc).__name__}: {exc}")
        problems = list(dict.fromkeys(problems))
        found.append(Verdict(p.id, f"{p.id}.{part.id}: every budget's size expression gives a count for every case",
                             not problems, "; ".join(problems[:4])))
    return found


def _grid_names(text: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(str(text), mode="eval")) if isinstance(node, ast.Name)}


def beyond_constants(p: Puzzle, spec: launcher.CaseSpec) -> bool:
    """Whether a case is beyond every constant of its puzzle, by two rules any size
    slip breaks: (1) one of its size parameters is larger than every constant of the
    manifest's [constants] (TPB, TILE, CONV: a size that fits in one block or one tile
    stands in for no other), and (2) every launch whose grid depends on the case has
    more blocks than a block has threads (size > TPB * TPB for ceildiv(size, TPB)
    blocks: a sum of block totals, a loop over blocks, cannot hide behind TPB).
    A part whose launches are one block shaped by constants meets neither: its
    manifest says why with `fixed_size`. A host launch (elementwise) runs the
    library's own grid-stride loop, so (2) asks it for more than one block: more
    elements than its block's threads take in one step."""
    constants = p.constants
    sizes = [v for v in spec.params.values() if isinstance(v, int) and not isinstance(v, bool)]
    if constants and not any(v > max(constants.values()) for v in sizes):
        return False
    for launch, lau in zip(spec.part.launches, spec.launches):
        if not any(_grid_names(g) - set(constants) for g in launch.grid):
            continue
        blocks = lau.grid[0] * lau.grid[1] * lau.grid[2]
        if launch.host:
            if blocks <= 1:
                return False
            continue
        if blocks <= lau.block[0] * lau.block[1] * lau.block[2]:
            return False
    return True


SEEDED_RUNS = 40  # seeds a seeded case is drawn for: its shapes must vary, from a few candidates
SEEDED_MOST = 8  # distinct shapes at most, so that builds are reused


def _shape(case: dict) -> tuple:
    return (tuple(sorted(case["params"].items())),
            tuple((k, np.shape(v)) for k, v in sorted(case["inputs"].items())))


def _sizes(p: Puzzle) -> list[Verdict]:
    """Every part has a case beyond every constant (beyond_constants) and a case whose
    sizes are drawn from the seed (`"seeded": True`, from a few candidates, and
    different for different seeds), unless its manifest says why its sizes are fixed."""
    found = []
    try:
        ref = engine.load_reference(p)
    except Exception as exc:  # noqa: BLE001 - _reference reports it
        return [Verdict(p.id, f"{p.id}: sizes beyond every constant, seeded sizes", False,
                        f"{type(exc).__name__}: {exc}")]
    for part in p.parts:
        problems = []
        shapes: set = set()
        seeded = 0
        for seed in range(1, SEEDED_RUNS + 1):
            drawn = ref.cases(np.random.default_rng(seed), part.id)
            cases = [c for c in drawn if c.get("seeded")]
            seeded = max(seeded, len(cases))
            shapes |= {_shape(c) for c in cases}
            if seed == 1:
                fixed = [c for c in drawn if not c.get("seeded")]
                plan = launcher.make_plan(p, [(part, fixed, [ref.expected(c, part.id) for c in fixed])])
                beyond = [spec for spec in plan.cases if beyond_constants(p, spec)]
        if seeded and not 2 <= len(shapes) <= SEEDED_MOST:
            problems.append(f"its seeded cases take {len(shapes)} shapes over {SEEDED_RUNS} seeds, "
                            f"not 2 to {SEEDED_MOST}")
        if not part.fixed_size:
            if not beyond:
                names = ", ".join(f"{k} = {v}" for k, v in p.constants.items()) or "none"
                problems.append(f"no case is beyond every constant ({names}; see beyond_constants) "
                                "and no fixed_size says why")
            if not seeded:
                problems.append("no case is seeded (\"seeded\": True) and no fixed_size says why")
        found.append(Verdict(p.id, f"{p.id}.{part.id}: sizes beyond every constant, and drawn from the seed",
                             not problems, "; ".join(problems)))
    return found


GRIDS = ("float16", "bfloat16")


def on_grid(values: np.ndarray, grid: str) -> np.ndarray:
    """`values` rounded to a 16-bit float format (to nearest, ties to even)."""
    values = np.asarray(values)
    if grid == "float16":
        with np.errstate(over="ignore"):
            return values.astype(np.float16).astype(values.dtype)
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return rounded.view(np.float32).astype(values.dtype)


def off_grid(part, ref, case: dict, grid: str) -> bool:
    """Whether a kernel that keeps values in a 16-bit float format fails this case at the
    part's tolerance: both its inputs read through the format (the answer moves by more
    than the tolerance) and its outputs stored in it (the answer itself is off the grid)."""
    from ..judging import compare

    want = ref.expected(case, part.id)
    floats = [n for n in part.outputs if part.output_dtype(n).startswith("float")]

    def fails(got: dict) -> bool:
        return any(not compare.check_output(n, got[n], want[n], part.atol, part.rtol).passed for n in floats)

    # An input the device holds in 16 bits (p36's bfloat16 operands) is on its grid by
    # design: only the outputs (the sums) can still be kept too narrow there.
    wide = {k for k, v in case["inputs"].items()
            if np.asarray(v).dtype.kind == "f" and part.input_dtype(k, "float32") not in GRIDS}
    rounded = {**case, "inputs": {k: on_grid(v, grid) if k in wide else v for k, v in case["inputs"].items()}}
    with np.errstate(all="ignore"):
        inputs_matter = fails(ref.expected(rounded, part.id)) if wide else True
        return inputs_matter and fails({n: on_grid(want[n], grid) for n in floats})


def _off_grid(p: Puzzle) -> list[Verdict]:
    """Every part with float outputs has a case off the float16 and bfloat16 grids
    (off_grid), so that a kernel keeping products or partial sums in 16 bits fails."""
    try:
        ref = engine.load_reference(p)
    except Exception:  # noqa: BLE001 - _reference reports it
        return []
    found = []
    for part in p.parts:
        if not any(part.output_dtype(n).startswith("float") for n in part.outputs):
            continue
        cases = ref.cases(np.random.default_rng(1), part.id)
        hits = [c["name"] for c in cases if all(off_grid(part, ref, c, g) for g in GRIDS)]
        found.append(Verdict(p.id, f"{p.id}.{part.id}: a case off the float16 and bfloat16 grids at its tolerance",
                             bool(hits), ", ".join(hits[:3]) if hits else "none: a 16-bit kernel would pass"))
    return found


SPECIAL_SEEDS = 20  # seeds over which every special point must be hit by a case there for it
HITS = "hits"  # the reference's function: hits(case, part) -> the special points a case's inputs reach


def special_claims(case: dict) -> set[str]:
    """The special points a case says it is there for (its "special" list)."""
    claimed = case.get("special", ())
    return {claimed} if isinstance(claimed, str) else set(claimed)


def special_hits(ref, case: dict, part: str) -> set[str]:
    """The special points the reference finds in a case's inputs. hits() sees the case's
    parameters and inputs only, never its name or its claims: a case cannot claim a point
    its values do not reach."""
    return set(getattr(ref, HITS)({"params": case.get("params", {}), "inputs": case.get("inputs", {})}, part))


def _special(p: Puzzle, seeds: int = SPECIAL_SEEDS) -> list[Verdict]:
    """Every special point a part declares ([[parts.special]]) is hit, on every one of
    `seeds` seeds, by a case that is there for it: one whose "special" list names it (the
    case's name says what it tests) and whose inputs reach it, by the reference's
    hits(case, part). A case that claims a point its inputs miss, a point nobody declared,
    or a reference with declared points and no hits() is an error."""
    declared = {part.id: {s.name for s in part.special} for part in p.parts}
    try:
        ref = engine.load_reference(p)
    except Exception as exc:  # noqa: BLE001 - _reference reports it
        return [Verdict(p.id, f"{p.id}: special points", False, f"{type(exc).__name__}: {exc}")] \
            if any(declared.values()) else []
    has_hits = callable(getattr(ref, HITS, None))
    found = []
    for part in p.parts:
        points = declared[part.id]
        what = f"{p.id}.{part.id}: every special point hit by a named case on {seeds} seeds"
        if points and not has_hits:
            found.append(Verdict(p.id, what, False, f"the manifest declares special points "
                                 f"({', '.join(sorted(points))}) and {p.reference} has no {HITS}(case, part) "
                                 "to find them in a case's inputs"))
            continue
        problems: dict[str, list[int]] = {}  # a problem -> the seeds it was seen on
        covered: dict[str, set[str]] = {name: set() for name in points}
        for seed in range(1, seeds + 1):
            met: set[str] = set()
            for case in ref.cases(np.random.default_rng(seed), part.id):
                name, claimed = case.get("name", "?"), special_claims(case)
                seen = []
                try:
                    hit = special_hits(ref, case, part.id) if has_hits else set()
                except Exception as exc:  # noqa: BLE001 - a broken hits() is what this check reports
                    hit = set()
                    seen.append(f"{HITS}() fails on '{name}': {type(exc).__name__}: {exc}")
                if hit - points:
                    seen.append(f"{HITS}() names points the manifest does not declare: "
                                f"{', '.join(sorted(hit - points))}")
                if claimed - points:
                    seen.append(f"case '{name}' claims points the manifest does not declare: "
                                f"{', '.join(sorted(claimed - points))}")
                if claimed and case.get("seeded"):
                    seen.append(f"case '{name}' is seeded: its name says its size, not the special point "
                                "it is there for")
                elif claimed - hit:
                    seen.append(f"case '{name}' claims {', '.join(sorted(claimed - hit))} and its inputs do not hit it")
                else:
                    for point in claimed & points:
                        covered[point].add(name)
                    met |= claimed & points
                for problem in seen:
                    problems.setdefault(problem, []).append(seed)
            for point in sorted(points - met):
                problems.setdefault(f"no case is there for '{point}' and hits it", []).append(seed)
        if not points and not problems:
            continue
        said = [f"{problem} ({_seeds(at, seeds)})" for problem, at in problems.items()]
        shown = "; ".join(f"{point}: {', '.join(sorted(names))}" for point, names in sorted(covered.items()))
        found.append(Verdict(p.id, what, not problems, "; ".join(said[:6]) if problems else shown))
    return found


def _seeds(seen: list[int], of: int) -> str:
    """'every seed', 'seed 3', 'seeds 3, 7 and 2 more'."""
    if len(seen) == of:
        return "every seed"
    if len(seen) == 1:
        return f"seed {seen[0]}"
    return "seeds " + ", ".join(map(str, seen[:3])) + (f" and {len(seen) - 3} more" if len(seen) > 3 else "")


def _drift(p: Puzzle) -> list[Verdict]:
    """Each committed skeleton is the one its solution derives, in either language; and
    every comment the skeleton shows is there in Korean too."""
    wrong, untranslated = [], []
    for learner, solution in zip(p.learner_files(), p.solution_files()):
        try:
            if skeleton.language_of(learner, solution) is None:
                wrong.append(learner.name)
            lines = skeleton.untranslated(solution.read_text(encoding="utf-8"))
            if lines:
                untranslated.append(f"{solution.name} line{'s' if len(lines) > 1 else ''} "
                                    + ", ".join(map(str, lines)))
        except (OSError, skeleton.MarkerError) as exc:
            wrong.append(f"{solution.name}: {exc}")
    return [Verdict(p.id, f"{p.id}: skeletons match their solutions", not wrong, ", ".join(wrong)),
            Verdict(p.id, f"{p.id}: every comment of the skeletons in Korean (#ko)", not untranslated,
                    "; ".join(untranslated))]


def _reference(p: Puzzle) -> list[Verdict]:
    """Every case named and labelled; shapes that don't depend on the seed, but for the
    cases marked `seeded` (whose sizes are drawn from it, from a few candidates so that
    builds are reused); every output expected."""
    try:
        ref = engine.load_reference(p)
        plans = []
        problems = []
        for seed in (1, 2):
            rng = np.random.default_rng(seed)
            parts = []
            for part in p.parts:
                drawn = ref.cases(rng, part.id)
                cases = [c for c in drawn if not c.get("seeded")]
                names = [c.get("name", "") for c in drawn]
                if not all(names) or len(set(names)) != len(names):
                    problems.append(f"{part.id}: case names must be given and differ")
                unknown = sorted(set(part.graph_cases) - set(names))
                if unknown:
                    problems.append(f"{part.id}: graph_cases names no case: {', '.join(unknown)}")
                if part.graph_cases and any(c.get("seeded") for c in drawn if c.get("name") in part.graph_cases):
                    problems.append(f"{part.id}: graph_cases names a seeded case (a new MAX compile every seed)")
                for c in drawn:
                    label = c.get("label", {})
                    if not all(label.get(lang) for lang in LANGUAGES):
                        problems.append(f"{part.id}: case '{c.get('name')}' needs label.en and label.ko")
                parts.append((part, cases, [ref.expected(c, part.id) for c in cases]))
            plans.append(launcher.make_plan(p, parts))
        gen = [launcher.generate(plan, "gpu") for plan in plans]
        if gen[0] != gen[1]:
            problems.append("the cases' shapes change with the seed: every seed would compile anew")
    except Exception as exc:  # noqa: BLE001 - any failure of the reference is what this check reports
        problems = [f"{type(exc).__name__}: {exc}"]
    return [Verdict(p.id, f"{p.id}: reference cases named, shapes fixed, outputs expected", not problems,
                    "; ".join(sorted(set(problems))))]
