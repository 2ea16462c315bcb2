# WRONG ON PURPOSE (partial_only_if_not_zero): Thread 0 writes the block's sum only when it is not 0, as if partial held 0 already: a block whose products are all 0 leaves its slot of partial as the launch found it.
# Puzzle 12: dot product. A tree reduction in shared memory, in two steps.
#
#     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#
# Step 1, `partial_dots`: `blocks` = ceildiv(size, TPB) blocks of TPB
# threads. Each thread puts one product in shared memory (0 past the end of
# the data), then the block folds its TPB slots in half, again and again,
# until slot 0 holds the block's sum. Drawn with TPB = 8 ([k] is slot k as
# the row above left it):
#
#     slot       0        1        2       3       4    5    6    7
#     start      p0       p1       p2      p3      p4   p5   p6   p7
#     stride 4   p0+p4    p1+p5    p2+p6   p3+p7        threads 0..3 add
#     stride 2   [0]+[2]  [1]+[3]                       threads 0..1 add
#     stride 1   [0]+[1]                                thread 0 adds
#                   |
#                   v
#     partial[block_idx.x] = p0 + p1 + ... + p7
#
# barrier() waits for the threads of ONE block only: no block can wait for
# another. That is why there is a step 2.
#
# Step 2, `add_partials`: launched after step 1 has finished in every block,
# with one block of one thread, which adds the per-block sums into output[0].

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block in step 1 (a power of two, so that it halves down to 1).
comptime TPB = 128


def partial_dots[size: Int, blocks: Int](
    partial: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    var i = block_idx.x * TPB + t  # this thread's element
    var products = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB]())

    # FILL IN: thread t stores a[i] * b[i] in products[t], or 0 if i is past
    # the end, so that every one of the TPB slots holds a number. Then wait
    # for the whole block. (about 5 lines)
    #| pass
    if i < size:
        products[t] = a[i] * b[i]
    else:
        products[t] = 0
    barrier()
    # END FILL IN

    # FILL IN: the tree. Start with stride = TPB // 2; while stride > 0, the
    # threads t < stride add products[t + stride] into products[t], every
    # thread waits, and the stride halves. (about 6 lines)
    #| pass
    var stride = TPB // 2
    while stride > 0:
        if t < stride:
            products[t] += products[t + stride]
        barrier()
        stride //= 2
    # END FILL IN

    # FILL IN: thread 0 writes the block's sum to partial[block_idx.x].
    # (2 lines)
    #| pass
    if t == 0 and products[0][0] != 0:
        partial[block_idx.x] = products[0]
    # END FILL IN


def add_partials[blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
):
    # FILL IN: the only thread adds partial[0], ..., partial[blocks - 1]
    # and writes the total to output[0]. (about 4 lines)
    #| pass
    var total: Scalar[dtype] = 0
    for k in range(blocks):
        total += partial[k]
    output[0] = total
    # END FILL IN
