# Puzzle 5: broadcast. A row and a column make a whole matrix.
#
# `a` is one row of `size` values, `b` is one column of `size` values, and
# every element of the size x size output is one value of each:
#
#     output[row, col] = a[0, col] + b[row, 0]
#
#                   a:   1    2    3
#            b:  10  [  11   12   13 ]
#                20  [  21   22   23 ]      <- thread (x=1, y=1) writes 22
#                30  [  31   32   33 ]
#
# The workbook launches one block of TPB x TPB threads, at least as many as
# there are elements. thread_idx.x counts along a row (it picks the column),
# thread_idx.y counts down the columns (it picks the row). Threads outside
# the size x size square have nothing to do.
#ko 퍼즐 5: broadcast. 행 하나와 열 하나로 행렬 전체를 만듭니다.
#ko
#ko `a`는 값 `size`개로 된 행 하나, `b`는 값 `size`개로 된 열 하나이고,
#ko size x size 출력의 원소마다 둘에서 값을 하나씩 가져옵니다:
#ko
#ko     output[row, col] = a[0, col] + b[row, 0]
#ko
#ko                   a:   1    2    3
#ko            b:  10  [  11   12   13 ]
#ko                20  [  21   22   23 ]      <- 스레드 (x=1, y=1)가 22를 씀
#ko                30  [  31   32   33 ]
#ko
#ko 워크북은 TPB x TPB 스레드로 된 블록 하나로 실행합니다. 스레드는 원소
#ko 수 이상입니다. thread_idx.x는 행을 따라 세므로 열을 고르고, thread_idx.y는
#ko 열을 따라 아래로 세므로 행을 고릅니다. size x size 정사각형 밖의
#ko 스레드에게는 할 일이 없습니다.

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored row after row.
#ko 행 rows개, 열 cols개인 행렬의 타입. 한 행씩 차례로 저장됩니다.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The block is TPB threads wide and TPB threads tall.
#ko 블록은 너비 TPB 스레드, 높이 TPB 스레드입니다.
comptime TPB = 8


def broadcast_add[size: Int](
    output: TileTensor[mut=True, dtype, Matrix[size, size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[1, size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[size, 1], ImmutAnyOrigin],
):
    # FILL IN: take this thread's row and column from thread_idx, and if both
    # are inside the matrix, write the sum of a's value in that column and
    # b's value in that row. (4 lines)
    #ko FILL IN: thread_idx에서 이 스레드의 행과 열을 구하고, 둘 다 행렬 안에
    #ko 있으면 그 열에 있는 a의 값과 그 행에 있는 b의 값을 더해 씁니다. (4줄)
    #| pass
    var row = thread_idx.y
    var col = thread_idx.x
    if row < size and col < size:
        output[row, col] = a[0, col] + b[row, 0]
    # END FILL IN
