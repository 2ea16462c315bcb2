"""`workbook check ID... | --all`: terse verification, a summary table, exit 0 only if all pass."""

from __future__ import annotations

from ...check import engine, scheduler
from ...core import settings
from ...core.i18n import WorkbookError, t
from ...core.results import PASSING, Status, document, to_dict
from ...course import catalog
from ...view import report
from .common import Context, load_state, require_learner_files, resolve, title
from .run import check_devices, execute, exit_code, remember


def main(ctx: Context, *, puzzles: list[str], every: bool = False, solutions: bool = False,
         seed: int | None = None, sanitize: bool | None = None, quick: bool = False,
         devices: list[str] | None = None, cache: bool = True, jobs: int | None = None) -> int:
    if every == bool(puzzles):
        raise WorkbookError("check.need_ids")
    settings.check_all()
    chosen_devices = check_devices(devices)
    targets = [(p, None) for p in catalog.all_puzzles()] if every else [resolve(pid) for pid in puzzles]
    if not targets:  # a grade of nothing is no pass: a deleted folder must not drop out silently
        raise WorkbookError("check.no_puzzles", folder=str(catalog.root() / "puzzles"))
    if not solutions:
        for puzzle, _ in targets:
            require_learner_files(puzzle)
    load_state(ctx)  # reports (and rebuilds) a corrupt progress file once, up front
    # Many puzzles at once: the whole check's time counts (engine.Options.batch). Mostly clean
    # code, where a third compile (the sanitizer's build with line tables) is made only for the
    # ones a sanitizer finds something in.
    asked = [(puzzle, engine.Options(solutions=solutions, part=part, seed=seed, quick=quick, devices=chosen_devices,
                                     sanitize=engine.sanitize_mode(sanitize), cache=cache,
                                     batch=len(targets) > 1))
             for puzzle, part in targets]
    jobs = jobs or scheduler.default_jobs()
    if jobs == 1 or len(asked) == 1:
        results = [execute(ctx, puzzle, options) for puzzle, options in asked]
    else:
        results = scheduler.check_many(asked, jobs, done=None if ctx.as_json else lambda r: _done_line(ctx, r))
        for (puzzle, options), result in zip(asked, results):
            remember(ctx, puzzle, options, result)
    ok = all(r.status in PASSING for r in results)
    summary = {
        "passed": sum(r.status == Status.PASS for r in results),
        "compiled_only": sum(r.status == Status.COMPILED for r in results),
        "failed": sum(r.status not in PASSING for r in results),
        "total": len(results),
        "ok": ok,
    }
    if ctx.as_json:
        ctx.json(document(puzzles=[to_dict(r) for r in results], summary=summary))
    else:
        ctx.out.print(report.summary_table(results, {p.id: title(p) for p, _ in targets}))
        ctx.out.print(report.legend())
        key = "check.summary_compiled" if summary["compiled_only"] else "check.summary"
        ctx.out.print(t(key, passed=summary["passed"], total=summary["total"], compiled=summary["compiled_only"]))
        failed = next((r for r in results if r.status not in PASSING), None)
        if failed:
            ctx.out.print(t("check.see_run", id=failed.id), style="dim")
    return exit_code(results)


def _done_line(ctx: Context, result) -> None:
    """A line as each puzzle's check ends (several run at once: they end in any order)."""
    ctx.out.print(report.done_line(result))
