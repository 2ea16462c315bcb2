# WRONG ON PURPOSE (index_in_16_bits): Part any keeps the element's index in a UInt16 in both kernels: right up to 65536 elements; past that the index wraps, and the blocks from element 65536 on scan and offset the first elements again.
# Puzzle 14: prefix sum (scan). Each output is the sum of its own input and
# every input before it:
#
#     a       [  3 | -1 |  4 |  2 | -5 |  6 ]
#     output  [  3 |  2 |  6 |  8 |  3 |  9 ]    output[i] = a[0] + ... + a[i]
#
# Part `block` (scan_block): one block of TPB threads, one element each
# (size <= TPB). The block copies its elements to shared memory and scans
# them in rounds. In every round each thread adds the value `stride` places
# to its left, and the stride doubles (1, 2, 4, ...):
#
#     shared     [ a0 | a1    | a2     | a3     ]
#     stride 1   [ a0 | a0+a1 | a1+a2  | a2+a3  ]
#     stride 2   [ a0 | a0+a1 | a0..a2 | a0..a3 ]    (log2(TPB) rounds in all)
#
# A round is: read the left value, barrier, write your own, barrier. Without
# the first barrier a thread can read a neighbour that has already written.
#
# Part `any`: any size, two kernels launched one after the other
# (pictured with 4 threads per block):
#
#     a                   [ 3 -1  4  2 | -5  6  1  1 |  2 ]
#     scan_blocks         [ 3  2  6  8 | -5  1  2  3 |  2 ]  totals = [8, 3, 2]
#     add_block_offsets   [ 3  2  6  8 |  3  9 10 11 | 13 ]  +0, +8, +(8+3)

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: one block scans TPB elements. Keep it: the workbook
# launches the kernels with TPB threads per block.
comptime TPB = 64


# ---------------------------------------------------------------------------
# Part `block`: one block, size <= TPB.
# ---------------------------------------------------------------------------


def scan_block[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = thread_idx.x
    # TPB floats that every thread of the block sees.
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: copy a[i] to shared[i]; a thread past the end of `a` writes 0
    # instead (it has no element, but its slot is part of the scan). Then
    # wait until every thread has written. (about 5 lines)
    #| _ = i
    if i < size:
        shared[i] = a[i]
    else:
        shared[i] = 0
    barrier()
    # END FILL IN

    # FILL IN: the rounds, for stride = 1, 2, 4, ... while stride < TPB:
    # read the value `stride` places to the left (0 if there is none),
    # barrier, add it to shared[i], barrier. (about 9 lines)
    #| pass
    var stride = 1
    while stride < TPB:
        var left: Scalar[dtype] = 0
        if i >= stride:
            left = shared[i - stride][0]
        # Everyone has read before anyone writes...
        barrier()
        shared[i] = shared[i][0] + left
        # ...and everyone has written before the next round reads.
        barrier()
        stride *= 2
    # END FILL IN

    # FILL IN: copy the scanned value to output[i], for threads that have an
    # element. (2 lines)
    #| pass
    if i < size:
        output[i] = shared[i]
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `any`: any size, ceildiv(size, TPB) blocks, two kernels.
# ---------------------------------------------------------------------------


def scan_blocks[size: Int, blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # Kernel 1: every block scans its own TPB elements, as scan_block does,
    # and writes the sum of its elements to totals[block].
    var local_i = thread_idx.x
    var global_i = Int(UInt16(block_idx.x * TPB + local_i))  # in 16 bits
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: the scan of scan_block, with two changes: a thread's element
    # is a[global_i] (its slot in shared memory is still local_i), and the
    # last thread of the block writes the block's total, its scanned value,
    # to totals[block_idx.x]. (about 20 lines)
    #| _ = global_i
    if global_i < size:
        shared[local_i] = a[global_i]
    else:
        shared[local_i] = 0
    barrier()

    var stride = 1
    while stride < TPB:
        var left: Scalar[dtype] = 0
        if local_i >= stride:
            left = shared[local_i - stride][0]
        barrier()
        shared[local_i] = shared[local_i][0] + left
        barrier()
        stride *= 2

    if global_i < size:
        output[global_i] = shared[local_i]
    # The last slot holds the sum of the whole block (threads past the end
    # of `a` added zeros).
    if local_i == TPB - 1:
        totals[block_idx.x] = shared[local_i]
    # END FILL IN


def add_block_offsets[size: Int, blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
):
    # Kernel 2, launched after scan_blocks has finished in every block:
    # block b adds totals[0] + ... + totals[b-1] to each of its elements.
    var local_i = thread_idx.x
    var global_i = Int(UInt16(block_idx.x * TPB + local_i))  # in 16 bits
    # One float the whole block shares: the offset of this block.
    var offset = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[1]())

    # FILL IN: thread 0 adds up the totals of the blocks BEFORE this one
    # and stores the sum in offset[0]; every thread waits for it (barrier),
    # then adds offset[0] to its element of `output`, if it has one.
    # (about 8 lines)
    #| _ = global_i
    if local_i == 0:
        var earlier: Scalar[dtype] = 0
        for b in range(block_idx.x):
            earlier += totals[b][0]
        offset[0] = earlier
    # Outside the `if`: every thread of the block must reach the barrier.
    barrier()
    if global_i < size:
        output[global_i] = output[global_i][0] + offset[0][0]
    # END FILL IN
