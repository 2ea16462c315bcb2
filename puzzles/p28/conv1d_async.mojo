# Puzzle 28: 1D convolution whose input tile arrives by asynchronous copy.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+4]*b[4]
#
# This is p13's many-block convolution (CONV = 5 weights, terms past the end
# of a count as 0), with one change: a block's tile of a (its TPB elements and
# the CONV - 1 halo elements after them) is fetched with async_copy, which on
# the GPU runs in the background (cp.async), while the threads load the small
# kernel b the ordinary way. The copies then have to be waited for:
#
#     async_copy(a[i] -> shared_a[t])        issued: the copy is on its way
#     shared_b[t] = b[t]                     meanwhile: the weights
#     async_copy_wait_all()                  MY copies have landed
#     barrier()                              EVERYONE's copies have landed
#     ... read shared_a[t + j] ...
#
# The wait only covers the copies the calling thread issued; the barrier
# after it makes every thread's copies visible to the whole block. Reading
# shared_a before both gives whatever was there, or the new value, depending
# on when each copy lands.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace, async_copy, async_copy_wait_all
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block.
comptime TPB = 64
# The number of weights in b.
comptime CONV = 5
# Bytes one async_copy moves here: one float32.
comptime BYTES = 4


def conv1d_async[size: Int](
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
    ](row_major[TPB + CONV - 1]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: start the copies of the tile, with 0 in every slot past the end
    # of a (write those zeros directly, or copy with src_size=0, fill=0):
    # - thread t: a[i] into shared_a[t];
    # - threads t < CONV - 1: the halo element a[first + TPB + t] into
    #   shared_a[TPB + t].
    # One copy is async_copy[BYTES](src, dst), where src is a pointer into
    # global memory, (a.ptr + k).address_space_cast[AddressSpace.GLOBAL](),
    # and dst a pointer into shared memory, shared_a.ptr + slot.
    # (about 12 lines)
    pass

    # While the copies are on their way: the weights, the ordinary way.
    if t < CONV:
        shared_b[t] = b[t]

    # FILL IN: wait until this thread's copies have landed, then until every
    # thread of the block got that far. (2 lines)
    pass

    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            total += shared_a[t + j] * shared_b[j]
        output[i] = total
