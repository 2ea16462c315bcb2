# A RIGHT KERNEL WRITTEN ANOTHER WAY (early_return): a thread without an element returns at once, and the others go on unguarded.
# Puzzle 3: guard. More threads than elements.
#
# The workbook launches `square` with one block of THREADS = 8 threads,
# whatever the size of the vector (never more than 8). Thread i squares
# element i; a thread whose i is past the end has no element and must do
# nothing at all, not even read:
#
#     a       [  1.5 | -2.0 | 3.0 |  0.5 | -1.0 ]             size = 5
#                 |      |     |      |      |
#     thread      0      1     2      3      4     5   6   7
#                 |      |     |      |      |     (nothing to do)
#     output  [ 2.25 |  4.0 | 9.0 | 0.25 |  1.0 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads in the block. The workbook launches the kernel with this many.
comptime THREADS = 8


def square[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: if this thread has an element (its index is inside the
    # vector), write the square of its element of `a` to `output`.
    # Threads past the end do nothing. (3 lines)
    #| pass
    var i = thread_idx.x
    if i >= size:
        return
    output[i] = a[i] * a[i]
    # END FILL IN
