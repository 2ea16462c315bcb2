# Puzzle 36 (bonus, sm_90): a Hopper matrix multiply step. TMA brings the
# tiles, wgmma multiplies them.
#
# output = a @ w^T for a (m x k) and w (n x k), both bfloat16, as a linear
# layer computes x @ W^T; output in float32. Each block of 128 threads (one
# warpgroup: 4 warps) owns a 64 x 64 tile of the output and walks along k,
# 16 at a time. Two Hopper units do the work a block did by hand in p16 and
# p33:
#
#   TMA (the tensor memory accelerator) copies a box of a tensor from global
#   into shared memory on its own: one thread gives the order, no thread moves
#   data. It reports to an mbarrier (p29): the barrier is told how many bytes
#   to expect (expect_bytes), each copy adds what it brought, and the phase
#   completes when all have arrived. wait(phase) blocks until then.
#
#   wgmma multiplies a 64 x 16 tile of A by a 16 x 64 tile of B for the whole
#   warpgroup, reading both straight from shared memory. It finds them through
#   a descriptor: where the tile starts and how far apart its core matrices
#   are. A core matrix is 8 rows of 16 bytes (8 bfloat16), stored as 128
#   bytes in a row:
#
#     LBO (leading byte offset)  from one core matrix to the next along k
#     SBO (stride byte offset)   from one core matrix to the next along the
#                                rows (M for A, N for B), 8 rows further
#
#   WGMMADescriptor.create[SBO, LBO](pointer) takes both in units of 16
#   bytes, not bytes. The hardware checks neither: a wrong stride reads the
#   wrong values, or memory outside the tile.
#
# The tiles here: TMA copies boxes of 64 rows x 8 values (16 bytes a row), so
# one box is 8 core matrices one after another (SBO = 128 bytes). A step's
# 64 x 16 tile of a is two boxes: k 0..7 at a_smem's start, k 8..15 right
# after it (LBO = 64 * 16 = 1024 bytes). The same for w.
#
# wgmma leaves the result in registers: each thread holds 32 float32 values
# of the block's 64 x 64 tile. Warp q (q = thread // 32) holds rows 16q to
# 16q + 15, and in it, with g = lane // 4 and t = lane % 4, acc[i] is
#
#     row 16q + g + 8 * ((i // 2) % 2),   col 8 * (i // 4) + 2t + i % 2
#
# (as p33's C fragment, repeated for each 8 columns: i // 4 picks them).

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.host import DeviceContext
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.compute.mma import (
    WGMMADescriptor,
    wgmma_async,
    wgmma_fence_aligned,
    wgmma_commit_group_sync,
    wgmma_wait_group_sync,
)
from layout import Layout, LayoutTensor, TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
from layout.tma_async import TMATensorTile, create_tma_tile, SharedMemBarrier
from std.utils.coord import Coord

comptime bf16 = DType.bfloat16
comptime f32 = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# One wgmma: a 64 x 16 tile of A times a 16 x 64 tile of B. Keep these: the
# workbook launches your function with them.
comptime BM = 64
comptime BN = 64
comptime BK = 16
# bfloat16 values in one row of a core matrix (16 bytes).
comptime CORE = 8
# One warpgroup.
comptime THREADS = 128
# A tile in shared memory: two boxes of rows x CORE, one after the other.
comptime SharedTile[rows: Int] = LayoutTensor[
    bf16, Layout.row_major(2 * rows, CORE), MutAnyOrigin,
    address_space=AddressSpace.SHARED, alignment=128,
]


@__llvm_arg_metadata(a_tma, `nvvm.grid_constant`)
@__llvm_arg_metadata(w_tma, `nvvm.grid_constant`)
def matmul_kernel[m: Int, k: Int, n: Int, a_box: Coord, w_box: Coord](
    output: TileTensor[mut=True, f32, Matrix[m, n], MutAnyOrigin],
    a_tma: TMATensorTile[bf16, a_box],
    w_tma: TMATensorTile[bf16, w_box],
):
    var tid = thread_idx.x
    var row0 = block_idx.y * BM  # the block's first row of output (and of a)
    var col0 = block_idx.x * BN  # its first column of output (a row of w)
    var a_smem = SharedTile[BM].stack_allocation()
    var w_smem = SharedTile[BN].stack_allocation()
    # The mbarrier the copies report to, in shared memory.
    var bar_space = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())
    var bar = bar_space.ptr.bitcast[SharedMemBarrier]()
    if tid == 0:
        bar[0].init()  # one arrival per phase: thread 0's expect_bytes
    barrier()
    var acc = SIMD[f32, BN // 2](0)

    for step in range(k // BK):
        # FILL IN: thread 0 tells the barrier how many bytes this step's copies
        # bring (bar[0].expect_bytes(Int32(...))) and starts them: for each half
        # h = 0, 1 of the step's 16 values of k, a_tma.async_copy(tile, bar[0],
        # (column, row)) copies the box of a at that column and row into
        # a_smem.tile[BM, CORE](h, 0), and the same for w into w_smem. Then
        # every thread waits for this step's phase: bar[0].wait(UInt32(...)); a
        # phase's parity alternates, 0, 1, 0, ... (about 9 lines)
        pass

        # FILL IN: the two descriptors, a_desc for a_smem and w_desc for w_smem:
        # WGMMADescriptor.create[SBO, LBO](tile.ptr), both offsets in units of
        # 16 bytes (the header says what they are here). (2 lines)
        var a_desc = WGMMADescriptor.create[0, 0](a_smem.ptr)
        var w_desc = WGMMADescriptor.create[0, 0](w_smem.ptr)

        # The warpgroup's multiply: fence (the registers of acc are ready),
        # start it, close the group, wait for it. acc += A tile x W tile^T.
        wgmma_fence_aligned()
        acc = wgmma_async[BM, BN, BK, a_type=bf16, b_type=bf16](a_desc, w_desc, acc)
        wgmma_commit_group_sync()
        wgmma_wait_group_sync()
        # Every warp has read the tiles: only now may the next step's copies
        # overwrite them.
        barrier()

    # FILL IN: write each acc[i] to its place in output, by the map in the
    # header (the block's tile starts at row0, col0). (about 6 lines)
    _ = acc


def matmul_tma_wgmma[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, f32, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, bf16, Matrix[m, k], ImmutAnyOrigin],
    w: TileTensor[mut=False, bf16, Matrix[n, k], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    # The host side, given: a TMA descriptor for each of a and w (their boxes
    # of BM x CORE and BN x CORE values), then one block per 64 x 64 tile.
    comptime assert m % BM == 0 and n % BN == 0 and k % BK == 0, "m, n: multiples of 64; k: of 16"
    var a_tma = create_tma_tile[BM, CORE](ctx, a.to_layout_tensor())
    var w_tma = create_tma_tile[BN, CORE](ctx, w.to_layout_tensor())
    comptime kernel = matmul_kernel[m, k, n, type_of(a_tma).tile_shape, type_of(w_tma).tile_shape]
    ctx.enqueue_function[kernel](output, a_tma, w_tma, grid_dim=(n // BN, m // BM), block_dim=THREADS)
