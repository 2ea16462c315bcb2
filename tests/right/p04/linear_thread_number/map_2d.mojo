# A RIGHT KERNEL WRITTEN ANOTHER WAY (linear_thread_number): the block's threads are numbered 0 to 11 and the first rows * cols of them take the elements in row order, whatever their (x, y).
# Puzzle 4: map in 2D. A block of threads laid out as a grid over a matrix.
#
# The workbook launches `times_ten` with one block that is BLOCK_WIDTH = 4
# threads wide and BLOCK_HEIGHT = 3 threads tall, whatever the matrix's size
# (at most 3 rows and 4 columns). thread_idx.x counts across, so it picks the
# column; thread_idx.y counts down, so it picks the row. Here a has 2 rows and
# 3 columns, and the threads marked . have no element:
#
#              x = 0    x = 1    x = 2    x = 3
#     y = 0  [  1.5  |  -2.0  |   0.5  ]    .
#     y = 1  [  4.0  |   3.0  | -0.25  ]    .
#     y = 2      .        .        .        .
#
#     output = a * 10:
#            [ 15.0  | -20.0  |   5.0  ]
#            [ 40.0  |  30.0  |  -2.5  ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored one row after another.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The shape of the block. The workbook launches the kernel with it.
comptime BLOCK_WIDTH = 4  # threads across: thread_idx.x is 0 to 3
comptime BLOCK_HEIGHT = 3  # threads down: thread_idx.y is 0 to 2


def times_ten[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    # FILL IN: find this thread's row and column. If both are inside the
    # matrix, write its element of `a` times 10 to the same place in
    # `output`; otherwise do nothing. `t[row, col]` reads or writes one
    # element of a matrix. (4 lines)
    #| pass
    var t = thread_idx.y * BLOCK_WIDTH + thread_idx.x  # 0 .. 11
    if t < rows * cols:
        var row = t // cols
        var col = t % cols
        output[row, col] = a[row, col] * 10
    # END FILL IN
