# Kernels that exercise the simulator (tests/test_sim.py changes them to make bugs).
from max.gpu import thread_idx, block_idx, block_dim, grid_dim, global_idx, lane_id, WARP_SIZE
from max.gpu.primitives import warp
from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait
from max.gpu.sync import mbarrier_try_wait_parity_shared
from max.gpu.memory import AddressSpace, async_copy, async_copy_commit_group, async_copy_wait_group
from max.gpu.compute.mma import mma
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation
from layout.tensor_core import TensorCore
from std.utils import Index

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Table[n: Int] = type_of(row_major[n, 12]())
comptime Row8[n: Int] = type_of(row_major[n, 8]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
comptime TPB = 4
comptime WARPS = 64
comptime PARTIAL = 40
comptime RING = 64


def ids_kernel[threads: Int](ids: TileTensor[mut=True, dtype, Table[threads], MutAnyOrigin]):
    """Each thread writes every id and size it sees, in its own row."""
    var per_block = block_dim.x * block_dim.y * block_dim.z
    var block = (block_idx.z * grid_dim.y + block_idx.y) * grid_dim.x + block_idx.x
    var row = block * per_block + (thread_idx.z * block_dim.y + thread_idx.y) * block_dim.x + thread_idx.x
    # FILL IN: the ids (nothing to do: this file is a test fixture)
    ids[row, 0] = Float32(thread_idx.x)
    ids[row, 1] = Float32(thread_idx.y)
    ids[row, 2] = Float32(thread_idx.z)
    ids[row, 3] = Float32(block_idx.x)
    ids[row, 4] = Float32(block_idx.y)
    ids[row, 5] = Float32(block_idx.z)
    ids[row, 6] = Float32(block_dim.x)
    ids[row, 7] = Float32(block_dim.y)
    ids[row, 8] = Float32(block_dim.z)
    ids[row, 9] = Float32(grid_dim.x)
    ids[row, 10] = Float32(grid_dim.y)
    ids[row, 11] = Float32(global_idx.x)
    # END FILL IN


def neighbours[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """output[i] = a[i] + the next element of the same block (wrapping inside the block)."""
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TPB]())
    var i = block_idx.x * TPB + thread_idx.x
    var t = thread_idx.x
    var last = min(TPB, size - block_idx.x * TPB)
    if i < size:
        shared[t] = a[i]
    barrier()
    if i < size:
        output[i] = shared[t] + shared[(t + 1) % last]


def block_totals[size: Int, blocks: Int](
    totals: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TPB]())
    var i = block_idx.x * TPB + thread_idx.x
    shared[thread_idx.x] = a[i] if i < size else 0
    barrier()
    if thread_idx.x == 0:
        var s = Scalar[dtype](0)
        for k in range(TPB):
            s += shared[k][0]
        totals[block_idx.x] = s


def grand_total[blocks: Int](
    result: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    totals: TileTensor[mut=False, dtype, Vector[blocks], ImmutAnyOrigin],
):
    if thread_idx.x == 0:
        var s = Scalar[dtype](0)
        for k in range(blocks):
            s += totals[k][0]
        result[0] = s


def halves[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """The neighbours kernel through float16 shared slots: two threads write two
    neighbouring 2-byte slots, which is no race."""
    var shared = stack_allocation[dtype=DType.float16, address_space=AddressSpace.SHARED](row_major[TPB]())
    var i = block_idx.x * TPB + thread_idx.x
    var t = thread_idx.x
    var last = min(TPB, size - block_idx.x * TPB)
    if i < size:
        shared[t] = a[i].cast[DType.float16]()
    barrier()
    if i < size:
        output[i] = (shared[t] + shared[(t + 1) % last]).cast[dtype]()


def warp_ops[size: Int, threads: Int](
    output: TileTensor[mut=True, dtype, Row8[threads], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """Every warp operation once: each thread writes what it got, in its own row."""
    var i = block_idx.x * block_dim.x + thread_idx.x
    var v = a[i][0] if i < size else Scalar[dtype](0)
    var row = i
    output[row, 0] = Float32(lane_id())
    output[row, 1] = warp.sum(v)
    output[row, 2] = warp.shuffle_down(v, 1)
    output[row, 3] = warp.shuffle_xor(v, 2)
    output[row, 4] = warp.prefix_sum(v)
    output[row, 5] = warp.broadcast(v)
    output[row, 6] = warp.max(v)
    var ballot = warp.vote[DType.uint32](v > 3)
    output[row, 7] = Float32(ballot & 0xFFF) + Float32(ballot >> 20) * 4096 + Float32(WARP_SIZE - 32)


def async_tile[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """The neighbours kernel with its tile fetched by async copies: each thread's copy
    is its own group, landed by the wait; the barrier makes it the block's."""
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TPB]())
    var i = block_idx.x * TPB + thread_idx.x
    var t = thread_idx.x
    var last = min(TPB, size - block_idx.x * TPB)
    if i < size:
        async_copy[4]((a.ptr + i).address_space_cast[AddressSpace.GLOBAL](), shared.ptr + t)
    async_copy_commit_group()
    async_copy_wait_group(0)
    barrier()
    if i < size:
        output[i] = shared[(t + 1) % last] + shared[t]


def traffic(
    output: TileTensor[mut=True, dtype, Row8[64], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[2048], ImmutAnyOrigin],
):
    """One block of 64 threads (two warps); each line one access pattern whose cost on a
    GPU is known by hand (tests/test_sim.py's test_traffic_counters)."""
    var i = Int(thread_idx.x)
    # FILL IN: (nothing to do: this file is a test fixture)
    var s = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[4352]())
    output[i, 0] = a[i][0]  # unit stride
    output[i, 1] = a[2 * i][0]  # stride 2
    output[i, 2] = a[0][0]  # one word for all
    output[i, 3] = a[i + 1][0]  # off by one element
    output[i, 4] = a[32 * i][0]  # stride 32
    s[i] = a[i][0]  # shared, unit stride
    s[64 + 2 * i] = 1.0  # shared, stride 2
    s[192 + 32 * i] = 2.0  # shared, stride 32
    s[2240 + 33 * i] = 3.0  # shared, stride 33 (padded)
    barrier()
    output[i, 5] = s[0][0]  # shared, one word for all
    for k in range(2):
        output[i, 6 + k] = s[(i + 32 * k) % 64][0]  # twice from each lane: two requests a warp


def mma_lanes(
    output: TileTensor[mut=True, dtype, Matrix[32, 4], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[16, 8], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[8, 8], ImmutAnyOrigin],
    c: TileTensor[mut=False, dtype, Matrix[16, 8], ImmutAnyOrigin],
):
    """One warp, one m16n8k8 mma: each lane loads its fragments by NVIDIA's map (groupID
    g, threadID_in_group t) and writes its four elements of D in its own row."""
    var lane = lane_id()
    var g = lane // 4
    var t = lane % 4
    # FILL IN: (nothing to do: this file is a test fixture)
    var a_frag = SIMD[dtype, 4](a[g, t][0], a[g + 8, t][0], a[g, t + 4][0], a[g + 8, t + 4][0])
    var b_frag = SIMD[dtype, 2](b[t, g][0], b[t + 4, g][0])
    var c_frag = SIMD[dtype, 4](c[g, 2 * t][0], c[g, 2 * t + 1][0], c[g + 8, 2 * t][0], c[g + 8, 2 * t + 1][0])
    var d = SIMD[dtype, 4](0)
    mma(d, a_frag, b_frag, c_frag)
    for i in range(4):
        output[lane, i] = d[i]


def tensor_core_tile(
    output: TileTensor[mut=True, dtype, Matrix[16, 8], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[16, 8], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Matrix[8, 8], ImmutAnyOrigin],
    c: TileTensor[mut=False, dtype, Matrix[16, 8], ImmutAnyOrigin],
):
    """One warp, TensorCore's load_a, load_b, load_c, mma_op and store_d on one tile:
    a and b staged through shared memory, C read from global memory, D written there."""
    var a_s = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[16, 8]())
    var b_s = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[8, 8]())
    var lane = lane_id()
    # FILL IN: (nothing to do: this file is a test fixture)
    for r in range(4):
        a_s[r * 4 + lane // 8, lane % 8] = a[r * 4 + lane // 8, lane % 8]
    for r in range(2):
        b_s[r * 4 + lane // 8, lane % 8] = b[r * 4 + lane // 8, lane % 8]
    barrier()
    var tc = TensorCore[dtype, dtype, Index(16, 8, 8)]()
    var a_reg = tc.load_a(a_s.to_layout_tensor())
    var b_reg = tc.load_b(b_s.to_layout_tensor())
    var c_reg = tc.load_c(c.to_layout_tensor())
    var d_reg = tc.mma_op(a_reg, b_reg, c_reg)
    tc.store_d(output.to_layout_tensor(), d_reg)


def ring_shift[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    steps: Int32,
):
    """One block of RING threads (two warps): each step moves every value one slot down
    the ring and adds 1, from one shared buffer into the other; an mbarrier, not
    barrier(), separates the steps (tests/test_sim.py breaks it every way it can break)."""
    var t = thread_idx.x
    var buf = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2, RING]())
    var bar = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())
    if t == 0:
        mbarrier_init(bar.ptr, RING)
    buf[0, t] = a[t]
    barrier()
    for k in range(Int(steps)):
        buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1
        var token = mbarrier_arrive(bar.ptr)
        while not mbarrier_test_wait(bar.ptr, token):
            pass
    output[t] = buf[Int(steps) % 2, t]
