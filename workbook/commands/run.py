"""`workbook run [ID]`: build, run on each device, compare, and the full report."""

from __future__ import annotations

import json

from rich.console import Console

from .. import engine, exitcodes, report, state
from ..catalog import CatalogError
from ..i18n import t
from ..results import PASSING, Status, to_dict
from .common import console, fail, load_state, require_learner_files, resolve, title


def next_pending(puzzles, current: state.State):
    for puzzle in puzzles:
        if current.of(puzzle.id).status != "pass":
            return puzzle
    return None


def run(puzzle_id: str | None, part: str | None, solutions: bool, seed: int | None, as_json: bool,
        sanitize: bool | None = None) -> int:
    from .common import all_puzzles

    current = load_state()
    if puzzle_id is None:
        puzzle = next_pending(all_puzzles(), current)
        if puzzle is None:
            console.print(t("run.all_done"))
            return exitcodes.OK
    else:
        puzzle, named_part = resolve(puzzle_id)
        part = part or named_part
    if part:
        try:
            puzzle.part(part)
        except CatalogError as exc:
            fail(str(exc))
    if not solutions:
        require_learner_files(puzzle)
    if not as_json:
        console.print(t("run.building", id=puzzle.id), style="dim")
    result = engine.check_puzzle(puzzle, engine.Options(solutions=solutions, part=part, seed=seed,
                                       sanitize=engine.sanitize_mode(sanitize)))
    if not solutions and not part:
        state.remember(puzzle.id, result.status.value, {d: r.status.value for d, r in result.devices.items()})
    if as_json:
        print(json.dumps(to_dict(result), indent=2, ensure_ascii=False))
    else:
        report.render_result(console, result, title(puzzle))
        next_step(console, result, puzzle.id)
    return exitcodes.OK if result.status in PASSING else exitcodes.FAILED


def next_step(out: Console, result, puzzle_id: str) -> None:
    if result.status == Status.PASS:
        out.print(t("run.next_pass"))
    elif result.status == Status.COMPILED:
        out.print(t("run.next_compiled"))
    elif result.status == Status.NOT_STARTED:
        out.print(t("run.next_show", id=puzzle_id))
    else:
        out.print(t("run.next_hint", id=puzzle_id))
