# WRONG ON PURPOSE (mean_by_warp_sum): Part broadcast: takes the warp's sum from warp.sum, a butterfly that gives it to every lane, with no tree going down and no broadcast: the right values, by the method of puzzle 26, not the one this part teaches.
# Puzzle 25: warp communication. Lanes read each other's values with
# shuffle_down, and lane 0 hands one value to every lane with broadcast.
#
# warp.shuffle_down(v, k): lane L gets the v of lane L + k of its warp. A
# lane with no lane L + k in its warp (L + k > 31) gets its own v back:
#
#     lane                   0    1    2   ...   30    31
#     v                      x0   x1   x2  ...   x30   x31
#     shuffle_down(v, 1)     x1   x2   x3  ...   x31   x31   <- its own!
#
# So the top lanes of each warp need care: their neighbours are in the next
# warp, and they must read them from memory. And the end of the data needs
# care too: past it, the lanes hold 0, not data.
#
# Every lane of the warp must reach each shuffle and each broadcast: call
# them outside any `if` that only some lanes take (like barrier()).
#
# Three kernels, one per part, each one thread per element, in blocks of
# TPB = 128 threads (4 warps):
#   1. neighbour_difference  output[i] = a[i+1] - a[i]
#   2. moving_average        output[i] = (a[i] + a[i+1] + a[i+2]) / 3
#   3. centre_warps          output[i] = a[i] - the mean of its warp's values
#ko 퍼즐 25: 워프 통신. 레인들은 shuffle_down으로 서로의 값을 읽고, 레인 0은
#ko broadcast로 값 하나를 모든 레인에 건넵니다.
#ko
#ko warp.shuffle_down(v, k): 레인 L은 자기 워프에서 레인 L + k의 v를 받습니다.
#ko 워프 안에 레인 L + k가 없는(L + k > 31) 레인은 자기 v를 돌려받습니다.
#ko
#ko     레인                   0    1    2   ...   30    31
#ko     v                      x0   x1   x2  ...   x30   x31
#ko     shuffle_down(v, 1)     x1   x2   x3  ...   x31   x31   <- 자기 값!
#ko
#ko 그래서 워프마다 위쪽 레인은 조심해야 합니다. 이웃이 다음 워프에 있으니
#ko 메모리에서 직접 읽어야 합니다. 데이터의 끝도 조심해야 합니다. 끝을 넘은
#ko 레인에는 데이터가 아니라 0이 있습니다.
#ko
#ko 워프의 모든 레인이 셔플과 broadcast 하나하나에 도달해야 합니다. 일부 레인만
#ko 들어가는 `if` 바깥에서 부르세요(barrier()처럼).
#ko
#ko 파트마다 커널 하나씩 세 개. 모두 원소마다 스레드 하나, 스레드 TPB = 128개
#ko (워프 4개)짜리 블록:
#ko   1. neighbour_difference  output[i] = a[i+1] - a[i]
#ko   2. moving_average        output[i] = (a[i] + a[i+1] + a[i+2]) / 3
#ko   3. centre_warps          output[i] = a[i] - 자기 워프 값들의 평균

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


def neighbour_difference[size: Int, out_size: Int](
    output: TileTensor[mut=True, dtype, Vector[out_size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output has size - 1 elements: output[i] = a[i + 1] - a[i].
    #ko output의 원소는 size - 1개입니다: output[i] = a[i + 1] - a[i].
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: every lane gets the next lane's v with warp.shuffle_down.
    # (1 line)
    #ko FILL IN: 모든 레인이 warp.shuffle_down으로 다음 레인의 v를 받습니다.
    #ko (1줄)
    #| var next = v
    var next = warp.shuffle_down(v, 1)
    # END FILL IN

    # FILL IN: the last lane of the warp got its own v back: it reads its
    # neighbour a[i + 1] from memory, if there is one. Then every thread that
    # has an output element writes next - v. (about 4 lines)
    #ko FILL IN: 워프의 마지막 레인은 자기 v를 돌려받았습니다. 이웃 a[i + 1]이
    #ko 있으면 메모리에서 직접 읽습니다. 그다음 출력 원소가 있는 스레드마다
    #ko next - v를 씁니다. (4줄 정도)
    #| pass
    if lane == WARP_SIZE - 1 and i + 1 < size:
        next = a[i + 1][0]
    if i + 1 < size:
        output[i] = next - v
    # END FILL IN


def moving_average[size: Int, out_size: Int](
    output: TileTensor[mut=True, dtype, Vector[out_size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output has size - 2 elements: the mean of a[i], a[i + 1], a[i + 2].
    #ko output의 원소는 size - 2개입니다: a[i], a[i + 1], a[i + 2]의 평균.
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: the values one and two lanes up, with two shuffles down; the
    # lanes whose neighbours lie in the next warp read those from memory
    # (which lanes, for each?). Then write the mean of the three where there
    # is an output element. (about 9 lines)
    #ko FILL IN: 셔플 두 번으로 한 레인 위와 두 레인 위의 값을 받습니다. 이웃이
    #ko 다음 워프에 있는 레인은 그 값을 메모리에서 읽습니다(각각 어느 레인일까요?).
    #ko 그다음 출력 원소가 있는 곳에 세 값의 평균을 씁니다. (9줄 정도)
    #| pass
    var next1 = warp.shuffle_down(v, 1)
    var next2 = warp.shuffle_down(v, 2)
    if lane == WARP_SIZE - 1 and i + 1 < size:
        next1 = a[i + 1][0]
    if lane >= WARP_SIZE - 2 and i + 2 < size:
        next2 = a[i + 2][0]
    if i + 2 < size:
        output[i] = (v + next1 + next2) / 3
    # END FILL IN


def centre_warps[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    # output[i] = a[i] - the mean of the values of i's warp (the last warp
    # may hold fewer than 32).
    #ko output[i] = a[i] - i가 속한 워프 값들의 평균(마지막 워프의 값은 32개보다
    #ko 적을 수 있습니다).
    var i = Int(block_idx.x) * TPB + Int(thread_idx.x)
    var lane = Int(lane_id())
    var v: Scalar[dtype] = 0
    if i < size:
        v = a[i][0]

    # FILL IN: add up the warp with shuffles down, offsets 16, 8, 4, 2, 1
    # (total += shuffle_down(total, offset)): then lane 0 holds the warp's
    # sum, and the other lanes only part of it. (about 5 lines)
    #ko FILL IN: 셔플 다운으로 워프를 더합니다. 오프셋 16, 8, 4, 2, 1
    #ko (total += shuffle_down(total, offset)). 그러면 레인 0에 워프의 합이 있고,
    #ko 다른 레인에는 그 일부만 있습니다. (5줄 정도)
    #| var total = v
    var total = warp.sum(v)
    # END FILL IN

    # FILL IN: every lane takes lane 0's total with warp.broadcast, divides
    # it by the number of values in the warp (32, or fewer in the last one),
    # and writes a[i] minus that mean, if i < size. (about 5 lines)
    #ko FILL IN: 모든 레인이 warp.broadcast로 레인 0의 합을 받아 워프의 값 개수
    #ko (32개, 마지막 워프는 더 적을 수 있음)로 나누고, i < size이면 a[i]에서 그
    #ko 평균을 뺀 값을 씁니다. (5줄 정도)
    #| pass
    var first = i - lane
    var count = min(WARP_SIZE, size - first)
    var mean = total / Scalar[dtype](count)
    if i < size:
        output[i] = v - mean
    # END FILL IN
