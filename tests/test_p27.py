"""Puzzle 27 (block.sum, block.prefix_sum, block.broadcast): GPU-only parts.

Without a GPU the kernels are compiled for a GPU target and reported as
`compiled`; the run itself is covered by the GPU tests (docs/verification.md)."""

from __future__ import annotations

import pytest
from conftest import has_gpu, put_solution, put_wrong

from workbook import catalog, engine
from workbook.results import Status

pytestmark = pytest.mark.slow


def check(**options):
    return engine.check_puzzle(catalog.load("p27"), engine.Options(seed=3, **options))


def test_solution_compiles_for_a_gpu_or_passes_on_one(root):
    result = check(solutions=True)
    assert [p.id for p in result.parts] == ["sum", "prefix_sum", "broadcast"]
    expected = Status.PASS if has_gpu() else Status.COMPILED
    assert result.status == expected
    for part in result.parts:
        assert list(part.devices) == ["gpu"]
        assert part.devices["gpu"].status == expected


def test_skeleton_never_passes(root):
    untouched = check()
    assert untouched.status == Status.NOT_STARTED
    forced = check(force=True)
    assert forced.status == (Status.FAIL if has_gpu() else Status.COMPILED)


def test_one_part_by_id(root):
    result = check(solutions=True, part="broadcast")
    assert [p.id for p in result.parts] == ["broadcast"]


@pytest.mark.gpu
def test_normalizing_by_the_sum_instead_of_the_mean_fails(root):
    put_solution(root, "p27")
    put_wrong(root, "p27", "sum_not_mean")
    result = check()
    statuses = {p.id: p.status for p in result.parts}
    assert statuses == {"sum": Status.PASS, "prefix_sum": Status.PASS, "broadcast": Status.FAIL}
