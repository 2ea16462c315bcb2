# A RIGHT KERNEL WRITTEN ANOTHER WAY (scale_in_transpose): the transpose writes K^T / sqrt(d), and softmax_row gets a scale of 1.
# Puzzle 19: attention for one query, as one custom op built from kernels
# launched back to back.
#
#     output = softmax(scale * q . K^T) . V        scale = 1 / sqrt(d)
#
# q is one query of d values; K and V hold seq keys and seq values, one per
# row (seq x d). The score of key j is q . K[j], the dot product; softmax
# turns the seq scores into weights that add up to 1, and the output is the
# weighted sum of the rows of V. Four launches, in order:
#
#   1. K^T = transpose(K)                 seq x d  ->  d x seq    (yours)
#   2. scores = q . K^T                   (1 x d) . (d x seq) = 1 x seq
#   3. weights = softmax(scale * scores)  1 x seq
#   4. output = weights . V               (1 x seq) . (seq x d) = 1 x d
#
# matmul_tiled (steps 2 and 4) and softmax_row (step 3) are given. You write
# the transpose kernel, and attention_launch: the host code that sizes each
# launch's grid and enqueues the four steps.
#ko 퍼즐 19: 쿼리 하나의 어텐션. 차례로 실행하는 커널들로 만든 커스텀 연산
#ko 하나.
#ko
#ko     output = softmax(scale * q . K^T) . V        scale = 1 / sqrt(d)
#ko
#ko q는 값 d개인 쿼리 하나이고, K와 V에는 키 seq개와 값 seq개가 행마다
#ko 하나씩 있습니다(seq x d). 키 j의 점수는 내적 q . K[j]입니다. softmax는
#ko 점수 seq개를 합이 1인 가중치로 바꾸고, 출력은 V의 행들의 가중합입니다.
#ko 실행은 넷, 이 순서로:
#ko
#ko   1. K^T = transpose(K)                 seq x d  ->  d x seq    (여러분 몫)
#ko   2. scores = q . K^T                   (1 x d) . (d x seq) = 1 x seq
#ko   3. weights = softmax(scale * scores)  1 x seq
#ko   4. output = weights . V               (1 x seq) . (seq x d) = 1 x d
#ko
#ko matmul_tiled(2, 4단계)와 softmax_row(3단계)는 주어집니다. 여러분은 전치
#ko 커널과 attention_launch를 작성합니다. attention_launch는 실행마다
#ko 그리드 크기를 정하고 네 단계를 큐에 넣는 호스트 코드입니다.

from std.math import ceildiv, exp, sqrt
from std.utils.numerics import min_finite, nan
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
# The type of a rows x cols matrix laid out row after row.
#ko 행 다음에 행이 놓인 rows x cols 행렬의 타입.
comptime Rows2[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# Tiles of the transpose and the matmul: blocks of TILE x TILE threads.
#ko 전치와 행렬곱의 타일: 스레드 TILE x TILE개짜리 블록.
comptime TILE = 8
# Threads of softmax_row's one block.
#ko softmax_row의 블록 하나에 든 스레드 수.
comptime SOFTMAX_TPB = 128


def transpose_kernel[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Rows2[cols, rows], MutAnyOrigin],
    input: TileTensor[mut=False, dtype, Rows2[rows, cols], ImmutAnyOrigin],
):
    # Block (bx, by) moves the TILE x TILE tile of input whose first row is
    # by * TILE and first column bx * TILE. Reading a tile row by row and
    # writing it row by row as well keeps both sides coalesced; the turn
    # happens in shared memory.
    #
    #   input (rows x cols)            output (cols x rows)
    #   row by*T+ty, col bx*T+tx  ->   row bx*T+ty, col by*T+tx
    #   tile[ty, tx] = input[...]      output[...] = tile[tx, ty]
    #ko 블록 (bx, by)는 첫 행이 by * TILE, 첫 열이 bx * TILE인 input의
    #ko TILE x TILE 타일을 옮깁니다. 타일을 행 단위로 읽고 행 단위로 쓰면
    #ko 양쪽이 모두 병합되고, 방향 바꾸기는 공유 메모리에서 일어납니다.
    #ko
    #ko   input (rows x cols)            output (cols x rows)
    #ko   행 by*T+ty, 열 bx*T+tx    ->   행 bx*T+ty, 열 by*T+tx
    #ko   tile[ty, tx] = input[...]      output[...] = tile[tx, ty]
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TILE, TILE]()
    )
    var tx = Int(thread_idx.x)
    var ty = Int(thread_idx.y)
    var bx = Int(block_idx.x)
    var by = Int(block_idx.y)
    # FILL IN: copy input[by*TILE + ty, bx*TILE + tx] into tile[ty, tx]
    # (only inside input), wait for the whole tile, then write tile[tx, ty]
    # to output[bx*TILE + ty, by*TILE + tx] (only inside output).
    # (about 8 lines)
    #ko FILL IN: input[by*TILE + ty, bx*TILE + tx]를 tile[ty, tx]에
    #ko 복사하고(input 안쪽만), 타일 전체를 기다린 다음, tile[tx, ty]를
    #ko output[bx*TILE + ty, by*TILE + tx]에 씁니다(output 안쪽만).
    #ko (8줄 정도)
    #| pass
    var row = by * TILE + ty
    var col = bx * TILE + tx
    if row < rows and col < cols:
        tile[ty, tx] = input[row, col]
    barrier()
    var out_row = bx * TILE + ty
    var out_col = by * TILE + tx
    if out_row < cols and out_col < rows:
        # The scale 1 / sqrt(d) (d = cols) comes with the transpose: K^T / sqrt(d).
        output[out_row, out_col] = tile[tx, ty] * Scalar[dtype](1.0 / sqrt(Float64(cols)))
    # END FILL IN


# ---------------------------------------------------------------------------
# Given: the tiled matmul, the softmax of one row, and the CPU version.
# ---------------------------------------------------------------------------
#ko 주어진 것: 타일 행렬곱, 한 행의 소프트맥스, CPU 버전.


def matmul_tiled[m: Int, k: Int, n: Int](
    c: TileTensor[mut=True, dtype, Rows2[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Rows2[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Rows2[k, n], ImmutAnyOrigin],
):
    # c = a . b. Blocks of TILE x TILE threads; block (bx, by) computes the
    # tile of c at rows by*TILE.., columns bx*TILE..: a grid of
    # (ceildiv(n, TILE), ceildiv(m, TILE)) blocks covers c.
    #ko c = a . b. 스레드 TILE x TILE개짜리 블록. 블록 (bx, by)는 c의 행
    #ko by*TILE.., 열 bx*TILE..의 타일을 계산합니다. (ceildiv(n, TILE),
    #ko ceildiv(m, TILE))개 블록의 그리드가 c를 덮습니다.
    var a_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TILE, TILE]()
    )
    var b_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TILE, TILE]()
    )
    var tx = Int(thread_idx.x)
    var ty = Int(thread_idx.y)
    var row = Int(block_idx.y) * TILE + ty
    var col = Int(block_idx.x) * TILE + tx
    var total: Scalar[dtype] = 0
    for t in range(ceildiv(k, TILE)):
        var a_value: Scalar[dtype] = 0
        if row < m and t * TILE + tx < k:
            a_value = a[row, t * TILE + tx][0]
        a_tile[ty, tx] = a_value
        var b_value: Scalar[dtype] = 0
        if t * TILE + ty < k and col < n:
            b_value = b[t * TILE + ty, col][0]
        b_tile[ty, tx] = b_value
        barrier()
        for j in range(TILE):
            total += a_tile[ty, j][0] * b_tile[j, tx][0]
        barrier()
    if row < m and col < n:
        c[row, col] = total


def softmax_row[n: Int](
    output: TileTensor[mut=True, dtype, Rows2[1, n], MutAnyOrigin],
    input: TileTensor[mut=False, dtype, Rows2[1, n], ImmutAnyOrigin],
    scale: Scalar[dtype],
):
    # output = softmax(scale * input), over the row's n values. One block of
    # SOFTMAX_TPB threads, each taking every SOFTMAX_TPB-th value.
    #ko output = softmax(scale * input), 행의 값 n개에 대해. 스레드
    #ko SOFTMAX_TPB개짜리 블록 하나이고, 스레드마다 SOFTMAX_TPB번째 값마다
    #ko 하나씩 맡습니다.
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[SOFTMAX_TPB]()
    )
    var t = Int(thread_idx.x)
    var largest = min_finite[dtype]()
    var i = t
    while i < n:
        largest = max(largest, scale * input[0, i][0])
        i += SOFTMAX_TPB
    shared[t] = largest
    barrier()
    var stride = SOFTMAX_TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] = max(shared[t], shared[t + stride])
        barrier()
        stride //= 2
    var block_max = shared[0][0]
    barrier()
    var total: Scalar[dtype] = 0
    i = t
    while i < n:
        total += exp(scale * input[0, i][0] - block_max)
        i += SOFTMAX_TPB
    shared[t] = total
    barrier()
    stride = SOFTMAX_TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] = shared[t] + shared[t + stride]
        barrier()
        stride //= 2
    var block_sum = shared[0][0]
    i = t
    while i < n:
        output[0, i] = exp(scale * input[0, i][0] - block_max) / block_sum
        i += SOFTMAX_TPB


def attention_cpu[seq: Int, d: Int](
    output: TileTensor[mut=True, dtype, Rows2[1, d], MutAnyOrigin],
    q: TileTensor[mut=False, dtype, Rows2[1, d], ImmutAnyOrigin],
    k: TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin],
    v: TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin],
):
    # The same four steps in loops, for the CPU target.
    #ko 같은 네 단계를 반복문으로, CPU 대상용.
    var scale = Scalar[dtype](1.0 / sqrt(Float64(d)))
    var scores = List[Scalar[dtype]](length=seq, fill=0)
    var largest = min_finite[dtype]()
    for j in range(seq):
        var dot: Scalar[dtype] = 0
        for e in range(d):
            dot += q[0, e][0] * k[j, e][0]
        scores[j] = scale * dot
        largest = max(largest, scores[j])
    var total: Scalar[dtype] = 0
    for j in range(seq):
        scores[j] = exp(scores[j] - largest)
        total += scores[j]
    for e in range(d):
        var acc: Scalar[dtype] = 0
        for j in range(seq):
            acc += scores[j] / total * v[j, e][0]
        output[0, e] = acc


# ---------------------------------------------------------------------------
# Yours: the glue.
# ---------------------------------------------------------------------------
#ko 여러분의 몫: 연결 코드.


def attention_launch[seq: Int, d: Int](
    output: TileTensor[mut=True, dtype, Rows2[1, d], MutAnyOrigin],
    q: TileTensor[mut=False, dtype, Rows2[1, d], ImmutAnyOrigin],
    k: TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin],
    v: TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin],
    # Scratch for the steps in between, allocated by the caller.
    #ko 중간 단계용 작업 공간. 호출하는 쪽이 할당합니다.
    k_t: TileTensor[mut=True, dtype, Rows2[d, seq], MutAnyOrigin],
    scores: TileTensor[mut=True, dtype, Rows2[1, seq], MutAnyOrigin],
    weights: TileTensor[mut=True, dtype, Rows2[1, seq], MutAnyOrigin],
    ctx: DeviceContext,
) raises:
    # A kernel reads a tensor as read-only: the same memory, seen that way.
    #ko 커널은 텐서를 읽기 전용으로 받습니다. 같은 메모리를 그렇게 봅니다.
    var k_t_in = TileTensor[mut=False, dtype, Rows2[d, seq], ImmutAnyOrigin](
        k_t.ptr, row_major[d, seq]()
    )
    var scores_in = TileTensor[mut=False, dtype, Rows2[1, seq], ImmutAnyOrigin](
        scores.ptr, row_major[1, seq]()
    )
    var weights_in = TileTensor[mut=False, dtype, Rows2[1, seq], ImmutAnyOrigin](
        weights.ptr, row_major[1, seq]()
    )
    # FILL IN: enqueue the four steps on ctx, in order, each with a grid
    # that covers its output and blocks of TILE x TILE threads (softmax_row:
    # one block of SOFTMAX_TPB threads):
    #   1. transpose_kernel[seq, d](k_t, k)
    #   2. matmul_tiled[1, d, seq](scores, q, k_t_in)
    #   3. softmax_row[seq](weights, scores_in, scale), scale = 1 / sqrt(d)
    #   4. matmul_tiled[1, seq, d](output, weights_in, v)
    # A grid of (x, y) blocks is written grid_dim=(x, y). (about 20 lines)
    #ko FILL IN: 네 단계를 이 순서로 ctx에 넣습니다. 각각 출력을 덮는
    #ko 그리드와 스레드 TILE x TILE개짜리 블록으로(softmax_row는 스레드
    #ko SOFTMAX_TPB개짜리 블록 하나):
    #ko   1. transpose_kernel[seq, d](k_t, k)
    #ko   2. matmul_tiled[1, d, seq](scores, q, k_t_in)
    #ko   3. softmax_row[seq](weights, scores_in, scale), scale = 1 / sqrt(d)
    #ko   4. matmul_tiled[1, seq, d](output, weights_in, v)
    #ko (x, y)개 블록의 그리드는 grid_dim=(x, y)로 씁니다. (20줄 정도)
    #| _ = k_t_in
    #| _ = scores_in
    #| _ = weights_in
    ctx.enqueue_function[transpose_kernel[seq, d]](
        k_t, k, grid_dim=(ceildiv(d, TILE), ceildiv(seq, TILE)), block_dim=(TILE, TILE)
    )
    ctx.enqueue_function[matmul_tiled[1, d, seq]](
        scores, q, k_t_in, grid_dim=(ceildiv(seq, TILE), 1), block_dim=(TILE, TILE)
    )
    # The scores are scaled already (the transpose scaled K^T).
    ctx.enqueue_function[softmax_row[seq]](
        weights, scores_in, Scalar[dtype](1), grid_dim=1, block_dim=SOFTMAX_TPB
    )
    ctx.enqueue_function[matmul_tiled[1, seq, d]](
        output, weights_in, v, grid_dim=(ceildiv(d, TILE), 1), block_dim=(TILE, TILE)
    )
    # END FILL IN


# ---------------------------------------------------------------------------
# The op MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------
#ko MAX가 호출하는 연산: 이 줄 아래로는 채울 것이 없습니다.


def poison_kernel[n: Int](output: TileTensor[mut=True, dtype, Rows2[1, n], MutAnyOrigin]):
    # NaN first, so a value no step writes shows up.
    #ko 먼저 NaN을 넣어, 어느 단계도 쓰지 않은 값이 드러나게 합니다.
    var i = Int(block_idx.x) * SOFTMAX_TPB + Int(thread_idx.x)
    if i < n:
        output[0, i] = nan[dtype]()


@extensibility.register("attention")
struct AttentionOp:
    @staticmethod
    def execute[
        target: StaticString, seq: Int, d: Int
    ](
        # The answer, then the scratch the GPU steps pass along (the graph
        # returns only the answer), then the inputs.
        #ko 답, 그다음 GPU 단계들이 주고받는 작업 공간(그래프는 답만
        #ko 돌려줍니다), 그다음 입력.
        output: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        k_t: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        scores: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        weights: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        q: InputTensor[dtype=dtype, rank=2, static_spec=_],
        k: InputTensor[dtype=dtype, rank=2, static_spec=_],
        v: InputTensor[dtype=dtype, rank=2, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        var out_t = TileTensor[mut=True, dtype, Rows2[1, d], MutAnyOrigin](
            output.unsafe_ptr(), row_major[1, d]()
        )
        var q_t = TileTensor[mut=False, dtype, Rows2[1, d], ImmutAnyOrigin](
            q.unsafe_ptr(), row_major[1, d]()
        )
        var k_in = TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin](
            k.unsafe_ptr(), row_major[seq, d]()
        )
        var v_in = TileTensor[mut=False, dtype, Rows2[seq, d], ImmutAnyOrigin](
            v.unsafe_ptr(), row_major[seq, d]()
        )
        comptime if target == "gpu":
            ctx.enqueue_function[poison_kernel[d]](
                out_t, grid_dim=ceildiv(d, SOFTMAX_TPB), block_dim=SOFTMAX_TPB
            )
            attention_launch[seq, d](
                out_t,
                q_t,
                k_in,
                v_in,
                TileTensor[mut=True, dtype, Rows2[d, seq], MutAnyOrigin](
                    k_t.unsafe_ptr(), row_major[d, seq]()
                ),
                TileTensor[mut=True, dtype, Rows2[1, seq], MutAnyOrigin](
                    scores.unsafe_ptr(), row_major[1, seq]()
                ),
                TileTensor[mut=True, dtype, Rows2[1, seq], MutAnyOrigin](
                    weights.unsafe_ptr(), row_major[1, seq]()
                ),
                ctx,
            )
        else:
            for e in range(d):
                out_t[0, e] = nan[dtype]()
            attention_cpu[seq, d](out_t, q_t, k_in, v_in)
