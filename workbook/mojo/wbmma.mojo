# wbmma: tensor cores on the simulator, for `from max.gpu.compute.mma import mma` and
# `from layout.tensor_core import TensorCore`.
#
# A tensor-core operation is a warp operation: the 32 lanes each hold a few elements
# of A, B and C (their fragments), and the hardware multiplies the whole matrices.
# Which lane holds which element is fixed by NVIDIA (PTX ISA, "Matrix fragments for
# mma.m16n8k8" and "... mma.m16n8k16"); with groupID g = lane // 4 and
# threadID_in_group t = lane % 4:
#
#   m16n8k8, .tf32 (float32 data)     A 16 x 8 (row-major), B 8 x 8 (column-major), C/D 16 x 8
#     a[i]: row g + 8 * (i % 2), col t + 4 * (i // 2)           i = 0..3
#     b[i]: row t + 4 * i, col g                                i = 0..1
#     c[i]: row g + 8 * (i // 2), col 2 * t + i % 2             i = 0..3
#   m16n8k16, .f16 / .bf16             A 16 x 16, B 16 x 8, C/D 16 x 8
#     a[i]: row g + 8 * ((i // 2) % 2), col 2 * t + i % 2 + 8 * (i // 4)   i = 0..7
#     b[i]: row 2 * t + i % 2 + 8 * (i // 2), col g                        i = 0..3
#     c[i]: as above
#
# Here every lane of the warp brings its fragments (wbwarp's meeting point), the
# matrices are put back together from them by that map, and each lane takes its own
# elements of D = A * B + C. A lane that loaded its fragment in another layout puts
# its values at the wrong places of A or B, and gets the same wrong D a GPU gives.
#
# Precision, as the H100's build does it: for float32 data, max 26.7 hands the float32
# registers to mma.sync ... .tf32 as they are (its PTX has no cvt.rna.tf32.f32), and
# the tensor core reads only the top 19 bits of each (sign, 8 exponent bits, 10
# fraction bits): the low 13 bits are dropped, a truncation toward zero. The products
# of two such values are exact in float64, and so is their sum here; D is that sum
# plus C, rounded once to float32. A GPU's adder may round the sum differently in the
# last bit or so (NVIDIA does not document it): puzzles choose values whose sums are
# exact in float32, where every order and every rounding agree, and a tolerance where
# they are not.
#
# TensorCore is max 26.7's, for float32 data and the 16 x 8 x 8 shape on an NVIDIA GPU:
# load_a, load_b and load_c read each lane's elements of one MMA tile (a LayoutTensor,
# shared or global memory: every read is watched and named by the learner's line),
# mma_op is the warp operation, store_d writes each lane's elements of D. The
# fragments are per-thread LayoutTensors of the same types as the real ones'.

from std.ffi import external_call
from std.memory import bitcast
from std.reflection import call_location, SourceLocation
from std.utils import IndexList
from layout import Layout, LayoutTensor
from max.gpu.memory import AddressSpace as _Space
from wbwarp import _arrive, _fetch, lane_id, WARP_SIZE

comptime _MMA = 7  # after wbwarp's operation ids (1 to 6); wbsim.c counts each kind apart
comptime _SLOT_FLOATS = 16  # a lane brings at most 16 float32 values (64 bytes)


@always_inline
def _tf32(x: Float32) -> Float64:
    """What a tensor core reads of a float32 register given as .tf32: its top 19 bits
    (the low 13 bits of the fraction dropped, toward zero). NaN and infinity stay so."""
    var bits = bitcast[DType.uint32](x)
    return Float64(bitcast[DType.float32](bits & UInt32(0xFFFFE000)))


@always_inline
def _a_place[k16: Bool](i: Int, lane: Int) -> Tuple[Int, Int]:
    """(row, col) in A of element i of `lane`'s fragment."""
    var g = lane // 4
    var t = lane % 4
    comptime if k16:
        return (g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4))
    else:
        return (g + 8 * (i % 2), t + 4 * (i // 2))


@always_inline
def _b_place[k16: Bool](i: Int, lane: Int) -> Tuple[Int, Int]:
    """(row, col) in B (K x 8) of element i of `lane`'s fragment."""
    var g = lane // 4
    var t = lane % 4
    comptime if k16:
        return (2 * t + i % 2 + 8 * (i // 2), g)
    else:
        return (t + 4 * i, g)


@always_inline
def _c_place(i: Int, lane: Int) -> Tuple[Int, Int]:
    """(row, col) in C and D (16 x 8) of element i of `lane`'s fragment."""
    return (lane // 4 + 8 * (i // 2), 2 * (lane % 4) + i % 2)


@always_inline
def _mma_at(a: SIMD, b: SIMD, c: SIMD[DType.float32, 4], at: SourceLocation) -> SIMD[DType.float32, 4]:
    """D = A * B + C over the warp: this lane's four elements of D."""
    comptime k16 = a.length == 8
    comptime K = 16 if k16 else 8
    comptime na = Int(a.length)
    comptime nb = Int(b.length)
    var mine = SIMD[DType.float32, _SLOT_FLOATS](0)
    comptime for i in range(na):
        mine[i] = a[i].cast[DType.float32]()
    comptime for i in range(nb):
        mine[na + i] = b[i].cast[DType.float32]()
    _arrive(mine, _MMA, at)
    # A (16 x K) and B (K x 8), put back together from every lane's fragments.
    var A = SIMD[DType.float64, 256](0)
    var B = SIMD[DType.float64, 128](0)
    for src in range(WARP_SIZE):
        var got = _fetch(src, mine)
        comptime for i in range(na):
            var place = _a_place[k16](i, src)
            A[place[0] * K + place[1]] = _tf32(got[i]) if not k16 else Float64(got[i])
        comptime for i in range(nb):
            var place = _b_place[k16](i, src)
            B[place[0] * 8 + place[1]] = _tf32(got[na + i]) if not k16 else Float64(got[na + i])
    var lane = lane_id()
    var d = SIMD[DType.float32, 4](0)
    comptime for i in range(4):
        var place = _c_place(i, lane)
        var s = Float64(0)
        for kk in range(K):
            s += A[place[0] * K + kk] * B[kk * 8 + place[1]]
        d[i] = Float32(s + Float64(c[i]))
    return d


@always_inline
def mma[block_size: Int = 1](mut d: SIMD, a: SIMD, b: SIMD, c: SIMD):
    """max.gpu.compute.mma.mma on the simulator: d = a * b + c over the warp, for
    float32 data (m16n8k8, read as tf32) or float16 / bfloat16 data (m16n8k16), with
    float32 accumulators. Every lane of the warp must call it together."""
    comptime assert (
        d.dtype == DType.float32 and c.dtype == DType.float32 and d.length == 4 and c.length == 4
    ), "the simulator runs mma with float32 accumulators: c and d are SIMD[DType.float32, 4]"
    comptime assert a.dtype == b.dtype, "a and b must have the same dtype"
    comptime assert (a.dtype == DType.float32 and a.length == 4 and b.length == 2) or (
        (a.dtype == DType.float16 or a.dtype == DType.bfloat16) and a.length == 8 and b.length == 4
    ), (
        "the simulator runs mma on float32 fragments (a: 4, b: 2 values, m16n8k8 as tf32) or float16 /"
        " bfloat16 fragments (a: 8, b: 4 values, m16n8k16)"
    )
    var got = _mma_at(a, b, rebind[SIMD[DType.float32, 4]](c), call_location())
    d = rebind[type_of(d)](got)


struct TensorCore[
    out_type: DType,
    in_type: DType,
    shape: IndexList[3],
    transpose_b: Bool = False,
](Defaultable, ImplicitlyCopyable):
    """layout.tensor_core.TensorCore on the simulator: float32 data, 16 x 8 x 8."""

    comptime a_reg_type = SIMD[Self.in_type, 4]
    comptime b_reg_type = SIMD[Self.in_type, 2]
    comptime c_reg_type = SIMD[Self.out_type, 4]
    comptime a_reg_tile_type = LayoutTensor[
        Self.in_type, Layout.col_major(1, 4), MutAnyOrigin, address_space=_Space.GENERIC
    ]
    comptime b_reg_tile_type = LayoutTensor[
        Self.in_type, Layout.row_major(2, 1), MutAnyOrigin, address_space=_Space.GENERIC
    ]
    comptime c_reg_tile_type = LayoutTensor[
        Self.out_type, Layout.col_major(1, 4), MutAnyOrigin, address_space=_Space.GENERIC
    ]

    def __init__(out self):
        comptime assert (
            Self.in_type == DType.float32 and Self.out_type == DType.float32
        ), "the simulator's TensorCore takes float32 data and accumulators (TensorCore[DType.float32, DType.float32, ...])"
        comptime assert (
            Self.shape[0] == 16 and Self.shape[1] == 8 and Self.shape[2] == 8
        ), "the simulator's TensorCore has the shape float32 data has on an NVIDIA GPU: Index(16, 8, 8)"
        comptime assert not Self.transpose_b, "the simulator's TensorCore does not take transpose_b"

    @always_inline
    def load_a(self, a: LayoutTensor) -> Self.a_reg_tile_type:
        """This lane's four elements of a 16 x 8 tile of A."""
        comptime assert (
            a.shape[0]() == 16 and a.shape[1]() == 8
        ), "load_a takes one 16 x 8 tile of A (MMA_M x MMA_K): tile[16, 8](...)"
        var frag = Self.a_reg_tile_type.stack_allocation()
        var lane = lane_id()
        comptime for i in range(4):
            var place = _a_place[False](i, lane)
            frag[0, i] = rebind[Scalar[Self.in_type]](a[place[0], place[1]][0].cast[Self.in_type]())
        return frag

    @always_inline
    def load_b(self, b: LayoutTensor) -> Self.b_reg_tile_type:
        """This lane's two elements of an 8 x 8 tile of B."""
        comptime assert (
            b.shape[0]() == 8 and b.shape[1]() == 8
        ), "load_b takes one 8 x 8 tile of B (MMA_K x MMA_N): tile[8, 8](...)"
        var frag = Self.b_reg_tile_type.stack_allocation()
        var lane = lane_id()
        comptime for i in range(2):
            var place = _b_place[False](i, lane)
            frag[i, 0] = rebind[Scalar[Self.in_type]](b[place[0], place[1]][0].cast[Self.in_type]())
        return frag

    @always_inline
    def load_c(self, c: LayoutTensor) -> Self.c_reg_tile_type:
        """This lane's four elements of a 16 x 8 tile of C."""
        comptime assert (
            c.shape[0]() == 16 and c.shape[1]() == 8
        ), "load_c takes one 16 x 8 tile of C (MMA_M x MMA_N): tile[16, 8](...)"
        var frag = Self.c_reg_tile_type.stack_allocation()
        var lane = lane_id()
        comptime for i in range(4):
            var place = _c_place(i, lane)
            frag[0, i] = rebind[Scalar[Self.out_type]](c[place[0], place[1]][0].cast[Self.out_type]())
        return frag

    @always_inline
    def store_d(self, d_dst: LayoutTensor[mut=True, ...], d_src: LayoutTensor):
        """This lane's four elements of D, written to a 16 x 8 tile."""
        comptime assert (
            d_dst.shape[0]() == 16 and d_dst.shape[1]() == 8
        ), "store_d writes one 16 x 8 tile of D (MMA_M x MMA_N): tile[16, 8](...)"
        var lane = lane_id()
        comptime for i in range(4):
            var place = _c_place(i, lane)
            d_dst[place[0], place[1]] = rebind[type_of(d_dst[0, 0])](
                SIMD[d_dst.dtype, 1](d_src[0, i][0].cast[d_dst.dtype]())
            )

    @always_inline
    def mma_op(self, a: LayoutTensor, b: LayoutTensor, c: LayoutTensor) -> Self.c_reg_tile_type:
        """D = A * B + C: the warp operation."""
        var av = SIMD[DType.float32, 4](0)
        var bv = SIMD[DType.float32, 2](0)
        var cv = SIMD[DType.float32, 4](0)
        comptime for i in range(4):
            av[i] = a[0, i][0].cast[DType.float32]()
            cv[i] = c[0, i][0].cast[DType.float32]()
        comptime for i in range(2):
            bv[i] = b[i, 0][0].cast[DType.float32]()
        var dv = _mma_at(av, bv, cv, call_location())
        var d = Self.c_reg_tile_type.stack_allocation()
        comptime for i in range(4):
            d[0, i] = rebind[Scalar[Self.out_type]](dv[i].cast[Self.out_type]())
        return d
