# WRONG ON PURPOSE (tiled_row_in_8_bits): Part tiled: keeps the thread's row and column in UInt8 (a matrix of at most 256 rows, it assumes): past row or column 255 they wrap, and those threads copy and write the first rows' and columns' elements again.
# Puzzle 16: matrix multiply, output = a @ b for a (m x k) and b (k x n):
#
#   output[row, col] = a[row, 0] * b[0, col] + ... + a[row, k-1] * b[k-1, col]
#
#                            b (k x n)
#                            .  .  #  .
#                            .  .  #  .
#                            .  .  #  .
#     a (m x k)              output (m x n)
#     .  .  .                .  .  .  .
#     #  #  #       ->       .  .  @  .      @ = row of a times column of b
#     .  .  .                .  .  .  .
#
# Every launch uses blocks of TILE x TILE threads: thread_idx.x is a column,
# thread_idx.y a row, and one thread computes one element of the output.
#
#   matmul_naive    part `naive`:  a grid of blocks covers the output; each
#                                  thread reads its row of a and its column
#                                  of b straight from global memory.
#   matmul_shared   part `shared`: one block, m, k, n <= TILE; the block
#                                  copies a and b into shared memory first.
#   matmul_tiled    part `tiled`:  a grid of blocks covers the output; each
#                                  block walks along k, one TILE x TILE tile
#                                  of a and one of b at a time:
#
#         a: the block's TILE rows        b: the block's TILE columns
#         [ t=0 | t=1 | t=2 ]             [ t=0 ]
#                                         [ t=1 ]
#                                         [ t=2 ]
#     tile t of a times tile t of b, added up over t = 0, 1, 2, ...

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The side of a tile, and of a block of threads. Keep it: the workbook
# launches every kernel with TILE x TILE threads per block.
comptime TILE = 8


# ---------------------------------------------------------------------------
# Part `naive`: global memory only.
# ---------------------------------------------------------------------------


def matmul_naive[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var row = block_idx.y * TILE + thread_idx.y
    var col = block_idx.x * TILE + thread_idx.x

    # FILL IN: if (row, col) is inside the output, add up
    # a[row, j] * b[j, col] for j = 0 .. k-1 and write the sum to
    # output[row, col]. (about 5 lines)
    #| _ = row
    #| _ = col
    if row < m and col < n:
        var acc: Scalar[dtype] = 0
        for j in range(k):
            acc += a[row, j][0] * b[j, col][0]
        output[row, col] = acc
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `shared`: one block, the whole of a and b in shared memory.
# ---------------------------------------------------------------------------


def matmul_shared[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    comptime assert (
        m <= TILE and k <= TILE and n <= TILE
    ), "one block: every side must fit in a tile"
    var row = thread_idx.y
    var col = thread_idx.x
    # Two TILE x TILE arrays that every thread of the block sees.
    var a_tile = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TILE, TILE]())
    var b_tile = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TILE, TILE]())

    # FILL IN: thread (row, col) copies a[row, col] to a_tile[row, col] and
    # b[row, col] to b_tile[row, col], each only where that matrix has such
    # an element (a is m x k, b is k x n), and 0 elsewhere. Then wait for
    # every thread. (about 9 lines)
    #| _ = row
    #| _ = col
    if row < m and col < k:
        a_tile[row, col] = a[row, col]
    else:
        a_tile[row, col] = 0
    if row < k and col < n:
        b_tile[row, col] = b[row, col]
    else:
        b_tile[row, col] = 0
    barrier()
    # END FILL IN

    # FILL IN: as in matmul_naive, but read the tiles instead of a and b.
    # (about 5 lines)
    #| pass
    if row < m and col < n:
        var acc: Scalar[dtype] = 0
        for j in range(k):
            acc += a_tile[row, j][0] * b_tile[j, col][0]
        output[row, col] = acc
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `tiled`: any size, a grid of blocks, tiles along k.
# ---------------------------------------------------------------------------


def matmul_tiled[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var tx = thread_idx.x
    var ty = thread_idx.y
    var row = Int(UInt8(block_idx.y * TILE + ty))  # at most 256 rows, in a byte
    var col = Int(UInt8(block_idx.x * TILE + tx))
    var a_tile = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TILE, TILE]())
    var b_tile = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TILE, TILE]())
    var acc: Scalar[dtype] = 0

    # FILL IN: for each tile t along k (how many tiles cover k when k is not
    # a multiple of TILE?):
    #   - thread (ty, tx) copies a[row, t * TILE + tx] to a_tile[ty, tx] and
    #     b[t * TILE + ty, col] to b_tile[ty, tx], or 0 where that element
    #     is outside its matrix;
    #   - barrier, then add a_tile[ty, j] * b_tile[j, tx] for j < TILE to acc;
    #   - barrier again before the next tile overwrites the tiles.
    # Every thread takes part, even one whose (row, col) is outside the
    # output: its copies are needed by the others. (about 16 lines)
    #| _ = acc
    for t in range((k + TILE - 1) // TILE):
        var a_col = t * TILE + tx
        if row < m and a_col < k:
            a_tile[ty, tx] = a[row, a_col]
        else:
            a_tile[ty, tx] = 0
        var b_row = t * TILE + ty
        if b_row < k and col < n:
            b_tile[ty, tx] = b[b_row, col]
        else:
            b_tile[ty, tx] = 0
        barrier()
        # The zeros past the end of k add nothing, so the last, partial
        # tile needs no special case here.
        for j in range(TILE):
            acc += a_tile[ty, j][0] * b_tile[j, tx][0]
        barrier()
    # END FILL IN

    # FILL IN: write acc to output[row, col], where that is inside the
    # output. (2 lines)
    #| pass
    if row < m and col < n:
        output[row, col] = acc
    # END FILL IN
