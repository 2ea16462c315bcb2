# WRONG ON PURPOSE (shared_rows_of_tpb): the GPU kernel's shared rows xhat and dxhat have TPB slots, not hidden: a row wider than the block writes and reads past them.
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
#ko 퍼즐 22: LayerNorm + Linear를 합친 연산의 역전파.
#ko
#ko 순전파. x [batch, seq, hidden]의 위치 (b, s)마다:
#ko     mean    = sum_h x[h] / H
#ko     var     = sum_h (x[h] - mean)^2 / H
#ko     inv_std = 1 / sqrt(var + EPS)
#ko     xhat[h] = (x[h] - mean) * inv_std            정규화한 행
#ko     ln[h]   = ln_weight[h] * xhat[h] + ln_bias[h]  LayerNorm의 출력
#ko     y[o]    = bias[o] + sum_h weight[o, h] * ln[h]  Linear 층
#ko
#ko 역전파: grad_output = dL/dy가 주어지면, 이 연산은 dL/dx와 매개변수 네
#ko 개의 기울기를 돌려줍니다. y도 쓰므로, 다시 계산한 순전파 부분이
#ko 맞는지 워크북이 확인할 수 있습니다.
#ko
#ko 이 파일에는 세 부분이 있습니다:
#ko   1. layernorm_linear_backward_gpu_kernel: 위치마다 스레드 블록 하나
#ko      (grid = (batch, seq)). 블록의 스레드들이 행을 나눠 맡습니다;
#ko   2. layernorm_linear_backward_cpu_kernel: 같은 계산을 위치 하나씩
#ko      차례로;
#ko   3. LayerNormLinearBackwardOp: MAX가 호출하는 연산. 미리 작성되어
#ko      있습니다. 출력을 NaN으로 채우고, 기울기 누산기를 0으로 만들고,
#ko      그래프가 실행되는 장치에 맞는 커널을 실행합니다.

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
#ko 제곱근 안의 엡실론. PyTorch의 LayerNorm과 같습니다.
comptime EPS = 1e-5
# Threads per block. A row of `hidden` (or `out_dim`) values is shared out
# between them: thread t takes the indices t, t + TPB, t + 2 * TPB, ... so
# any size works, whether it is smaller or larger than the block.
#ko 블록당 스레드 수. `hidden`(또는 `out_dim`)개 값으로 된 행을 스레드들이
#ko 나눠 맡습니다: 스레드 t는 인덱스 t, t + TPB, t + 2 * TPB, ...를 맡으므로
#ko 크기가 블록보다 작든 크든 됩니다.
comptime TPB = 64

# Row-major layout types for tensors whose sizes are op parameters. The sizes
# are compile-time values, but they come from the graph (ops.custom
# parameters=...), so one op serves every shape the graph asks for.
#ko 크기가 연산의 매개변수인 텐서들의 행 우선(row-major) 레이아웃 타입.
#ko 크기는 컴파일 시점의 값이지만 그래프에서(ops.custom의 parameters=...)
#ko 오므로, 연산 하나가 그래프가 요구하는 모든 모양을 처리합니다.
comptime Rows1[n0: Int] = type_of(row_major[n0]())
comptime Rows2[n0: Int, n1: Int] = type_of(row_major[n0, n1]())
comptime Rows3[n0: Int, n1: Int, n2: Int] = type_of(row_major[n0, n1, n2]())


def layernorm_linear_backward_gpu_kernel[
    batch: Int, seq: Int, hidden: Int, out_dim: Int, dtype: DType
](
    # Outputs. `output` and `grad_input` arrive full of NaN: every element
    # must be written. The four parameter gradients arrive zeroed: every
    # block adds its position's share into them.
    #ko 출력. `output`과 `grad_input`은 NaN으로 가득 찬 채 들어오니 모든 원소를
    #ko 써야 합니다. 매개변수 기울기 네 개는 0으로 들어오며, 블록마다 자기
    #ko 위치의 몫을 더해 넣습니다.
    output: TileTensor[mut=True, dtype, Rows3[batch, seq, out_dim], MutAnyOrigin],
    grad_input: TileTensor[mut=True, dtype, Rows3[batch, seq, hidden], MutAnyOrigin],
    grad_ln_weight: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_ln_bias: TileTensor[mut=True, dtype, Rows1[hidden], MutAnyOrigin],
    grad_weight: TileTensor[mut=True, dtype, Rows2[out_dim, hidden], MutAnyOrigin],
    grad_bias: TileTensor[mut=True, dtype, Rows1[out_dim], MutAnyOrigin],
    # Inputs.
    #ko 입력.
    x: TileTensor[mut=False, dtype, Rows3[batch, seq, hidden], ImmutAnyOrigin],
    ln_weight: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    ln_bias: TileTensor[mut=False, dtype, Rows1[hidden], ImmutAnyOrigin],
    weight: TileTensor[mut=False, dtype, Rows2[out_dim, hidden], ImmutAnyOrigin],
    bias: TileTensor[mut=False, dtype, Rows1[out_dim], ImmutAnyOrigin],
    grad_output: TileTensor[mut=False, dtype, Rows3[batch, seq, out_dim], ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "LayerNorm needs a float dtype"
    # This block's position, and this thread's place in the block.
    #ko 이 블록의 위치와, 블록 안에서 이 스레드의 자리.
    var b = Int(block_idx.x)
    var s = Int(block_idx.y)
    var t = Int(thread_idx.x)
    var n = Scalar[dtype](hidden)

    # The block's scratch rows: xhat (the normalized x) and dxhat (dL/dxhat).
    # Threads write their own entries and read everyone's, so a barrier()
    # must separate the writes from the reads of other threads.
    #ko 블록의 작업용 행: xhat(정규화한 x)과 dxhat(dL/dxhat).
    #ko 스레드는 자기 항목을 쓰고 모두의 항목을 읽으므로, 쓰기와 다른 스레드의
    #ko 읽기 사이에는 barrier()가 있어야 합니다.
    var xhat = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )
    var dxhat = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB]()
    )

    # Step 1, the row's statistics. Each thread sums its share of the row,
    # x[b, s, h] for h in range(t, hidden, TPB); block.sum[block_size=TPB]
    # adds the shares of the whole block and hands every thread the total.
    # First the mean, then the variance as the mean of (x - mean)^2 (this
    # second pass keeps the digits that E[x^2] - mean^2 would cancel away),
    # then inv_std = 1 / sqrt(var + EPS).
    # FILL IN: step 1, mean and inv_std (about 12 lines)
    #ko 1단계, 행의 통계. 스레드마다 행에서 자기 몫인 x[b, s, h]
    #ko (h in range(t, hidden, TPB))를 더하고, block.sum[block_size=TPB]가
    #ko 블록 전체의 몫을 더해 모든 스레드에게 합계를 건넵니다.
    #ko 먼저 평균, 그다음 분산을 (x - mean)^2의 평균으로 구하고(이렇게 두 번
    #ko 훑으면 E[x^2] - mean^2에서 상쇄되어 사라질 자릿수가 지켜집니다),
    #ko 마지막으로 inv_std = 1 / sqrt(var + EPS).
    #ko FILL IN: 1단계, mean과 inv_std (12줄 정도)
    #| var mean = Scalar[dtype](0)
    #| var inv_std = Scalar[dtype](1)
    var partial = Scalar[dtype](0)
    for h in range(t, hidden, TPB):
        partial += x[b, s, h][0]
    var mean = block.sum[block_size=TPB](partial) / n

    # Every thread has the same mean now: the second pass can start.
    #ko 이제 모든 스레드의 평균이 같으니 두 번째 훑기를 시작할 수 있습니다.
    partial = 0
    for h in range(t, hidden, TPB):
        var centered = x[b, s, h][0] - mean
        partial += centered * centered
    var variance = block.sum[block_size=TPB](partial) / n
    var inv_std = 1 / sqrt(variance + Scalar[dtype](EPS))
    # END FILL IN

    # Step 2, the normalized row: xhat[h] = (x[b, s, h] - mean) *
    # inv_std for this thread's h, then a barrier() so that step 3 can read
    # the entries of other threads.
    # FILL IN: step 2, xhat into shared memory (about 5 lines)
    #ko 2단계, 정규화한 행: 이 스레드의 h에 대해 xhat[h] = (x[b, s, h] - mean) *
    #ko inv_std, 그다음 3단계가 다른 스레드의 항목을 읽을 수 있도록 barrier().
    #ko FILL IN: 2단계, xhat을 공유 메모리에 (5줄 정도)
    #| _ = mean
    #| _ = inv_std
    for h in range(t, hidden, TPB):
        xhat[h] = (x[b, s, h][0] - mean) * inv_std
    barrier()
    # END FILL IN

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
    #ko 3단계, Linear 층. 출력 특성을 스레드들이 나눠 맡습니다
    #ko (for o in range(t, out_dim, TPB)).
    #ko ln[h] = ln_weight[h] * xhat[h] + ln_bias[h]일 때:
    #ko   output[b, s, o] = bias[o] + sum_h weight[o, h] * ln[h]
    #ko   grad_bias[o]      += grad_output[b, s, o]
    #ko   grad_weight[o, h] += grad_output[b, s, o] * ln[h]   (모든 h)
    #ko 모든 블록이 같은 grad_bias와 grad_weight에 더하므로 더하기는 원자적이어야
    #ko 합니다: _ = Atomic.fetch_add(tensor.ptr.unsafe_offset(i), v).
    #ko 여기서 i는 행 우선 버퍼에서 그 원소의 오프셋입니다.
    #ko FILL IN: 3단계, y와 Linear의 기울기 (16줄 정도)
    #| pass
    for o in range(t, out_dim, TPB):
        var g = grad_output[b, s, o][0]
        var acc = bias[o][0]
        for h in range(hidden):
            var ln_h = ln_weight[h][0] * xhat[h][0] + ln_bias[h][0]
            acc += weight[o, h][0] * ln_h
            # grad_weight is [out_dim, hidden], row-major: (o, h) is at o * hidden + h.
            #ko grad_weight는 [out_dim, hidden] 행 우선: (o, h)는 o * hidden + h.
            _ = Atomic.fetch_add(grad_weight.ptr.unsafe_offset(o * hidden + h), g * ln_h)
        output[b, s, o] = acc
        _ = Atomic.fetch_add(grad_bias.ptr.unsafe_offset(o), g)
    # END FILL IN

    # Step 4, back through the Linear layer into LayerNorm, one h per
    # thread: dln = sum_o grad_output[b, s, o] * weight[o, h] is dL/dln[h].
    # Add dln * xhat[h] into grad_ln_weight[h] and dln into grad_ln_bias[h]
    # (atomically: every block adds into them), and keep
    # dxhat[h] = dln * ln_weight[h]. Then two block sums, needed by every h in
    # step 5: mean_dxhat = sum_h dxhat[h] / H and
    # mean_dxhat_xhat = sum_h dxhat[h] * xhat[h] / H.
    # FILL IN: step 4, the LayerNorm parameter gradients and the two sums (about 18 lines)
    #ko 4단계, Linear 층을 거슬러 LayerNorm으로. 스레드마다 h 하나:
    #ko dln = sum_o grad_output[b, s, o] * weight[o, h]가 dL/dln[h]입니다.
    #ko dln * xhat[h]를 grad_ln_weight[h]에, dln을 grad_ln_bias[h]에 더하고
    #ko (원자적으로: 모든 블록이 여기에 더합니다), dxhat[h] = dln * ln_weight[h]를
    #ko 보관합니다. 그다음 5단계에서 모든 h가 쓰는 블록 합 두 개:
    #ko mean_dxhat = sum_h dxhat[h] / H와
    #ko mean_dxhat_xhat = sum_h dxhat[h] * xhat[h] / H.
    #ko FILL IN: 4단계, LayerNorm 매개변수의 기울기와 두 합 (18줄 정도)
    #| var mean_dxhat = Scalar[dtype](0)
    #| var mean_dxhat_xhat = Scalar[dtype](0)
    var sum_d = Scalar[dtype](0)
    var sum_dx = Scalar[dtype](0)
    for h in range(t, hidden, TPB):
        var dln = Scalar[dtype](0)
        for o in range(out_dim):
            dln += grad_output[b, s, o][0] * weight[o, h][0]
        var xhat_h = xhat[h][0]
        _ = Atomic.fetch_add(grad_ln_weight.ptr.unsafe_offset(h), dln * xhat_h)
        _ = Atomic.fetch_add(grad_ln_bias.ptr.unsafe_offset(h), dln)
        var d = dln * ln_weight[h][0]
        dxhat[h] = d
        sum_d += d
        sum_dx += d * xhat_h
    var mean_dxhat = block.sum[block_size=TPB](sum_d) / n
    var mean_dxhat_xhat = block.sum[block_size=TPB](sum_dx) / n
    # END FILL IN

    # Step 5, LayerNorm's input gradient for this thread's h:
    #   grad_input[b, s, h] = inv_std * (dxhat[h] - mean_dxhat
    #                                    - xhat[h] * mean_dxhat_xhat)
    # The middle term is the path through the mean, the last one the path
    # through the variance.
    # FILL IN: step 5, grad_input (about 6 lines)
    #ko 5단계, 이 스레드의 h에 대한 LayerNorm의 입력 기울기:
    #ko   grad_input[b, s, h] = inv_std * (dxhat[h] - mean_dxhat
    #ko                                    - xhat[h] * mean_dxhat_xhat)
    #ko 가운데 항은 평균을 거치는 경로, 마지막 항은 분산을 거치는 경로입니다.
    #ko FILL IN: 5단계, grad_input (6줄 정도)
    #| _ = mean_dxhat
    #| _ = mean_dxhat_xhat
    for h in range(t, hidden, TPB):
        grad_input[b, s, h] = inv_std * (
            dxhat[h][0] - mean_dxhat - xhat[h][0] * mean_dxhat_xhat
        )
    # END FILL IN


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
    #ko 작업용 행. 위치마다 다시 씁니다: 정규화한 행과 dL/dxhat.
    var xhat = List[Scalar[dtype]](length=hidden, fill=0)
    var dxhat = List[Scalar[dtype]](length=hidden, fill=0)

    # One position after another: no other thread adds into the parameter
    # gradients, so a plain += is enough here (they arrive zeroed).
    #ko 위치 하나씩 차례로: 매개변수 기울기에 더하는 다른 스레드가 없으니
    #ko 그냥 +=로 충분합니다(0으로 들어옵니다).
    for b in range(batch):
        for s in range(seq):
            # The row's mean, its variance (mean of (x - mean)^2),
            # inv_std = 1 / sqrt(var + EPS), and xhat[h] for every h.
            # FILL IN: the statistics and xhat (about 12 lines)
            #ko 행의 평균, 분산((x - mean)^2의 평균),
            #ko inv_std = 1 / sqrt(var + EPS), 그리고 모든 h에 대한 xhat[h].
            #ko FILL IN: 통계와 xhat (12줄 정도)
            #| var inv_std = Scalar[dtype](1)
            var mean = Scalar[dtype](0)
            for h in range(hidden):
                mean += x[b, s, h][0]
            mean /= n
            var variance = Scalar[dtype](0)
            for h in range(hidden):
                var centered = x[b, s, h][0] - mean
                variance += centered * centered
            variance /= n
            var inv_std = 1 / sqrt(variance + Scalar[dtype](EPS))
            for h in range(hidden):
                xhat[h] = (x[b, s, h][0] - mean) * inv_std
            # END FILL IN

            # The Linear layer for every o: output[b, s, o], and add
            # this position's share into grad_bias[o] and grad_weight[o, h].
            # FILL IN: y and the Linear gradients (about 10 lines)
            #ko 모든 o에 대한 Linear 층: output[b, s, o]를 쓰고, 이 위치의 몫을
            #ko grad_bias[o]와 grad_weight[o, h]에 더합니다.
            #ko FILL IN: y와 Linear의 기울기 (10줄 정도)
            #| pass
            for o in range(out_dim):
                var g = grad_output[b, s, o][0]
                var acc = bias[o][0]
                for h in range(hidden):
                    var ln_h = ln_weight[h][0] * xhat[h] + ln_bias[h][0]
                    acc += weight[o, h][0] * ln_h
                    grad_weight[o, h] = grad_weight[o, h][0] + g * ln_h
                output[b, s, o] = acc
                grad_bias[o] = grad_bias[o][0] + g
            # END FILL IN

            # Back into LayerNorm: for every h, dln = dL/dln[h],
            # the shares of grad_ln_weight[h] and grad_ln_bias[h], and
            # dxhat[h]; then the two means and grad_input[b, s, h] for every
            # h, with the mean term and the variance term.
            # FILL IN: the LayerNorm gradients and grad_input (about 20 lines)
            #ko LayerNorm으로 거슬러: 모든 h에 대해 dln = dL/dln[h],
            #ko grad_ln_weight[h]와 grad_ln_bias[h]의 몫, 그리고 dxhat[h].
            #ko 그다음 두 평균과, 평균 항과 분산 항을 넣은 grad_input[b, s, h]를
            #ko 모든 h에 대해 구합니다.
            #ko FILL IN: LayerNorm의 기울기와 grad_input (20줄 정도)
            #| _ = inv_std
            var sum_d = Scalar[dtype](0)
            var sum_dx = Scalar[dtype](0)
            for h in range(hidden):
                var dln = Scalar[dtype](0)
                for o in range(out_dim):
                    dln += grad_output[b, s, o][0] * weight[o, h][0]
                grad_ln_weight[h] = grad_ln_weight[h][0] + dln * xhat[h]
                grad_ln_bias[h] = grad_ln_bias[h][0] + dln
                dxhat[h] = dln * ln_weight[h][0]
                sum_d += dxhat[h]
                sum_dx += dxhat[h] * xhat[h]
            var mean_dxhat = sum_d / n
            var mean_dxhat_xhat = sum_dx / n
            for h in range(hidden):
                grad_input[b, s, h] = inv_std * (
                    dxhat[h] - mean_dxhat - xhat[h] * mean_dxhat_xhat
                )
            # END FILL IN


# ---------------------------------------------------------------------------
# The op MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------
#ko MAX가 호출하는 연산: 이 줄 아래로는 채울 것이 없습니다.

comptime FILL_BLOCK = 256


def fill_kernel[size: Int, dtype: DType](
    buffer: TileTensor[mut=True, dtype, Rows1[size], MutAnyOrigin],
    value: Scalar[dtype],
):
    # Set every element of a flat buffer to `value`.
    #ko 평평한 버퍼의 모든 원소를 `value`로 설정합니다.
    var i = Int(block_idx.x) * FILL_BLOCK + Int(thread_idx.x)
    if i < size:
        buffer[i] = value


def fill[size: Int, dtype: DType, target: StaticString](
    ptr: Pointer[Scalar[dtype], MutAnyOrigin],
    value: Scalar[dtype],
    ctx: DeviceContext,
) raises:
    # Fill `size` elements from `ptr` on the graph's device.
    #ko 그래프의 장치에서 `ptr`부터 원소 `size`개를 채웁니다.
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
    #ko 평평한 버퍼의 모든 원소를 반으로 줄입니다.
    var i = Int(block_idx.x) * FILL_BLOCK + Int(thread_idx.x)
    if i < size:
        buffer[i] = buffer[i][0] * Scalar[dtype](0.5)


def halve[size: Int, dtype: DType](
    ptr: Pointer[Scalar[dtype], MutAnyOrigin], ctx: DeviceContext
) raises:
    # Halve `size` elements from `ptr` on the GPU.
    #ko GPU에서 `ptr`부터 원소 `size`개를 반으로 줄입니다.
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
        #ko "cpu" 또는 "gpu": 그래프를 만든 대상 장치.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        #ko Python 그래프가 ops.custom(parameters=...)로 넘기는 매개변수.
        batch: Int,
        seq: Int,
        hidden: Int,
        out_dim: Int,
        dtype: DType = DType.float32,
    ](
        # Outputs first, in the order of the graph's out_types...
        #ko 출력이 먼저, 그래프의 out_types 순서대로...
        output: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        grad_input: OutputTensor[dtype=dtype, rank=3, static_spec=_],
        grad_ln_weight: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        grad_ln_bias: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        grad_weight: OutputTensor[dtype=dtype, rank=2, static_spec=_],
        grad_bias: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        # ...then the inputs, in the order of the graph's values.
        #ko ...그다음 입력, 그래프의 values 순서대로.
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
        #ko y와 grad_input은 커널이 원소마다 씁니다.
        #ko NaN이 있으면 빠뜨린 원소가 드러납니다.
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
        #ko 매개변수 기울기는 모든 위치에 걸친 합이라 더하기로 쌓아 갑니다:
        #ko 0에서 시작해야 하고, 첫 블록이 더하기 전에 0으로 만드는 일이 끝나
        #ko 있어야 합니다. 여기서 같은 스트림으로 실행 전에 하면 그것이
        #ko 보장됩니다. 커널의 어느 블록도 그렇게 할 수 없습니다.
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
            #ko 커널은 한 번 0으로 만든 기울기 위에서 두 번 실행되고, 그 합은
            #ko 나중에 반으로 줄입니다. 올바른 커널은 자기 몫을 두 번 더해 같은
            #ko 답에 이릅니다. 기울기를 직접 0으로 만드는 커널은(예를 들어
            #ko 블록 (0, 0)에서) 첫 실행의 몫을 지워 버리므로, 검사는 그 경쟁
            #ko 상태를 가끔이 아니라 매번 보게 됩니다.
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
