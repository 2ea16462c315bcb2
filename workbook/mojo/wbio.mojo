# wbio: what every generated launcher shares. It reads the cases' inputs
# from the file the workbook wrote, hands out buffers already filled the way
# the checker wants them (outputs NaN, sums zero), and writes every output
# back, in the order the workbook's plan expects (case, repeat, output).
#
# A launcher is run as:  launcher RUN_DIR MODE REPEATS SECONDS [CASES]
#   MODE     gpu | cpu | sim
#   SECONDS  the time limit: the process ends itself (SIGALRM) past it
#   CASES    comma-separated case numbers to run (default: all)

from std.ffi import external_call, _get_global
from std.sys import argv, size_of
from std.utils.numerics import nan
from std.time import perf_counter_ns
from std.memory.alloc import unsafe_alloc
from max.gpu.host import DeviceBuffer, DeviceContext
from layout import TileTensor
from layout.tile_layout import TensorLayout

# Elements of 0xFF padding before and after every host buffer.
comptime PAD = 64


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
    var writers: FileHandle  # writers.bin: who wrote which element (the simulator)
    var buffers: Int  # buffers.txt's file descriptor: name, address, count and element size of each input

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
        self.writers = open(self.dir + "/writers.bin", "w")
        # Raw file descriptors: what they get is on disk before a fault ends the
        # process. A read outside memory is then reported, not just a crash: the
        # fault handler writes where and which thread to fault.bin (see wbsim).
        self.buffers = _create(self.dir + "/buffers.txt")
        _fault_fd()[] = _create(self.dir + "/fault.bin")

    def wants(self, index: Int) -> Bool:
        if len(self.selected) == 0:
            return True
        for c in self.selected:
            if c == index:
                return True
        return False

    def phase(self, index: Int, total: Int) raises:
        """Tell the workbook which case is running (its progress display reads it)."""
        var f = open(self.dir + "/phase", "w")
        f.write("running ", index + 1, " ", total)
        f.close()

    def input_address(self, offset: Int) -> Int:
        return Int(self.data.unsafe_ptr()) + offset

    def save(mut self, address: Int, nbytes: Int) raises:
        var p = Pointer[UInt8, MutAnyOrigin](unsafe_from_address=address)
        self.out.write_bytes(Span[UInt8, MutAnyOrigin](unsafe_ptr=p, length=nbytes))

    def save_record(mut self, kind: Int, case_index: Int, index: Int, map_address: Int, count: Int) raises:
        """A writer map into writers.bin: a header of four Int32 (kind: 1 an output,
        2 a shared allocation; case; output or allocation index; count), then
        `count` Int32 thread ids (-1: nobody wrote it)."""
        var header = List[Int32]()
        header.append(Int32(kind))
        header.append(Int32(case_index))
        header.append(Int32(index))
        header.append(Int32(count))
        var hp = Pointer[UInt8, MutAnyOrigin](unsafe_from_address=Int(header.unsafe_ptr()))
        self.writers.write_bytes(Span[UInt8, MutAnyOrigin](unsafe_ptr=hp, length=16))
        var p = Pointer[UInt8, MutAnyOrigin](unsafe_from_address=map_address)
        self.writers.write_bytes(Span[UInt8, MutAnyOrigin](unsafe_ptr=p, length=4 * count))

    def save_writers(mut self, map_address: Int, case_index: Int, index: Int, count: Int) raises:
        """The writer map of an output (the simulator's map includes PAD elements before it)."""
        if map_address != 0:
            self.save_record(1, case_index, index, map_address + 4 * PAD, count)

    # --- host memory (cpu and sim) -----------------------------------------

    def host_input[dtype: DType](mut self, offset: Int, count: Int, name: String) raises -> Int:
        var address = host_buffer(count, size_of[dtype](), False)
        _ = external_call["memcpy", Int](address, self.input_address(offset), count * size_of[dtype]())
        # Where each input lies, to name the one a faulting read went past.
        var line = String(name, " ", address, " ", count, " ", size_of[dtype](), "\n")
        raw_write(self.buffers, Int(line.unsafe_ptr()), line.byte_length())
        return address

    # --- device memory (gpu) ---------------------------------------------

    def device_input[dtype: DType](self, ctx: DeviceContext, offset: Int, count: Int) raises -> DeviceBuffer[dtype]:
        var host = ctx.enqueue_create_host_buffer[dtype](count)
        _ = external_call["memcpy", Int](Int(host.unsafe_ptr()), self.input_address(offset), count * size_of[dtype]())
        var device = ctx.enqueue_create_buffer[dtype](count)
        ctx.enqueue_copy(device, host)
        return device

    def save_device[dtype: DType](mut self, ctx: DeviceContext, buffer: DeviceBuffer[dtype], count: Int) raises:
        var host = ctx.enqueue_create_host_buffer[dtype](count)
        ctx.enqueue_copy(host, buffer)
        ctx.synchronize()
        self.save(Int(host.unsafe_ptr()), count * size_of[dtype]())

    def finish(mut self, status: String, message: String = "") raises:
        self.out.close()
        self.writers.close()
        _ = external_call["close", Int32](Int32(self.buffers))
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


# The word host outputs (and the padding around them) are filled with: a NaN
# that arithmetic never produces, so the simulator can tell a written NaN
# (from a NaN read, say) from the fill.
comptime POISON_WORD = UInt32(0x7FFEFEFE)


def fill_words(address: Int, nbytes: Int, word: UInt32):
    var p = Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=address)
    for i in range(nbytes // 4):
        p[unsafe_offset=i] = word


def poison_host(address: Int, nbytes: Int, zero: Bool):
    """The same for host memory: POISON_WORD reads as NaN (or zero)."""
    if zero:
        _ = external_call["memset", Int](address, Int32(0), nbytes)
    else:
        fill_words(address, nbytes, POISON_WORD)


def alloc_bytes(n: Int) -> Int:
    return Int(unsafe_alloc[UInt8](max(n, 1), alignment=64))


comptime PAGE = 4096


def _make_cell() -> Optional[OpaquePointer[MutUntrackedOrigin]]:
    var cell = unsafe_alloc[Int](1)
    cell[] = -1
    return cell.unsafe_bitcast[NoneType]()


def _keep_cell(p: Optional[OpaquePointer[MutUntrackedOrigin]]):
    pass


def _fault_fd() -> Pointer[Int, MutUntrackedOrigin]:
    """The file descriptor of fault.bin, where a fault handler writes (-1: none)."""
    var cell = _get_global["WORKBOOK_FAULT_FD", _make_cell, _keep_cell]()
    return cell.value().unsafe_bitcast[Int]()


def fault_fd() -> Int:
    return _fault_fd()[]


def raw_write(fd: Int, address: Int, nbytes: Int):
    """write(2) through syscall(): the standard library declares `write` with other
    argument types, and two declarations of one C function may not differ."""
    _ = external_call["syscall", Int](Int(1), fd, address, nbytes)  # SYS_write


def _create(path: String) -> Int:
    """creat(path): a new empty file for writing, as a file descriptor (or -1). Not
    open(): the standard library calls it with other argument types."""
    var n = path.byte_length()
    var c = alloc_bytes(n + 1)
    _ = external_call["memcpy", Int](c, Int(path.unsafe_ptr()), n)
    Pointer[UInt8, MutUntrackedOrigin](unsafe_from_address=c + n)[] = 0
    return Int(external_call["creat", Int32](c, UInt32(0o644)))


def host_buffer(count: Int, elem: Int, output: Bool) -> Int:
    """Host memory for the CPU and the simulator. Returns the address of element 0.

    An output has PAD elements of POISON_WORD on both sides: the simulator sees
    a write there. An input ends exactly where a page nobody may touch begins,
    so a read past its end stops the run at that read (see wbsim's fault
    handler), and PAD elements of 0xFF bytes before it read as NaN."""
    if output:
        var total = (count + 2 * PAD) * elem
        var raw = alloc_bytes(total)
        fill_words(raw, total, POISON_WORD)
        return raw + PAD * elem
    var data = count * elem
    var pages = (PAD * elem + data + PAGE - 1) // PAGE + 1
    var raw = external_call["mmap", Int](Int(0), pages * PAGE, Int32(3), Int32(0x22), Int32(-1), Int(0))
    var guard = raw + (pages - 1) * PAGE
    _ = external_call["memset", Int](raw, Int32(0xFF), guard - raw)
    _ = external_call["mprotect", Int32](guard, PAGE, Int32(0))  # PROT_NONE
    return guard - data
