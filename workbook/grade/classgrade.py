"""Grading a class: every submission x puzzle a task on Ray, on this machine or a cluster.

Ray (an optional extra: `pip install -e ".[class]"`) is the engine: a local Ray
is started by the command and stopped when it ends (nothing to set up), or an
instructor's cluster is used with `--address` (started with Ray's own tools on
Slurm or Kubernetes). Each task is `grading.grade_one`: plain data in (the
learner files' bytes, read here by the grader with grading's own checks, so a
node needs no access to the submission's folder) and plain data out (JSON
text); no workbook object is pickled across machines. A node whose workbook,
toolchain or puzzle differs from the grader's says so instead of grading.

What a task may not do to the class:
- hang it: every task has a deadline (WORKBOOK_TASK_TIMEOUT, by default the
  check's budget and two minutes), past which it is cancelled with force (its
  worker killed, and with it the sandboxed processes it started) and graded
  `timeout`, saying so;
- stop it: a worker that dies (the node's memory, a lost node) is retried once
  by Ray, then the cell is graded `error`, saying so. A genuine verdict is an
  answer, never an exception, so it is never retried.
Tasks ask Ray for one CPU each; where the cluster has GPUs, each also asks for
WORKBOOK_GPU_SHARE of one (1 by default; a fraction lets several tasks compile
side by side on one GPU's host while the GPU runs themselves take turns).
At most `jobs` tasks are in flight at once (by default as many as can run), so
a task's deadline counts from about when it starts.

A cell whose files were refused or missing needs no task: the grader grades it
at once. A cell graded before with the same inputs (workbook/grade/gradestore.py) is
taken as it was; when every cell is, Ray is not even started.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core import exitcodes, settings, toolchain
from ..core.i18n import Msg, WorkbookError, msg
from ..course import catalog, manifest
from . import gradestore, grading
from .roster import Submission

OBJECT_STORE_BYTES = 128 << 20  # the answers are kilobytes: Ray's default takes 30% of memory
POLL = 0.5  # seconds between two looks at the tasks' deadlines
RETRIES = 1  # a worker that dies is tried once more (a genuine verdict is never retried)
RAY_PIN = "ray==2.60.0"
RAY_LOG = "ray.log"  # in the output folder: what Ray itself says while the class runs


@dataclass
class Cell:
    """One submission x one puzzle."""

    row: int
    pid: str
    taken: dict[str, str] = field(default_factory=dict)  # file -> taken | missing | refused
    files: dict[str, bytes] = field(default_factory=dict, repr=False)  # the bytes sent to the task
    key: str = ""  # its kept grade's digest
    answer: dict | None = None  # grading.grade_one's answer: {"puzzle": ..., "sandbox", "seconds", "node"}
    source: str = ""  # task | kept | grader (files refused: no task) | failed (the task gave no grade)
    failure: str = ""  # failed: error | timeout

    @property
    def puzzle(self) -> dict:
        return (self.answer or {}).get("puzzle") or {}


@dataclass
class Row:
    """One submission of the class."""

    name: str
    path: Path
    cells: dict[str, Cell] = field(default_factory=dict)
    error: Msg | None = None  # not a folder: nothing of it could be graded
    told: bool = False  # on_row was called

    def done(self) -> bool:
        return self.error is not None or all(c.answer is not None for c in self.cells.values())

    @property
    def seconds(self) -> float:
        return sum(float(c.answer.get("seconds") or 0) for c in self.cells.values() if c.answer)

    def sandbox(self, default: str = "") -> str:
        """What its code ran in (a task's word; `default`, the grader's, where no task ran)."""
        return next((c.answer["sandbox"] for c in self.cells.values() if c.answer and c.answer.get("sandbox")),
                    default)


@dataclass
class ClassOptions:
    seed: int | None = None
    devices: tuple[str, ...] = ()
    unsandboxed: bool = False
    address: str | None = None  # None: a local Ray, started and stopped here
    jobs: int | None = None  # tasks at once (None: as many as the cluster runs)


@dataclass
class ClassRun:
    """What a class run did: the rows, and how (for the summary and docs/performance.md)."""

    rows: list[Row]
    ids: list[str]
    seconds: float = 0.0
    tasks: int = 0  # cells graded by a task in this run
    kept: int = 0  # cells taken from an earlier run
    slots: int = 0  # tasks at once
    gpus: float = 0.0  # GPUs each task asked for
    where: Msg = field(default_factory=lambda: msg("class.no_tasks"))  # a local Ray, a cluster, or none
    sandbox: str = ""  # what the grader's own sandbox is (a task says its own)


def _ray(cluster: bool = False):
    """Ray, imported now (it is optional), or a message saying how to install it. Ray reads
    its settings as it is imported: they are set before (`cluster`: one is reached)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no prompt, nothing sent
    if cluster:
        _token_if_any()
    # A task whose worker Ray's memory monitor killed (the node ran low) is tried as often as one
    # whose worker died otherwise, not for ever (Ray's default for that cause).
    os.environ.setdefault("RAY_task_oom_retries", str(RETRIES))
    try:
        import ray
    except ImportError:
        raise WorkbookError("class.no_ray", exit_code=exitcodes.TOOLCHAIN, python=sys.executable, pin=RAY_PIN) from None
    return ray


def _token_if_any() -> None:
    """Connect with Ray's token where this user has one and RAY_AUTH_MODE says nothing, as
    `ray start` does: a cluster started where a token exists asks for it (one that does not
    ignores it)."""
    if os.environ.get("RAY_AUTH_MODE"):
        return
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(path):
        os.environ["RAY_AUTH_MODE"] = "token"


def _task(files: dict[str, bytes], pid: str, options: dict) -> str:
    """What a Ray worker runs: one grade, as JSON text. Whatever happens in it is an answer
    (an error saying what), and nothing it started outlives it."""
    from ..child import processes
    from ..core import sweep

    scratch = None
    try:
        scratch = sweep.temp_root()
        return json.dumps(grading.grade_one(files, pid, options))
    except BaseException as exc:  # noqa: BLE001 - a cancel, a bug: an answer all the same
        return json.dumps(grading._error("class.task_failed", error=f"{type(exc).__name__}: {exc}"[:500]))
    finally:
        processes.kill_everything()
        if scratch is not None:
            sweep.release(scratch)


def _failed(cell: Cell, puzzle: manifest.Puzzle, failure: str, why: Msg) -> None:
    """A cell the grader grades itself because its task gave no grade: honest about it."""
    cell.source, cell.failure = "failed", failure
    cell.answer = {"puzzle": {"id": puzzle.id, "title": puzzle.title["en"],
                              "status": "timeout" if failure == "timeout" else "not_run", "kind": puzzle.kind,
                              "parts": [], "problem": {"key": why.key, "text": why.text("en"), "values": why.values},
                              "files": cell.taken, "devices": {}, "max_abs_error": None},
                   "sandbox": "", "seconds": 0.0, "node": ""}


class ClassGrader:
    """One class run: the cells, the kept grades, the tasks."""

    def __init__(self, subs: list[Submission], ids: list[str], base: Path, out: Path, options: ClassOptions,
                 on_cell: Callable[[Row, Cell], None] | None = None, on_row: Callable[[Row], None] | None = None,
                 sandbox: str = ""):
        self.ids, self.base, self.out, self.options = ids, base, out, options
        self.store = gradestore.Store(out)
        self.on_cell, self.on_row = on_cell, on_row
        self.puzzles = {pid: catalog.load(pid, base) for pid in ids}
        self.definitions = {pid: grading.definitions_digest(base, pid) for pid in ids}
        self.settings = grading.task_settings()
        self.rows = [Row(sub.name, sub.path) for sub in subs]
        self.run = ClassRun(self.rows, ids, sandbox=sandbox)
        self.timeout = settings.task_timeout()
        self.share = 1.0 / settings.gpu_share()  # of one GPU, per task: N tasks share a GPU

    # --- the cells ---------------------------------------------------------------

    def _wants_gpu(self) -> bool:
        return not self.options.devices or "gpu" in self.options.devices

    def read(self, gpu: bool) -> list[Cell]:
        """Read every submission's files (the grader's checks), grade at once what needs no
        task, take what was graded before; the cells left for tasks."""
        todo: list[Cell] = []
        for index, row in enumerate(self.rows):
            if not row.path.is_dir():
                row.error = msg("grade.not_a_folder", path=str(row.path))
                self._row_done(row)
                continue
            for pid in self.ids:
                cell = row.cells[pid] = Cell(index, pid)
                files, cell.taken, problem = grading.learner_files(row.path, pid, self.puzzles[pid].edit)
                if problem is not None:
                    cell.source, cell.answer = "grader", grading.refused_answer(self.puzzles[pid], cell.taken, problem)
                    continue
                cell.files = files
                cell.key = gradestore.key(pid, self.definitions[pid], files, seed=self.options.seed,
                                          devices=self.options.devices, gpu=gpu,
                                          unsandboxed=self.options.unsandboxed, settings=self.settings)
                kept = self.store.get(cell.key, pid)
                if kept is not None:
                    cell.source, cell.answer = "kept", kept
                    self.run.kept += 1
                else:
                    todo.append(cell)
        for row in self.rows:  # told in order, once every cell known so far is in
            if row.error is None:
                for cell in row.cells.values():
                    if cell.answer is not None:
                        self._cell_done(row, cell)
        return todo

    def _cell_done(self, row: Row, cell: Cell) -> None:
        cell.files = {}
        if self.on_cell:
            self.on_cell(row, cell)
        if row.done():
            self._row_done(row)

    def _row_done(self, row: Row) -> None:
        if row.told:
            return
        row.told = True
        if self.on_row:
            self.on_row(row)

    # --- Ray ---------------------------------------------------------------------

    def grade(self) -> ClassRun:
        started = time.perf_counter()
        local = self.options.address is None
        if local:  # the GPU question is answered here, so a rerun with nothing new starts no Ray
            gpu = self._wants_gpu() and toolchain.gpu() is not None
            todo = self.read(gpu)
            if todo:
                with self._connected() as ray:
                    self._fan_out(ray, todo, gpu)
        else:
            with self._connected() as ray:
                gpu = self._wants_gpu() and not settings.no_gpu() and ray.cluster_resources().get("GPU", 0) > 0
                todo = self.read(gpu)
                if todo:
                    self._fan_out(ray, todo, gpu)
        self.run.seconds = time.perf_counter() - started
        return self.run

    @contextlib.contextmanager
    def _connected(self):
        """Ray, started here or reached, and left as found. What Ray prints of its own on the
        driver's standard output (a worker that died, say), which is the command's JSON
        lines, goes into ray.log in the output folder instead."""
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.out / RAY_LOG, "a", encoding="utf-8") as log, contextlib.redirect_stdout(log):
            with self._ray_session() as ray:
                yield ray

    @contextlib.contextmanager
    def _ray_session(self):
        ray = _ray(cluster=self.options.address is not None)
        quiet = {"log_to_driver": False, "logging_level": logging.ERROR, "include_dashboard": False}
        try:
            if self.options.address is None:
                jobs = self.options.jobs or settings.cores()
                ray.init(address="local", num_cpus=jobs, object_store_memory=OBJECT_STORE_BYTES, **quiet)
                self.run.where = msg("class.where_local", cpus=jobs)
            else:
                ray.init(address=self.options.address, **quiet)
                self.run.where = msg("class.where_cluster", address=self.options.address)
        except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
            with contextlib.suppress(Exception):
                ray.shutdown()
            raise WorkbookError("class.no_cluster", exit_code=exitcodes.TOOLCHAIN,
                                address=self.options.address or "local", why=str(exc).splitlines()[0][:300]) from None
        try:
            yield ray
        finally:
            ray.shutdown()  # a local Ray: its processes stop; a cluster: this driver leaves it

    def _fan_out(self, ray, todo: list[Cell], gpu: bool) -> None:
        resources = ray.cluster_resources()
        cpus = int(resources.get("CPU", 1)) or 1
        gpus = resources.get("GPU", 0) if gpu else 0
        share = self.share if gpus else 0.0
        slots = cpus if not share else max(1, min(cpus, int(gpus / share + 1e-9)))
        if self.options.jobs:
            slots = min(slots, self.options.jobs)
        self.run.slots, self.run.gpus = slots, share
        remote = ray.remote(_task).options(num_cpus=1, num_gpus=share, max_retries=RETRIES, retry_exceptions=False)
        common = {"seed": self.options.seed, "devices": list(self.options.devices),
                  "unsandboxed": self.options.unsandboxed, "settings": self.settings}
        queue = deque(todo)
        pending: dict = {}  # ObjectRef -> (cell, deadline)
        try:
            while queue or pending:
                while queue and len(pending) < slots:
                    cell = queue.popleft()
                    ref = remote.remote(cell.files, cell.pid, {**common, "definitions": self.definitions[cell.pid]})
                    pending[ref] = (cell, time.monotonic() + self.timeout)
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL)
                for ref in ready:
                    cell, _ = pending.pop(ref)
                    self._answered(ray, ref, cell)
                now = time.monotonic()
                for ref, (cell, deadline) in list(pending.items()):
                    if now >= deadline:
                        del pending[ref]
                        with contextlib.suppress(Exception):
                            ray.cancel(ref, force=True)
                        _failed(cell, self.puzzles[cell.pid], "timeout",
                                msg("class.task_timeout", seconds=round(self.timeout)))
                        self._finish(cell)
        finally:
            for ref in pending:  # interrupted: nothing of ours runs on after the command
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)

    def _answered(self, ray, ref, cell: Cell) -> None:
        puzzle = self.puzzles[cell.pid]
        try:
            text = ray.get(ref)
            answer = json.loads(text) if isinstance(text, str) else None
        except ray.exceptions.RayError as exc:
            why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            _failed(cell, puzzle, "error", msg("class.task_died", why=why[:300], tries=RETRIES + 1))
        except ValueError:
            _failed(cell, puzzle, "error", msg("class.bad_answer"))
        else:
            if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
                error = answer["error"]
                why = Msg(str(error.get("key", "class.bad_answer")), dict(error.get("values") or {}))
                _failed(cell, puzzle, "error", why)
            elif gradestore.valid(answer, cell.pid):
                cell.source, cell.answer = "task", answer
                self.run.tasks += 1
                self.store.put(cell.key, answer)
            else:
                _failed(cell, puzzle, "error", msg("class.bad_answer"))
        self._finish(cell)

    def _finish(self, cell: Cell) -> None:
        self._cell_done(self.rows[cell.row], cell)


def grade_class(subs: list[Submission], ids: list[str], base: Path, out: Path, options: ClassOptions, *,
                on_cell: Callable[[Row, Cell], None] | None = None, on_row: Callable[[Row], None] | None = None,
                sandbox: str = "") -> ClassRun:
    """Grade every submission on every puzzle of `ids`; `on_cell` and `on_row` are told as
    each cell and each submission is graded (in no set order). `sandbox`: the grader's word
    for where code runs, for a submission no task ran."""
    return ClassGrader(subs, ids, base, out, options, on_cell, on_row, sandbox).grade()
