# Puzzle 32: bank conflicts. Both kernels below compile, run and give the
# right values; they are slow in a way no value shows. Shared memory is cut
# into 32 banks of 4 bytes: word w lives in bank w % 32. A warp's request is
# served in one pass when its 32 lanes touch 32 different banks (or the same
# word); every extra word in one bank costs one more pass, a bank conflict.
# Run `workbook run p32`: the traffic table counts the conflicts per line, and
# the part fails on the line that has them. Make that count 0, and keep the
# values right.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The side of a transpose tile: one warp's width. Keep it, and the two below:
# the workbook launches the kernels with these block sizes.
comptime TILE = 32
# Rows of threads per transpose block: a block is TILE x ROWS threads, and
# each thread moves TILE // ROWS = 4 values.
comptime ROWS = 8
# Threads per block of part `pairs`: each block sums 2 * TPB inputs.
comptime TPB = 64


# ---------------------------------------------------------------------------
# Part `transpose`: output[c, r] = a[r, c] for a (rows x cols).
#
# Block (block_idx.x, block_idx.y) moves the TILE x TILE square of a whose
# corner is a[block_idx.y * TILE, block_idx.x * TILE]. Its threads read rows
# of a (neighbouring lanes, neighbouring values: coalesced) into the tile,
# then write rows of the output, which are columns of the tile:
#
#     a            tile           output
#     0 1 2 3      0 1 2 3        0 4 8 c
#     4 5 6 7  ->  4 5 6 7   ->   1 5 9 d     lane x reads tile[x, r]:
#     8 9 a b      8 9 a b        2 6 a e     a column of the tile
#     c d e f      c d e f        3 7 b f
# ---------------------------------------------------------------------------


def transpose[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[cols, rows], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var tx = Int(thread_idx.x)
    var ty = Int(thread_idx.y)
    var row0 = Int(block_idx.y) * TILE
    var col0 = Int(block_idx.x) * TILE

    # FILL IN: this tile gives the right values, and the report's traffic
    # table says what the line that reads it costs. Where does the word
    # tile[x, r] lie, for the 32 lanes x of a warp? Change the tile (or how
    # it is indexed) so that they lie in 32 different banks. (1 line, or a
    # few)
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE, TILE]())

    # Read: thread (tx, ty) copies a[row0 + r, col0 + tx] to tile[r, tx] for
    # r = ty, ty + ROWS, ...: a warp (one ty) writes one row of the tile.
    for r in range(ty, TILE, ROWS):
        if row0 + r < rows and col0 + tx < cols:
            tile[r, tx] = a[row0 + r, col0 + tx]
    barrier()

    # Write: output row col0 + r is column r of the tile; lane tx writes
    # output[col0 + r, row0 + tx], which is a[row0 + tx, col0 + r].
    for r in range(ty, TILE, ROWS):
        if col0 + r < cols and row0 + tx < rows:
            output[col0 + r, row0 + tx] = tile[tx, r]


# ---------------------------------------------------------------------------
# Part `pairs`: output[i] = x[2 * i] + x[2 * i + 1] for i < size.
#
# Reading x[2 * i] straight from global memory would make every request of a
# warp span twice the bytes it uses. So each block first copies its 2 * TPB
# inputs into shared memory, lane by lane (coalesced), then thread i adds its
# pair from there. Lane l reads words 2l and 2l + 1: in one request the 32
# lanes touch only the 16 even banks, two words each.
# ---------------------------------------------------------------------------


def pair_sums[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    x: TileTensor[mut=False, dtype, Vector[2 * size], ImmutAnyOrigin],
):
    var t = Int(thread_idx.x)
    var base = Int(block_idx.x) * 2 * TPB
    var i = Int(block_idx.x) * TPB + t
    var pairs = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2 * TPB]())

    # Copy: thread t copies inputs base + t and base + TPB + t.
    if base + t < 2 * size:
        pairs[t] = x[base + t]
    if base + TPB + t < 2 * size:
        pairs[TPB + t] = x[base + TPB + t]
    barrier()

    # FILL IN: the right sums, two passes per read: in one request, which
    # banks do the words 2 * t of a warp's 32 lanes fall in? Change the
    # order of the reads, or the way the copy above lays out the tile, so
    # that each read of a warp touches 32 different banks. (about 4 lines)
    if i < size:
        output[i] = pairs[2 * t] + pairs[2 * t + 1]
