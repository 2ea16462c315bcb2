"""The plain flow for a kernel puzzle: the learner's kernel file, plus the host code
a learner would write by hand to launch it, as one standalone Mojo program.

    python benchmarks/plain_kernel.py KERNEL_FILE OUT.mojo

It copies p01's kernel (map.mojo) beside OUT.mojo and writes a `main` that
fills a vector, launches `add_ten` on the GPU with one block of SIZE
threads, copies the result back and checks it: what `mojo run` does in the
upstream course's own puzzle files. benchmarks/bench.py times `mojo run` of
it (or, without a GPU, `mojo build --target-accelerator=sm_90`).
"""

import shutil
import sys
from pathlib import Path

MAIN = '''import map as puzzle
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major

comptime SIZE = 100


def main() raises:
    var ctx = DeviceContext()
    var a = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var output = ctx.enqueue_create_buffer[DType.float32](SIZE)
    with a.map_to_host() as host:
        for i in range(SIZE):
            host[i] = Float32(i) * 0.5
    var a_t = TileTensor[mut=False, DType.float32, type_of(row_major[SIZE]()), ImmutAnyOrigin](
        rebind[Pointer[Float32, ImmutAnyOrigin]](a.unsafe_ptr()), row_major[SIZE]()
    )
    var out_t = TileTensor[mut=True, DType.float32, type_of(row_major[SIZE]()), MutAnyOrigin](
        output.unsafe_ptr().unsafe_origin_cast[MutAnyOrigin](), row_major[SIZE]()
    )
    ctx.enqueue_function[puzzle.add_ten[SIZE]](out_t, a_t, grid_dim=1, block_dim=SIZE)
    ctx.synchronize()
    with output.map_to_host() as host:
        for i in range(SIZE):
            if host[i] != Float32(i) * 0.5 + 10:
                raise Error("wrong value at " + String(i))
    print("ok")
'''


def main() -> int:
    kernel, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kernel, out.parent / "map.mojo")
    out.write_text(MAIN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
