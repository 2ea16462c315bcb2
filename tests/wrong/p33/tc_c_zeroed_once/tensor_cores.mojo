# WRONG ON PURPOSE (tc_c_zeroed_once): Zeroes c_tile with one element a thread, as stage_tiles's loop looks at first glance: the 128 threads clear the first 4 rows of the 32 x 32 tile, and the sums of the other rows start from whatever shared memory held.
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

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.compute.mma import mma
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
from layout.tensor_core import TensorCore
from std.utils import Index

comptime dtype = DType.float32
# A matrix of rows x cols values, stored row after row: t[row, col].
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The shape of one tensor-core operation on float32 data. Keep these: the
# workbook launches your kernels with them.
comptime MMA_M = 16
comptime MMA_N = 8
comptime MMA_K = 8
# Part `tensor_core`: a block's tile of the output (BM x BN), the slice of k
# it stages at a time (BK), and each warp's tile of the block's (WM x WN):
# 2 x 2 warps of 16 x 16, each two MMA tiles side by side.
comptime BM = 32
comptime BN = 32
comptime BK = 16
comptime WM = 16
comptime WN = 16
comptime THREADS = (BM // WM) * (BN // WN) * WARP_SIZE


def at_or_zero[rows: Int, cols: Int](
    x: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin], row: Int, col: Int
) -> Scalar[dtype]:
    # x[row, col], or 0 outside x: the zeros pad a last, partial tile, and add nothing.
    if row < rows and col < cols:
        return x[row, col][0]
    return 0


# ---------------------------------------------------------------------------
# Part `fragments`: one warp per 16 x 8 tile, fragments loaded by hand.
# ---------------------------------------------------------------------------


def matmul_mma[m: Int, k: Int, n: Int](
    output: TileTensor[mut=True, dtype, Matrix[m, n], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[m, k], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[k, n], ImmutAnyOrigin],
):
    var lane = lane_id()
    var g = lane // 4
    var t = lane % 4
    # This warp's tile of the output: rows row0 .. row0 + 15, cols col0 .. col0 + 7.
    var row0 = block_idx.y * MMA_M
    var col0 = block_idx.x * MMA_N
    # This lane's four elements of the tile's sum (its C and D fragment).
    var acc = SIMD[dtype, 4](0)

    # FILL IN: walk along k in steps of MMA_K (a last step may be partial:
    # at_or_zero pads it). At each step k0, build this lane's fragments by the
    # maps in the header: a_frag (4 values) from the 16 x 8 block of a at rows
    # row0.., cols k0.., and b_frag (2 values) from the 8 x 8 block of b at
    # rows k0.., cols col0..; then mma(acc, a_frag, b_frag, acc) adds their
    # product to acc. Every lane of the warp must call mma, together.
    # (about 9 lines)
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
        mma(acc, a_frag, b_frag, acc)
    # END FILL IN

    # FILL IN: write acc[i] to its place in the output, by the C/D map in the
    # header, where that place is inside the output. (about 5 lines)
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
    var warp = tid // WARP_SIZE
    var warp_row = warp // (BN // WN)
    var warp_col = warp % (BN // WN)
    var row0 = block_idx.y * BM
    var col0 = block_idx.x * BN
    var a_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BM, BK]())
    var b_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BK, BN]())
    # The block's running sum, C: every mma step loads its tile of C, and
    # stores D = A * B + C back in its place.
    var c_tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[BM, BN]())
    # One tensor-core operation's worth: float32 in, float32 out, 16 x 8 x 8.
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
    #| _ = tc
    #| _ = warp_row
    #| _ = warp_col
    c_tile[tid // BN, tid % BN] = 0
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
    for i in range(tid, BM * BN, THREADS):
        var row = row0 + i // BN
        var col = col0 + i % BN
        if row < m and col < n:
            output[row, col] = c_tile[i // BN, i % BN]
