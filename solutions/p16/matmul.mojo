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
#ko 퍼즐 16: 행렬 곱셈. a (m x k)와 b (k x n)에 대해 output = a @ b:
#ko
#ko   output[row, col] = a[row, 0] * b[0, col] + ... + a[row, k-1] * b[k-1, col]
#ko
#ko                            b (k x n)
#ko                            .  .  #  .
#ko                            .  .  #  .
#ko                            .  .  #  .
#ko     a (m x k)              output (m x n)
#ko     .  .  .                .  .  .  .
#ko     #  #  #       ->       .  .  @  .      @ = a의 행 곱하기 b의 열
#ko     .  .  .                .  .  .  .
#ko
#ko 모든 실행에서 블록은 스레드 TILE x TILE개입니다. thread_idx.x는 열,
#ko thread_idx.y는 행이고, 스레드 하나가 출력 원소 하나를 계산합니다.
#ko
#ko   matmul_naive    파트 `naive`:  블록 그리드가 출력을 덮습니다. 스레드마다
#ko                                  a의 자기 행과 b의 자기 열을 전역 메모리에서
#ko                                  바로 읽습니다.
#ko   matmul_shared   파트 `shared`: 블록 하나, m, k, n <= TILE. 블록이 먼저
#ko                                  a와 b를 공유 메모리에 복사합니다.
#ko   matmul_tiled    파트 `tiled`:  블록 그리드가 출력을 덮습니다. 블록마다
#ko                                  k를 따라가며 a와 b의 TILE x TILE 타일을
#ko                                  하나씩 가져옵니다:
#ko
#ko         a: 블록이 맡은 TILE개의 행        b: 블록이 맡은 TILE개의 열
#ko         [ t=0 | t=1 | t=2 ]               [ t=0 ]
#ko                                           [ t=1 ]
#ko                                           [ t=2 ]
#ko     a의 타일 t 곱하기 b의 타일 t를 t = 0, 1, 2, ...에 걸쳐 더합니다

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
#ko 행 rows개, 열 cols개로 한 행씩 저장된 행렬: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The side of a tile, and of a block of threads. Keep it: the workbook
# launches every kernel with TILE x TILE threads per block.
#ko 타일의 한 변이자 스레드 블록의 한 변. 바꾸지 마세요. 워크북이 모든
#ko 커널을 블록당 TILE x TILE개의 스레드로 실행합니다.
comptime TILE = 8


# ---------------------------------------------------------------------------
# Part `naive`: global memory only.
# ---------------------------------------------------------------------------
#ko 파트 `naive`: 전역 메모리만.


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
    #ko FILL IN: (row, col)이 출력 안에 있으면 j = 0 .. k-1에 대해
    #ko a[row, j] * b[j, col]을 더해 그 합을 output[row, col]에 씁니다.
    #ko (5줄 정도)
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
#ko 파트 `shared`: 블록 하나, a와 b 전체를 공유 메모리에.


def matmul_shared[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    comptime assert (
        m <= TILE and k <= TILE and n <= TILE
    ), "one block: every side must fit in a tile"
    #ko= ), "블록 하나: 모든 변이 타일 하나에 들어가야 합니다"
    var row = thread_idx.y
    var col = thread_idx.x
    # Two TILE x TILE arrays that every thread of the block sees.
    #ko 블록의 모든 스레드가 보는 TILE x TILE 배열 두 개.
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
    #ko FILL IN: 스레드 (row, col)은 a[row, col]을 a_tile[row, col]에,
    #ko b[row, col]을 b_tile[row, col]에 복사합니다. 각 행렬에 그 원소가 있을
    #ko 때만 복사하고(a는 m x k, b는 k x n), 없으면 0을 넣습니다. 그다음 모든
    #ko 스레드를 기다립니다. (9줄 정도)
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
    #ko FILL IN: matmul_naive와 같지만, a와 b 대신 타일을 읽습니다.
    #ko (5줄 정도)
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
#ko 파트 `tiled`: 아무 크기나. 블록 그리드, k를 따라 타일.


def matmul_tiled[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var tx = thread_idx.x
    var ty = thread_idx.y
    var row = block_idx.y * TILE + ty
    var col = block_idx.x * TILE + tx
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
    #ko FILL IN: k를 따라 타일 t마다(k가 TILE의 배수가 아니면 k를 덮는 데 타일이
    #ko 몇 개 필요할까요?):
    #ko   - 스레드 (ty, tx)는 a[row, t * TILE + tx]를 a_tile[ty, tx]에,
    #ko     b[t * TILE + ty, col]을 b_tile[ty, tx]에 복사합니다. 그 원소가
    #ko     행렬 밖에 있으면 0을 넣습니다;
    #ko   - barrier, 그다음 j < TILE에 대해 a_tile[ty, j] * b_tile[j, tx]를
    #ko     acc에 더합니다;
    #ko   - 다음 타일이 덮어쓰기 전에 다시 barrier.
    #ko (row, col)이 출력 밖에 있는 스레드도 모두 참여해야 합니다. 그 스레드가
    #ko 복사한 값이 다른 스레드에게 필요합니다. (16줄 정도)
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
    #ko FILL IN: (row, col)이 출력 안에 있으면 acc를 output[row, col]에
    #ko 씁니다. (2줄)
    #| pass
    if row < m and col < n:
        output[row, col] = acc
    # END FILL IN
