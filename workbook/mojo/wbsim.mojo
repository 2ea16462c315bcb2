# wbsim: runs GPU kernels on the CPU, so that a learner without a GPU still
# gets a real verdict on the kernels they wrote.
#
# The learner's file is compiled unchanged except for its import lines: the
# build points `thread_idx`, `block_idx`, `block_dim`, `grid_dim`,
# `global_idx`, `barrier` and `stack_allocation` here instead of at `max.gpu`
# and `layout.tile_tensor` (see workbook/simimports.py).
#
# How a launch runs:
# - blocks run one after another; every thread of a block has its own stack
#   and saved registers (a ucontext), so that it can stop in the middle of
#   the kernel at barrier() and resume there later;
# - only one thread runs at a time, all on the launching OS thread: the
#   launcher switches to each simulated thread in turn, in a chosen order
#   (forward or reverse), and the thread runs until its next barrier() or its
#   end, then switches back. When every thread has had its stretch, the
#   barrier opens and the next round begins. (Switching in user space costs
#   well under a microsecond; handing a baton between real pthreads cost
#   tens, and made a small launch take seconds.);
# - between two stretches the launcher compares shared memory and the
#   watched global buffers with a snapshot: that names who wrote what, two
#   threads writing the same element between two barriers (a race), writes
#   outside a buffer, and a barrier some threads never reach.
# Running each launch forward and in reverse and comparing the results
# (done by the workbook) exposes a missing barrier: a read that depends on
# whether another thread ran first.

from std.ffi import external_call, _get_global
from std.memory.alloc import unsafe_alloc
from std.sys import size_of
from std.utils.numerics import nan
from layout import TileTensor
from layout.tile_layout import TensorLayout
from max.gpu.memory import AddressSpace
from wbio import PAD, Harness, fault_fd, raw_write

comptime _RUNNING = 0
comptime _AT_BARRIER = 1
comptime _FINISHED = 2

# A GPU block may use at most 48 KiB of static shared memory.
comptime SHARED_BYTES = 48 * 1024
comptime _WORD = 4
comptime _STACK_BYTES = 512 * 1024
# Room for one glibc ucontext_t (968 bytes on x86-64, about 4.5 KiB on arm64).
comptime _CONTEXT_BYTES = 8192
# Bytes each thread may put into a block-wide primitive (a SIMD value).
comptime _SCRATCH_SLOT = 64
# Most findings of one kind worth keeping.
comptime _MAX_FINDINGS = 8


# ---------------------------------------------------------------------------
# Small C helpers. Every external_call to one C function uses the same
# argument types everywhere: pointers travel as Int.
# ---------------------------------------------------------------------------


def _alloc_bytes(n: Int) -> Int:
    return Int(unsafe_alloc[UInt8](max(n, 1), alignment=64))


def _fill(address: Int, byte: Int, n: Int):
    _ = external_call["memset", Int](address, Int32(byte), n)


def _copy(dst: Int, src: Int, n: Int):
    _ = external_call["memcpy", Int](dst, src, n)


# Words compared at once before looking at them one by one.
comptime _CHUNK = 64


def _same(a: Int, b: Int) -> Bool:
    """Whether two chunks of _CHUNK words are equal (memcmp is much faster than a word loop)."""
    return external_call["memcmp", Int32](a, b, _CHUNK * _WORD) == 0


def _word(address: Int) -> UInt32:
    return Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=address)[]


def _int_at(address: Int) -> Pointer[Int, MutUntrackedOrigin]:
    return Pointer[Int, MutUntrackedOrigin](unsafe_from_address=address)


def _switch(save: Int, to: Int):
    """Save the running context in `save` and continue the one in `to`."""
    _ = external_call["swapcontext", Int32](save, to)


def _stacks(count: Int) -> Int:
    """`count` thread stacks of _STACK_BYTES, each above a guard page (only
    the pages a kernel touches are ever backed by memory)."""
    var each = _STACK_BYTES + 4096
    var base = external_call["mmap", Int](Int(0), count * each, Int32(3), Int32(0x22 | 0x4000), Int32(-1), Int(0))
    if base == -1:
        _die("could not map stacks for the simulated threads")
    for i in range(count):
        _ = external_call["mprotect", Int32](base + i * each, 4096, Int32(0))
    return base


def _unmap(base: Int, count: Int):
    _ = external_call["munmap", Int32](base, count * (_STACK_BYTES + 4096))


def _die(message: String):
    """A kernel used the simulator in a way it can't go on from."""
    print("workbook-sim:", message)
    _ = external_call["fflush", Int32](Int(0))
    external_call["_exit", NoneType](Int32(70))


def _make_key() -> Optional[OpaquePointer[MutUntrackedOrigin]]:
    var key = unsafe_alloc[UInt32](1)
    _ = external_call["pthread_key_create", Int32](Int(key), Int(0))
    return key.unsafe_bitcast[NoneType]()


def _keep(p: Optional[OpaquePointer[MutUntrackedOrigin]]):
    pass


@always_inline
def _key() -> UInt32:
    var k = _get_global["WORKBOOK_SIM_THREAD_KEY", _make_key, _keep]()
    return k.value().unsafe_bitcast[UInt32]()[]


# ---------------------------------------------------------------------------
# One simulated thread, and the block it belongs to.
# ---------------------------------------------------------------------------


@fieldwise_init
struct _Thread(Copyable):
    var x: Int
    var y: Int
    var z: Int
    var linear: Int
    var state: Int
    var context: Int  # its saved registers and stack (a ucontext_t)
    var block: Int  # address of the _Block
    var kernel: Int  # address of the kernel's argument struct
    var shared_offset: Int  # where this thread's next stack_allocation starts
    var allocations: Int  # how many it made


@fieldwise_init
struct _Block(Copyable):
    var bx: Int
    var by: Int
    var bz: Int
    var dx: Int
    var dy: Int
    var dz: Int
    var gx: Int
    var gy: Int
    var gz: Int
    var main_context: Int  # the launcher's, to switch back to
    var arena: Int  # this block's shared memory
    var table: Int  # the shared allocations: (offset, bytes, element bytes) triples
    var table_len: Int
    var problem: Int  # 0 none, 1 over the shared memory limit, 2 calls differ
    var scratch: Int  # where block-wide primitives (block.sum...) exchange values


def _current() -> Pointer[_Thread, MutUntrackedOrigin]:
    var address = external_call["pthread_getspecific", Int](_key())
    if address == 0:
        _die(
            "thread_idx, block_idx, barrier() or shared memory was used"
            " outside a GPU kernel launch (in a CPU function?)"
        )
    return Pointer[_Thread, MutUntrackedOrigin](unsafe_from_address=address)


@always_inline
def _block_of(t: Pointer[_Thread, MutUntrackedOrigin]) -> Pointer[_Block, MutUntrackedOrigin]:
    return Pointer[_Block, MutUntrackedOrigin](unsafe_from_address=t[].block)


# ---------------------------------------------------------------------------
# What the kernel sees: ids, barrier(), shared memory.
# ---------------------------------------------------------------------------


@fieldwise_init
struct _Ids[which: Int](ImplicitlyCopyable):
    """thread_idx (0), block_idx (1), block_dim (2), grid_dim (3), global_idx (4)."""

    @always_inline
    def __getattr_param__[name: StaticString](self) -> Int:
        comptime assert (
            name == "x" or name == "y" or name == "z"
        ), "GPU ids have only the fields x, y and z"
        var t = _current()
        var b = _block_of(t)
        comptime if Self.which == 0:
            comptime if name == "x":
                return t[].x
            elif name == "y":
                return t[].y
            else:
                return t[].z
        elif Self.which == 1:
            comptime if name == "x":
                return b[].bx
            elif name == "y":
                return b[].by
            else:
                return b[].bz
        elif Self.which == 2:
            comptime if name == "x":
                return b[].dx
            elif name == "y":
                return b[].dy
            else:
                return b[].dz
        elif Self.which == 3:
            comptime if name == "x":
                return b[].gx
            elif name == "y":
                return b[].gy
            else:
                return b[].gz
        else:
            comptime if name == "x":
                return b[].bx * b[].dx + t[].x
            elif name == "y":
                return b[].by * b[].dy + t[].y
            else:
                return b[].bz * b[].dz + t[].z


comptime thread_idx = _Ids[0]()
comptime block_idx = _Ids[1]()
comptime block_dim = _Ids[2]()
comptime grid_dim = _Ids[3]()
comptime global_idx = _Ids[4]()


def barrier():
    """Ends this thread's stretch; it resumes once every thread of the block got here."""
    var t = _current()
    t[].state = _AT_BARRIER
    _switch(t[].context, _block_of(t)[].main_context)


def stack_allocation[
    LayoutType: TensorLayout,
    //,
    dtype: DType,
    address_space: AddressSpace = AddressSpace.GENERIC,
    alignment: Int = 16,
](var layout: LayoutType) -> TileTensor[
    dtype, LayoutType, MutUntrackedOrigin, address_space=address_space
] where LayoutType.all_dims_known:
    """Shared memory: the same bytes for every thread of the block, because
    every thread makes the same calls in the same order. Never-written bytes
    are 0xFF, which reads as NaN."""
    comptime bytes = LayoutType.static_cosize * size_of[dtype]()
    var t = _current()
    var b = _block_of(t)
    var align = max(alignment, 16)
    var offset = (t[].shared_offset + align - 1) // align * align
    var index = t[].allocations
    var entry = b[].table + index * 3 * size_of[Int]()
    if index < b[].table_len:
        if _int_at(entry)[] != offset or _int_at(entry + 8)[] != bytes:
            b[].problem = 2
    elif index < 64:
        _int_at(entry)[] = offset
        _int_at(entry + 8)[] = bytes
        _int_at(entry + 16)[] = size_of[dtype]()
        b[].table_len = index + 1
    t[].allocations = index + 1
    t[].shared_offset = offset + bytes
    if offset + bytes > SHARED_BYTES:
        b[].problem = 1
        offset = 0  # keep going on the arena's slack; the launch reports it
    var ptr = Pointer[Scalar[dtype], MutUntrackedOrigin, address_space=address_space](
        unsafe_from_address=b[].arena + offset
    )
    return TileTensor[dtype, LayoutType, MutUntrackedOrigin, address_space=address_space](
        ptr=ptr, layout=layout
    )


# ---------------------------------------------------------------------------
# Block-wide primitives: `from max.gpu.primitives import block`.
# ---------------------------------------------------------------------------
# Each one is what the GPU does, said plainly: every thread puts its value in
# the block's scratch, barrier(), every thread reads what it needs, barrier().
# A thread that skips the call is a barrier some threads never reach. With
# broadcast=False only thread 0 gets the result: the others get NaN (floats),
# so a kernel that uses it elsewhere shows it.


def _slot[dtype: DType, width: SIMDLength](b: Pointer[_Block, MutUntrackedOrigin], thread: Int) -> Pointer[
    SIMD[dtype, width], MutUntrackedOrigin
]:
    comptime assert size_of[SIMD[dtype, width]]() <= _SCRATCH_SLOT, "a value this wide can't go through block.*"
    return Pointer[SIMD[dtype, width], MutUntrackedOrigin](unsafe_from_address=b[].scratch + thread * _SCRATCH_SLOT)


def _check_size(name: StaticString, block_size: Int, b: Pointer[_Block, MutUntrackedOrigin]):
    var threads = b[].dx * b[].dy * b[].dz
    if block_size != threads:
        _die(String("block.", name, "[block_size=", block_size, "] in a block of ", threads,
                    " threads: block_size must be the number of threads in the block"))


def _share[dtype: DType, width: SIMDLength](name: StaticString, block_size: Int, val: SIMD[dtype, width]) -> Int:
    """Put this thread's value in the scratch and wait for everyone's; its thread number."""
    var t = _current()
    var b = _block_of(t)
    _check_size(name, block_size, b)
    _slot[dtype, width](b, t[].linear)[] = val
    barrier()
    return t[].linear


def _fold[dtype: DType, width: SIMDLength](op: Int, upto: Int) -> SIMD[dtype, width]:
    """0 sum, 1 max, 2 min of the first `upto` values in the scratch, in thread order."""
    var b = _block_of(_current())
    var acc = _slot[dtype, width](b, 0)[]
    for k in range(1, upto):
        var v = _slot[dtype, width](b, k)[]
        if op == 0:
            acc = acc + v
        elif op == 1:
            acc = max(acc, v)
        else:
            acc = min(acc, v)
    return acc


def _only_thread_zero[dtype: DType, width: SIMDLength](me: Int, result: SIMD[dtype, width],
                                                     own: SIMD[dtype, width]) -> SIMD[dtype, width]:
    if me == 0:
        return result
    comptime if dtype.is_floating_point():
        return SIMD[dtype, width](nan[dtype]())
    else:
        return own


@fieldwise_init
struct block(ImplicitlyCopyable):
    """block.sum, block.max, block.min, block.prefix_sum and block.broadcast, on the simulator."""

    @staticmethod
    def sum[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        var me = _share("sum", block_size, val)
        var total = _fold[dtype, width](0, block_size)
        barrier()
        comptime if broadcast:
            return total
        else:
            return _only_thread_zero(me, total, val)

    @staticmethod
    def max[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        var me = _share("max", block_size, val)
        var found = _fold[dtype, width](1, block_size)
        barrier()
        comptime if broadcast:
            return found
        else:
            return _only_thread_zero(me, found, val)

    @staticmethod
    def min[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        var me = _share("min", block_size, val)
        var found = _fold[dtype, width](2, block_size)
        barrier()
        comptime if broadcast:
            return found
        else:
            return _only_thread_zero(me, found, val)

    @staticmethod
    def prefix_sum[dtype: DType, //, *, block_size: Int, exclusive: Bool = False](val: Scalar[dtype]) -> Scalar[dtype]:
        var me = _share("prefix_sum", block_size, val)
        var total = Scalar[dtype](0)
        var b = _block_of(_current())
        for k in range(me if exclusive else me + 1):
            total += _slot[dtype, 1](b, k)[]
        barrier()
        return total

    @staticmethod
    def broadcast[dtype: DType, width: SIMDLength, //, *, block_size: Int](
        val: SIMD[dtype, width], src_thread: Int = 0
    ) -> SIMD[dtype, width]:
        _ = _share("broadcast", block_size, val)
        var got = _slot[dtype, width](_block_of(_current()), src_thread)[]
        barrier()
        return got


# ---------------------------------------------------------------------------
# A read outside memory: which thread, and where.
# ---------------------------------------------------------------------------


def _on_fault(sig: Int32, info: OpaquePointer[MutUntrackedOrigin], context: OpaquePointer[MutUntrackedOrigin]) abi("C"):
    """SIGSEGV/SIGBUS: write the faulting address and the simulated thread (if any)
    to fault.bin, then end the process. Only async-signal-safe calls here."""
    var record = SIMD[DType.int64, 8](-1)
    record[0] = Int64(sig)
    record[1] = Int64(Pointer[Int, MutUntrackedOrigin](unsafe_from_address=Int(info) + 16)[])  # si_addr
    var address = external_call["pthread_getspecific", Int](_key())
    if address != 0:
        var t = Pointer[_Thread, MutUntrackedOrigin](unsafe_from_address=address)
        var b = Pointer[_Block, MutUntrackedOrigin](unsafe_from_address=t[].block)
        record[2] = Int64(t[].linear)
        record[3] = Int64((b[].bz * b[].gy + b[].by) * b[].gx + b[].bx)
    var fd = fault_fd()
    if fd >= 0:
        raw_write(fd, Int(Pointer(to=record)), 64)
    external_call["_exit", NoneType](Int32(71))


def install_fault_handler():
    """Report a read past the end of an input (it lands on a guard page) instead of dying mute."""
    var act = _alloc_bytes(256)
    _fill(act, 0, 256)
    Pointer[Int, MutUntrackedOrigin](unsafe_from_address=act)[] = external_call["memmove", Int](
        _on_fault, Int(0), Int(0)
    )
    Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=act + 136)[] = Int32(4)  # SA_SIGINFO
    _ = external_call["sigaction", Int32](Int32(11), act, Int(0))  # SIGSEGV
    _ = external_call["sigaction", Int32](Int32(7), act, Int(0))  # SIGBUS


# ---------------------------------------------------------------------------
# Launching.
# ---------------------------------------------------------------------------


trait Kernel(ImplicitlyCopyable):
    """A kernel and its arguments, as the generated launcher holds them."""

    def run(self):
        ...


def _entry[K: Kernel]() abi("C"):
    """Where a simulated thread starts: the kernel, then back to the launcher
    (the context's uc_link)."""
    var t = _current()
    Pointer[K, MutUntrackedOrigin](unsafe_from_address=t[].kernel)[].run()
    t[].state = _FINISHED


@fieldwise_init
struct Dim3(ImplicitlyCopyable):
    var x: Int
    var y: Int
    var z: Int

    def count(self) -> Int:
        return self.x * self.y * self.z


@fieldwise_init
struct _Watch(Copyable):
    """A global buffer whose writes are tracked: data at `base`, PAD elements of
    padding on each side."""

    var name: String
    var base: Int
    var count: Int
    var elem: Int  # bytes per element
    var snapshot: Int  # copy of the padded region
    var writer: Int  # Int32 per element of the padded region: last writer, -1 none
    var stamp: Int  # Int per element: (launch, block, round) of that write
    var many_writers: Bool  # sums built with atomics: many writers are legal

    def words(self) -> Int:
        return (self.count + 2 * PAD) * self.elem // _WORD

    def start(self) -> Int:
        return self.base - PAD * self.elem


def _stamp(launch: Int, block: Int, round: Int) -> Int:
    return (launch << 40) | (block << 16) | round


def _json_thread(prefix: String, launch_block: Int, thread: Int) -> String:
    return String(prefix, '{"block": ', launch_block, ', "thread": ', thread, "}")


struct Sim(Movable):
    """Runs launches and keeps what they revealed: findings, and for the
    forward order, which thread wrote each element."""

    var watches: List[_Watch]
    var findings: List[String]  # JSON objects without their closing brace
    var counts: List[Int]  # how often each was seen
    var finding_keys: List[String]
    var fatal: Bool  # this case's launch could not finish
    var stopped: Bool  # some case's launch could not finish
    var launches: Int
    var case_index: Int  # the case being run, named in findings
    var shared_table: String  # the first block's shared allocations, as JSON
    var shared_writer: Int  # Int32 per shared word of the first block: last writer
    var arena: Int
    var snapshot: Int
    var stamps: Int
    var writers: Int
    var table: Int

    def __init__(out self):
        install_fault_handler()
        self.watches = List[_Watch]()
        self.findings = List[String]()
        self.counts = List[Int]()
        self.finding_keys = List[String]()
        self.fatal = False
        self.stopped = False
        self.launches = 0
        self.case_index = -1
        self.shared_table = String("[]")
        self.shared_writer = _alloc_bytes(SHARED_BYTES)
        _fill(self.shared_writer, 0xFF, SHARED_BYTES)
        self.arena = _alloc_bytes(2 * SHARED_BYTES)
        self.snapshot = _alloc_bytes(2 * SHARED_BYTES)
        self.stamps = _alloc_bytes(2 * SHARED_BYTES // _WORD * 8)
        self.writers = _alloc_bytes(2 * SHARED_BYTES // _WORD * 4)
        self.table = _alloc_bytes(64 * 3 * 8)

    def start_case(mut self, index: Int):
        """A new case: its buffers replace the last case's. A case the simulator had
        to stop (threads left waiting at a barrier) does not stop the next one: its
        stuck threads just stay asleep until the process ends."""
        self.case_index = index
        self.watches = List[_Watch]()
        self.stopped = self.stopped or self.fatal
        self.fatal = False

    # --- global buffers ---------------------------------------------------

    def watch(mut self, name: String, base: Int, count: Int, elem: Int, many_writers: Bool = False):
        """Track writes to a host buffer (made by wbio.host_buffer) from now on."""
        for i in range(len(self.watches)):
            if self.watches[i].base == base:
                return
        var words = (count + 2 * PAD) * elem // _WORD
        var w = _Watch(name, base, count, elem, _alloc_bytes(words * _WORD), _alloc_bytes(words * 4),
                       _alloc_bytes(words * 8), many_writers)
        _fill(w.writer, 0xFF, words * 4)
        _fill(w.stamp, 0xFF, words * 8)
        self.watches.append(w^)

    def before_launch(mut self, record: Bool):
        """Take the watched buffers' contents as the baseline (after the
        launcher filled them); `record` starts a fresh map of writers."""
        for k in range(len(self.watches)):
            var words = self.watches[k].words()
            _copy(self.watches[k].snapshot, self.watches[k].start(), words * _WORD)
            if record:
                _fill(self.watches[k].writer, 0xFF, words * 4)
                _fill(self.watches[k].stamp, 0xFF, words * 8)
        if record:
            _fill(self.shared_writer, 0xFF, SHARED_BYTES)
            self.shared_table = String("[]")

    def writers_of(self, base: Int) -> Int:
        """The Int32 writer map of a watched buffer: element i at index PAD + i."""
        for i in range(len(self.watches)):
            if self.watches[i].base == base:
                return self.watches[i].writer
        return 0

    # --- findings ---------------------------------------------------------

    def _finding(mut self, key: String, json: String):
        """Keep the first finding of each key (a kind of bug in one kernel and
        buffer), and count the others."""
        for i in range(len(self.finding_keys)):
            if self.finding_keys[i] == key:
                self.counts[i] += 1
                return
        if len(self.findings) >= _MAX_FINDINGS:
            return
        self.finding_keys.append(key)
        self.counts.append(1)
        self.findings.append(String("{\"case\": ", self.case_index, ", ", json[byte=1:json.byte_length() - 1]))

    # --- one launch -------------------------------------------------------

    def launch[K: Kernel](mut self, kernel: K, grid: Dim3, block: Dim3, reverse: Bool, label: String):
        """Run every block of one launch, forward or in reverse order (blocks
        and threads). Sets `fatal` when the launch could not finish."""
        self.launches += 1
        var launch_id = self.launches
        var threads = block.count()
        var blocks = grid.count()
        var kbox = unsafe_alloc[K](1)
        kbox.unsafe_write(copy=kernel)
        var main_context = _alloc_bytes(_CONTEXT_BYTES)
        var ts = unsafe_alloc[_Thread](threads)
        var contexts = _alloc_bytes(threads * _CONTEXT_BYTES)
        var stacks = _stacks(threads)
        var scratch = _alloc_bytes(threads * _SCRATCH_SLOT)
        for nb in range(blocks):
            var lb = blocks - 1 - nb if reverse else nb
            var bx = lb % grid.x
            var by = (lb // grid.x) % grid.y
            var bz = lb // (grid.x * grid.y)
            _fill(self.arena, 0xFF, 2 * SHARED_BYTES)
            _fill(self.snapshot, 0xFF, 2 * SHARED_BYTES)
            _fill(self.stamps, 0xFF, 2 * SHARED_BYTES // _WORD * 8)
            var blk = unsafe_alloc[_Block](1)
            blk.unsafe_write(_Block(bx, by, bz, block.x, block.y, block.z, grid.x, grid.y, grid.z,
                                    main_context, self.arena, self.table, 0, 0, scratch))
            for i in range(threads):
                var tx = i % block.x
                var ty = (i // block.x) % block.y
                var tz = i // (block.x * block.y)
                var context = contexts + i * _CONTEXT_BYTES
                ts.unsafe_offset(i).unsafe_write(
                    _Thread(tx, ty, tz, i, _RUNNING, context, Int(blk), Int(kbox), 0, 0)
                )
                # glibc's ucontext_t (x86-64 and arm64 alike): uc_link at 8,
                # uc_stack.ss_sp at 16 and ss_size at 32.
                _ = external_call["getcontext", Int32](context)
                _int_at(context + 8)[] = main_context
                _int_at(context + 16)[] = stacks + i * (_STACK_BYTES + 4096) + 4096
                _int_at(context + 32)[] = _STACK_BYTES
                external_call["makecontext", NoneType](context, _entry[K], Int32(0))
            var keep_shared = lb == 0 and not reverse
            var round = 0
            while True:
                for n in range(threads):
                    var i = threads - 1 - n if reverse else n
                    if ts[unsafe_offset=i].state == _FINISHED:
                        continue
                    ts[unsafe_offset=i].state = _RUNNING
                    _ = external_call["pthread_setspecific", Int32](_key(), Int(ts.unsafe_offset(i)))
                    _switch(main_context, ts[unsafe_offset=i].context)
                    _ = external_call["pthread_setspecific", Int32](_key(), Int(0))
                    var stamp = _stamp(launch_id, lb, round)
                    self._diff_shared(blk[].table_len, i, lb, round, stamp, keep_shared, label)
                    self._diff_globals(lb * threads + i, lb, stamp, label)
                var waiting = 0
                var first_waiting = -1
                var first_finished = -1
                for i in range(threads):
                    if ts[unsafe_offset=i].state == _AT_BARRIER:
                        waiting += 1
                        if first_waiting < 0:
                            first_waiting = i
                    elif first_finished < 0:
                        first_finished = i
                if waiting == 0:
                    break
                if waiting < threads:
                    self._finding(
                        String("divergent ", label),
                        String('{"kind": "divergent_barrier", "launch": "', label, '", "block": ', lb,
                               ', "round": ', round, ', "finished": ', threads - waiting,
                               ', "waiting": ', waiting, ', "finished_thread": ', first_finished,
                               ', "waiting_thread": ', first_waiting, "}"),
                    )
                    self.fatal = True
                    _unmap(stacks, threads)  # the threads stuck in barrier() are never resumed
                    return
                round += 1
            if keep_shared:
                self._keep_shared_table(blk[].table_len)
            if blk[].problem != 0:
                var kind = "shared_overflow" if blk[].problem == 1 else "shared_calls_differ"
                self._finding(String(kind, label), String('{"kind": "', kind, '", "launch": "', label,
                                                          '", "limit": ', SHARED_BYTES, "}"))
                self.fatal = True
                _unmap(stacks, threads)
                return
        _unmap(stacks, threads)

    # --- comparing memory with its snapshot ---------------------------------

    def _keep_shared_table(mut self, n: Int):
        var s = String("[")
        for k in range(n):
            var entry = self.table + k * 24
            if k > 0:
                s += ", "
            s += String("[", _int_at(entry)[], ", ", _int_at(entry + 8)[], ", ", _int_at(entry + 16)[], "]")
        s += "]"
        self.shared_table = s

    def _shared_extent(self, n: Int) -> Int:
        """Bytes of the arena worth comparing: the allocations and a margin past them."""
        var end = 0
        for k in range(n):
            var entry = self.table + k * 24
            end = max(end, _int_at(entry)[] + _int_at(entry + 8)[])
        return min(end + 1024, 2 * SHARED_BYTES)

    def _shared_place(self, offset: Int, n: Int) -> String:
        """'"allocation": k, "index": i' for a byte offset into the arena."""
        for k in range(n):
            var entry = self.table + k * 24
            var start = _int_at(entry)[]
            if offset >= start and offset < start + _int_at(entry + 8)[]:
                return String('"allocation": ', k, ', "index": ', (offset - start) // _int_at(entry + 16)[])
        return String('"allocation": -1, "index": ', offset)

    def _diff_shared(mut self, n: Int, thread: Int, block: Int, round: Int, stamp: Int, keep: Bool,
                     label: String):
        """Shared memory the thread just changed: two threads of one block
        writing the same word in one round (no barrier between) is a race."""
        var words = self._shared_extent(n) // _WORD
        var w = 0
        while w < words:
            if w % _CHUNK == 0 and w + _CHUNK <= words and _same(self.arena + w * _WORD, self.snapshot + w * _WORD):
                w += _CHUNK  # an unchanged chunk
                continue
            var here = w
            w += 1
            var a = self.arena + here * _WORD
            var s = self.snapshot + here * _WORD
            if _word(a) == _word(s):
                continue
            Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=s)[] = _word(a)
            var sp = _int_at(self.stamps + here * 8)
            var wp = Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=self.writers + here * 4)
            var place = self._shared_place(here * _WORD, n)
            if sp[] == stamp and Int(wp[]) != thread:
                self._finding(
                    String("shared race ", label, String(place.split(",")[0])),
                    String('{"kind": "shared_race", "launch": "', label, '", "block": ', block,
                           ', "round": ', round, ", ", place, ', "threads": [', Int(wp[]), ", ", thread, "]}"),
                )
            if place.startswith('"allocation": -1'):
                self._finding(String("shared outside ", label),
                              String('{"kind": "shared_out_of_bounds", "launch": "', label, '", "block": ', block,
                                     ', "offset": ', here * _WORD, ', "thread": ', thread, "}"))
            sp[] = stamp
            wp[] = Int32(thread)
            if keep:
                Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=self.shared_writer + here * 4)[] = Int32(thread)

    def _diff_globals(mut self, me: Int, block: Int, stamp: Int, label: String):
        """Watched global memory the thread just changed: a write outside the
        buffer, or a write to an element another thread wrote in the same
        round of the same block, or in another block of the same launch."""
        for k in range(len(self.watches)):
            var elem = self.watches[k].elem
            var start = self.watches[k].start()
            var snap = self.watches[k].snapshot
            var count = self.watches[k].count
            var words = self.watches[k].words()
            var w = 0
            while w < words:
                if w % _CHUNK == 0 and w + _CHUNK <= words and _same(start + w * _WORD, snap + w * _WORD):
                    w += _CHUNK  # most of a buffer is untouched in one thread's stretch
                    continue
                var here = w
                w += 1
                var a = start + here * _WORD
                var s = snap + here * _WORD
                if _word(a) == _word(s):
                    continue
                Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=s)[] = _word(a)
                var element = (here * _WORD) // elem
                var index = element - PAD
                var sp = _int_at(self.watches[k].stamp + element * 8)
                var wp = Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=self.watches[k].writer + element * 4)
                var previous = Int(wp[])
                var name = self.watches[k].name
                if index < 0 or index >= count:
                    self._finding(String("outside ", label, name),
                                  String('{"kind": "out_of_bounds", "launch": "', label, '", "buffer": "', name,
                                         '", "index": ', index, ', "size": ', count, ', "thread": ', me, "}"))
                elif previous >= 0 and previous != me and not self.watches[k].many_writers:
                    var same_launch = (sp[] >> 40) == (stamp >> 40)
                    var other_block = same_launch and ((sp[] >> 16) & 0xFFFFFF) != block
                    if sp[] == stamp or other_block:
                        self._finding(String("global race ", label, name),
                                      String('{"kind": "global_race", "launch": "', label, '", "buffer": "', name,
                                             '", "index": ', index, ', "threads": [', previous, ", ", me,
                                             '], "blocks_differ": ', "true" if other_block else "false", "}"))
                sp[] = stamp
                wp[] = Int32(me)

    # --- handing results to the harness -------------------------------------

    def save_shared(mut self, mut h: Harness, case_index: Int) raises:
        """Who wrote each element of the first block's shared allocations (forward order)."""
        var n = self.shared_table.count("[") - 1
        for k in range(n):
            var entry = self.table + k * 24
            var offset = _int_at(entry)[]
            var elem = _int_at(entry + 16)[]
            var count = _int_at(entry + 8)[] // elem
            var map = _alloc_bytes(4 * count)
            for e in range(count):
                var word = (offset + e * elem) // _WORD
                Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=map + 4 * e)[] = Pointer[
                    Int32, MutUntrackedOrigin
                ](unsafe_from_address=self.shared_writer + 4 * word)[]
            h.save_record(2, case_index, k, map, count)
        h.extra = String(h.extra, ", " if h.extra else "", '"shared_', case_index, '": ', self.shared_table)

    def finish(mut self, mut h: Harness) raises:
        """result.json: the status, and every finding."""
        var text = String()
        for i in range(len(self.findings)):
            text += String(", " if i > 0 else "", self.findings[i], ', "count": ', self.counts[i], "}")
        h.extra = String(h.extra, ", " if h.extra else "", '"findings": [', text, "]")
        h.finish("fatal" if self.fatal or self.stopped else "ok")
