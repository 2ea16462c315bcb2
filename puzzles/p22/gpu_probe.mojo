# Launches the learner's GPU kernel once, for one small shape, after the
# op's own fill kernel (NaN and zero), as the op does. The workbook builds this
# file with `mojo build --target-accelerator=...`, which type-checks the GPU
# kernels on a machine without a GPU; it only runs where a GPU is.
from std.sys import argv
from std.utils.numerics import nan
from max.gpu.host import DeviceContext, DeviceBuffer
from layout import TileTensor
from layout.tile_layout import row_major, TensorLayout
from op.layernorm_linear import (
    layernorm_linear_backward_gpu_kernel,
    layernorm_linear_backward_cpu_kernel,
    Rows1,
    Rows2,
    Rows3,
    TPB,
    fill,
    halve,
)

comptime BATCH = 2
comptime SEQ = 3
comptime HIDDEN = 12
comptime OUT = 10
comptime dtype = DType.float32


def mutable[
    LayoutType: TensorLayout
](mut buf: DeviceBuffer[dtype], layout: LayoutType) -> TileTensor[
    mut=True, dtype, LayoutType, MutAnyOrigin
]:
    return TileTensor[mut=True, dtype, LayoutType, MutAnyOrigin](
        buf.unsafe_ptr().unsafe_origin_cast[MutAnyOrigin](), layout
    )


def readonly[
    LayoutType: TensorLayout
](buf: DeviceBuffer[dtype], layout: LayoutType) -> TileTensor[
    mut=False, dtype, LayoutType, ImmutAnyOrigin
]:
    return TileTensor[mut=False, dtype, LayoutType, ImmutAnyOrigin](
        rebind[Pointer[Float32, ImmutAnyOrigin]](buf.unsafe_ptr()), layout
    )


def main() raises:
    var ctx = DeviceContext()
    var y_buf = ctx.enqueue_create_buffer[dtype](BATCH * SEQ * OUT)
    var gx_buf = ctx.enqueue_create_buffer[dtype](BATCH * SEQ * HIDDEN)
    var ggamma_buf = ctx.enqueue_create_buffer[dtype](HIDDEN)
    var gbeta_buf = ctx.enqueue_create_buffer[dtype](HIDDEN)
    var gw_buf = ctx.enqueue_create_buffer[dtype](OUT * HIDDEN)
    var gb_buf = ctx.enqueue_create_buffer[dtype](OUT)
    var x_buf = ctx.enqueue_create_buffer[dtype](BATCH * SEQ * HIDDEN)
    var gamma_buf = ctx.enqueue_create_buffer[dtype](HIDDEN)
    var beta_buf = ctx.enqueue_create_buffer[dtype](HIDDEN)
    var w_buf = ctx.enqueue_create_buffer[dtype](OUT * HIDDEN)
    var b_buf = ctx.enqueue_create_buffer[dtype](OUT)
    var gy_buf = ctx.enqueue_create_buffer[dtype](BATCH * SEQ * OUT)

    var y = mutable(y_buf, row_major[BATCH, SEQ, OUT]())
    var gx = mutable(gx_buf, row_major[BATCH, SEQ, HIDDEN]())
    var ggamma = mutable(ggamma_buf, row_major[HIDDEN]())
    var gbeta = mutable(gbeta_buf, row_major[HIDDEN]())
    var gw = mutable(gw_buf, row_major[OUT, HIDDEN]())
    var gb = mutable(gb_buf, row_major[OUT]())
    var x = readonly(x_buf, row_major[BATCH, SEQ, HIDDEN]())
    var gamma = readonly(gamma_buf, row_major[HIDDEN]())
    var beta = readonly(beta_buf, row_major[HIDDEN]())
    var w = readonly(w_buf, row_major[OUT, HIDDEN]())
    var b = readonly(b_buf, row_major[OUT]())
    var gy = readonly(gy_buf, row_major[BATCH, SEQ, OUT]())

    # What the op does before the launch: poison y and grad_input, zero the
    # accumulated gradients.
    fill[BATCH * SEQ * OUT, dtype, "gpu"](y.ptr, nan[dtype](), ctx)
    fill[BATCH * SEQ * HIDDEN, dtype, "gpu"](gx.ptr, nan[dtype](), ctx)
    fill[HIDDEN, dtype, "gpu"](ggamma.ptr, 0, ctx)
    fill[HIDDEN, dtype, "gpu"](gbeta.ptr, 0, ctx)
    fill[OUT * HIDDEN, dtype, "gpu"](gw.ptr, 0, ctx)
    fill[OUT, dtype, "gpu"](gb.ptr, 0, ctx)

    ctx.enqueue_function[
        layernorm_linear_backward_gpu_kernel[BATCH, SEQ, HIDDEN, OUT, dtype]
    ](
        y, gx, ggamma, gbeta, gw, gb, x, gamma, beta, w, b, gy,
        grid_dim=(BATCH, SEQ),
        block_dim=TPB,
    )
    # ...and after it, as the op does after its second launch.
    halve[OUT * HIDDEN, dtype](gw.ptr, ctx)
    ctx.synchronize()
    # Instantiate the CPU kernel too (never run), so its type errors show here.
    if len(argv()) > 1000:
        layernorm_linear_backward_cpu_kernel[BATCH, SEQ, HIDDEN, OUT, dtype](
            y, gx, ggamma, gbeta, gw, gb, x, gamma, beta, w, b, gy
        )
