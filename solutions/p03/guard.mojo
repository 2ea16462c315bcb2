# Puzzle 3: guard. More threads than elements.
#
# The workbook launches `square` with one block of THREADS = 8 threads,
# whatever the size of the vector (never more than 8). Thread i squares
# element i; a thread whose i is past the end has no element and must do
# nothing at all, not even read:
#
#     a       [  1.5 | -2.0 | 3.0 |  0.5 | -1.0 ]             size = 5
#                 |      |     |      |      |
#     thread      0      1     2      3      4     5   6   7
#                 |      |     |      |      |     (nothing to do)
#     output  [ 2.25 |  4.0 | 9.0 | 0.25 |  1.0 ]
#ko 퍼즐 3: guard. 원소보다 스레드가 많을 때.
#ko
#ko 워크북은 벡터 크기(8을 넘지 않음)와 상관없이 THREADS = 8개의 스레드로 된
#ko 블록 하나로 `square`를 실행합니다. 스레드 i는 원소 i를 제곱합니다.
#ko i가 벡터 끝을 넘어선 스레드에게는 맡을 원소가 없으니 아무것도 하지
#ko 말아야 합니다. 읽기조차 하면 안 됩니다:
#ko
#ko     a       [  1.5 | -2.0 | 3.0 |  0.5 | -1.0 ]             size = 5
#ko                 |      |     |      |      |
#ko     스레드      0      1     2      3      4     5   6   7
#ko                 |      |     |      |      |     (할 일 없음)
#ko     output  [ 2.25 |  4.0 | 9.0 | 0.25 |  1.0 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads in the block. The workbook launches the kernel with this many.
#ko 블록의 스레드 수. 워크북은 이만큼의 스레드로 커널을 실행합니다.
comptime THREADS = 8


def square[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: if this thread has an element (its index is inside the
    # vector), write the square of its element of `a` to `output`.
    # Threads past the end do nothing. (3 lines)
    #ko FILL IN: 이 스레드에게 원소가 있으면(인덱스가 벡터 안에 있으면)
    #ko `a`의 그 원소를 제곱해 `output`에 씁니다.
    #ko 끝을 넘어선 스레드는 아무것도 하지 않습니다. (3줄)
    #| pass
    var i = thread_idx.x
    if i < size:
        output[i] = a[i] * a[i]
    # END FILL IN
