"""The curriculum checks itself (`workbook author verify`), one test per claim:
every solution passes on every device here, every skeleton is `not_started` and fails
when forced, and every wrong kernel under tests/wrong/ fails on the device and for the
reason its wrong.toml states. The real compiler, the real simulator, the real MAX."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO

from workbook import catalog, curriculum, engine, launcher
from workbook.results import Status

# Seeds per solution in the suite (CI has 30 minutes on two cores for 26 puzzles);
# `author verify --run` runs 40, and the H100 run records them.
TEST_SEEDS = 10

PUZZLES = catalog.all_puzzles(REPO)
KERNELS = [k for p in PUZZLES for k in curriculum.wrong_kernels(p, REPO)]


@pytest.fixture(scope="module")
def sandbox():
    with curriculum.Sandbox(REPO) as box:
        yield box


def test_static_checks_pass_for_every_puzzle():
    failed = [f"{v.what}: {v.detail}" for v in curriculum.static_checks(PUZZLES, REPO) if not v.ok]
    assert failed == []


def test_the_size_and_grid_checks_catch_a_reference_without_them(root):
    """A p06 whose reference keeps only its cases of 4 and 10 (values on the 1/4 grid): no
    case beyond its constant, none seeded, none off the 16-bit grids, and the checks say so."""
    path = root / "puzzles/p06/reference.py"
    path.write_text(path.read_text() + (
        "\n_all = cases\n\n\ndef cases(rng, part):\n"
        "    return [c for c in _all(rng, part) if not c['seeded'] and c['params']['size'] in (4, 10)]\n"))
    puzzle = catalog.load("p06", root)
    sizes = curriculum._sizes(puzzle)
    assert not sizes[0].ok and "beyond every constant" in sizes[0].detail and "seeded" in sizes[0].detail
    assert not curriculum._off_grid(puzzle)[0].ok


def test_beyond_constants_counts_blocks_against_threads():
    puzzle = catalog.load("p14", REPO)
    part = puzzle.part("any")
    ref = engine.load_reference(puzzle)
    cases = [c for c in ref.cases(np.random.default_rng(3), "any") if c["name"] in ("five blocks, 300",
                                                                                  "70 blocks, 4470")]
    plan = launcher.make_plan(puzzle, [(part, cases, [ref.expected(c, "any") for c in cases])])
    assert [curriculum.beyond_constants(puzzle, spec) for spec in plan.cases] == [False, True]


def test_on_grid_rounds_to_the_16_bit_formats():
    values = np.array([1 + 2**-12, 1 + 2**-9, 1 + 2**-7, 3 * 2**-8], dtype=np.float32)
    assert curriculum.on_grid(values, "float16").tolist() == [1.0, 1 + 2**-9, 1 + 2**-7, 3 * 2**-8]
    assert curriculum.on_grid(values, "bfloat16").tolist() == [1.0, 1.0, 1 + 2**-7, 3 * 2**-8]


def test_every_puzzle_has_wrong_kernels():
    for puzzle in PUZZLES:
        assert len(curriculum.wrong_kernels(puzzle, REPO)) >= 1, puzzle.id


@pytest.mark.slow
@pytest.mark.parametrize("pid", [p.id for p in PUZZLES])
def test_the_solution_passes_on_every_device_here(sandbox, pid, monkeypatch):
    # An op's graphs built early, held and then released: the way of a machine with cores to
    # spare (settings.graphs_early), proven here with the real MAX; the wrong kernels take the other.
    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "1")
    result, verdict = curriculum.run_solution(sandbox, pid)
    assert verdict.ok, verdict.detail
    assert result.status in (Status.PASS, Status.COMPILED)
    for spec, part in zip(catalog.load(pid, sandbox.dir).parts, result.parts):
        for dev in part.graph.values():  # the graph stage ran exactly the cases the manifest chose
            if dev.status == Status.PASS and spec.graph_cases:
                assert [c.name for c in dev.cases] == list(spec.graph_cases), (pid, part.id)
                assert dev.tools is not None and dev.tools.key == "graph.some_cases"


@pytest.mark.slow
@pytest.mark.parametrize("pid", [p.id for p in PUZZLES])
def test_the_solution_passes_on_many_seeds(sandbox, pid):
    """A correct kernel is never failed for the seed a learner happens to meet: every case of
    every seed passes (one build holds every seed's cases; author verify runs more)."""
    verdict = curriculum.run_seeds(sandbox, pid, TEST_SEEDS)
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
