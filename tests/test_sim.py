"""The simulator, through the real compiler: ids in 1 to 3 dimensions, per-block shared
memory, barrier(), several launches in a row, and every bug it must name, with the
line of the access, the element in the learner's terms and the threads that did it.

The fixture puzzle (tests/data/simbook/puzzles/p90) holds correct kernels; each test
breaks one on purpose, as a learner would, and checks what the simulator reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbook.check import engine
from workbook.core.results import Status
from workbook.course import catalog

BOOK = Path(__file__).parent / "data" / "simbook"
pytestmark = pytest.mark.slow


@pytest.fixture
def book(tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "simbook"
    shutil.copytree(BOOK, copy)
    monkeypatch.setenv("WORKBOOK_ROOT", str(copy))
    return copy


def source_of(book: Path, *changes: tuple[str, str]) -> str:
    source = (book / "solutions/p90/sim.mojo").read_text()
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


def run(book: Path, part: str, *changes: tuple[str, str], run_timeout: float | None = None):
    """Check one part on the simulator, with changes to the kernels: run afresh, never a kept
    verdict (these tests are about what the simulator sees, the per-thread counts too)."""
    (book / "puzzles/p90/sim.mojo").write_text(source_of(book, *changes))
    result = engine.check_puzzle(catalog.load("p90"), engine.Options(part=part, seed=1, quick=True, devices=("sim",),
                                                                    force=True, run_timeout=run_timeout, cache=False))
    assert result.status != Status.COMPILE_ERROR, result.diagnostics
    return result.parts[0].kernels["sim"]


def line(book: Path, text: str, *changes: tuple[str, str]) -> int:
    """The line of the (changed) fixture that holds `text`."""
    lines = source_of(book, *changes).splitlines()
    found = [n for n, line in enumerate(lines, 1) if text == line] or \
        [n for n, line in enumerate(lines, 1) if text.strip() == line.strip()] or \
        [n for n, line in enumerate(lines, 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def kinds(dev) -> set[str]:
    return {f.kind for f in dev.findings or []}


def only(dev, kind: str):
    found = [f for f in dev.findings or [] if f.kind == kind]
    assert found, (kind, [(f.kind, f.message.text("en")) for f in dev.findings or []])
    return found[0]


# --- what runs right ----------------------------------------------------------


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


def test_neighbouring_16_bit_slots_written_by_two_threads_are_no_race(book):
    """Shared memory is watched byte by byte, at each access's own width: two threads
    writing two float16 slots side by side are not one 4-byte word written twice."""
    sim = run(book, "halves")
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_every_thread_s_reads_and_writes_are_counted(book):
    """size 9, TPB 4: threads with an element read a[i] once, write output[i] once, write
    their shared slot once and read two slots; the three spare threads do nothing."""
    sim = run(book, "neighbours")
    launch = next(a for a in sim.access if a.case == "size 9")
    assert launch.kernel == "neighbours" and launch.threads == 12
    table = launch.per_thread
    from workbook.run.kernelrun import COUNTERS

    column = {name: table[:, k].tolist() for k, name in enumerate(COUNTERS)}
    assert column["global_reads"] == [1] * 9 + [0] * 3 and column["global_read_bytes"] == [4] * 9 + [0] * 3
    assert column["global_writes"] == [1] * 9 + [0] * 3
    assert column["shared_writes"] == [1] * 9 + [0] * 3
    assert column["shared_reads"] == [2] * 9 + [0] * 3
    assert launch.most["shared_reads"] == 2 and launch.total["global_writes"] == 9
    assert launch.writes_per_element == {"output": 1}


# --- reads and writes outside -----------------------------------------------------


def test_a_read_past_the_end_of_a_shared_array_names_the_array_and_the_element(book):
    change = ("shared[(t + 1) % last]", "shared[t + 1]")
    sim = run(book, "neighbours", change)
    found = only(sim, "shared_read_out_of_bounds")
    assert found.line == line(book, "shared[t + 1]", change)
    assert found.message.values["element"] == "shared[4]" and found.message.values["size"] == 4
    assert found.file == "puzzles/p90/sim.mojo" and "shared[t + 1]" in found.source


def test_a_write_past_a_shared_array_names_the_block_thread_and_element(book):
    change = ("        shared[t] = a[i]\n", "        shared[t + 1] = a[i]\n")
    sim = run(book, "neighbours", change)
    found = only(sim, "shared_out_of_bounds")
    assert found.line == line(book, "shared[t + 1] = a[i]", change)
    assert found.message.values["element"] == "shared[4]"
    who = found.message.values["who"]  # thread 3 of blocks 0 and 1 (block 2's thread 3 has no element)
    assert who.key == "sim.threads_such_as" and who.values["n"] == 2
    assert who.values["such"].values == {"t": "3", "b": "0"}


def test_a_read_before_the_first_element_is_a_finding(book):
    change = ("        shared[t] = a[i]\n", "        shared[t] = a[i - 1]\n")
    sim = run(book, "neighbours", change)
    found = only(sim, "read_out_of_bounds")
    assert found.message.values["element"] == "a[-1]"
    assert found.line == line(book, "a[i - 1]", change)
    assert found.message.values["who"].values == {"t": "0", "b": "0"}


def test_one_thread_too_many_and_no_guard_at_all_are_told_apart(book):
    """`i <= size` lets one thread past the end; no guard lets every spare thread through."""
    one = run(book, "neighbours", ("    if i < size:\n        shared[t] = a[i]\n",
                                   "    if i <= size:\n        shared[t] = a[i]\n"))
    found = only(one, "read_out_of_bounds")
    assert found.threads == 1 and found.message.values["element"] == "a[9]"
    every = run(book, "neighbours", ("    if i < size:\n        shared[t] = a[i]\n", "    shared[t] = a[i]\n"))
    found = only(every, "read_out_of_bounds")
    assert found.threads == 3 and found.message.values["element"] == "a[9..11]"
    assert found.message.key == "finding.sim_read_outside"
    assert found.message.values["who"].key == "sim.thread_range_in_block"
    assert found.message.values["who"].values["first"] == 1 and found.message.values["who"].values["last"] == 3


def test_a_write_past_the_end_is_named_with_the_thread(book):
    change = ("        output[i] = shared[t]", "        output[i + 1] = shared[t]")
    sim = run(book, "neighbours", change)
    found = only(sim, "out_of_bounds")
    assert (found.message.values["buffer"], found.message.values["element"], found.message.values["size"]) == \
        ("output", "output[9]", 9)
    assert found.message.values["who"].values == {"t": "0", "b": "2"}
    assert found.line == line(book, "output[i + 1]", change)


def test_memory_far_outside_every_buffer_stops_the_case_and_says_read_or_write(book):
    """Pointer arithmetic gone wild lands outside everything the simulator hands out: the
    case stops at that instruction, which is named, and a write is told from a read (a
    write never lands: the store guard refuses it, a wild_write).
    (Tensor indexing can't get there: a small tensor's index is 32 bits wide and wraps.)"""
    far_read = ("        shared[t] = a[i]\n", "        shared[t] = a.ptr[unsafe_offset=i - (1 << 36)]\n")
    read = run(book, "neighbours", far_read)
    found = only(read, "invalid_read")
    assert found.line == line(book, "a.ptr[unsafe_offset=i - (1 << 36)]", far_read)
    assert not read.cases[0].ran
    far_write = ("        output[i] = shared[t] + shared[(t + 1) % last]",
                 "        output.ptr[unsafe_offset=i - (1 << 36)] = shared[t] + shared[(t + 1) % last]")
    wrote = run(book, "neighbours", far_write)
    found = only(wrote, "wild_write")  # the store guard refuses it before it faults
    assert "invalid_read" not in kinds(wrote)
    assert found.line == line(book, "output.ptr[unsafe_offset=i - (1 << 36)] =", far_write)


# --- memory nobody wrote ------------------------------------------------------------


def test_a_read_of_shared_memory_no_thread_wrote_is_a_finding(book):
    change = ("    if i < size:\n        shared[t] = a[i]\n", "    if i < size and t != 1:\n        shared[t] = a[i]\n")
    sim = run(book, "neighbours", change)
    found = only(sim, "uninitialized_read")
    assert found.message.values["element"] == "shared[1]" and found.message.key == "finding.sim_unwritten_shared"
    assert found.line == line(book, "output[i] = shared[t] + shared[(t + 1) % last]", change)


def test_a_read_of_a_scratch_element_no_launch_wrote_is_a_finding(book):
    change = ("        totals[block_idx.x] = s", "        if block_idx.x == 0:\n            totals[0] = s")
    sim = run(book, "sum", change)
    found = only(sim, "uninitialized_read")
    assert found.message.values["element"] == "totals[1..2]" and found.kernel == "grand_total"  # size 9: 3 blocks
    assert found.line == line(book, "s += totals[k][0]", change)


# --- races ----------------------------------------------------------------------


def test_a_missing_barrier_is_a_race_with_both_lines(book):
    change = ("    barrier()\n    if i < size:\n        output[i]", "    if i < size:\n        output[i]")
    sim = run(book, "neighbours", change)
    assert sim.status == Status.FAIL and any(c.order_dependent for c in sim.cases)
    race = only(sim, "shared_race")
    assert {race.line, race.other_line} == {line(book, "shared[t] = a[i]", change),
                                            line(book, "output[i] = shared[t] +", change)}
    assert race.message.key == "finding.sim_race_rw" and race.message.values["element"].startswith("shared[")


def test_two_threads_writing_one_shared_element_in_one_round_is_a_race(book):
    sim = run(book, "neighbours", ("        shared[t] = a[i]\n", "        shared[t // 2] = a[i]\n"))
    race = only(sim, "shared_race")
    assert race.message.key == "finding.sim_race_ww" and race.message.values["element"] == "shared[0..1]"
    assert race.case == "size 9"


def test_a_write_after_another_thread_s_read_in_the_same_round_is_a_race(book):
    change = ("        output[i] = shared[t] + shared[(t + 1) % last]",
              "        output[i] = shared[t] + shared[(t + 1) % last]\n        shared[t] = 0")
    sim = run(book, "neighbours", change)
    race = only(sim, "shared_race")
    assert {race.line, race.other_line} == {line(book, "        shared[t] = 0", change),
                                            line(book, "output[i] = shared[t] +", change)}
    # Seen from both sides (forward: write after read; reverse: read after write), told once.
    assert len([f for f in sim.findings if f.kind == "shared_race"]) == 1


def test_two_threads_writing_the_same_value_to_one_element_is_still_a_race(book):
    """A data race whatever the values: every thread of a block writes the block's first
    element, all with the same value."""
    change = ("        output[i] = shared[t] + shared[(t + 1) % last]",
              "        output[i] = shared[t] + shared[(t + 1) % last]\n"
              "        output[block_idx.x * TPB] = shared[0] + shared[1 % last]")
    sim = run(book, "neighbours", change)
    race = only(sim, "global_race")
    assert race.message.key == "finding.sim_race_ww"
    assert race.line == line(book, "output[block_idx.x * TPB] =", change)


def test_two_blocks_writing_one_element_is_a_race(book):
    sim = run(book, "sum", ("        totals[block_idx.x] = s", "        totals[0] = s"))
    race = only(sim, "global_race")
    assert race.message.key == "finding.sim_race_ww_blocks"


# --- barriers ---------------------------------------------------------------------


def test_a_barrier_some_threads_never_reach_names_its_line_and_the_counts(book):
    change = ("        shared[t] = a[i]\n    barrier()\n", "        shared[t] = a[i]\n        barrier()\n")
    sim = run(book, "neighbours", change)
    assert sim.status == Status.FAIL and kinds(sim) == {"divergent_barrier"}
    stuck = sim.findings[0]
    assert (stuck.message.values["finished"], stuck.message.values["waiting"]) == (3, 1)  # size 9: one in range
    assert stuck.line == line(book, "        barrier()", change)


def test_threads_waiting_at_different_barriers_in_one_round_is_a_finding(book):
    change = ("    barrier()\n    if i < size:\n        output[i]",
              "    if t % 2 == 0:\n        barrier()\n    else:\n        barrier()\n"
              "    if i < size:\n        output[i]")
    sim = run(book, "neighbours", change)
    found = only(sim, "barrier_mismatch")
    lines = [int(w.values["line"]) for w in found.message.values["where"]]
    assert sorted(lines) == sorted(n for n, text in enumerate(source_of(book, change).splitlines(), 1)
                                   if text == "        barrier()")


def test_a_case_the_simulator_stops_shows_none_of_another_case_s_values(book):
    change = ("        shared[t] = a[i]\n    barrier()\n", "        shared[t] = a[i]\n        barrier()\n")
    sim = run(book, "neighbours", change)
    stopped = [c for c in sim.cases if not c.ran]
    assert [c.name for c in stopped] == ["size 9", "size 3"]  # their last block is partly empty
    assert all(c.outputs == [] for c in stopped)


# --- endless loops ---------------------------------------------------------------------


def test_a_thread_that_never_reaches_a_barrier_is_stopped_with_its_line(book, monkeypatch):
    monkeypatch.setenv("WORKBOOK_SIM_STRETCH", "1")
    change = ("        output[i] = shared[t] + shared[(t + 1) % last]",
              "        var k = 0\n        while k < 4:\n            output[i] = shared[t] + shared[k % last]")
    sim = run(book, "neighbours", change, run_timeout=30)
    assert sim.status == Status.TIMEOUT and sim.seconds < 15
    found = only(sim, "endless_loop")
    assert found.message.key == "finding.sim_endless"
    assert found.line in range(line(book, "while k < 4:", change), line(book, "shared[k % last]", change) + 1)


def test_an_endless_loop_through_barriers_stops_at_the_limit_with_its_line(book):
    change = ("    barrier()\n    if i < size:\n        output[i]",
              "    var r = 0\n    while r >= 0:\n        barrier()\n        r += 1\n"
              "    if i < size:\n        output[i]")
    sim = run(book, "neighbours", change, run_timeout=3)
    assert sim.status == Status.TIMEOUT
    found = only(sim, "endless_loop")
    assert found.message.key == "finding.sim_too_long" and found.line is not None


# --- the CPU kernels of the op puzzles ---------------------------------------------------


def test_a_cpu_function_using_gpu_ids_is_refused_at_compile_time(root):
    """The GPU build compiles the CPU kernel too (never running it), so barrier() in it is
    an error with its line, not a crash of the CPU run."""
    from conftest import put_solution, put_wrong

    put_solution(root, "p18")
    put_wrong(root, "p18", "barrier_on_cpu")
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(seed=1, devices=("cpu", "gpu")))
    assert result.status == Status.COMPILE_ERROR
    assert any(d.file.endswith("softmax.mojo") for d in result.diagnostics)


# --- warps ---------------------------------------------------------------------------


def test_warp_operations_give_what_an_nvidia_gpu_gives(book):
    """Shuffles (the top lanes keep their own value going down), the xor-butterfly sum in
    every lane, max in every lane too (max 26.7 compiles warp.max to an xor butterfly on
    sm_90, not shuffles down), the inclusive scan, broadcast and the ballot,
    in blocks of two warps: the reference says what each lane gets on the GPU."""
    sim = run(book, "warps")
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_a_warp_operation_reading_a_lane_with_no_thread_is_a_finding(book):
    """Blocks of 40 threads: the second warp has 8 lanes, and warp.sum's butterfly reads
    lanes 8-31 there."""
    sim = run(book, "partial_warps")
    found = only(sim, "warp_lane_missing")
    assert found.line == line(book, "output[row, 1] = warp.sum(v)")
    assert found.message.values["lanes"] == 8


def test_a_shuffle_inside_a_branch_only_some_lanes_take_is_a_finding(book):
    change = ("    output[row, 2] = warp.shuffle_down(v, 1)",
              "    if lane_id() < 16:\n        output[row, 2] = warp.shuffle_down(v, 1)")
    sim = run(book, "warps", change)
    found = only(sim, "warp_divergence")
    waits = {int(w.values["line"]): w.values["n"] for w in found.message.values["where"]}
    # lanes 0-15 wait at the shuffle in the branch; 16-31 went on to the next one
    assert waits == {line(book, "        output[row, 2] = warp.shuffle_down(v, 1)", change): 16,
                     line(book, "    output[row, 3] = warp.shuffle_xor(v, 2)", change): 16}


def test_a_shuffle_reading_a_lane_that_finished_is_a_finding(book):
    change = ("    var row = i\n", "    var row = i\n    if lane_id() >= 16:\n        return\n")
    sim = run(book, "warps", change)
    found = only(sim, "warp_lane_finished")
    assert found.line == line(book, "output[row, 1] = warp.sum(v)", change)


def test_traffic_counters(book):
    """Each rule of the traffic counters against costs worked out by hand, for two warps of
    32 lanes (float32: 4 bytes a lane). Global memory: distinct 32-byte sectors per warp
    request, and at best the distinct bytes packed into sectors. Shared memory: 32 banks of
    4 bytes; a request takes as many wavefronts as its busiest bank has distinct words."""
    dev = run(book, "traffic")
    assert dev.status == Status.PASS, dev.reasons
    got = {(x.line, x.space, x.access): x for x in dev.traffic}

    def cost(text, space, access):
        x = got[(line(book, text), space, access)]
        return x.requests, x.per_request, x.ideal_per_request, x.conflicts_per_request

    # Global loads, two warps a line: (requests, sectors per request, fewest, -)
    assert cost("output[i, 0] = a[i][0]", "global", "load")[:3] == (2, 4, 4)  # 128 bytes in a row
    assert cost("output[i, 1] = a[2 * i][0]", "global", "load")[:3] == (2, 8, 4)  # every other word
    assert cost("output[i, 2] = a[0][0]", "global", "load")[:3] == (2, 1, 1)  # one word: one sector
    assert cost("output[i, 3] = a[i + 1][0]", "global", "load")[:3] == (2, 5, 4)  # across a sector's edge
    assert cost("output[i, 4] = a[32 * i][0]", "global", "load")[:3] == (2, 32, 4)  # a sector per lane
    # Rows of 8 floats are 32 bytes: a store to one column puts each lane in a sector of its own.
    assert cost("output[i, 0] = a[i][0]", "global", "store")[:3] == (2, 32, 4)
    # Shared stores and loads: (requests, wavefronts, fewest, bank conflicts per request)
    assert cost("s[i] = a[i][0]", "shared", "store") == (2, 1, 1, 0)  # a bank a lane
    assert cost("s[64 + 2 * i] = 1.0", "shared", "store") == (2, 2, 1, 1)  # 16 banks, two words each
    assert cost("s[192 + 32 * i] = 2.0", "shared", "store") == (2, 32, 1, 31)  # one bank, 32 words
    assert cost("s[2240 + 33 * i] = 3.0", "shared", "store") == (2, 1, 1, 0)  # padded: a bank a lane
    assert cost("output[i, 5] = s[0][0]", "shared", "load") == (2, 1, 1, 0)  # one word: a broadcast
    # The k-th access of each lane at one line goes with the k-th of the others: a loop of two.
    assert cost("output[i, 6 + k] = s[(i + 32 * k) % 64][0]", "shared", "load") == (4, 1, 1, 0)


def test_a_stop_in_one_part_is_not_said_of_another(root):
    """p09's skeleton stops on the simulator in part barrier (a divergent barrier); part
    window, whose cases all ran, fails for its own values and never says it was stopped."""
    result = engine.check_puzzle(catalog.load("p09"), engine.Options(seed=1, quick=True, devices=("sim",)))
    parts = {p.id: p.kernels["sim"] for p in result.parts}
    assert "divergent_barrier" in kinds(parts["barrier"])
    window = parts["window"]
    assert window.status == Status.FAIL and all(c.ran for c in window.cases)
    assert "reason.sim_stopped" not in [m.key for m in window.reasons]


# --- async copies ---------------------------------------------------------------------


def test_an_async_tile_load_waited_for_and_shared_by_a_barrier_passes(book):
    sim = run(book, "async")
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_reading_an_async_copy_s_destination_before_the_wait_is_a_finding_at_its_line(book):
    """The copy lands at the wait, never earlier: the early read sees NaN in both thread
    orders, and is named with its line and the copy's."""
    change = ("    async_copy_wait_group(0)\n    barrier()\n    if i < size:\n"
              "        output[i] = shared[(t + 1) % last] + shared[t]\n",
              "    barrier()\n    if i < size:\n        output[i] = shared[(t + 1) % last] + shared[t]\n"
              "    async_copy_wait_group(0)\n")
    sim = run(book, "async", change)
    assert sim.status == Status.FAIL and not any(c.order_dependent for c in sim.cases)
    found = only(sim, "async_read_before_wait")
    assert found.line == line(book, "output[i] = shared[(t + 1) % last] + shared[t]", change)
    assert found.other_line == line(book, "async_copy[4](", change)
    assert found.message.values["element"].startswith("shared[")
    assert kinds(sim) == {"async_read_before_wait"}


def test_a_wait_that_leaves_the_newest_group_pending_lands_nothing(book):
    """wait_group(1) with one group committed waits for none: commit groups count."""
    change = ("    async_copy_wait_group(0)\n", "    async_copy_wait_group(1)\n")
    sim = run(book, "async", change)
    assert only(sim, "async_read_before_wait").line == line(book, "output[i] = shared[(t + 1) % last] +", change)


def test_an_async_copy_waited_for_without_a_barrier_is_a_race(book):
    """The wait lands a thread's own copy; its neighbour's slot needs the barrier."""
    change = ("    async_copy_wait_group(0)\n    barrier()\n", "    async_copy_wait_group(0)\n")
    sim = run(book, "async", change)
    race = only(sim, "shared_race")
    assert {race.line, race.other_line} == {line(book, "async_copy[4](", change),
                                            line(book, "output[i] = shared[(t + 1) % last] +", change)}
    assert "async_read_before_wait" not in kinds(sim)


def test_the_tile_level_async_copy_is_refused_with_its_line(book):
    change = ("from layout import TileTensor\n", "from layout import TileTensor, copy_dram_to_sram_async\n")
    (book / "puzzles/p90/sim.mojo").write_text(source_of(book, change))
    result = engine.check_puzzle(catalog.load("p90"), engine.Options(part="async", seed=1, quick=True,
                                                                    devices=("sim",), force=True))
    sim = result.parts[0].kernels["sim"]
    reason = sim.reason if isinstance(sim.reason, str) else sim.reason.text("en")
    assert sim.status == Status.NOT_RUN and "copy_dram_to_sram_async" in reason, reason


COPY = "async_copy[4]((a.ptr + i).address_space_cast[AddressSpace.GLOBAL](), shared.ptr + t)"


def test_an_async_copy_without_a_fill_value_copies_all_its_bytes_whatever_src_size_says(book):
    """max's async_copy passes src_size to cp.async only with fill=0 (an sm_90 build's PTX:
    `cp.async.cg.shared.global [dst], [src], 4;`): without it every byte comes from src, so
    src_size=0 changes nothing, as on the GPU (issue 39: the simulator used to zero them)."""
    sim = run(book, "async", (COPY, COPY[:-1] + ", src_size=0)"))
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_an_async_copy_with_fill_zero_zero_fills_past_src_size(book):
    """With fill=0, src_size reaches cp.async: past it the destination is zeros (PTX), so a copy
    of 0 bytes lands 0.0 in every slot: every sum is 0, a plain wrong value, no finding."""
    zero = COPY.replace("async_copy[4](", "async_copy[4, fill=Float32(0)](")[:-1] + ", src_size=0)"
    sim = run(book, "async", (COPY, zero))
    assert sim.status == Status.FAIL and sim.findings == [], [f.message.text("en") for f in sim.findings or []]
    got = [v for case in sim.cases for out in case.outputs for v in out.first_got]
    assert got and all(v == 0.0 for v in got), got
    # 2 of the 4 bytes: the low half of each float32 (little-endian), the high half zeros.
    half = COPY.replace("async_copy[4](", "async_copy[4, fill=Float32(0)](")[:-1] + ", src_size=2)"
    sim = run(book, "async", (COPY, half))
    got = [v for case in sim.cases for out in case.outputs for v in out.first_got]
    assert sim.status == Status.FAIL and got and all(abs(v) < 1e-30 for v in got), got


def test_a_value_fill_needs_16_bytes_as_on_the_gpu(book):
    """max refuses a fill other than 0 on a copy of less than 16 bytes at compile time: so does
    the simulator, with the same words."""
    seven = COPY.replace("async_copy[4](", "async_copy[4, fill=Float32(7)](")
    (book / "puzzles/p90/sim.mojo").write_text(source_of(book, (COPY, seven)))
    result = engine.check_puzzle(catalog.load("p90"), engine.Options(part="async", seed=1, quick=True,
                                                                    devices=("sim",), force=True, cache=False))
    assert result.status == Status.COMPILE_ERROR
    assert "Non zero filling is supported only for 16B access" in str(result.diagnostics)


def test_an_async_copy_past_the_end_of_its_source_is_named_at_the_copy_s_line(book):
    change = ("    if i < size:\n        async_copy[4](", "    if True:\n        async_copy[4](")
    sim = run(book, "async", change)
    found = only(sim, "read_out_of_bounds")
    assert found.line == line(book, "async_copy[4](", change) and found.message.values["element"] == "a[9..11]"


# --- tensor cores --------------------------------------------------------------------


def reference_of(book: Path, *changes: tuple[str, str]) -> None:
    """Change the fixture's reference (where its kernel loads the fragments from)."""
    path = book / "puzzles/p90/reference.py"
    source = path.read_text()
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new, 1)
    path.write_text(source)


def test_mma_fragments_follow_nvidias_lane_maps(book):
    """Each lane loads its fragments by the PTX ISA's map for m16n8k8 .tf32 and writes its
    four elements of D: the reference places them by the same map, by hand. The cases
    make each map decide alone (A coded with B = I, B coded with A = [I; 2I], C coded with
    A = 0), and a value whose 13 low bits a tensor core drops (1 + 3 * 2^-12 reads as 1)."""
    sim = run(book, "mma")
    assert sim.status == Status.PASS and sim.findings == [], [(c.name, c.passed) for c in sim.cases]


def test_tensor_core_loads_and_stores_follow_the_same_maps(book):
    """TensorCore's load_a / load_b / load_c / mma_op / store_d on one tile give A * B + C."""
    sim = run(book, "tensor_core")
    assert sim.status == Status.PASS and sim.findings == [], [(c.name, c.passed) for c in sim.cases]


A_SWAPPED = ("a[g, t][0], a[g + 8, t][0], a[g, t + 4][0], a[g + 8, t + 4][0]",
             "a[g, t][0], a[g, t + 4][0], a[g + 8, t][0], a[g + 8, t + 4][0]")


def test_an_a_fragment_in_another_order_gives_what_the_gpu_gives(book):
    """a[1] and a[2] swapped (row + 8 and col + 4 mixed up): wrong, and wrong the way a
    GPU is, since the tensor core reads slot 1 as row g + 8 whatever the kernel put there."""
    assert run(book, "mma", A_SWAPPED).status == Status.FAIL
    reference_of(book, ("[(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]",
                        "[(g, t), (g, t + 4), (g + 8, t), (g + 8, t + 4)]"))
    sim = run(book, "mma", A_SWAPPED)
    assert sim.status == Status.PASS, [(c.name, c.passed) for c in sim.cases]


def test_a_b_fragment_loaded_transposed_gives_what_the_gpu_gives(book):
    change = ("SIMD[dtype, 2](b[t, g][0], b[t + 4, g][0])", "SIMD[dtype, 2](b[g, t][0], b[g, t + 4][0])")
    assert run(book, "mma", change).status == Status.FAIL
    reference_of(book, ("[(t, g), (t + 4, g)]", "[(g, t), (g, t + 4)]"))
    sim = run(book, "mma", change)
    assert sim.status == Status.PASS, [(c.name, c.passed) for c in sim.cases]


def test_an_mma_some_lanes_skip_is_a_finding(book):
    """Lanes 16-31 leave before the mma: the tensor core reads fragments they never gave."""
    change = ("    var d = SIMD[dtype, 4](0)\n", "    var d = SIMD[dtype, 4](0)\n    if lane >= 16:\n        return\n")
    sim = run(book, "mma", change)
    assert only(sim, "warp_lane_finished").line == line(book, "mma(d, a_frag, b_frag, c_frag)", change)


def test_a_fragment_read_from_shared_memory_before_the_barrier_is_named_at_load_a(book):
    change = ("        b_s[r * 4 + lane // 8, lane % 8] = b[r * 4 + lane // 8, lane % 8]\n    barrier()\n",
              "        b_s[r * 4 + lane // 8, lane % 8] = b[r * 4 + lane // 8, lane % 8]\n")
    sim = run(book, "tensor_core", change)
    found = [f for f in sim.findings or [] if f.kind in ("shared_race", "uninitialized_read")]
    assert found and line(book, "var a_reg = tc.load_a(a_s.to_layout_tensor())", change) in \
        {f.line for f in found} | {f.other_line for f in found}, [(f.kind, f.line) for f in sim.findings or []]


def test_tensor_core_imports_are_taken_from_the_simulator_and_others_refused():
    from workbook.compile import simimports
    out = simimports.rewrite("from max.gpu.compute.mma import mma\nfrom layout.tensor_core import TensorCore\n")
    assert out.splitlines() == ["from wbmma import mma", "from wbmma import TensorCore"]
    with pytest.raises(simimports.Unsupported) as err:
        simimports.rewrite("from max.gpu.compute.mma import ld_matrix\n")
    assert err.value.line == 1 and "ld_matrix" in err.value.what

# --- thread-block clusters (fixture p91) ----------------------------------------------


def cluster_source(book: Path, *changes: tuple[str, str]) -> str:
    source = (book / "solutions/p91/cluster.mojo").read_text()
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


def run_cluster(book: Path, part: str, *changes: tuple[str, str]):
    """Check one part of the cluster fixture on the simulator, with changes to its kernels."""
    (book / "puzzles/p91/cluster.mojo").write_text(cluster_source(book, *changes))
    result = engine.check_puzzle(catalog.load("p91"), engine.Options(part=part, seed=1, quick=True, devices=("sim",),
                                                                    force=True))
    assert result.status != Status.COMPILE_ERROR, result.diagnostics
    return result.parts[0].kernels["sim"]


def cluster_line(book: Path, text: str, *changes: tuple[str, str]) -> int:
    found = [n for n, line in enumerate(cluster_source(book, *changes).splitlines(), 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


SYNC = "    cluster_sync()\n"
WRITE = "partial[block_idx.x] = mine"
READ = "total += partial[first + r][0]"


def test_a_block_s_rank_and_cluster_ids_count_x_fastest(book):
    """1-D clusters of 4 and 2 x 2 clusters of a 4 x 4 grid: rank = x + y * cluster_dim.x."""
    sim = run_cluster(book, "ids")
    assert sim.status == Status.PASS and [c.name for c in sim.cases] == ["1d", "2d"], sim.reason
    assert sim.findings == []


def test_a_cluster_sync_lets_a_block_read_the_others_results(book):
    sim = run_cluster(book, "total")
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_arrive_and_wait_apart_with_other_work_between_pass(book):
    change = (SYNC + "    var first = cluster_idx.x * CLUSTER\n",
              "    cluster_arrive()\n    var first = cluster_idx.x * CLUSTER\n    cluster_wait()\n")
    sim = run_cluster(book, "total", change)
    assert sim.status == Status.PASS and sim.findings == []


def test_no_cluster_barrier_is_a_race_between_blocks_of_one_cluster_in_both_orders(book):
    sim = run_cluster(book, "total", (SYNC, ""))
    assert sim.status == Status.FAIL
    race = only(sim, "global_race")
    assert {race.line, race.other_line} == {cluster_line(book, WRITE, (SYNC, "")), cluster_line(book, READ, (SYNC, ""))}
    assert kinds(sim) <= {"global_race", "uninitialized_read"}


def test_the_race_message_names_the_cluster_barrier_when_blocks_differ(book):
    """Each block reads only the other blocks' slots: every race is between blocks of one cluster."""
    others = ("    for r in range(CLUSTER):\n        " + READ,
              "    for r in range(1, CLUSTER):\n"
              "        total += partial[first + (Int(block_rank_in_cluster()) + r) % CLUSTER][0]")
    sim = run_cluster(book, "total", (SYNC, ""), others)
    races = [f for f in sim.findings or [] if f.kind == "global_race"]
    assert races and all(f.message.key.endswith("_cluster") for f in races), [f.message.key for f in races]


def test_reading_between_the_arrival_and_the_wait_is_a_race(book):
    change_arrive = (SYNC, "    cluster_arrive()\n")
    change_wait = ("    if i < size:\n        output[i] = total",
                   "    cluster_wait()\n    if i < size:\n        output[i] = total")
    sim = run_cluster(book, "total", change_arrive, change_wait)
    race = only(sim, "global_race")
    assert {race.line, race.other_line} == {cluster_line(book, WRITE), cluster_line(book, READ)}


def test_a_relaxed_arrival_makes_nothing_visible(book):
    changes = (("cluster_wait, elect_one_sync", "cluster_wait, elect_one_sync, cluster_arrive_relaxed"),
               (SYNC, "    cluster_arrive_relaxed()\n    cluster_wait()\n"))
    sim = run_cluster(book, "total", *changes)
    assert sim.status == Status.FAIL
    race = only(sim, "global_race")
    assert {race.line, race.other_line} == {cluster_line(book, WRITE, *changes), cluster_line(book, READ, *changes)}


def test_a_cluster_barrier_some_blocks_skip_names_its_line_and_the_counts(book):
    change = (SYNC, "    if block_rank_in_cluster() == 0:\n        cluster_sync()\n")
    sim = run_cluster(book, "total", change)
    found = only(sim, "divergent_cluster_barrier")
    assert found.line == cluster_line(book, "        cluster_sync()", change)
    assert found.message.values["finished"] == 12 and found.message.values["waiting"] == 4


def test_a_cluster_wait_and_a_barrier_waiting_for_each_other_is_a_finding(book):
    change = (SYNC, "    if t == 0:\n        cluster_sync()\n    barrier()\n")
    sim = run_cluster(book, "total", change)
    found = only(sim, "cluster_barrier_mismatch")
    text = found.message.text("en")
    assert found.line == cluster_line(book, "        cluster_sync()", change) and "4 in cluster_wait()" in text, text


def test_a_wait_without_an_arrival_is_a_finding(book):
    change = (SYNC, "    cluster_wait()\n")
    sim = run_cluster(book, "total", change)
    found = only(sim, "cluster_unpaired")
    assert found.line == cluster_line(book, "    cluster_wait()", change) and found.threads == 16


def test_a_cluster_barrier_does_not_order_another_cluster_s_blocks(book):
    change = (READ, "total += partial[(first + CLUSTER + r) % blocks][0]")
    sim = run_cluster(book, "total", change)
    races = [f for f in sim.findings or [] if f.kind == "global_race"]
    assert races and all(f.message.key.endswith("_blocks") for f in races)


def test_overwriting_a_result_others_read_needs_a_second_cluster_barrier(book):
    again = ("    if i < size:\n        output[i] = total",
             "    if t == 0:\n        partial[block_idx.x] = 0\n    if i < size:\n        output[i] = total")
    sim = run_cluster(book, "total", again)
    race = only(sim, "global_race")
    assert cluster_line(book, "        partial[block_idx.x] = 0", again) in (race.line, race.other_line)
    fixed = ("    if i < size:\n        output[i] = total",
             "    cluster_sync()\n    if t == 0:\n        partial[block_idx.x] = 0\n"
             "    if i < size:\n        output[i] = total")
    assert run_cluster(book, "total", fixed).findings == []


def test_elect_one_sync_picks_one_lane_but_not_a_promised_one(book):
    sim = run_cluster(book, "elect")
    assert sim.status == Status.PASS and sim.findings == []
    lane = run_cluster(book, "elect", ("output[i // 32] = total", "output[i // 32] = total + Float32(lane_id())"))
    assert lane.status == Status.FAIL and all(c.order_dependent for c in lane.cases)


# --- mbarriers -------------------------------------------------------------------------
# The ring fixture: one block of two warps; each step every thread writes its slot of one
# shared buffer from its neighbour's slot of the other, arrives, and spins on
# mbarrier_test_wait with the token its arrival returned.

SPIN = ("        var token = mbarrier_arrive(bar.ptr)\n        while not mbarrier_test_wait(bar.ptr, token):\n"
        "            pass\n")


def ring(book: Path, *changes: tuple[str, str]):
    return run(book, "ring", *changes)


def test_steps_separated_by_an_mbarrier_pass_without_a_race(book):
    """The spinning threads yield to the others; the phase each waited for orders every
    write before it against every read after it, across warps, in both thread orders."""
    sim = ring(book)
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_a_blocking_parity_wait_that_flips_each_step_passes(book):
    change = (SPIN, "        _ = mbarrier_arrive(bar.ptr)\n"
                    "        mbarrier_try_wait_parity_shared(bar.ptr, Int32(k % 2), 1000000)\n")
    sim = ring(book, change)
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_arriving_without_waiting_orders_nothing(book):
    change = (SPIN, "        _ = mbarrier_arrive(bar.ptr)\n")
    sim = ring(book, change)
    race = only(sim, "shared_race")
    assert race.line == line(book, "buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1", change)


def test_a_test_wait_called_once_is_not_a_wait(book):
    """test_wait never blocks: called once, outside a loop, it returns false while the phase
    is incomplete, and the reads after it race (even where the values come out right)."""
    change = (SPIN, "        var token = mbarrier_arrive(bar.ptr)\n        _ = mbarrier_test_wait(bar.ptr, token)\n")
    sim = ring(book, change)
    assert sim.status == Status.FAIL
    assert only(sim, "shared_race").line == line(book, "buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1", change)


def test_a_count_larger_than_the_arrivals_is_a_wait_that_never_completes(book):
    """A finding with the wait's line, the count and the arrivals, quickly: never a timeout."""
    change = ("mbarrier_init(bar.ptr, RING)", "mbarrier_init(bar.ptr, RING + 1)")
    sim = ring(book, change)
    assert sim.status == Status.FAIL and sim.seconds < 10
    found = only(sim, "mbarrier_deadlock")
    assert found.line == line(book, "while not mbarrier_test_wait(bar.ptr, token):", change)
    assert found.other_line == line(book, "mbarrier_init(bar.ptr, RING + 1)", change)
    values = found.message.values
    assert (values["needs"], values["arrived"], values["parked"]) == (65, 64, 64)
    assert not any(c.ran for c in sim.cases)


def test_a_thread_that_skips_its_arrival_leaves_every_waiter_stuck(book):
    change = ("        var token = mbarrier_arrive(bar.ptr)\n",
              "        var token = 0\n        if t != 5:\n            token = mbarrier_arrive(bar.ptr)\n")
    sim = ring(book, change)
    found = only(sim, "mbarrier_deadlock")
    assert (found.message.values["needs"], found.message.values["arrived"]) == (64, 63)


def test_a_count_smaller_than_the_arrivals_completes_phases_early(book):
    """Half the count: the first warp's arrivals complete the phase, its threads read slots
    the second warp has not written, and later tokens fall two phases behind."""
    change = ("mbarrier_init(bar.ptr, RING)", "mbarrier_init(bar.ptr, RING // 2)")
    sim = ring(book, change)
    assert sim.status == Status.FAIL
    assert {"shared_race", "mbarrier_wrong_phase"} <= kinds(sim)


def test_an_arrival_beyond_the_count_is_left_over_when_the_block_ends(book):
    change = ("    output[t] = buf", "    if t == 0:\n        _ = mbarrier_arrive(bar.ptr)\n    output[t] = buf")
    sim = ring(book, change)
    assert sim.status == Status.FAIL and all(c.passed for c in sim.cases)
    found = only(sim, "mbarrier_incomplete")
    assert found.line == line(book, "        _ = mbarrier_arrive(bar.ptr)", change)
    assert (found.message.values["arrived"], found.message.values["needs"]) == (1, 64)


def test_a_token_kept_from_an_earlier_phase_is_the_wrong_phase(book):
    """The first step's token reused: it is from the phase just before in step 1 (the wait
    passes at once), and two phases old from step 2 on, which PTX does not allow."""
    change = ("    for k in range(Int(steps)):\n",
              "    var first = mbarrier_arrive(bar.ptr)\n    for k in range(Int(steps)):\n")
    spin = ("        while not mbarrier_test_wait(bar.ptr, token):",
            "        while not mbarrier_test_wait(bar.ptr, first):")
    sim = ring(book, change, spin)
    found = only(sim, "mbarrier_wrong_phase")
    assert found.message.key == "finding.sim_mbarrier_stale_token"
    assert found.line == line(book, "while not mbarrier_test_wait(bar.ptr, first):", change, spin)
    assert "shared_race" in kinds(sim)


def test_a_number_instead_of_a_token_is_the_wrong_phase(book):
    """A fixed state, as if the count were the token: a GPU reads a phase bit out of it
    (here 0: the first phase), so from the second step on the wait passes at once."""
    change = ("        while not mbarrier_test_wait(bar.ptr, token):",
              "        while not mbarrier_test_wait(bar.ptr, RING):")
    sim = ring(book, change)
    found = only(sim, "mbarrier_wrong_phase")
    assert found.message.key == "finding.sim_mbarrier_not_token"
    assert "shared_race" in kinds(sim)


def test_a_parity_wait_that_never_flips_waits_for_the_wrong_phase(book):
    change = (SPIN, "        _ = mbarrier_arrive(bar.ptr)\n"
                    "        mbarrier_try_wait_parity_shared(bar.ptr, 0, 1000000)\n")
    sim = ring(book, change)
    assert only(sim, "shared_race").line == line(book, "buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1", change)


def test_using_an_mbarrier_before_a_barrier_makes_its_init_visible_is_a_race(book):
    change = ("    buf[0, t] = a[t]\n    barrier()\n", "    buf[0, t] = a[t]\n")
    sim = ring(book, change)
    found = only(sim, "mbarrier_race")
    assert found.other_line == line(book, "mbarrier_init(bar.ptr, RING)", change)
    assert found.line == line(book, "var token = mbarrier_arrive(bar.ptr)", change)
    assert found.message.values["other"].values == {"t": "0"}


def test_initialising_again_while_others_wait_is_a_race(book):
    change = (SPIN, SPIN + "        if t == 0:\n            mbarrier_init(bar.ptr, RING)\n")
    sim = ring(book, change)
    assert "mbarrier_race" in kinds(sim) and sim.status == Status.FAIL


def test_initialising_again_between_two_barriers_is_allowed(book):
    """Re-arming by hand, as some kernels do: init again between two barrier() calls, and
    the next phase's token. Nothing to find."""
    change = (SPIN, SPIN + "        barrier()\n        if t == 0:\n            mbarrier_init(bar.ptr, RING)\n"
                           "        barrier()\n")
    sim = ring(book, change)
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_an_mbarrier_nothing_initialised_is_a_finding(book):
    change = ("        mbarrier_init(bar.ptr, RING)", "        pass")
    sim = ring(book, change)
    found = only(sim, "mbarrier_uninitialized")
    assert found.line in (line(book, "var token = mbarrier_arrive(bar.ptr)", change),
                          line(book, "while not mbarrier_test_wait(bar.ptr, token):", change))


# --- mbarriers in the blocks of a cluster ---------------------------------------------
# The rings fixture: clusters of four blocks of two warps. Each block steps its own ring
# with its own mbarrier while the other blocks of its cluster run interleaved with it;
# then a cluster barrier, and each block writes out the next block's ring.

RING_STEP = "buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1"


def test_each_block_of_a_cluster_has_its_own_mbarrier_and_clocks(book):
    """Four blocks alive at once, each parking threads at its own barrier: a phase needs
    its own block's 64 arrivals (another block's complete nothing), the clocks order each
    block's steps, and the cluster barrier orders the blocks' rings in global memory."""
    sim = run_cluster(book, "rings")
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]
    assert [c.name for c in sim.cases] == ["3 steps", "4 steps"] and all(c.passed for c in sim.cases)


def test_blocking_parity_waits_in_every_block_of_a_cluster_pass(book):
    """A blocking wait is woken only by its own block's arrivals: each block's threads
    wake when their block's phase completes, whichever block ran last."""
    change = (SPIN, "        _ = mbarrier_arrive(bar.ptr)\n"
                    "        mbarrier_try_wait_parity_shared(bar.ptr, Int32(k % 2), 1000000)\n")
    sim = run_cluster(book, "rings", change)
    assert sim.status == Status.PASS and sim.findings == [], [f.message.text("en") for f in sim.findings or []]


def test_arriving_without_waiting_in_a_cluster_s_blocks_orders_nothing(book):
    change = (SPIN, "        _ = mbarrier_arrive(bar.ptr)\n")
    sim = run_cluster(book, "rings", change)
    assert only(sim, "shared_race").line == cluster_line(book, RING_STEP, change)


def test_an_mbarrier_deadlock_in_one_block_of_a_cluster_names_that_block(book):
    """One thread of each cluster's rank-2 block never arrives: that block's threads park
    for good while the other blocks reach the cluster barrier and wait there. The finding
    is the mbarrier's, in block 2, not the cluster barrier's."""
    change = ("        var token = mbarrier_arrive(bar.ptr)\n",
              "        var token = 0\n        if t != 5 or block_idx.x % CLUSTER != 2:\n"
              "            token = mbarrier_arrive(bar.ptr)\n")
    sim = run_cluster(book, "rings", change)
    assert sim.status == Status.FAIL and sim.seconds < 10
    found = only(sim, "mbarrier_deadlock")
    assert found.line == cluster_line(book, "while not mbarrier_test_wait(bar.ptr, token):", change)
    values = found.message.values
    assert (values["block"], values["needs"], values["arrived"], values["parked"]) == ("2", 64, 63, 64)
    assert not kinds(sim) & {"divergent_cluster_barrier", "cluster_barrier_mismatch"}


def test_blocks_that_use_mbarriers_still_need_the_cluster_barrier(book):
    change = ("    cluster_sync()\n    var rank", "    var rank")
    sim = run_cluster(book, "rings", change)
    race = only(sim, "global_race")
    assert {race.line, race.other_line} == {cluster_line(book, "rings[base + t] = buf", change),
                                            cluster_line(book, "output[base + t] = rings[next * RING + t]", change)}


# --- what ThreadSanitizer leaves out: a read before a write to the same address -----
# LLVM's TSan pass does not instrument a load whose address a later store of the same basic
# block (no call between) writes (tsan-instrument-read-before-write, off): in
# `x[i] = x[i] + y` only the store reaches __tsan_*. docs/ncu.md and wbsim.c's notes say so.


def test_a_read_modify_write_racing_another_thread_s_write_is_seen_through_its_write(book):
    """Thread 1 does shared[0] = shared[0] + 1 while thread 0 writes shared[0], no barrier
    between: the read is not seen, the race is, as two writes in one round."""
    change = ("        shared[t] = a[i]\n", "        shared[t] = a[i]\n        if t == 1:\n"
              "            shared[0] = shared[0] + 1\n")
    sim = run(book, "neighbours", change)
    race = only(sim, "shared_race")
    assert race.message.key == "finding.sim_race_ww" and race.message.values["element"] == "shared[0]"
    assert {race.line, race.other_line} == {line(book, "        shared[t] = a[i]", change),
                                            line(book, "shared[0] = shared[0] + 1", change)}


def test_a_read_modify_write_of_memory_nothing_wrote_is_not_seen(book):
    """The gap, pinned: shared[t] = shared[t] + a[i] reads shared memory no thread wrote, which
    a plain read would make a finding (test_a_read_of_shared_memory_no_thread_wrote...); the
    read is not instrumented, so the simulator names nothing (the values may still be wrong).
    If this starts failing, the compiler now instruments the read: update docs/ncu.md."""
    change = ("        shared[t] = a[i]\n", "        shared[t] = shared[t] + a[i]\n")
    sim = run(book, "neighbours", change)
    assert "uninitialized_read" not in kinds(sim)


def test_a_run_the_simulator_stopped_is_headed_by_what_it_said():
    """Exit 70 is every misuse the simulator stops a run for: the headline is the line it
    printed (block.sum's block_size, a grid not of whole clusters), not the one misuse of a
    CPU function using thread_idx, which keeps its translated words."""
    from workbook.child import protocol
    from workbook.run import kernelrun

    said = "block.sum[block_size=32] in a block of 128 threads: block_size must be the number of threads in the block"
    log = f"case 1\nworkbook-sim: {said}\n"
    stopped = kernelrun._death(protocol.SIM_MISUSE, log)
    assert stopped.key == "run.sim_stopped" and said in stopped.text("en") and said in stopped.text("ko")
    outside = "workbook-sim: thread_idx, block_idx, barrier() or shared memory was used outside a GPU kernel launch"
    assert kernelrun._death(protocol.SIM_MISUSE, outside).key == "run.sim_misuse"
    assert kernelrun._death(protocol.SIM_MISUSE, "nothing said").key == "run.sim_misuse"
    assert kernelrun._death(-9, log).key == "run.died_signal"
