# RIGHT, BUT LOUD ON PURPOSE: a right kernel that prints about 20 MB (issue 17: one printed
# 79 MB into its log and passed). Only on the host (the simulator), where print is cheap.
from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major
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
            for _ in range(200000):
                print("debug output that nobody reads, a hundred characters long, again and again, and again....")
    output[i] = a[i] + 10
