"""The curriculum checks itself (`workbook author verify`), one test per claim:
every solution passes on every device here, every skeleton is `not_started` and fails
when forced, and every wrong kernel under tests/wrong/ fails on the device and for the
reason its wrong.toml states. The real compiler, the real simulator, the real MAX."""

from __future__ import annotations

import pytest
from conftest import REPO

from workbook import catalog, curriculum
from workbook.results import Status

PUZZLES = catalog.all_puzzles(REPO)
KERNELS = [k for p in PUZZLES for k in curriculum.wrong_kernels(p, REPO)]


@pytest.fixture(scope="module")
def sandbox():
    with curriculum.Sandbox(REPO) as box:
        yield box


def test_static_checks_pass_for_every_puzzle():
    failed = [f"{v.what}: {v.detail}" for v in curriculum.static_checks(PUZZLES, REPO) if not v.ok]
    assert failed == []


def test_every_puzzle_has_wrong_kernels():
    for puzzle in PUZZLES:
        assert len(curriculum.wrong_kernels(puzzle, REPO)) >= 1, puzzle.id


@pytest.mark.slow
@pytest.mark.parametrize("pid", [p.id for p in PUZZLES])
def test_the_solution_passes_on_every_device_here(sandbox, pid):
    result, verdict = curriculum.run_solution(sandbox, pid)
    assert verdict.ok, verdict.detail
    assert result.status in (Status.PASS, Status.COMPILED)


@pytest.mark.slow
@pytest.mark.parametrize("pid", [p.id for p in PUZZLES])
def test_the_solution_passes_on_many_seeds(sandbox, pid):
    """A correct kernel is never failed for the seed a learner happens to meet: every case of
    every seed passes (one build holds every seed's cases; author verify runs more)."""
    verdict = curriculum.run_seeds(sandbox, pid, curriculum.SEED_BATCH)
    assert verdict.ok, verdict.detail


@pytest.mark.slow
@pytest.mark.parametrize("pid", [p.id for p in PUZZLES])
def test_the_skeleton_is_not_started_and_fails_when_forced(sandbox, pid):
    verdict = curriculum.run_skeleton(sandbox, pid)
    assert verdict.ok, verdict.detail


@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS, ids=[k.id for k in KERNELS])
def test_the_wrong_kernel_fails_for_its_stated_reason(sandbox, kernel):
    _, verdicts = curriculum.run_wrong(sandbox, kernel)
    failed = [f"{v.what}: {v.detail}" for v in verdicts if not v.ok]
    assert failed == [], kernel.why
