# wbio: the harness of the generated GPU launcher (the host launcher's is in
# wbsim.c). It reads the cases' inputs from the file the workbook wrote, hands
# out device buffers already filled the way the checker wants them (outputs
# NaN, sums zero), and writes every output back behind a header that names it
# (case, repeat, output, bytes).
#
# A launcher is run as:  launcher RUN_DIR MODE REPEATS SECONDS [CASES]
#   MODE     gpu
#   SECONDS  the time limit: the process ends itself (SIGALRM) past it
#   CASES    comma-separated case numbers to run (default: all)

from std.ffi import external_call
from std.sys import argv, size_of
from std.utils.numerics import nan
from std.time import perf_counter_ns
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


def _json_escape(text: String) -> String:
    var out = String()
    for c in text.codepoint_slices():
        if c == '"':
            out += '\\"'
        elif c == "\\":
            out += "\\\\"
        elif c == "\n":
            out += "\\n"
        else:
            out += c
    return out


struct Harness(Movable):
    var dir: String
    var mode: String
    var repeats: Int
    var data: List[UInt8]
    var out: FileHandle
    var selected: List[Int]
    var started: Int
    var extra: String  # more fields for result.json, JSON text without braces

    def __init__(out self) raises:
        var args = argv()
        if len(args) < 5:
            raise Error("usage: launcher RUN_DIR MODE REPEATS SECONDS [CASES]")
        self.dir = String(args[1])
        self.mode = String(args[2])
        self.repeats = Int(args[3])
        # Die with the workbook, and end itself past the time limit, even if
        # nobody is left to stop it.
        _ = external_call["prctl", Int32](Int32(1), Int(9))  # PR_SET_PDEATHSIG, SIGKILL
        _ = external_call["alarm", UInt32](UInt32(Int(args[4])))
        self.selected = List[Int]()
        if len(args) > 5:
            for part in String(args[5]).split(","):
                self.selected.append(Int(part))
        var f = open(self.dir + "/inputs.bin", "r")
        self.data = f.read_bytes()
        f.close()
        self.out = open(self.dir + "/outputs.bin", "w")
        self.started = perf_counter_ns()
        self.extra = String()

    def wants(self, index: Int) -> Bool:
        if len(self.selected) == 0:
            return True
        for c in self.selected:
            if c == index:
                return True
        return False

    def asked(self, index: Int) -> Bool:
        """Whether case `index` was named on the command line (timed cases run only then)."""
        for c in self.selected:
            if c == index:
                return True
        return False

    def record_times(mut self, index: Int, times: List[Int]):
        """Each timed launch's device time in ns, into result.json as "times_INDEX"."""
        var text = String('"times_', index, '": [')
        for i in range(len(times)):
            if i > 0:
                text += ", "
            text += String(times[i])
        text += "]"
        if self.extra:
            self.extra += ", "
        self.extra += text

    def phase(self, index: Int, total: Int) raises:
        """Tell the workbook which case is running (its progress display reads it)."""
        var f = open(self.dir + "/phase", "w")
        f.write("running ", index + 1, " ", total)
        f.close()

    def input_address(self, offset: Int) -> Int:
        return Int(self.data.unsafe_ptr()) + offset

    def save(mut self, address: Int, nbytes: Int, case_index: Int, rep: Int, k: Int) raises:
        var header = List[Int32]()
        header.append(Int32(case_index))
        header.append(Int32(rep))
        header.append(Int32(k))
        header.append(Int32(nbytes))
        var hp = Pointer[UInt8, MutAnyOrigin](unsafe_from_address=Int(header.unsafe_ptr()))
        self.out.write_bytes(Span[UInt8, MutAnyOrigin](unsafe_ptr=hp, length=16))
        var p = Pointer[UInt8, MutAnyOrigin](unsafe_from_address=address)
        self.out.write_bytes(Span[UInt8, MutAnyOrigin](unsafe_ptr=p, length=nbytes))

    # --- device memory (gpu) ---------------------------------------------

    def device_input[dtype: DType](self, ctx: DeviceContext, offset: Int, count: Int) raises -> DeviceBuffer[dtype]:
        var host = ctx.enqueue_create_host_buffer[dtype](count)
        _ = external_call["memcpy", Int](Int(host.unsafe_ptr()), self.input_address(offset), count * size_of[dtype]())
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

    def finish(mut self, status: String, message: String = "") raises:
        self.out.close()
        var seconds = Float64(perf_counter_ns() - self.started) / 1e9
        var text = String('{"status": "', status, '", "message": "', _json_escape(message),
                          '", "seconds": ', seconds)
        if self.extra:
            text += ", " + self.extra
        text += "}"
        var f = open(self.dir + "/result.json", "w")
        f.write(text)
        f.close()


def poison_device[dtype: DType](buffer: DeviceBuffer[dtype], zero: Bool) raises:
    """Fill a device output before a launch: NaN (an element never written shows
    up), or zero for a buffer the kernel adds into."""
    comptime if dtype.is_floating_point():
        buffer.enqueue_fill(Scalar[dtype](0) if zero else nan[dtype]())
    else:
        buffer.enqueue_fill(Scalar[dtype](0) if zero else Scalar[dtype](-1))
