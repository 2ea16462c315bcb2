# WRONG ON PURPOSE (arrive_without_wait): Arrives at the cluster barrier with cluster_arrive() but never waits: the rank-0 block adds the other blocks' slots before they may have written them.
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
#ko 퍼즐 34: 스레드 블록 클러스터. 서로를 기다리는 블록들.
#ko
#ko 한 번의 실행 안의 블록들은 서로를 기다리지 않습니다. GPU는 블록을 어떤
#ko 순서로든 실행하고, 어떤 블록은 다른 블록들이 끝난 뒤에야 실행하므로,
#ko 다른 블록을 기다리는 블록은 영원히 기다릴 수도 있습니다. 그래서 퍼즐 14는
#ko 블록 합계를 더하는 데 두 번째 커널 실행이 필요했습니다. Hopper GPU(sm_90)는
#ko 블록들을 클러스터로 묶을 수 있습니다(여기서는 나란히 놓인 블록
#ko CLUSTER = 4개). 한 클러스터의 블록들은 함께, 동시에 스케줄되므로 클러스터
#ko 배리어에서 서로를 기다릴 수 있습니다:
#ko
#ko     block_rank_in_cluster()   클러스터 안에서 이 블록의 순위, 0에서 3
#ko     cluster_sync()            클러스터에 속한 모든 블록의 모든 스레드가
#ko                               여기 올 때까지 기다림. 그 전에 쓴 것은 이후
#ko                               모두에게 보임
#ko     cluster_arrive()          같은 일을 둘로 나눔: 지금은 "나 도착했고,
#ko     cluster_wait()            쓴 것은 끝났음", 나중에 "모두를 기다림"
#ko
#ko 블록마다 자기 공유 메모리가 있습니다. 여기서 클러스터의 블록들은 전역
#ko 메모리의 `partial`(블록마다 칸 하나)로 결과를 나눕니다.

from max.gpu import thread_idx, block_idx, cluster_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from max.gpu.primitives import block, warp
from max.gpu.primitives.cluster import block_rank_in_cluster, cluster_sync, elect_one_sync, cluster_arrive
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: two warps of 32.
#ko 블록당 스레드 수: 32개짜리 워프 두 개.
comptime TPB = 64
# Blocks per cluster (the launch says cluster_dim = (4, 1, 1)).
#ko 클러스터당 블록 수(실행 설정이 cluster_dim = (4, 1, 1)입니다).
comptime CLUSTER = 4


def cluster_sum[size: Int, clusters: Int](
    sums: TileTensor[mut=True, dtype, Vector[clusters], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[clusters * CLUSTER], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # sums[c] = the sum of cluster c's CLUSTER * TPB elements of a (0 past the end).
    #ko sums[c] = 클러스터 c가 맡은 a의 원소 CLUSTER * TPB개의 합(끝을 넘는 원소는 0).
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var i = block_idx.x * TPB + t  # this thread's element
    #ko 이 스레드의 원소
    var v: Scalar[dtype] = a[i][0] if i < size else 0
    # Each warp adds its 32 values (puzzle 24); one lane of each warp, the one
    # elect_one_sync() elects, keeps the warp's total in shared memory.
    #ko 워프마다 값 32개를 더하고(퍼즐 24), 각 워프에서 elect_one_sync()가 뽑은
    #ko 레인 하나가 워프의 합계를 공유 메모리에 둡니다.
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
    #ko FILL IN: 블록의 스레드 하나(스레드 0. elect_one_sync()는 워프마다 레인을
    #ko 하나씩 뽑습니다)가 블록의 합계, 곧 warp_totals의 합을
    #ko partial[block_idx.x]에 씁니다. (4줄)
    #| pass
    if t == 0:
        var mine: Scalar[dtype] = 0
        for w in range(TPB // 32):
            mine += warp_totals[w][0]
        partial[block_idx.x] = mine
    # END FILL IN

    # FILL IN: wait for the whole cluster (every thread of every block calls
    # it), then thread 0 of the block of rank 0 adds the cluster's CLUSTER
    # slots of partial, from partial[cluster_idx.x * CLUSTER] on, and writes
    # the sum into sums[cluster_idx.x]. (7 lines)
    #ko FILL IN: 클러스터 전체를 기다린 다음(모든 블록의 모든 스레드가
    #ko 부릅니다), 순위 0인 블록의 스레드 0이 partial[cluster_idx.x * CLUSTER]부터
    #ko 클러스터의 칸 CLUSTER개를 더해 sums[cluster_idx.x]에 씁니다. (7줄)
    #| pass
    cluster_arrive()
    if block_rank_in_cluster() == 0 and t == 0:
        var first = cluster_idx.x * CLUSTER
        var total: Scalar[dtype] = 0
        for r in range(CLUSTER):
            total += partial[first + r][0]
        sums[cluster_idx.x] = total
    # END FILL IN


def cluster_scan[size: Int, clusters: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    partial: TileTensor[mut=True, dtype, Vector[clusters * CLUSTER], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[f] + a[f + 1] + ... + a[i], where f is the first element of
    # i's cluster: a prefix sum that starts again at every cluster, in ONE launch.
    #ko output[i] = a[f] + a[f + 1] + ... + a[i]. f는 i가 속한 클러스터의 첫
    #ko 원소입니다. 클러스터마다 새로 시작하는 누적 합을, 런치 한 번으로 구합니다.
    var t = thread_idx.x  # this thread's place in its block
    #ko 블록 안에서 이 스레드의 자리
    var i = block_idx.x * TPB + t  # this thread's element
    #ko 이 스레드의 원소
    var v: Scalar[dtype] = a[i][0] if i < size else 0
    # The sum of a[...] up to i within this block (puzzle 27), in every thread.
    #ko 이 블록 안에서 i까지의 a[...] 합(퍼즐 27), 모든 스레드에서.
    var mine = block.prefix_sum[block_size=TPB](v)

    # FILL IN: the last thread of the block holds the block's total: it writes it
    # into partial[block_idx.x]. Wait for the whole cluster. Then each thread
    # adds the totals of the blocks of LOWER rank in its cluster to `mine`, and
    # writes that into output[i] (for i < size). (9 lines)
    #ko FILL IN: 블록의 마지막 스레드가 블록의 합계를 가지고 있습니다. 그것을
    #ko partial[block_idx.x]에 씁니다. 클러스터 전체를 기다립니다. 그다음 각
    #ko 스레드는 클러스터에서 순위가 더 낮은 블록들의 합계를 `mine`에 더해
    #ko output[i]에 씁니다(i < size일 때). (9줄)
    #| pass
    if t == TPB - 1:
        partial[block_idx.x] = mine
    cluster_sync()
    var first = cluster_idx.x * CLUSTER
    var before: Scalar[dtype] = 0
    for r in range(Int(block_rank_in_cluster())):
        before += partial[first + r][0]
    if i < size:
        output[i] = before + mine
    # END FILL IN
