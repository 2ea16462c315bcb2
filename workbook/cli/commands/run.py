"""`workbook run [ID]`: build, run on each device, compare, and the full report."""

from __future__ import annotations

from ...check import engine
from ...child import processes
from ...core import exitcodes, settings
from ...core.i18n import WorkbookError, t
from ...core.results import PASSING, PuzzleResult, Status, document, to_dict
from ...course import catalog, manifest, state
from ...view import progress, report
from .common import Context, learner_files, load_state, require_learner_files, resolve, title


def check_devices(devices: list[str] | None) -> tuple[str, ...]:
    for device in devices or []:
        if device not in engine.DEVICE_CHOICES:
            raise WorkbookError("error.bad_device", device=device, choices=", ".join(engine.DEVICE_CHOICES))
    return tuple(devices or ())


def execute(ctx: Context, puzzle: manifest.Puzzle, options: engine.Options, first: FirstVerdict | None = None):
    """Run the engine with live progress where a person watches, and remember the
    verdict when it was a full run of the learner's own files. `first`: print the first
    verdict as soon as it is in (`run`), not only the whole report at the end."""
    with progress.LiveProgress(ctx.out, t("run.building", id=puzzle.id), progress.wanted(ctx.out, ctx.as_json),
                               on_first=first) as live:
        result = engine.check_puzzle(puzzle, options, events=live)
    target_problem(result)
    remember(ctx, puzzle, options, result)
    return result


class FirstVerdict:
    """`run`'s first verdict, printed as soon as the engine has it (where a slower stage
    follows: without a GPU the compile for it, an op's MAX graphs, compute-sanitizer);
    `report` then prints only what came after it and the verdict of the whole run. Under
    --json nothing is printed early: one document at the end."""

    def __init__(self, ctx: Context, title: str):
        self.ctx, self.title = ctx, title
        self.shown: PuzzleResult | None = None

    def __call__(self, event) -> None:
        try:
            report.render_first(self.ctx.out, event.result, self.title, event.phase.key)
            self.shown = event.result
        except Exception:  # noqa: BLE001 - never lose the run for its early print: the whole report comes at the end
            self.shown = None

    def report(self, result: PuzzleResult, files: list[str]) -> None:
        if self.shown is None or result.cached:
            report.render_result(self.ctx.out, result, self.title, files)
        else:
            report.render_rest(self.ctx.out, self.shown, result)


def remember(ctx: Context, puzzle: manifest.Puzzle, options: engine.Options, result) -> None:
    """A full check of the learner's own files is progress: state.json keeps its verdict."""
    if options.records_progress:
        ctx.warn(state.remember(puzzle.id, result.status.value,
                                {d: s.value for d, s in result.device_statuses().items()}))


def target_problem(result) -> None:
    """A GPU target the compiler does not know is a setting to fix, not the learner's code:
    WORKBOOK_GPU_TARGET is checked for its shape up front, and for its name here, where the
    compiler has said it does not support it."""
    wanted = settings.gpu_target()
    if wanted is None or result.status != Status.COMPILE_ERROR:
        return
    said = " ".join([d.message for d in result.diagnostics] + [n for d in result.diagnostics for n in d.notes]
                    + [result.compiler_output])
    if f"'{wanted}' is not supported" in said or f"GPU architecture '{wanted}'" in said:
        raise WorkbookError("settings.bad_gpu_target", value=wanted)


def main(ctx: Context, *, puzzle: str | None = None, part: str | None = None, solutions: bool = False,
         seed: int | None = None, sanitize: bool | None = None, quick: bool = False,
         devices: list[str] | None = None, cache: bool = True) -> int:
    settings.check_all()
    chosen_devices = check_devices(devices)
    if puzzle is None:
        found = load_state(ctx).next_pending(catalog.all_puzzles())
        if found is None:
            if ctx.as_json:
                ctx.json(document(puzzles=[], all_done=True))
            else:
                ctx.out.print(t("run.all_done"))
            return exitcodes.OK
        chosen = found
    else:
        chosen, named_part = resolve(puzzle)
        part = part or named_part
    if part:
        chosen.part(part)
    if not solutions:
        require_learner_files(chosen)
    options = engine.Options(solutions=solutions, part=part, seed=seed, sanitize=engine.sanitize_mode(sanitize),
                             quick=quick, devices=chosen_devices, cache=cache)
    startup = processes.own_age()  # the process's seconds before the engine began (not check's: one puzzle)
    first = None if ctx.as_json else FirstVerdict(ctx, title(chosen))
    result = execute(ctx, chosen, options, first)
    if startup is not None:
        result.stages = {"startup": startup, **result.stages}
    if ctx.as_json:
        ctx.json(document(**to_dict(result)))
    else:
        first.report(result, learner_files(chosen))
        next_step(ctx, result, chosen.id)
    return exit_code([result])


def exit_code(results) -> int:
    """1 when a puzzle failed; else 5 when one only compiled (nothing here judged it: right and
    wrong code alike); else 0. exitcodes.py says why a compile alone is not a pass."""
    if any(r.status not in PASSING for r in results):
        return exitcodes.FAILED
    if any(r.status == Status.COMPILED for r in results):
        return exitcodes.NOT_JUDGED
    return exitcodes.OK


def next_step(ctx: Context, result, puzzle_id: str) -> None:
    statuses = result.device_statuses()
    if result.status == Status.PASS and statuses.get("gpu") in (None, Status.PASS):
        ctx.out.print(t("run.next_pass"))
    elif result.status == Status.COMPILED:
        ctx.out.print(t("run.next_not_judged"))
    elif result.status in PASSING and statuses.get("sim") == Status.PASS:
        ctx.out.print(t("run.next_sim"))
    elif result.status in PASSING:
        ctx.out.print(t("run.next_compiled"))
    elif result.status == Status.NOT_STARTED:
        return  # the report said which file, and where to start
    else:
        ctx.out.print(t("run.next_hint", id=puzzle_id))
