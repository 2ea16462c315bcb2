# Puzzle 34: thread-block clusters. Blocks that wait for each other.
#
# Blocks of one launch never wait for each other: a GPU may run them in any
# order, some only after others have finished, so a block that waited for
# another could wait forever. That is why puzzle 14 needed a second launch to
# add the block totals. Hopper GPUs (sm_90) can group blocks into a cluster
# (here CLUSTER = 4 blocks side by side): the blocks of a cluster are
# scheduled together, at the same time, so they CAN wait for each other, at
# a cluster barrier:
#
#     block_rank_in_cluster()   this block's rank in its cluster, 0 to 3
#     cluster_sync()            wait until every thread of every block of the
#                               cluster got here; what they wrote before is
#                               visible to all after it
#     cluster_arrive()          the same, in two halves: "I am here, and what I
#     cluster_wait()            wrote is done" now, "wait for everyone" later
#
# Each block has its own shared memory; the blocks of a cluster share
# results here through global memory, in `partial`, one slot per block.

from max.gpu import thread_idx, block_idx, cluster_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.primitives import block, warp
from max.gpu.primitives.cluster import block_rank_in_cluster, cluster_sync, elect_one_sync
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: two warps of 32.
comptime TPB = 64
# Blocks per cluster (the launch says cluster_dim = (4, 1, 1)).
comptime CLUSTER = 4


def cluster_sum[size: Int, clusters: Int](
    sums: TileTensor[mut=True, dtype, Vector[clusters], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[clusters * CLUSTER], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # sums[c] = the sum of cluster c's CLUSTER * TPB elements of a (0 past the end).
    var t = thread_idx.x  # this thread's place in its block
    var i = block_idx.x * TPB + t  # this thread's element
    var v: Scalar[dtype] = a[i][0] if i < size else 0
    # Each warp adds its 32 values (puzzle 24); one lane of each warp, the one
    # elect_one_sync() elects, keeps the warp's total in shared memory.
    var warp_total = warp.sum(v)
    var warp_totals = stack_allocation[
        dtype=dtype, address_space=AddressSpace.SHARED
    ](row_major[TPB // 32]())
    if elect_one_sync():
        warp_totals[t // 32] = warp_total
    barrier()

    # FILL IN: one thread of the block (thread 0: elect_one_sync() elects one
    # lane in EACH warp) writes the block's total, the sum of warp_totals, into
    # partial[block_idx.x]. (4 lines)
    pass

    # FILL IN: wait for the whole cluster (every thread of every block calls
    # it), then thread 0 of the block of rank 0 adds the cluster's CLUSTER
    # slots of partial, from partial[cluster_idx.x * CLUSTER] on, and writes
    # the sum into sums[cluster_idx.x]. (7 lines)
    pass


def cluster_scan[size: Int, clusters: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[clusters * CLUSTER], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[f] + a[f + 1] + ... + a[i], where f is the first element of
    # i's cluster: a prefix sum that starts again at every cluster, in ONE launch.
    var t = thread_idx.x  # this thread's place in its block
    var i = block_idx.x * TPB + t  # this thread's element
    var v: Scalar[dtype] = a[i][0] if i < size else 0
    # The sum of a[...] up to i within this block (puzzle 27), in every thread.
    var mine = block.prefix_sum[block_size=TPB](v)

    # FILL IN: the last thread of the block holds the block's total: it writes it
    # into partial[block_idx.x]. Wait for the whole cluster. Then each thread
    # adds the totals of the blocks of LOWER rank in its cluster to `mine`, and
    # writes that into output[i] (for i < size). (9 lines)
    pass
