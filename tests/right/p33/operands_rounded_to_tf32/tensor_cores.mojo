# A RIGHT KERNEL WRITTEN ANOTHER WAY (operands_rounded_to_tf32): each lane rounds its fragments to the nearest tf32 itself before the mma.
# Puzzle 33: matrix multiply on tensor cores, output = a @ b for a (m x k) and
# b (k x n), in float32.
#
# A tensor core multiplies small matrices in one step for a whole warp: with
# float32 data on an NVIDIA GPU, D = A * B + C where A is 16 x 8, B is 8 x 8
# and C, D are 16 x 8 (MMA_M x MMA_K, MMA_K x MMA_N, MMA_M x MMA_N). No lane
# holds a whole matrix: each of the 32 lanes holds a few elements of each, its
# fragments, at places NVIDIA fixes (PTX ISA, "Matrix fragments for
# mma.m16n8k8"). With g = lane // 4 and t = lane % 4:
#
#   A (16 x 8): 4 values a[0..3]        B (8 x 8): 2 values b[0..1]
#        col t    col t + 4                  col g
#   row g      a[0]  a[2]               row t      b[0]
#   row g + 8  a[1]  a[3]               row t + 4  b[1]
#
#   C and D (16 x 8): 4 values c[0..3]
#              col 2t   col 2t + 1
#   row g      c[0]     c[1]
#   row g + 8  c[2]     c[3]
#
# Lane 0 (g = 0, t = 0) holds A[0, 0], A[8, 0], A[0, 4], A[8, 4]; lane 5
# (g = 1, t = 1) holds A[1, 1], A[9, 1], A[1, 5], A[9, 5]. A value in the wrong
# slot is not an error the hardware sees: it multiplies it as the element that
# slot stands for.
#
# Tensor float 32: the tensor core reads only the top 19 bits of each float32
# of A and B (sign, 8 exponent bits, 10 fraction bits, where float32 has 23),
# and adds the products in float32.
#
#   matmul_mma          part `fragments`:   one warp per 16 x 8 tile of the
#                                           output; the warp walks along k, 8
#                                           at a time, and each lane loads its
#                                           own fragments from global memory.
#   matmul_tensor_core  part `tensor_core`: blocks of 4 warps per 32 x 32 tile;
#                                           tiles of a and b staged in shared
#                                           memory, and TensorCore's load_a,
#                                           load_b, load_c, mma_op and store_d
#                                           do the fragments for you.
#ko 퍼즐 33: 텐서 코어로 하는 행렬 곱. a (m x k)와 b (k x n)에 대해
#ko output = a @ b, float32로.
#ko
#ko 텐서 코어는 워프 전체를 위해 작은 행렬 곱을 한 번에 합니다. NVIDIA GPU에서
#ko float32 데이터라면 D = A * B + C이고, A는 16 x 8, B는 8 x 8, C와 D는
#ko 16 x 8입니다(MMA_M x MMA_K, MMA_K x MMA_N, MMA_M x MMA_N). 어느 레인도
#ko 행렬 전체를 갖지 않습니다. 32개 레인이 각자 몇 개의 원소, 즉 자기
#ko 프래그먼트를 NVIDIA가 정한 자리에 맞춰 갖습니다(PTX ISA, "Matrix
#ko fragments for mma.m16n8k8"). g = lane // 4, t = lane % 4일 때:
#ko
#ko   A (16 x 8): 값 4개 a[0..3]         B (8 x 8): 값 2개 b[0..1]
#ko        열 t      열 t + 4                  열 g
#ko   행 g      a[0]  a[2]               행 t      b[0]
#ko   행 g + 8  a[1]  a[3]               행 t + 4  b[1]
#ko
#ko   C와 D (16 x 8): 값 4개 c[0..3]
#ko              열 2t    열 2t + 1
#ko   행 g      c[0]     c[1]
#ko   행 g + 8  c[2]     c[3]
#ko
#ko 레인 0(g = 0, t = 0)은 A[0, 0], A[8, 0], A[0, 4], A[8, 4]를, 레인 5
#ko (g = 1, t = 1)는 A[1, 1], A[9, 1], A[1, 5], A[9, 5]를 갖습니다. 잘못된
#ko 칸에 들어간 값은 하드웨어가 알아채는 오류가 아닙니다. 그 칸이 뜻하는
#ko 원소로 보고 그대로 곱합니다.
#ko
#ko Tensor float 32: 텐서 코어는 A와 B의 float32마다 위쪽 19비트만 읽고
#ko (부호, 지수 8비트, 가수 10비트. float32의 가수는 23비트), 곱을 float32로
#ko 더합니다.
#ko
#ko   matmul_mma          파트 `fragments`:   출력의 16 x 8 타일마다 워프
#ko                                           하나. 워프는 k를 따라 8씩 나아가고,
#ko                                           레인마다 자기 프래그먼트를 전역
#ko                                           메모리에서 읽습니다.
#ko   matmul_tensor_core  파트 `tensor_core`: 32 x 32 타일마다 워프 4개짜리
#ko                                           블록. a와 b의 타일을 공유 메모리에
#ko                                           올리고, TensorCore의 load_a,
#ko                                           load_b, load_c, mma_op, store_d가
#ko                                           프래그먼트를 대신 다룹니다.

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.compute.mma import mma
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
from layout.tensor_core import TensorCore
from std.utils import Index
from std.memory import bitcast

comptime dtype = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
#ko 행 rows개, 열 cols개로 한 행씩 저장된 행렬: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The shape of one tensor-core operation on float32 data. Keep these: the
# workbook launches your kernels with them.
#ko float32 데이터에서 텐서 코어 연산 하나의 모양. 바꾸지 마세요. 워크북이
#ko 이 값으로 커널을 실행합니다.
comptime MMA_M = 16
comptime MMA_N = 8
comptime MMA_K = 8
# Part `tensor_core`: a block's tile of the output (BM x BN), the slice of k
# it stages at a time (BK), and each warp's tile of the block's (WM x WN):
# 2 x 2 warps of 16 x 16, each two MMA tiles side by side.
#ko 파트 `tensor_core`: 블록이 맡는 출력 타일(BM x BN), 한 번에 올리는 k의
#ko 조각(BK), 블록 타일 안에서 워프마다 맡는 타일(WM x WN): 16 x 16 워프
#ko 2 x 2개, 워프마다 MMA 타일 두 개를 나란히.
comptime BM = 32
comptime BN = 32
comptime BK = 16
comptime WM = 16
comptime WN = 16
comptime THREADS = (BM // WM) * (BN // WN) * WARP_SIZE


def to_tf32[width: Int](x: SIMD[dtype, width]) -> SIMD[dtype, width]:
    # The nearest tf32 (ties away from zero, as cvt.rna): add half of the last kept bit,
    # then drop the 13 low bits.
    var bits = bitcast[DType.uint32](x)
    return bitcast[dtype]((bits + 0x1000) & 0xFFFFE000)


def at_or_zero[rows: Int, cols: Int](
    x: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin], row: Int, col: Int
) -> Scalar[dtype]:
    # x[row, col], or 0 outside x: the zeros pad a last, partial tile, and add nothing.
    #ko x[row, col], x 밖이면 0: 0은 마지막의 덜 찬 타일을 채우고, 합에 아무것도 더하지 않습니다.
    if row < rows and col < cols:
        return x[row, col][0]
    return 0


# ---------------------------------------------------------------------------
# Part `fragments`: one warp per 16 x 8 tile, fragments loaded by hand.
# ---------------------------------------------------------------------------
#ko 파트 `fragments`: 16 x 8 타일마다 워프 하나, 프래그먼트는 직접 읽기.


def matmul_mma[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var lane = lane_id()
    var g = lane // 4
    var t = lane % 4
    # This warp's tile of the output: rows row0 .. row0 + 15, cols col0 .. col0 + 7.
    #ko 이 워프가 맡는 출력 타일: 행 row0 .. row0 + 15, 열 col0 .. col0 + 7.
    var row0 = block_idx.y * MMA_M
    var col0 = block_idx.x * MMA_N
    # This lane's four elements of the tile's sum (its C and D fragment).
    #ko 이 레인이 갖는 타일 합의 원소 네 개(C이자 D 프래그먼트).
    var acc = SIMD[dtype, 4](0)

    # FILL IN: walk along k in steps of MMA_K (a last step may be partial:
    # at_or_zero pads it). At each step k0, build this lane's fragments by the
    # maps in the header: a_frag (4 values) from the 16 x 8 block of a at rows
    # row0.., cols k0.., and b_frag (2 values) from the 8 x 8 block of b at
    # rows k0.., cols col0..; then mma(acc, a_frag, b_frag, acc) adds their
    # product to acc. Every lane of the warp must call mma, together.
    # (about 9 lines)
    #ko FILL IN: k를 따라 MMA_K씩 나아갑니다(마지막 걸음은 모자랄 수 있고,
    #ko at_or_zero가 0으로 채웁니다). 걸음 k0마다 머리말의 배치대로 이 레인의
    #ko 프래그먼트를 만듭니다. a_frag(값 4개)는 a의 행 row0.., 열 k0..에 있는
    #ko 16 x 8 블록에서, b_frag(값 2개)는 b의 행 k0.., 열 col0..에 있는 8 x 8
    #ko 블록에서. 그다음 mma(acc, a_frag, b_frag, acc)가 둘의 곱을 acc에
    #ko 더합니다. 워프의 모든 레인이 함께 mma를 불러야 합니다. (9줄 정도)
    #| _ = g
    #| _ = t
    for k0 in range(0, k, MMA_K):
        var a_frag = SIMD[dtype, 4](
            at_or_zero(a, row0 + g, k0 + t),
            at_or_zero(a, row0 + g + 8, k0 + t),
            at_or_zero(a, row0 + g, k0 + t + 4),
            at_or_zero(a, row0 + g + 8, k0 + t + 4),
        )
        var b_frag = SIMD[dtype, 2](at_or_zero(b, k0 + t, col0 + g), at_or_zero(b, k0 + t + 4, col0 + g))
        mma(acc, to_tf32[4](a_frag), to_tf32[2](b_frag), acc)
    # END FILL IN

    # FILL IN: write acc[i] to its place in the output, by the C/D map in the
    # header, where that place is inside the output. (about 5 lines)
    #ko FILL IN: 머리말의 C/D 배치대로 acc[i]를 출력의 제자리에 씁니다. 그
    #ko 자리가 출력 안에 있을 때만. (5줄 정도)
    #| _ = acc
    for i in range(4):
        var row = row0 + g + 8 * (i // 2)
        var col = col0 + 2 * t + i % 2
        if row < m and col < n:
            output[row, col] = acc[i]
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `tensor_core`: a warp-tiled matmul, tiles staged in shared memory.
# ---------------------------------------------------------------------------
#ko 파트 `tensor_core`: 워프 타일로 나눈 행렬 곱, 타일은 공유 메모리에.


def stage_tiles[m: Int, k: Int, n: Int](
    a_tile: TileTensor[mut=True, dtype, Matrix[BM, BK], ...],
    b_tile: TileTensor[mut=True, dtype, Matrix[BK, BN], ...],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
    row0: Int,
    col0: Int,
    k0: Int,
):
    # The block copies a[row0.., k0..] (BM x BK) and b[k0.., col0..] (BK x BN)
    # into its tiles, zeros past the ends; each thread copies 4 + 4 elements.
    # Every thread of the block must call it.
    #ko 블록이 a[row0.., k0..] (BM x BK)와 b[k0.., col0..] (BK x BN)을 타일로
    #ko 복사하고, 끝을 넘는 칸에는 0을 씁니다. 스레드마다 원소 4 + 4개를 복사합니다.
    #ko 블록의 모든 스레드가 이 함수를 불러야 합니다.
    var tid = thread_idx.x
    for i in range(tid, BM * BK, THREADS):
        a_tile[i // BK, i % BK] = at_or_zero(a, row0 + i // BK, k0 + i % BK)
    for i in range(tid, BK * BN, THREADS):
        b_tile[i // BN, i % BN] = at_or_zero(b, k0 + i // BN, col0 + i % BN)


def matmul_tensor_core[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var tid = thread_idx.x
    # Warps 0 1 / 2 3 over the block's tile: warp_row and warp_col pick its
    # 16 x 16 part.
    #ko 블록 타일 위의 워프 0 1 / 2 3: warp_row와 warp_col이 워프가 맡을
    #ko 16 x 16 부분을 고릅니다.
    var warp = tid // WARP_SIZE
    var warp_row = warp // (BN // WN)
    var warp_col = warp % (BN // WN)
    var row0 = block_idx.y * BM
    var col0 = block_idx.x * BN
    var a_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BM, BK]())
    var b_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BK, BN]())
    # The block's running sum, C: every mma step loads its tile of C, and
    # stores D = A * B + C back in its place.
    #ko 블록의 누적 합 C: mma 걸음마다 C의 자기 타일을 읽고, D = A * B + C를
    #ko 제자리에 다시 씁니다.
    var c_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BM, BN]())
    # One tensor-core operation's worth: float32 in, float32 out, 16 x 8 x 8.
    #ko 텐서 코어 연산 한 번 분량: float32 입력, float32 출력, 16 x 8 x 8.
    var tc = TensorCore[dtype, dtype, Index(MMA_M, MMA_N, MMA_K)]()

    # FILL IN: C starts at 0: the block's threads zero c_tile, each a few
    # elements (the first slice's barrier makes the zeros visible).
    #   Then for each slice k0 = 0, BK, 2 * BK, ... that covers k:
    #   - stage_tiles(...) copies the slice into a_tile and b_tile; barrier;
    #   - for each MMA_K step kk of the slice, and each of the warp's two
    #     MMA_N columns j: tile views with .tile[rows, cols](i, j) (the i-th
    #     block of rows, the j-th of cols) and .to_layout_tensor():
    #       A: a_tile's 16 x 8 tile at (warp_row, kk),
    #       B: b_tile's 8 x 8 tile at (kk, its column index among BN // MMA_N),
    #       C: c_tile's 16 x 8 tile at (warp_row, the same column index);
    #     then tc.load_a, tc.load_b, tc.load_c, tc.mma_op(a, b, c) and
    #     tc.store_d(C, d);
    #   - barrier again, before the next slice overwrites the tiles.
    # (about 18 lines)
    #ko FILL IN: C는 0에서 시작합니다. 블록의 스레드들이 원소 몇 개씩 c_tile을
    #ko 0으로 채웁니다(첫 조각의 barrier가 0을 보이게 합니다).
    #ko   그다음 k를 덮는 조각 k0 = 0, BK, 2 * BK, ...마다:
    #ko   - stage_tiles(...)가 조각을 a_tile과 b_tile에 복사합니다. barrier;
    #ko   - 조각 안의 MMA_K 걸음 kk마다, 그리고 워프가 맡은 MMA_N 열 두 개 j마다
    #ko     .tile[rows, cols](i, j)(행 묶음 i번째, 열 묶음 j번째)와
    #ko     .to_layout_tensor()로 타일을 봅니다:
    #ko       A: a_tile의 (warp_row, kk) 위치 16 x 8 타일,
    #ko       B: b_tile의 (kk, BN // MMA_N개 중 그 열 번호) 위치 8 x 8 타일,
    #ko       C: c_tile의 (warp_row, 같은 열 번호) 위치 16 x 8 타일;
    #ko     그다음 tc.load_a, tc.load_b, tc.load_c, tc.mma_op(a, b, c),
    #ko     tc.store_d(C, d);
    #ko   - 다음 조각이 타일을 덮어쓰기 전에 다시 barrier.
    #ko (18줄 정도)
    #| _ = tc
    #| _ = warp_row
    #| _ = warp_col
    for i in range(tid, BM * BN, THREADS):
        c_tile[i // BN, i % BN] = 0
    for k0 in range(0, k, BK):
        stage_tiles[m, k, n](a_tile, b_tile, a, b, row0, col0, k0)
        barrier()
        for kk in range(BK // MMA_K):
            var a_reg = tc.load_a(a_tile.tile[MMA_M, MMA_K](warp_row, kk).to_layout_tensor())
            for j in range(WN // MMA_N):
                var col = warp_col * (WN // MMA_N) + j
                var b_reg = tc.load_b(b_tile.tile[MMA_K, MMA_N](kk, col).to_layout_tensor())
                var c_view = c_tile.tile[MMA_M, MMA_N](warp_row, col).to_layout_tensor()
                var c_reg = tc.load_c(c_view)
                var d_reg = tc.mma_op(a_reg, b_reg, c_reg)
                tc.store_d(c_view, d_reg)
        barrier()
    # END FILL IN

    # The block's sum, where it is inside the output. The barrier at the end of
    # the last slice made every warp's stores visible here.
    #ko 블록의 합을, 출력 안에 있는 곳만 씁니다. 마지막 조각 끝의 barrier가
    #ko 모든 워프의 저장을 여기서 보이게 했습니다.
    for i in range(tid, BM * BN, THREADS):
        var row = row0 + i // BN
        var col = col0 + i % BN
        if row < m and col < n:
            output[row, col] = c_tile[i // BN, i % BN]
