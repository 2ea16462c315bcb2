# Puzzle 11: pooling. A sliding-window sum, read from shared memory.
#
#     output[i] = a[i-2] + a[i-1] + a[i]
#
# where a term before the start of `a` counts as 0: output[0] = a[0] and
# output[1] = a[0] + a[1].
#
# Every element is part of three windows, so three threads want it. Instead
# of three trips to global memory, each block copies its TPB elements into
# shared memory once, together with its halo: the two elements just before
# the block, which belong to the previous block. Block 1, drawn with TPB = 4:
#
#     a         a0   a1   a2   a3 | a4   a5   a6   a7 | a8 ...
#                         \______/  \________________/
#                           halo       block 1's own
#                            |  |       |   |   |   |
#     window  slot           0  1       2   3   4   5
#     thread (thread_idx.x)             0   1   2   3
#
#     thread 1 of block 1: output[5] = window[1] + window[2] + window[3]
#                                    =    a3     +    a4     +    a5
#
# Block 0 has nothing before it: its halo slots hold 0.
#ko 퍼즐 11: pooling. 공유 메모리에서 읽는 슬라이딩 윈도 합.
#ko
#ko     output[i] = a[i-2] + a[i-1] + a[i]
#ko
#ko `a`의 시작보다 앞에 있는 항은 0으로 칩니다: output[0] = a[0],
#ko output[1] = a[0] + a[1].
#ko
#ko 원소마다 윈도 세 개에 들어가니 세 스레드가 같은 원소를 원합니다. 전역
#ko 메모리를 세 번 오가는 대신, 블록마다 자기 원소 TPB개를 헤일로와 함께
#ko 공유 메모리에 한 번만 복사합니다. 헤일로는 블록 바로 앞의 원소 두 개로,
#ko 앞 블록의 것입니다. TPB = 4일 때의 블록 1:
#ko
#ko     a         a0   a1   a2   a3 | a4   a5   a6   a7 | a8 ...
#ko                         \______/  \________________/
#ko                           헤일로     블록 1의 원소
#ko                            |  |       |   |   |   |
#ko     window  칸             0  1       2   3   4   5
#ko     스레드 (thread_idx.x)             0   1   2   3
#ko
#ko     블록 1의 스레드 1: output[5] = window[1] + window[2] + window[3]
#ko                                  =    a3     +    a4     +    a5
#ko
#ko 블록 0은 앞에 아무것도 없으니 헤일로 칸에 0이 들어갑니다.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block. The workbook launches ceildiv(size, TPB) blocks of TPB
# threads: the last block may have threads past the end of the data.
#ko 블록당 스레드 수. 워크북은 스레드 TPB개짜리 블록을 ceildiv(size, TPB)개
#ko 실행합니다. 마지막 블록에는 데이터 끝을 넘어선 스레드가 있을 수 있습니다.
comptime TPB = 64


def pooling[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var first = block_idx.x * TPB  # the block's first element
    #ko 블록의 첫 원소
    var i = first + t  # this thread's element
    #ko 이 스레드의 원소
    # The block's shared memory: 2 halo slots, then one slot per thread.
    #ko 블록의 공유 메모리: 헤일로 칸 2개, 그다음 스레드마다 칸 하나.
    var window = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB + 2]())

    # FILL IN: copy into `window`. Thread t puts its own element a[i] in
    # slot t + 2 (only if i < size). Threads 0 and 1 also fill halo slot t
    # with the element t - 2 places before the block's first one, or with 0
    # where that would be before the start of `a`. (about 8 lines)
    #ko FILL IN: `window`에 복사합니다. 스레드 t는 자기 원소 a[i]를 칸 t + 2에
    #ko 넣습니다(i < size일 때만). 스레드 0과 1은 헤일로 칸 t도 채웁니다. 블록의
    #ko 첫 원소보다 t - 2칸 앞의 원소를 넣되, 그 자리가 `a`의 시작보다 앞이면
    #ko 0을 넣습니다. (8줄 정도)
    #| pass
    if i < size:
        window[t + 2] = a[i]
    if t < 2:
        var j = first - 2 + t
        if j >= 0:
            window[t] = a[j]
        else:
            window[t] = 0
    # END FILL IN

    # FILL IN: wait until the whole block has copied, then (only if i < size)
    # add the window's three slots into output[i]. Every thread of the
    # block must reach the same barrier() calls. (about 3 lines)
    #ko FILL IN: 블록 전체의 복사가 끝날 때까지 기다린 다음, (i < size일 때만)
    #ko 윈도의 세 칸을 더해 output[i]에 씁니다. 블록의 모든 스레드가 같은
    #ko barrier() 호출에 도달해야 합니다. (3줄 정도)
    #| pass
    barrier()
    if i < size:
        output[i] = window[t] + window[t + 1] + window[t + 2]
    # END FILL IN
