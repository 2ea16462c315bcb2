# wbwarp: warps on the simulator, for `from max.gpu.primitives import warp`,
# `from max.gpu.primitives.warp import ...` and `lane_id`, `WARP_SIZE`.
#
# A warp is 32 consecutive threads of a block (lane = thread number % 32); a
# block whose size is not a multiple of 32 has a last warp with fewer lanes.
# A warp operation is a meeting point: every lane of the warp still in the
# kernel brings its value (wbsim_warp_arrive), and when all are there each
# reads what it needs of the others' (wbsim_warp_fetch). Lanes that part ways
# at one (some at the operation, some at a barrier() or another operation) are
# a finding, as is a read of a lane that has no thread or has finished.
#
# Only the shuffles and the vote are primitives here; the reductions and the
# scan are made of shuffles, in the same order as on an NVIDIA GPU, so that a
# float sum adds its terms in the order the GPU does and gives the same bits:
# every reduction (sum, max, min and the lane groups) folds with xor shuffles
# at offsets 16, 8, 4, 2, 1, so every lane holds the result (the PTX of
# max 26.7 for sm_90 is a shfl.sync.bfly tree for each of them, and on an H100
# warp.max gave lanes 25-31 the whole warp's maximum); prefix_sum adds shuffles
# up at offsets 1, 2, 4, 8, 16.

from std.ffi import external_call
from std.reflection import call_location, SourceLocation
from std.sys import size_of
from std.utils.numerics import nan

comptime WARP_SIZE = 32

# What each lane brought, told apart by operation (a lane waiting at one operation while
# another lane waits at a different one is a finding).
comptime _SHUFFLE_DOWN = 1
comptime _SHUFFLE_UP = 2
comptime _SHUFFLE_XOR = 3
comptime _SHUFFLE_IDX = 4
comptime _VOTE = 5
comptime _ELECT = 6


@always_inline
def lane_id() -> Int:
    """This thread's lane in its warp: its number in the block, modulo 32."""
    return external_call["wbsim_lane", Int]()


@always_inline
def _arrive[dtype: DType, width: SIMDLength](val: SIMD[dtype, width], op: Int, at: SourceLocation):
    """Bring `val` to a warp operation, and wait until the warp's other lanes have."""
    comptime assert size_of[SIMD[dtype, width]]() <= 64, "a value this wide can't go through a warp operation"
    Pointer[SIMD[dtype, width], MutUntrackedOrigin](unsafe_from_address=external_call["wbsim_warp_in", Int]())[] = val
    var file = at.file_name()
    external_call["wbsim_warp_arrive", NoneType](op, Int(file.unsafe_ptr()), file.byte_length(), at.line(),
                                                 at.column())


@always_inline
def _fetch[dtype: DType, width: SIMDLength](src: Int, own: SIMD[dtype, width]) -> SIMD[dtype, width]:
    """What lane `src` brought. A lane with no thread, or one that finished, has nothing to
    give: the simulator says so (a finding) and the value is NaN (floats) or 0."""
    var address = external_call["wbsim_warp_fetch", Int](src)
    if address != 0:
        return Pointer[SIMD[dtype, width], MutUntrackedOrigin](unsafe_from_address=address)[]
    comptime if dtype.is_floating_point():
        return SIMD[dtype, width](nan[dtype]())
    else:
        return SIMD[dtype, width](0)


@always_inline
def _shuffle[dtype: DType, width: SIMDLength, //](
    op: Int, val: SIMD[dtype, width], offset: Int, at: SourceLocation
) -> SIMD[dtype, width]:
    """NVIDIA's rule: a source lane below 0 or above 31 gives the lane its own value."""
    _arrive(val, op, at)
    var lane = lane_id()
    var src = lane + offset if op == _SHUFFLE_DOWN else (
        lane - offset if op == _SHUFFLE_UP else (lane ^ offset if op == _SHUFFLE_XOR else offset & 31)
    )
    if src < 0 or src >= WARP_SIZE:
        return val
    return _fetch(src, val)


@always_inline
def shuffle_down[dtype: DType, simd_width: SIMDLength, //](
    val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_DOWN, val, Int(offset), call_location())


@always_inline
def shuffle_down[dtype: DType, simd_width: SIMDLength, //](
    mask: UInt, val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    """The mask is not modelled: every lane still in the kernel takes part."""
    return _shuffle(_SHUFFLE_DOWN, val, Int(offset), call_location())


@always_inline
def shuffle_up[dtype: DType, simd_width: SIMDLength, //](
    val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_UP, val, Int(offset), call_location())


@always_inline
def shuffle_up[dtype: DType, simd_width: SIMDLength, //](
    mask: UInt, val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_UP, val, Int(offset), call_location())


@always_inline
def shuffle_xor[dtype: DType, simd_width: SIMDLength, //](
    val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_XOR, val, Int(offset), call_location())


@always_inline
def shuffle_xor[dtype: DType, simd_width: SIMDLength, //](
    mask: UInt, val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_XOR, val, Int(offset), call_location())


@always_inline
def shuffle_idx[dtype: DType, simd_width: SIMDLength, //](
    val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_IDX, val, Int(offset), call_location())


@always_inline
def shuffle_idx[dtype: DType, simd_width: SIMDLength, //](
    mask: UInt, val: SIMD[dtype, simd_width], offset: UInt32
) -> SIMD[dtype, simd_width]:
    return _shuffle(_SHUFFLE_IDX, val, Int(offset), call_location())


# --- reductions, made of shuffles as on the GPU -------------------------------------


@always_inline
def _fold[dtype: DType, width: SIMDLength, //, op: Int, xor: Bool](
    val: SIMD[dtype, width], num_lanes: Int, stride: Int, at: SourceLocation
) -> SIMD[dtype, width]:
    """0 sum, 1 max, 2 min of a lane group, halving the offset from num_lanes / 2 down
    to 1 (times `stride`), with xor shuffles (every lane gets the result) or shuffles
    down (lane 0 of each group does; kept for a learner's own reduce)."""
    var res = val
    var offset = num_lanes // 2
    while offset >= 1:
        var other = _shuffle(_SHUFFLE_XOR if xor else _SHUFFLE_DOWN, res, offset * stride, at)
        comptime if op == 0:
            res = res + other
        elif op == 1:
            res = res.gt(other).select(res, other)
        else:
            res = res.lt(other).select(res, other)
        offset //= 2
    return res


@always_inline
def sum(val: SIMD) -> Scalar[val.dtype]:
    """The sum over the warp, in every lane."""
    return _fold[0, True](val.reduce_add(), WARP_SIZE, 1, call_location())


@always_inline
def max(val: SIMD) -> Scalar[val.dtype]:
    """The warp's maximum, in every lane (an xor butterfly, as max 26.7 compiles it)."""
    return _fold[1, True](val.reduce_max(), WARP_SIZE, 1, call_location())


@always_inline
def min(val: SIMD) -> Scalar[val.dtype]:
    """The warp's minimum, in every lane (an xor butterfly, as max 26.7 compiles it)."""
    return _fold[2, True](val.reduce_min(), WARP_SIZE, 1, call_location())


@always_inline
def lane_group_sum[val_type: DType, simd_width: SIMDLength, //, num_lanes: Int, stride: Int = 1](
    val: SIMD[val_type, simd_width]
) -> SIMD[val_type, simd_width]:
    return _fold[0, True](val, num_lanes, stride, call_location())


@always_inline
def lane_group_sum_and_broadcast[val_type: DType, simd_width: SIMDLength, //, num_lanes: Int, stride: Int = 1](
    val: SIMD[val_type, simd_width]
) -> SIMD[val_type, simd_width]:
    return _fold[0, True](val, num_lanes, stride, call_location())


@always_inline
def lane_group_max[val_type: DType, simd_width: SIMDLength, //, num_lanes: Int, stride: Int = 1](
    val: SIMD[val_type, simd_width]
) -> SIMD[val_type, simd_width]:
    return _fold[1, True](val, num_lanes, stride, call_location())


@always_inline
def lane_group_max_and_broadcast[val_type: DType, simd_width: SIMDLength, //, num_lanes: Int, stride: Int = 1](
    val: SIMD[val_type, simd_width]
) -> SIMD[val_type, simd_width]:
    return _fold[1, True](val, num_lanes, stride, call_location())


@always_inline
def lane_group_min[val_type: DType, simd_width: SIMDLength, //, num_lanes: Int, stride: Int = 1](
    val: SIMD[val_type, simd_width]
) -> SIMD[val_type, simd_width]:
    return _fold[2, True](val, num_lanes, stride, call_location())


@always_inline
def prefix_sum[dtype: DType, //, intermediate_type: DType = dtype, *, output_type: DType = dtype,
               exclusive: Bool = False](x: Scalar[dtype]) -> Scalar[output_type]:
    """A scan over the warp: each lane adds what the lane `offset` below it holds, for
    offsets 1, 2, 4, 8, 16; the exclusive scan then takes the lane below's."""
    var at = call_location()
    var res = x.cast[intermediate_type]()
    var lane = lane_id()
    var offset = 1
    while offset < WARP_SIZE:
        var below = _shuffle(_SHUFFLE_UP, res, offset, at)
        if lane >= offset:
            res += below
        offset *= 2
    comptime if exclusive:
        res = _shuffle(_SHUFFLE_UP, res, 1, at)
        if lane == 0:
            res = 0
    return res.cast[output_type]()


@always_inline
def broadcast[val_type: DType, simd_width: SIMDLength, //](val: SIMD[val_type, simd_width]) -> SIMD[val_type, simd_width]:
    """Lane 0's value, in every lane."""
    return _shuffle(_SHUFFLE_IDX, val, 0, call_location())


@always_inline
def broadcast(val: Int) -> Int:
    return Int(_shuffle(_SHUFFLE_IDX, Int32(val), 0, call_location()))


@always_inline
def broadcast(val: UInt) -> UInt:
    return UInt(Int(_shuffle(_SHUFFLE_IDX, Int32(val), 0, call_location())))


@always_inline
def vote[ret_type: DType](val: Bool) -> Scalar[ret_type]:
    """A ballot: bit i is set where lane i voted True (lanes with no thread vote False)."""
    comptime assert ret_type == DType.uint32, "on an NVIDIA GPU a vote is a 32-bit mask: vote[DType.uint32]"
    _arrive(SIMD[DType.uint8, 1](1 if val else 0), _VOTE, call_location())
    return Scalar[ret_type](external_call["wbsim_warp_ballot", Int]())


@always_inline
def elect_one_sync() -> Bool:
    """True in one lane of the warp (`from max.gpu.primitives.cluster`): every lane still in
    the kernel meets here first. Which lane is not promised: the simulator elects the
    lowest in forward order and the highest in reverse."""
    _arrive(SIMD[DType.uint8, 1](1), _ELECT, call_location())
    return external_call["wbsim_warp_elected", Int]() == lane_id()
