# WRONG ON PURPOSE (step_two_tree_down): Part blocks: step 2 adds the lanes' totals with a tree of shuffles down instead of warp.sum: lane 0, the one that writes output[0], holds the right total, the other lanes a part of it.
# Puzzle 24: dot product with warp.sum. No shared memory, no barrier, no tree.
#
#     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#
# A block's threads come in warps of WARP_SIZE = 32: threads 0..31 are warp
# 0, threads 32..63 warp 1, and so on. The lanes of a warp can hand values to
# each other through registers, and `warp.sum(v)` adds the 32 lanes' values
# and gives the total back to every lane:
#
#     lane       0    1    2   ...   31
#     v          p0   p1   p2  ...   p31
#     warp.sum   p0 + p1 + ... + p31, in every lane
#
# Warp w (counted over the whole grid) covers elements 32*w .. 32*w + 31.
# Kernel 1, `warp_dots`, writes each warp's sum to sums[w]. Part `warps`
# launches it as one block of TPB = 128 threads (4 warps); part `blocks`
# launches it over many blocks, then kernel 2, `add_warp_sums`, adds the
# warp sums with one more warp.
#
# The one rule: every lane of the warp must reach warp.sum, also the lanes
# past the end of the data (they bring 0). Never call it inside an `if` that
# only some lanes of a warp take.
#ko 퍼즐 24: warp.sum으로 내적. 공유 메모리도, 배리어도, 트리도 없습니다.
#ko
#ko     output[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]
#ko
#ko 블록의 스레드는 WARP_SIZE = 32개씩 워프를 이룹니다. 스레드 0..31이 워프 0,
#ko 32..63이 워프 1, 이런 식입니다. 한 워프의 레인들은 레지스터로 값을 주고받을
#ko 수 있고, `warp.sum(v)`는 32개 레인의 값을 더해 그 합을 모든 레인에 돌려줍니다.
#ko
#ko     레인       0    1    2   ...   31
#ko     v          p0   p1   p2  ...   p31
#ko     warp.sum   p0 + p1 + ... + p31, 모든 레인에
#ko
#ko 워프 w(그리드 전체에서 센 번호)는 원소 32*w .. 32*w + 31을 맡습니다.
#ko 커널 1 `warp_dots`는 워프마다 합을 sums[w]에 씁니다. 파트 `warps`는 이
#ko 커널을 스레드 TPB = 128개(워프 4개)짜리 블록 하나로 실행하고, 파트 `blocks`는
#ko 블록 여러 개로 실행한 뒤 커널 2 `add_warp_sums`가 워프 하나로 워프별 합을
#ko 더합니다.
#ko
#ko 규칙은 하나입니다. 데이터 끝을 넘어선 레인까지(0을 가져옵니다) 워프의 모든
#ko 레인이 warp.sum에 도달해야 합니다. 워프의 일부 레인만 들어가는 `if` 안에서
#ko 부르지 마세요.

from max.gpu import thread_idx, block_idx, lane_id, WARP_SIZE
from max.gpu.primitives import warp
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block: 4 warps.
#ko 블록당 스레드 수: 워프 4개.
comptime TPB = 128


def warp_dots[size: Int, warps: Int](
    sums: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)  # this thread's element
    #ko 이 스레드의 원소
    var w = i // WARP_SIZE  # this thread's warp, counted over the grid
    #ko 이 스레드의 워프, 그리드 전체에서 센 번호

    # FILL IN: every lane takes its product a[i] * b[i], or 0 past the end of
    # the data, and adds it up over the warp with warp.sum. (about 4 lines)
    #ko FILL IN: 모든 레인이 자기 곱 a[i] * b[i]를(데이터 끝을 넘었으면 0을)
    #ko 구해 warp.sum으로 워프 전체의 합을 냅니다. (4줄 정도)
    #| var total: Scalar[dtype] = 0
    var product: Scalar[dtype] = 0
    if i < size:
        product = a[i][0] * b[i][0]
    var total = warp.sum(product)
    # END FILL IN

    # FILL IN: lane 0 writes the warp's sum to sums[w], if the warp has a slot
    # (w < warps: a block's last warps may hold no data). (2 lines)
    #ko FILL IN: 워프에 칸이 있으면(w < warps: 블록의 마지막 워프들에는 데이터가
    #ko 없을 수 있습니다) 레인 0이 워프의 합을 sums[w]에 씁니다. (2줄)
    #| pass
    if lane_id() == 0 and w < warps:
        sums[w] = total
    # END FILL IN


def add_warp_sums[warps: Int](
    output: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    sums: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
):
    # One block of one warp. There may be more warp sums than lanes.
    #ko 워프 하나짜리 블록 하나. 워프별 합이 레인보다 많을 수 있습니다.
    var lane = Int(lane_id())

    # FILL IN: lane k adds sums[k], sums[k + 32], sums[k + 64], ... (a loop
    # with step WARP_SIZE), then one warp.sum adds the 32 lanes' totals, and
    # lane 0 writes it to output[0]. (about 6 lines)
    #ko FILL IN: 레인 k가 sums[k], sums[k + 32], sums[k + 64], ...를 더하고
    #ko (간격 WARP_SIZE의 반복문), warp.sum 한 번으로 32개 레인의 합계를 더해
    #ko 레인 0이 output[0]에 씁니다. (6줄 정도)
    #| pass
    var mine: Scalar[dtype] = 0
    var k = lane
    while k < warps:
        mine += sums[k][0]
        k += WARP_SIZE
    var total = mine
    var offset = WARP_SIZE // 2
    while offset > 0:
        total += warp.shuffle_down(total, UInt32(offset))
        offset //= 2
    if lane == 0:
        output[0] = total
    # END FILL IN
