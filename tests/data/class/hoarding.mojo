# MEMORY-HUNGRY, in plain Mojo (no foreign call a source guard would refuse): right values,
# and thread 0 keeps 64 MB list after 64 MB list, 4 GB in all. The run must be stopped at
# the memory limit, saying so, and the grader stay unharmed.
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
            var hoard = List[List[Int]]()
            for _ in range(64):
                hoard.append(List[Int](length=8 << 20, fill=1))
            output[0] = Float32(len(hoard) - 64)  # kept alive to the end
    output[i] = a[i] + 10
