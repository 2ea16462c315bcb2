# WRONG ON PURPOSE (tree_guard_off_by_one): The GPU tree's guard is i <= stride: thread stride also folds in slot 2 * stride, which is past the shared array at the first level, while thread 0 reads the slot thread stride writes.
# Puzzle 18: softmax as a custom MAX op.
#
# Three pieces live in this file:
#   1. softmax_gpu_kernel: one thread block computes the whole softmax,
#      with two tree reductions in shared memory (the maximum, then the sum);
#   2. softmax_cpu_kernel: the same math, one element after another;
#   3. SoftmaxOp: the op MAX calls. It is written for you: it picks the
#      kernel for the device the graph runs on.

from std.math import exp
from std.utils.numerics import min_finite, nan
from max.gpu import thread_idx
from max.gpu.memory import AddressSpace
from max.gpu.sync import barrier
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
import extensibility
from extensibility import InputTensor, OutputTensor

comptime SIZE = 128
# One block of threads; a tree reduction halves the active threads each
# step, so the block size is the smallest power of two >= SIZE.
comptime BLOCK_DIM_X = 128
comptime layout = row_major[SIZE]()
comptime LayoutType = type_of(layout)


def softmax_gpu_kernel[input_size: Int, dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    input: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "softmax needs a float dtype"
    # One slot per thread, visible to the whole block.
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[BLOCK_DIM_X]()
    )
    var i = Int(thread_idx.x)

    # FILL IN: step 1, the block's maximum. Each thread puts its value in
    # shared[i] (threads past input_size put the lowest finite value), then a
    # tree reduction: at each stride, thread i < stride keeps the larger of
    # shared[i] and shared[i + stride]. barrier() after every write that other
    # threads read. (about 14 lines)
    #| var block_max = Scalar[dtype](0)
    var value = min_finite[dtype]()
    if i < input_size:
        value = input[i][0]
    shared[i] = value
    barrier()

    var stride = BLOCK_DIM_X // 2
    while stride > 0:
        if i <= stride:
            shared[i] = max(shared[i], shared[i + stride])
        barrier()
        stride //= 2
    var block_max = shared[0][0]
    # Everyone must have read shared[0] before step 2 overwrites it.
    barrier()
    # END FILL IN

    # FILL IN: step 2, exp(x - max) and their sum with the same tree
    # reduction (threads past input_size contribute 0), then step 3: each
    # thread in range writes exp(x_i - max) / sum. (about 16 lines)
    #| _ = block_max
    var e = Scalar[dtype](0)
    if i < input_size:
        e = exp(input[i][0] - block_max)
    shared[i] = e
    barrier()

    stride = BLOCK_DIM_X // 2
    while stride > 0:
        if i < stride:
            shared[i] = shared[i] + shared[i + stride]
        barrier()
        stride //= 2

    if i < input_size:
        output[i] = e / shared[0][0]
    # END FILL IN


def softmax_cpu_kernel[input_size: Int, dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    input: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "softmax needs a float dtype"
    # FILL IN: the same three steps, one element at a time: the maximum, the
    # sum of exp(x - max) (keep each exp in output), then divide. (about 12 lines)
    #| pass
    var largest = min_finite[dtype]()
    for i in range(input_size):
        largest = max(largest, input[i][0])

    var total = Scalar[dtype](0)
    for i in range(input_size):
        var e = exp(input[i][0] - largest)
        output[i] = e
        total += e

    for i in range(input_size):
        output[i] = output[i][0] / total
    # END FILL IN


# ---------------------------------------------------------------------------
# The op MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------


def poison_kernel[dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
):
    # Fill the output with NaN, so an element the kernel forgets shows up.
    var i = Int(thread_idx.x)
    if i < SIZE:
        output[i] = nan[dtype]()


@extensibility.register("softmax")
struct SoftmaxOp:
    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        input_size: Int,
        dtype: DType = DType.float32,
    ](
        output: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        input: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        comptime assert input_size == SIZE, "this puzzle is written for SIZE elements"
        var out_tensor = TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin](
            output.unsafe_ptr(), layout
        )
        var in_tensor = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
            input.unsafe_ptr(), layout
        )
        comptime if target == "gpu":
            ctx.enqueue_function[poison_kernel[dtype]](
                out_tensor, grid_dim=1, block_dim=BLOCK_DIM_X
            )
            ctx.enqueue_function[softmax_gpu_kernel[input_size, dtype]](
                out_tensor, in_tensor, grid_dim=1, block_dim=BLOCK_DIM_X
            )
        else:
            for i in range(SIZE):
                out_tensor[i] = nan[dtype]()
            softmax_cpu_kernel[input_size, dtype](out_tensor, in_tensor)
