"""`workbook grade SUBMISSION...`: grade submitted work without trusting it (workbook/grading.py).

One line of JSON per submission under --json (a class can be fanned out over
a job runner and the lines concatenated), else a summary table per submission.
What the source guard refused (workbook/guard.py) is in both: each puzzle's
`refusals` (file, line, column, rule, text) in the JSON, a line each under
the table.
Exit 0 when every submission passes every puzzle, 1 when one does not, 2 for a
submission that is not a folder, 3 when no sandbox can start and
--unsandboxed was not given, 5 when nothing failed but some puzzle only
compiled (a GPU puzzle graded where no GPU of its kind runs it: not judged,
and not counted as passed).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from .. import catalog, containment, engine, exitcodes, grading, report, sandbox, settings
from ..i18n import WorkbookError, pick, t
from ..processes import Children
from ..results import PASSING, document, to_dict
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
         seed: int | None = None, devices: list[str] | None = None) -> int:
    if not submissions:
        raise WorkbookError("grade.need_submissions")
    settings.check_all()
    base = grading.definitions()
    ids = grading.expected(base, puzzles)
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
    from ..limits import Limits

    limits = Limits.from_settings()
    return {"memory_mb": limits.memory_mb, "file_mb": limits.file_mb, "processes": limits.processes,
            "budget_s": round(settings.check_budget()), "gpu_share": settings.gpu_share(),
            "containment": containment.support().describe()}
