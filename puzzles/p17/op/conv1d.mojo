# Puzzle 17: the 1D convolution of puzzle 13, packaged as a custom MAX op.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+conv-1]*b[conv-1]
#
# (a term whose a[i + j] lies past the end of a counts as 0). The kernels are
# written for you: conv1d_kernel is puzzle 13's many-block kernel with a halo,
# conv1d_cpu the same sum in two loops. What is left is what makes them an op:
#
#   1. conv1d_launch: the host code that sizes the grid and launches the GPU
#      kernel on the device context MAX hands the op;
#   2. the registration: MAX finds the op by the name on its struct;
#   3. execute: the function MAX calls. It is compiled once for the CPU and
#      once for the GPU (`target`), and must pick the code for each.

from std.math import ceildiv
from std.utils.numerics import nan
from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
import extensibility
from extensibility import InputTensor, OutputTensor

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: each block computes TPB outputs.
comptime TPB = 32


# ---------------------------------------------------------------------------
# Given: the GPU kernel and the CPU implementation.
# ---------------------------------------------------------------------------


def conv1d_kernel[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
):
    # Block k computes outputs k*TPB .. k*TPB + TPB - 1, so it needs TPB
    # elements of a and the conv - 1 after them (its halo). It expects
    # exactly TPB threads, and as many blocks as it takes to cover size.
    comptime assert conv >= 1 and conv - 1 <= TPB, "the halo is at most one thread each"
    var t = Int(thread_idx.x)
    var first = Int(block_idx.x) * TPB
    var shared_a = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB + conv - 1]()
    )
    var shared_b = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[conv]()
    )
    var mine: Scalar[dtype] = 0
    if first + t < size:
        mine = a[first + t][0]
    shared_a[t] = mine
    if t < conv - 1:
        var halo: Scalar[dtype] = 0
        if first + TPB + t < size:
            halo = a[first + TPB + t][0]
        shared_a[TPB + t] = halo
    var j = t
    while j < conv:
        shared_b[j] = b[j]
        j += TPB
    barrier()

    if first + t < size:
        var total: Scalar[dtype] = 0
        comptime for k in range(conv):
            total += shared_a[t + k][0] * shared_b[k][0]
        output[first + t] = total


def conv1d_cpu[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
):
    for i in range(size):
        var total: Scalar[dtype] = 0
        for k in range(conv):
            if i + k < size:
                total += a[i + k][0] * b[k][0]
        output[i] = total


def poison_kernel[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
):
    # NaN in every element, so one the launch forgets shows up.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    if i < size:
        output[i] = nan[dtype]()


# ---------------------------------------------------------------------------
# Yours: the launch, the registration, execute.
# ---------------------------------------------------------------------------


def conv1d_launch[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    # FILL IN: launch conv1d_kernel[size, conv] on ctx with output, a and b:
    # blocks of TPB threads, and enough blocks that every element of output
    # has a thread (the last block may be partly idle). (about 5 lines)
    pass


# FILL IN: register the struct below with MAX as the op "conv1d", the name
# the graph calls it by. (1 line)
struct Conv1DOp:
    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        size: Int,
        conv: Int,
    ](
        # Outputs first, then the inputs, in the graph's order.
        output: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        a: InputTensor[dtype=dtype, rank=1, static_spec=_],
        b: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        # MAX's tensors, seen as the TileTensors the kernels take.
        var out_t = TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin](
            output.unsafe_ptr(), row_major[size]()
        )
        var a_t = TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin](
            a.unsafe_ptr(), row_major[size]()
        )
        var b_t = TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin](
            b.unsafe_ptr(), row_major[conv]()
        )
        # The output starts as NaN on either device: an element nobody
        # writes shows up as wrong.
        comptime if target == "gpu":
            ctx.enqueue_function[poison_kernel[size]](
                out_t, grid_dim=ceildiv(size, TPB), block_dim=TPB
            )
        else:
            for i in range(size):
                out_t[i] = nan[dtype]()

        # FILL IN: on the GPU target, launch the kernel with conv1d_launch;
        # on the CPU target, call conv1d_cpu. `comptime if target == "gpu":`
        # keeps the GPU code out of the CPU build. (about 4 lines)
        pass
