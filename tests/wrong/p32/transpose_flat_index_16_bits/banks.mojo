# WRONG ON PURPOSE (transpose_flat_index_16_bits): Writes the output through a flat index kept in 16 bits (UInt16): past 65535 elements it wraps around, writes over the output's first elements and leaves the last ones unwritten.
# Puzzle 32: bank conflicts. Both kernels below compile, run and give the
# right values; they are slow in a way no value shows. Shared memory is cut
# into 32 banks of 4 bytes: word w lives in bank w % 32. A warp's request is
# served in one pass when its 32 lanes touch 32 different banks (or the same
# word); every extra word in one bank costs one more pass, a bank conflict.
# Run `workbook run p32`: the traffic table counts the conflicts per line, and
# the part fails on the line that has them. Make that count 0, and keep the
# values right.
#ko 퍼즐 32: 뱅크 충돌. 아래의 두 커널은 컴파일되고 실행되며 값도 맞습니다.
#ko 하지만 어떤 값에도 드러나지 않는 이유로 느립니다. 공유 메모리는 4바이트짜리
#ko 뱅크 32개로 나뉩니다: 워드 w는 뱅크 w % 32에 있습니다. 워프의 32개 레인이
#ko 서로 다른 뱅크 32개(또는 같은 워드)를 건드리면 요청 하나가 한 번에
#ko 처리됩니다. 한 뱅크에 워드가 하나 더 있을 때마다 한 번 더 돌아야 하고,
#ko 그것이 뱅크 충돌입니다. `workbook run p32`를 실행하세요: 트래픽 표가 줄마다
#ko 충돌을 세고, 충돌이 있는 줄에서 파트가 실패합니다. 값은 맞게 둔 채 그 수를
#ko 0으로 만드세요.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Matrix[rows: Int, cols: Int] = type_of(row_major[rows, cols]())
# The side of a transpose tile: one warp's width. Keep it, and the two below:
# the workbook launches the kernels with these block sizes.
#ko 전치 타일의 한 변: 워프 하나의 폭. 이 값과 아래 두 값은 바꾸지 마세요.
#ko 워크북이 이 블록 크기로 커널을 실행합니다.
comptime TILE = 32
# Rows of threads per transpose block: a block is TILE x ROWS threads, and
# each thread moves TILE // ROWS = 4 values.
#ko 전치 블록의 스레드 행 수: 블록은 스레드 TILE x ROWS개이고, 스레드마다
#ko 값 TILE // ROWS = 4개를 옮깁니다.
comptime ROWS = 8
# Threads per block of part `pairs`: each block sums 2 * TPB inputs.
#ko 파트 `pairs`의 블록당 스레드 수: 블록마다 입력 2 * TPB개를 더합니다.
comptime TPB = 64


# ---------------------------------------------------------------------------
# Part `transpose`: output[c, r] = a[r, c] for a (rows x cols).
#
# Block (block_idx.x, block_idx.y) moves the TILE x TILE square of a whose
# corner is a[block_idx.y * TILE, block_idx.x * TILE]. Its threads read rows
# of a (neighbouring lanes, neighbouring values: coalesced) into the tile,
# then write rows of the output, which are columns of the tile:
#
#     a            tile           output
#     0 1 2 3      0 1 2 3        0 4 8 c
#     4 5 6 7  ->  4 5 6 7   ->   1 5 9 d     lane x reads tile[x, r]:
#     8 9 a b      8 9 a b        2 6 a e     a column of the tile
#     c d e f      c d e f        3 7 b f
# ---------------------------------------------------------------------------
#ko 파트 `transpose`: a (rows x cols)에 대해 output[c, r] = a[r, c].
#ko
#ko 블록 (block_idx.x, block_idx.y)는 모서리가 a[block_idx.y * TILE,
#ko block_idx.x * TILE]인 a의 TILE x TILE 정사각형을 옮깁니다. 스레드들은
#ko a의 행을 읽어(이웃 레인이 이웃 값을 읽으니 병합됩니다) 타일에 넣고,
#ko 출력의 행을 씁니다. 출력의 행은 타일의 열입니다:
#ko
#ko     a            tile           output
#ko     0 1 2 3      0 1 2 3        0 4 8 c
#ko     4 5 6 7  ->  4 5 6 7   ->   1 5 9 d     레인 x는 tile[x, r]을 읽습니다:
#ko     8 9 a b      8 9 a b        2 6 a e     타일의 한 열
#ko     c d e f      c d e f        3 7 b f


def transpose[rows: Int, cols: Int](
    output: TileTensor[mut=True, dtype, Matrix[cols, rows], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Matrix[rows, cols], ImmutAnyOrigin],
):
    var tx = Int(thread_idx.x)
    var ty = Int(thread_idx.y)
    var row0 = Int(block_idx.y) * TILE
    var col0 = Int(block_idx.x) * TILE

    # FILL IN: this tile gives the right values, and the report's traffic
    # table says what the line that reads it costs. Where does the word
    # tile[x, r] lie, for the 32 lanes x of a warp? Change the tile (or how
    # it is indexed) so that they lie in 32 different banks. (1 line, or a
    # few)
    #ko FILL IN: 이 타일로도 값은 맞습니다. 타일을 읽는 줄의 비용은 보고서의
    #ko 트래픽 표가 알려 줍니다. 워프의 레인 x 32개에 대해 워드 tile[x, r]은
    #ko 어느 뱅크에 있을까요? 그 워드들이 서로 다른 뱅크 32개에 놓이도록
    #ko 타일을(또는 타일의 인덱스를) 바꾸세요. (1줄, 또는 몇 줄)
    #| var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE, TILE]())
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[TILE, TILE + 1]())
    # END FILL IN

    # Read: thread (tx, ty) copies a[row0 + r, col0 + tx] to tile[r, tx] for
    # r = ty, ty + ROWS, ...: a warp (one ty) writes one row of the tile.
    #ko 읽기: 스레드 (tx, ty)는 r = ty, ty + ROWS, ...에 대해
    #ko a[row0 + r, col0 + tx]를 tile[r, tx]에 복사합니다. 워프 하나(ty 하나)가
    #ko 타일의 한 행을 씁니다.
    for r in range(ty, TILE, ROWS):
        if row0 + r < rows and col0 + tx < cols:
            tile[r, tx] = a[row0 + r, col0 + tx]
    barrier()

    # Write: output row col0 + r is column r of the tile; lane tx writes
    # output[col0 + r, row0 + tx], which is a[row0 + tx, col0 + r].
    #ko 쓰기: 출력의 행 col0 + r은 타일의 열 r입니다. 레인 tx가
    #ko output[col0 + r, row0 + tx], 즉 a[row0 + tx, col0 + r]을 씁니다.
    for r in range(ty, TILE, ROWS):
        if col0 + r < cols and row0 + tx < rows:
            var flat = UInt16((col0 + r) * rows + row0 + tx)
            output.ptr.unsafe_store(Int(flat), tile[tx, r])


# ---------------------------------------------------------------------------
# Part `pairs`: output[i] = x[2 * i] + x[2 * i + 1] for i < size.
#
# Reading x[2 * i] straight from global memory would make every request of a
# warp span twice the bytes it uses. So each block first copies its 2 * TPB
# inputs into shared memory, lane by lane (coalesced), then thread i adds its
# pair from there. Lane l reads words 2l and 2l + 1: in one request the 32
# lanes touch only the 16 even banks, two words each.
# ---------------------------------------------------------------------------
#ko 파트 `pairs`: i < size에 대해 output[i] = x[2 * i] + x[2 * i + 1].
#ko
#ko x[2 * i]를 전역 메모리에서 바로 읽으면 워프의 요청마다 쓰는 바이트의 두 배를
#ko 가져옵니다. 그래서 블록마다 먼저 입력 2 * TPB개를 레인 순서대로(병합되게)
#ko 공유 메모리에 복사하고, 스레드 i는 거기서 자기 쌍을 더합니다. 레인 l은
#ko 워드 2l과 2l + 1을 읽습니다: 요청 하나에서 32개 레인이 짝수 뱅크 16개만,
#ko 뱅크마다 워드 두 개씩 건드립니다.


def pair_sums[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    x: TileTensor[mut=False, dtype, Vector[2 * size], ImmutAnyOrigin],
):
    var t = Int(thread_idx.x)
    var base = Int(block_idx.x) * 2 * TPB
    var i = Int(block_idx.x) * TPB + t
    var pairs = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[2 * TPB]())

    # Copy: thread t copies inputs base + t and base + TPB + t.
    #ko 복사: 스레드 t가 입력 base + t와 base + TPB + t를 복사합니다.
    if base + t < 2 * size:
        pairs[t] = x[base + t]
    if base + TPB + t < 2 * size:
        pairs[TPB + t] = x[base + TPB + t]
    barrier()

    # FILL IN: the right sums, two passes per read: in one request, which
    # banks do the words 2 * t of a warp's 32 lanes fall in? Change the
    # order of the reads, or the way the copy above lays out the tile, so
    # that each read of a warp touches 32 different banks. (about 4 lines)
    #ko FILL IN: 합은 맞지만 읽기마다 두 번 돕니다. 요청 하나에서 워프의 레인
    #ko 32개가 읽는 워드 2 * t는 어느 뱅크에 떨어질까요? 읽는 순서를, 또는 위의
    #ko 복사가 타일을 놓는 방식을 바꿔 워프의 읽기마다 서로 다른 뱅크 32개를
    #ko 건드리게 하세요. (4줄 정도)
    #| if i < size:
    #|     output[i] = pairs[2 * t] + pairs[2 * t + 1]
    if i < size:
        # Lanes 16..31 of a warp read their pair odd word first.
        #ko 워프의 레인 16..31은 자기 쌍을 홀수 워드부터 읽습니다.
        var h = (t // 16) % 2
        var first = pairs[2 * t + h]
        var second = pairs[2 * t + 1 - h]
        output[i] = first + second
    # END FILL IN
