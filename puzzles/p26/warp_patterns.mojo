# Puzzle 26: advanced warp patterns. A butterfly with shuffle_xor, a scan
# with prefix_sum, and a partition that puts the two together.
#
# warp.shuffle_xor(v, k): lane L gets the v of lane L ^ k (L xor k). The
# lanes swap in pairs, and no lane falls off the end of the warp:
#
#     k = 1:   0<->1   2<->3   4<->5  ...  30<->31
#     k = 2:   0<->2   1<->3   4<->6  ...  29<->31
#     k = 16:  0<->16  1<->17  ...  15<->31
#
# After the rounds k = 16, 8, 4, 2, 1, each combining a lane's value with
# its partner's, EVERY lane has seen every lane of the warp: a butterfly.
#
# warp.prefix_sum(v) gives lane L the sum of v over lanes 0..L (inclusive);
# warp.prefix_sum[exclusive=True](v) over lanes 0..L-1 (lane 0 gets 0).
# warp.vote[DType.uint32](b) gives every lane a 32-bit mask with bit L set
# where lane L's b is True (count the ones with pop_count).
#
# Every lane of the warp must reach each of them: never inside an `if` that
# only some lanes of a warp take.
#
# Three kernels, one per part:
#   1. warp_extremes    the maximum and minimum of each warp's values
#   2. warp_scan        an inclusive scan within each warp, and its total
#   3. warp_partition   one warp: the values below a pivot first, in order

from std.bit import pop_count
from std.utils.numerics import inf, neg_inf
from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.primitives import warp
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: 4 warps.
comptime TPB = 128


def warp_extremes[size: Int, warps: Int](
    maxes: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    mins: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var w = i // WARP_SIZE  # this thread's warp, counted over the grid

    # FILL IN: hi and lo start as a[i]; past the end of the data, as values
    # that can never win: -infinity for the maximum, +infinity for the
    # minimum (neg_inf[dtype](), inf[dtype]()). (about 5 lines)
    var hi: Scalar[dtype] = 0
    var lo: Scalar[dtype] = 0

    # FILL IN: the butterfly: for k = 16, 8, 4, 2, 1, hi becomes the larger
    # of hi and shuffle_xor(hi, k), lo the smaller of lo and
    # shuffle_xor(lo, k). (about 5 lines)
    pass

    # FILL IN: every lane now holds both; lane 0 writes them to maxes[w] and
    # mins[w], if the warp has a slot (w < warps). (3 lines)
    pass


def warp_scan[size: Int, warps: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[first] + ... + a[i], where first = 32 * (i // 32) starts
    # i's warp; totals[w] = the sum of warp w's values.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var w = i // WARP_SIZE
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: scan the warp with warp.prefix_sum, write the scan where
    # i < size, and let the lane that holds the warp's total write it to
    # totals[w] (w < warps). (about 5 lines)
    pass


def warp_partition[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    pivot: TileTensor[mut=False, dtype, Vector[1], ImmutAnyOrigin],
):
    # One warp, at most 32 values: lane L holds a[L]. The values below the
    # pivot go first, then the others, each group in its order in a.
    var lane = Int(lane_id())
    var p = pivot[0][0]
    var v: Scalar[dtype] = 0
    var low = False
    if lane < size:
        v = a[lane][0]
        low = v < p

    # FILL IN: `before` = how many lanes below this one are low (an
    # exclusive prefix_sum of a 0/1 flag); `lows` = how many lanes are low
    # in all (vote and pop_count, or warp.sum of the flag). (about 3 lines)
    var before = 0
    var lows = 0

    # FILL IN: a low value goes to output[before]; any other to
    # output[lows + the number of not-low lanes below this one]. Only lanes
    # that hold a value write. (about 5 lines)
    pass
