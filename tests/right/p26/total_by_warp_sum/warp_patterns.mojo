# A RIGHT KERNEL WRITTEN ANOTHER WAY (total_by_warp_sum): each warp's total comes from warp.sum, written by lane 0.
# Puzzle 26: advanced warp patterns. A butterfly with shuffle_xor, a scan
# with prefix_sum, and a partition that puts the two together.
#
# warp.shuffle_xor(v, k): lane L gets the v of lane L ^ k (L xor k). The
# lanes swap in pairs, and no lane falls off the end of the warp:
#
#     k = 1:   0<->1   2<->3   4<->5  ...  30<->31
#     k = 2:   0<->2   1<->3   4<->6  ...  29<->31
#     k = 16:  0<->16  1<->17  ...  15<->31
#
# After the rounds k = 16, 8, 4, 2, 1, each combining a lane's value with
# its partner's, EVERY lane has seen every lane of the warp: a butterfly.
#
# warp.prefix_sum(v) gives lane L the sum of v over lanes 0..L (inclusive);
# warp.prefix_sum[exclusive=True](v) over lanes 0..L-1 (lane 0 gets 0).
# warp.vote[DType.uint32](b) gives every lane a 32-bit mask with bit L set
# where lane L's b is True (count the ones with pop_count).
#
# Every lane of the warp must reach each of them: never inside an `if` that
# only some lanes of a warp take.
#
# Three kernels, one per part:
#   1. warp_extremes    the maximum and minimum of each warp's values
#   2. warp_scan        an inclusive scan within each warp, and its total
#   3. warp_partition   one warp: the values below a pivot first, in order
#ko 퍼즐 26: 고급 워프 패턴. shuffle_xor로 만드는 버터플라이, prefix_sum으로
#ko 하는 스캔, 그리고 둘을 합친 분할(partition).
#ko
#ko warp.shuffle_xor(v, k): 레인 L은 레인 L ^ k(L xor k)의 v를 받습니다. 레인들이
#ko 짝지어 값을 바꾸며, 워프 끝에서 떨어지는 레인이 없습니다.
#ko
#ko     k = 1:   0<->1   2<->3   4<->5  ...  30<->31
#ko     k = 2:   0<->2   1<->3   4<->6  ...  29<->31
#ko     k = 16:  0<->16  1<->17  ...  15<->31
#ko
#ko k = 16, 8, 4, 2, 1 라운드에서 레인마다 자기 값과 짝의 값을 합치고 나면, "모든"
#ko 레인이 워프의 모든 레인을 본 셈입니다. 이것이 버터플라이입니다.
#ko
#ko warp.prefix_sum(v)는 레인 L에 레인 0..L의 v 합을 줍니다(포함 스캔).
#ko warp.prefix_sum[exclusive=True](v)는 레인 0..L-1의 합을 줍니다(레인 0은 0).
#ko warp.vote[DType.uint32](b)는 모든 레인에 32비트 마스크를 줍니다. 레인 L의
#ko b가 True이면 비트 L이 켜집니다(1의 개수는 pop_count로 셉니다).
#ko
#ko 워프의 모든 레인이 이것들 하나하나에 도달해야 합니다. 워프의 일부 레인만
#ko 들어가는 `if` 안에서 부르지 마세요.
#ko
#ko 파트마다 커널 하나씩 세 개:
#ko   1. warp_extremes    워프마다 값들의 최댓값과 최솟값
#ko   2. warp_scan        워프 안의 포함 스캔과 그 합계
#ko   3. warp_partition   워프 하나: 피벗보다 작은 값을 앞에, 순서대로

from std.bit import pop_count
from std.utils.numerics import inf, neg_inf
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


def warp_extremes[size: Int, warps: Int](
    maxes: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    mins: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var w = i // WARP_SIZE  # this thread's warp, counted over the grid
    #ko 이 스레드의 워프, 그리드 전체에서 센 번호

    # FILL IN: hi and lo start as a[i]; past the end of the data, as values
    # that can never win: -infinity for the maximum, +infinity for the
    # minimum (neg_inf[dtype](), inf[dtype]()). (about 5 lines)
    #ko FILL IN: hi와 lo는 a[i]에서 시작합니다. 데이터 끝을 넘었으면 절대 이길 수
    #ko 없는 값에서: 최댓값은 -무한대, 최솟값은 +무한대
    #ko (neg_inf[dtype](), inf[dtype]()). (5줄 정도)
    #| var hi: Scalar[dtype] = 0
    #| var lo: Scalar[dtype] = 0
    var hi = neg_inf[dtype]()
    var lo = inf[dtype]()
    if i < size:
        hi = a[i][0]
        lo = hi
    # END FILL IN

    # FILL IN: the butterfly: for k = 16, 8, 4, 2, 1, hi becomes the larger
    # of hi and shuffle_xor(hi, k), lo the smaller of lo and
    # shuffle_xor(lo, k). (about 5 lines)
    #ko FILL IN: 버터플라이: k = 16, 8, 4, 2, 1마다 hi는 hi와
    #ko shuffle_xor(hi, k) 중 큰 값, lo는 lo와 shuffle_xor(lo, k) 중 작은 값이
    #ko 됩니다. (5줄 정도)
    #| pass
    var k = WARP_SIZE // 2
    while k > 0:
        hi = max(hi, warp.shuffle_xor(hi, UInt32(k)))
        lo = min(lo, warp.shuffle_xor(lo, UInt32(k)))
        k //= 2
    # END FILL IN

    # FILL IN: every lane now holds both; lane 0 writes them to maxes[w] and
    # mins[w], if the warp has a slot (w < warps). (3 lines)
    #ko FILL IN: 이제 모든 레인이 둘 다 갖고 있습니다. 워프에 칸이 있으면
    #ko (w < warps) 레인 0이 maxes[w]와 mins[w]에 씁니다. (3줄)
    #| pass
    if lane_id() == 0 and w < warps:
        maxes[w] = hi
        mins[w] = lo
    # END FILL IN


def warp_scan[size: Int, warps: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    totals: TileTensor[mut=True, dtype, Vector[warps], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[first] + ... + a[i], where first = 32 * (i // 32) starts
    # i's warp; totals[w] = the sum of warp w's values.
    #ko output[i] = a[first] + ... + a[i], 여기서 first = 32 * (i // 32)는
    #ko i가 속한 워프의 시작입니다. totals[w] = 워프 w 값들의 합.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var w = i // WARP_SIZE
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: scan the warp with warp.prefix_sum, write the scan where
    # i < size, and let the lane that holds the warp's total write it to
    # totals[w] (w < warps). (about 5 lines)
    #ko FILL IN: warp.prefix_sum으로 워프를 스캔하고, i < size인 곳에 스캔을
    #ko 쓰고, 워프의 합계를 가진 레인이 그것을 totals[w]에 씁니다(w < warps).
    #ko (5줄 정도)
    #| pass
    var scan = warp.prefix_sum(v)
    # The total by a reduction of its own, which every lane gets; lane 0 writes it.
    var total = warp.sum(v)
    if i < size:
        output[i] = scan
    if lane_id() == 0 and w < warps:
        totals[w] = total
    # END FILL IN


def warp_partition[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    pivot: TileTensor[mut=False, dtype, Vector[1], ImmutAnyOrigin],
):
    # One warp, at most 32 values: lane L holds a[L]. The values below the
    # pivot go first, then the others, each group in its order in a.
    #ko 워프 하나, 값은 많아야 32개: 레인 L이 a[L]을 맡습니다. 피벗보다 작은
    #ko 값이 먼저, 그다음 나머지, 각 무리는 a에서의 순서대로 놓입니다.
    var lane = Int(lane_id())
    var p = pivot[0][0]
    var v: Scalar[dtype] = 0
    var low = False
    if lane < size:
        v = a[lane][0]
        low = v < p

    # FILL IN: `before` = how many lanes below this one are low (an
    # exclusive prefix_sum of a 0/1 flag); `lows` = how many lanes are low
    # in all (vote and pop_count, or warp.sum of the flag). (about 3 lines)
    #ko FILL IN: `before` = 이 레인보다 아래에서 low인 레인 수(0/1 플래그의
    #ko 배타적 prefix_sum), `lows` = low인 레인의 전체 수(vote와 pop_count, 또는
    #ko 플래그의 warp.sum). (3줄 정도)
    #| var before = 0
    #| var lows = 0
    var flag: Int32 = 1 if low else 0
    var before = Int(warp.prefix_sum[exclusive=True](flag))
    var lows = Int(pop_count(warp.vote[DType.uint32](low)))
    # END FILL IN

    # FILL IN: a low value goes to output[before]; any other to
    # output[lows + the number of not-low lanes below this one]. Only lanes
    # that hold a value write. (about 5 lines)
    #ko FILL IN: low인 값은 output[before]로, 나머지는
    #ko output[lows + 이 레인 아래에서 low가 아닌 레인 수]로 갑니다. 값을 가진
    #ko 레인만 씁니다. (5줄 정도)
    #| pass
    if lane < size:
        if low:
            output[before] = v
        else:
            output[lows + lane - before] = v
    # END FILL IN
