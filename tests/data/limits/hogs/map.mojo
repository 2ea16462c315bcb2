# RIGHT, BUT GREEDY ON PURPOSE: a right kernel that takes 4 GB of memory, 64 MB at a time
# (issue 17: one reached 5.4 GB). When the memory runs out it aborts, as a program does.
from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major
from std.ffi import external_call
from std.sys import is_gpu

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())


def add_ten[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = thread_idx.x
    comptime if not is_gpu():
        if i == 0:
            for _ in range(64):
                var chunk = external_call["malloc", Int](Int(64 << 20))
                if chunk == 0:
                    external_call["abort", NoneType]()
                _ = external_call["memset", Int](chunk, Int32(1), Int(64 << 20))
    output[i] = a[i] + 10
