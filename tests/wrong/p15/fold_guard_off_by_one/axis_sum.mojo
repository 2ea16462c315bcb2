# WRONG ON PURPOSE (fold_guard_off_by_one): The fold's guard is i <= stride: thread stride also folds, adding slot 2 * stride (past the array in the first fold) into slot stride, which thread 0 reads in the same fold.
# Puzzle 15: axis sum. Add up every row of a matrix.
#
#     a (batch x size)               output (batch)
#     row 0  [ 1 |  2 | -3 |  4 ]  ->  [  4 ]
#     row 1  [ 5 | -1 |  6 | -2 ]  ->  [  8 ]
#     row 2  [ 3 | -8 |  9 | -7 ]  ->  [ -3 ]
#
# One block per row: block_idx.x is the row. Its TPB threads copy the row
# into shared memory, one element each (0 past the end of the row), then
# fold the array in half again and again: the first half adds the second.
#
#     shared     [ a0    | a1    | a2 | a3 | a4 | a5 | 0 | 0 ]   (TPB = 8 here)
#     stride 4   [ a0+a4 | a1+a5 | a2 | a3 | ...              ]
#     stride 2   [ a0+a4+a2 | a1+a5+a3 | ...                  ]
#     stride 1   [ the sum of the whole row | ...             ]
#
# A barrier() after the copy and after every fold; thread 0 writes shared[0].

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values, and of a matrix of rows x cols values
# stored row after row.
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Threads per block, a power of two. Keep it: the workbook launches the
# kernel with TPB threads per block, and one block per row.
comptime TPB = 64


def axis_sum[batch: Int, size: Int](
    output: TileTensor[mut=True, dtype, Vector[batch], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[batch, size], ImmutAnyOrigin],
):
    comptime assert size <= TPB, "a row must fit in one block"
    var row = block_idx.x
    var i = thread_idx.x
    # TPB floats that every thread of the block sees.
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: copy element i of this block's row to shared[i]; a thread
    # past the end of the row writes 0 instead. Then wait for every
    # thread. (about 5 lines)
    #| _ = row
    #| _ = i
    if i < size:
        shared[i] = a[row, i]
    else:
        shared[i] = 0
    barrier()
    # END FILL IN

    # FILL IN: fold, with stride = TPB / 2, TPB / 4, ..., 1: thread i below
    # the stride adds shared[i + stride] to shared[i]; every thread waits
    # at a barrier after each fold. (about 6 lines)
    #| pass
    var stride = TPB // 2
    while stride > 0:
        # Slots below the stride are written, the others only read: no
        # slot is read and written by two threads in the same fold.
        if i <= stride:
            shared[i] = shared[i][0] + shared[i + stride][0]
        # Outside the `if`: every thread must reach every barrier.
        barrier()
        stride //= 2
    # END FILL IN

    # FILL IN: one thread writes the row's sum to output[row]. (2 lines)
    #| pass
    if i == 0:
        output[row] = shared[0]
    # END FILL IN
