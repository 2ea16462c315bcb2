# HANGS THE GPU ON PURPOSE: on a real GPU, every thread stores to its element for ever (a
# store is a side effect: no compiler may drop the loop). The simulator and the CPU get a
# right kernel. The launcher's alarm and the workbook's kill must end it within the run
# limit plus a few seconds, reported as a timeout, and the graded run's GPU handed on.
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
    comptime if is_gpu():
        var k = 0
        while True:
            output[i] = a[i] + Float32(k)
            k += 1
    output[i] = a[i] + 10
