"""The simulator's import rewriting: only import lines change, and line numbers never."""

from __future__ import annotations

import pytest

from workbook.compile.simimports import Unsupported, rewrite


def lines(text: str) -> int:
    return len(text.split("\n"))


def test_gpu_names_come_from_the_simulator_and_the_rest_stays():
    source = (
        "from max.gpu import thread_idx, block_idx as b\n"
        "from max.gpu.sync import barrier\n"
        "from max.gpu.memory import AddressSpace\n"
        "from max.gpu.host import DeviceContext\n"
        "from layout import TileTensor, stack_allocation\n"
        "from std.math import exp\n"
        "def k():\n"
        "    pass\n"
    )
    out = rewrite(source)
    assert lines(out) == lines(source)
    assert out.splitlines() == [
        "from wbsim import thread_idx, block_idx as b",
        "from wbsim import barrier",
        "from wbsim import AddressSpace",
        "from wbhost import DeviceContext",
        "from layout import TileTensor; from wbsim import stack_allocation",
        "from std.math import exp",
        "def k():",
        "    pass",
    ]


def test_a_host_function_gets_the_simulators_context_and_keeps_the_rest():
    """ctx.enqueue_function in the learner's host code must launch on the simulator (p17, p19)."""
    out = rewrite("from max.gpu.host import DeviceContext, DeviceBuffer, Dim\n")
    assert out.splitlines() == ["from max.gpu.host import Dim; from wbhost import DeviceContext, DeviceBuffer"]


def test_the_context_calls_the_simulator_has_are_kept_and_the_others_refused_by_line():
    """memset, copies and launches run on the simulator (wbhost.mojo); creating buffers would be
    a compile error inside it, blamed on the learner: refused before the build instead."""
    kept = ("    ctx.enqueue_memset(DeviceBuffer[dtype](ctx, out.ptr, n, owning=False), 0)\n"
            "    ctx.enqueue_copy(dst, src, n)  # ctx.enqueue_create_buffer in a comment is fine\n"
            "    ctx.enqueue_function[k](a, grid_dim=1, block_dim=1)\n    ctx.synchronize()\n")
    assert rewrite(kept) == kept
    for call in ("enqueue_create_buffer[dtype](n)", "enqueue_create_host_buffer[dtype](n)", "enqueue_wait_for(e)"):
        with pytest.raises(Unsupported) as caught:
            rewrite(f"x = 1\n    var b = ctx.{call}\n")
        assert caught.value.line == 2 and caught.value.what == f".{call.split('[')[0].split('(')[0]}(...)"
    with pytest.raises(Unsupported):
        rewrite("from max.gpu.host import DeviceContext, HostBuffer\n")


def test_a_parenthesised_import_keeps_its_line_count():
    source = "from layout.tile_tensor import (\n    TileTensor,\n    stack_allocation,  # shared memory\n)\nx = 1\n"
    out = rewrite(source)
    assert lines(out) == lines(source)
    assert out.splitlines()[0] == "from layout.tile_tensor import TileTensor; from wbsim import stack_allocation"
    assert out.splitlines()[4] == "x = 1"


@pytest.mark.parametrize("source,line,what", [
    ("x = 1\nfrom max.gpu.primitives import cluster\n", 2, "from max.gpu.primitives import cluster"),
    ("import max.gpu\n", 1, "import max.gpu"),
    ("from max.gpu import *\n", 1, "from max.gpu import *"),
    ("from max.gpu import thread_idx, cluster_idx, lane_id_in_cluster\n", 1, "from max.gpu import lane_id_in_cluster"),
    ("from max.gpu.memory import async_copy, fence_async_view_proxy\n", 1,
     "from max.gpu.memory import fence_async_view_proxy"),
    ("x = 1\nfrom layout.layout_tensor import copy_dram_to_sram_async\n", 2,
     "from layout.layout_tensor import copy_dram_to_sram_async"),
])
def test_what_the_simulator_cannot_stand_in_for_is_refused_with_its_line(source, line, what):
    with pytest.raises(Unsupported) as caught:
        rewrite(source)
    assert caught.value.line == line and caught.value.what == what


# The one puzzle the simulator refuses, on purpose: p36's TMA and wgmma (its text says so).
REFUSED_PUZZLES = {"p36": "from max.gpu.compute.mma import WGMMADescriptor"}


def test_every_puzzle_file_the_simulator_runs_is_accepted():
    from workbook.course import catalog

    for puzzle in catalog.all_puzzles():
        if puzzle.kind != "kernel":
            continue
        for path in puzzle.solution_files():
            if puzzle.id in REFUSED_PUZZLES:
                with pytest.raises(Unsupported) as caught:
                    rewrite(path.read_text())
                assert caught.value.what == REFUSED_PUZZLES[puzzle.id]
            else:
                rewrite(path.read_text())


def test_warps_come_from_the_simulator_s_warp_module():
    source = ("from max.gpu import thread_idx, lane_id, WARP_SIZE\n"
              "from max.gpu.primitives import warp, block\n"
              "from max.gpu.primitives.warp import shuffle_down as down, sum\n")
    assert rewrite(source).splitlines() == [
        "from wbsim import thread_idx; from wbwarp import lane_id, WARP_SIZE",
        "from wbsim import block; import wbwarp as warp",
        "from wbwarp import shuffle_down as down, sum",
    ]


def test_elementwise_comes_from_the_simulator_and_the_rest_of_its_module_stays():
    """elementwise launches a kernel from host code: the simulator's makes that launch."""
    source = ("from max.algorithm.functional import elementwise, vectorize\n"
              "from max.algorithm import elementwise as ew\n"
              "from std.algorithm import vectorize\n")
    assert rewrite(source).splitlines() == [
        "from max.algorithm.functional import vectorize; from wbhost import elementwise",
        "from wbhost import elementwise as ew",
        "from std.algorithm import vectorize",
    ]


def test_cluster_names_come_from_the_simulator_and_elect_from_its_warp_module():
    source = ("from max.gpu import thread_idx, cluster_idx, cluster_dim, block_id_in_cluster\n"
              "from max.gpu.primitives.cluster import block_rank_in_cluster, cluster_sync, cluster_arrive,"
              " cluster_arrive_relaxed, cluster_wait, elect_one_sync\n")
    out = rewrite(source).splitlines()
    assert out[0] == "from wbsim import thread_idx, cluster_idx, cluster_dim, block_id_in_cluster"
    assert out[1] == ("from wbsim import block_rank_in_cluster, cluster_sync, cluster_arrive, cluster_arrive_relaxed,"
                      " cluster_wait; from wbwarp import elect_one_sync")
    with pytest.raises(Unsupported, match="cluster_mask_base"):
        rewrite("from max.gpu.primitives.cluster import cluster_mask_base\n")


def test_mbarriers_come_from_the_simulator_and_the_pointer_stack_allocation_is_refused():
    """With address_space=SHARED, std.memory's stack_allocation would give each simulated
    thread an array of its own: refused, with its line."""
    text = rewrite("from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait\n")
    assert text.startswith("from wbsim import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait")
    with pytest.raises(Unsupported) as refused:
        rewrite("x = 1\nfrom std.memory import stack_allocation\n")
    assert refused.value.line == 2
