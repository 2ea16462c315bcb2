# Kernels with thread-block clusters (tests/test_sim.py changes them to make bugs).
from max.gpu import thread_idx, block_idx, grid_dim, cluster_idx, cluster_dim, block_id_in_cluster, lane_id
from max.gpu.primitives import warp
from max.gpu.primitives.cluster import block_rank_in_cluster, cluster_sync, cluster_arrive, cluster_wait, elect_one_sync
from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait
from max.gpu.sync import mbarrier_try_wait_parity_shared
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Table[n: Int] = type_of(row_major[n, 7]())
comptime TPB = 4
comptime CLUSTER = 4
comptime RING = 64


def cluster_ids[threads: Int](ids: TileTensor[mut=True, dtype, Table[threads], MutAnyOrigin]):
    """Each thread writes its block's place in its cluster, in its own row."""
    var row = (block_idx.y * grid_dim.x + block_idx.x) * TPB + thread_idx.x
    ids[row, 0] = Float32(Int(block_rank_in_cluster()))
    ids[row, 1] = Float32(cluster_idx.x)
    ids[row, 2] = Float32(cluster_idx.y)
    ids[row, 3] = Float32(block_id_in_cluster.x)
    ids[row, 4] = Float32(block_id_in_cluster.y)
    ids[row, 5] = Float32(cluster_dim.x)
    ids[row, 6] = Float32(cluster_dim.y)


def cluster_total[size: Int, blocks: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[blocks], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """Every output of a cluster's 16 elements is their sum: each block's total goes
    through `partial`, and a cluster barrier makes it visible to the other blocks."""
    var t = thread_idx.x
    var i = block_idx.x * TPB + t
    var shared = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TPB]())
    shared[t] = a[i] if i < size else 0
    barrier()
    if t == 0:
        var mine: Scalar[dtype] = 0
        for k in range(TPB):
            mine += shared[k][0]
        partial[block_idx.x] = mine
    cluster_sync()
    var first = cluster_idx.x * CLUSTER
    var total: Scalar[dtype] = 0
    for r in range(CLUSTER):
        total += partial[first + r][0]
    if i < size:
        output[i] = total


def warp_firsts[size: Int, warps: Int](
    output: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    """One lane of each warp writes the warp's sum."""
    var i = block_idx.x * 64 + thread_idx.x
    var total = warp.sum(a[i][0])
    if elect_one_sync():
        output[i // 32] = total


def cluster_rings[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    rings: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    steps: Int32,
):
    """Each block of a cluster (RING threads, two warps) moves its values round a ring in
    its shared memory, `steps` times, with an mbarrier of its own between the steps, while
    the other blocks of its cluster run interleaved with it; past a cluster barrier, each
    block writes out the ring of the next block of its cluster."""
    var t = thread_idx.x
    var base = block_idx.x * RING
    var buf = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2, RING]())
    var bar = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())
    if t == 0:
        mbarrier_init(bar.ptr, RING)
    buf[0, t] = a[base + t]
    barrier()
    for k in range(Int(steps)):
        buf[1 - k % 2, t] = buf[k % 2, (t + 1) % RING] + 1
        var token = mbarrier_arrive(bar.ptr)
        while not mbarrier_test_wait(bar.ptr, token):
            pass
    rings[base + t] = buf[Int(steps) % 2, t]
    cluster_sync()
    var rank = Int(block_rank_in_cluster())
    var next = block_idx.x - rank + (rank + 1) % CLUSTER
    output[base + t] = rings[next * RING + t]
