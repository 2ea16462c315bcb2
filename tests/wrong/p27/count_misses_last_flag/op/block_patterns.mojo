# WRONG ON PURPOSE (count_misses_last_flag): Part prefix_sum: takes the count from the last thread's exclusive prefix, which leaves out the last thread's own flag: when the last value matches, the count is one short and a zero of the tail lands on the last match.
# Puzzle 27: block-wide patterns.
#
# The threads of one block talk to each other in three basic ways:
#
#   all -> one    every thread gives a value, one thread gets the total
#                 (a reduction: block.sum)
#   all -> each   every thread gives a value, every thread gets the total
#                 of the threads before it (a scan: block.prefix_sum)
#   one -> all    one thread gives a value, every thread gets a copy
#                 (block.broadcast)
#
# Each primitive hides a whole shared-memory tree with its barrier() calls:
# you hand it one value per thread and get the answer back, already
# synchronized. There is one rule to keep: EVERY thread of the block must
# reach the call. Never put a block primitive inside an `if` that only some
# threads enter.
#
# Three kernels, one per part, each over SIZE values with one block of TPB
# threads (one thread per element):
#   1. block_dot_kernel        (part `sum`)        all -> one
#   2. block_bin_pack_kernel   (part `prefix_sum`) all -> each
#   3. block_normalize_kernel  (part `broadcast`)  all -> one -> all
# The three ops at the bottom of the file are written for you.

from std.math import floor
from std.utils.numerics import nan
from max.gpu import thread_idx
from max.gpu.primitives import block
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
import extensibility
from extensibility import InputTensor, OutputTensor

comptime SIZE = 128
# One thread per element, so the block is exactly as wide as the data.
comptime TPB = SIZE
comptime dtype = DType.float32
# Part `prefix_sum` sorts values in [0, 1) into NUM_BINS equal bins.
comptime NUM_BINS = 8

comptime layout = row_major[SIZE]()
comptime LayoutType = type_of(layout)
# A one-element tensor: a single result (the dot product, the count) or a
# single input (the target bin).
comptime scalar_layout = row_major[1]()
comptime ScalarLayoutType = type_of(scalar_layout)


# ---------------------------------------------------------------------------
# Part `sum`: all -> one.
# ---------------------------------------------------------------------------


def block_dot_kernel(
    dot: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
    a: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    var i = Int(thread_idx.x)

    # FILL IN: each thread multiplies its pair a[i] * b[i]; one call to
    # block.sum (broadcast=False: only thread 0 needs the total) adds the
    # 128 products; thread 0 writes the total to dot[0]. (about 5 lines)
    #| _ = i
    var product = a[i][0] * b[i][0]
    # Every thread calls block.sum, even though only thread 0 will use the
    # result: the primitive needs the whole block to take part.
    var total = block.sum[block_size=TPB, broadcast=False](product)
    if i == 0:
        dot[0] = total
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `prefix_sum`: all -> each.
# ---------------------------------------------------------------------------


def block_bin_pack_kernel(
    packed: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    count: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
    x: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
    target_bin: TileTensor[mut=False, DType.int32, ScalarLayoutType, ImmutAnyOrigin],
):
    var i = Int(thread_idx.x)
    var value = x[i][0]
    # Every thread reads the same target bin from the one-element input.
    var target = Int(target_bin[0][0])

    # FILL IN: step 1, find this thread's bin: floor(value * NUM_BINS),
    # clamped to 0..NUM_BINS-1. Then make a flag: Int32(1) if the bin is the
    # target bin, Int32(0) otherwise. (about 4 lines)
    #| var flag = Int32(0)
    #| _ = value
    #| _ = target
    var value_bin = Int(floor(value * Scalar[dtype](NUM_BINS)))
    # Clamp, so a value at (or rounding onto) an edge still lands in a bin.
    value_bin = min(max(value_bin, 0), NUM_BINS - 1)
    var flag = Int32(1) if value_bin == target else Int32(0)
    # END FILL IN

    # FILL IN: step 2, pack the matches. An EXCLUSIVE block.prefix_sum of
    # the flags tells each matching thread how many matches come before it:
    # that is its slot in `packed`. block.sum of the flags (broadcast=True)
    # tells every thread how many matches there are. Matching threads write
    # their value to packed[slot]; thread i writes 0 to packed[i] when
    # i >= the count (the unused tail); thread 0 writes the count to
    # count[0] as a float. (about 9 lines)
    #| _ = flag
    var slot = block.prefix_sum[block_size=TPB, exclusive=True](flag)
    var matches = block.broadcast[block_size=TPB](val=SIMD[DType.int32, 1](slot), src_thread=TPB - 1)[0]
    # Each position of `packed` is written by exactly one thread: slots
    # 0..matches-1 by the matching threads (the scan makes the slots
    # distinct, and keeps the original order), the rest by thread i itself.
    # No two threads write the same place, so no barrier is needed.
    if flag == 1:
        packed[Int(slot)] = value
    if i >= Int(matches):
        packed[i] = 0
    if i == 0:
        count[0] = Scalar[dtype](matches)
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `broadcast`: all -> one -> all.
# ---------------------------------------------------------------------------


def block_normalize_kernel(
    normalized: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    x: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    var i = Int(thread_idx.x)
    var value = x[i][0]

    # FILL IN: block.sum with broadcast=False brings the total to thread 0;
    # thread 0 alone computes mean = total / SIZE; block.broadcast (from
    # src_thread=0) hands the mean to every thread; each thread writes
    # value / mean. (about 7 lines)
    #| _ = value
    var total = block.sum[block_size=TPB, broadcast=False](value)
    # Only thread 0 holds the real total, so only thread 0 computes the mean.
    # The others keep a placeholder that the broadcast below overwrites.
    var mean = Scalar[dtype](1)
    if i == 0:
        mean = total / Scalar[dtype](SIZE)
    # One -> all: thread 0's mean, copied to every thread.
    var block_mean = block.broadcast[block_size=TPB](
        val=SIMD[dtype, 1](mean), src_thread=0
    )
    normalized[i] = value / block_mean[0]
    # END FILL IN


# ---------------------------------------------------------------------------
# The ops MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------


def poison_vector_kernel(
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
):
    # Fill a SIZE-element output with NaN, so a forgotten element shows up.
    var i = Int(thread_idx.x)
    if i < SIZE:
        output[i] = nan[dtype]()


def poison_scalar_kernel(
    output: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
):
    # Fill a one-element output with NaN.
    if thread_idx.x == 0:
        output[0] = nan[dtype]()


@extensibility.register("block_dot")
struct BlockDotOp:
    # Part `sum`: dot = sum(a * b). Runs on a GPU only.

    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        target: StaticString,
    ](
        dot: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        a: InputTensor[dtype=dtype, rank=1, static_spec=_],
        b: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        comptime if target == "gpu":
            var dot_t = TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin](
                dot.unsafe_ptr(), scalar_layout
            )
            var a_t = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
                a.unsafe_ptr(), layout
            )
            var b_t = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
                b.unsafe_ptr(), layout
            )
            ctx.enqueue_function[poison_scalar_kernel](
                dot_t, grid_dim=1, block_dim=1
            )
            ctx.enqueue_function[block_dot_kernel](
                dot_t, a_t, b_t, grid_dim=1, block_dim=TPB
            )
        else:
            raise Error("block_dot: this part runs on a GPU only")


@extensibility.register("block_bin_pack")
struct BlockBinPackOp:
    # Part `prefix_sum`: pack the values of one bin, in order. GPU only.

    @staticmethod
    def execute[
        target: StaticString,
    ](
        packed: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        count: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        x: InputTensor[dtype=dtype, rank=1, static_spec=_],
        target_bin: InputTensor[dtype=DType.int32, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        comptime if target == "gpu":
            var packed_t = TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin](
                packed.unsafe_ptr(), layout
            )
            var count_t = TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin](
                count.unsafe_ptr(), scalar_layout
            )
            var x_t = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
                x.unsafe_ptr(), layout
            )
            var bin_t = TileTensor[
                mut=False, DType.int32, ScalarLayoutType, ImmutAnyOrigin
            ](target_bin.unsafe_ptr(), scalar_layout)
            ctx.enqueue_function[poison_vector_kernel](
                packed_t, grid_dim=1, block_dim=TPB
            )
            ctx.enqueue_function[poison_scalar_kernel](
                count_t, grid_dim=1, block_dim=1
            )
            ctx.enqueue_function[block_bin_pack_kernel](
                packed_t, count_t, x_t, bin_t, grid_dim=1, block_dim=TPB
            )
        else:
            raise Error("block_bin_pack: this part runs on a GPU only")


@extensibility.register("block_normalize")
struct BlockNormalizeOp:
    # Part `broadcast`: normalized = x / mean(x). Runs on a GPU only.

    @staticmethod
    def execute[
        target: StaticString,
    ](
        normalized: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        x: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        comptime if target == "gpu":
            var out_t = TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin](
                normalized.unsafe_ptr(), layout
            )
            var x_t = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
                x.unsafe_ptr(), layout
            )
            ctx.enqueue_function[poison_vector_kernel](
                out_t, grid_dim=1, block_dim=TPB
            )
            ctx.enqueue_function[block_normalize_kernel](
                out_t, x_t, grid_dim=1, block_dim=TPB
            )
        else:
            raise Error("block_normalize: this part runs on a GPU only")
