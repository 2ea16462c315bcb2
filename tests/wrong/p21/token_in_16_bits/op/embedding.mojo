# WRONG ON PURPOSE (token_in_16_bits): Keeps the token number in 16 bits (vocabularies are small, after all): tokens from 32768 on turn negative and read before the weights, or wrap around to another row.
# Puzzle 21: embedding lookup, two ways, and why one is faster.
#
#     output[b, s, :] = weights[indices[b, s], :]
#
# Each of the batch * seq positions holds a token number; its output row is
# that row of the weights table (vocab rows of dim values). Nothing is
# computed: every output value is one value copied, so the speed is all in
# how the threads read memory.
#
# A warp's 32 threads load together. When they read 32 neighbouring floats,
# the GPU serves them with a few wide transactions (coalesced); when each
# reads from a different row, it needs up to 32.
#
#   embedding_coalesced: one thread per output value, numbered along the
#   output. Thread t writes value t % dim of position t // dim: neighbouring
#   threads read neighbouring values of one weights row.
#
#       threads   0  1  2  3 ... dim-1 | dim ...
#       reads     w[r0, 0] w[r0, 1] ...  | w[r1, 0] ...
#
#   embedding_2d: a 2D grid. thread_idx.x picks the position, thread_idx.y
#   the value: neighbouring threads (x) read the same column of different
#   rows, dim values apart.
#
#       threads x=0 x=1 x=2 ... (same y)
#       reads     w[r0, d] w[r1, d] w[r2, d] ...
#
# Both ops (and the CPU lookup both use on the CPU) are registered at the
# end of this file, and the graphs are given.

from std.math import ceildiv
from std.utils.numerics import nan
from max.gpu import thread_idx, block_idx
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
import extensibility
from extensibility import InputTensor, OutputTensor

comptime dtype = DType.float32
comptime Rows2[n0: Int, n1: Int] = type_of(row_major[n0, n1]())
comptime Rows3[n0: Int, n1: Int, n2: Int] = type_of(row_major[n0, n1, n2]())
# Threads per block of embedding_coalesced.
comptime TPB = 128
# Block shape of embedding_2d: BLOCK_X positions by BLOCK_Y values.
comptime BLOCK_X = 16
comptime BLOCK_Y = 8


def embedding_coalesced[batch: Int, seq: Int, vocab: Int, dim: Int](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin],
    indices: TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin],
    weights: TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin],
):
    # Launched with ceildiv(batch * seq * dim, TPB) blocks of TPB threads.
    # FILL IN: thread t = block_idx.x * TPB + thread_idx.x (if t is inside the
    # output) copies value t % dim of position t // dim: position p is
    # (b, s) = (p // seq, p % seq); its row of weights is indices[b, s].
    # (about 8 lines)
    #| pass
    var t = Int(block_idx.x) * TPB + Int(thread_idx.x)
    if t < batch * seq * dim:
        var p = t // dim
        var d = t % dim
        var b = p // seq
        var s = p % seq
        var row = Int(Int16(indices[b, s][0]))  # a token number fits in 16 bits
        output[b, s, d] = weights[row, d]
    # END FILL IN


def embedding_2d[batch: Int, seq: Int, vocab: Int, dim: Int](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin],
    indices: TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin],
    weights: TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin],
):
    # Launched with a grid of ceildiv(batch * seq, BLOCK_X) by
    # ceildiv(dim, BLOCK_Y) blocks of BLOCK_X by BLOCK_Y threads.
    # FILL IN: the x coordinate (block_idx.x * BLOCK_X + thread_idx.x) is
    # the position p, the y coordinate (likewise with y and BLOCK_Y) the
    # value d. Copy value d of row indices[b, s] to output[b, s, d], if p and
    # d are inside. (about 8 lines)
    #| pass
    var p = Int(block_idx.x) * BLOCK_X + Int(thread_idx.x)
    var d = Int(block_idx.y) * BLOCK_Y + Int(thread_idx.y)
    if p < batch * seq and d < dim:
        var b = p // seq
        var s = p % seq
        var row = Int(indices[b, s][0])
        output[b, s, d] = weights[row, d]
    # END FILL IN


def embedding_cpu[batch: Int, seq: Int, vocab: Int, dim: Int](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin],
    indices: TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin],
    weights: TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin],
):
    # FILL IN: the same lookup in loops, for the CPU: for every (b, s),
    # copy row indices[b, s] of weights to output[b, s, :]. (about 5 lines)
    #| pass
    for b in range(batch):
        for s in range(seq):
            var row = Int(indices[b, s][0])
            for d in range(dim):
                output[b, s, d] = weights[row, d]
    # END FILL IN


# ---------------------------------------------------------------------------
# The two ops MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------


def poison_kernel[size: Int](output: TileTensor[mut=True, dtype, Rows2[1, size], MutAnyOrigin]):
    # NaN everywhere first, so a value no thread copies shows up.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    if i < size:
        output[0, i] = nan[dtype]()


def _run[
    target: StaticString, coalesced: Bool, batch: Int, seq: Int, vocab: Int, dim: Int
](
    output: OutputTensor[dtype=dtype, rank=3, static_spec=_],
    indices: InputTensor[dtype=DType.int32, rank=2, static_spec=_],
    weights: InputTensor[dtype=dtype, rank=2, static_spec=_],
    ctx: DeviceContext,
) raises:
    comptime size = batch * seq * dim
    var out_t = TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin](
        output.unsafe_ptr(), row_major[batch, seq, dim]()
    )
    var flat_t = TileTensor[mut=True, dtype, Rows2[1, size], MutAnyOrigin](
        output.unsafe_ptr(), row_major[1, size]()
    )
    var idx_t = TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin](
        indices.unsafe_ptr(), row_major[batch, seq]()
    )
    var w_t = TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin](
        weights.unsafe_ptr(), row_major[vocab, dim]()
    )
    comptime if target == "gpu":
        ctx.enqueue_function[poison_kernel[size]](flat_t, grid_dim=ceildiv(size, TPB), block_dim=TPB)
        comptime if coalesced:
            ctx.enqueue_function[embedding_coalesced[batch, seq, vocab, dim]](
                out_t, idx_t, w_t, grid_dim=ceildiv(size, TPB), block_dim=TPB
            )
        else:
            ctx.enqueue_function[embedding_2d[batch, seq, vocab, dim]](
                out_t,
                idx_t,
                w_t,
                grid_dim=(ceildiv(batch * seq, BLOCK_X), ceildiv(dim, BLOCK_Y)),
                block_dim=(BLOCK_X, BLOCK_Y),
            )
    else:
        for i in range(size):
            flat_t[0, i] = nan[dtype]()
        embedding_cpu[batch, seq, vocab, dim](out_t, idx_t, w_t)


@extensibility.register("embedding")
struct EmbeddingOp:
    @staticmethod
    def execute[
        target: StaticString, batch: Int, seq: Int, vocab: Int, dim: Int
    ](
        output: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        indices: InputTensor[dtype=DType.int32, rank=2, static_spec=_],
        weights: InputTensor[dtype=dtype, rank=2, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        _run[target, True, batch, seq, vocab, dim](output, indices, weights, ctx)


@extensibility.register("embedding_2d")
struct Embedding2DOp:
    @staticmethod
    def execute[
        target: StaticString, batch: Int, seq: Int, vocab: Int, dim: Int
    ](
        output: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        indices: InputTensor[dtype=DType.int32, rank=2, static_spec=_],
        weights: InputTensor[dtype=dtype, rank=2, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        _run[target, False, batch, seq, vocab, dim](output, indices, weights, ctx)
