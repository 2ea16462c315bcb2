# Puzzle 31: occupancy. Each walker follows a table from its start, one hop
# at a time: at = table[at]. A hop's address is the previous hop's value, so
# a thread can never have two loads in flight; it waits out each one (about a
# microsecond from memory). What keeps the GPU busy meanwhile is other warps:
# an SM holds up to 64 warps at once, and runs whichever has its value. Here
# you write the walks, and you pick the block sizes, so that every SM holds
# all 64 warps. The report's occupancy table shows what each block size,
# register count and shared array leaves room for.

from max.gpu import thread_idx, block_idx
from max.gpu.sync import barrier
from max.gpu.memory import AddressSpace
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime Vector[n: Int] = type_of(row_major[n]())
# The hub: entries 0 .. HUB - 1 of the table, which every other hop of part
# `hub` reads. Keep it: the cases are built around it.
comptime HUB = 8192


# ---------------------------------------------------------------------------
# Part `walk`: end[w] = the position walker w reaches from start[w] after
# `hops` hops through table, for w < walkers; one walker per thread.
# ---------------------------------------------------------------------------

# FILL IN: pick the threads per block of part `walk`. The workbook reads this
# line and launches ceildiv(walkers, BLOCK) blocks of BLOCK threads: write a
# plain number. Which block sizes let an SM hold all 64 of its warps? (1 line)
comptime BLOCK = 32


def walk[n: Int, walkers: Int](
    end: TileTensor[mut=True, DType.int32, Vector[walkers], MutAnyOrigin],
    table: TileTensor[mut=False, DType.int32, Vector[n], ImmutAnyOrigin],
    start: TileTensor[mut=False, DType.int32, Vector[walkers], ImmutAnyOrigin],
    hops: Int32,
):
    # FILL IN: walker w = block_idx.x * BLOCK + thread_idx.x, if w < walkers,
    # starts at start[w], takes `hops` hops (at = table[at]) and writes where
    # it ends to end[w]. (about 6 lines)
    pass


# ---------------------------------------------------------------------------
# Part `hub`: the same walks, on a table where every other hop lands in the
# hub (entries 0 .. HUB - 1). Each block first copies the hub into shared
# memory, 32 KB, and reads hub hops from there; the other hops still go to
# global memory. The block's 32 KB (and 1 KB more that the driver keeps per
# block) come out of the SM's 228 KB, whatever the block size.
# ---------------------------------------------------------------------------

# FILL IN: pick the threads per block of part `hub` (a plain number, read by
# the workbook like BLOCK). Each block holds 33 KB of the SM's 228 KB: how
# many blocks fit, and how many threads must each have for 64 warps? (1 line)
comptime HUB_BLOCK = 256


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
    pass
