# WRONG ON PURPOSE (right_edge_past_shared): the right neighbour's guard is c < TPB: the last thread of each row reads shared[TPB], one past the array.
# Puzzle 10: the bugs you can't see. Each kernel below runs, and on a real
# GPU its output often looks right, yet each has one bug. The workbook finds
# them for you: on a GPU with NVIDIA's compute-sanitizer (memcheck and
# racecheck), and without a GPU with its simulator. Run `workbook run p10`,
# read what it found, and fix each kernel.
#ko 퍼즐 10: 눈에 보이지 않는 버그. 아래 커널들은 모두 실행되고, 실제 GPU에서는
#ko 출력도 맞아 보일 때가 많지만 저마다 버그가 하나씩 있습니다. 워크북이
#ko 찾아 줍니다: GPU에서는 NVIDIA compute-sanitizer(memcheck와 racecheck)로,
#ko GPU가 없으면 워크북의 시뮬레이터로. `workbook run p10`을 실행해
#ko 찾아낸 내용을 읽고 커널을 하나씩 고치세요.

from max.gpu import thread_idx, block_idx, block_dim
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Threads per block in both parts: two warps of 32.
#ko 두 파트 모두 블록당 스레드 수: 32개짜리 워프 두 개.
comptime TPB = 64


# Part `memcheck`: the differences between neighbours,
#     output[i] = a[i + 1] - a[i]   for i in 0 .. size - 2
# so `output` has one element fewer than `a`. The grid has more threads
# than that: some threads must do nothing.
#ko 파트 `memcheck`: 이웃한 값의 차이,
#ko     output[i] = a[i + 1] - a[i]   (i는 0 .. size - 2)
#ko 그래서 `output`은 `a`보다 원소가 하나 적습니다. 그리드의 스레드는 그보다
#ko 많으니, 아무것도 하지 말아야 할 스레드가 있습니다.
def differences[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size - 1], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = block_idx.x * block_dim.x + thread_idx.x
    # FILL IN: which threads may write? (the guard below is the bug; 1 line)
    #ko FILL IN: 어떤 스레드가 써도 될까요? (아래의 가드가 버그입니다. 1줄)
    #| if i < size:
    if i < size - 1:
    # END FILL IN
        output[i] = a[i + 1] - a[i]


# Part `racecheck`: each block smooths one row of 64 values,
#     output[r, c] = a[r, c - 1] + a[r, c] + a[r, c + 1]
# (a neighbour past either end of the row counts as 0). Each thread copies
# its value to shared memory once, then reads its neighbours from there.
#ko 파트 `racecheck`: 블록마다 값 64개로 된 행 하나를 부드럽게 만듭니다.
#ko     output[r, c] = a[r, c - 1] + a[r, c] + a[r, c + 1]
#ko (행의 양 끝을 넘어선 이웃은 0으로 칩니다.) 스레드마다 자기 값을 공유
#ko 메모리에 한 번 복사하고, 이웃의 값은 거기서 읽습니다.
def smooth[rows: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, TPB], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, TPB], ImmutAnyOrigin],
):
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )
    var r = block_idx.x
    var c = thread_idx.x
    shared[c] = a[r, c]
    # FILL IN: what must happen between the writes above and the reads below? (1 line)
    #ko FILL IN: 위의 쓰기와 아래의 읽기 사이에 무엇이 있어야 할까요? (1줄)
    barrier()
    # END FILL IN
    var total = shared[c][0]
    if c > 0:
        total += shared[c - 1][0]
    if c < TPB:
        total += shared[c + 1][0]
    output[r, c] = total
