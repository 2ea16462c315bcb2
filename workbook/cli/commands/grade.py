"""`workbook grade SUBMISSION...`: grade submitted work without trusting it (workbook/grade/grading.py).

A few submissions are graded here, one after the other, in this process. A
class is graded on Ray (workbook/grade/classgrade.py), each submission x puzzle a
task: when the one argument is a class folder (subfolders, no puzzles/ of its
own), or --roster, --out, --address or --jobs is given. A class run writes
grades.csv, grades.jsonl, index.html and a page per submission into --out
(./grades by default), shows a progress bar on stderr, and reruns grade only
what changed.

One line of JSON per submission under --json, else a summary table per
submission (a class: a line per submission). What the source guard refused
(workbook/grade/guard.py) is in both: each puzzle's `refusals` (file, line, column,
rule, text) in the JSON, a line each under the table.
Exit 0 when every submission passes every puzzle, 1 when one does not, 2 for a
submission that is not a folder, 3 when no sandbox can start and
--unsandboxed was not given (or a class run finds no Ray), 5 when nothing
failed but some puzzle only compiled (a GPU puzzle graded where no GPU of its
kind runs it: not judged, and not counted as passed).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ...check import engine
from ...child import containment, sandbox
from ...child.processes import Children
from ...core import exitcodes, settings, toolchain
from ...core.i18n import WorkbookError, pick, t
from ...core.results import PASSING, document, to_dict
from ...course import catalog
from ...grade import grading, roster
from ...view import report
from .common import Context
from .run import check_devices

SHOWN_REFUSALS = 5  # per puzzle under the table; the JSON has them all


def _line(found: grading.Grade, seed: int | None) -> dict:
    if found.error is not None:
        return document(submission=found.submission, error={"key": found.error.key, "message": found.error.text("en"),
                                                            "exit_code": exitcodes.BAD_INPUT})
    puzzles = []
    for result in found.puzzles:
        data = to_dict(result)
        data["files"] = found.taken.get(result.id, {})
        data["refusals"] = [refusal.to_dict() for refusal in found.refusals.get(result.id, [])]
        puzzles.append(data)
    return document(submission=found.submission, sandbox=found.sandbox, guard=found.guarded, limits=found.limits,
                    seed=seed,
                    puzzles=puzzles,
                    summary={"passed": found.passed, "not_judged": found.not_judged,
                             "failed": len(found.puzzles) - found.passed - found.not_judged,
                             "total": len(found.puzzles), "ok": found.ok}, seconds=round(found.seconds, 1))


def main(ctx: Context, *, submissions: list[str], puzzles: list[str], unsandboxed: bool = False,
         seed: int | None = None, devices: list[str] | None = None, roster_file: str | None = None,
         out: str | None = None, address: str | None = None, jobs: int | None = None) -> int:
    if not submissions and roster_file is None:
        raise WorkbookError("grade.need_submissions")
    settings.check_all()
    if address is None:  # on a cluster each node's tasks use that node's compiler
        why = toolchain.compiler_problem()
        if why is not None:  # before anyone is graded: never every submission's compile error
            raise WorkbookError("grade.no_compiler", exit_code=exitcodes.TOOLCHAIN, why=why)
    base = grading.definitions()
    ids = grading.expected(base, puzzles)
    one_class = len(submissions) == 1 and roster.is_class(Path(submissions[0]))
    if one_class or any(v is not None for v in (roster_file, out, address, jobs)):
        return grade_class(ctx, base, ids, submissions=submissions, roster_file=roster_file, out=out,
                           address=address, jobs=jobs, unsandboxed=unsandboxed, seed=seed, devices=devices)
    if unsandboxed:
        box, where = None, t("grade.unsandboxed")
        if not ctx.as_json:
            ctx.err.print(Text(t("grade.unsandboxed_warning"), style="bold yellow"))
    else:
        problem = sandbox.probe()
        if problem is not None:
            raise WorkbookError(problem.key, exit_code=exitcodes.TOOLCHAIN, **problem.values)
        box = sandbox.Sandbox.create()
        where = box.describe()
    options = engine.Options(seed=seed, devices=check_devices(devices), cache=False)
    if not settings.grade_guard() and not ctx.as_json:
        ctx.err.print(Text(t("grade.unguarded_warning"), style="bold yellow"))
    kept = limits_in_force()
    budget = settings.check_budget()
    worst = exitcodes.OK
    titles = {p: pick(catalog.load(p, base).title) for p in ids}
    for raw in submissions:
        def each(pid: str, raw: str = raw) -> None:
            if not ctx.as_json:
                ctx.err.print(Text(t("grade.grading", submission=raw, id=pid), style="dim"))

        found = grading.grade(Path(raw), ids, base, options=options, sandbox=where, each=each,
                              make_children=lambda: Children(sandbox=box, graded=True, budget=budget))
        found.limits = kept
        worst = _worse(worst, _exit_code(found))
        if ctx.as_json:
            ctx.json(_line(found, seed))
            continue
        ctx.out.rule(Text(raw), align="left")
        if found.error is not None:
            ctx.out.print(Text(found.error.text(), style="bold red"))
            continue
        ctx.out.print(report.summary_table(found.puzzles, titles))
        for result in found.puzzles:
            refused = found.refusals.get(result.id)
            if refused:
                for refusal in refused[:SHOWN_REFUSALS]:
                    ctx.out.print(Text(f"  {refusal.message(result.id, listed=True).text()}", style="red"))
                if len(refused) > SHOWN_REFUSALS:
                    ctx.out.print(Text("  " + t("grade.more_refusals", count=len(refused) - SHOWN_REFUSALS,
                                                id=result.id), style="red"))
                ctx.out.print(Text("  " + t("guard.nothing_compiled", id=result.id), style="red"))
            elif result.problem is not None and result.status not in PASSING:
                ctx.out.print(Text(f"  {result.id}: {result.problem.text()}", style="red"))
        ctx.out.print(t("grade.summary", passed=found.passed, total=len(found.puzzles), sandbox=found.sandbox))
        if found.not_judged:
            ctx.out.print(t("grade.not_judged", count=found.not_judged))
        ctx.out.print(t("grade.limits", **kept))
    return worst


# Which exit code wins when submissions differ: an unusable submission, then a failure, then
# code nothing judged.
PRECEDENCE = (exitcodes.OK, exitcodes.NOT_JUDGED, exitcodes.FAILED, exitcodes.BAD_INPUT)


def _exit_code(found: grading.Grade) -> int:
    if found.error is not None:
        return exitcodes.BAD_INPUT
    if found.passed + found.not_judged < len(found.puzzles) or not found.puzzles:
        return exitcodes.FAILED
    return exitcodes.NOT_JUDGED if found.not_judged else exitcodes.OK


def _worse(a: int, b: int) -> int:
    return max(a, b, key=PRECEDENCE.index)


def limits_in_force() -> dict:
    """The limits each graded run ran under, and what kept them (a cgroup, the watcher):
    the same facts in the JSON line and under the table."""
    from ...child.limits import Limits

    limits = Limits.from_settings()
    return {"memory_mb": limits.memory_mb, "file_mb": limits.file_mb, "processes": limits.processes,
            "budget_s": round(settings.check_budget()), "gpu_share": settings.gpu_share(),
            "containment": containment.support().describe()}


# ---------------------------------------------------------------------------
# A class, on Ray
# ---------------------------------------------------------------------------


class ClassProgress:
    """The class moving, on stderr: a bar of checks, and the grades so far in symbols and
    words. Where nobody watches (a pipe, CI) a line per submission instead; under --json
    there, nothing."""

    def __init__(self, ctx: Context, total: int):
        from ...grade import gradebook

        self.ctx, self.gradebook = ctx, gradebook
        self.counts: Counter[str] = Counter()
        self.live = ctx.err.is_terminal and settings.progress_allowed()
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=ctx.err, transient=False, redirect_stdout=False,
                            redirect_stderr=False) if self.live else None
        self.task = self.bar.add_task(t("class.progress"), total=total) if self.bar else None

    def __enter__(self) -> ClassProgress:
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.stop()

    def cell(self, row, cell) -> None:
        word = self.gradebook.word(cell)
        self.counts[word] += 1
        if self.bar:
            tally = "  ".join(f"{self.gradebook.SYMBOLS[w]} {self.counts[w]}" for w in self.gradebook.WORDS
                              if self.counts[w])
            self.bar.update(self.task, advance=1, description=f"{t('class.progress')}  {tally}")

    def row(self, row, ids: list[str]) -> None:
        if self.live or self.ctx.as_json:
            return
        if row.error is not None:
            self.ctx.err.print(Text(f"{row.name}: {row.error.text()}", style="red"))
        else:
            self.ctx.err.print(Text(t("class.row_done", name=row.name, passed=self.gradebook.passed(row, ids),
                                      total=len(ids)), style="dim"))


def grade_class(ctx: Context, base: Path, ids: list[str], *, submissions: list[str], roster_file: str | None,
                out: str | None, address: str | None, jobs: int | None, unsandboxed: bool, seed: int | None,
                devices: list[str] | None) -> int:
    from ...grade import classgrade, gradebook

    folder = Path(out or "grades")
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise WorkbookError("class.out_not_folder", path=str(folder))
    subs = roster.gather(submissions, Path(roster_file) if roster_file else None, skip=(folder,))
    if not subs:
        raise WorkbookError("class.empty")
    settings.gpu_share()  # a bad setting stops the command before anything starts
    settings.task_timeout()
    if unsandboxed:
        where = t("grade.unsandboxed")
        if not ctx.as_json:
            ctx.err.print(Text(t("grade.unsandboxed_warning"), style="bold yellow"))
    elif address is None:
        problem = sandbox.probe()  # here too: a grader without a sandbox learns it before any task runs
        if problem is not None:
            raise WorkbookError(problem.key, exit_code=exitcodes.TOOLCHAIN, **problem.values)
        where = sandbox.Sandbox.create().describe()
    else:
        where = ""  # on a cluster each node's task starts its own sandbox, or says why it can't
    options = classgrade.ClassOptions(seed=seed, devices=check_devices(devices), unsandboxed=unsandboxed,
                                      address=address, jobs=jobs)
    titles = {p: pick(catalog.load(p, base).title) for p in ids}
    total = sum(len(ids) for sub in subs if sub.path.is_dir())
    ctx.out.file = ctx.out.file  # this very stream: the class run sends what Ray prints elsewhere
    with ClassProgress(ctx, total) as progress:
        def row_done(row) -> None:
            progress.row(row, ids)
            if ctx.as_json:
                ctx.json(gradebook.line(row, ids, seed, where))

        run = classgrade.grade_class(subs, ids, base, folder, options, on_cell=progress.cell, on_row=row_done,
                                     sandbox=where)
    gradebook.write_all(folder, run, seed, titles)
    worst = exitcodes.OK
    for row in run.rows:
        if row.error is not None:
            code = exitcodes.BAD_INPUT
        elif gradebook.passed(row, ids) + gradebook.not_judged(row, ids) < len(ids):
            code = exitcodes.FAILED
        else:
            code = exitcodes.NOT_JUDGED if gradebook.not_judged(row, ids) else exitcodes.OK
        worst = _worse(worst, code)
    if not ctx.as_json:
        _class_view(ctx, run, folder)
    return worst


def _class_view(ctx: Context, run, folder: Path) -> None:
    """A line per submission (what did not pass, by puzzle), then where the class table is."""
    from ...grade import gradebook

    for row in run.rows:
        name = Text(row.name, style="bold")
        if row.error is not None:
            ctx.out.print(Text.assemble(name, ": ", (row.error.text(), "red")))
            continue
        words = gradebook.words(row, run.ids)
        line = Text.assemble(name, f"  {gradebook.passed(row, run.ids)}/{len(run.ids)}")
        for pid, word in words.items():
            if word != "pass":
                line.append(f"  {pid} {gradebook.SYMBOLS[word]} {t('class.word.' + word)}", style="red")
        ctx.out.print(line)
    checks = sum(len(row.cells) for row in run.rows)
    ctx.out.print(t("class.summary", submissions=len(run.rows), checks=checks, tasks=run.tasks, kept=run.kept,
                    seconds=f"{run.seconds:.0f}", where=run.where))
    ctx.out.print(t("class.written", folder=str(folder), index=str(folder / "index.html")))
