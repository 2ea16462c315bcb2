# WRONG ON PURPOSE (memset_after_launch): Zeroes the output with ctx.enqueue_memset after the launch: the memset runs after the kernel, in order on the device, and every sum becomes 0.
# Puzzle 17: the 1D convolution of puzzle 13, packaged as a custom MAX op.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+conv-1]*b[conv-1]
#
# (a term whose a[i + j] lies past the end of a counts as 0). The kernels are
# written for you: conv1d_kernel is puzzle 13's many-block kernel with a halo,
# conv1d_cpu the same sum in two loops. What is left is what makes them an op:
#
#   1. conv1d_launch: the host code that sizes the grid and launches the GPU
#      kernel on the device context MAX hands the op;
#   2. the registration: MAX finds the op by the name on its struct;
#   3. execute: the function MAX calls. It is compiled once for the CPU and
#      once for the GPU (`target`), and must pick the code for each.
#ko 퍼즐 17: 퍼즐 13의 1D 합성곱을 MAX 커스텀 연산으로 포장합니다.
#ko
#ko     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+conv-1]*b[conv-1]
#ko
#ko (a[i + j]가 a의 끝을 넘어서는 항은 0으로 칩니다). 커널은 이미 작성되어
#ko 있습니다. conv1d_kernel은 퍼즐 13의 헤일로를 쓰는 여러 블록 커널이고,
#ko conv1d_cpu는 같은 합을 반복문 두 개로 구합니다. 남은 일은 이들을 연산으로
#ko 만드는 것입니다:
#ko
#ko   1. conv1d_launch: 그리드 크기를 정하고, MAX가 연산에 넘겨주는 장치
#ko      컨텍스트에서 GPU 커널을 실행하는 호스트 코드;
#ko   2. 등록: MAX는 구조체에 붙은 이름으로 연산을 찾습니다;
#ko   3. execute: MAX가 호출하는 함수. CPU용과 GPU용으로 한 번씩(`target`)
#ko      컴파일되며, 장치마다 맞는 코드를 골라야 합니다.

from std.math import ceildiv
from std.utils.numerics import nan
from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.host import DeviceContext, DeviceBuffer
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
import extensibility
from extensibility import InputTensor, OutputTensor

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: each block computes TPB outputs.
#ko 블록당 스레드 수: 블록 하나가 출력 TPB개를 계산합니다.
comptime TPB = 32


# ---------------------------------------------------------------------------
# Given: the GPU kernel and the CPU implementation.
# ---------------------------------------------------------------------------
#ko 주어진 것: GPU 커널과 CPU 구현.


def conv1d_kernel[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
):
    # Block k computes outputs k*TPB .. k*TPB + TPB - 1, so it needs TPB
    # elements of a and the conv - 1 after them (its halo). It expects
    # exactly TPB threads, and as many blocks as it takes to cover size.
    #ko 블록 k는 출력 k*TPB .. k*TPB + TPB - 1을 계산하므로, a의 원소 TPB개와
    #ko 그 뒤의 conv - 1개(헤일로)가 필요합니다. 스레드는 정확히 TPB개,
    #ko 블록은 size를 덮을 만큼 필요합니다.
    comptime assert conv >= 1 and conv - 1 <= TPB, "the halo is at most one thread each"
    #ko= comptime assert conv >= 1 and conv - 1 <= TPB, "헤일로는 스레드마다 많아야 하나입니다"
    var t = Int(thread_idx.x)
    var first = Int(block_idx.x) * TPB
    var shared_a = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB + conv - 1]()
    )
    var shared_b = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[conv]()
    )
    var mine: Scalar[dtype] = 0
    if first + t < size:
        mine = a[first + t][0]
    shared_a[t] = mine
    if t < conv - 1:
        var halo: Scalar[dtype] = 0
        if first + TPB + t < size:
            halo = a[first + TPB + t][0]
        shared_a[TPB + t] = halo
    var j = t
    while j < conv:
        shared_b[j] = b[j]
        j += TPB
    barrier()

    if first + t < size:
        var total: Scalar[dtype] = 0
        comptime for k in range(conv):
            total += shared_a[t + k][0] * shared_b[k][0]
        output[first + t] = total


def conv1d_cpu[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
):
    for i in range(size):
        var total: Scalar[dtype] = 0
        for k in range(conv):
            if i + k < size:
                total += a[i + k][0] * b[k][0]
        output[i] = total


def poison_kernel[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
):
    # NaN in every element, so one the launch forgets shows up.
    #ko 모든 원소에 NaN을 넣어, 실행이 빠뜨린 원소가 드러나게 합니다.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    if i < size:
        output[i] = nan[dtype]()


# ---------------------------------------------------------------------------
# Yours: the launch, the registration, execute.
# ---------------------------------------------------------------------------
#ko 여러분의 몫: 실행, 등록, execute.


def conv1d_launch[size: Int, conv: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    # FILL IN: launch conv1d_kernel[size, conv] on ctx with output, a and b:
    # blocks of TPB threads, and enough blocks that every element of output
    # has a thread (the last block may be partly idle). (about 5 lines)
    #ko FILL IN: ctx에서 conv1d_kernel[size, conv]를 output, a, b로
    #ko 실행합니다. 블록마다 스레드 TPB개, 그리고 output의 모든 원소에
    #ko 스레드가 하나씩 돌아갈 만큼의 블록(마지막 블록은 일부가 놀아도
    #ko 됩니다). (5줄 정도)
    #| pass
    # The memset comes after the launch: launches and memsets run in order on the
    # device's stream, so it wipes out what the kernel wrote.
    ctx.enqueue_function[conv1d_kernel[size, conv]](
        output, a, b, grid_dim=ceildiv(size, TPB), block_dim=TPB
    )
    ctx.enqueue_memset(DeviceBuffer[dtype](ctx, output.ptr, size, owning=False), 0)
    # END FILL IN


# FILL IN: register the struct below with MAX as the op "conv1d", the name
# the graph calls it by. (1 line)
#ko FILL IN: 아래 구조체를 그래프가 부르는 이름인 연산 "conv1d"로 MAX에
#ko 등록합니다. (1줄)
@extensibility.register("conv1d")
# END FILL IN
struct Conv1DOp:
    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        #ko "cpu" 또는 "gpu": 그래프를 만든 대상 장치.
        target: StaticString,
        # Parameters the Python graph passes to ops.custom(parameters=...).
        #ko Python 그래프가 ops.custom(parameters=...)로 넘기는 매개변수.
        size: Int,
        conv: Int,
    ](
        # Outputs first, then the inputs, in the graph's order.
        #ko 출력이 먼저, 그다음 입력, 그래프의 순서대로.
        output: OutputTensor[dtype=dtype, rank=1, static_spec=_],
        a: InputTensor[dtype=dtype, rank=1, static_spec=_],
        b: InputTensor[dtype=dtype, rank=1, static_spec=_],
        ctx: DeviceContext,
    ) raises:
        # MAX's tensors, seen as the TileTensors the kernels take.
        #ko MAX의 텐서를 커널이 받는 TileTensor로 봅니다.
        var out_t = TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin](
            output.unsafe_ptr(), row_major[size]()
        )
        var a_t = TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin](
            a.unsafe_ptr(), row_major[size]()
        )
        var b_t = TileTensor[mut=False, dtype, Vector[conv], ImmutAnyOrigin](
            b.unsafe_ptr(), row_major[conv]()
        )
        # The output starts as NaN on either device: an element nobody
        # writes shows up as wrong.
        #ko 출력은 어느 장치에서든 NaN으로 시작합니다. 아무도 쓰지 않은
        #ko 원소는 틀린 값으로 드러납니다.
        comptime if target == "gpu":
            ctx.enqueue_function[poison_kernel[size]](
                out_t, grid_dim=ceildiv(size, TPB), block_dim=TPB
            )
        else:
            for i in range(size):
                out_t[i] = nan[dtype]()

        # FILL IN: on the GPU target, launch the kernel with conv1d_launch;
        # on the CPU target, call conv1d_cpu. `comptime if target == "gpu":`
        # keeps the GPU code out of the CPU build. (about 4 lines)
        #ko FILL IN: GPU 대상에서는 conv1d_launch로 커널을 실행하고, CPU
        #ko 대상에서는 conv1d_cpu를 부릅니다. `comptime if target == "gpu":`는
        #ko GPU 코드가 CPU 빌드에 들어가지 않게 합니다. (4줄 정도)
        #| pass
        comptime if target == "gpu":
            conv1d_launch[size, conv](out_t, a_t, b_t, ctx)
        else:
            conv1d_cpu[size, conv](out_t, a_t, b_t)
        # END FILL IN
