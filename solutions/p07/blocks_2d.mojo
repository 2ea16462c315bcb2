# Puzzle 7: 2D blocks. A grid of square blocks laid over a matrix.
#
# Each block is TPB x TPB = 4 x 4 threads, and the workbook launches enough
# of them to cover the whole rows x cols matrix: ceildiv(cols, TPB) blocks
# across (x) and ceildiv(rows, TPB) blocks down (y). For 6 x 9, that is
# 3 blocks across and 2 down; the blocks on the right and at the bottom
# stick out:
#
#                    col:  0 1 2 3   4 5 6 7   8 . . .
#                        +---------+---------+---------+
#     rows 0, 1, 2, 3    | (0, 0)  | (1, 0)  | (2, 0)  |
#                        +---------+---------+---------+
#     rows 4, 5, ., .    | (0, 1)  | (1, 1)  | (2, 1)  |
#                        +---------+---------+---------+
#
# Each tile shows (block_idx.x, block_idx.y) of the block that owns it; '.'
# marks threads past the last column or row: they have no element.
#
# Inside its block, a thread's place is (thread_idx.x, thread_idx.y); its
# place in the matrix adds the block's corner in the same direction.
#ko 퍼즐 7: 2D blocks. 정사각형 블록들을 격자로 행렬 위에 놓습니다.
#ko
#ko 블록마다 스레드가 TPB x TPB = 4 x 4개이고, 워크북은 rows x cols 행렬
#ko 전체를 덮을 만큼 블록을 실행합니다: 가로(x)로 ceildiv(cols, TPB)개,
#ko 세로(y)로 ceildiv(rows, TPB)개. 6 x 9 행렬이면 가로 3개, 세로 2개이고,
#ko 오른쪽과 아래쪽 블록은 행렬 밖으로 삐져나옵니다:
#ko
#ko                    col:  0 1 2 3   4 5 6 7   8 . . .
#ko                        +---------+---------+---------+
#ko     rows 0, 1, 2, 3    | (0, 0)  | (1, 0)  | (2, 0)  |
#ko                        +---------+---------+---------+
#ko     rows 4, 5, ., .    | (0, 1)  | (1, 1)  | (2, 1)  |
#ko                        +---------+---------+---------+
#ko
#ko 칸마다 그 칸을 맡은 블록의 (block_idx.x, block_idx.y)를 적었습니다.
#ko '.'은 마지막 열이나 행을 넘어선 스레드로, 원소가 없습니다.
#ko
#ko 블록 안에서 스레드의 자리는 (thread_idx.x, thread_idx.y)이고, 행렬
#ko 안에서의 자리는 여기에 같은 방향으로 블록의 모서리 위치를 더한 것입니다.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a matrix of rows x cols values, stored row after row.
#ko 행 rows개, 열 cols개인 행렬의 타입. 한 행씩 차례로 저장됩니다.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Each block is TPB threads wide and TPB threads tall.
#ko 블록은 너비 TPB 스레드, 높이 TPB 스레드입니다.
comptime TPB = 4


def add_ten_2d[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    # FILL IN: find this thread's row (y) and column (x) in the whole matrix;
    # if both are inside it, write a[row, col] + 10 there. (4 lines)
    #ko FILL IN: 행렬 전체에서 이 스레드의 행(y)과 열(x)을 구하고, 둘 다 행렬
    #ko 안에 있으면 그 자리에 a[row, col] + 10을 씁니다. (4줄)
    #| pass
    var row = block_idx.y * block_dim.y + thread_idx.y
    var col = block_idx.x * block_dim.x + thread_idx.x
    if row < rows and col < cols:
        output[row, col] = a[row, col] + 10
    # END FILL IN
