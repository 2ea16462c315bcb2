# Puzzle 8: shared memory. A block copies its slice once, then every thread
# reads its neighbour's value from the copy.
#
#     output[i] = a[i] + a[i + 1]    when element i + 1 is in the same block
#     output[i] = a[i]               for the last element of a block or of a
#
# Blocks of TPB = 8 threads; for size = 13 the second block is partly empty:
#
#     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 a11 a12  .  .  .
#     shared     (block 0's own copy)    | (block 1's own copy, 0 0 0)
#     thread     0  1  2  3  4  5  6  7  | 0  1  2   3   4   5  6  7
#     output     a0+a1 ... a6+a7    a7   | a8+a9 ...  a11+a12  a12
#
# Thread 3 needs the value that thread 4 copied in. barrier() makes every
# thread of the block wait there until all of them have arrived, so the
# whole copy is finished before anyone reads it.
#ko 퍼즐 8: 공유 메모리. 블록이 자기 구간을 한 번 복사해 두면, 스레드마다
#ko 그 복사본에서 이웃의 값을 읽습니다.
#ko
#ko     output[i] = a[i] + a[i + 1]    원소 i + 1이 같은 블록에 있을 때
#ko     output[i] = a[i]               블록이나 a의 마지막 원소일 때
#ko
#ko 블록은 스레드 TPB = 8개. size = 13이면 두 번째 블록은 일부가 비어 있습니다:
#ko
#ko     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 a11 a12  .  .  .
#ko     shared     (블록 0만의 복사본)     | (블록 1만의 복사본, 0 0 0)
#ko     thread     0  1  2  3  4  5  6  7  | 0  1  2   3   4   5  6  7
#ko     output     a0+a1 ... a6+a7    a7   | a8+a9 ...  a11+a12  a12
#ko
#ko 스레드 3에게는 스레드 4가 복사해 넣은 값이 필요합니다. barrier()는 블록의
#ko 모든 스레드가 도착할 때까지 거기서 기다리게 하므로, 누가 읽기 전에
#ko 복사가 모두 끝나 있게 됩니다.

from max.gpu import thread_idx, block_idx, block_dim
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: the workbook launches ceildiv(size, TPB) such blocks.
#ko 블록당 스레드 수: 워크북은 이런 블록을 ceildiv(size, TPB)개 실행합니다.
comptime TPB = 8


def pair_sums[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # This thread's element of a, and its slot in the block's shared copy.
    #ko a에서 이 스레드의 원소, 그리고 블록의 공유 복사본에서 이 스레드의 칸.
    var i = block_idx.x * block_dim.x + thread_idx.x
    var local = thread_idx.x
    # TPB values in shared memory: one array per block, for all its threads.
    #ko 공유 메모리의 값 TPB개: 블록마다 배열 하나를 모든 스레드가 함께 씁니다.
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )

    # FILL IN: copy this thread's element of a into its slot, or 0 if the
    # thread is past the end of a; then wait for the whole block. (5 lines)
    #ko FILL IN: 이 스레드의 a 원소를 자기 칸에 복사합니다. 스레드가 a의 끝을
    #ko 넘어섰으면 0을 넣습니다. 그다음 블록 전체를 기다립니다. (5줄)
    #| pass
    if i < size:
        shared[local] = a[i]
    else:
        shared[local] = 0
    barrier()
    # END FILL IN

    # FILL IN: from shared memory only, write output[i]: this thread's value
    # plus the next slot's, unless this is the block's last slot. (5 lines)
    #ko FILL IN: 공유 메모리만 읽어서 output[i]를 씁니다. 이 스레드의 값에 다음
    #ko 칸의 값을 더하되, 블록의 마지막 칸이면 자기 값만 씁니다. (5줄)
    #| pass
    if i < size:
        if local + 1 < TPB:
            output[i] = shared[local] + shared[local + 1]
        else:
            output[i] = shared[local]
    # END FILL IN
