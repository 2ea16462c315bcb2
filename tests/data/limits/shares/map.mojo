# RIGHT, BUT GREEDY ON PURPOSE, IN SHARED MEMORY: a right kernel that fills 1 GB of an
# anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS), which is no process's data: the
# per-process limit never counted it (issue 38: shared memory reached 5.9 GB under 512 MB).
# The kernel fills it (a read from /dev/zero), so the simulator's watch of each store
# (which a memset would go through) plays no part.
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
            # PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS
            var shared = external_call["mmap", Int](Int(0), Int(1 << 30), Int32(3), Int32(0x21), Int32(-1), Int(0))
            var path = "/dev/zero"
            var zero = external_call["open", Int32](path.unsafe_ptr(), Int32(0))
            if shared != -1 and zero >= 0:
                _ = external_call["read", Int](zero, shared, Int(1 << 30))
    output[i] = a[i] + 10
