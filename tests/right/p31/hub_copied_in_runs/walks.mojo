# A RIGHT KERNEL WRITTEN ANOTHER WAY (hub_copied_in_runs): each thread copies a run of neighbouring hub entries, and the walk tests for the table first.
# Puzzle 31: occupancy. Each walker follows a table from its start, one hop
# at a time: at = table[at]. A hop's address is the previous hop's value, so
# a thread can never have two loads in flight; it waits out each one (about a
# microsecond from memory). What keeps the GPU busy meanwhile is other warps:
# an SM holds up to 64 warps at once, and runs whichever has its value. Here
# you write the walks, and you pick the block sizes, so that every SM holds
# all 64 warps. The report's occupancy table shows what each block size,
# register count and shared array leaves room for.
#ko 퍼즐 31: 점유율. 각 워커는 시작점에서 표를 한 번에 한 칸씩 따라갑니다:
#ko at = table[at]. 한 칸의 주소가 앞 칸의 값이라서, 스레드 하나는 로드를 두
#ko 개 동시에 띄울 수 없고 매번 (메모리에서 1마이크로초 정도) 기다립니다. 그
#ko 사이 GPU를 바쁘게 하는 것은 다른 워프들입니다. SM은 워프를 한 번에 최대
#ko 64개 담고, 값이 도착한 워프를 실행합니다. 여기서 여러분은 걸음을 쓰고 블록
#ko 크기를 골라 모든 SM이 워프 64개를 다 담게 합니다. 보고서의 점유율 표가
#ko 블록 크기, 레지스터 수, 공유 배열이 각각 몇 블록을 허락하는지 보여 줍니다.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime Vector[n: Int] = type_of(row_major[n]())
# The hub: entries 0 .. HUB - 1 of the table, which every other hop of part
# `hub` reads. Keep it: the cases are built around it.
#ko 허브: 표의 0 .. HUB - 1번 칸으로, 파트 `hub`의 걸음은 두 번에 한 번 여기를
#ko 읽습니다. 바꾸지 마세요: 케이스가 이 값에 맞춰 만들어집니다.
comptime HUB = 8192


# ---------------------------------------------------------------------------
# Part `walk`: end[w] = the position walker w reaches from start[w] after
# `hops` hops through table, for w < walkers; one walker per thread.
# ---------------------------------------------------------------------------
#ko 파트 `walk`: w < walkers에 대해 end[w] = 워커 w가 start[w]에서 출발해 table을
#ko `hops`번 따라간 위치. 스레드 하나가 워커 하나를 맡습니다.

# FILL IN: pick the threads per block of part `walk`. The workbook reads this
# line and launches ceildiv(walkers, BLOCK) blocks of BLOCK threads: write a
# plain number. Which block sizes let an SM hold all 64 of its warps? (1 line)
#ko FILL IN: 파트 `walk`의 블록당 스레드 수를 고르세요. 워크북은 이 줄을 읽고
#ko 스레드 BLOCK개짜리 블록 ceildiv(walkers, BLOCK)개를 실행합니다: 숫자로
#ko 쓰세요. 어떤 블록 크기라야 SM이 워프 64개를 다 담을까요? (1줄)
#| comptime BLOCK = 32
comptime BLOCK = 256
# END FILL IN


def walk[n: Int, walkers: Int](
    end: TileTensor[mut=True, DType.int32, Vector[walkers], MutAnyOrigin],
    table: TileTensor[mut=False, DType.int32, Vector[n], ImmutAnyOrigin],
    start: TileTensor[mut=False, DType.int32, Vector[walkers], ImmutAnyOrigin],
    hops: Int32,
):
    # FILL IN: walker w = block_idx.x * BLOCK + thread_idx.x, if w < walkers,
    # starts at start[w], takes `hops` hops (at = table[at]) and writes where
    # it ends to end[w]. (about 6 lines)
    #ko FILL IN: 워커 w = block_idx.x * BLOCK + thread_idx.x는 w < walkers이면
    #ko start[w]에서 출발해 `hops`번 이동하고(at = table[at]) 도착한 곳을 end[w]에
    #ko 씁니다. (6줄 정도)
    #| pass
    var w = Int(block_idx.x) * BLOCK + Int(thread_idx.x)
    if w < walkers:
        var at = start[w]
        for _ in range(hops):
            at = table[Int(at)]
        end[w] = at
    # END FILL IN


# ---------------------------------------------------------------------------
# Part `hub`: the same walks, on a table where every other hop lands in the
# hub (entries 0 .. HUB - 1). Each block first copies the hub into shared
# memory, 32 KB, and reads hub hops from there; the other hops still go to
# global memory. The block's 32 KB (and 1 KB more that the driver keeps per
# block) come out of the SM's 228 KB, whatever the block size.
# ---------------------------------------------------------------------------
#ko 파트 `hub`: 같은 걸음이지만, 두 번에 한 번은 허브(0 .. HUB - 1번 칸)에
#ko 떨어지는 표 위에서 걷습니다. 각 블록은 먼저 허브를 공유 메모리(32 KB)에
#ko 복사하고 허브로 가는 걸음은 거기서 읽습니다. 나머지 걸음은 여전히 전역
#ko 메모리로 갑니다. 블록의 32 KB(그리고 드라이버가 블록마다 남겨 두는 1 KB)는
#ko 블록 크기와 상관없이 SM의 228 KB에서 나옵니다.

# FILL IN: pick the threads per block of part `hub` (a plain number, read by
# the workbook like BLOCK). Each block holds 33 KB of the SM's 228 KB: how
# many blocks fit, and how many threads must each have for 64 warps? (1 line)
#ko FILL IN: 파트 `hub`의 블록당 스레드 수를 고르세요 (BLOCK처럼 워크북이 읽는
#ko 숫자). 블록마다 SM의 228 KB 중 33 KB를 차지합니다: 블록이 몇 개 들어가고,
#ko 워프 64개가 되려면 블록마다 스레드가 몇 개여야 할까요? (1줄)
#| comptime HUB_BLOCK = 256
comptime HUB_BLOCK = 512
# END FILL IN


def walk_hub[n: Int, walkers: Int](
    end: TileTensor[mut=True, DType.int32, Vector[walkers], MutAnyOrigin],
    table: TileTensor[mut=False, DType.int32, Vector[n], ImmutAnyOrigin],
    start: TileTensor[mut=False, DType.int32, Vector[walkers], ImmutAnyOrigin],
    hops: Int32,
):
    var hub = stack_allocation[dtype=DType.int32, address_space=AddressSpace.SHARED](row_major[HUB]())
    # FILL IN: copy table[0 .. HUB - 1] into hub, the block's threads taking
    # every HUB_BLOCK-th entry each; wait for the whole copy; then walk as in
    # `walk`, reading a position below HUB from hub and any other from table.
    # (about 12 lines)
    #ko FILL IN: table[0 .. HUB - 1]을 hub에 복사하세요. 블록의 스레드들이 각자
    #ko HUB_BLOCK칸마다 하나씩 맡습니다. 복사가 모두 끝나기를 기다린 뒤, `walk`처럼
    #ko 걷되 HUB보다 작은 위치는 hub에서, 나머지는 table에서 읽습니다. (12줄 정도)
    #| pass
    comptime RUN = HUB // HUB_BLOCK  # entries each thread copies, one after another
    var first = Int(thread_idx.x) * RUN
    for i in range(first, first + RUN):
        hub[i] = table[i]
    barrier()
    var w = Int(block_idx.x) * HUB_BLOCK + Int(thread_idx.x)
    if w < walkers:
        var at = start[w]
        for _ in range(hops):
            if Int(at) >= HUB:
                at = table[Int(at)]
            else:
                at = hub[Int(at)]
        end[w] = at
    # END FILL IN
