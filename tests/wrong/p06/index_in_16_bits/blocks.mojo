# WRONG ON PURPOSE (index_in_16_bits): Keeps the element's index in a UInt16: right up to 65536 elements; past that it wraps, and the threads from element 65536 on write the first elements again (the same values: a race) and leave their own unwritten.
# Puzzle 6: blocks. More elements than one block has threads.
#
# A block here holds only TPB = 4 threads, so the workbook launches as many
# blocks as it takes to cover the vector: ceildiv(size, TPB) of them. For
# size = 10 that is 3 blocks, and the last one has 2 threads too many:
#
#     element      0  1  2  3 | 4  5  6  7 | 8  9  .  .
#     block_idx.x  0  0  0  0 | 1  1  1  1 | 2  2  2  2
#     thread_idx.x 0  1  2  3 | 0  1  2  3 | 0  1  2  3
#
# thread_idx.x starts again at 0 in every block: the element of a thread is
# its block's first element, block_idx.x * block_dim.x, plus thread_idx.x.
# The two threads marked '.' have no element and must not write anything.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: the workbook launches the kernel with blocks this wide.
comptime TPB = 4


def add_ten_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: find this thread's element among all the blocks' elements;
    # if it lies inside the vector, write a[i] + 10 there. (3 lines)
    #| pass
    var i = Int(UInt16(block_idx.x * block_dim.x + thread_idx.x))  # in 16 bits
    if i < size:
        output[i] = a[i] + 10
    # END FILL IN
