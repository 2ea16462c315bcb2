# Puzzle 4: map in 2D. A block of threads laid out as a grid over a matrix.
#
# The workbook launches `times_ten` with one block that is BLOCK_WIDTH = 4
# threads wide and BLOCK_HEIGHT = 3 threads tall, whatever the matrix's size
# (at most 3 rows and 4 columns). thread_idx.x counts across, so it picks the
# column; thread_idx.y counts down, so it picks the row. Here a has 2 rows and
# 3 columns, and the threads marked . have no element:
#
#              x = 0    x = 1    x = 2    x = 3
#     y = 0  [  1.5  |  -2.0  |   0.5  ]    .
#     y = 1  [  4.0  |   3.0  | -0.25  ]    .
#     y = 2      .        .        .        .
#
#     output = a * 10:
#            [ 15.0  | -20.0  |   5.0  ]
#            [ 40.0  |  30.0  |  -2.5  ]
#ko 퍼즐 4: 2D map. 스레드 블록을 행렬 위에 격자로 펼칩니다.
#ko
#ko 워크북은 행렬 크기(최대 3행 4열)와 상관없이 너비 BLOCK_WIDTH = 4,
#ko 높이 BLOCK_HEIGHT = 3 스레드인 블록 하나로 `times_ten`을 실행합니다.
#ko thread_idx.x는 가로로 세므로 열을 고르고, thread_idx.y는 세로로 세므로
#ko 행을 고릅니다. 아래에서 a는 2행 3열이고, .으로 표시한 스레드에게는
#ko 원소가 없습니다:
#ko
#ko              x = 0    x = 1    x = 2    x = 3
#ko     y = 0  [  1.5  |  -2.0  |   0.5  ]    .
#ko     y = 1  [  4.0  |   3.0  | -0.25  ]    .
#ko     y = 2      .        .        .        .
#ko
#ko     output = a * 10:
#ko            [ 15.0  | -20.0  |   5.0  ]
#ko            [ 40.0  |  30.0  |  -2.5  ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored one row after another.
#ko 행 rows개, 열 cols개인 행렬의 타입. 한 행씩 차례로 저장됩니다.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The shape of the block. The workbook launches the kernel with it.
#ko 블록의 모양. 워크북은 이 모양으로 커널을 실행합니다.
comptime BLOCK_WIDTH = 4  # threads across: thread_idx.x is 0 to 3
#ko 가로 스레드 수: thread_idx.x는 0부터 3까지
comptime BLOCK_HEIGHT = 3  # threads down: thread_idx.y is 0 to 2
#ko 세로 스레드 수: thread_idx.y는 0부터 2까지


def times_ten[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    # FILL IN: find this thread's row and column. If both are inside the
    # matrix, write its element of `a` times 10 to the same place in
    # `output`; otherwise do nothing. `t[row, col]` reads or writes one
    # element of a matrix. (4 lines)
    #ko FILL IN: 이 스레드의 행과 열을 구하세요. 둘 다 행렬 안에 있으면
    #ko `a`의 그 원소에 10을 곱해 `output`의 같은 자리에 쓰고, 아니면 아무것도
    #ko 하지 않습니다. `t[row, col]`로 행렬의 원소 하나를 읽거나 씁니다. (4줄)
    #| pass
    var row = thread_idx.y
    var col = thread_idx.x
    if row < rows and col < cols:
        output[row, col] = a[row, col] * 10
    # END FILL IN
