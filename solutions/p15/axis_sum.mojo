# Puzzle 15: axis sum. Add up every row of a matrix.
#
#     a (batch x size)               output (batch)
#     row 0  [ 1 |  2 | -3 |  4 ]  ->  [  4 ]
#     row 1  [ 5 | -1 |  6 | -2 ]  ->  [  8 ]
#     row 2  [ 3 | -8 |  9 | -7 ]  ->  [ -3 ]
#
# One block per row: block_idx.x is the row. Its TPB threads copy the row
# into shared memory, one element each (0 past the end of the row), then
# fold the array in half again and again: the first half adds the second.
#
#     shared     [ a0    | a1    | a2 | a3 | a4 | a5 | 0 | 0 ]   (TPB = 8 here)
#     stride 4   [ a0+a4 | a1+a5 | a2 | a3 | ...              ]
#     stride 2   [ a0+a4+a2 | a1+a5+a3 | ...                  ]
#     stride 1   [ the sum of the whole row | ...             ]
#
# A barrier() after the copy and after every fold; thread 0 writes shared[0].
#ko 퍼즐 15: 축 방향 합. 행렬의 행마다 합을 구합니다.
#ko
#ko     a (batch x size)               output (batch)
#ko     row 0  [ 1 |  2 | -3 |  4 ]  ->  [  4 ]
#ko     row 1  [ 5 | -1 |  6 | -2 ]  ->  [  8 ]
#ko     row 2  [ 3 | -8 |  9 | -7 ]  ->  [ -3 ]
#ko
#ko 행마다 블록 하나: block_idx.x가 행입니다. 블록의 스레드 TPB개가 행을
#ko 공유 메모리에 원소 하나씩 복사하고(행의 끝을 넘으면 0), 배열을 계속
#ko 반으로 접습니다: 앞쪽 절반이 뒤쪽 절반을 더합니다.
#ko
#ko     shared     [ a0    | a1    | a2 | a3 | a4 | a5 | 0 | 0 ]   (TPB = 8일 때)
#ko     stride 4   [ a0+a4 | a1+a5 | a2 | a3 | ...              ]
#ko     stride 2   [ a0+a4+a2 | a1+a5+a3 | ...                  ]
#ko     stride 1   [ 행 전체의 합 | ...                         ]
#ko
#ko 복사한 뒤와 접을 때마다 barrier()를 두고, 스레드 0이 shared[0]을 씁니다.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values, and of a matrix of rows x cols values
# stored row after row.
#ko 값 n개로 된 벡터의 타입과, 행 rows개, 열 cols개로 한 행씩 저장된 행렬의
#ko 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Threads per block, a power of two. Keep it: the workbook launches the
# kernel with TPB threads per block, and one block per row.
#ko 블록당 스레드 수, 2의 거듭제곱. 바꾸지 마세요. 워크북이 블록당 TPB개의
#ko 스레드로, 행마다 블록 하나씩 커널을 실행합니다.
comptime TPB = 64


def axis_sum[batch: Int, size: Int](
    output: TileTensor[mut=True, dtype, Vector[batch], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[batch, size], ImmutAnyOrigin],
):
    comptime assert size <= TPB, "a row must fit in one block"
    #ko= comptime assert size <= TPB, "행 하나가 블록 하나에 들어가야 합니다"
    var row = block_idx.x
    var i = thread_idx.x
    # TPB floats that every thread of the block sees.
    #ko 블록의 모든 스레드가 보는 float TPB개.
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: copy element i of this block's row to shared[i]; a thread
    # past the end of the row writes 0 instead. Then wait for every
    # thread. (about 5 lines)
    #ko FILL IN: 이 블록이 맡은 행의 원소 i를 shared[i]에 복사합니다. 행의 끝을
    #ko 넘어선 스레드는 대신 0을 씁니다. 그다음 모든 스레드를 기다립니다.
    #ko (5줄 정도)
    #| _ = row
    #| _ = i
    if i < size:
        shared[i] = a[row, i]
    else:
        shared[i] = 0
    barrier()
    # END FILL IN

    # FILL IN: fold, with stride = TPB / 2, TPB / 4, ..., 1: thread i below
    # the stride adds shared[i + stride] to shared[i]; every thread waits
    # at a barrier after each fold. (about 6 lines)
    #ko FILL IN: stride = TPB / 2, TPB / 4, ..., 1로 접습니다. stride보다 작은
    #ko 스레드 i가 shared[i + stride]를 shared[i]에 더하고, 접을 때마다 모든
    #ko 스레드가 barrier에서 기다립니다. (6줄 정도)
    #| pass
    var stride = TPB // 2
    while stride > 0:
        # Slots below the stride are written, the others only read: no
        # slot is read and written by two threads in the same fold.
        if i < stride:
            shared[i] = shared[i][0] + shared[i + stride][0]
        # Outside the `if`: every thread must reach every barrier.
        barrier()
        stride //= 2
    # END FILL IN

    # FILL IN: one thread writes the row's sum to output[row]. (2 lines)
    #ko FILL IN: 스레드 하나가 행의 합을 output[row]에 씁니다. (2줄)
    #| pass
    if i == 0:
        output[row] = shared[0]
    # END FILL IN
