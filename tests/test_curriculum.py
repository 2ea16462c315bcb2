"""The curriculum checks itself (`workbook author verify`), one test per claim:
every solution passes on every device here, every skeleton is `not_started` and fails
when forced, every wrong kernel under tests/wrong/ fails on the device and for the
reason its wrong.toml states, every right kernel under tests/right/ (written another
way than the solution) passes on every device here, and every special point a manifest
declares is hit by a case named for it. The real compiler, the real simulator, the real
MAX."""

from __future__ import annotations

import numpy as np
import pytest
import scope
from conftest import REPO

from workbook.author import curriculum
from workbook.check import engine
from workbook.compile import launcher
from workbook.core.results import Status
from workbook.course import catalog, manifest

# WORKBOOK_TEST_SCOPE=ci (.ci/run: two cores, 90 minutes) runs a share of the kernels: every
# wrong and right kernel a commit touched, and a sample of the rest that changes with each
# commit (tests/scope.py). Without it (the default), all of them, and 10 seeds a solution;
# `author verify --run` runs 40, and the GPU runs record them.
CI = scope.ci()
TEST_SEEDS = 3 if CI else 10

PUZZLES = catalog.all_puzzles(REPO)
ALL_KERNELS = [k for p in PUZZLES for k in curriculum.wrong_kernels(p, REPO)]
ALL_RIGHT = [k for p in PUZZLES for k in curriculum.right_kernels(p, REPO)]
KERNELS = scope.sample(ALL_KERNELS, per_puzzle=1) if CI else ALL_KERNELS
RIGHT = scope.sample(ALL_RIGHT, per_puzzle=1) if CI else ALL_RIGHT
# Right kernels whose check takes minutes cold (p33's tensor cores, p34's clusters).
SLOW_RIGHT = ("p33", "p34")


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


@pytest.mark.parametrize("kernel", [pytest.param(k, marks=pytest.mark.slow) if k.puzzle in SLOW_RIGHT else k
                                    for k in RIGHT], ids=[k.id for k in RIGHT])
def test_the_right_kernel_passes_on_every_device_here(sandbox, kernel):
    """A correct kernel written another way (another loop shape, wait, layout or barrier
    placement) passes: the checks fail only what the text asks."""
    _, verdicts = curriculum.run_right(sandbox, kernel)
    failed = [f"{v.what}: {v.detail}" for v in verdicts if not v.ok]
    assert failed == [], kernel.differs


def test_the_moved_variants_are_right_kernels_now():
    """The right kernels that had test files of their own (p29, p32, p33, p34) live in
    tests/right with the rest, each with its part, and p24's shows the one-write rule
    counts only its own kernel."""
    ids = {k.id: k for k in ALL_RIGHT}
    for kid, part in (("p29/pipeline_chunks", "pipeline"), ("p29/stencil_parity_wait", "stencil"),
                      ("p29/stencil_count_of_values", "stencil"), ("p32/transpose_swizzled", "transpose"),
                      ("p32/pairs_split_padded", "pairs"), ("p33/fragments_in_a_loop", "fragments"),
                      ("p33/steps_inside_columns", "tensor_core"), ("p34/split_arrive_wait", None),
                      ("p34/leader_by_index", None), ("p24/output_zeroed_first", "blocks")):
        assert ids[kid].part == part, kid


# --- special points ----------------------------------------------------------------


def _special(root, pid: str = "p01"):
    return curriculum._special(catalog.load(pid, root))


def _append(path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


POINT = """
[[parts.special]]
name = "exactly_minus_ten"
why.en = "a[i] = -10: the answer is exactly 0."
why.ko = "a[i] = -10: 답이 정확히 0입니다."
"""


def test_a_declared_point_no_case_hits_fails_the_check_and_passes_once_one_does(root):
    """p01 declares a point its reference does not find in any case: the check names it and
    fails on every seed; once hits() finds it and the case that holds -10 says it is there
    for it, the check passes, naming that case."""
    _append(root / "puzzles/p01/puzzle.toml", POINT)
    verdict, = _special(root)
    assert not verdict.ok
    assert "no case is there for 'exactly_minus_ten' and hits it (every seed)" in verdict.detail
    reference = root / "puzzles/p01/reference.py"
    text = reference.read_text()
    text = text.replace('special=("zero", "sum_below_zero")', 'special=("zero", "sum_below_zero", "exactly_minus_ten")')
    text = text.replace('    if np.any(a == 0):', '    if np.any(a == -10):\n        found.add("exactly_minus_ten")\n'
                        '    if np.any(a == 0):')
    reference.write_text(text)
    verdict, = _special(root)
    assert verdict.ok, verdict.detail
    assert "exactly_minus_ten: zeros and negatives, 7 values" in verdict.detail


def test_a_case_cannot_claim_a_point_its_inputs_miss(root):
    """'4 values' says it is there for the largest block: hits() sees 4 elements, so the
    claim is refused, whatever the case's name or claims say."""
    reference = root / "puzzles/p01/reference.py"
    reference.write_text(reference.read_text().replace(
        '_case("4 values", "값 4개", rng.uniform(-5, 5, 4).round(2))',
        '_case("4 values", "값 4개", rng.uniform(-5, 5, 4).round(2), special=("largest_block",))'))
    verdict, = _special(root)
    assert not verdict.ok
    assert "case '4 values' claims largest_block and its inputs do not hit it (every seed)" in verdict.detail


def test_declared_points_without_hits_in_the_reference_are_an_error(root):
    reference = root / "puzzles/p01/reference.py"
    reference.write_text(reference.read_text().replace("def hits(", "def _not_hits("))
    verdict, = _special(root)
    assert not verdict.ok and "has no hits(case, part)" in verdict.detail


def test_hits_may_name_only_declared_points(root):
    """A point hits() finds that the manifest does not declare (a typo, a point left out of
    the manifest) is an error, not a point silently covered."""
    reference = root / "puzzles/p01/reference.py"
    reference.write_text(reference.read_text().replace('found.add("zero")', 'found.add("zeros")'))
    verdict, = _special(root)
    assert not verdict.ok
    assert "hits() names points the manifest does not declare: zeros" in verdict.detail
    assert "no case is there for 'zero'" in verdict.detail


def test_a_manifest_point_needs_a_name_and_why_in_both_languages(root):
    _append(root / "puzzles/p01/puzzle.toml", '\n[[parts.special]]\nname = "half"\nwhy.en = "only English"\n')
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.load("p01", root)
    assert "why.ko" in str(caught.value.msg.values)


def test_the_pattern_puzzles_declare_special_points():
    """p01, p18 and p24 show the pattern: every part declares its points, each found by a
    case named for it on every seed (the static checks hold it for every puzzle)."""
    for pid in ("p01", "p18", "p24"):
        puzzle = catalog.load(pid, REPO)
        assert all(part.special for part in puzzle.parts), pid
        verdicts = curriculum._special(puzzle)
        assert len(verdicts) == len(puzzle.parts) and all(v.ok for v in verdicts), [v.detail for v in verdicts]
