# WRONG ON PURPOSE (columns_ignore_block): part b takes the row from the thread alone (r = thread_idx.x), as if one block covered every row.
# Puzzle 30: profiling. One job, a box filter along each row of a matrix:
#
#     output[r, c] = m[r, c - RADIUS] + ... + m[r, c] + ... + m[r, c + RADIUS]
#
# (columns outside the row count as 0), written three ways for you: parts
# a, b and c run them as given. Read their reports: the simulator counts,
# per line, how many 32-byte sectors each warp's load fetches, and each
# thread's reads of global memory. With a GPU, the report also times them.
# Then answer three questions at the bottom of this file (part explain),
# and write the fast kernel (part fast).
#ko 퍼즐 30: 프로파일링. 한 가지 일, 행렬의 행마다 상자 필터:
#ko
#ko     output[r, c] = m[r, c - RADIUS] + ... + m[r, c] + ... + m[r, c + RADIUS]
#ko
#ko (행 밖의 열은 0으로 셉니다)를 세 가지 방법으로 미리 써 두었습니다. 파트 a, b,
#ko c가 그대로 실행합니다. 보고서를 읽으세요: 시뮬레이터는 줄마다 워프의 로드 하나가
#ko 32바이트 섹터를 몇 개 가져오는지, 그리고 스레드마다 전역 메모리를 몇 번 읽는지
#ko 셉니다. GPU가 있으면 보고서는 시간도 잽니다. 그다음 이 파일 맨 아래의 질문
#ko 세 개에 답하고(파트 explain), 빠른 커널을 쓰세요(파트 fast).

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
# The type of a rows x cols matrix, row after row.
#ko 행을 차례로 놓은 rows x cols 행렬의 타입.
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The type of a vector of n values.
#ko 값 n개짜리 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block, and how far the window reaches on each side.
#ko 블록당 스레드 수, 그리고 창이 양쪽으로 뻗는 거리.
comptime TPB = 128
comptime RADIUS = 4


# Part a, given: one thread per output, x along the columns of a row (the
# grid is ceildiv(cols, TPB) x rows). Each thread reads its window from
# global memory.
#ko 파트 a, 주어짐: 출력마다 스레드 하나, x는 한 행의 열을 따라갑니다(그리드는
#ko ceildiv(cols, TPB) x rows). 스레드마다 자기 창을 전역 메모리에서 읽습니다.
def box_rows[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = block_idx.y
    var c = block_idx.x * TPB + thread_idx.x
    if c < cols:
        var total: Scalar[dtype] = 0
        for k in range(c - RADIUS, c + RADIUS + 1):
            if k >= 0 and k < cols:
                total += m[r, k][0]
        output[r, c] = total


# Part b, given: the same window, but x runs down the rows of a column (the
# grid is ceildiv(rows, TPB) x cols): the 32 threads of a warp read 32
# different rows at once.
#ko 파트 b, 주어짐: 같은 창이지만 x가 한 열의 행을 따라 내려갑니다(그리드는
#ko ceildiv(rows, TPB) x cols). 워프의 스레드 32개가 한 번에 서로 다른 행 32개를 읽습니다.
def box_columns[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = thread_idx.x  # one block covers the rows
    var c = block_idx.y
    if r < rows:
        var total: Scalar[dtype] = 0
        for k in range(c - RADIUS, c + RADIUS + 1):
            if k >= 0 and k < cols:
                total += m[r, k][0]
        output[r, c] = total


# Part c, given: laid out as part a, but each thread slides a running sum
# from the row's first column to its own, adding the column that enters the
# window and taking away the one that leaves it. On one CPU core that is the
# fast way (each step costs 2 reads); here every thread starts again at
# column 0.
#ko 파트 c, 주어짐: 파트 a처럼 배치했지만, 스레드마다 행의 첫 열에서 자기 열까지
#ko 누적 합을 밀고 갑니다. 창에 들어오는 열을 더하고 나가는 열을 뺍니다. CPU 코어
#ko 하나에서는 이것이 빠른 방법입니다(한 걸음에 읽기 2번). 여기서는 스레드마다
#ko 열 0에서 다시 시작합니다.
def box_sliding[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var r = block_idx.y
    var c = block_idx.x * TPB + thread_idx.x
    if c < cols:
        var total: Scalar[dtype] = 0  # the window of column 0: columns 0 .. RADIUS
        #ko 열 0의 창: 열 0 .. RADIUS
        for k in range(min(RADIUS + 1, cols)):
            total += m[r, k][0]
        for j in range(1, c + 1):  # slide the window one column right
            #ko 창을 오른쪽으로 한 열 밉니다
            if j + RADIUS < cols:
                total += m[r, j + RADIUS][0]
            if j - RADIUS - 1 >= 0:
                total -= m[r, j - RADIUS - 1][0]
        output[r, c] = total


# Part fast: yours. Laid out as part a (the grid is ceildiv(cols, TPB) x
# rows: block (x, r) owns the columns x * TPB .. x * TPB + TPB - 1 of row r),
# but each value of m is read from global memory once per block, into
# `tile`, and the windows are summed from there. tile[k] holds the column
# x * TPB - RADIUS + k of row r, and 0 where that column is outside the row.
#ko 파트 fast: 여러분의 커널. 파트 a처럼 배치합니다(그리드는 ceildiv(cols, TPB) x
#ko rows: 블록 (x, r)은 행 r의 열 x * TPB .. x * TPB + TPB - 1을 맡습니다). 다만
#ko m의 값은 블록마다 전역 메모리에서 한 번만 `tile`로 읽고, 창은 거기서 더합니다.
#ko tile[k]는 행 r의 열 x * TPB - RADIUS + k를 담고, 그 열이 행 밖이면 0을 담습니다.
def box_shared[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[rows, cols], MutAnyOrigin],
    m: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var t = thread_idx.x
    var r = block_idx.y
    var first = block_idx.x * TPB - RADIUS  # the column tile[0] holds (may be < 0)
    #ko tile[0]이 담는 열(0보다 작을 수 있음)
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB + 2 * RADIUS]()
    )
    # FILL IN: fill tile[0 .. TPB + 2 * RADIUS - 1]: thread t fills slot t,
    # and the first 2 * RADIUS threads also slot t + TPB (neighbouring
    # threads, neighbouring columns); then wait for the whole block. (about 7 lines)
    #ko FILL IN: tile[0 .. TPB + 2 * RADIUS - 1]을 채웁니다. 스레드 t는 칸 t를, 처음
    #ko 2 * RADIUS개의 스레드는 칸 t + TPB도 채웁니다(이웃한 스레드가 이웃한 열).
    #ko 그다음 블록 전체를 기다립니다. (7줄 정도)
    #| pass
    for k in range(t, TPB + 2 * RADIUS, TPB):
        var col = first + k
        if col >= 0 and col < cols:
            tile[k] = m[r, col]
        else:
            tile[k] = 0
    barrier()
    # END FILL IN
    # FILL IN: the output of column first + RADIUS + t (inside the row only)
    # is the sum of tile[t .. t + 2 * RADIUS]. (about 5 lines)
    #ko FILL IN: 열 first + RADIUS + t의 출력(행 안일 때만)은
    #ko tile[t .. t + 2 * RADIUS]의 합입니다. (5줄 정도)
    #| pass
    var c = first + RADIUS + t
    if c < cols:
        var total: Scalar[dtype] = 0
        for k in range(t, t + 2 * RADIUS + 1):
            total += tile[k][0]
        output[r, c] = total
    # END FILL IN


# Part explain: your answers, read from the reports of parts a, b and c.
# Each is a part: 1 for a, 2 for b, 3 for c (0: not answered yet).
#ko 파트 explain: 파트 a, b, c의 보고서를 읽고 내린 답. 답은 파트 번호입니다:
#ko a는 1, b는 2, c는 3(0: 아직 답하지 않음).
# FILL IN: the part whose loads fetch the most sectors per request, the
# part whose threads read global memory the most times, and the slowest
# part. (3 lines)
#ko FILL IN: 요청 하나에 섹터를 가장 많이 가져오는 로드의 파트, 스레드가 전역
#ko 메모리를 가장 많이 읽는 파트, 그리고 가장 느린 파트. (3줄)
#| comptime MOST_SECTORS = 0
#| comptime MOST_READS = 0
#| comptime SLOWEST = 0
comptime MOST_SECTORS = 2
comptime MOST_READS = 3
comptime SLOWEST = 3
# END FILL IN


# Given: hands your answers to the workbook. keys holds 4 numbers per
# question, one per answer; the workbook knows which one is right.
#ko 주어짐: 답을 워크북에 넘깁니다. keys에는 질문마다 답 하나에 하나씩 숫자 4개가
#ko 있고, 워크북은 어느 것이 맞는지 압니다.
def answers(
    output: TileTensor[mut=True, DType.int32, Vector[3], MutAnyOrigin],
    keys: TileTensor[mut=False, DType.int32, Vector[12], ImmutAnyOrigin],
):
    comptime assert 0 <= MOST_SECTORS <= 3, "MOST_SECTORS is a part: 1 (a), 2 (b) or 3 (c)"
    comptime assert 0 <= MOST_READS <= 3, "MOST_READS is a part: 1 (a), 2 (b) or 3 (c)"
    comptime assert 0 <= SLOWEST <= 3, "SLOWEST is a part: 1 (a), 2 (b) or 3 (c)"
    if thread_idx.x == 0:
        output[0] = keys[MOST_SECTORS]
        output[1] = keys[4 + MOST_READS]
        output[2] = keys[8 + SLOWEST]
