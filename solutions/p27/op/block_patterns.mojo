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
#ko 퍼즐 27: 블록 전체의 패턴.
#ko
#ko 한 블록의 스레드들은 세 가지 기본 방식으로 서로 주고받습니다:
#ko
#ko   all -> one    모든 스레드가 값을 내고, 한 스레드가 합계를 받습니다
#ko                 (리덕션: block.sum)
#ko   all -> each   모든 스레드가 값을 내고, 스레드마다 자기 앞 스레드들의
#ko                 합계를 받습니다(스캔: block.prefix_sum)
#ko   one -> all    한 스레드가 값을 내고, 모든 스레드가 복사본을 받습니다
#ko                 (block.broadcast)
#ko
#ko 프리미티브 하나하나가 barrier() 호출까지 포함한 공유 메모리 트리 전체를
#ko 감추고 있습니다. 스레드마다 값 하나를 건네면, 이미 동기화된 답을 돌려받습니다.
#ko 지켜야 할 규칙은 하나입니다: 블록의 "모든" 스레드가 그 호출에 도달해야
#ko 합니다. 일부 스레드만 들어가는 `if` 안에 블록 프리미티브를 두지 마세요.
#ko
#ko 파트마다 커널 하나씩 세 개. 모두 값 SIZE개를 스레드 TPB개짜리 블록
#ko 하나로 처리합니다(원소마다 스레드 하나):
#ko   1. block_dot_kernel        (파트 `sum`)        all -> one
#ko   2. block_bin_pack_kernel   (파트 `prefix_sum`) all -> each
#ko   3. block_normalize_kernel  (파트 `broadcast`)  all -> one -> all
#ko 파일 아래쪽의 연산 세 개는 미리 작성되어 있습니다.

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
#ko 원소마다 스레드 하나이므로, 블록의 너비는 데이터와 정확히 같습니다.
comptime TPB = SIZE
comptime dtype = DType.float32
# Part `prefix_sum` sorts values in [0, 1) into NUM_BINS equal bins.
#ko 파트 `prefix_sum`은 [0, 1)의 값을 같은 너비의 구간(bin) NUM_BINS개로 나눕니다.
comptime NUM_BINS = 8

comptime layout = row_major[SIZE]()
comptime LayoutType = type_of(layout)
# A one-element tensor: a single result (the dot product, the count) or a
# single input (the target bin).
#ko 원소가 하나인 텐서: 결과 하나(내적, 개수) 또는 입력 하나(대상 구간).
comptime scalar_layout = row_major[1]()
comptime ScalarLayoutType = type_of(scalar_layout)


# ---------------------------------------------------------------------------
# Part `sum`: all -> one.
# ---------------------------------------------------------------------------
#ko 파트 `sum`: all -> one.


def block_dot_kernel(
    dot: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
    a: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
):
    var i = Int(thread_idx.x)

    # FILL IN: each thread multiplies its pair a[i] * b[i]; one call to
    # block.sum (broadcast=False: only thread 0 needs the total) adds the
    # 128 products; thread 0 writes the total to dot[0]. (about 5 lines)
    #ko FILL IN: 스레드마다 자기 쌍 a[i] * b[i]를 곱합니다. block.sum을 한 번
    #ko 호출해(broadcast=False: 합계는 스레드 0만 필요합니다) 곱 128개를
    #ko 더하고, 스레드 0이 합계를 dot[0]에 씁니다. (5줄 정도)
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
#ko 파트 `prefix_sum`: all -> each.


def block_bin_pack_kernel(
    packed: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
    count: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
    x: TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin],
    target_bin: TileTensor[mut=False, DType.int32, ScalarLayoutType, ImmutAnyOrigin],
):
    var i = Int(thread_idx.x)
    var value = x[i][0]
    # Every thread reads the same target bin from the one-element input.
    #ko 모든 스레드가 원소 하나짜리 입력에서 같은 대상 구간을 읽습니다.
    var target = Int(target_bin[0][0])

    # FILL IN: step 1, find this thread's bin: floor(value * NUM_BINS),
    # clamped to 0..NUM_BINS-1. Then make a flag: Int32(1) if the bin is the
    # target bin, Int32(0) otherwise. (about 4 lines)
    #ko FILL IN: 1단계, 이 스레드의 구간을 찾습니다: floor(value * NUM_BINS)를
    #ko 0..NUM_BINS-1로 제한한 값. 그다음 표시(flag)를 만듭니다: 구간이 대상
    #ko 구간이면 Int32(1), 아니면 Int32(0). (4줄 정도)
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
    #ko FILL IN: 2단계, 맞는 값들을 모읍니다. 표시들의 "배타적" block.prefix_sum은
    #ko 맞는 스레드마다 자기 앞에 맞는 값이 몇 개 있는지 알려 줍니다: 그것이
    #ko `packed`에서 그 스레드의 칸입니다. 표시들의 block.sum(broadcast=True)은
    #ko 모든 스레드에게 맞는 값이 모두 몇 개인지 알려 줍니다. 맞는 스레드는 자기
    #ko 값을 packed[slot]에 쓰고, 스레드 i는 i >= 개수이면 packed[i]에 0을
    #ko 씁니다(쓰지 않는 뒷부분). 스레드 0은 개수를 float로 count[0]에 씁니다.
    #ko (9줄 정도)
    #| _ = flag
    var slot = block.prefix_sum[block_size=TPB, exclusive=True](flag)
    var matches = block.sum[block_size=TPB, broadcast=True](flag)
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
#ko 파트 `broadcast`: all -> one -> all.


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
    #ko FILL IN: broadcast=False인 block.sum으로 합계를 스레드 0에 모읍니다.
    #ko 스레드 0만 mean = total / SIZE를 계산하고, block.broadcast(src_thread=0)로
    #ko 평균을 모든 스레드에 나눠 준 뒤, 스레드마다 value / mean을 씁니다.
    #ko (7줄 정도)
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
#ko MAX가 호출하는 연산들: 이 줄 아래로는 채울 것이 없습니다.


def poison_vector_kernel(
    output: TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin],
):
    # Fill a SIZE-element output with NaN, so a forgotten element shows up.
    #ko 원소 SIZE개짜리 출력을 NaN으로 채워, 빠뜨린 원소가 드러나게 합니다.
    var i = Int(thread_idx.x)
    if i < SIZE:
        output[i] = nan[dtype]()


def poison_scalar_kernel(
    output: TileTensor[mut=True, dtype, ScalarLayoutType, MutAnyOrigin],
):
    # Fill a one-element output with NaN.
    #ko 원소 하나짜리 출력을 NaN으로 채웁니다.
    if thread_idx.x == 0:
        output[0] = nan[dtype]()


@extensibility.register("block_dot")
struct BlockDotOp:
    # Part `sum`: dot = sum(a * b). Runs on a GPU only.
    #ko 파트 `sum`: dot = sum(a * b). GPU에서만 실행됩니다.

    @staticmethod
    def execute[
        # "cpu" or "gpu": the device the graph was built for.
        #ko "cpu" 또는 "gpu": 그래프를 만든 대상 장치.
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
            #ko= raise Error("block_dot: 이 파트는 GPU에서만 실행됩니다")


@extensibility.register("block_bin_pack")
struct BlockBinPackOp:
    # Part `prefix_sum`: pack the values of one bin, in order. GPU only.
    #ko 파트 `prefix_sum`: 한 구간의 값들을 순서대로 모읍니다. GPU 전용.

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
            #ko= raise Error("block_bin_pack: 이 파트는 GPU에서만 실행됩니다")


@extensibility.register("block_normalize")
struct BlockNormalizeOp:
    # Part `broadcast`: normalized = x / mean(x). Runs on a GPU only.
    #ko 파트 `broadcast`: normalized = x / mean(x). GPU에서만 실행됩니다.

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
            #ko= raise Error("block_normalize: 이 파트는 GPU에서만 실행됩니다")
