# Puzzle 24: dot product with warp.sum. No shared memory, no barrier, no tree.
#
#     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#
# A block's threads come in warps of WARP_SIZE = 32: threads 0..31 are warp
# 0, threads 32..63 warp 1, and so on. The lanes of a warp can hand values to
# each other through registers, and `warp.sum(v)` adds the 32 lanes' values
# and gives the total back to every lane:
#
#     lane       0    1    2   ...   31
#     v          p0   p1   p2  ...   p31
#     warp.sum   p0 + p1 + ... + p31, in every lane
#
# Warp w (counted over the whole grid) covers elements 32*w .. 32*w + 31.
# Kernel 1, `warp_dots`, writes each warp's sum to sums[w]. Part `warps`
# launches it as one block of TPB = 128 threads (4 warps); part `blocks`
# launches it over many blocks, then kernel 2, `add_warp_sums`, adds the
# warp sums with one more warp.
#
# The one rule: every lane of the warp must reach warp.sum, also the lanes
# past the end of the data (they bring 0). Never call it inside an `if` that
# only some lanes of a warp take.

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.primitives import warp
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: 4 warps.
comptime TPB = 128


def warp_dots[size: Int, warps: Int](
    sums: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)  # this thread's element
    var w = i // WARP_SIZE  # this thread's warp, counted over the grid

    # FILL IN: every lane takes its product a[i] * b[i], or 0 past the end of
    # the data, and adds it up over the warp with warp.sum. (about 4 lines)
    var total: Scalar[dtype] = 0

    # FILL IN: lane 0 writes the warp's sum to sums[w], if the warp has a slot
    # (w < warps: a block's last warps may hold no data). (2 lines)
    pass


def add_warp_sums[warps: Int](
    output: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    sums: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
):
    # One block of one warp. There may be more warp sums than lanes.
    var lane = Int(lane_id())

    # FILL IN: lane k adds sums[k], sums[k + 32], sums[k + 64], ... (a loop
    # with step WARP_SIZE), then one warp.sum adds the 32 lanes' totals, and
    # lane 0 writes it to output[0]. (about 6 lines)
    pass
