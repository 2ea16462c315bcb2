# WRONG ON PURPOSE (writes_nonzero_sums): Writes a sum only when it is not 0, as if output held 0 already: a pair that cancels exactly (or two zeros) leaves its element unwritten.
# Puzzle 2: zip. Two vectors in, one out, still one thread per element.
#
# The workbook launches `add_vectors` with one block of exactly `size`
# threads. Thread i reads element i of both inputs and writes element i of
# the output: the two inputs are walked side by side, like the two halves of
# a zip.
#
#     a       [  1.0 |  2.0 |  3.0 |  4.0 ]
#     b       [ 0.25 | -5.0 | 10.0 | -1.0 ]
#                 |      |      |      |
#     thread      0      1      2      3
#                 |      |      |      |
#     output  [ 1.25 | -3.0 | 13.0 |  3.0 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())


def add_vectors[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: this thread's element of `output` is the sum of its elements
    # of `a` and `b`. All three use the same index. (2 lines)
    #| pass
    var i = thread_idx.x
    var total = a[i][0] + b[i][0]
    if total != 0:
        output[i] = total
    # END FILL IN
