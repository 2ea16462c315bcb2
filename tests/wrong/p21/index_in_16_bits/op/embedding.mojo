# WRONG ON PURPOSE (index_in_16_bits): the coalesced kernel keeps its thread number in 16 bits.
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
#ko 퍼즐 21: 임베딩 조회, 두 가지 방식, 그리고 한쪽이 더 빠른 이유.
#ko
#ko     output[b, s, :] = weights[indices[b, s], :]
#ko
#ko batch * seq개 위치마다 토큰 번호가 있고, 그 위치의 출력 행은 가중치
#ko 표(vocab행, 행마다 값 dim개)의 그 행입니다. 계산은 없습니다. 출력 값
#ko 하나는 값 하나를 복사한 것이라, 속도는 전부 스레드가 메모리를 읽는
#ko 방식에 달려 있습니다.
#ko
#ko 워프의 스레드 32개는 함께 읽습니다. 이웃한 float 32개를 읽으면 GPU는
#ko 넓은 트랜잭션 몇 번으로 처리하고(병합, coalesced), 저마다 다른 행을
#ko 읽으면 많게는 32번이 필요합니다.
#ko
#ko   embedding_coalesced: 출력 값마다 스레드 하나, 출력을 따라 번호를
#ko   매깁니다. 스레드 t는 위치 t // dim의 값 t % dim을 씁니다. 이웃한
#ko   스레드가 가중치 한 행의 이웃한 값을 읽습니다.
#ko
#ko       스레드    0  1  2  3 ... dim-1 | dim ...
#ko       읽는 값   w[r0, 0] w[r0, 1] ...  | w[r1, 0] ...
#ko
#ko   embedding_2d: 2D 그리드. thread_idx.x가 위치를, thread_idx.y가 값을
#ko   고릅니다. 이웃한 스레드(x)는 서로 다른 행의 같은 열을, dim개씩
#ko   떨어진 값을 읽습니다.
#ko
#ko       스레드    x=0 x=1 x=2 ... (y는 같음)
#ko       읽는 값   w[r0, d] w[r1, d] w[r2, d] ...
#ko
#ko 두 연산(그리고 두 연산이 CPU에서 함께 쓰는 CPU 조회)은 이 파일 끝에
#ko 등록되어 있고, 그래프는 주어집니다.

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
#ko embedding_coalesced의 블록당 스레드 수.
comptime TPB = 128
# Block shape of embedding_2d: BLOCK_X positions by BLOCK_Y values.
#ko embedding_2d의 블록 모양: 위치 BLOCK_X개 × 값 BLOCK_Y개.
comptime BLOCK_X = 16
comptime BLOCK_Y = 8


def embedding_coalesced[batch: Int, seq: Int, vocab: Int, dim: Int](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin],
    indices: TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin],
    weights: TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin],
):
    # Launched with ceildiv(batch * seq * dim, TPB) blocks of TPB threads.
    #ko 스레드 TPB개짜리 블록 ceildiv(batch * seq * dim, TPB)개로 실행됩니다.
    # FILL IN: thread t = block_idx.x * TPB + thread_idx.x (if t is inside the
    # output) copies value t % dim of position t // dim: position p is
    # (b, s) = (p // seq, p % seq); its row of weights is indices[b, s].
    # (about 8 lines)
    #ko FILL IN: 스레드 t = block_idx.x * TPB + thread_idx.x는 (t가 출력
    #ko 안에 있으면) 위치 t // dim의 값 t % dim을 복사합니다. 위치 p는
    #ko (b, s) = (p // seq, p % seq)이고, 그 위치의 가중치 행은
    #ko indices[b, s]입니다. (8줄 정도)
    #| pass
    var t = Int(UInt16(Int(block_idx.x) * TPB + Int(thread_idx.x)))  # 16 bits are plenty
    if t < batch * seq * dim:
        var p = t // dim
        var d = t % dim
        var b = p // seq
        var s = p % seq
        var row = Int(indices[b, s][0])
        output[b, s, d] = weights[row, d]
    # END FILL IN


def embedding_2d[batch: Int, seq: Int, vocab: Int, dim: Int](
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, dim], MutAnyOrigin],
    indices: TileTensor[mut=False, DType.int32, Rows2[batch, seq], ImmutAnyOrigin],
    weights: TileTensor[mut=False, dtype, Rows2[vocab, dim], ImmutAnyOrigin],
):
    # Launched with a grid of ceildiv(batch * seq, BLOCK_X) by
    # ceildiv(dim, BLOCK_Y) blocks of BLOCK_X by BLOCK_Y threads.
    #ko 스레드 BLOCK_X × BLOCK_Y개짜리 블록을 ceildiv(batch * seq, BLOCK_X)
    #ko × ceildiv(dim, BLOCK_Y)개 놓은 그리드로 실행됩니다.
    # FILL IN: the x coordinate (block_idx.x * BLOCK_X + thread_idx.x) is
    # the position p, the y coordinate (likewise with y and BLOCK_Y) the
    # value d. Copy value d of row indices[b, s] to output[b, s, d], if p and
    # d are inside. (about 8 lines)
    #ko FILL IN: x 좌표(block_idx.x * BLOCK_X + thread_idx.x)는 위치 p,
    #ko y 좌표(y와 BLOCK_Y로 마찬가지)는 값 d입니다. p와 d가 안쪽이면
    #ko indices[b, s] 행의 값 d를 output[b, s, d]에 복사합니다. (8줄 정도)
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
    #ko FILL IN: 같은 조회를 CPU용 반복문으로: 모든 (b, s)에 대해 weights의
    #ko indices[b, s] 행을 output[b, s, :]에 복사합니다. (5줄 정도)
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
#ko MAX가 호출하는 두 연산: 이 줄 아래로는 채울 것이 없습니다.


def poison_kernel[size: Int](output: TileTensor[mut=True, dtype, Rows2[1, size], MutAnyOrigin]):
    # NaN everywhere first, so a value no thread copies shows up.
    #ko 먼저 모든 곳에 NaN을 넣어, 어떤 스레드도 복사하지 않은 값이 드러나게 합니다.
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
