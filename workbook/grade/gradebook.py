"""The class table a class run writes: grades.csv, grades.jsonl, and the HTML pages.

Each cell (a submission x a puzzle) gets one grade word:
- pass: it was judged and passed;
- not_judged: it only compiled (a GPU puzzle graded where no GPU of its kind runs
  it): nothing judged it, so it is not counted as passed;
- fail: it was graded and did not pass (wrong values, a finding, a compile error, a crash);
- timeout: it ran past a time limit (the check's own, or its task's);
- missing: a learner file is not in the submission;
- refused: a learner file was refused (a link, not UTF-8 text, too large; or the
  source guard refused what it holds);
- error: the grader could not grade it (the task died, the node differs): not
  the submission's doing, and said so.

grades.jsonl holds one line per submission, today's `grade --json` line
extended (its name, each puzzle's grade word and where it came from: a task,
kept from an earlier run, or the grader itself). grades.csv holds a row per
submission and a column per puzzle. Every file is written whole and then
renamed into place, so a reader never sees half of one; nothing a submission
wrote decides a grade word: only the grader's own result does.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from ..core import exitcodes
from ..core.results import document
from .classgrade import Cell, ClassRun, Row

WORDS = ("pass", "not_judged", "fail", "timeout", "missing", "refused", "error")
# Read without colour: a symbol and a word in every cell.
SYMBOLS = {"pass": "✓", "not_judged": "◇", "fail": "✗", "timeout": "⏱", "missing": "∅", "refused": "⊘", "error": "!"}
# What a spreadsheet would take for a formula at the start of a cell (CSV injection).
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def word(cell: Cell) -> str:
    """The cell's grade word (see the module's docstring)."""
    if cell.failure:
        return cell.failure
    puzzle = cell.puzzle
    status = puzzle.get("status")
    if status == "pass":
        return "pass"
    if status == "compiled":
        return "not_judged"
    files = puzzle.get("files") or cell.taken
    if "refused" in files.values():
        return "refused"
    if "missing" in files.values():
        return "missing"
    if str((puzzle.get("problem") or {}).get("key", "")).startswith("guard."):
        return "refused"
    if status == "timeout":
        return "timeout"
    return "fail"


def words(row: Row, ids: list[str]) -> dict[str, str]:
    return {pid: word(row.cells[pid]) for pid in ids if pid in row.cells}


def passed(row: Row, ids: list[str]) -> int:
    return sum(w == "pass" for w in words(row, ids).values())


def not_judged(row: Row, ids: list[str]) -> int:
    return sum(w == "not_judged" for w in words(row, ids).values())


def ok(row: Row, ids: list[str]) -> bool:
    return row.error is None and bool(ids) and passed(row, ids) == len(ids)


def line(row: Row, ids: list[str], seed: int | None, sandbox: str = "") -> dict:
    """One submission's JSON line: `grade --json`'s, with its name and grade words
    (`sandbox`: the grader's, for a submission no task ran)."""
    if row.error is not None:
        return document(submission=str(row.path), name=row.name,
                        error={"key": row.error.key, "message": row.error.text("en"), "exit_code": exitcodes.BAD_INPUT})
    puzzles = []
    for pid in ids:
        cell = row.cells[pid]
        puzzles.append({**cell.puzzle, "grade": word(cell), "from": cell.source})
    good = passed(row, ids)
    return document(submission=str(row.path), name=row.name, sandbox=row.sandbox(sandbox), seed=seed,
                    puzzles=puzzles,
                    grades=words(row, ids),
                    summary={"passed": good, "failed": len(ids) - good, "total": len(ids), "ok": ok(row, ids)},
                    seconds=round(row.seconds, 1))


def _cell_text(value: str) -> str:
    """A name or path as a spreadsheet shows it, never as a formula it would run."""
    value = value.replace("\r", " ").replace("\n", " ")
    return "'" + value if value.startswith(FORMULA) else value


def csv_text(run: ClassRun) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "submission", *run.ids, "passed", "total"])
    for row in run.rows:
        if row.error is not None:
            cells = ["error"] * len(run.ids)
        else:
            found = words(row, run.ids)
            cells = [found[pid] for pid in run.ids]
        good = 0 if row.error is not None else passed(row, run.ids)
        writer.writerow([_cell_text(row.name), _cell_text(str(row.path)), *cells, good, len(run.ids)])
    return out.getvalue()


def jsonl_text(run: ClassRun, seed: int | None) -> str:
    return "".join(json.dumps(line(row, run.ids, seed, run.sandbox), ensure_ascii=False) + "\n" for row in run.rows)


def write(path: Path, text: str) -> None:
    """A file of the class table, whole or not at all (a link there is replaced, not followed)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(partial, path)


def write_all(out: Path, run: ClassRun, seed: int | None, titles: dict[str, str]) -> list[Path]:
    """grades.csv, grades.jsonl, index.html and a page per submission in `out`."""
    from . import gradebook_html

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("grades.csv", csv_text(run)), ("grades.jsonl", jsonl_text(run, seed))):
        write(out / name, text)
        written.append(out / name)
    written += gradebook_html.write_pages(out, run, titles)
    return written
