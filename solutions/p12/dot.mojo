# Puzzle 12: dot product. A tree reduction in shared memory, in two steps.
#
#     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#
# Step 1, `partial_dots`: `blocks` = ceildiv(size, TPB) blocks of TPB
# threads. Each thread puts one product in shared memory (0 past the end of
# the data), then the block folds its TPB slots in half, again and again,
# until slot 0 holds the block's sum. Drawn with TPB = 8 ([k] is slot k as
# the row above left it):
#
#     slot       0        1        2       3       4    5    6    7
#     start      p0       p1       p2      p3      p4   p5   p6   p7
#     stride 4   p0+p4    p1+p5    p2+p6   p3+p7        threads 0..3 add
#     stride 2   [0]+[2]  [1]+[3]                       threads 0..1 add
#     stride 1   [0]+[1]                                thread 0 adds
#                   |
#                   v
#     partial[block_idx.x] = p0 + p1 + ... + p7
#
# barrier() waits for the threads of ONE block only: no block can wait for
# another. That is why there is a step 2.
#
# Step 2, `add_partials`: launched after step 1 has finished in every block,
# with one block of one thread, which adds the per-block sums into output[0].
#ko 퍼즐 12: 내적. 공유 메모리에서 하는 트리 리덕션, 두 단계로.
#ko
#ko     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#ko
#ko 1단계 `partial_dots`: 스레드 TPB개짜리 블록 `blocks` = ceildiv(size, TPB)개.
#ko 스레드마다 곱 하나를 공유 메모리에 넣고(데이터 끝을 넘으면 0), 블록은
#ko TPB개의 칸을 계속 반으로 접어 마침내 칸 0에 블록의 합이 남게 합니다.
#ko TPB = 8일 때([k]는 윗줄이 남긴 칸 k의 값):
#ko
#ko     칸         0        1        2       3       4    5    6    7
#ko     처음       p0       p1       p2      p3      p4   p5   p6   p7
#ko     stride 4   p0+p4    p1+p5    p2+p6   p3+p7        스레드 0..3이 더함
#ko     stride 2   [0]+[2]  [1]+[3]                       스레드 0..1이 더함
#ko     stride 1   [0]+[1]                                스레드 0이 더함
#ko                   |
#ko                   v
#ko     partial[block_idx.x] = p0 + p1 + ... + p7
#ko
#ko barrier()는 블록 하나의 스레드들만 기다립니다. 다른 블록을 기다릴 수 있는
#ko 블록은 없습니다. 그래서 2단계가 있습니다.
#ko
#ko 2단계 `add_partials`: 모든 블록에서 1단계가 끝난 뒤, 스레드 하나짜리 블록
#ko 하나로 실행되어 블록별 합을 더해 output[0]에 씁니다.

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
# Threads per block in step 1 (a power of two, so that it halves down to 1).
#ko 1단계의 블록당 스레드 수(2의 거듭제곱이라 반씩 줄여 1까지 내려갑니다).
comptime TPB = 128


def partial_dots[size: Int, blocks: Int](
    partial: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var i = block_idx.x * TPB + t  # this thread's element
    #ko 이 스레드의 원소
    var products = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: thread t stores a[i] * b[i] in products[t], or 0 if i is past
    # the end, so that every one of the TPB slots holds a number. Then wait
    # for the whole block. (about 5 lines)
    #ko FILL IN: 스레드 t는 a[i] * b[i]를 products[t]에 넣습니다. i가 끝을
    #ko 넘어섰으면 0을 넣어 TPB개의 칸 모두에 수가 들어 있게 합니다. 그다음
    #ko 블록 전체를 기다립니다. (5줄 정도)
    #| pass
    if i < size:
        products[t] = a[i] * b[i]
    else:
        products[t] = 0
    barrier()
    # END FILL IN

    # FILL IN: the tree. Start with stride = TPB // 2; while stride > 0, the
    # threads t < stride add products[t + stride] into products[t], every
    # thread waits, and the stride halves. (about 6 lines)
    #ko FILL IN: 트리. stride = TPB // 2로 시작해 stride > 0인 동안, t < stride인
    #ko 스레드가 products[t + stride]를 products[t]에 더하고, 모든 스레드가
    #ko 기다린 다음, stride를 반으로 줄입니다. (6줄 정도)
    #| pass
    var stride = TPB // 2
    while stride > 0:
        if t < stride:
            products[t] += products[t + stride]
        barrier()
        stride //= 2
    # END FILL IN

    # FILL IN: thread 0 writes the block's sum to partial[block_idx.x].
    # (2 lines)
    #ko FILL IN: 스레드 0이 블록의 합을 partial[block_idx.x]에 씁니다.
    #ko (2줄)
    #| pass
    if t == 0:
        partial[block_idx.x] = products[0]
    # END FILL IN


def add_partials[blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
):
    # FILL IN: the only thread adds partial[0], ..., partial[blocks - 1]
    # and writes the total to output[0]. (about 4 lines)
    #ko FILL IN: 하나뿐인 스레드가 partial[0], ..., partial[blocks - 1]을
    #ko 모두 더해 합계를 output[0]에 씁니다. (4줄 정도)
    #| pass
    var total: Scalar[dtype] = 0
    for k in range(blocks):
        total += partial[k]
    output[0] = total
    # END FILL IN
