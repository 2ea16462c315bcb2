# Puzzle 13: 1D convolution, first in one block, then across many blocks.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + a[i+2]*b[2] + a[i+3]*b[3]
#
# b is the kernel, CONV = 4 weights, slid along a. A term whose a[i + j] lies
# past the end of a is left out (it counts as 0).
#
# Part `simple`, conv1d_simple: one block of TPB threads, size <= TPB.
# Thread i copies a[i] (and thread j < CONV copies b[j]) into shared memory;
# after a barrier, thread i multiplies its window by the weights:
#
#     shared_a   a0  a1  a2  a3  a4  a5  a6
#                        |   |   |   |
#                       *b0 *b1 *b2 *b3      -> output[2]
#     output[5] = a5*b0 + a6*b1               (a7, a8 don't exist)
#
# Part `blocks`, conv1d_blocks: ceildiv(size, TPB) blocks. The last CONV - 1
# threads of a block need elements of the NEXT block: its halo. Each block
# copies TPB + CONV - 1 elements: its own, then the halo. Block 0, drawn with
# TPB = 8:
#
#     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 | a11 ...
#                \______ block 0 ______/  \__ halo __/
#     shared_a   slot 0  ...          7     8  9  10
#
#     thread 6:  output[6] = a6*b0 + a7*b1 + a8*b2 + a9*b3
#                                            (slots 8 and 9: the halo)
#
# Where the halo or the block runs past the end of a, its slots hold 0.
#ko 퍼즐 13: 1D 합성곱. 먼저 블록 하나로, 그다음 여러 블록에 걸쳐.
#ko
#ko     output[i] = a[i]*b[0] + a[i+1]*b[1] + a[i+2]*b[2] + a[i+3]*b[3]
#ko
#ko b는 가중치 CONV = 4개로 된 커널로, a를 따라 미끄러집니다. a[i + j]가
#ko a의 끝을 넘어서는 항은 빠집니다(0으로 칩니다).
#ko
#ko 파트 `simple`, conv1d_simple: 스레드 TPB개짜리 블록 하나, size <= TPB.
#ko 스레드 i는 a[i]를(그리고 j < CONV인 스레드 j는 b[j]를) 공유 메모리에
#ko 복사합니다. barrier 뒤에 스레드 i는 자기 윈도에 가중치를 곱합니다:
#ko
#ko     shared_a   a0  a1  a2  a3  a4  a5  a6
#ko                        |   |   |   |
#ko                       *b0 *b1 *b2 *b3      -> output[2]
#ko     output[5] = a5*b0 + a6*b1               (a7, a8은 없음)
#ko
#ko 파트 `blocks`, conv1d_blocks: 블록 ceildiv(size, TPB)개. 블록의 마지막
#ko CONV - 1개 스레드에는 다음 블록의 원소, 곧 헤일로가 필요합니다. 블록마다
#ko 원소 TPB + CONV - 1개를 복사합니다: 자기 원소, 그다음 헤일로. TPB = 8일 때의
#ko 블록 0:
#ko
#ko     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 | a11 ...
#ko                \______ 블록 0 _______/  \_ 헤일로 _/
#ko     shared_a   칸 0    ...          7     8  9  10
#ko
#ko     스레드 6:  output[6] = a6*b0 + a7*b1 + a8*b2 + a9*b3
#ko                                            (칸 8과 9: 헤일로)
#ko
#ko 헤일로나 블록이 a의 끝을 넘어서는 곳의 칸에는 0이 들어갑니다.

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
# Threads per block.
#ko 블록당 스레드 수.
comptime TPB = 64
# The number of weights in b.
#ko b의 가중치 수.
comptime CONV = 4


# ---------------------------------------------------------------------------
# Part `simple`: one block.
# ---------------------------------------------------------------------------
#ko 파트 `simple`: 블록 하나.


def conv1d_simple[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[CONV], ImmutAnyOrigin],
):
    comptime assert size <= TPB, "part simple runs one block: size <= TPB"
    #ko= comptime assert size <= TPB, "파트 simple은 블록 하나로 돕니다: size <= TPB"
    var i = thread_idx.x  # one block: the thread's number is its element
    #ko 블록 하나뿐이니 스레드 번호가 곧 원소 번호
    var shared_a = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: thread i copies a[i] into shared_a[i] (only if i < size), and
    # the first CONV threads copy b[i] into shared_b[i]. (4 lines)
    #ko FILL IN: 스레드 i는 a[i]를 shared_a[i]에 복사하고(i < size일 때만),
    #ko 처음 CONV개 스레드는 b[i]를 shared_b[i]에 복사합니다. (4줄)
    #| pass
    if i < size:
        shared_a[i] = a[i]
    if i < CONV:
        shared_b[i] = b[i]
    # END FILL IN

    # FILL IN: wait for the whole block. Then, if i < size, add up
    # shared_a[i + j] * shared_b[j] for j = 0 .. CONV - 1, leaving out the j
    # where i + j >= size, and write the sum to output[i]. `comptime for j in
    # range(CONV):` writes the loop out at compile time. (about 7 lines)
    #ko FILL IN: 블록 전체를 기다립니다. 그다음 i < size이면 j = 0 .. CONV - 1에
    #ko 대해 shared_a[i + j] * shared_b[j]를 더하되 i + j >= size인 j는 빼고,
    #ko 합을 output[i]에 씁니다. `comptime for j in range(CONV):`는 반복문을
    #ko 컴파일할 때 펼쳐 씁니다. (7줄 정도)
    #| pass
    barrier()
    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            if i + j < size:
                total += shared_a[i + j] * shared_b[j]
        output[i] = total
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `blocks`: many blocks, each with a halo.
# ---------------------------------------------------------------------------
#ko 파트 `blocks`: 여러 블록, 블록마다 헤일로.


def conv1d_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[CONV], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var first = block_idx.x * TPB  # the block's first element
    #ko 블록의 첫 원소
    var i = first + t  # this thread's element
    #ko 이 스레드의 원소
    # TPB slots for the block's own elements, then CONV - 1 for its halo.
    #ko 블록 자신의 원소를 위한 칸 TPB개, 그다음 헤일로를 위한 칸 CONV - 1개.
    var shared_a = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB + CONV - 1]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: fill shared memory, with 0 for every element past the end of a:
    # - thread t: a[i] into shared_a[t];
    # - threads t < CONV - 1: the halo element a[first + TPB + t] into
    #   shared_a[TPB + t];
    # - threads t < CONV: b[t] into shared_b[t]. (about 12 lines)
    #ko FILL IN: 공유 메모리를 채웁니다. a의 끝을 넘어선 자리에는 0을 넣습니다:
    #ko - 스레드 t: a[i]를 shared_a[t]에;
    #ko - t < CONV - 1인 스레드: 헤일로 원소 a[first + TPB + t]를
    #ko   shared_a[TPB + t]에;
    #ko - t < CONV인 스레드: b[t]를 shared_b[t]에. (12줄 정도)
    #| pass
    if i < size:
        shared_a[t] = a[i]
    else:
        shared_a[t] = 0
    if t < CONV - 1:
        var h = first + TPB + t
        if h < size:
            shared_a[TPB + t] = a[h]
        else:
            shared_a[TPB + t] = 0
    if t < CONV:
        shared_b[t] = b[t]
    # END FILL IN

    # FILL IN: wait for the whole block; then, if i < size, write
    # output[i] = the sum of shared_a[t + j] * shared_b[j] over all CONV
    # weights (the zeros take care of the end of a). (about 6 lines)
    #ko FILL IN: 블록 전체를 기다린 다음, i < size이면 CONV개 가중치 모두에 대한
    #ko shared_a[t + j] * shared_b[j]의 합을 output[i]에 씁니다(a의 끝은 0들이
    #ko 알아서 처리합니다). (6줄 정도)
    #| pass
    barrier()
    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            total += shared_a[t + j] * shared_b[j]
        output[i] = total
    # END FILL IN
