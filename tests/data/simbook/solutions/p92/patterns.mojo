# Access patterns whose cost on a GPU is known by hand (tests/test_traffic_patterns.py)
# and measured by Nsight Compute (tools/ncu_table.py). Lane i of the one warp moves
# `width` floats at offset + i * stride * width: stride 1 is unit stride, 2 every other
# vector, 0 all lanes at one address; the misaligned patterns start one vector past the
# buffer's start, which is a whole number of 32-byte sectors (a page here; tools/ncu_table.py
# shows what the GPU's allocator gives). `unclaimed`: unit stride, with no alignment said to
# the compiler (it splits such a vector into floats on a GPU); 32b: 8 floats a lane, more
# than one instruction moves (two 128-bit ones on sm_90).
from max.gpu import thread_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime SPAN = 512


@always_inline
def global_pattern[width: Int, stride: Int, offset: Int, align: Int = 4 * width](
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    """A load from global memory with the pattern, and a store to it with the same one."""
    var at = offset + Int(thread_idx.x) * stride * width
    # FILL IN: (nothing to do: this file is a test fixture)
    var v = a.ptr.unsafe_load[width=width, alignment=align](at)
    scratch.ptr.unsafe_store[alignment=align](at, v)


@always_inline
def shared_pattern[width: Int, stride: Int, offset: Int, align: Int = 4 * width](
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    """A store to shared memory with the pattern and a load from it with the same one;
    global memory in and out at unit stride."""
    var lane = Int(thread_idx.x)
    var at = offset + lane * stride * width
    var s = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED, alignment=16](row_major[SPAN]())
    var v = a.ptr.unsafe_load[width=width, alignment=4 * width](lane * width)
    s.ptr.unsafe_store[alignment=align](at, v)
    barrier()
    var w = s.ptr.unsafe_load[width=width, alignment=align](at)
    scratch.ptr.unsafe_store[alignment=4 * width](lane * width, w)


def global_4b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[1, 1, 0](scratch, a)


def global_4b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[1, 2, 0](scratch, a)


def global_4b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[1, 0, 0](scratch, a)


def global_4b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[1, 1, 1](scratch, a)


def global_8b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[2, 1, 0](scratch, a)


def global_8b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[2, 2, 0](scratch, a)


def global_8b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[2, 0, 0](scratch, a)


def global_8b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[2, 1, 2](scratch, a)


def global_16b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[4, 1, 0](scratch, a)


def global_16b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[4, 2, 0](scratch, a)


def global_16b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[4, 0, 0](scratch, a)


def global_16b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[4, 1, 4](scratch, a)


def shared_4b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[1, 1, 0](scratch, a)


def shared_4b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[1, 2, 0](scratch, a)


def shared_4b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[1, 0, 0](scratch, a)


def shared_4b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[1, 1, 1](scratch, a)


def shared_8b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[2, 1, 0](scratch, a)


def shared_8b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[2, 2, 0](scratch, a)


def shared_8b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[2, 0, 0](scratch, a)


def shared_8b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[2, 1, 2](scratch, a)


def shared_16b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[4, 1, 0](scratch, a)


def shared_16b_stride2(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[4, 2, 0](scratch, a)


def shared_16b_broadcast(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[4, 0, 0](scratch, a)


def shared_16b_misaligned(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[4, 1, 4](scratch, a)


def global_8b_unclaimed(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[2, 1, 0, 4](scratch, a)


def global_16b_unclaimed(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[4, 1, 0, 4](scratch, a)


def global_32b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    global_pattern[8, 1, 0](scratch, a)


def shared_8b_unclaimed(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[2, 1, 0, 4](scratch, a)


def shared_16b_unclaimed(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[4, 1, 0, 4](scratch, a)


def shared_32b_unit(
    scratch: TileTensor[mut=True, dtype, Vector[SPAN], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[SPAN], ImmutAnyOrigin],
):
    shared_pattern[8, 1, 0](scratch, a)


def finish_global(done: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin]):
    done[0] = 1.0


def finish_shared(done: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin]):
    done[0] = 1.0
