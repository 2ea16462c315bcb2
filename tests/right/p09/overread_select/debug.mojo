# A RIGHT KERNEL WRITTEN ANOTHER WAY (overread_select): part overread: one guard on size, and the value chosen inside it (a[i] below length, 0 past it); the other parts are the solution's.
# Puzzle 9: debugging. The three kernels below compile and run, and each has
# one bug: a read past the end of a buffer, a window that slips by one, and a
# barrier some threads never reach. Don't hunt through the code first: run
# `workbook run p09`, read the report (which line, which thread, which
# element), and let it lead you to the line to fix.

from max.gpu import thread_idx, block_idx, block_dim
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block in every part: two warps of 32.
comptime TPB = 64
# How many values the sliding window of part `window` adds up.
comptime WINDOW = 4


# Part `overread`: pad `a` (length values) with zeros up to size values,
#     output[i] = a[i]   for i < length
#     output[i] = 0      for length <= i < size
# `a` is shorter than `output`: only the first `length` threads have a
# value of their own to copy.
def pad_zeros[length: Int, size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[length], ImmutAnyOrigin],
):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    # FILL IN: one bug below: the report names its line. (about 4 lines)
    #| if i < size:
    #|     output[i] = a[i]
    if i < size:
        output[i] = a[i] if i < length else Scalar[dtype](0)
    # END FILL IN


# Part `window`: the sum of the last WINDOW values up to and including a[i],
#     output[i] = a[i - 3] + a[i - 2] + a[i - 1] + a[i]
# where a term before a[0] is left out (it counts as 0): output[0] = a[0],
# output[1] = a[0] + a[1], ...
def window_sum[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    if i < size:
        var total: Scalar[dtype] = 0
        # FILL IN: one bug in the two lines below: the report shows which
        # outputs are wrong. (2 lines)
        #| var start = max(i - WINDOW, 0)
        #| for j in range(start + 1, i + 1):
        var start = max(i - WINDOW + 1, 0)
        for j in range(start, i + 1):
        # END FILL IN
            total += a[j]
        output[i] = total


# Part `barrier`: reverse each block's slice of `a`,
#     a       [ a0 a1 ... a63 | a64 a65 a66 ]       (size 67: the last block
#     output  [ a63 ... a1 a0 | a66 a65 a64 ]        holds 3 values)
# Each thread copies its value into shared memory (neighbouring threads read
# neighbouring values: one wide read for a warp), then, once the whole block
# has, writes the value from the other end of its block's slice.
def reverse_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )
    var t = Int(thread_idx.x)
    var first = Int(block_idx.x) * TPB  # the block's first element
    var i = first + t
    var count = min(TPB, size - first)  # how many values this block holds
    # FILL IN: one bug below: the report names its line. (about 5 lines)
    #| if i < size:
    #|     shared[t] = a[i]
    #|     barrier()
    #|     output[i] = shared[count - 1 - t]
    if i < size:
        shared[t] = a[i]
    barrier()
    if i < size:
        output[i] = shared[count - 1 - t]
    # END FILL IN
