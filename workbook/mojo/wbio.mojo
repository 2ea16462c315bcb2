# wbio: what the generated GPU launcher needs of Mojo (device buffers filled
# the way the checker wants them: outputs NaN, sums zero; tensors over them);
# the rest of its harness (arguments, the inputs file, outputs, phase,
# result.json) is wbio.c, compiled once and linked in. The host launcher's
# harness is in wbsim.c.

from std.ffi import external_call
from std.sys import size_of
from std.utils.numerics import nan
from max.gpu.host import DeviceBuffer, DeviceContext
from layout import TileTensor
from layout.tile_layout import TensorLayout


def tile_mut[dtype: DType, L: TensorLayout](address: Int, layout: L) -> TileTensor[mut=True, dtype, L, MutAnyOrigin]:
    """A writable tensor over memory at `address` (a device or host buffer)."""
    return TileTensor[mut=True, dtype, L, MutAnyOrigin](
        ptr=Pointer[Scalar[dtype], MutAnyOrigin](unsafe_from_address=address), layout=layout
    )


def tile[dtype: DType, L: TensorLayout](address: Int, layout: L) -> TileTensor[mut=False, dtype, L, ImmutAnyOrigin]:
    """A read-only tensor over memory at `address`."""
    return TileTensor[mut=False, dtype, L, ImmutAnyOrigin](
        ptr=Pointer[Scalar[dtype], ImmutAnyOrigin](unsafe_from_address=address), layout=layout
    )


struct Harness(Movable):
    """The run: its arguments and files, all kept by wbio.c."""
    var repeats: Int

    def __init__(out self) raises:
        if external_call["wbio_begin", Int]() == 0:
            raise Error("the launcher could not start (its stderr says why)")
        self.repeats = external_call["wbio_repeats", Int]()

    def cpu_mode(self) -> Bool:
        return external_call["wbio_cpu_mode", Int]() != 0

    def wants(self, index: Int) -> Bool:
        return external_call["wbio_wants", Int](index) != 0

    def asked(self, index: Int) -> Bool:
        """Whether case `index` was named on the command line (timed cases run only then)."""
        return external_call["wbio_asked", Int](index) != 0

    def record_times(mut self, index: Int, times: List[Int]):
        """Each timed launch's device time in ns, into result.json as "times_INDEX"."""
        external_call["wbio_record_times", NoneType](index, Int(times.unsafe_ptr()), len(times))

    def phase(self, index: Int, total: Int):
        """Tell the workbook which case is running (its progress display reads it)."""
        external_call["wbio_phase", NoneType](index, total)

    def input(self, offset: Int, nbytes: Int) raises -> Int:
        """The address of an input, at its offset in inputs.bin."""
        var address = external_call["wbio_input", Int](offset, nbytes)
        if address == 0:
            raise Error("inputs.bin is shorter than the plan says")
        return address

    def save(mut self, address: Int, nbytes: Int, case_index: Int, rep: Int, k: Int) raises:
        """Host memory at `address` into outputs.bin as output `k` of this case and repeat."""
        if external_call["wbio_save", Int](address, nbytes, case_index, rep, k) == 0:
            raise Error("could not write outputs.bin")

    def device_input[dtype: DType](self, ctx: DeviceContext, offset: Int, count: Int) raises -> DeviceBuffer[dtype]:
        var address = self.input(offset, count * size_of[dtype]())
        var host = ctx.enqueue_create_host_buffer[dtype](count)
        _ = external_call["memcpy", Int](Int(host.unsafe_ptr()), address, count * size_of[dtype]())
        var device = ctx.enqueue_create_buffer[dtype](count)
        ctx.enqueue_copy(device, host)
        return device

    def save_device[dtype: DType](
        mut self, ctx: DeviceContext, buffer: DeviceBuffer[dtype], count: Int, case_index: Int, rep: Int, k: Int
    ) raises:
        var host = ctx.enqueue_create_host_buffer[dtype](count)
        ctx.enqueue_copy(host, buffer)
        ctx.synchronize()
        self.save(Int(host.unsafe_ptr()), count * size_of[dtype](), case_index, rep, k)

    def finish(mut self) raises:
        """The run went to the end: result.json says so."""
        if external_call["wbio_finish", Int]() == 0:
            raise Error("could not write result.json")


def poison_device[dtype: DType](buffer: DeviceBuffer[dtype], zero: Bool) raises:
    """Fill a device output before a launch: NaN (an element never written shows
    up), or zero for a buffer the kernel adds into."""
    comptime if dtype.is_floating_point():
        buffer.enqueue_fill(Scalar[dtype](0) if zero else nan[dtype]())
    else:
        buffer.enqueue_fill(Scalar[dtype](0) if zero else Scalar[dtype](-1))
