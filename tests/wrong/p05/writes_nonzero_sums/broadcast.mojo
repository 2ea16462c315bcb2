# WRONG ON PURPOSE (writes_nonzero_sums): Writes a sum only when it is not 0, as if output held 0 already: where a[0, col] + b[row, 0] cancels exactly (or both are 0) the element is never written.
# Puzzle 5: broadcast. A row and a column make a whole matrix.
#
# `a` is one row of `size` values, `b` is one column of `size` values, and
# every element of the size x size output is one value of each:
#
#     output[row, col] = a[0, col] + b[row, 0]
#
#                   a:   1    2    3
#            b:  10  [  11   12   13 ]
#                20  [  21   22   23 ]      <- thread (x=1, y=1) writes 22
#                30  [  31   32   33 ]
#
# The workbook launches one block of TPB x TPB threads, at least as many as
# there are elements. thread_idx.x counts along a row (it picks the column),
# thread_idx.y counts down the columns (it picks the row). Threads outside
# the size x size square have nothing to do.

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored row after row.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The block is TPB threads wide and TPB threads tall.
comptime TPB = 8


def broadcast_add[size: Int](
    output: TileTensor[mut=True, dtype, Matrix[size, size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[1, size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[size, 1], ImmutAnyOrigin],
):
    # FILL IN: take this thread's row and column from thread_idx, and if both
    # are inside the matrix, write the sum of a's value in that column and
    # b's value in that row. (4 lines)
    #| pass
    var row = thread_idx.y
    var col = thread_idx.x
    if row < size and col < size:
        var total = a[0, col][0] + b[row, 0][0]
        if total != 0:
            output[row, col] = total
    # END FILL IN
