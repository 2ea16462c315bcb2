# Puzzle 1: map. One thread for each element.
#
# The workbook launches `add_ten` with one block of exactly `size` threads.
# Every thread runs this same function; `thread_idx.x` tells a thread which
# one it is (0, 1, 2, ...), and thread i looks after element i:
#
#     a       [ 1.5 | -2.0 |  7.0 | 0.25 ]
#                |      |      |      |
#     thread     0      1      2      3
#                |      |      |      |
#     output  [ 11.5 |  8.0 | 17.0 | 10.25 ]
#ko 퍼즐 1: map. 원소 하나에 스레드 하나.
#ko
#ko 워크북은 스레드가 정확히 `size`개인 블록 하나로 `add_ten`을 실행합니다.
#ko 모든 스레드가 이 함수를 똑같이 실행하며, 자기가 몇 번째 스레드인지는
#ko `thread_idx.x`로 압니다(0, 1, 2, ...). 스레드 i는 원소 i를 맡습니다:
#ko
#ko     a       [ 1.5 | -2.0 |  7.0 | 0.25 ]
#ko                |      |      |      |
#ko     스레드     0      1      2      3
#ko                |      |      |      |
#ko     output  [ 11.5 |  8.0 | 17.0 | 10.25 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())


def add_ten[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: this thread's element of `output` is its element of `a` plus 10.
    # Which element is this thread's? thread_idx.x says. (2 lines)
    #ko FILL IN: 이 스레드가 맡은 `output` 원소는 같은 자리의 `a` 원소에
    #ko 10을 더한 값입니다. 어느 원소가 이 스레드의 것일까요?
    #ko thread_idx.x가 알려 줍니다. (2줄)
    #| pass
    var i = thread_idx.x
    output[i] = a[i] + 10
    # END FILL IN
