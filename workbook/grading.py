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
- learner code runs in the sandbox (workbook/sandbox.py), with the limits of
  workbook/limits.py; the compiler runs outside it, on the copied files.

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

from . import catalog, engine, learner, settings
from .i18n import Msg, WorkbookError, msg
from .processes import Children
from .results import PASSING, PuzzleResult, Status


@dataclass
class Grade:
    """One submission's grade: a result per expected puzzle, or why it could not be graded."""

    submission: str
    puzzles: list[PuzzleResult] = field(default_factory=list)
    taken: dict[str, dict[str, str]] = field(default_factory=dict)  # puzzle -> file -> taken | missing | refused
    error: Msg | None = None  # the submission itself is unusable (not a folder)
    sandbox: str = ""  # what the code ran in
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(r.status in PASSING for r in self.puzzles)

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
            return None, msg("learner.unreadable", file=relative, why=exc.strerror or str(exc))
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
                    why = msg(key, **{**values, "file": f"puzzles/{pid}/{name}", "id": pid})
            if why is not None:
                taken[name] = "missing" if why.key == "grade.missing_file" else "refused"
                problem = problem or why
                continue
            learner.write(target, learner.read_bytes(source))
            taken[name] = "taken"
        return puzzle, taken, problem


@contextlib.contextmanager
def _rooted(folder: Path) -> Iterator[None]:
    """WORKBOOK_ROOT at the workspace while grading: paths in the report read puzzles/pNN/...
    And the simulator's fence up (settings.sim_fence): a submission is hostile."""
    saved = {name: os.environ.get(name) for name in ("WORKBOOK_ROOT", "WORKBOOK_SIM_FENCE")}
    os.environ["WORKBOOK_ROOT"] = str(folder)
    os.environ["WORKBOOK_SIM_FENCE"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _failed(puzzle: catalog.Puzzle, why: Msg) -> PuzzleResult:
    result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.FAIL, puzzle.kind)
    result.problem = why
    return result


def grade(submission: Path, ids: list[str], base: Path, *, make_children: Callable[[], Children],
          options: engine.Options, sandbox: str, each: Callable[[str], None] | None = None) -> Grade:
    """Grade one submission on `ids`; `make_children` gives the processes of one puzzle's run
    (sandboxed, or not where the grader said so)."""
    started = time.perf_counter()
    found = Grade(str(submission), sandbox=sandbox)
    if not submission.is_dir():
        found.error = msg("grade.not_a_folder", path=str(submission))
        return found
    with Workspace(base) as space, _rooted(space.dir):
        for pid in ids:
            if each:
                each(pid)
            puzzle, taken, problem = space.take(submission, pid)
            found.taken[pid] = taken
            if problem is not None:
                found.puzzles.append(_failed(puzzle, problem))
                continue
            with make_children() as children:
                found.puzzles.append(engine.check_puzzle(puzzle, options, children=children))
    found.seconds = time.perf_counter() - started
    return found
