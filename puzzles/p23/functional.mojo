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

from max.algorithm.functional import elementwise
from max.gpu.host import DeviceContext
from std.algorithm import vectorize
from layout import Coord, TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
comptime SIMD_WIDTH = 4  # float32 values in one 16-byte load
comptime TILE = 32  # elements per tile in parts 2 to 4


# Part 1: elementwise picks the pieces; the closure adds `width` values at i.
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
        pass

    # FILL IN: call elementwise with SIMD_WIDTH over `size` elements, on the GPU.
    # (1 line)
    pass


# Part 2: one call per tile of TILE elements, added one by one.
def tiled_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    comptime tiles = (size + TILE - 1) // TILE

    def add_tile[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var t = Int(indices[0].value())  # which tile
        # FILL IN: take tile t of output, a and b with .tile[TILE](t), and add
        # its elements one by one. Only the elements inside the data: the last
        # tile may stick out past `size`. (about 7 lines)
        pass

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)


# Part 3: one call per tile; inside it, SIMD_WIDTH values per load and store.
def manual_simd_add[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
    ctx: DeviceContext,
) raises:
    comptime tiles = (size + TILE - 1) // TILE

    def add_tile[width: Int, alignment: Int = 1](indices: Coord) {var} -> None:
        var start = Int(indices[0].value()) * TILE  # first element of this tile
        var count = min(TILE, size - start)  # its elements inside the data
        # FILL IN: add the tile's whole vectors with load[SIMD_WIDTH] and
        # store[SIMD_WIDTH], then the count % SIMD_WIDTH elements left over one
        # by one. (about 6 lines)
        pass

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)


# Part 4: the same tiles, with vectorize doing part 3's loops.
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
        def step[w: Int](k: Int) {var} -> None:
            # FILL IN: add `w` values at element start + k. (2 lines)
            pass

        # FILL IN: run step over this tile's `count` elements with vectorize.
        # (1 line)
        pass

    elementwise[1, target="gpu"](add_tile, Coord(tiles), ctx)
