# WRONG ON PURPOSE (no_zero_fill_past_end): kernel 1's threads past the end of a leave their slot of shared memory unwritten instead of writing 0.
# Puzzle 14: prefix sum (scan). Each output is the sum of its own input and
# every input before it:
#
#     a       [  3 | -1 |  4 |  2 | -5 |  6 ]
#     output  [  3 |  2 |  6 |  8 |  3 |  9 ]    output[i] = a[0] + ... + a[i]
#
# Part `block` (scan_block): one block of TPB threads, one element each
# (size <= TPB). The block copies its elements to shared memory and scans
# them in rounds. In every round each thread adds the value `stride` places
# to its left, and the stride doubles (1, 2, 4, ...):
#
#     shared     [ a0 | a1    | a2     | a3     ]
#     stride 1   [ a0 | a0+a1 | a1+a2  | a2+a3  ]
#     stride 2   [ a0 | a0+a1 | a0..a2 | a0..a3 ]    (log2(TPB) rounds in all)
#
# A round is: read the left value, barrier, write your own, barrier. Without
# the first barrier a thread can read a neighbour that has already written.
#
# Part `any`: any size, two kernels launched one after the other
# (pictured with 4 threads per block):
#
#     a                   [ 3 -1  4  2 | -5  6  1  1 |  2 ]
#     scan_blocks         [ 3  2  6  8 | -5  1  2  3 |  2 ]  totals = [8, 3, 2]
#     add_block_offsets   [ 3  2  6  8 |  3  9 10 11 | 13 ]  +0, +8, +(8+3)
#ko 퍼즐 14: 누적 합(스캔). 출력마다 자기 입력과 그 앞의 모든 입력을 더한
#ko 값입니다:
#ko
#ko     a       [  3 | -1 |  4 |  2 | -5 |  6 ]
#ko     output  [  3 |  2 |  6 |  8 |  3 |  9 ]    output[i] = a[0] + ... + a[i]
#ko
#ko 파트 `block`(scan_block): 스레드 TPB개짜리 블록 하나, 스레드마다 원소
#ko 하나(size <= TPB). 블록은 원소들을 공유 메모리에 복사하고 여러 라운드에
#ko 걸쳐 스캔합니다. 라운드마다 각 스레드가 `stride`칸 왼쪽의 값을 더하고,
#ko stride는 두 배가 됩니다(1, 2, 4, ...):
#ko
#ko     shared     [ a0 | a1    | a2     | a3     ]
#ko     stride 1   [ a0 | a0+a1 | a1+a2  | a2+a3  ]
#ko     stride 2   [ a0 | a0+a1 | a0..a2 | a0..a3 ]    (모두 log2(TPB) 라운드)
#ko
#ko 한 라운드는 이렇습니다: 왼쪽 값 읽기, barrier, 내 칸 쓰기, barrier.
#ko 첫 번째 barrier가 없으면 이웃이 이미 새 값을 쓴 뒤에 읽을 수 있습니다.
#ko
#ko 파트 `any`: 아무 크기나. 커널 두 개를 차례로 실행합니다
#ko (그림은 블록당 스레드 4개):
#ko
#ko     a                   [ 3 -1  4  2 | -5  6  1  1 |  2 ]
#ko     scan_blocks         [ 3  2  6  8 | -5  1  2  3 |  2 ]  totals = [8, 3, 2]
#ko     add_block_offsets   [ 3  2  6  8 |  3  9 10 11 | 13 ]  +0, +8, +(8+3)

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
# Threads per block: one block scans TPB elements. Keep it: the workbook
# launches the kernels with TPB threads per block.
#ko 블록당 스레드 수: 블록 하나가 원소 TPB개를 스캔합니다. 바꾸지 마세요.
#ko 워크북이 블록당 TPB개의 스레드로 커널을 실행합니다.
comptime TPB = 64


# ---------------------------------------------------------------------------
# Part `block`: one block, size <= TPB.
# ---------------------------------------------------------------------------
#ko 파트 `block`: 블록 하나, size <= TPB.


def scan_block[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = thread_idx.x
    # TPB floats that every thread of the block sees.
    #ko 블록의 모든 스레드가 보는 float TPB개.
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: copy a[i] to shared[i]; a thread past the end of `a` writes 0
    # instead (it has no element, but its slot is part of the scan). Then
    # wait until every thread has written. (about 5 lines)
    #ko FILL IN: a[i]를 shared[i]에 복사합니다. `a`의 끝을 넘어선 스레드는
    #ko 대신 0을 씁니다(원소는 없지만 그 칸도 스캔에 들어갑니다). 그다음 모든
    #ko 스레드가 쓸 때까지 기다립니다. (5줄 정도)
    #| _ = i
    if i < size:
        shared[i] = a[i]
    else:
        shared[i] = 0
    barrier()
    # END FILL IN

    # FILL IN: the rounds, for stride = 1, 2, 4, ... while stride < TPB:
    # read the value `stride` places to the left (0 if there is none),
    # barrier, add it to shared[i], barrier. (about 9 lines)
    #ko FILL IN: stride = 1, 2, 4, ...에 대해 stride < TPB인 동안 라운드를 돕니다:
    #ko `stride`칸 왼쪽의 값을 읽고(없으면 0), barrier, 그 값을 shared[i]에
    #ko 더하고, barrier. (9줄 정도)
    #| pass
    var stride = 1
    while stride < TPB:
        var left: Scalar[dtype] = 0
        if i >= stride:
            left = shared[i - stride][0]
        # Everyone has read before anyone writes...
        barrier()
        shared[i] = shared[i][0] + left
        # ...and everyone has written before the next round reads.
        barrier()
        stride *= 2
    # END FILL IN

    # FILL IN: copy the scanned value to output[i], for threads that have an
    # element. (2 lines)
    #ko FILL IN: 원소가 있는 스레드는 스캔한 값을 output[i]에 복사합니다.
    #ko (2줄)
    #| pass
    if i < size:
        output[i] = shared[i]
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `any`: any size, ceildiv(size, TPB) blocks, two kernels.
# ---------------------------------------------------------------------------
#ko 파트 `any`: 아무 크기나. 블록 ceildiv(size, TPB)개, 커널 두 개.


def scan_blocks[size: Int, blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # Kernel 1: every block scans its own TPB elements, as scan_block does,
    # and writes the sum of its elements to totals[block].
    #ko 커널 1: 블록마다 scan_block처럼 자기 원소 TPB개를 스캔하고, 원소들의
    #ko 합을 totals[block]에 씁니다.
    var local_i = thread_idx.x
    var global_i = block_idx.x * TPB + local_i
    var shared = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: the scan of scan_block, with two changes: a thread's element
    # is a[global_i] (its slot in shared memory is still local_i), and the
    # last thread of the block writes the block's total, its scanned value,
    # to totals[block_idx.x]. (about 20 lines)
    #ko FILL IN: scan_block의 스캔을 두 가지만 바꿔서 합니다. 스레드의 원소는
    #ko a[global_i]이고(공유 메모리의 칸은 여전히 local_i), 블록의 마지막
    #ko 스레드가 블록의 합계, 곧 자기가 스캔한 값을 totals[block_idx.x]에
    #ko 씁니다. (20줄 정도)
    #| _ = global_i
    if global_i < size:
        shared[local_i] = a[global_i]
    barrier()

    var stride = 1
    while stride < TPB:
        var left: Scalar[dtype] = 0
        if local_i >= stride:
            left = shared[local_i - stride][0]
        barrier()
        shared[local_i] = shared[local_i][0] + left
        barrier()
        stride *= 2

    if global_i < size:
        output[global_i] = shared[local_i]
    # The last slot holds the sum of the whole block (threads past the end
    # of `a` added zeros).
    if local_i == TPB - 1:
        totals[block_idx.x] = shared[local_i]
    # END FILL IN


def add_block_offsets[size: Int, blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
):
    # Kernel 2, launched after scan_blocks has finished in every block:
    # block b adds totals[0] + ... + totals[b-1] to each of its elements.
    #ko 커널 2: 모든 블록에서 scan_blocks가 끝난 뒤 실행됩니다. 블록 b는
    #ko totals[0] + ... + totals[b-1]을 자기 원소 각각에 더합니다.
    var local_i = thread_idx.x
    var global_i = block_idx.x * TPB + local_i
    # One float the whole block shares: the offset of this block.
    #ko 블록 전체가 함께 쓰는 float 하나: 이 블록의 오프셋.
    var offset = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[1]())

    # FILL IN: thread 0 adds up the totals of the blocks BEFORE this one
    # and stores the sum in offset[0]; every thread waits for it (barrier),
    # then adds offset[0] to its element of `output`, if it has one.
    # (about 8 lines)
    #ko FILL IN: 스레드 0이 이 블록 "앞"의 블록들의 합계를 모두 더해 offset[0]에
    #ko 넣습니다. 모든 스레드는 그것을 기다린 다음(barrier), 원소가 있으면
    #ko offset[0]을 `output`의 자기 원소에 더합니다.
    #ko (8줄 정도)
    #| _ = global_i
    if local_i == 0:
        var earlier: Scalar[dtype] = 0
        for b in range(block_idx.x):
            earlier += totals[b][0]
        offset[0] = earlier
    # Outside the `if`: every thread of the block must reach the barrier.
    barrier()
    if global_i < size:
        output[global_i] = output[global_i][0] + offset[0][0]
    # END FILL IN
