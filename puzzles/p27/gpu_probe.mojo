# Launches the three GPU kernels of this puzzle once each. The workbook builds
# this file with `mojo build --target-accelerator=...`, which type-checks the
# kernels on a machine without a GPU; it only runs where a GPU is.
from max.gpu.host import DeviceContext
from layout import TileTensor
from op.block_patterns import (
    block_dot_kernel,
    block_bin_pack_kernel,
    block_normalize_kernel,
    layout,
    LayoutType,
    scalar_layout,
    ScalarLayoutType,
    SIZE,
    TPB,
)


def main() raises:
    var ctx = DeviceContext()
    var a_buf = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var b_buf = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var vec_buf = ctx.enqueue_create_buffer[DType.float32](SIZE)
    var one_buf = ctx.enqueue_create_buffer[DType.float32](1)
    var bin_buf = ctx.enqueue_create_buffer[DType.int32](1)

    var a = TileTensor[mut=False, DType.float32, LayoutType, ImmutAnyOrigin](
        rebind[Pointer[Float32, ImmutAnyOrigin]](a_buf.unsafe_ptr()), layout
    )
    var b = TileTensor[mut=False, DType.float32, LayoutType, ImmutAnyOrigin](
        rebind[Pointer[Float32, ImmutAnyOrigin]](b_buf.unsafe_ptr()), layout
    )
    var target_bin = TileTensor[
        mut=False, DType.int32, ScalarLayoutType, ImmutAnyOrigin
    ](rebind[Pointer[Int32, ImmutAnyOrigin]](bin_buf.unsafe_ptr()), scalar_layout)
    var vec_out = TileTensor[mut=True, DType.float32, LayoutType, MutAnyOrigin](
        vec_buf.unsafe_ptr().unsafe_origin_cast[MutAnyOrigin](), layout
    )
    var one_out = TileTensor[mut=True, DType.float32, ScalarLayoutType, MutAnyOrigin](
        one_buf.unsafe_ptr().unsafe_origin_cast[MutAnyOrigin](), scalar_layout
    )

    # Part `sum`: dot = sum(a * b).
    ctx.enqueue_function[block_dot_kernel](
        one_out, a, b, grid_dim=1, block_dim=TPB
    )
    # Part `prefix_sum`: pack the values of a of one bin; count them.
    ctx.enqueue_function[block_bin_pack_kernel](
        vec_out, one_out, a, target_bin, grid_dim=1, block_dim=TPB
    )
    # Part `broadcast`: a / mean(a).
    ctx.enqueue_function[block_normalize_kernel](
        vec_out, a, grid_dim=1, block_dim=TPB
    )
    ctx.synchronize()
