"""Puzzle 18 through the real engine: real Mojo compiles, real MAX graphs.

The checker itself is under test here: wrong kernels must fail, and fail for
the right reason. The GPU-only tests run where a GPU is (see docs/verification.md).
"""

from __future__ import annotations

import pytest
from conftest import has_gpu, put_solution, put_wrong

from workbook import catalog, engine
from workbook.results import Status

pytestmark = pytest.mark.slow


def check(**options):
    return engine.check_puzzle(catalog.load("p18"), engine.Options(seed=7, **options))


def test_solution_passes_on_cpu_and_the_gpu_kernel_compiles(root):
    result = check(solutions=True)
    assert result.status == Status.PASS
    cpu = result.devices["cpu"]
    assert cpu.status == Status.PASS
    assert cpu.max_abs_error is not None and cpu.max_abs_error < 1e-6
    assert len(result.parts[0].devices["cpu"].cases) >= 5
    names = {c.name for c in result.parts[0].devices["cpu"].cases}
    assert {"large (exp overflows)", "all negative", "ties"} <= names
    for case in result.parts[0].devices["cpu"].cases:
        assert case.invariants and all(ok for _, ok, _ in case.invariants)
    if not has_gpu():
        assert result.devices["gpu"].status == Status.COMPILED
        assert "no GPU" in result.devices["gpu"].reason


def test_untouched_skeleton_is_not_started(root):
    result = check()
    assert result.status == Status.NOT_STARTED
    assert all(d.status == Status.NOT_RUN for d in result.devices.values())


def test_skeleton_compiles_and_does_not_pass(root):
    result = check(force=True)
    assert result.status not in (Status.PASS, Status.COMPILED, Status.COMPILE_ERROR)
    # The skeleton's load() raises on purpose: it reports a crash with the learner's line.
    assert result.devices["cpu"].status == Status.CRASH
    assert "softmax_graph.py" in result.devices["cpu"].reason


def test_skeleton_kernels_write_nothing_so_outputs_stay_nan(root):
    """Only the graph is filled in: the empty kernels leave the poisoned NaN outputs."""
    import shutil

    shutil.copy(root / "solutions/p18/softmax_graph.py", root / "puzzles/p18/softmax_graph.py")
    result = check()
    cpu = result.parts[0].devices["cpu"]
    assert cpu.status == Status.FAIL
    out = cpu.cases[0].outputs[0]
    assert out.nan_count == out.size
    assert set(out.error_map) == {3}


def test_softmax_without_max_subtraction_fails(root):
    put_solution(root, "p18")
    put_wrong(root, "p18", "no_max_subtraction")
    result = check()
    assert result.status == Status.FAIL
    cases = {c.name: c for c in result.parts[0].devices["cpu"].cases}
    assert not cases["large (exp overflows)"].passed
    assert cases["large (exp overflows)"].outputs[0].nan_count > 0


def test_kernel_that_skips_the_last_element_fails(root):
    put_solution(root, "p18")
    put_wrong(root, "p18", "skips_last")
    result = check()
    assert result.status == Status.FAIL
    for case in result.parts[0].devices["cpu"].cases:
        out = case.outputs[0]
        assert not case.passed
        assert out.nan_count == 1 and out.error_map[-1] == 3 and out.error_map[0] != 3


def test_syntax_error_points_at_the_learners_line(root):
    put_solution(root, "p18")
    put_wrong(root, "p18", "syntax_error")
    result = check()
    assert result.status == Status.COMPILE_ERROR
    diag = result.diagnostics[0]
    assert diag.file == "puzzles/p18/op/softmax.mojo"
    # The compiler stops at the token after the dangling "+": the broken line is in view.
    assert any("shared[0][0] +" in text for _, text in diag.source)
    assert all(d.status == Status.NOT_RUN for d in result.devices.values())


def test_error_only_a_target_compile_finds_is_reported_without_running(root):
    """barrier() in the CPU kernel passes `mojo precompile`; the probe build catches it."""
    put_solution(root, "p18")
    put_wrong(root, "p18", "barrier_on_cpu")
    result = check()
    if has_gpu():
        assert result.status in (Status.COMPILE_ERROR, Status.CRASH)
        return
    assert result.status == Status.COMPILE_ERROR
    diag = result.diagnostics[0]
    assert diag.file == "puzzles/p18/op/softmax.mojo"
    assert "barrier()" in dict(diag.source)[diag.line]
    assert "barrier" in diag.message


def test_an_endless_loop_times_out_and_the_next_puzzle_still_runs(root, monkeypatch):
    from workbook import runner

    monkeypatch.setattr(runner, "RUN_TIMEOUT", 3.0)
    put_solution(root, "p18")
    put_wrong(root, "p18", "endless_loop")
    result = check()
    assert result.status == Status.TIMEOUT
    assert "endless loop" in result.devices["cpu"].reason
    import psutil

    assert not [p for p in psutil.Process().children(recursive=True) if p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE]  # the stuck worker was killed


@pytest.mark.gpu
def test_missing_barrier_fails_on_the_gpu(root):
    put_solution(root, "p18")
    put_wrong(root, "p18", "missing_barrier")
    result = check()
    assert result.devices["cpu"].status == Status.PASS  # the CPU kernel is right
    assert result.devices["gpu"].status == Status.FAIL
    assert result.status == Status.FAIL


@pytest.mark.gpu
def test_solution_passes_on_the_gpu(root):
    result = check(solutions=True)
    gpu = result.devices["gpu"]
    assert gpu.status == Status.PASS
    assert gpu.max_abs_error < 1e-6
    assert result.parts[0].devices["gpu"].repeats >= 2
