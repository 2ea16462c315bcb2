"""Puzzle 22 (LayerNorm + Linear backward) through the real engine.

Several shapes reach the kernel as op parameters, so a kernel with hard-coded
sizes fails; a kernel without the variance term fails on grad_input only."""

from __future__ import annotations

import pytest
from conftest import has_gpu, put_solution, put_wrong

from workbook import catalog, engine
from workbook.results import Status

pytestmark = pytest.mark.slow
GRADIENTS = ("grad_input", "grad_ln_weight", "grad_ln_bias", "grad_weight", "grad_bias")


def check(**options):
    return engine.check_puzzle(catalog.load("p22"), engine.Options(seed=7, **options))


def failing_outputs(result, device="cpu") -> set[str]:
    return {o.name for c in result.parts[0].devices[device].cases for o in c.outputs if not o.passed}


def test_solution_passes_every_shape_and_reports_every_gradient(root):
    result = check(solutions=True)
    assert result.status == Status.PASS, result.devices["cpu"].reason
    cases = result.parts[0].devices["cpu"].cases
    shapes = {tuple(sorted(c.params.items())) for c in cases}
    assert len(shapes) >= 2
    assert any(c.params["hidden"] & (c.params["hidden"] - 1) for c in cases)  # not a power of two
    for case in cases:
        assert [o.name for o in case.outputs] == ["output", *GRADIENTS]
    if not has_gpu():
        assert result.devices["gpu"].status == Status.COMPILED


def test_skeleton_compiles_and_does_not_pass(root):
    result = check(force=True)
    assert result.status == Status.FAIL
    assert failing_outputs(result) >= {"output", "grad_input"}


def test_forgetting_the_variance_term_fails_grad_input_only(root):
    put_wrong(root, "p22", "no_variance_term")
    result = check()
    assert result.status == Status.FAIL
    assert failing_outputs(result) == {"grad_input"}


def test_hard_coded_sizes_fail_on_the_other_shapes(root):
    put_wrong(root, "p22", "hardcoded_sizes")
    result = check()
    assert result.status == Status.FAIL
    by_shape = {}
    for case in result.parts[0].devices["cpu"].cases:
        by_shape.setdefault((case.params["hidden"], case.params["out"]), []).append(case.passed)
    assert all(by_shape[(8, 16)]) and not all(all(v) for v in by_shape.values())


@pytest.mark.gpu
def test_solution_passes_on_the_gpu(root):
    result = check(solutions=True)
    assert result.devices["gpu"].status == Status.PASS


@pytest.mark.gpu
def test_zeroing_inside_the_kernel_is_caught_on_the_gpu(root):
    put_solution(root, "p22")
    put_wrong(root, "p22", "zeroes_in_kernel")
    result = check()
    assert result.devices["cpu"].status == Status.PASS
    assert result.devices["gpu"].status == Status.FAIL
