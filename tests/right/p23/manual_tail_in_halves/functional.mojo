# A RIGHT KERNEL WRITTEN ANOTHER WAY (manual_tail_in_halves): Moves the leftover elements two at a time and then one, where the solution moves them one at a time.
# Puzzle 23: functional patterns. One job, output = a + b, written four ways.
#
# Until now you wrote the kernel and the workbook launched it. Here you write
# host functions: each receives the tensors and a DeviceContext `ctx`, and
# hands a closure to `elementwise`, which launches the GPU kernel for you and
# calls the closure once for each piece of the work:
#
#     elementwise[W, target="gpu"](func, Coord(n), ctx)
#       calls func[W](Coord(i)) for i = 0, W, 2W, ... while i + W <= n,
#       then func[1](Coord(i)) for each i of the n % W left over.
#
#     n = 10, W = 4:   [ 0  1  2  3 | 4  5  6  7 | 8 | 9 ]
#                        func[4](0)   func[4](4)  [1] [1]
#
# `width` is a parameter of the closure, not always W: read and write exactly
# `width` values at `i`. In parts 2 to 4 the closure gets a whole tile of TILE
# elements (elementwise with width 1, one call per tile): the last tile of a
# size that is not a multiple of TILE is only partly inside the data.
#ko 퍼즐 23: 함수형 패턴. 같은 일 output = a + b를 네 가지 방법으로 씁니다.
#ko
#ko 지금까지는 커널을 쓰면 워크북이 실행했습니다. 여기서는 호스트 함수를
#ko 씁니다. 함수마다 텐서와 DeviceContext `ctx`를 받아, 클로저를
#ko `elementwise`에 넘깁니다. elementwise가 GPU 커널을 대신 실행하고, 일의
#ko 조각마다 클로저를 한 번씩 부릅니다.
#ko
#ko     elementwise[W, target="gpu"](func, Coord(n), ctx)
#ko       i + W <= n인 동안 i = 0, W, 2W, ...마다 func[W](Coord(i))를 부르고,
#ko       남은 n % W개의 i마다 func[1](Coord(i))를 부릅니다.
#ko
#ko     n = 10, W = 4:   [ 0  1  2  3 | 4  5  6  7 | 8 | 9 ]
#ko                        func[4](0)   func[4](4)  [1] [1]
#ko
#ko `width`는 클로저의 파라미터이고 늘 W인 것은 아닙니다. `i`에서 정확히
#ko `width`개를 읽고 씁니다. 파트 2~4에서는 클로저가 TILE개짜리 타일 하나를
#ko 통째로 받습니다(폭 1의 elementwise, 타일마다 호출 한 번). 크기가 TILE의
#ko 배수가 아니면 마지막 타일은 일부만 데이터 안에 있습니다.

from max.algorithm.functional import elementwise
from max.gpu.host import DeviceContext
from std.algorithm import vectorize
from layout import Coord, TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
comptime SIMD_WIDTH = 4  # float32 values in one 16-byte load
#ko 16바이트 로드 한 번에 담기는 float32 값의 수
comptime TILE = 32  # elements per tile in parts 2 to 4
#ko 파트 2~4에서 타일 하나의 원소 수


# Part 1: elementwise picks the pieces; the closure adds `width` values at i.
#ko 파트 1: 조각은 elementwise가 고르고, 클로저는 i에서 값 `width`개를 더합니다.
def simd_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    def add[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var i = Int(indices[0].value())
        # FILL IN: load `width` values of a and of b at i, and store their sum
        # at i of output. (1 to 3 lines)
        #ko FILL IN: i에서 a와 b의 값을 `width`개씩 읽어, 그 합을 output의 i에
        #ko 저장합니다. (1~3줄)
        #| pass
        output.store[width](Coord(i), a.load[width](Coord(i)) + b.load[width](Coord(i)))
        # END FILL IN

    # FILL IN: call elementwise with SIMD_WIDTH over `size` elements, on the GPU.
    # (1 line)
    #ko FILL IN: `size`개 원소에 대해 SIMD_WIDTH로 elementwise를 GPU에서
    #ko 부릅니다. (1줄)
    #| pass
    elementwise[SIMD_WIDTH, target="gpu"](add, Coord(size), ctx)
    # END FILL IN


# Part 2: one call per tile of TILE elements, added one by one.
#ko 파트 2: TILE개짜리 타일마다 호출 한 번, 원소를 하나씩 더합니다.
def tiled_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    comptime tiles = (size + TILE - 1) // TILE

    def add_tile[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var t = Int(indices[0].value())  # which tile
        #ko 몇 번째 타일인지
        # FILL IN: take tile t of output, a and b with .tile[TILE](t), and add
        # its elements one by one. Only the elements inside the data: the last
        # tile may stick out past `size`. (about 7 lines)
        #ko FILL IN: .tile[TILE](t)로 output, a, b의 타일 t를 꺼내 원소를 하나씩
        #ko 더합니다. 데이터 안의 원소만: 마지막 타일은 `size` 너머로 삐져나올 수
        #ko 있습니다. (7줄 정도)
        #| pass
        var out_tile = output.tile[TILE](t)
        var a_tile = a.tile[TILE](t)
        var b_tile = b.tile[TILE](t)
        for j in range(TILE):
            if t * TILE + j < size:
                out_tile[j] = a_tile[j] + b_tile[j]
        # END FILL IN

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)


# Part 3: one call per tile; inside it, SIMD_WIDTH values per load and store.
#ko 파트 3: 타일마다 호출 한 번, 그 안에서 로드와 저장 한 번에 SIMD_WIDTH개씩.
def manual_simd_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    comptime tiles = (size + TILE - 1) // TILE

    def add_tile[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var start = Int(indices[0].value()) * TILE  # first element of this tile
        #ko 이 타일의 첫 원소
        var count = min(TILE, size - start)  # its elements inside the data
        #ko 그중 데이터 안에 있는 원소 수
        # FILL IN: add the tile's whole vectors with load[SIMD_WIDTH] and
        # store[SIMD_WIDTH], then the count % SIMD_WIDTH elements left over one
        # by one. (about 6 lines)
        #ko FILL IN: 타일의 온전한 벡터는 load[SIMD_WIDTH]와 store[SIMD_WIDTH]로
        #ko 더하고, 남은 count % SIMD_WIDTH개는 하나씩 더합니다. (6줄 정도)
        #| pass
        var whole = count - count % SIMD_WIDTH
        for k in range(0, whole, SIMD_WIDTH):
            var i = start + k
            output.store[SIMD_WIDTH](Coord(i), a.load[SIMD_WIDTH](Coord(i)) + b.load[SIMD_WIDTH](Coord(i)))
        var k = whole
        if count - k >= 2:
            var j = start + k
            output.store[2](Coord(j), a.load[2](Coord(j)) + b.load[2](Coord(j)))
            k += 2
        if k < count:
            output[start + k] = a[start + k] + b[start + k]
        # END FILL IN

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)


# Part 4: the same tiles, with vectorize doing part 3's loops.
#ko 파트 4: 같은 타일, 파트 3의 반복문은 vectorize가 맡습니다.
def vectorized_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    comptime tiles = (size + TILE - 1) // TILE

    def add_tile[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var start = Int(indices[0].value()) * TILE
        var count = min(TILE, size - start)

        # vectorize[SIMD_WIDTH](count, step) calls step[SIMD_WIDTH](k) for the
        # whole vectors of 0..count and step[1](k) for the rest.
        #ko vectorize[SIMD_WIDTH](count, step)는 0..count의 온전한 벡터마다
        #ko step[SIMD_WIDTH](k)를, 나머지마다 step[1](k)를 부릅니다.
        def step[w: Int](k: Int) {var} -> None:
            # FILL IN: add `w` values at element start + k. (2 lines)
            #ko FILL IN: start + k 원소에서 값 `w`개를 더합니다. (2줄)
            #| pass
            var i = start + k
            output.store[w](Coord(i), a.load[w](Coord(i)) + b.load[w](Coord(i)))
            # END FILL IN

        # FILL IN: run step over this tile's `count` elements with vectorize.
        # (1 line)
        #ko FILL IN: vectorize로 이 타일의 원소 `count`개에 step을 실행합니다. (1줄)
        #| pass
        vectorize[SIMD_WIDTH](count, step)
        # END FILL IN

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)
