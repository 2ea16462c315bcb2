"""The simulator against the GPU: does each see the same thing in the same kernel?

Every wrong kernel of tests/wrong and every right kernel of tests/right is checked twice,
on the simulator alone (`devices=("sim",)`) and on the GPU alone (`devices=("gpu",)`, with
compute-sanitizer as a learner's check runs it), and the two verdicts are compared:

- a wrong kernel is *caught* by a device that does not pass it; both catching it (or both
  missing it, where neither is what must catch it) is *agree*, one alone is *simulator only*
  or *GPU only*. That is no fault where the kernel's wrong.toml says why only that device
  can see it (`sim_only = "..."`, `gpu_only = "..."`); otherwise it is flagged, as is a
  stated why that the run no longer shows (both see it now);
- a right kernel must pass on both: a device that fails it is flagged, whatever it says.

Without a GPU the GPU column says "no GPU" and nothing is compared: the simulator column
alone is still a record. The result is a table per puzzle (agree / simulator only / GPU
only / not compared, and why), as JSON and as Markdown for docs/verification.md.

tools/differential.py is its command line. A GPU check holds one of `per_gpu` slots of
its GPU for the whole check (build, plain runs, compute-sanitizer); with several GPUs the
kernels are dealt out to one worker process per GPU (CUDA_VISIBLE_DEVICES), each with its
share of the cores for the simulator's checks.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..check import engine, scheduler
from ..child.processes import Children
from ..core import toolchain
from ..core.results import NOT_RAN, PuzzleResult, Status
from ..course import catalog
from . import curriculum

SEED = 5  # the seed every wrong kernel's expectations were written for (curriculum.run_wrong)
PER_GPU = 4  # GPU checks at once on one GPU
CHECK_LIMIT = 900.0  # seconds one check may take, build and compute-sanitizer included

# What a side says.
CAUGHT, MISSED = "caught", "missed"  # a wrong kernel
PASS, FAIL = "pass", "fail"  # a right kernel
NOT_RUN, NO_GPU, ERROR = "not run", "no GPU", "error"

# How the two sides compare.
AGREE, SIM_ONLY, GPU_ONLY, NOT_COMPARED = "agree", "simulator only", "GPU only", "not compared"


@dataclass
class Side:
    """One device's verdict on one kernel."""

    verdict: str  # caught / missed (wrong), pass / fail (right), not run, no GPU, error
    status: str = ""  # the status the device gave the first part it failed (pass: none)
    detail: str = ""  # findings, reasons, failing cases: what it saw
    seconds: float = 0.0


@dataclass
class Row:
    """One kernel on both sides, and how they compare."""

    id: str
    puzzle: str
    kind: str  # "wrong" or "right"
    sim: Side
    gpu: Side
    agreement: str = NOT_COMPARED
    why: str = ""  # the stated why of a one-sided verdict, or why nothing was compared
    flag: str = ""  # what is wrong with this row ("" when nothing is)


@dataclass
class Table:
    """The rows, and per puzzle how many of each agreement."""

    rows: list[Row] = field(default_factory=list)
    gpu: str = NO_GPU  # the GPU the column ran on
    seconds: float = 0.0
    sanitize: str = "auto"

    def flagged(self) -> list[Row]:
        return [r for r in self.rows if r.flag]

    def per_puzzle(self) -> dict[str, dict[str, int]]:
        """Per puzzle: its kernels, how many of each agreement, how many flagged, and per side
        the wrong kernels it caught and the right kernels it passed."""
        counts: dict[str, dict[str, int]] = {}
        for row in self.rows:
            mine = counts.setdefault(row.puzzle, dict.fromkeys(COUNTS, 0))
            mine["kernels"] += 1
            mine[row.agreement] += 1
            mine["flagged"] += bool(row.flag)
            mine[row.kind] += 1
            for name, side in (("sim", row.sim), ("gpu", row.gpu)):
                mine[f"{name} {row.kind} ok"] += side.verdict in (CAUGHT, PASS)
        return dict(sorted(counts.items(), key=lambda kv: _order(kv[0])))


COUNTS = ("kernels", AGREE, SIM_ONLY, GPU_ONLY, NOT_COMPARED, "flagged", "wrong", "right",
          "sim wrong ok", "gpu wrong ok", "sim right ok", "gpu right ok")


def _order(pid: str) -> tuple[int, str]:
    return (int(pid[1:]), pid) if pid[1:].isdigit() else (10**9, pid)


# ---------------------------------------------------------------------------
# One side of one kernel
# ---------------------------------------------------------------------------


def _side(result: PuzzleResult, device: str, wrong: bool) -> Side:
    """What `device` made of a kernel: the statuses of its parts there (a compile error of
    the build for that device is that device's verdict too)."""
    got = [(part.id, dev) for part in result.parts for name, dev in part.kernels.items() if name == device]
    ran = [(pid, dev) for pid, dev in got if dev.status not in NOT_RAN]
    if not ran:
        if result.status in (Status.COMPILE_ERROR, Status.CRASH, Status.TIMEOUT):  # before any device ran
            return Side(CAUGHT if wrong else FAIL, result.status.value, f"puzzle {result.status.value}",
                        result.seconds)
        why = "; ".join(str(m) for _, dev in got for m in dev.reasons) or f"puzzle {result.status.value}"
        return Side(NOT_RUN, got[0][1].status.value if got else "", why, result.seconds)
    shown, first = [], Status.PASS  # the first failing part's status
    for pid, dev in ran:
        if dev.status == Status.PASS:
            continue
        first = dev.status if first == Status.PASS else first
        kinds = sorted({f"{f.kind}@{f.line}" if f.line else f.kind for f in dev.findings or []})
        said = {f.kind for f in dev.findings or []} | {"sim_findings"}  # reasons that only point at findings
        reasons = sorted({m.key.split(".")[-1] for m in dev.reasons} - said)
        cases = [c.name for c in dev.cases if not c.passed][:2]
        shown.append(f"{pid}: {dev.status.value}" + "".join(f" [{', '.join(x)}]" for x in (kinds, reasons, cases) if x))
    failed = first != Status.PASS
    verdict = (CAUGHT if failed else MISSED) if wrong else (FAIL if failed else PASS)
    return Side(verdict, first.value, "; ".join(shown), result.seconds)


def check_side(repo: Path, kernel, device: str, sanitize: str, seed: int = SEED,
               limit: float = CHECK_LIMIT) -> Side:
    """One kernel (wrong or right) on one device alone, in a sandbox of its own. A check
    still going after `limit` seconds is stopped, children and all, and is an error: a check
    must end on its own (its run limit), and one that does not is what this table is for."""
    wrong = isinstance(kernel, curriculum.WrongKernel)
    started = time.perf_counter()
    children = Children()
    watchdog = threading.Timer(limit, children.cancel)
    watchdog.daemon = True
    watchdog.start()
    try:
        with curriculum.Sandbox(repo) as sandbox:
            puzzle = sandbox.puzzle(kernel.puzzle, kernel.dir)
            options = engine.Options(seed=seed, part=kernel.part, devices=(device,), cache=False,
                                     quick=device == "sim" or sanitize == "off",
                                     sanitize="off" if device == "sim" else sanitize,
                                     run_timeout=getattr(kernel, "run_timeout", None))
            side = _side(engine.check_puzzle(puzzle, options, children=children), device, wrong)
    except Exception as exc:  # noqa: BLE001 - one kernel's trouble is one row of the table
        side = Side(ERROR, "", f"{type(exc).__name__}: {exc}")
    finally:
        watchdog.cancel()
        children.kill_all()
    if children.cancelled.is_set():
        side = Side(ERROR, "", f"still going after {limit:g} s: stopped by the differential check")
    side.seconds = round(time.perf_counter() - started, 2)
    return side


# ---------------------------------------------------------------------------
# Comparing the two
# ---------------------------------------------------------------------------


def compare(kernel, sim: Side, gpu: Side) -> Row:
    """How the two sides compare, and whether the kernel's stated expectation allows it."""
    wrong = isinstance(kernel, curriculum.WrongKernel)
    row = Row(kernel.id, kernel.puzzle, "wrong" if wrong else "right", sim, gpu)
    for side, name in ((sim, "the simulator"), (gpu, "the GPU")):
        if side.verdict in (NOT_RUN, NO_GPU, ERROR):
            row.agreement = NOT_COMPARED
            row.why = f"{name}: {side.verdict}" + (f" ({side.detail})" if side.detail else "")
            if side.verdict == ERROR:
                row.flag = f"{name} could not check it"
            return row
    if not wrong:
        row.agreement = AGREE if sim.verdict == gpu.verdict else SIM_ONLY if sim.verdict == FAIL else GPU_ONLY
        failing = [n for n, s in (("the simulator", sim), ("the GPU", gpu)) if s.verdict == FAIL]
        if failing:
            row.flag = f"a right kernel fails on {' and '.join(failing)}"
        return row
    caught = (sim.verdict == CAUGHT, gpu.verdict == CAUGHT)
    row.agreement = {(True, True): AGREE, (False, False): AGREE, (True, False): SIM_ONLY,
                     (False, True): GPU_ONLY}[caught]
    stated = {SIM_ONLY: kernel.sim_only, GPU_ONLY: kernel.gpu_only}
    if row.agreement in stated:
        row.why = stated[row.agreement]
        if not row.why:
            key = "sim_only" if row.agreement == SIM_ONLY else "gpu_only"
            row.flag = f"{row.agreement}, and its wrong.toml says no why ({key} = \"...\")"
    elif kernel.sim_only or kernel.gpu_only:
        said = "sim_only" if kernel.sim_only else "gpu_only"
        row.flag = f"its wrong.toml says {said}, but both devices " + ("see it" if all(caught) else "miss it")
    elif not any(caught) and any(e.device in ("sim", "gpu") and e.status != "pass" for e in kernel.expect):
        # only where an expectation says a device catches it: one caught by the PTX rule alone, say,
        # expects both devices to pass it (p35/aligned_without_claim)
        row.flag = "neither device catches it"
    return row


# ---------------------------------------------------------------------------
# Running every kernel
# ---------------------------------------------------------------------------


def kernels(chosen: list[str], repo: Path | None = None) -> list:
    """The wrong and right kernels of the chosen puzzles ("p24") or ids ("p24/tree_in_shared");
    all of them when nothing is chosen."""
    puzzles = catalog.all_puzzles(repo)
    found = [k for p in puzzles for k in (*curriculum.wrong_kernels(p, repo), *curriculum.right_kernels(p, repo))]
    if not chosen:
        return found
    known = {k.id for k in found} | {p.id for p in puzzles}
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise ValueError(f"no such puzzle or kernel: {', '.join(unknown)}")
    return [k for k in found if k.id in chosen or k.puzzle in chosen]


def run(chosen: list, *, per_gpu: int = PER_GPU, jobs: int | None = None, sanitize: str = "auto",
        use_gpu: bool = True, limit: float = CHECK_LIMIT, repo: Path | None = None,
        done: Callable[[Row], None] | None = None) -> Table:
    """Check every kernel on both sides: the simulator's checks `jobs` at a time (the cores'
    share), the GPU's `per_gpu` at a time on this process's GPU (none with `use_gpu` off);
    one row per kernel, in order."""
    started = time.perf_counter()
    repo = repo or catalog.root()
    gpu = toolchain.gpu() if use_gpu else None
    slots = threading.BoundedSemaphore(max(1, per_gpu))
    sides: dict[tuple[int, str], Side] = {}
    finished = threading.Lock()
    rows: dict[int, Row] = {}

    def one(n: int, device: str) -> None:
        kernel = chosen[n]
        if device == "gpu" and gpu is None:
            side = Side(NO_GPU)
        elif device == "gpu":
            with slots:
                side = check_side(repo, kernel, "gpu", sanitize, limit=limit)
        else:
            side = check_side(repo, kernel, "sim", sanitize, limit=limit)
        with finished:
            sides[(n, device)] = side
            other = sides.get((n, "gpu" if device == "sim" else "sim"))
            if other is not None:
                sim, on_gpu = (side, other) if device == "sim" else (other, side)
                rows[n] = compare(kernel, sim, on_gpu)
                if done:
                    done(rows[n])

    tasks = [lambda n=n, d=d: one(n, d) for n in range(len(chosen)) for d in ("gpu", "sim")]
    width = (jobs or scheduler.default_jobs()) + (max(1, per_gpu) if gpu else 0)
    scheduler.run_all(tasks, width)
    table = Table([rows[n] for n in range(len(chosen))], f"{gpu.name} ({gpu.target})" if gpu else NO_GPU,
                  round(time.perf_counter() - started, 1), sanitize)
    return table


# ---------------------------------------------------------------------------
# Writing it down
# ---------------------------------------------------------------------------


def to_json(table: Table) -> str:
    return json.dumps({"gpu": table.gpu, "sanitize": table.sanitize, "seconds": table.seconds,
                       "per_puzzle": table.per_puzzle(), "flagged": len(table.flagged()),
                       "rows": [asdict(r) for r in table.rows]}, indent=1, ensure_ascii=False)


def from_json(text: str) -> Table:
    data = json.loads(text)
    rows = [Row(**{**r, "sim": Side(**r["sim"]), "gpu": Side(**r["gpu"])}) for r in data["rows"]]
    return Table(rows, data.get("gpu", NO_GPU), data.get("seconds", 0.0), data.get("sanitize", "auto"))


def merge(tables: list[Table], *, one_after_another: bool = False) -> Table:
    """Several tables as one, rows in kernel order: a worker process's per GPU (run side by
    side: the time is the longest's), or recorded runs (`one_after_another`: the times add
    up). A kernel in more than one table keeps its row from the last: a later run's."""
    latest = {r.id: r for t in tables for r in t.rows}
    rows = sorted(latest.values(), key=lambda r: (_order(r.puzzle), r.kind, r.id))
    gpus = sorted({t.gpu for t in tables})
    times = [t.seconds for t in tables]
    return Table(rows, " + ".join(gpus), (sum(times) if one_after_another else max(times, default=0.0)),
                 tables[0].sanitize if tables else "auto")


def recompare(table: Table, repo: Path | None = None) -> Table:
    """A recorded table judged again against today's wrong.toml and right.toml: the verdicts
    a GPU gave stay what they were, the reasons (and a kernel moved from tests/right to
    tests/wrong) are the curriculum's now. A kernel no longer there is left out."""
    known = {k.id: k for k in kernels([], repo)}
    as_wrong = {PASS: MISSED, FAIL: CAUGHT}
    as_right = {MISSED: PASS, CAUGHT: FAIL}
    rows = []
    for row in table.rows:
        kernel = known.get(row.id)
        if kernel is None:
            continue
        turn = as_wrong if isinstance(kernel, curriculum.WrongKernel) else as_right
        sim, gpu = (Side(turn.get(s.verdict, s.verdict), s.status, s.detail, s.seconds) for s in (row.sim, row.gpu))
        rows.append(compare(kernel, sim, gpu))
    return Table(rows, table.gpu, table.seconds, table.sanitize)


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def to_markdown(table: Table) -> str:
    """The agreement table per puzzle (and per side, the wrong kernels caught and the right
    ones passed), then every row that is not plain agreement, but for a GPU column that is
    only "no GPU": its verdicts and why (the stated one, or what is flagged)."""
    lines = [f"Simulator against GPU: {len(table.rows)} kernels, GPU column: {table.gpu} "
             f"(compute-sanitizer: {table.sanitize}), {table.seconds:g} s, "
             f"{len(table.flagged())} flagged.", "",
             "| puzzle | kernels | agree | simulator only | GPU only | not compared | flagged "
             "| wrong caught: sim / GPU | right passed: sim / GPU |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total = dict.fromkeys(COUNTS, 0)
    per_puzzle = table.per_puzzle()
    for pid, counts in [*per_puzzle.items(), ("all", total)]:
        if pid == "all":
            for counted in per_puzzle.values():
                for key in COUNTS:
                    total[key] += counted[key]
        gpu = table.gpu != NO_GPU
        wrong = f"{counts['sim wrong ok']} / {counts['gpu wrong ok'] if gpu else '–'} of {counts['wrong']}"
        right = f"{counts['sim right ok']} / {counts['gpu right ok'] if gpu else '–'} of {counts['right']}"
        lines.append(f"| {pid} | {counts['kernels']} | {counts[AGREE]} | {counts[SIM_ONLY]} | {counts[GPU_ONLY]} | "
                     f"{counts[NOT_COMPARED]} | {counts['flagged']} | {wrong} | {right} |")
    shown = [r for r in table.rows if r.flag or (r.agreement != AGREE and r.gpu.verdict != NO_GPU)]
    if shown:
        lines += ["", "| kernel | simulator | GPU | agreement | why |", "|---|---|---|---|---|"]
        for r in shown:
            why = (f"**{r.flag}**" + (f": {r.why}" if r.why else "")) if r.flag else r.why
            lines.append(f"| {r.id}{' (right)' if r.kind == 'right' else ''} | {_cell(r.sim.verdict)} | "
                         f"{_cell(r.gpu.verdict)} | {r.agreement} | {_cell(why)} |")
    return "\n".join(lines) + "\n"
