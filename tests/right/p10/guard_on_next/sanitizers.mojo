# A RIGHT KERNEL WRITTEN ANOTHER WAY (guard_on_next): part memcheck asks whether the thread's right-hand neighbour exists (i + 1 < size) instead of i < size - 1.
# Puzzle 10: the bugs you can't see. Each kernel below runs, and on a real
# GPU its output often looks right, yet each has one bug. The workbook finds
# them for you: on a GPU with NVIDIA's compute-sanitizer (memcheck and
# racecheck), and without a GPU with its simulator. Run `workbook run p10`,
# read what it found, and fix each kernel.

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
comptime TPB = 64


# Part `memcheck`: the differences between neighbours,
#     output[i] = a[i + 1] - a[i]   for i in 0 .. size - 2
# so `output` has one element fewer than `a`. The grid has more threads
# than that: some threads must do nothing.
def differences[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size - 1], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = block_idx.x * block_dim.x + thread_idx.x
    # FILL IN: which threads may write? (the guard below is the bug; 1 line)
    #| if i < size:
    if i + 1 < size:
    # END FILL IN
        output[i] = a[i + 1] - a[i]


# Part `racecheck`: each block smooths one row of 64 values,
#     output[r, c] = a[r, c - 1] + a[r, c] + a[r, c + 1]
# (a neighbour past either end of the row counts as 0). Each thread copies
# its value to shared memory once, then reads its neighbours from there.
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
    barrier()
    # END FILL IN
    var total = shared[c][0]
    if c > 0:
        total += shared[c - 1][0]
    if c < TPB - 1:
        total += shared[c + 1][0]
    output[r, c] = total
