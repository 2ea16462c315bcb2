# WRONG ON PURPOSE (index_in_8_bits): Keeps the thread's index in a UInt8 (a block of a few elements, it assumes): past 255 it wraps, and threads 256 and up write the first elements again.
# Puzzle 1: map. One thread for each element.
#
# The workbook launches `add_ten` with one block of exactly `size` threads.
# Every thread runs this same function; `thread_idx.x` tells a thread which
# one it is (0, 1, 2, ...), and thread i looks after element i:
#
#     a       [ 1.5 | -2.0 |  7.0 | 0.25 ]
#                |      |      |      |
#     thread     0      1      2      3
#                |      |      |      |
#     output  [ 11.5 |  8.0 | 17.0 | 10.25 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())


def add_ten[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: this thread's element of `output` is its element of `a` plus 10.
    # Which element is this thread's? thread_idx.x says. (2 lines)
    #| pass
    var i = Int(UInt8(thread_idx.x))  # a few elements: a byte is plenty
    output[i] = a[i] + 10
    # END FILL IN
