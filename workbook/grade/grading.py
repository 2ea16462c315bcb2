"""Grading submitted work (`workbook grade`): nothing in a submission is trusted.

A submission is a learner's workbook folder (a repository, an unpacked
archive). Pointing WORKBOOK_ROOT at it would let it decide its own grade (its
puzzle.toml can say atol = 1e30, its reference.py runs as the grader). Here:

- the puzzles (manifests, references, tolerances, solutions, the launchers
  generated from them) come from the installed workbook, the folder above this
  package, whatever WORKBOOK_ROOT says;
- from the submission, only the files each puzzle lists under `edit` are
  taken: regular files at that exact place in its puzzle folder (no link, on
  the way or at the end), UTF-8 text of at most learner.MAX_BYTES. Each is
  copied into a workspace of the grader's own; nothing else of the submission
  is read;
- every puzzle is graded (or the ones asked for): a file that is missing or
  refused fails that puzzle, saying why; an untouched skeleton is not_started,
  which fails too;
- the files taken are read by the source guard (workbook/grade/guard.py) before
  anything of the puzzle is compiled: a construct no puzzle needs (FFI,
  `@export`, inline assembly, file or process APIs, a module no puzzle
  imports) fails the puzzle with its file and line, and nothing of it is
  compiled or run;
- learner code runs in the sandbox (workbook/child/sandbox.py), with the limits of
  workbook/child/limits.py, its whole tree bounded by its containment
  (workbook/child/containment.py); the compiler runs outside it, on the copied files;
- each puzzle's check has one wall-clock budget (WORKBOOK_CHECK_BUDGET) that
  bounds every wait in it, the compiler's and a wait for a GPU too; its GPU runs
  own their GPU (workbook/child/gpulease.py);
- a refused file is told in the grader's words (grade.*), not the learner's.

The result of one submission is a `Grade`: plain data, drawn as a table or
as one line of JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..check import engine, verdicts
from ..child import sandbox
from ..child.processes import Children
from ..core import settings, toolchain
from ..core.i18n import Msg, WorkbookError, msg, t
from ..core.results import PuzzleResult, Status, to_dict
from ..course import catalog, learner, manifest
from . import guard

# The settings that change a verdict, sent with every task of a class run so that every node
# grades as the grader asked (the paths among verdicts.SETTINGS are each node's own).
# Grading's own: whether the source guard reads the files (a test of the walls behind it turns
# it off), how many graded runs share a GPU, and one check's budget.
TASK_SETTINGS = (*(name for name in verdicts.SETTINGS if name.startswith("WORKBOOK_")), "WORKBOOK_GRADE_GUARD",
                 "WORKBOOK_GPU_SHARE", "WORKBOOK_CONTAINMENT")


@dataclass
class Grade:
    """One submission's grade: a result per expected puzzle, or why it could not be graded."""

    submission: str
    puzzles: list[PuzzleResult] = field(default_factory=list)
    taken: dict[str, dict[str, str]] = field(default_factory=dict)  # puzzle -> file -> taken | missing | refused
    refusals: dict[str, list[guard.Refusal]] = field(default_factory=dict)  # puzzle -> what the guard refused
    guarded: bool = True  # the source guard read the files (WORKBOOK_GRADE_GUARD=0 only in tests)
    error: Msg | None = None  # the submission itself is unusable (not a folder)
    sandbox: str = ""  # what the code ran in
    limits: dict = field(default_factory=dict)  # the limits it ran under, and what kept them
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        """Puzzles judged and right. Code that only compiled (a GPU puzzle graded where no GPU
        of its kind runs it) is not a pass: nothing judged it."""
        return sum(r.status == Status.PASS for r in self.puzzles)

    @property
    def not_judged(self) -> int:
        return sum(r.status == Status.COMPILED for r in self.puzzles)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.puzzles) and self.passed == len(self.puzzles)


def definitions() -> Path:
    """The installed workbook: the folder above this package (never WORKBOOK_ROOT)."""
    base = settings.PACKAGE.parent
    if not (base / "puzzles").is_dir() or not (base / "solutions").is_dir():
        raise WorkbookError("grade.no_definitions", folder=str(base))
    return base


def expected(base: Path, only: list[str]) -> list[str]:
    """The puzzle ids to grade: every puzzle of the installed workbook, or those asked for."""
    ids = [p.id for p in catalog.all_puzzles(base)]
    if not only:
        return ids
    chosen = []
    for text in only:
        pid, part = catalog.resolve_id(text, base)
        if part:
            raise WorkbookError("grade.whole_puzzles", raw=text)
        if pid not in chosen:
            chosen.append(pid)
    return chosen


# What a learner reads about a file of theirs, as the grader reads it about a submission's.
GRADER_WORDS = {"learner.symlink": "grade.refused_link", "learner.outside": "grade.refused_link",
                "learner.not_file": "grade.not_file", "learner.too_big": "grade.too_big",
                "learner.binary": "grade.binary", "learner.not_utf8": "grade.not_utf8",
                "learner.unreadable": "grade.unreadable", "error.missing_file": "grade.missing_file"}


def _plain_path(root: Path, relative: str) -> tuple[Path | None, Msg | None]:
    """`root/relative` if every step of it is a real folder and the last a regular file
    (nothing reached through a link), else why not."""
    here = root
    parts = relative.split("/")
    for depth, part in enumerate(parts):
        here = here / part
        try:
            info = here.lstat()
        except FileNotFoundError:
            return None, msg("grade.missing_file", file=relative)
        except OSError as exc:
            return None, msg("grade.unreadable", file=relative, why=exc.strerror or str(exc))
        last = depth == len(parts) - 1
        if stat.S_ISLNK(info.st_mode):
            return None, msg("grade.refused_link", file=relative)
        if not last and not stat.S_ISDIR(info.st_mode):
            return None, msg("grade.missing_file", file=relative)
    return here, None


def _text(data: bytes) -> bool:
    """What learner.problem accepts of a file's bytes: at most its size, no NUL, UTF-8."""
    if len(data) > learner.MAX_BYTES or b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class Workspace:
    """A private copy of the installed puzzles and solutions, where a submission's learner
    files are put, one puzzle at a time."""

    def __init__(self, base: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="workbook-grade-"))
        for name in ("puzzles", "solutions"):
            shutil.copytree(base / name, self.dir / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".workbook"))

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def take(self, submission: Path, pid: str) -> tuple[manifest.Puzzle, dict[str, str], Msg | None]:
        """The puzzle with the submission's learner files in place: (puzzle, what happened
        to each file, why it can't be graded or None)."""
        puzzle = catalog.load(pid, self.dir)
        files, taken, problem = learner_files(submission, pid, puzzle.edit)
        for name in puzzle.edit:
            target = puzzle.dir / name
            with contextlib.suppress(FileNotFoundError):
                target.unlink()  # the installed skeleton never stands in for a missing file
            if name in files:
                learner.write(target, files[name])
        return puzzle, taken, problem

    def guard(self, puzzle: manifest.Puzzle, taken: dict[str, str]) -> tuple[list[guard.Refusal], Msg | None]:
        """The source guard on the learner files just taken (the workspace's copies, which only
        the grader writes): its refusals, and the first as the puzzle's problem. A refused
        file is marked so in `taken`."""
        files = {name: learner.read_bytes(puzzle.dir / name) for name in puzzle.edit if taken.get(name) == "taken"}
        refusals = guard.check(puzzle, files)
        for refusal in refusals:
            taken[refusal.file] = "refused"
        return refusals, (refusals[0].message(puzzle.id) if refusals else None)


def learner_files(submission: Path, pid: str, edit: tuple[str, ...] | list[str]) -> tuple[
        dict[str, bytes], dict[str, str], Msg | None]:
    """A submission's learner files of one puzzle, read as grading takes them: (the bytes of
    each file taken, what happened to each file: taken | missing | refused, why the puzzle
    can't be graded or None). A class run reads them here, in the grader, and sends the
    bytes to its task: a remote node never needs the submission's folder."""
    files: dict[str, bytes] = {}
    taken: dict[str, str] = {}
    problem: Msg | None = None
    for name in edit:
        source, why = _plain_path(submission, f"puzzles/{pid}/{name}")
        if source is not None:
            found = learner.problem(source, source.parent)
            if found is not None:
                key, values = found
                why = msg(GRADER_WORDS.get(key, key), **{**values, "file": f"puzzles/{pid}/{name}", "id": pid})
        if why is None:
            try:
                data = learner.read_bytes(source)
            except OSError as exc:  # replaced between the look and the read
                why = msg("grade.unreadable", file=f"puzzles/{pid}/{name}", why=exc.strerror or str(exc))
            else:
                if not _text(data):  # changed between the look and the read: judged on what was read
                    why = msg("grade.unreadable", file=f"puzzles/{pid}/{name}", why="changed while read")
        if why is not None:
            taken[name] = "missing" if why.key == "grade.missing_file" else "refused"
            problem = problem or why
            continue
        files[name] = data
        taken[name] = "taken"
    return files, taken, problem


@contextlib.contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """These variables set (None: unset) for the block, and each put back as it was after."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(value)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _rooted(folder: Path) -> contextlib.AbstractContextManager[None]:
    """WORKBOOK_ROOT at the workspace while grading: paths in the report read puzzles/pNN/...
    And the simulator's fence up (settings.sim_fence): a submission is hostile."""
    return _environment({"WORKBOOK_ROOT": str(folder), "WORKBOOK_SIM_FENCE": "1"})


def _failed(puzzle: manifest.Puzzle, why: Msg) -> PuzzleResult:
    result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.FAIL, puzzle.kind)
    result.problem = why
    return result


def grade(submission: Path, ids: list[str], base: Path, *, make_children: Callable[[], Children],
          options: engine.Options, sandbox: str, each: Callable[[str], None] | None = None) -> Grade:
    """Grade one submission on `ids`; `make_children` gives the processes of one puzzle's run
    (sandboxed, or not where the grader said so)."""
    started = time.perf_counter()
    found = Grade(str(submission), sandbox=sandbox, guarded=settings.grade_guard())
    if not submission.is_dir():
        found.error = msg("grade.not_a_folder", path=str(submission))
        return found
    with Workspace(base) as space, _rooted(space.dir):
        for pid in ids:
            if each:
                each(pid)
            puzzle, taken, problem = space.take(submission, pid)
            found.taken[pid] = taken
            if problem is None and found.guarded:
                refusals, problem = space.guard(puzzle, taken)
                if refusals:
                    found.refusals[pid] = refusals
            if problem is not None:
                found.puzzles.append(_failed(puzzle, problem))
                continue
            with make_children() as children:
                found.puzzles.append(engine.check_puzzle(puzzle, options, children=children))
    found.seconds = time.perf_counter() - started
    return found


# ---------------------------------------------------------------------------
# One submission x one puzzle, as a task of a class run (workbook/grade/classgrade.py)
# ---------------------------------------------------------------------------


def definitions_digest(base: Path, pid: str) -> str:
    """What grades a puzzle besides the submission: the workbook's code, the toolchain's
    versions, the puzzle's own files and its solution. A node that differs would judge
    otherwise; a class run's kept grade is only reused while this is the same."""
    h = hashlib.sha256()
    h.update(verdicts.workbook_digest().encode() + b"\0")
    h.update(f"mojo={toolchain.package_version('mojo')};max={toolchain.package_version('max')}\0".encode())
    puzzle = catalog.load(pid, base)
    for folder in (puzzle.dir, puzzle.solution_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            if not path.is_file() or "__pycache__" in path.parts or (folder == puzzle.dir and relative in puzzle.edit):
                continue
            h.update(f"{folder.parent.name}/{relative}\0".encode() + path.read_bytes() + b"\0")
    return h.hexdigest()


def task_settings() -> dict[str, str | None]:
    """This grader's settings that change a verdict (None: not set), for its tasks."""
    return {name: os.environ.get(name) for name in TASK_SETTINGS}


def _settings_of(wanted: dict[str, str | None]) -> contextlib.AbstractContextManager[None]:
    """The grader's settings in force while a task grades (a node's own are put back after);
    only those a task may carry (TASK_SETTINGS)."""
    return _environment({name: value for name, value in wanted.items() if name in TASK_SETTINGS})


def _error(key: str, **values) -> dict:
    """A task's answer where it could not grade: the message in English beside its key."""
    plain = {k: v if isinstance(v, (str, int, float, bool)) or v is None else str(v) for k, v in values.items()}
    return {"error": {"key": key, "text": msg(key, **values).text("en"), "values": plain},
            "node": socket.gethostname()}


def refused_answer(puzzle: manifest.Puzzle, taken: dict[str, str], why: Msg) -> dict:
    """The answer for a puzzle whose learner files were not taken (missing, a link, not
    text): failed, saying why, as grade_one would give it, with no task to run."""
    data = to_dict(_failed(puzzle, why))
    data["files"] = taken
    return {"puzzle": data, "sandbox": "", "seconds": 0.0, "node": ""}


def grade_one(files: dict[str, bytes], pid: str, options: dict) -> dict:
    """Grade one puzzle of one submission from its learner files' bytes: the task of a class
    run. Plain data in, plain data out (JSON-able): no workbook object crosses machines.

    `options`: "definitions" (definitions_digest of the grader: a node whose workbook,
    toolchain or puzzle differs says so instead of grading), "seed" (int or None), "devices"
    (a list), "unsandboxed" (bool), "settings" (task_settings() of the grader).
    Returns {"puzzle": the result as --json gives it, with "files"; "sandbox", "seconds",
    "node"} or, where the task could not grade, {"error": {"key", "text", "values"}, "node"}."""
    started = time.perf_counter()
    try:
        base = definitions()
        if pid not in catalog.puzzle_ids(base):
            return _error("class.unknown_puzzle", id=pid)
        here = definitions_digest(base, pid)
        if options.get("definitions") != here:
            return _error("class.other_workbook", node=socket.gethostname())
        with _settings_of(options.get("settings") or {}):
            if options.get("unsandboxed"):
                box, where = None, t("grade.unsandboxed")
            else:
                problem = sandbox.probe()
                if problem is not None:
                    return _error(problem.key, **problem.values)
                box = sandbox.Sandbox.create()
                where = box.describe() if box is not None else ""
            edit = catalog.load(pid, base).edit
            run = engine.Options(seed=options.get("seed"), devices=tuple(options.get("devices") or ()), cache=False)
            folder = Path(tempfile.mkdtemp(prefix="workbook-task-"))
            try:
                for name, data in files.items():
                    if name in edit:  # only the puzzle's learner files, at their own place
                        target = folder / "puzzles" / pid / name
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                budget = settings.check_budget()
                found = grade(folder, [pid], base, options=run, sandbox=where,
                              make_children=lambda: Children(sandbox=box, graded=True, budget=budget))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    except WorkbookError as exc:
        return _error(exc.msg.key, **exc.msg.values)
    data = to_dict(found.puzzles[0])
    data["files"] = found.taken.get(pid, {})
    data["refusals"] = [refusal.to_dict() for refusal in found.refusals.get(pid, [])]
    return {"puzzle": data, "guard": found.guarded, "sandbox": where,
            "seconds": round(time.perf_counter() - started, 3), "node": socket.gethostname()}
