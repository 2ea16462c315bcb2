# Puzzle 35: alignment. One job, output[i] = 2 * a[offset + i] + b[offset + i],
# written three ways; the values are the easy part.
#
# A GPU moves global memory fastest in wide pieces: one `ld.global.v4.b32`
# instruction brings 4 floats (16 bytes, 128 bits) where `ld.global.b32`
# brings 1. The compiler only emits the wide one when it can prove that the
# address is a multiple of 16 bytes, because a 128-bit access at any other
# address is a fault on the GPU. So a load of 4 floats at once is:
#
#     unsafe_load[width=4](i)                  alignment 4 (one float's):
#                                              4 loads of 32 bits in the PTX
#     unsafe_load[width=4, alignment=16](i)    a promise that the address is a
#                                              multiple of 16: 1 load of 128 bits
#
#     floats      0  1  2  3 | 4  5  6  7 | 8  9 10 11 | 12 ...
#     16 B lines  [ line 0  ] [ line 1  ] [ line 2   ]
#     offset = 4: a vector at offset + 4t starts a line: the promise holds
#     offset = 3: every vector straddles two lines: it would be a lie
#
# The workbook counts each kernel's loads and stores in the PTX of the GPU
# build (on every machine: the build for the GPU needs no GPU) and shows
# them beside the values; part 3 fails unless its loads and stores are v4.
# On a GPU the report also shows how fast each kernel moved memory.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block.
comptime TPB = 32
# Floats in one 128-bit access, and the bytes its address must be a multiple of.
comptime WIDTH = 4
comptime ALIGN = 16


# Part 1: one float per thread. The launch has ceildiv(size, TPB) blocks.
def combine_scalar[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    # FILL IN: find this thread's element i; inside the output, write
    # 2 * a[offset + i] + b[offset + i] there. (3 lines)
    pass


# Part 2: WIDTH floats per thread, loaded and stored WIDTH at a time, from an
# `offset` that is not a multiple of WIDTH: the vectors of a and b straddle
# 16-byte lines, so claim no alignment. Thread t owns the outputs
# WIDTH*t .. WIDTH*t + WIDTH - 1; when size is not a multiple of WIDTH, the
# last thread's vector is partly past the end: do those few one at a time.
# The launch has ceildiv(ceildiv(size, WIDTH), TPB) blocks.
def combine_vector[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    var i = (block_idx.x * block_dim.x + thread_idx.x) * WIDTH  # this thread's first output
    # FILL IN: a whole vector (i + WIDTH <= size): load WIDTH floats of a and
    # of b with a.ptr.unsafe_load[width=WIDTH](offset + i), and store
    # 2 * va + vb with output.ptr.unsafe_store(i, ...); otherwise, the outputs
    # from i to size - 1 one by one. (about 7 lines)
    pass


# Part 3: part 2 again, but here `offset` is a multiple of WIDTH, so every
# vector of a, b and output starts a 16-byte line (the buffers themselves
# start on one): say so with alignment=ALIGN on the loads and the store, and
# the PTX must show v4 loads and stores.
def combine_aligned[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    comptime assert offset % WIDTH == 0, "part 3's offsets are multiples of WIDTH"
    var i = (block_idx.x * block_dim.x + thread_idx.x) * WIDTH  # this thread's first output
    # FILL IN: as in part 2, with alignment=ALIGN on both loads and on the
    # store of a whole vector. (about 7 lines)
    pass
