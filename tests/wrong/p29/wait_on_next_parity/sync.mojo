# WRONG ON PURPOSE (wait_on_next_parity): After each phase's wait, waits again on the next phase's parity without arriving: no thread arrives for that phase, so it never completes and every thread waits for ever.
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
#ko 퍼즐 29: 동기화. 블록의 스레드들이 서로를 기다리는 두 가지 방법.
#ko
#ko 파트 pipeline: 블록 하나, 일 세 가지. 스레드들은 번호로 그룹을 나누고,
#ko 그룹마다 블록의 타일(값 TILE개)에 대한 샤프닝 필터의 한 단계를 맡습니다:
#ko
#ko     스레드 0 .. 31       load     a(와 양옆의 값 하나씩) -> raw
#ko     스레드 32 .. 95      compute  raw -> blurred
#ko     스레드 96 .. 127     store    raw, blurred -> output
#ko
#ko     blurred[j] = (a[i-1] + 2*a[i] + a[i+1]) / 4        (i = first + j)
#ko     output[i]  = 2*a[i] - blurred[j]                    (a의 끝 너머
#ko                                                          값은 0)
#ko
#ko 그룹은 타일보다 작으므로, 그룹의 각 스레드는 그룹의 크기를 보폭으로
#ko 타일을 돕니다. 두 단계 사이에서는 블록의 모든 스레드가 barrier()에서
#ko 만납니다. compute 그룹은 load 그룹이 raw를 다 채운 뒤에야 읽을 수
#ko 있고, 다음 단계도 마찬가지입니다.
#ko
#ko 파트 stencil: 블록 하나가 평활화 스텐실을 `steps`단계 돌립니다.
#ko
#ko     x[i] <- (x[i-1] + 2*x[i] + x[i+1]) / 4              (끝 너머는 0)
#ko
#ko 공유 버퍼 두 개를 써서 하나를 읽고 다른 하나에 쓰며, 단계마다 둘을
#ko 바꿉니다. 두 단계 사이에서 스레드들은 barrier() 대신 mbarrier로 서로를
#ko 기다립니다. 각 스레드는 자기 값을 쓰고 나서 도착(arrive)하고, 자기가
#ko 도착한 단계(phase)가 끝날 때까지 기다립니다.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_try_wait_parity_shared
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block, in both parts.
#ko 블록당 스레드 수(두 파트 모두).
comptime TPB = 128
# Values of a each block of the pipeline handles.
#ko pipeline에서 블록 하나가 맡는 a의 값 수.
comptime TILE = 256
# The pipeline's groups: threads [0, LOAD), [LOAD, LOAD + COMPUTE), and the rest.
#ko pipeline의 그룹: 스레드 [0, LOAD), [LOAD, LOAD + COMPUTE), 그리고 나머지.
comptime LOAD = 32
comptime COMPUTE = 64
comptime STORE = TPB - LOAD - COMPUTE


def pipeline[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var t = thread_idx.x
    var first = block_idx.x * TILE  # the block's first value of a
    #ko 블록이 맡은 a의 첫 값
    # raw[j + 1] holds a[first + j]; raw[0] and raw[TILE + 1] the values either
    # side of the tile (0 past the ends of a).
    #ko raw[j + 1]에는 a[first + j]가 들어갑니다. raw[0]과 raw[TILE + 1]에는
    #ko 타일 양옆의 값(a의 끝 너머면 0).
    var raw = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE + 2]())
    var blurred = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE]())

    # Stage 1, the load group: thread t of the group copies raw[t],
    # raw[t + LOAD], raw[t + 2 * LOAD], ...
    #ko 1단계, load 그룹: 그룹의 스레드 t가 raw[t], raw[t + LOAD],
    #ko raw[t + 2 * LOAD], ...를 복사합니다.
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
    #ko FILL IN: 2단계. 블록의 모든 스레드가 raw가 다 찰 때까지 기다립니다.
    #ko 그다음 compute 그룹(스레드 LOAD .. LOAD + COMPUTE - 1)이 모든
    #ko j < TILE에 대해 blurred[j]를 채웁니다. 그룹의 스레드 c = t - LOAD가
    #ko j = c, c + COMPUTE, c + 2 * COMPUTE, ...를 맡습니다. (6줄 정도)
    #| pass
    barrier()
    if t >= LOAD and t < LOAD + COMPUTE:
        var c = t - LOAD
        for j in range(c, TILE, COMPUTE):
            blurred[j] = (raw[j] + 2 * raw[j + 1] + raw[j + 2]) * 0.25
    # END FILL IN

    # FILL IN: stage 3. Every thread waits until blurred is full; then the
    # store group (the last STORE threads) writes output[first + j] =
    # 2 * raw[j + 1] - blurred[j] for every j < TILE whose value lies inside
    # a, its thread s = t - LOAD - COMPUTE taking j = s, s + STORE, ...
    # (about 7 lines)
    #ko FILL IN: 3단계. 모든 스레드가 blurred가 다 찰 때까지 기다립니다.
    #ko 그다음 store 그룹(마지막 STORE개 스레드)이, 값이 a 안에 있는 모든
    #ko j < TILE에 대해 output[first + j] = 2 * raw[j + 1] - blurred[j]를
    #ko 씁니다. 그룹의 스레드 s = t - LOAD - COMPUTE가 j = s, s + STORE, ...를
    #ko 맡습니다. (7줄 정도)
    #| pass
    barrier()
    if t >= LOAD + COMPUTE:
        var s = t - LOAD - COMPUTE
        for j in range(s, TILE, STORE):
            var i = first + j
            if i < size:
                output[i] = 2 * raw[j + 1] - blurred[j]
    # END FILL IN


def stencil[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    steps: Int32,
):
    var t = thread_idx.x  # this thread's value: x[t], for t < size
    #ko 이 스레드의 값: t < size일 때 x[t]
    # Two buffers: step k reads buffer k % 2 and writes the other one.
    #ko 버퍼 두 개: k단계는 버퍼 k % 2를 읽고 다른 버퍼에 씁니다.
    var buf = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2, TPB]())
    # The mbarrier: 8 bytes of shared memory that count arrivals.
    #ko mbarrier: 도착을 세는 공유 메모리 8바이트.
    var bar = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())

    # FILL IN: one thread initialises the mbarrier for TPB arrivals a phase
    # (mbarrier_init(bar.ptr, TPB)); the threads with a value copy it into
    # buffer 0; then one barrier(), so that every thread sees both.
    # (about 5 lines)
    #ko FILL IN: 스레드 하나가 단계마다 도착 TPB번을 세도록 mbarrier를
    #ko 초기화합니다(mbarrier_init(bar.ptr, TPB)). 값이 있는 스레드는 그 값을
    #ko 버퍼 0에 복사합니다. 그다음 barrier() 한 번으로 모든 스레드가 둘 다
    #ko 보게 합니다. (5줄 정도)
    #| pass
    if t == 0:
        mbarrier_init(bar.ptr, TPB)
    if t < size:
        buf[0, t] = a[t]
    barrier()
    # END FILL IN

    # FILL IN: `steps` steps. In step k, a thread with a value writes its new
    # value into buffer 1 - k % 2 from buffer k % 2 (a neighbour past the
    # ends counts as 0); then EVERY thread arrives (var token =
    # mbarrier_arrive(bar.ptr)) and spins until that phase has completed
    # (while not mbarrier_test_wait(bar.ptr, token): pass). After the last
    # step, write the values from the buffer that holds them.
    # (about 12 lines)
    #ko FILL IN: `steps`단계. k단계에서 값이 있는 스레드는 버퍼 k % 2에서
    #ko 새 값을 구해 버퍼 1 - k % 2에 씁니다(끝 너머의 이웃은 0). 그다음
    #ko 모든 스레드가 도착하고(var token = mbarrier_arrive(bar.ptr)), 그
    #ko 단계가 끝날 때까지 돕니다(while not mbarrier_test_wait(bar.ptr,
    #ko token): pass). 마지막 단계 뒤에는 값이 들어 있는 버퍼에서 값을
    #ko 씁니다. (12줄 정도)
    #| pass
    for k in range(Int(steps)):
        var src = k % 2
        if t < size:
            var left = buf[src, t - 1][0] if t > 0 else 0
            var right = buf[src, t + 1][0] if t + 1 < size else 0
            buf[1 - src, t] = (left + 2 * buf[src, t][0] + right) * 0.25
        _ = mbarrier_arrive(bar.ptr)
        mbarrier_try_wait_parity_shared(bar.ptr, Int32(k % 2), 10000000)
        mbarrier_try_wait_parity_shared(bar.ptr, Int32((k + 1) % 2), 10000000)
    if t < size:
        output[t] = buf[Int(steps) % 2, t]
    # END FILL IN
