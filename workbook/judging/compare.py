"""Comparing a device's outputs with the reference.

An element passes when |got - expected| <= atol + rtol * |expected| (NumPy's
isclose rule, in float64). NaN and Inf never pass, whatever the reference
says. Repeated GPU runs of the same case must agree bit for bit (or, for
sums built with float atomics, each must match the reference): when they
don't, the kernel has a race. The simulator's two runs (threads forward, then
in reverse) must agree too: when they don't, a thread read something another
thread wrote with no barrier() in between.
"""

from __future__ import annotations

import numpy as np

from ..core.results import CaseResult, OutputCheck
from ..course.manifest import Part

FIRST_VALUES = 6
MAP_CELLS = 256  # larger vectors are summarised: each cell stands for a run of elements
MAP_ROWS, MAP_COLS = 16, 32  # a matrix's map, at most: each cell stands for a block of elements


def check_output(name: str, got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> OutputCheck:
    exp = np.asarray(expected, dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if g.shape != exp.shape:
        if g.size == exp.size:
            g = g.reshape(exp.shape)
        else:
            cells = min(exp.size, MAP_CELLS)
            return OutputCheck(name, list(g.shape), None, None, exp.size, exp.size, 0, 0, False,
                               [], _first(exp), error_map=[3] * cells, map_shape=[cells],
                               map_step=[-(-exp.size // max(cells, 1))])
    finite = np.isfinite(g)
    allowed = atol + rtol * np.abs(exp)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_err = np.where(finite, np.abs(g - exp), np.inf)
        ok = finite & (abs_err <= allowed)
        # A relative error says nothing where the answer is 0: those elements don't count in it.
        rel_err = np.where(finite & (exp != 0), abs_err / np.where(exp != 0, np.abs(exp), 1.0), np.nan)
    # 0 ok, 1 within tolerance but using over half of it, 2 wrong, 3 NaN or Inf.
    cells = np.where(~finite, 3, np.where(~ok, 2, np.where(abs_err > allowed / 2, 1, 0)))
    error_map, map_shape, map_step = error_cells(cells)
    return OutputCheck(
        name=name,
        shape=list(exp.shape),
        max_abs_error=_finite_max(abs_err, finite),
        max_rel_error=_finite_max(rel_err, finite & (exp != 0)),
        mismatches=int((~ok).sum()),
        size=int(exp.size),
        nan_count=int(np.isnan(g).sum()),
        inf_count=int(np.isinf(g).sum()),
        passed=bool(ok.all()),
        first_got=_first(g),
        first_expected=_first(exp),
        first_wrong=[(int(i), float(g.ravel()[i]), float(exp.ravel()[i]))
                     for i in np.flatnonzero(~ok.ravel())[:FIRST_VALUES]],
        error_map=error_map,
        map_shape=map_shape,
        map_step=map_step,
    )


def repeats_differ(part: Part, runs: list[list[np.ndarray]], expected: dict[str, np.ndarray]) -> bool:
    """Whether later runs disagree with the first: bit for bit, or (float atomics)
    by passing where the first failed or the other way round."""
    first = runs[0]
    if part.exact_repeats:
        return any(not np.array_equal(first[k], later[k], equal_nan=True)
                   for later in runs[1:] for k in range(len(part.outputs)))
    return any(check_output(name, later[k], expected[name], part.atol, part.rtol).passed
               != check_output(name, first[k], expected[name], part.atol, part.rtol).passed
               for later in runs[1:] for k, name in enumerate(part.outputs))


def check_case(case: dict, part: Part, runs: list[list[np.ndarray]], expected: dict[str, np.ndarray],
               invariants, orders: bool = False) -> CaseResult:
    """Compare the first run with the reference, and every repeat with the first.
    `orders`: the runs are the simulator's thread orders, not GPU repeats."""
    first = runs[0]
    outputs = [check_output(name, first[k], expected[name], part.atol, part.rtol)
               for k, name in enumerate(part.outputs)]
    differ = repeats_differ(part, runs, expected)
    named = {name: first[k] for k, name in enumerate(part.outputs)}
    checks = [(label, bool(ok), detail) for label, ok, detail in (invariants(case, named) if invariants else [])]
    passed = all(o.passed for o in outputs) and not differ and all(ok for _, ok, _ in checks)
    return CaseResult(case["name"], case["params"], outputs, checks, differ and not orders, differ and orders,
                      passed, case.get("label", {}))


def _finite_max(values: np.ndarray, finite: np.ndarray) -> float | None:
    if not finite.any():
        return None
    return float(values[finite].max())


def _first(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values).ravel()[:FIRST_VALUES]]


def error_cells(cells: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The error map: (cells, their shape, elements per cell along each axis). A vector
    keeps its order; a matrix (or the last axis of more) keeps its rows and columns,
    so the map can be drawn as the output is laid out."""
    if cells.ndim < 2:
        flat = cells.ravel()
        step = max(1, -(-flat.size // MAP_CELLS))
        out = [int(flat[a:a + step].max()) for a in range(0, flat.size, step)]
        return out, [len(out)], [step]
    grid = cells.reshape(-1, cells.shape[-1])
    row_step = -(-grid.shape[0] // MAP_ROWS)
    col_step = -(-grid.shape[1] // MAP_COLS)
    rows = -(-grid.shape[0] // row_step)
    cols = -(-grid.shape[1] // col_step)
    out = [int(grid[r * row_step:(r + 1) * row_step, c * col_step:(c + 1) * col_step].max())
           for r in range(rows) for c in range(cols)]
    return out, [rows, cols], [row_step, col_step]
