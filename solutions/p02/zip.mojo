# Puzzle 2: zip. Two vectors in, one out, still one thread per element.
#
# The workbook launches `add_vectors` with one block of exactly `size`
# threads. Thread i reads element i of both inputs and writes element i of
# the output: the two inputs are walked side by side, like the two halves of
# a zip.
#
#     a       [  1.0 |  2.0 |  3.0 |  4.0 ]
#     b       [ 0.25 | -5.0 | 10.0 | -1.0 ]
#                 |      |      |      |
#     thread      0      1      2      3
#                 |      |      |      |
#     output  [ 1.25 | -3.0 | 13.0 |  3.0 ]
#ko 퍼즐 2: zip. 벡터 둘이 들어가 하나가 나옵니다. 여전히 원소마다 스레드 하나.
#ko
#ko 워크북은 스레드가 정확히 `size`개인 블록 하나로 `add_vectors`를
#ko 실행합니다. 스레드 i는 두 입력의 원소 i를 읽어 출력의 원소 i에 씁니다.
#ko 두 입력을 나란히 따라가는 모습이 지퍼의 양쪽과 닮았습니다.
#ko
#ko     a       [  1.0 |  2.0 |  3.0 |  4.0 ]
#ko     b       [ 0.25 | -5.0 | 10.0 | -1.0 ]
#ko                 |      |      |      |
#ko     스레드      0      1      2      3
#ko                 |      |      |      |
#ko     output  [ 1.25 | -3.0 | 13.0 |  3.0 ]

from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())


def add_vectors[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: this thread's element of `output` is the sum of its elements
    # of `a` and `b`. All three use the same index. (2 lines)
    #ko FILL IN: 이 스레드가 맡은 `output` 원소는 `a`와 `b`에서 같은 자리에 있는
    #ko 두 원소의 합입니다. 세 텐서 모두 같은 인덱스를 씁니다. (2줄)
    #| pass
    var i = thread_idx.x
    output[i] = a[i] + b[i]
    # END FILL IN
