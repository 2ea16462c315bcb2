# WRONG ON PURPOSE (shared_a_without_halo): Part blocks: shared_a has TPB slots, none for the halo: the halo's writes and the last threads' reads run past its end, where a GPU keeps the next array, shared_b.
# Puzzle 13: 1D convolution, first in one block, then across many blocks.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + a[i+2]*b[2] + a[i+3]*b[3]
#
# b is the kernel, CONV = 4 weights, slid along a. A term whose a[i + j] lies
# past the end of a is left out (it counts as 0).
#
# Part `simple`, conv1d_simple: one block of TPB threads, size <= TPB.
# Thread i copies a[i] (and thread j < CONV copies b[j]) into shared memory;
# after a barrier, thread i multiplies its window by the weights:
#
#     shared_a   a0  a1  a2  a3  a4  a5  a6
#                        |   |   |   |
#                       *b0 *b1 *b2 *b3      -> output[2]
#     output[5] = a5*b0 + a6*b1               (a7, a8 don't exist)
#
# Part `blocks`, conv1d_blocks: ceildiv(size, TPB) blocks. The last CONV - 1
# threads of a block need elements of the NEXT block: its halo. Each block
# copies TPB + CONV - 1 elements: its own, then the halo. Block 0, drawn with
# TPB = 8:
#
#     a          a0 a1 a2 a3 a4 a5 a6 a7 | a8 a9 a10 | a11 ...
#                \______ block 0 ______/  \__ halo __/
#     shared_a   slot 0  ...          7     8  9  10
#
#     thread 6:  output[6] = a6*b0 + a7*b1 + a8*b2 + a9*b3
#                                            (slots 8 and 9: the halo)
#
# Where the halo or the block runs past the end of a, its slots hold 0.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block.
comptime TPB = 64
# The number of weights in b.
comptime CONV = 4


# ---------------------------------------------------------------------------
# Part `simple`: one block.
# ---------------------------------------------------------------------------


def conv1d_simple[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[CONV], ImmutAnyOrigin],
):
    comptime assert size <= TPB, "part simple runs one block: size <= TPB"
    var i = thread_idx.x  # one block: the thread's number is its element
    var shared_a = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: thread i copies a[i] into shared_a[i] (only if i < size), and
    # the first CONV threads copy b[i] into shared_b[i]. (4 lines)
    #| pass
    if i < size:
        shared_a[i] = a[i]
    if i < CONV:
        shared_b[i] = b[i]
    # END FILL IN

    # FILL IN: wait for the whole block. Then, if i < size, add up
    # shared_a[i + j] * shared_b[j] for j = 0 .. CONV - 1, leaving out the j
    # where i + j >= size, and write the sum to output[i]. `comptime for j in
    # range(CONV):` writes the loop out at compile time. (about 7 lines)
    #| pass
    barrier()
    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            if i + j < size:
                total += shared_a[i + j] * shared_b[j]
        output[i] = total
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `blocks`: many blocks, each with a halo.
# ---------------------------------------------------------------------------


def conv1d_blocks[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[CONV], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    var first = block_idx.x * TPB  # the block's first element
    var i = first + t  # this thread's element
    # TPB slots for the block's own elements, then CONV - 1 for its halo.
    var shared_a = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: fill shared memory, with 0 for every element past the end of a:
    # - thread t: a[i] into shared_a[t];
    # - threads t < CONV - 1: the halo element a[first + TPB + t] into
    #   shared_a[TPB + t];
    # - threads t < CONV: b[t] into shared_b[t]. (about 12 lines)
    #| pass
    if i < size:
        shared_a[t] = a[i]
    else:
        shared_a[t] = 0
    if t < CONV - 1:
        var h = first + TPB + t
        if h < size:
            shared_a[TPB + t] = a[h]
        else:
            shared_a[TPB + t] = 0
    if t < CONV:
        shared_b[t] = b[t]
    # END FILL IN

    # FILL IN: wait for the whole block; then, if i < size, write
    # output[i] = the sum of shared_a[t + j] * shared_b[j] over all CONV
    # weights (the zeros take care of the end of a). (about 6 lines)
    #| pass
    barrier()
    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            total += shared_a[t + j] * shared_b[j]
        output[i] = total
    # END FILL IN
