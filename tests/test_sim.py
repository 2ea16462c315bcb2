"""The simulator, through the real compiler: ids in 1 to 3 dimensions, per-block shared
memory, barrier(), several launches in a row, and the bugs it must name.

The fixture puzzle (tests/data/simbook/puzzles/p90) holds correct kernels; each test
breaks one on purpose, as a learner would, and checks what the simulator reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbook import catalog, engine
from workbook.results import Status

BOOK = Path(__file__).parent / "data" / "simbook"
pytestmark = pytest.mark.slow


@pytest.fixture
def book(tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "simbook"
    shutil.copytree(BOOK, copy)
    monkeypatch.setenv("WORKBOOK_ROOT", str(copy))
    return copy


def run(book: Path, part: str, change: tuple[str, str] | None = None):
    """Check one part on the simulator, with one change to the kernels."""
    source = (book / "solutions/p90/sim.mojo").read_text()
    if change:
        assert change[0] in source, change[0]
        source = source.replace(*change)
    (book / "puzzles/p90/sim.mojo").write_text(source)
    result = engine.check_puzzle(catalog.load("p90"), engine.Options(part=part, seed=1, quick=True,
                                                                    devices=("sim",), force=True))
    assert result.status != Status.COMPILE_ERROR, result.diagnostics
    return result.parts[0].kernels["sim"]


def kinds(dev) -> set[str]:
    return {f.kind for f in dev.findings or []}


def test_ids_and_sizes_in_one_two_and_three_dimensions(book):
    sim = run(book, "ids")
    assert sim.status == Status.PASS, sim.reason
    assert [c.name for c in sim.cases] == ["1d", "2d", "3d"] and all(c.passed for c in sim.cases)
    assert sim.findings == []


def test_shared_memory_is_per_block_and_barrier_makes_writes_visible(book):
    sim = run(book, "neighbours")
    assert sim.status == Status.PASS and sim.findings == []


def test_several_launches_share_a_scratch_buffer(book):
    assert run(book, "sum").status == Status.PASS


def test_a_missing_barrier_makes_the_result_depend_on_thread_order(book):
    sim = run(book, "neighbours", ("    barrier()\n    if i < size:\n        output[i]",
                                   "    if i < size:\n        output[i]"))
    assert sim.status == Status.FAIL
    assert any(c.order_dependent for c in sim.cases)
    assert "reason.order" in [m.key for m in sim.reasons]


def test_shared_memory_nobody_wrote_reads_as_nan(book):
    sim = run(book, "neighbours", ("        shared[t] = a[i]\n", "        pass\n"))
    assert sim.status == Status.FAIL
    assert all(o.nan_count == o.size for c in sim.cases for o in c.outputs)


def test_two_threads_writing_one_shared_element_between_barriers_is_a_race(book):
    sim = run(book, "neighbours", ("        shared[t] = a[i]\n", "        shared[t // 2] = a[i]\n"))
    assert sim.status == Status.FAIL and "shared_race" in kinds(sim)
    race = next(f for f in sim.findings if f.kind == "shared_race")
    assert race.message.values["index"] == 0 and race.case == "size 9"
    assert {race.message.values["a"].values["t"], race.message.values["b"].values["t"]} == {"0", "1"}


def test_a_barrier_some_threads_never_reach_is_reported_with_the_counts(book):
    sim = run(book, "neighbours", ("        shared[t] = a[i]\n    barrier()\n",
                                   "        shared[t] = a[i]\n        barrier()\n"))
    assert sim.status == Status.FAIL and kinds(sim) == {"divergent_barrier"}
    stuck = sim.findings[0].message.values
    assert (stuck["finished"], stuck["waiting"]) == (3, 1)  # size 9: the last block has one thread in range


def test_a_write_past_the_end_is_named_with_the_thread(book):
    sim = run(book, "neighbours", ("        output[i] = shared[t]", "        output[i + 1] = shared[t]"))
    assert sim.status == Status.FAIL and "out_of_bounds" in kinds(sim)
    found = next(f for f in sim.findings if f.kind == "out_of_bounds").message.values
    assert (found["buffer"], found["index"], found["size"]) == ("output", 9, 9)
    assert found["who"].values == {"t": "0", "b": "2"}


def test_two_blocks_writing_one_element_is_a_race(book):
    sim = run(book, "sum", ("        totals[block_idx.x] = s", "        totals[0] = s"))
    assert "global_race" in kinds(sim)
    assert any(f.message.key == "finding.sim_global_race_blocks" for f in sim.findings)


def test_the_first_failing_case_shows_who_wrote_each_element(book):
    sim = run(book, "neighbours", ("        output[i] = shared[t]", "        output[i + 1] = shared[t]"))
    case = next(c for c in sim.cases if not c.passed)
    shape, writers = case.picture.outputs["output"]
    assert shape == [9] and writers[0] == -1 and writers[1] == 0 and writers[5] == 4  # thread 0 of block 1
    (alloc, shared), = case.picture.shared
    assert alloc == 0 and shared == [0, 1, 2, 3]


def test_a_cpu_function_using_gpu_ids_is_stopped_with_a_message(root):
    from conftest import put_solution, put_wrong

    put_solution(root, "p18")
    put_wrong(root, "p18", "barrier_on_cpu")
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(seed=1, quick=True, devices=("cpu",)))
    cpu = result.parts[0].kernels["cpu"]
    assert cpu.status == Status.CRASH and cpu.reasons[0].key == "run.sim_misuse"


def test_a_read_past_the_end_of_an_input_is_named_with_the_thread(book):
    sim = run(book, "neighbours", ("    if i < size:\n        shared[t] = a[i]\n", "    shared[t] = a[i]\n"))
    assert sim.status == Status.FAIL and "read_out_of_bounds" in kinds(sim)
    found = next(f for f in sim.findings if f.kind == "read_out_of_bounds").message.values
    assert (found["buffer"], found["index"], found["size"]) == ("a", 9, 9)
    assert found["who"].values == {"t": "1", "b": "2"}  # i = 2 * 4 + 1 = 9: the first past the end
