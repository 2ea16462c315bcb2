# Launches the learner's GPU kernel once. The workbook builds this file with
# `mojo build --target-accelerator=...`, which type-checks the GPU kernel on a
# machine without a GPU; it only runs where a GPU is.
from std.sys import argv
from max.gpu.host import DeviceContext
from layout import TileTensor
from op.softmax import (
    softmax_gpu_kernel,
    softmax_cpu_kernel,
    layout,
    LayoutType,
    SIZE,
    BLOCK_DIM_X,
)


def main() raises:
    var ctx = DeviceContext()
    var out_buf = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var in_buf = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var output = TileTensor[mut=True, DType.float32, LayoutType, MutAnyOrigin](
        out_buf.unsafe_ptr().unsafe_origin_cast[MutAnyOrigin](), layout
    )
    var input = TileTensor[mut=False, DType.float32, LayoutType, ImmutAnyOrigin](
        rebind[Pointer[Float32, ImmutAnyOrigin]](in_buf.unsafe_ptr()), layout
    )
    ctx.enqueue_function[softmax_gpu_kernel[SIZE, DType.float32]](
        output, input, grid_dim=1, block_dim=BLOCK_DIM_X
    )
    ctx.synchronize()
    # Instantiate the CPU kernel too (never run), so its type errors show here.
    if len(argv()) > 1000:
        softmax_cpu_kernel[SIZE, DType.float32](output, input)
