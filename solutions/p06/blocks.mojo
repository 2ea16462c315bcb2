# Puzzle 6: blocks. More elements than one block has threads.
#
# A block here holds only TPB = 4 threads, so the workbook launches as many
# blocks as it takes to cover the vector: ceildiv(size, TPB) of them. For
# size = 10 that is 3 blocks, and the last one has 2 threads too many:
#
#     element      0  1  2  3 | 4  5  6  7 | 8  9  .  .
#     block_idx.x  0  0  0  0 | 1  1  1  1 | 2  2  2  2
#     thread_idx.x 0  1  2  3 | 0  1  2  3 | 0  1  2  3
#
# thread_idx.x starts again at 0 in every block: the element of a thread is
# its block's first element, block_idx.x * block_dim.x, plus thread_idx.x.
# The two threads marked '.' have no element and must not write anything.
#ko 퍼즐 6: blocks. 원소가 블록 하나의 스레드보다 많을 때.
#ko
#ko 여기서는 블록 하나에 스레드가 TPB = 4개뿐이라, 워크북은 벡터를 다 덮을
#ko 만큼 ceildiv(size, TPB)개의 블록을 실행합니다. size = 10이면 블록 3개이고,
#ko 마지막 블록에는 스레드가 2개 남습니다:
#ko
#ko     element      0  1  2  3 | 4  5  6  7 | 8  9  .  .
#ko     block_idx.x  0  0  0  0 | 1  1  1  1 | 2  2  2  2
#ko     thread_idx.x 0  1  2  3 | 0  1  2  3 | 0  1  2  3
#ko
#ko thread_idx.x는 블록마다 0부터 다시 셉니다. 스레드의 원소는 그 블록의 첫
#ko 원소인 block_idx.x * block_dim.x에 thread_idx.x를 더한 것입니다.
#ko '.'으로 표시한 두 스레드에게는 원소가 없으니 아무것도 쓰면 안 됩니다.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: the workbook launches the kernel with blocks this wide.
#ko 블록당 스레드 수: 워크북은 이 너비의 블록으로 커널을 실행합니다.
comptime TPB = 4


def add_ten_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # FILL IN: find this thread's element among all the blocks' elements;
    # if it lies inside the vector, write a[i] + 10 there. (3 lines)
    #ko FILL IN: 모든 블록의 원소 가운데 이 스레드의 원소를 찾고, 그것이 벡터
    #ko 안에 있으면 그 자리에 a[i] + 10을 씁니다. (3줄)
    #| pass
    var i = block_idx.x * block_dim.x + thread_idx.x
    if i < size:
        output[i] = a[i] + 10
    # END FILL IN
