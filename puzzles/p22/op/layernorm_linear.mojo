# Puzzle 22: the backward pass of a fused LayerNorm + Linear op.
#
# Forward, for every position (b, s) of x [batch, seq, hidden]:
#     mean    = sum_h x[h] / H
#     var     = sum_h (x[h] - mean)^2 / H
#     inv_std = 1 / sqrt(var + EPS)
#     xhat[h] = (x[h] - mean) * inv_std            the normalized row
#     ln[h]   = ln_weight[h] * xhat[h] + ln_bias[h]  LayerNorm's output
#     y[o]    = bias[o] + sum_h weight[o, h] * ln[h]  the Linear layer
#
# Backward: given grad_output = dL/dy, this op returns dL/dx and the
# gradients of the four parameters. It also writes y, so the workbook can
# check that the forward part you recompute is right.
#
# Three pieces live in this file:
#   1. layernorm_linear_backward_gpu_kernel: one thread block per position
#      (grid = (batch, seq)); the block's threads split the row between them;
#   2. layernorm_linear_backward_cpu_kernel: the same math, one position
#      after another;
#   3. LayerNormLinearBackwardOp: the op MAX calls. It is written for you: it
#      poisons the outputs, zeroes the gradient accumulators and launches
#      the kernel for the device the graph runs on.

from std.atomic import Atomic
from std.math import sqrt
from std.utils.numerics import nan
from max.gpu import thread_idx, block_idx
from max.gpu.memory import AddressSpace
from max.gpu.primitives import block
from max.gpu.sync import barrier
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
import extensibility
from extensibility import InputTensor, OutputTensor

# The epsilon inside the square root, as in PyTorch's LayerNorm.
comptime EPS = 1e-5
# Threads per block. A row of `hidden` (or `out_dim`) values is shared out
# between them: thread t takes the indices t, t + TPB, t + 2 * TPB, ... so
# any size works, whether it is smaller or larger than the block.
comptime TPB = 64

# Row-major layout types for tensors whose sizes are op parameters. The sizes
# are compile-time values, but they come from the graph (ops.custom
# parameters=...), so one op serves every shape the graph asks for.
comptime Rows1[n0: Int] = type_of(row_major[n0]())
comptime Rows2[n0: Int, n1: Int] = type_of(row_major[n0, n1]())
comptime Rows3[n0: Int, n1: Int, n2: Int] = type_of(row_major[n0, n1, n2]())


def layernorm_linear_backward_gpu_kernel[
    batch: Int, seq: Int, hidden: Int, out_dim: Int, dtype: DType
](
    # Outputs. `output` and `grad_input` arrive full of NaN: every element
    # must be written. The four parameter gradients arrive zeroed: every
    # block adds its position's share into them.
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, out_dim], MutAnyOrigin],
    grad_input: TileTensor[mut=True, dtype, Rows3[batch, seq, hidden], MutAnyOrigin],
    grad_ln_weight: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_ln_bias: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_weight: TileTensor[mut=True, dtype, Rows2[out_dim, hidden], MutAnyOrigin],
    grad_bias: TileTensor[mut=True, dtype, Rows1[out_dim], MutAnyOrigin],
    # Inputs.
    x: TileTensor[mut=False, dtype, Rows3[batch, seq, hidden], ImmutAnyOrigin],
    ln_weight: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    ln_bias: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    weight: TileTensor[mut=False, dtype, Rows2[out_dim, hidden], ImmutAnyOrigin],
    bias: TileTensor[mut=False, dtype, Rows1[out_dim], ImmutAnyOrigin],
    grad_output: TileTensor[mut=False, dtype, Rows3[batch, seq, out_dim], ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "LayerNorm needs a float dtype"
    # This block's position, and this thread's place in the block.
    var b = Int(block_idx.x)
    var s = Int(block_idx.y)
    var t = Int(thread_idx.x)
    var n = Scalar[dtype](hidden)

    # The block's scratch rows: xhat (the normalized x) and dxhat (dL/dxhat).
    # Threads write their own entries and read everyone's, so a barrier()
    # must separate the writes from the reads of other threads.
    var xhat = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[hidden]()
    )
    var dxhat = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[hidden]()
    )

    # Step 1, the row's statistics. Each thread sums its share of the row,
    # x[b, s, h] for h in range(t, hidden, TPB); block.sum[block_size=TPB]
    # adds the shares of the whole block and hands every thread the total.
    # First the mean, then the variance as the mean of (x - mean)^2 (this
    # second pass keeps the digits that E[x^2] - mean^2 would cancel away),
    # then inv_std = 1 / sqrt(var + EPS).
    # FILL IN: step 1, mean and inv_std (about 12 lines)
    var mean = Scalar[dtype](0)
    var inv_std = Scalar[dtype](1)

    # Step 2, the normalized row: xhat[h] = (x[b, s, h] - mean) *
    # inv_std for this thread's h, then a barrier() so that step 3 can read
    # the entries of other threads.
    # FILL IN: step 2, xhat into shared memory (about 5 lines)
    _ = mean
    _ = inv_std

    # Step 3, the Linear layer, output features shared out between the
    # threads (for o in range(t, out_dim, TPB)). With
    # ln[h] = ln_weight[h] * xhat[h] + ln_bias[h]:
    #   output[b, s, o] = bias[o] + sum_h weight[o, h] * ln[h]
    #   grad_bias[o]      += grad_output[b, s, o]
    #   grad_weight[o, h] += grad_output[b, s, o] * ln[h]   (every h)
    # Every block adds into the same grad_bias and grad_weight, so the adds
    # must be atomic: _ = Atomic.fetch_add(tensor.ptr.unsafe_offset(i), v),
    # where i is the element's offset in the row-major buffer.
    # FILL IN: step 3, y and the Linear gradients (about 16 lines)
    pass

    # Step 4, back through the Linear layer into LayerNorm, one h per
    # thread: dln = sum_o grad_output[b, s, o] * weight[o, h] is dL/dln[h].
    # Add dln * xhat[h] into grad_ln_weight[h] and dln into grad_ln_bias[h]
    # (atomically: every block adds into them), and keep
    # dxhat[h] = dln * ln_weight[h]. Then two block sums, needed by every h in
    # step 5: mean_dxhat = sum_h dxhat[h] / H and
    # mean_dxhat_xhat = sum_h dxhat[h] * xhat[h] / H.
    # FILL IN: step 4, the LayerNorm parameter gradients and the two sums (about 18 lines)
    var mean_dxhat = Scalar[dtype](0)
    var mean_dxhat_xhat = Scalar[dtype](0)

    # Step 5, LayerNorm's input gradient for this thread's h:
    #   grad_input[b, s, h] = inv_std * (dxhat[h] - mean_dxhat
    #                                    - xhat[h] * mean_dxhat_xhat)
    # The middle term is the path through the mean, the last one the path
    # through the variance.
    # FILL IN: step 5, grad_input (about 6 lines)
    _ = mean_dxhat
    _ = mean_dxhat_xhat


def layernorm_linear_backward_cpu_kernel[
    batch: Int, seq: Int, hidden: Int, out_dim: Int, dtype: DType
](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, out_dim], MutAnyOrigin],
    grad_input: TileTensor[mut=True, dtype, Rows3[batch, seq, hidden], MutAnyOrigin],
    grad_ln_weight: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_ln_bias: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_weight: TileTensor[mut=True, dtype, Rows2[out_dim, hidden], MutAnyOrigin],
    grad_bias: TileTensor[mut=True, dtype, Rows1[out_dim], MutAnyOrigin],
    x: TileTensor[mut=False, dtype, Rows3[batch, seq, hidden], ImmutAnyOrigin],
    ln_weight: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    ln_bias: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    weight: TileTensor[mut=False, dtype, Rows2[out_dim, hidden], ImmutAnyOrigin],
    bias: TileTensor[mut=False, dtype, Rows1[out_dim], ImmutAnyOrigin],
    grad_output: TileTensor[mut=False, dtype, Rows3[batch, seq, out_dim], ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "LayerNorm needs a float dtype"
    var n = Scalar[dtype](hidden)
    # Scratch rows, reused for every position: the normalized row and dL/dxhat.
    var xhat = List[Scalar[dtype]](length=hidden, fill=0)
    var dxhat = List[Scalar[dtype]](length=hidden, fill=0)

    # One position after another: no other thread adds into the parameter
    # gradients, so a plain += is enough here (they arrive zeroed).
    for b in range(batch):
        for s in range(seq):
            # The row's mean, its variance (mean of (x - mean)^2),
            # inv_std = 1 / sqrt(var + EPS), and xhat[h] for every h.
            # FILL IN: the statistics and xhat (about 12 lines)
            var inv_std = Scalar[dtype](1)

            # The Linear layer for every o: output[b, s, o], and add
            # this position's share into grad_bias[o] and grad_weight[o, h].
            # FILL IN: y and the Linear gradients (about 10 lines)
            pass

            # Back into LayerNorm: for every h, dln = dL/dln[h],
            # the shares of grad_ln_weight[h] and grad_ln_bias[h], and
            # dxhat[h]; then the two means and grad_input[b, s, h] for every
            # h, with the mean term and the variance term.
            # FILL IN: the LayerNorm gradients and grad_input (about 20 lines)
            _ = inv_std


# ---------------------------------------------------------------------------
# The op MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------

comptime FILL_BLOCK = 256


def fill_kernel[size: Int, dtype: DType](
    buffer: TileTensor[mut=True, dtype, Rows1[size], MutAnyOrigin],
    value: Scalar[dtype],
):
    # Set every element of a flat buffer to `value`.
    var i = Int(block_idx.x) * FILL_BLOCK + Int(thread_idx.x)
    if i < size:
        buffer[i] = value


def fill[size: Int, dtype: DType, target: StaticString](
    ptr: Pointer[Scalar[dtype], MutAnyOrigin],
    value: Scalar[dtype],
    ctx: DeviceContext,
) raises:
    # Fill `size` elements from `ptr` on the graph's device.
    var flat = TileTensor[mut=True, dtype, Rows1[size], MutAnyOrigin](
        ptr, row_major[size]()
    )
    comptime if target == "gpu":
        ctx.enqueue_function[fill_kernel[size, dtype]](
            flat,
            value,
            grid_dim=(size + FILL_BLOCK - 1) // FILL_BLOCK,
            block_dim=FILL_BLOCK,
        )
    else:
        for i in range(size):
            flat[i] = value


def halve_kernel[size: Int, dtype: DType](
    buffer: TileTensor[mut=True, dtype, Rows1[size], MutAnyOrigin],
):
    # Halve every element of a flat buffer.
    var i = Int(block_idx.x) * FILL_BLOCK + Int(thread_idx.x)
    if i < size:
        buffer[i] = buffer[i][0] * Scalar[dtype](0.5)


def halve[size: Int, dtype: DType](
    ptr: Pointer[Scalar[dtype], MutAnyOrigin], ctx: DeviceContext
) raises:
    # Halve `size` elements from `ptr` on the GPU.
    var flat = TileTensor[mut=True, dtype, Rows1[size], MutAnyOrigin](
        ptr, row_major[size]()
    )
    ctx.enqueue_function[halve_kernel[size, dtype]](
        flat,
        grid_dim=(size + FILL_BLOCK - 1) // FILL_BLOCK,
        block_dim=FILL_BLOCK,
    )


@extensibility.register("layernorm_linear_backward")
struct LayerNormLinearBackwardOp:
    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        batch: Int,
        seq: Int,
        hidden: Int,
        out_dim: Int,
        dtype: DType = DType.float32,
    ](
        # Outputs first, in the order of the graph's out_types...
        output: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        grad_input: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        grad_ln_weight: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        grad_ln_bias: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        grad_weight: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        grad_bias: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        # ...then the inputs, in the order of the graph's values.
        x: InputTensor[dtype=dtype, rank=3, static_spec=_],
        ln_weight: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ln_bias: InputTensor[dtype=dtype, rank=1, static_spec=_],
        weight: InputTensor[dtype=dtype, rank=2, static_spec=_],
        bias: InputTensor[dtype=dtype, rank=1, static_spec=_],
        grad_output: InputTensor[dtype=dtype, rank=3, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        # y and grad_input are written element by element by the kernel:
        # NaN makes any element it forgets show up.
        fill[batch * seq * out_dim, dtype, target](
            output.unsafe_ptr(), nan[dtype](), ctx
        )
        fill[batch * seq * hidden, dtype, target](
            grad_input.unsafe_ptr(), nan[dtype](), ctx
        )
        # The parameter gradients are sums over all positions, built up with
        # adds: they must start at zero, and the zeroing must be finished
        # before the first block adds. Doing it here, on the same stream and
        # before the launch, guarantees that; no block of the kernel could.
        fill[hidden, dtype, target](grad_ln_weight.unsafe_ptr(), 0, ctx)
        fill[hidden, dtype, target](grad_ln_bias.unsafe_ptr(), 0, ctx)
        fill[out_dim * hidden, dtype, target](grad_weight.unsafe_ptr(), 0, ctx)
        fill[out_dim, dtype, target](grad_bias.unsafe_ptr(), 0, ctx)

        var output_t = TileTensor[mut=True, dtype, Rows3[batch, seq, out_dim], MutAnyOrigin](
            output.unsafe_ptr(), row_major[batch, seq, out_dim]()
        )
        var grad_input_t = TileTensor[mut=True, dtype, Rows3[batch, seq, hidden], MutAnyOrigin](
            grad_input.unsafe_ptr(), row_major[batch, seq, hidden]()
        )
        var grad_ln_weight_t = TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin](
            grad_ln_weight.unsafe_ptr(), row_major[hidden]()
        )
        var grad_ln_bias_t = TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin](
            grad_ln_bias.unsafe_ptr(), row_major[hidden]()
        )
        var grad_weight_t = TileTensor[mut=True, dtype, Rows2[out_dim, hidden], MutAnyOrigin](
            grad_weight.unsafe_ptr(), row_major[out_dim, hidden]()
        )
        var grad_bias_t = TileTensor[mut=True, dtype, Rows1[out_dim], MutAnyOrigin](
            grad_bias.unsafe_ptr(), row_major[out_dim]()
        )
        var x_t = TileTensor[mut=False, dtype, Rows3[batch, seq, hidden], ImmutAnyOrigin](
            x.unsafe_ptr(), row_major[batch, seq, hidden]()
        )
        var ln_weight_t = TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin](
            ln_weight.unsafe_ptr(), row_major[hidden]()
        )
        var ln_bias_t = TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin](
            ln_bias.unsafe_ptr(), row_major[hidden]()
        )
        var weight_t = TileTensor[mut=False, dtype, Rows2[out_dim, hidden], ImmutAnyOrigin](
            weight.unsafe_ptr(), row_major[out_dim, hidden]()
        )
        var bias_t = TileTensor[mut=False, dtype, Rows1[out_dim], ImmutAnyOrigin](
            bias.unsafe_ptr(), row_major[out_dim]()
        )
        var grad_output_t = TileTensor[mut=False, dtype, Rows3[batch, seq, out_dim], ImmutAnyOrigin](
            grad_output.unsafe_ptr(), row_major[batch, seq, out_dim]()
        )

        comptime if target == "gpu":
            # The kernel runs twice on the once-zeroed gradients, and their sums
            # are halved afterwards. A correct kernel adds its shares twice and
            # lands on the same answer; a kernel that zeroes the gradients itself
            # (from block (0, 0), say) wipes out the first launch's shares, so the
            # check sees that race every time rather than once in a while.
            for _ in range(2):
                ctx.enqueue_function[
                    layernorm_linear_backward_gpu_kernel[batch, seq, hidden, out_dim, dtype]
                ](
                    output_t,
                    grad_input_t,
                    grad_ln_weight_t,
                    grad_ln_bias_t,
                    grad_weight_t,
                    grad_bias_t,
                    x_t,
                    ln_weight_t,
                    ln_bias_t,
                    weight_t,
                    bias_t,
                    grad_output_t,
                    grid_dim=(batch, seq),
                    block_dim=TPB,
                )
            halve[hidden, dtype](grad_ln_weight.unsafe_ptr(), ctx)
            halve[hidden, dtype](grad_ln_bias.unsafe_ptr(), ctx)
            halve[out_dim * hidden, dtype](grad_weight.unsafe_ptr(), ctx)
            halve[out_dim, dtype](grad_bias.unsafe_ptr(), ctx)
        else:
            layernorm_linear_backward_cpu_kernel[batch, seq, hidden, out_dim, dtype](
                output_t,
                grad_input_t,
                grad_ln_weight_t,
                grad_ln_bias_t,
                grad_weight_t,
                grad_bias_t,
                x_t,
                ln_weight_t,
                ln_bias_t,
                weight_t,
                bias_t,
                grad_output_t,
            )
