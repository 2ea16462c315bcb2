"""Occupancy: NVIDIA's occupancy arithmetic for sm_90 against hand-worked cases (one per
limiting resource), the registers and shared memory NVIDIA's PTX compiler gives a real GPU
build (the pinned Mojo, target sm_90, no GPU needed), the learner's block-size choices,
the manifest's [[parts.occupancy]], and p31 written another right way passing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import put_solution

from workbook.check import engine
from workbook.compile import occupancy
from workbook.core import toolchain
from workbook.core.results import DeviceResult, Status
from workbook.course import catalog, manifest
from workbook.view import devices

REPO = Path(__file__).resolve().parent.parent


# --- the arithmetic, worked by hand -------------------------------------------------


def test_a_block_of_one_warp_is_limited_by_the_32_blocks_an_sm_holds():
    # 32 threads = 1 warp; 32 blocks at most: 32 of 64 warps.
    occ = occupancy.compute("k", 32, 16, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiting) == (32, 32, ["blocks"])
    assert occ.occupancy == 0.5


def test_warps_limit_blocks_that_do_not_divide_64_warps():
    # 192 threads = 6 warps: 64 // 6 = 10 blocks, 60 warps (93.75 %).
    occ = occupancy.compute("k", 192, 16, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiting) == (10, 60, ["warps"])
    # 96 threads = 3 warps: 21 blocks, 63 warps.
    assert occupancy.compute("k", 96, 16, 0).warps_per_sm == 63
    # 256 threads = 8 warps: 8 blocks, all 64 warps.
    full = occupancy.compute("k", 256, 16, 0)
    assert (full.blocks_per_sm, full.occupancy) == (8, 1.0)


def test_registers_are_allocated_per_warp_in_units_of_256_per_sub_partition():
    # 40 registers x 32 lanes = 1280 a warp (a multiple of 256); 16384 a sub-partition
    # // 1280 = 12 warps, x 4 = 48 warps; blocks of 8 warps: 6 blocks, 75 %.
    occ = occupancy.compute("k", 256, 40, 0)
    assert (occ.limits["registers"], occ.blocks_per_sm, occ.warps_per_sm) == (6, 6, 48)
    assert occ.limiting == ["registers"]
    # 33 registers: 1056 a warp, rounded up to 1280: the same 48 warps as 40.
    assert occupancy.compute("k", 256, 33, 0).warps_per_sm == 48
    # 32 registers: 1024 a warp, 16 warps a sub-partition, all 64.
    assert occupancy.compute("k", 256, 32, 0).warps_per_sm == 64
    # 72 registers x 1024 threads = 73728 > 65536 a block: the launch cannot run.
    assert occupancy.compute("k", 1024, 72, 0).blocks_per_sm == 0
    # More than 255 registers a thread is no launch at all.
    assert occupancy.compute("k", 32, 256, 0).limits["registers"] == 0


def test_shared_memory_counts_the_reserved_kilobyte_and_128_byte_units():
    # 32 KB + 1 KB = 33792 bytes: 233472 // 33792 = 6 blocks; 8 warps each: 48 (75 %).
    occ = occupancy.compute("k", 256, 16, 32 * 1024)
    assert (occ.shared_per_block, occ.limits["shared"], occ.warps_per_sm, occ.limiting) == \
        (33792, 6, 48, ["shared"])
    # 100 bytes + 1 KB = 1124, rounded up to 1152: 202 blocks, never the limit.
    assert occupancy.compute("k", 256, 16, 100).shared_per_block == 1152
    # The same 33 KB with blocks of 512 threads: 4 blocks by warps, 6 by shared: 100 %.
    big = occupancy.compute("k", 512, 16, 32 * 1024)
    assert (big.blocks_per_sm, big.occupancy, big.limiting) == (4, 1.0, ["warps"])
    # 64 KB + 1 KB: 3 blocks. A block may have 227 KB (with the reserved KB: 228), one byte more it may not.
    assert occupancy.compute("k", 256, 16, 64 * 1024).limits["shared"] == 3
    assert occupancy.compute("k", 256, 16, 227 * 1024).limits["shared"] == 1
    assert occupancy.compute("k", 256, 16, 227 * 1024 + 1).blocks_per_sm == 0


def test_a_block_larger_than_1024_threads_does_not_launch():
    assert occupancy.compute("k", 1056, 8, 0).blocks_per_sm == 0


def test_unknown_registers_leave_the_register_limit_out():
    occ = occupancy.compute("k", 256, None, 0)
    assert "registers" not in occ.limits and occ.blocks_per_sm == 8


def test_every_limit_that_ties_is_named():
    # 512 threads, 32 registers: warps allow 4 blocks, registers (16 warps a partition,
    # 64 // 16) also 4.
    occ = occupancy.compute("k", 512, 32, 0)
    assert occ.limiting == ["warps", "registers"]


# --- the compiler's log -------------------------------------------------------------

LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'walks_walk_hub_A_1' for 'sm_90a'
ptxas info    : Function properties for walks_walk_hub_A_1
ptxas         .     0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 16 registers, used 1 barriers, 32768 bytes smem
ptxas info    : Compile time = 3.456 ms
ptxas info    : Compiling entry function 'walks_walk_B_2' for 'sm_90a'
ptxas info    : Function properties for walks_walk_B_2
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 18 registers, used 0 barriers
"""


def test_the_compilers_log_gives_registers_shared_memory_and_spills_per_entry():
    found = occupancy.parse_info(LOG)
    assert (found["walks_walk_hub_A_1"].registers, found["walks_walk_hub_A_1"].shared,
            found["walks_walk_hub_A_1"].spills) == (16, 32768, 8)
    assert (found["walks_walk_B_2"].registers, found["walks_walk_B_2"].shared) == (18, 0)


# --- a real GPU build ---------------------------------------------------------------

MAIN = """
import walks as p
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major

def main() raises:
    var ctx = DeviceContext()
    var e = ctx.enqueue_create_buffer[DType.int32](100)
    var t = ctx.enqueue_create_buffer[DType.int32](9000)
    var end = TileTensor[mut=True, DType.int32, p.Vector[100], MutAnyOrigin](
        ptr=Pointer[Int32, MutAnyOrigin](unsafe_from_address=Int(e.unsafe_ptr())), layout=row_major[100]())
    var table = TileTensor[mut=False, DType.int32, p.Vector[9000], ImmutAnyOrigin](
        ptr=Pointer[Int32, ImmutAnyOrigin](unsafe_from_address=Int(t.unsafe_ptr())), layout=row_major[9000]())
    var start = TileTensor[mut=False, DType.int32, p.Vector[100], ImmutAnyOrigin](
        ptr=Pointer[Int32, ImmutAnyOrigin](unsafe_from_address=Int(t.unsafe_ptr())), layout=row_major[100]())
    ctx.enqueue_function[p.walk[9000, 100]](end, table, start, Int32(3), grid_dim=1, block_dim=p.BLOCK)
    ctx.enqueue_function[p.walk_hub[9000, 100]](end, table, start, Int32(3), grid_dim=1, block_dim=p.HUB_BLOCK)
    ctx.synchronize()
"""


def _build(folder: Path, source: bytes) -> bytes:
    mojo = toolchain.mojo_binary()
    if mojo is None:
        pytest.skip("no Mojo compiler")
    (folder / "walks.mojo").write_bytes(source)
    (folder / "main.mojo").write_text(MAIN)
    done = subprocess.run([str(mojo), "build", "--target-accelerator=sm_90", "-I", str(folder),
                           str(folder / "main.mojo"), "-o", str(folder / "main")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (folder / "main").read_bytes()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> bytes:
    """p31's solution, built for sm_90 by the real compiler, as the workbook's GPU launcher is."""
    return _build(tmp_path_factory.mktemp("occ"), (REPO / "solutions/p31/walks.mojo").read_bytes())


@pytest.mark.slow
def test_the_ptx_compiler_gives_each_kernel_its_registers_and_shared_memory(built):
    found = occupancy.kernel_resources(built, "walks", ["walk", "walk_hub"])
    walk, hub = found["walk"], found["walk_hub"]
    assert hub.shared == 8192 * 4 and walk.shared == 0  # the hub's int32 array, and nothing
    assert 0 < walk.registers <= 32 and 0 < hub.registers <= 32  # small kernels: 2048 threads fit
    assert not walk.error and not hub.error and walk.instances == hub.instances == 1


@pytest.mark.slow
def test_a_hub_of_64_bit_entries_is_64_kb_of_shared_memory(tmp_path):
    # The PTX compiler accepts static shared arrays past 48 KB: the occupancy counts them.
    source = (REPO / "tests/wrong/p31/hub_in_64_bits/walks.mojo").read_bytes()
    found = occupancy.kernel_resources(_build(tmp_path, source), "walks", ["walk_hub"])
    assert found["walk_hub"].shared == 8192 * 8 and not found["walk_hub"].error


# --- the manifest, the choices, the report ------------------------------------------


def test_an_occupancy_rule_and_the_choices_are_read_from_the_manifest(root):
    puzzle = catalog.load("p31")
    [rule] = puzzle.part("hub").occupancy
    assert (rule.kernel, rule.min_occupancy) == ("walk_hub", 1.0) and rule.why["ko"]
    assert puzzle.choices == {"BLOCK": 256, "HUB_BLOCK": 512}  # the solution's, until a check reads the learner's


@pytest.mark.parametrize("edit,message", [
    (('kernel = "walk_hub"\nmin_occupancy', 'kernel = "walk"\nmin_occupancy'), "is not one this part launches"),
    (("min_occupancy = 1.0\nwhy.en = \"The hub", "min_occupancy = 75\nwhy.en = \"The hub"), "at most 1"),
    (('choices = ["BLOCK", "HUB_BLOCK"]', 'choices = ["BLOCK", "HUB"]'), "either a constant"),
    (('choices = ["BLOCK", "HUB_BLOCK"]', 'choices = ["BLOCK", "TILE"]'), "no plain `comptime NAME"),
])
def test_occupancy_manifest_mistakes_name_the_key(root, edit, message):
    path = root / "puzzles/p31/puzzle.toml"
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(*edit))
    with pytest.raises(manifest.CatalogError, match=message):
        catalog.load("p31")


def test_a_choice_is_read_only_from_one_plain_line():
    assert manifest.read_choices(["comptime BLOCK = 128  # threads\n"], ["BLOCK"]) == {"BLOCK": 128}
    assert manifest.read_choices(["comptime BLOCK: Int = 64\n"], ["BLOCK"]) == {"BLOCK": 64}
    # Anything else is left to the launcher's compile-time check, which says how to write it.
    assert manifest.read_choices(["comptime BLOCK = 2 * 128\n"], ["BLOCK"]) == {}
    assert manifest.read_choices(["comptime BLOCK = 64\ncomptime BLOCK = 128\n"], ["BLOCK"]) == {}
    assert manifest.read_choices(["    comptime BLOCK = 64\n"], ["BLOCK"]) == {}  # not at the top level
    assert manifest.read_choices(["comptime BLOCKS = 64\n"], ["BLOCK"]) == {}


def test_the_report_names_each_limit_and_marks_the_smallest():
    dev = DeviceResult("occupancy", Status.FAIL, occupancy=[occupancy.compute("walk_hub", 256, 16, 32768)])
    asks, limits = (line.plain for line in devices.occupancy_lines(dev))
    assert asks == "walk_hub: blocks of 256 threads (8 warps) · 16 registers a thread · 32768 bytes of shared " \
                   "memory a block"
    assert "by shared memory 6" in limits and "48 of 64 warps: occupancy 75.0%" in limits
    marked = [span for span in devices.occupancy_lines(dev)[1].spans if span.style == "bold yellow"]
    assert len(marked) == 1


# --- p31 on the workbook: a right configuration written another way -------------------


@pytest.mark.slow
def test_other_right_block_sizes_pass_and_the_occupancy_device_reads_the_learners_choice(root):
    put_solution(root, "p31")
    path = root / "puzzles/p31/walks.mojo"
    text = path.read_text()
    path.write_text(text.replace("comptime BLOCK = 256\n", "comptime BLOCK = 64\n")
                    .replace("comptime HUB_BLOCK = 512\n", "comptime HUB_BLOCK = 1024\n"))
    result = engine.check_puzzle(catalog.load("p31"),
                                 engine.Options(seed=3, quick=True, devices=("gpu",), cache=False))
    for part, block in (("walk", 64), ("hub", 1024)):
        dev = next(p for p in result.parts if p.id == part).kernels["occupancy"]
        assert dev.status == Status.PASS, dev.reason
        assert [o.block for o in dev.occupancy] == [block] and dev.occupancy[0].occupancy == 1.0
