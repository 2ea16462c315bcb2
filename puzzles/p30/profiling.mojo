# Puzzle 30: profiling. One job, a box filter along each row of a matrix:
#
#     output[r, c] = m[r, c - RADIUS] + ... + m[r, c] + ... + m[r, c + RADIUS]
#
# (columns outside the row count as 0), written three ways for you: parts
# a, b and c run them as given. Read their reports: the simulator counts,
# per line, how many 32-byte sectors each warp's load fetches, and each
# thread's reads of global memory. With a GPU, the report also times them.
# Then answer three questions at the bottom of this file (part explain),
# and write the fast kernel (part fast).

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a rows x cols matrix, row after row.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The type of a vector of n values.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block, and how far the window reaches on each side.
comptime TPB = 128
comptime RADIUS = 4


# Part a, given: one thread per output, x along the columns of a row (the
# grid is ceildiv(cols, TPB) x rows). Each thread reads its window from
# global memory.
def box_rows[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = block_idx.y
    var c = block_idx.x * TPB + thread_idx.x
    if c < cols:
        var total: Scalar[dtype] = 0
        for k in range(c - RADIUS, c + RADIUS + 1):
            if k >= 0 and k < cols:
                total += m[r, k][0]
        output[r, c] = total


# Part b, given: the same window, but x runs down the rows of a column (the
# grid is ceildiv(rows, TPB) x cols): the 32 threads of a warp read 32
# different rows at once.
def box_columns[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = block_idx.x * TPB + thread_idx.x
    var c = block_idx.y
    if r < rows:
        var total: Scalar[dtype] = 0
        for k in range(c - RADIUS, c + RADIUS + 1):
            if k >= 0 and k < cols:
                total += m[r, k][0]
        output[r, c] = total


# Part c, given: laid out as part a, but each thread slides a running sum
# from the row's first column to its own, adding the column that enters the
# window and taking away the one that leaves it. On one CPU core that is the
# fast way (each step costs 2 reads); here every thread starts again at
# column 0.
def box_sliding[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = block_idx.y
    var c = block_idx.x * TPB + thread_idx.x
    if c < cols:
        var total: Scalar[dtype] = 0  # the window of column 0: columns 0 .. RADIUS
        for k in range(min(RADIUS + 1, cols)):
            total += m[r, k][0]
        for j in range(1, c + 1):  # slide the window one column right
            if j + RADIUS < cols:
                total += m[r, j + RADIUS][0]
            if j - RADIUS - 1 >= 0:
                total -= m[r, j - RADIUS - 1][0]
        output[r, c] = total


# Part fast: yours. Laid out as part a (the grid is ceildiv(cols, TPB) x
# rows: block (x, r) owns the columns x * TPB .. x * TPB + TPB - 1 of row r),
# but each value of m is read from global memory once per block, into
# `tile`, and the windows are summed from there. tile[k] holds the column
# x * TPB - RADIUS + k of row r, and 0 where that column is outside the row.
def box_shared[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var t = thread_idx.x
    var r = block_idx.y
    var first = block_idx.x * TPB - RADIUS  # the column tile[0] holds (may be < 0)
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB + 2 * RADIUS]()
    )
    # FILL IN: fill tile[0 .. TPB + 2 * RADIUS - 1]: thread t fills slot t,
    # and the first 2 * RADIUS threads also slot t + TPB (neighbouring
    # threads, neighbouring columns); then wait for the whole block. (about 7 lines)
    pass
    # FILL IN: the output of column first + RADIUS + t (inside the row only)
    # is the sum of tile[t .. t + 2 * RADIUS]. (about 5 lines)
    pass


# Part explain: your answers, read from the reports of parts a, b and c.
# Each is a part: 1 for a, 2 for b, 3 for c (0: not answered yet).
# FILL IN: the part whose loads fetch the most sectors per request, the
# part whose threads read global memory the most times, and the slowest
# part. (3 lines)
comptime MOST_SECTORS = 0
comptime MOST_READS = 0
comptime SLOWEST = 0


# Given: hands your answers to the workbook. keys holds 4 numbers per
# question, one per answer; the workbook knows which one is right.
def answers(
    output: TileTensor[mut=True, DType.int32, Vector[3], MutAnyOrigin],
    keys: TileTensor[mut=False, DType.int32, Vector[12], ImmutAnyOrigin],
):
    comptime assert 0 <= MOST_SECTORS <= 3, "MOST_SECTORS is a part: 1 (a), 2 (b) or 3 (c)"
    comptime assert 0 <= MOST_READS <= 3, "MOST_READS is a part: 1 (a), 2 (b) or 3 (c)"
    comptime assert 0 <= SLOWEST <= 3, "SLOWEST is a part: 1 (a), 2 (b) or 3 (c)"
    if thread_idx.x == 0:
        output[0] = keys[MOST_SECTORS]
        output[1] = keys[4 + MOST_READS]
        output[2] = keys[8 + SLOWEST]
