# Puzzle 29: synchronisation. Two ways for the threads of a block to wait
# for each other.
#
# Part pipeline: one block, three jobs. The threads split into groups by
# their number, and each group does one stage of a sharpening filter on
# the block's tile of TILE values:
#
#     threads 0 .. 31      load     a (and one value either side) -> raw
#     threads 32 .. 95     compute  raw -> blurred
#     threads 96 .. 127    store    raw, blurred -> output
#
#     blurred[j] = (a[i-1] + 2*a[i] + a[i+1]) / 4        (i = first + j)
#     output[i]  = 2*a[i] - blurred[j]                    (values past the
#                                                          ends of a are 0)
#
# A group is smaller than the tile, so each thread of a group loops over
# the tile with the group's size as its stride. Between two stages, every
# thread of the block meets at a barrier(): the compute group may read raw
# only once the load group has filled it, and so on.
#
# Part stencil: one block runs `steps` steps of a smoothing stencil,
#
#     x[i] <- (x[i-1] + 2*x[i] + x[i+1]) / 4              (0 past the ends)
#
# in two shared buffers, reading one and writing the other, and swapping
# them every step. Between two steps the threads wait for each other with
# an mbarrier instead of barrier(): each thread arrives once it has written
# its value, and waits until the phase it arrived in has completed.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block, in both parts.
comptime TPB = 128
# Values of a each block of the pipeline handles.
comptime TILE = 256
# The pipeline's groups: threads [0, LOAD), [LOAD, LOAD + COMPUTE), and the rest.
comptime LOAD = 32
comptime COMPUTE = 64
comptime STORE = TPB - LOAD - COMPUTE


def pipeline[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x
    var first = block_idx.x * TILE  # the block's first value of a
    # raw[j + 1] holds a[first + j]; raw[0] and raw[TILE + 1] the values either
    # side of the tile (0 past the ends of a).
    var raw = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE + 2]())
    var blurred = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE]())

    # Stage 1, the load group: thread t of the group copies raw[t],
    # raw[t + LOAD], raw[t + 2 * LOAD], ...
    if t < LOAD:
        for j in range(t, TILE + 2, LOAD):
            var i = first - 1 + j
            if i >= 0 and i < size:
                raw[j] = a[i]
            else:
                raw[j] = 0

    # FILL IN: stage 2. Every thread of the block waits until raw is full;
    # then the compute group (threads LOAD .. LOAD + COMPUTE - 1) fills
    # blurred[j] for every j < TILE, its thread c = t - LOAD taking j = c,
    # c + COMPUTE, c + 2 * COMPUTE, ... (about 6 lines)
    pass

    # FILL IN: stage 3. Every thread waits until blurred is full; then the
    # store group (the last STORE threads) writes output[first + j] =
    # 2 * raw[j + 1] - blurred[j] for every j < TILE whose value lies inside
    # a, its thread s = t - LOAD - COMPUTE taking j = s, s + STORE, ...
    # (about 7 lines)
    pass


def stencil[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    steps: Int32,
):
    var t = thread_idx.x  # this thread's value: x[t], for t < size
    # Two buffers: step k reads buffer k % 2 and writes the other one.
    var buf = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2, TPB]())
    # The mbarrier: 8 bytes of shared memory that count arrivals.
    var bar = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())

    # FILL IN: one thread initialises the mbarrier for TPB arrivals a phase
    # (mbarrier_init(bar.ptr, TPB)); the threads with a value copy it into
    # buffer 0; then one barrier(), so that every thread sees both.
    # (about 5 lines)
    pass

    # FILL IN: `steps` steps. In step k, a thread with a value writes its new
    # value into buffer 1 - k % 2 from buffer k % 2 (a neighbour past the
    # ends counts as 0); then EVERY thread arrives (var token =
    # mbarrier_arrive(bar.ptr)) and spins until that phase has completed
    # (while not mbarrier_test_wait(bar.ptr, token): pass). After the last
    # step, write the values from the buffer that holds them.
    # (about 12 lines)
    pass
