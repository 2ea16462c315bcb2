# WRONG ON PURPOSE (window_one_short): Gives the window TPB + 1 slots, one for the halo it forgot is two wide: the block's last thread writes slot TPB + 1, one past the end of the window.
# Puzzle 11: pooling. A sliding-window sum, read from shared memory.
#
#     output[i] = a[i-2] + a[i-1] + a[i]
#
# where a term before the start of `a` counts as 0: output[0] = a[0] and
# output[1] = a[0] + a[1].
#
# Every element is part of three windows, so three threads want it. Instead
# of three trips to global memory, each block copies its TPB elements into
# shared memory once, together with its halo: the two elements just before
# the block, which belong to the previous block. Block 1, drawn with TPB = 4:
#
#     a         a0   a1   a2   a3 | a4   a5   a6   a7 | a8 ...
#                         \______/  \________________/
#                           halo       block 1's own
#                            |  |       |   |   |   |
#     window  slot           0  1       2   3   4   5
#     thread (thread_idx.x)             0   1   2   3
#
#     thread 1 of block 1: output[5] = window[1] + window[2] + window[3]
#                                    =    a3     +    a4     +    a5
#
# Block 0 has nothing before it: its halo slots hold 0.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block. The workbook launches ceildiv(size, TPB) blocks of TPB
# threads: the last block may have threads past the end of the data.
comptime TPB = 64


def pooling[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    var first = block_idx.x * TPB  # the block's first element
    var i = first + t  # this thread's element
    # The block's shared memory: 2 halo slots, then one slot per thread.
    var window = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB + 1]())

    # FILL IN: copy into `window`. Thread t puts its own element a[i] in
    # slot t + 2 (only if i < size). Threads 0 and 1 also fill halo slot t
    # with the element t - 2 places before the block's first one, or with 0
    # where that would be before the start of `a`. (about 8 lines)
    #| pass
    if i < size:
        window[t + 2] = a[i]
    if t < 2:
        var j = first - 2 + t
        if j >= 0:
            window[t] = a[j]
        else:
            window[t] = 0
    # END FILL IN

    # FILL IN: wait until the whole block has copied, then (only if i < size)
    # add the window's three slots into output[i]. Every thread of the
    # block must reach the same barrier() calls. (about 3 lines)
    #| pass
    barrier()
    if i < size:
        output[i] = window[t] + window[t + 1] + window[t + 2]
    # END FILL IN
