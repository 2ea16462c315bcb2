# WRONG ON PURPOSE (row_col_in_8_bits): Keeps the row and column in UInt8 (a matrix of at most 256 rows, it assumes): past row or column 255 they wrap, and those threads write the first rows' and columns' elements again.
# Puzzle 7: 2D blocks. A grid of square blocks laid over a matrix.
#
# Each block is TPB x TPB = 4 x 4 threads, and the workbook launches enough
# of them to cover the whole rows x cols matrix: ceildiv(cols, TPB) blocks
# across (x) and ceildiv(rows, TPB) blocks down (y). For 6 x 9, that is
# 3 blocks across and 2 down; the blocks on the right and at the bottom
# stick out:
#
#                    col:  0 1 2 3   4 5 6 7   8 . . .
#                        +---------+---------+---------+
#     rows 0, 1, 2, 3    | (0, 0)  | (1, 0)  | (2, 0)  |
#                        +---------+---------+---------+
#     rows 4, 5, ., .    | (0, 1)  | (1, 1)  | (2, 1)  |
#                        +---------+---------+---------+
#
# Each tile shows (block_idx.x, block_idx.y) of the block that owns it; '.'
# marks threads past the last column or row: they have no element.
#
# Inside its block, a thread's place is (thread_idx.x, thread_idx.y); its
# place in the matrix adds the block's corner in the same direction.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored row after row.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Each block is TPB threads wide and TPB threads tall.
comptime TPB = 4


def add_ten_2d[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    # FILL IN: find this thread's row (y) and column (x) in the whole matrix;
    # if both are inside it, write a[row, col] + 10 there. (4 lines)
    #| pass
    var row = Int(UInt8(block_idx.y * block_dim.y + thread_idx.y))  # in a byte
    var col = Int(UInt8(block_idx.x * block_dim.x + thread_idx.x))
    if row < rows and col < cols:
        output[row, col] = a[row, col] + 10
    # END FILL IN
