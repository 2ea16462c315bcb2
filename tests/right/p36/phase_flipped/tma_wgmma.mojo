# A RIGHT KERNEL WRITTEN ANOTHER WAY (phase_flipped): the parity to wait for is a variable flipped after each wait, and the output is written row half by row half.
# Puzzle 36 (bonus, sm_90): a Hopper matrix multiply step. TMA brings the
# tiles, wgmma multiplies them.
#
# output = a @ w^T for a (m x k) and w (n x k), both bfloat16, as a linear
# layer computes x @ W^T; output in float32. Each block of 128 threads (one
# warpgroup: 4 warps) owns a 64 x 64 tile of the output and walks along k,
# 16 at a time. Two Hopper units do the work a block did by hand in p16 and
# p33:
#
#   TMA (the tensor memory accelerator) copies a box of a tensor from global
#   into shared memory on its own: one thread gives the order, no thread moves
#   data. It reports to an mbarrier (p29): the barrier is told how many bytes
#   to expect (expect_bytes), each copy adds what it brought, and the phase
#   completes when all have arrived. wait(phase) blocks until then.
#
#   wgmma multiplies a 64 x 16 tile of A by a 16 x 64 tile of B for the whole
#   warpgroup, reading both straight from shared memory. It finds them through
#   a descriptor: where the tile starts and how far apart its core matrices
#   are. A core matrix is 8 rows of 16 bytes (8 bfloat16), stored as 128
#   bytes in a row:
#
#     LBO (leading byte offset)  from one core matrix to the next along k
#     SBO (stride byte offset)   from one core matrix to the next along the
#                                rows (M for A, N for B), 8 rows further
#
#   WGMMADescriptor.create[SBO, LBO](pointer) takes both in units of 16
#   bytes, not bytes. The hardware checks neither: a wrong stride reads the
#   wrong values, or memory outside the tile.
#
# The tiles here: TMA copies boxes of 64 rows x 8 values (16 bytes a row), so
# one box is 8 core matrices one after another (SBO = 128 bytes). A step's
# 64 x 16 tile of a is two boxes: k 0..7 at a_smem's start, k 8..15 right
# after it (LBO = 64 * 16 = 1024 bytes). The same for w.
#
# wgmma leaves the result in registers: each thread holds 32 float32 values
# of the block's 64 x 64 tile. Warp q (q = thread // 32) holds rows 16q to
# 16q + 15, and in it, with g = lane // 4 and t = lane % 4, acc[i] is
#
#     row 16q + g + 8 * ((i // 2) % 2),   col 8 * (i // 4) + 2t + i % 2
#
# (as p33's C fragment, repeated for each 8 columns: i // 4 picks them).
#ko 퍼즐 36(보너스, sm_90): Hopper 행렬 곱의 한 걸음. TMA가 타일을 가져오고
#ko wgmma가 곱합니다.
#ko
#ko a(m x k)와 w(n x k), 둘 다 bfloat16에 대해 output = a @ w^T입니다. 선형
#ko 레이어가 x @ W^T를 계산하는 것과 같고, output은 float32입니다. 스레드
#ko 128개의 블록(워프그룹 하나: 워프 4개)이 output의 64 x 64 타일 하나를 맡고
#ko k를 따라 16씩 걸어갑니다. p16과 p33에서 블록이 손으로 하던 일을 Hopper의
#ko 장치 둘이 합니다:
#ko
#ko   TMA(텐서 메모리 가속기)는 텐서의 상자 하나를 전역 메모리에서 공유 메모리로
#ko   스스로 복사합니다. 스레드 하나가 명령만 하고, 데이터를 옮기는 스레드는
#ko   없습니다. 결과는 mbarrier(p29)에 알립니다. 배리어는 몇 바이트를 기다릴지
#ko   듣고(expect_bytes), 복사마다 가져온 만큼을 더하며, 모두 도착하면 페이즈가
#ko   끝납니다. wait(phase)는 그때까지 기다립니다.
#ko
#ko   wgmma는 워프그룹 전체를 위해 A의 64 x 16 타일과 B의 16 x 64 타일을
#ko   곱하며, 둘 다 공유 메모리에서 바로 읽습니다. 타일은 디스크립터로 찾습니다:
#ko   타일이 어디서 시작하는지, 코어 행렬들이 얼마나 떨어져 있는지. 코어 행렬은
#ko   16바이트(bfloat16 8개)짜리 행 8개이고, 128바이트로 이어서 저장됩니다:
#ko
#ko     LBO(leading byte offset)  k를 따라 다음 코어 행렬까지
#ko     SBO(stride byte offset)   행(A는 M, B는 N)을 따라 8행 아래의 다음
#ko                               코어 행렬까지
#ko
#ko   WGMMADescriptor.create[SBO, LBO](pointer)는 둘 다 바이트가 아니라
#ko   16바이트 단위로 받습니다. 하드웨어는 어느 쪽도 확인하지 않습니다. 틀린
#ko   간격은 틀린 값을, 또는 타일 밖의 메모리를 읽습니다.
#ko
#ko 여기서의 타일: TMA는 64행 x 값 8개(행마다 16바이트)짜리 상자를 복사하므로
#ko 상자 하나는 코어 행렬 8개가 차례로 놓인 것입니다(SBO = 128바이트). 한
#ko 걸음의 a 타일 64 x 16은 상자 둘입니다: k 0..7은 a_smem의 시작에, k 8..15는
#ko 바로 그 뒤에(LBO = 64 * 16 = 1024바이트). w도 같습니다.
#ko
#ko wgmma는 결과를 레지스터에 남깁니다. 스레드마다 블록의 64 x 64 타일 중
#ko float32 값 32개를 가집니다. 워프 q(q = thread // 32)가 16q행부터 16q + 15행을
#ko 가지고, 그 안에서 g = lane // 4, t = lane % 4일 때 acc[i]는
#ko
#ko     행 16q + g + 8 * ((i // 2) % 2),   열 8 * (i // 4) + 2t + i % 2
#ko
#ko 입니다(p33의 C 프래그먼트가 8열마다 되풀이된 것: i // 4가 그 8열을 고릅니다).

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.host import DeviceContext
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.compute.mma import (
    WGMMADescriptor,
    wgmma_async,
    wgmma_fence_aligned,
    wgmma_commit_group_sync,
    wgmma_wait_group_sync,
)
from layout import Layout, LayoutTensor, TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
from layout.tma_async import TMATensorTile, create_tma_tile, SharedMemBarrier
from std.utils.coord import Coord

comptime bf16 = DType.bfloat16
comptime f32 = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
#ko 행 rows개 x 열 cols개의 행렬, 행 다음에 행으로 저장: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# One wgmma: a 64 x 16 tile of A times a 16 x 64 tile of B. Keep these: the
# workbook launches your function with them.
#ko wgmma 한 번: A의 64 x 16 타일 곱하기 B의 16 x 64 타일. 그대로 두세요:
#ko 워크북이 이 값으로 함수를 실행합니다.
comptime BM = 64
comptime BN = 64
comptime BK = 16
# bfloat16 values in one row of a core matrix (16 bytes).
#ko 코어 행렬의 한 행에 든 bfloat16 값 개수(16바이트).
comptime CORE = 8
# One warpgroup.
#ko 워프그룹 하나.
comptime THREADS = 128
# A tile in shared memory: two boxes of rows x CORE, one after the other.
#ko 공유 메모리의 타일: rows x CORE 상자 둘이 차례로.
comptime SharedTile[rows: Int] = LayoutTensor[
    bf16, Layout.row_major(2 * rows, CORE), MutAnyOrigin,
    address_space=AddressSpace.SHARED, alignment=128,
]


@__llvm_arg_metadata(a_tma, `nvvm.grid_constant`)
@__llvm_arg_metadata(w_tma, `nvvm.grid_constant`)
def matmul_kernel[m: Int, k: Int, n: Int, a_box: Coord, w_box: Coord](
    output: TileTensor[mut=True, f32, Matrix[m, n], MutAnyOrigin],
    a_tma: TMATensorTile[bf16, a_box],
    w_tma: TMATensorTile[bf16, w_box],
):
    var tid = thread_idx.x
    var row0 = block_idx.y * BM  # the block's first row of output (and of a)
    #ko 블록이 맡은 output의(그리고 a의) 첫 행
    var col0 = block_idx.x * BN  # its first column of output (a row of w)
    #ko 블록이 맡은 output의 첫 열(w의 행)
    var a_smem = SharedTile[BM].stack_allocation()
    var w_smem = SharedTile[BN].stack_allocation()
    # The mbarrier the copies report to, in shared memory.
    #ko 복사가 알리는 mbarrier, 공유 메모리에 있습니다.
    var bar_space = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())
    var bar = bar_space.ptr.bitcast[SharedMemBarrier]()
    if tid == 0:
        bar[0].init()  # one arrival per phase: thread 0's expect_bytes
        #ko 페이즈마다 도착 하나: 스레드 0의 expect_bytes
    barrier()
    var acc = SIMD[f32, BN // 2](0)
    # The parity of the phase this step waits for: 0, 1, 0, ...
    var phase: UInt32 = 0

    for step in range(k // BK):
        # FILL IN: thread 0 tells the barrier how many bytes this step's copies
        # bring (bar[0].expect_bytes(Int32(...))) and starts them: for each half
        # h = 0, 1 of the step's 16 values of k, a_tma.async_copy(tile, bar[0],
        # (column, row)) copies the box of a at that column and row into
        # a_smem.tile[BM, CORE](h, 0), and the same for w into w_smem. Then
        # every thread waits for this step's phase: bar[0].wait(UInt32(...)); a
        # phase's parity alternates, 0, 1, 0, ... (about 9 lines)
        #ko FILL IN: 스레드 0이 이번 걸음의 복사가 가져올 바이트 수를 배리어에
        #ko 알리고(bar[0].expect_bytes(Int32(...))) 복사를 시작합니다. 걸음의 k 값
        #ko 16개 중 절반 h = 0, 1마다 a_tma.async_copy(tile, bar[0], (열, 행))이
        #ko 그 열과 행에 있는 a의 상자를 a_smem.tile[BM, CORE](h, 0)에 복사하고, w도
        #ko 같은 식으로 w_smem에 복사합니다. 그다음 모든 스레드가 이번 걸음의
        #ko 페이즈를 기다립니다: bar[0].wait(UInt32(...)). 페이즈의 패리티는 0, 1,
        #ko 0, ... 으로 번갈아 바뀝니다. (9줄 정도)
        #| pass
        if tid == 0:
            bar[0].expect_bytes(Int32(2 * (BM + BN) * CORE * 2))
            for h in range(2):
                var k0 = step * BK + h * CORE
                a_tma.async_copy(a_smem.tile[BM, CORE](h, 0), bar[0], (k0, row0))
                w_tma.async_copy(w_smem.tile[BN, CORE](h, 0), bar[0], (k0, col0))
        bar[0].wait(phase)
        phase ^= 1
        # END FILL IN

        # FILL IN: the two descriptors, a_desc for a_smem and w_desc for w_smem:
        # WGMMADescriptor.create[SBO, LBO](tile.ptr), both offsets in units of
        # 16 bytes (the header says what they are here). (2 lines)
        #ko FILL IN: 디스크립터 둘, a_smem의 a_desc와 w_smem의 w_desc:
        #ko WGMMADescriptor.create[SBO, LBO](tile.ptr). 두 간격 모두 16바이트
        #ko 단위입니다(여기서 얼마인지는 머리말에 있습니다). (2줄)
        #| var a_desc = WGMMADescriptor.create[0, 0](a_smem.ptr)
        #| var w_desc = WGMMADescriptor.create[0, 0](w_smem.ptr)
        var a_desc = WGMMADescriptor.create[128 // 16, BM * CORE * 2 // 16](a_smem.ptr)
        var w_desc = WGMMADescriptor.create[128 // 16, BN * CORE * 2 // 16](w_smem.ptr)
        # END FILL IN

        # The warpgroup's multiply: fence (the registers of acc are ready),
        # start it, close the group, wait for it. acc += A tile x W tile^T.
        #ko 워프그룹의 곱셈: 펜스(acc의 레지스터가 준비됨), 시작, 그룹 닫기,
        #ko 기다리기. acc += A 타일 x W 타일^T.
        wgmma_fence_aligned()
        acc = wgmma_async[BM, BN, BK, a_type=bf16, b_type=bf16](a_desc, w_desc, acc)
        wgmma_commit_group_sync()
        wgmma_wait_group_sync()
        # Every warp has read the tiles: only now may the next step's copies
        # overwrite them.
        #ko 모든 워프가 타일을 다 읽었습니다. 이제야 다음 걸음의 복사가 타일을
        #ko 덮어써도 됩니다.
        barrier()

    # FILL IN: write each acc[i] to its place in output, by the map in the
    # header (the block's tile starts at row0, col0). (about 6 lines)
    #ko FILL IN: acc[i]를 머리말의 배치대로 output의 제자리에 씁니다(블록의
    #ko 타일은 row0, col0에서 시작합니다). (6줄 정도)
    #| _ = acc
    var q = tid // WARP_SIZE
    var g = lane_id() // 4
    var t = lane_id() % 4
    # Row g first (i % 4 < 2), then row g + 8, each 8-column group in turn.
    for half in range(2):
        for group in range(BN // 8):
            for j in range(2):
                var i = 4 * group + 2 * half + j
                output[row0 + 16 * q + g + 8 * half, col0 + 8 * group + 2 * t + j] = acc[i]
    # END FILL IN


def matmul_tma_wgmma[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, f32, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, bf16, Matrix[m, k], ImmutAnyOrigin],
    w: TileTensor[mut=False, bf16, Matrix[n, k], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    # The host side, given: a TMA descriptor for each of a and w (their boxes
    # of BM x CORE and BN x CORE values), then one block per 64 x 64 tile.
    #ko 호스트 쪽(주어짐): a와 w에 TMA 디스크립터를 하나씩 만들고(상자 크기는
    #ko BM x CORE와 BN x CORE 값), 64 x 64 타일마다 블록 하나를 띄웁니다.
    comptime assert m % BM == 0 and n % BN == 0 and k % BK == 0, "m, n: multiples of 64; k: of 16"
    #ko= comptime assert m % BM == 0 and n % BN == 0 and k % BK == 0, "m, n은 64의 배수, k는 16의 배수여야 합니다"
    var a_tma = create_tma_tile[BM, CORE](ctx, a.to_layout_tensor())
    var w_tma = create_tma_tile[BN, CORE](ctx, w.to_layout_tensor())
    comptime kernel = matmul_kernel[m, k, n, type_of(a_tma).tile_shape, type_of(w_tma).tile_shape]
    ctx.enqueue_function[kernel](output, a_tma, w_tma, grid_dim=(n // BN, m // BM), block_dim=THREADS)
