# WRONG ON PURPOSE (halo_guard_on_whole_halo): Copies the halo only when all of it lies inside a, else zeros: a halo that the end of a cuts short loses the elements it still has.
# Puzzle 28: 1D convolution whose input tile arrives by asynchronous copy.
#
#     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+4]*b[4]
#
# This is p13's many-block convolution (CONV = 5 weights, terms past the end
# of a count as 0), with one change: a block's tile of a (its TPB elements and
# the CONV - 1 halo elements after them) is fetched with async_copy, which on
# the GPU runs in the background (cp.async), while the threads load the small
# kernel b the ordinary way. The copies then have to be waited for:
#
#     async_copy(a[i] -> shared_a[t])        issued: the copy is on its way
#     shared_b[t] = b[t]                     meanwhile: the weights
#     async_copy_wait_all()                  MY copies have landed
#     barrier()                              EVERYONE's copies have landed
#     ... read shared_a[t + j] ...
#
# The wait only covers the copies the calling thread issued; the barrier
# after it makes every thread's copies visible to the whole block. Reading
# shared_a before both gives whatever was there, or the new value, depending
# on when each copy lands.
#ko 퍼즐 28: 입력 타일이 비동기 복사로 들어오는 1D 합성곱.
#ko
#ko     output[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+4]*b[4]
#ko
#ko p13의 여러 블록 합성곱(가중치 CONV = 5개, a의 끝을 넘는 항은 0)과 같고,
#ko 하나만 다릅니다. 블록이 쓸 a의 타일(자기 원소 TPB개와 그 뒤의 헤일로 원소
#ko CONV - 1개)을 async_copy로 가져옵니다. GPU에서 이 복사는 뒤에서
#ko 진행되고(cp.async), 그동안 스레드들은 작은 커널 b를 보통 방법으로
#ko 읽어 옵니다. 그다음 복사를 기다려야 합니다:
#ko
#ko     async_copy(a[i] -> shared_a[t])        시작만 함: 복사가 오는 중
#ko     shared_b[t] = b[t]                     그동안: 가중치
#ko     async_copy_wait_all()                  내 복사가 도착함
#ko     barrier()                              모두의 복사가 도착함
#ko     ... shared_a[t + j] 읽기 ...
#ko
#ko 기다리기는 자기가 시작한 복사만 기다립니다. 그 뒤의 barrier가 모든
#ko 스레드의 복사를 블록 전체에 보이게 합니다. 둘 다 지나기 전에 shared_a를
#ko 읽으면, 복사가 언제 도착하느냐에 따라 원래 있던 값이나 새 값이 읽힙니다.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace, async_copy, async_copy_wait_all
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block.
#ko 블록당 스레드 수.
comptime TPB = 64
# The number of weights in b.
#ko b의 가중치 수.
comptime CONV = 5
# Bytes one async_copy moves here: one float32.
#ko 여기서 async_copy 한 번이 옮기는 바이트 수: float32 하나.
comptime BYTES = 4


def conv1d_async[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[CONV], ImmutAnyOrigin],
):
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var first = block_idx.x * TPB  # the block's first element
    #ko 블록의 첫 원소
    var i = first + t  # this thread's element
    #ko 이 스레드의 원소
    # TPB slots for the block's own elements, then CONV - 1 for its halo.
    #ko 블록 자신의 원소를 위한 칸 TPB개, 그다음 헤일로를 위한 칸 CONV - 1개.
    var shared_a = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB + CONV - 1]())
    var shared_b = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[CONV]())

    # FILL IN: start the copies of the tile, with 0 in every slot past the end
    # of a (write those zeros directly, or copy with src_size=0, fill=0):
    # - thread t: a[i] into shared_a[t];
    # - threads t < CONV - 1: the halo element a[first + TPB + t] into
    #   shared_a[TPB + t].
    # One copy is async_copy[BYTES](src, dst), where src is a pointer into
    # global memory, (a.ptr + k).address_space_cast[AddressSpace.GLOBAL](),
    # and dst a pointer into shared memory, shared_a.ptr + slot.
    # (about 12 lines)
    #ko FILL IN: 타일 복사를 시작합니다. a의 끝을 넘어선 칸에는 0을 넣습니다
    #ko (0을 직접 쓰거나, src_size=0, fill=0으로 복사합니다):
    #ko - 스레드 t: a[i]를 shared_a[t]로;
    #ko - t < CONV - 1인 스레드: 헤일로 원소 a[first + TPB + t]를
    #ko   shared_a[TPB + t]로.
    #ko 복사 하나는 async_copy[BYTES](src, dst)입니다. src는 전역 메모리를
    #ko 가리키는 포인터 (a.ptr + k).address_space_cast[AddressSpace.GLOBAL](),
    #ko dst는 공유 메모리를 가리키는 포인터 shared_a.ptr + slot입니다.
    #ko (12줄 정도)
    #| pass
    if i < size:
        async_copy[BYTES]((a.ptr + i).address_space_cast[AddressSpace.GLOBAL](), shared_a.ptr + t)
    else:
        shared_a[t] = 0
    if t < CONV - 1:
        var h = first + TPB + t
        if first + TPB + CONV - 1 <= size:
            async_copy[BYTES]((a.ptr + h).address_space_cast[AddressSpace.GLOBAL](), shared_a.ptr + TPB + t)
        else:
            shared_a[TPB + t] = 0
    # END FILL IN

    # While the copies are on their way: the weights, the ordinary way.
    #ko 복사가 오는 동안: 가중치는 보통 방법으로.
    if t < CONV:
        shared_b[t] = b[t]

    # FILL IN: wait until this thread's copies have landed, then until every
    # thread of the block got that far. (2 lines)
    #ko FILL IN: 이 스레드의 복사가 도착할 때까지 기다리고, 그다음 블록의 모든
    #ko 스레드가 거기까지 올 때까지 기다립니다. (2줄)
    #| pass
    async_copy_wait_all()
    barrier()
    # END FILL IN

    if i < size:
        var total: Scalar[dtype] = 0
        comptime for j in range(CONV):
            total += shared_a[t + j] * shared_b[j]
        output[i] = total
