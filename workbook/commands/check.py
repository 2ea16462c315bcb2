"""`workbook check ID... | --all`: terse verification, a summary table, exit 0 only if all pass."""

from __future__ import annotations

import json

from .. import engine, exitcodes, report, state
from ..i18n import t
from ..results import PASSING, Status, to_dict
from .common import all_puzzles, console, fail, load_state, require_learner_files, resolve, title


def check(puzzle_ids: list[str], every: bool, solutions: bool, seed: int | None, as_json: bool,
          sanitize: bool | None = None) -> int:
    if every == bool(puzzle_ids):
        fail(t("check.need_ids"))
    puzzles = all_puzzles() if every else [resolve(pid)[0] for pid in puzzle_ids]
    if not solutions:
        for puzzle in puzzles:
            require_learner_files(puzzle)
    load_state()  # reports (and rebuilds) a corrupt progress file once, up front
    results = []
    for puzzle in puzzles:
        if not as_json:
            console.print(t("check.checking", id=puzzle.id), style="dim")
        result = engine.check_puzzle(puzzle, engine.Options(solutions=solutions, seed=seed,
                                       sanitize=engine.sanitize_mode(sanitize)))
        results.append(result)
        if not solutions:
            state.remember(puzzle.id, result.status.value, {d: r.status.value for d, r in result.devices.items()})
    ok = all(r.status in PASSING for r in results)
    summary = {
        "passed": sum(r.status == Status.PASS for r in results),
        "compiled_only": sum(r.status == Status.COMPILED for r in results),
        "failed": sum(r.status not in PASSING for r in results),
        "total": len(results),
        "ok": ok,
    }
    if as_json:
        print(json.dumps({"puzzles": [to_dict(r) for r in results], "summary": summary},
                         indent=2, ensure_ascii=False))
    else:
        console.print(report.summary_table(results, {p.id: title(p) for p in puzzles}))
        key = "check.summary_compiled" if summary["compiled_only"] else "check.summary"
        console.print(t(key, passed=summary["passed"], total=summary["total"], compiled=summary["compiled_only"]))
        for r in results:
            if r.status not in PASSING:
                console.print(t("check.see_run", id=r.id), style="dim")
                break
    return exitcodes.OK if ok else exitcodes.FAILED
