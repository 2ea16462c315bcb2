# Puzzle 18: softmax as a custom MAX op.
#
# Three pieces live in this file:
#   1. softmax_gpu_kernel: one thread block computes the whole softmax,
#      with two tree reductions in shared memory (the maximum, then the sum);
#   2. softmax_cpu_kernel: the same math, one element after another;
#   3. SoftmaxOp: the op MAX calls. It is written for you: it picks the
#      kernel for the device the graph runs on.
#ko 퍼즐 18: MAX 사용자 정의 연산으로 만드는 softmax.
#ko
#ko 이 파일에는 세 부분이 있습니다:
#ko   1. softmax_gpu_kernel: 스레드 블록 하나가 softmax 전체를 계산합니다.
#ko      공유 메모리에서 트리 리덕션을 두 번 합니다(최댓값, 그다음 합);
#ko   2. softmax_cpu_kernel: 같은 계산을 원소 하나씩 차례로 합니다;
#ko   3. SoftmaxOp: MAX가 호출하는 연산. 미리 작성되어 있습니다. 그래프가
#ko      실행되는 장치에 맞는 커널을 고릅니다.

from std.math import exp
from std.utils.numerics import min_finite, nan
from max.gpu import thread_idx
from max.gpu.memory import AddressSpace
from max.gpu.sync import barrier
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
import extensibility
from extensibility import InputTensor, OutputTensor

comptime SIZE = 128
# One block of threads; a tree reduction halves the active threads each
# step, so the block size is the smallest power of two >= SIZE.
#ko 스레드 블록 하나. 트리 리덕션은 단계마다 일하는 스레드를 반으로 줄이므로,
#ko 블록 크기는 SIZE 이상인 가장 작은 2의 거듭제곱입니다.
comptime BLOCK_DIM_X = 128
comptime layout = row_major[SIZE]()
comptime LayoutType = type_of(layout)


def softmax_gpu_kernel[input_size: Int, dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    input: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "softmax needs a float dtype"
    #ko= comptime assert dtype.is_floating_point(), "소프트맥스에는 부동소수점 dtype이 필요합니다"
    # One slot per thread, visible to the whole block.
    #ko 스레드마다 칸 하나. 블록 전체가 볼 수 있습니다.
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[BLOCK_DIM_X]()
    )
    var i = Int(thread_idx.x)

    # FILL IN: step 1, the block's maximum. Each thread puts its value in
    # shared[i] (threads past input_size put the lowest finite value), then a
    # tree reduction: at each stride, thread i < stride keeps the larger of
    # shared[i] and shared[i + stride]. barrier() after every write that other
    # threads read. (about 14 lines)
    #ko FILL IN: 1단계, 블록의 최댓값. 스레드마다 자기 값을 shared[i]에 넣고
    #ko (input_size를 넘어선 스레드는 가장 작은 유한값을 넣습니다), 트리 리덕션을
    #ko 합니다: stride마다 i < stride인 스레드 i가 shared[i]와 shared[i + stride]
    #ko 중 큰 값을 남깁니다. 다른 스레드가 읽는 쓰기 뒤에는 매번 barrier().
    #ko (14줄 정도)
    #| var block_max = Scalar[dtype](0)
    var value = min_finite[dtype]()
    if i < input_size:
        value = input[i][0]
    shared[i] = value
    barrier()

    var stride = BLOCK_DIM_X // 2
    while stride > 0:
        if i < stride:
            shared[i] = max(shared[i], shared[i + stride])
        barrier()
        stride //= 2
    var block_max = shared[0][0]
    # Everyone must have read shared[0] before step 2 overwrites it.
    barrier()
    # END FILL IN

    # FILL IN: step 2, exp(x - max) and their sum with the same tree
    # reduction (threads past input_size contribute 0), then step 3: each
    # thread in range writes exp(x_i - max) / sum. (about 16 lines)
    #ko FILL IN: 2단계, exp(x - max)와 그 합을 같은 트리 리덕션으로 구합니다
    #ko (input_size를 넘어선 스레드는 0을 보탭니다). 그다음 3단계: 범위 안의
    #ko 스레드마다 exp(x_i - max) / sum을 씁니다. (16줄 정도)
    #| _ = block_max
    var e = Scalar[dtype](0)
    if i < input_size:
        e = exp(input[i][0] - block_max)
    shared[i] = e
    barrier()

    stride = BLOCK_DIM_X // 2
    while stride > 0:
        if i < stride:
            shared[i] = shared[i] + shared[i + stride]
        barrier()
        stride //= 2

    if i < input_size:
        output[i] = e / shared[0][0]
    # END FILL IN


def softmax_cpu_kernel[input_size: Int, dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    input: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    comptime assert dtype.is_floating_point(), "softmax needs a float dtype"
    #ko= comptime assert dtype.is_floating_point(), "소프트맥스에는 부동소수점 dtype이 필요합니다"
    # FILL IN: the same three steps, one element at a time: the maximum, the
    # sum of exp(x - max) (keep each exp in output), then divide. (about 12 lines)
    #ko FILL IN: 같은 세 단계를 원소 하나씩: 최댓값, exp(x - max)의 합(각 exp는
    #ko output에 보관), 그다음 나누기. (12줄 정도)
    #| pass
    var largest = min_finite[dtype]()
    for i in range(input_size):
        largest = max(largest, input[i][0])

    var total = Scalar[dtype](0)
    for i in range(input_size):
        var e = exp(input[i][0] - largest)
        output[i] = e
        total += e

    for i in range(input_size):
        output[i] = output[i][0] / total
    # END FILL IN


# ---------------------------------------------------------------------------
# The op MAX calls: nothing to fill in below this line.
# ---------------------------------------------------------------------------
#ko MAX가 호출하는 연산: 이 줄 아래로는 채울 것이 없습니다.


def poison_kernel[dtype: DType](
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
):
    # Fill the output with NaN, so an element the kernel forgets shows up.
    #ko 출력을 NaN으로 채워, 커널이 빠뜨린 원소가 드러나게 합니다.
    var i = Int(thread_idx.x)
    if i < SIZE:
        output[i] = nan[dtype]()


@extensibility.register("softmax")
struct SoftmaxOp:
    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        #ko "cpu" 또는 "gpu": 그래프를 만든 대상 장치.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        #ko Python 그래프가 ops.custom(parameters=...)로 넘기는 매개변수.
        input_size: Int,
        dtype: DType = DType.float32,
    ](
        output: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        input: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        comptime assert input_size == SIZE, "this puzzle is written for SIZE elements"
        #ko= comptime assert input_size == SIZE, "이 퍼즐은 원소 SIZE개에 맞춰 쓰였습니다"
        var out_tensor = TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin](
            output.unsafe_ptr(), layout
        )
        var in_tensor = TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
            input.unsafe_ptr(), layout
        )
        comptime if target == "gpu":
            ctx.enqueue_function[poison_kernel[dtype]](
                out_tensor, grid_dim=1, block_dim=BLOCK_DIM_X
            )
            ctx.enqueue_function[softmax_gpu_kernel[input_size, dtype]](
                out_tensor, in_tensor, grid_dim=1, block_dim=BLOCK_DIM_X
            )
        else:
            for i in range(SIZE):
                out_tensor[i] = nan[dtype]()
            softmax_cpu_kernel[input_size, dtype](out_tensor, in_tensor)
