# Puzzle 9: debugging. The three kernels below compile and run, and each has
# one bug: a read past the end of a buffer, a window that slips by one, and a
# barrier some threads never reach. Don't hunt through the code first: run
# `workbook run p09`, read the report (which line, which thread, which
# element), and let it lead you to the line to fix.
#ko 퍼즐 9: 디버깅. 아래의 세 커널은 컴파일되고 실행도 되지만, 저마다 버그가
#ko 하나씩 있습니다: 버퍼 끝을 넘어선 읽기, 한 칸 어긋난 창, 그리고 일부
#ko 스레드가 도달하지 못하는 배리어. 코드부터 뒤지지 마세요. `workbook run p09`를
#ko 실행해 보고서(어느 줄, 어느 스레드, 어느 원소)를 읽고, 보고서가 가리키는
#ko 줄을 고치세요.

from max.gpu import thread_idx, block_idx, block_dim
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block in every part: two warps of 32.
#ko 모든 파트의 블록당 스레드 수: 32개짜리 워프 두 개.
comptime TPB = 64
# How many values the sliding window of part `window` adds up.
#ko 파트 `window`의 미끄러지는 창이 더하는 값의 개수.
comptime WINDOW = 4


# Part `overread`: pad `a` (length values) with zeros up to size values,
#     output[i] = a[i]   for i < length
#     output[i] = 0      for length <= i < size
# `a` is shorter than `output`: only the first `length` threads have a
# value of their own to copy.
#ko 파트 `overread`: `a`(값 length개)의 뒤를 0으로 채워 값 size개로 만듭니다.
#ko     output[i] = a[i]   (i < length)
#ko     output[i] = 0      (length <= i < size)
#ko `a`는 `output`보다 짧습니다. 복사할 자기 값이 있는 스레드는 처음
#ko `length`개뿐입니다.
def pad_zeros[length: Int, size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[length], ImmutAnyOrigin],
):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    # FILL IN: one bug below: the report names its line. (about 4 lines)
    #ko FILL IN: 아래에 버그가 하나 있습니다. 보고서가 그 줄을 알려 줍니다. (4줄 정도)
    #| if i < size:
    #|     output[i] = a[i]
    if i < length:
        output[i] = a[i]
    elif i < size:
        output[i] = 0
    # END FILL IN


# Part `window`: the sum of the last WINDOW values up to and including a[i],
#     output[i] = a[i - 3] + a[i - 2] + a[i - 1] + a[i]
# where a term before a[0] is left out (it counts as 0): output[0] = a[0],
# output[1] = a[0] + a[1], ...
#ko 파트 `window`: a[i]까지(a[i] 포함) 마지막 값 WINDOW개의 합,
#ko     output[i] = a[i - 3] + a[i - 2] + a[i - 1] + a[i]
#ko a[0] 앞의 항은 빠집니다(0으로 칩니다): output[0] = a[0],
#ko output[1] = a[0] + a[1], ...
def window_sum[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    if i < size:
        var total: Scalar[dtype] = 0
        # FILL IN: one bug in the two lines below: the report shows which
        # outputs are wrong. (2 lines)
        #ko FILL IN: 아래 두 줄에 버그가 하나 있습니다. 보고서가 어느 출력이
        #ko 틀렸는지 보여 줍니다. (2줄)
        #| var start = max(i - WINDOW, 0)
        #| for j in range(start + 1, i + 1):
        var start = max(i - WINDOW + 1, 0)
        for j in range(start, i + 1):
        # END FILL IN
            total += a[j]
        output[i] = total


# Part `barrier`: reverse each block's slice of `a`,
#     a       [ a0 a1 ... a63 | a64 a65 a66 ]       (size 67: the last block
#     output  [ a63 ... a1 a0 | a66 a65 a64 ]        holds 3 values)
# Each thread copies its value into shared memory (neighbouring threads read
# neighbouring values: one wide read for a warp), then, once the whole block
# has, writes the value from the other end of its block's slice.
#ko 파트 `barrier`: `a`를 블록 단위로 잘라 조각마다 뒤집습니다.
#ko     a       [ a0 a1 ... a63 | a64 a65 a66 ]       (size 67: 마지막 블록은
#ko     output  [ a63 ... a1 a0 | a66 a65 a64 ]        값 3개를 맡습니다)
#ko 스레드마다 자기 값을 공유 메모리에 복사하고(이웃 스레드가 이웃 값을 읽으니
#ko 워프 하나가 한 번에 넓게 읽습니다), 블록 전체가 복사를 마치면 블록 조각의
#ko 반대쪽 끝에서 값을 가져와 씁니다.
def reverse_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )
    var t = Int(thread_idx.x)
    var first = Int(block_idx.x) * TPB  # the block's first element
    #ko 블록의 첫 원소
    var i = first + t
    var count = min(TPB, size - first)  # how many values this block holds
    #ko 이 블록이 맡은 값의 개수
    # FILL IN: one bug below: the report names its line. (about 5 lines)
    #ko FILL IN: 아래에 버그가 하나 있습니다. 보고서가 그 줄을 알려 줍니다. (5줄 정도)
    #| if i < size:
    #|     shared[t] = a[i]
    #|     barrier()
    #|     output[i] = shared[count - 1 - t]
    if i < size:
        shared[t] = a[i]
    barrier()
    if i < size:
        output[i] = shared[count - 1 - t]
    # END FILL IN
