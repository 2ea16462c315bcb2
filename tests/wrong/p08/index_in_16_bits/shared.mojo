# WRONG ON PURPOSE (index_in_16_bits): Keeps the element's index in a UInt16: right up to 65536 elements; past that it wraps, and the blocks from element 65536 on copy and write the first elements again.
# Puzzle 8: shared memory. A block copies its slice once, then every thread
# reads its neighbour's value from the copy.
#
#     output[i] = a[i] + a[i + 1]    when element i + 1 is in the same block
#     output[i] = a[i]               for the last element of a block or of a
#
# Blocks of TPB = 8 threads; for size = 13 the second block is partly empty:
#
#     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 a11 a12  .  .  .
#     shared     (block 0's own copy)    | (block 1's own copy, 0 0 0)
#     thread     0  1  2  3  4  5  6  7  | 0  1  2   3   4   5  6  7
#     output     a0+a1 ... a6+a7    a7   | a8+a9 ...  a11+a12  a12
#
# Thread 3 needs the value that thread 4 copied in. barrier() makes every
# thread of the block wait there until all of them have arrived, so the
# whole copy is finished before anyone reads it.

from max.gpu import thread_idx, block_idx, block_dim
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: the workbook launches ceildiv(size, TPB) such blocks.
comptime TPB = 8


def pair_sums[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # This thread's element of a, and its slot in the block's shared copy.
    var i = Int(UInt16(block_idx.x * block_dim.x + thread_idx.x))  # in 16 bits
    var local = thread_idx.x
    # TPB values in shared memory: one array per block, for all its threads.
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )

    # FILL IN: copy this thread's element of a into its slot, or 0 if the
    # thread is past the end of a; then wait for the whole block. (5 lines)
    #| pass
    if i < size:
        shared[local] = a[i]
    else:
        shared[local] = 0
    barrier()
    # END FILL IN

    # FILL IN: from shared memory only, write output[i]: this thread's value
    # plus the next slot's, unless this is the block's last slot. (5 lines)
    #| pass
    if i < size:
        if local + 1 < TPB:
            output[i] = shared[local] + shared[local + 1]
        else:
            output[i] = shared[local]
    # END FILL IN
