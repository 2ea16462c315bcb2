# WRONG ON PURPOSE (edge_read_unguarded): Part difference: lane 31 reads its neighbour a[i + 1] from memory without asking whether there is one: where the data ends at lane 31 of a warp (or earlier), it reads past the end of a.
# Puzzle 25: warp communication. Lanes read each other's values with
# shuffle_down, and lane 0 hands one value to every lane with broadcast.
#
# warp.shuffle_down(v, k): lane L gets the v of lane L + k of its warp. A
# lane with no lane L + k in its warp (L + k > 31) gets its own v back:
#
#     lane                   0    1    2   ...   30    31
#     v                      x0   x1   x2  ...   x30   x31
#     shuffle_down(v, 1)     x1   x2   x3  ...   x31   x31   <- its own!
#
# So the top lanes of each warp need care: their neighbours are in the next
# warp, and they must read them from memory. And the end of the data needs
# care too: past it, the lanes hold 0, not data.
#
# Every lane of the warp must reach each shuffle and each broadcast: call
# them outside any `if` that only some lanes take (like barrier()).
#
# Three kernels, one per part, each one thread per element, in blocks of
# TPB = 128 threads (4 warps):
#   1. neighbour_difference  output[i] = a[i+1] - a[i]
#   2. moving_average        output[i] = (a[i] + a[i+1] + a[i+2]) / 3
#   3. centre_warps          output[i] = a[i] - the mean of its warp's values

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.primitives import warp
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: 4 warps.
comptime TPB = 128


def neighbour_difference[size: Int, out_size: Int](
    output: TileTensor[mut=True, dtype, Vector[out_size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output has size - 1 elements: output[i] = a[i + 1] - a[i].
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: every lane gets the next lane's v with warp.shuffle_down.
    # (1 line)
    #| var next = v
    var next = warp.shuffle_down(v, 1)
    # END FILL IN

    # FILL IN: the last lane of the warp got its own v back: it reads its
    # neighbour a[i + 1] from memory, if there is one. Then every thread that
    # has an output element writes next - v. (about 4 lines)
    #| pass
    if lane == WARP_SIZE - 1:
        next = a[i + 1][0]
    if i + 1 < size:
        output[i] = next - v
    # END FILL IN


def moving_average[size: Int, out_size: Int](
    output: TileTensor[mut=True, dtype, Vector[out_size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output has size - 2 elements: the mean of a[i], a[i + 1], a[i + 2].
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: the values one and two lanes up, with two shuffles down; the
    # lanes whose neighbours lie in the next warp read those from memory
    # (which lanes, for each?). Then write the mean of the three where there
    # is an output element. (about 9 lines)
    #| pass
    var next1 = warp.shuffle_down(v, 1)
    var next2 = warp.shuffle_down(v, 2)
    if lane == WARP_SIZE - 1 and i + 1 < size:
        next1 = a[i + 1][0]
    if lane >= WARP_SIZE - 2 and i + 2 < size:
        next2 = a[i + 2][0]
    if i + 2 < size:
        output[i] = (v + next1 + next2) / 3
    # END FILL IN


def centre_warps[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[i] - the mean of the values of i's warp (the last warp
    # may hold fewer than 32).
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: add up the warp with shuffles down, offsets 16, 8, 4, 2, 1
    # (total += shuffle_down(total, offset)): then lane 0 holds the warp's
    # sum, and the other lanes only part of it. (about 5 lines)
    #| var total = v
    var total = v
    var offset = WARP_SIZE // 2
    while offset > 0:
        total += warp.shuffle_down(total, UInt32(offset))
        offset //= 2
    # END FILL IN

    # FILL IN: every lane takes lane 0's total with warp.broadcast, divides
    # it by the number of values in the warp (32, or fewer in the last one),
    # and writes a[i] minus that mean, if i < size. (about 5 lines)
    #| pass
    var first = i - lane
    var count = min(WARP_SIZE, size - first)
    var mean = warp.broadcast(total) / Scalar[dtype](count)
    if i < size:
        output[i] = v - mean
    # END FILL IN
