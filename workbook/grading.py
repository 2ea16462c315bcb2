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
- the files taken are read by the source guard (workbook/guard.py) before
  anything of the puzzle is compiled: a construct no puzzle needs (FFI,
  `@export`, inline assembly, file or process APIs, a module no puzzle
  imports) fails the puzzle with its file and line, and nothing of it is
  compiled or run;
- learner code runs in the sandbox (workbook/sandbox.py), with the limits of
  workbook/limits.py, its whole tree bounded by its containment
  (workbook/containment.py); the compiler runs outside it, on the copied files;
- each puzzle's check has one wall-clock budget (WORKBOOK_CHECK_BUDGET) that
  bounds every wait in it, the compiler's and a wait for a GPU too; its GPU runs
  own their GPU (workbook/gpulease.py);
- a refused file is told in the grader's words (grade.*), not the learner's.

The result of one submission is a `Grade`: plain data, drawn as a table or
as one line of JSON.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import catalog, engine, guard, learner, settings
from .i18n import Msg, WorkbookError, msg
from .processes import Children
from .results import PuzzleResult, Status


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

    def take(self, submission: Path, pid: str) -> tuple[catalog.Puzzle, dict[str, str], Msg | None]:
        """The puzzle with the submission's learner files in place: (puzzle, what happened
        to each file, why it can't be graded or None)."""
        puzzle = catalog.load(pid, self.dir)
        taken: dict[str, str] = {}
        problem: Msg | None = None
        for name in puzzle.edit:
            target = puzzle.dir / name
            with contextlib.suppress(FileNotFoundError):
                target.unlink()  # the installed skeleton never stands in for a missing file
            source, why = _plain_path(submission, f"puzzles/{pid}/{name}")
            if source is not None:
                found = learner.problem(source, source.parent)
                if found is not None:
                    key, values = found
                    why = msg(GRADER_WORDS.get(key, key), **{**values, "file": f"puzzles/{pid}/{name}", "id": pid})
            if why is not None:
                taken[name] = "missing" if why.key == "grade.missing_file" else "refused"
                problem = problem or why
                continue
            learner.write(target, learner.read_bytes(source))
            taken[name] = "taken"
        return puzzle, taken, problem

    def guard(self, puzzle: catalog.Puzzle, taken: dict[str, str]) -> tuple[list[guard.Refusal], Msg | None]:
        """The source guard on the learner files just taken (the workspace's copies, which only
        the grader writes): its refusals, and the first as the puzzle's problem. A refused
        file is marked so in `taken`."""
        files = {name: learner.read_bytes(puzzle.dir / name) for name in puzzle.edit if taken.get(name) == "taken"}
        refusals = guard.check(puzzle, files)
        for refusal in refusals:
            taken[refusal.file] = "refused"
        return refusals, (refusals[0].message(puzzle.id) if refusals else None)


@contextlib.contextmanager
def _rooted(folder: Path) -> Iterator[None]:
    """WORKBOOK_ROOT at the workspace while grading: paths in the report read puzzles/pNN/..."""
    saved = os.environ.get("WORKBOOK_ROOT")
    os.environ["WORKBOOK_ROOT"] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("WORKBOOK_ROOT", None)
        else:
            os.environ["WORKBOOK_ROOT"] = saved


def _failed(puzzle: catalog.Puzzle, why: Msg) -> PuzzleResult:
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
