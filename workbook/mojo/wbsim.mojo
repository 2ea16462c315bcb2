# wbsim: what a GPU kernel sees when the simulator runs it on the CPU, and the
# few calls a generated host launcher makes.
#
# The learner's file is compiled unchanged except for its import lines: the
# build points `thread_idx`, `block_idx`, `block_dim`, `grid_dim`,
# `global_idx`, `barrier`, `stack_allocation` and `block` here instead of at
# `max.gpu` and `layout` (see workbook/compile/simimports.py). Each of them is a thin
# call into the simulator's runtime, wbsim.c, which schedules the threads and
# watches every access the compiled kernel makes (the build compiles it with
# `--sanitize thread`, whose hooks wbsim.c provides).
#
# Everything a kernel calls here is @always_inline, so that the compiler puts
# it into the kernel: a barrier() or a shared array is then named by the
# learner's own line (call_location), and every access by its own address.

from std.ffi import external_call
from std.memory.alloc import unsafe_alloc
from std.reflection import call_location
from std.sys import size_of
from std.utils.numerics import nan
from layout import TileTensor
from layout.tile_layout import TensorLayout
from max.gpu.memory import AddressSpace as _Space, CacheEviction as _CacheEviction


# ---------------------------------------------------------------------------
# Ids, barrier(), shared memory
# ---------------------------------------------------------------------------


struct AddressSpace:
    """On the simulator all memory is the CPU's, so every address space is the
    generic one. It matters: the compiler's instrumentation skips accesses
    through pointers of any other address space, and shared memory would go
    unwatched. (`from max.gpu.memory import AddressSpace` is pointed here.)"""

    comptime GENERIC = _Space.GENERIC
    comptime GLOBAL = _Space.GENERIC
    comptime SHARED = _Space.GENERIC
    comptime CONSTANT = _Space.GENERIC
    comptime LOCAL = _Space.GENERIC
    comptime SHARED_CLUSTER = _Space.GENERIC


@fieldwise_init
struct _Ids[which: Int](ImplicitlyCopyable):
    """thread_idx (0), block_idx (1), block_dim (2), grid_dim (3), global_idx (4),
    cluster_dim (5), cluster_idx (6), block_id_in_cluster (7)."""

    @always_inline
    def __getattr_param__[name: StaticString](self) -> Int:
        comptime assert (
            name == "x" or name == "y" or name == "z"
        ), "GPU ids have only the fields x, y and z"
        comptime axis = 0 if name == "x" else (1 if name == "y" else 2)
        return external_call["wbsim_id", Int](Self.which * 3 + axis)


comptime thread_idx = _Ids[0]()
comptime block_idx = _Ids[1]()
comptime block_dim = _Ids[2]()
comptime grid_dim = _Ids[3]()
comptime global_idx = _Ids[4]()
comptime cluster_dim = _Ids[5]()
comptime cluster_idx = _Ids[6]()
comptime block_id_in_cluster = _Ids[7]()


@always_inline
def _sync[levels: Int]():
    """End this thread's stretch; it resumes once every thread of the block got
    here. The barrier is known by the source line `levels` calls up."""
    var at = call_location[inline_count=levels]()
    var file = at.file_name()
    external_call["wbsim_barrier", NoneType](Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column())


@always_inline
def barrier():
    _sync[2]()


# ---------------------------------------------------------------------------
# Clusters: `from max.gpu.primitives.cluster import block_rank_in_cluster,
# cluster_arrive, cluster_arrive_relaxed, cluster_wait, cluster_sync, ...`
# ---------------------------------------------------------------------------
# The blocks of a cluster run together on the simulator (wbsim.c), so that a
# cluster barrier can hold them: cluster_arrive() counts this thread in and
# goes on; cluster_wait() waits until every thread of every block of the
# cluster has arrived. Both are known by the learner's line.


@always_inline
def block_rank_in_cluster() -> UInt32:
    """This block's rank in its cluster: 0 to the cluster's size - 1, x fastest."""
    return UInt32(external_call["wbsim_cluster_rank", Int]())


@always_inline
def _arrive[levels: Int](relaxed: Bool):
    var at = call_location[inline_count=levels]()
    var file = at.file_name()
    external_call["wbsim_cluster_arrive", NoneType](
        1 if relaxed else 0, Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column()
    )


@always_inline
def _wait[levels: Int]():
    var at = call_location[inline_count=levels]()
    var file = at.file_name()
    external_call["wbsim_cluster_wait", NoneType](Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column())


@always_inline
def cluster_arrive():
    """Counts this thread in at the cluster barrier; what it wrote before is seen by every
    thread of the cluster after that barrier's wait."""
    _arrive[2](False)


@always_inline
def cluster_arrive_relaxed():
    """Counts this thread in, and makes nothing it wrote visible to the others."""
    _arrive[2](True)


@always_inline
def cluster_wait():
    """Waits until every thread of the cluster has arrived."""
    _wait[2]()


@always_inline
def cluster_sync():
    """cluster_arrive() and cluster_wait(), at one line."""
    _arrive[2](False)
    _wait[2]()


@always_inline
def cluster_sync_relaxed():
    """cluster_arrive_relaxed() and cluster_wait(), at one line."""
    _arrive[2](True)
    _wait[2]()


@always_inline
def stack_allocation[
    LayoutType: TensorLayout,
    //,
    dtype: DType,
    address_space: _Space = _Space.GENERIC,
    alignment: Int = 16,
](var layout: LayoutType) -> TileTensor[
    dtype, LayoutType, MutUntrackedOrigin, address_space=address_space
] where LayoutType.all_dims_known:
    """Shared memory: the same bytes for every thread of the block, because every
    thread makes the same calls in the same order. Never-written bytes are 0xFF,
    which reads as NaN."""
    comptime bytes = LayoutType.static_cosize * size_of[dtype]()
    comptime rank = LayoutType.rank
    comptime d0 = LayoutType.static_shape[0]
    comptime d1 = LayoutType.static_shape[1] if rank > 1 else 1
    comptime d2 = LayoutType.static_shape[2] if rank > 2 else 1
    var at = call_location()
    var file = at.file_name()
    var address = external_call["wbsim_shared", Int](
        bytes, size_of[dtype](), alignment, rank, d0, d1, d2,
        Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column(),
    )
    var ptr = Pointer[Scalar[dtype], MutUntrackedOrigin, address_space=address_space](unsafe_from_address=address)
    return TileTensor[dtype, LayoutType, MutUntrackedOrigin, address_space=address_space](ptr=ptr, layout=layout)


# ---------------------------------------------------------------------------
# Async copies: `from max.gpu.memory import async_copy, async_copy_commit_group,
# async_copy_wait_group, async_copy_wait_all`.
# ---------------------------------------------------------------------------
# wbsim.c reads the copy's source at once, watched, at the learner's line (a read
# past the end of a buffer is named there), and keeps the bytes pending until
# this thread's matching wait: only then are they in shared
# memory. Until then the destination reads as NaN, and reading it is a finding.
#
# What lands is what max 26.7's async_copy compiles to on NVIDIA GPUs (seen in the
# PTX of an sm_90 build; PTX's cp.async zero-fills past `src-size` only when it is
# given one):
# - no fill: `cp.async [dst], [src], size;` src_size is not passed at all, so all
#   `size` bytes come from src, whatever src_size says;
# - fill=0: `cp.async [dst], [src], size, src_size;` src_size bytes from src, the
#   rest zeros;
# - another fill (16 bytes only): with predicate=True the whole copy as above; with
#   predicate=False (the default) src is not read: a plain store of the fill value
#   into all 16 bytes, there at once.


@always_inline
def async_copy[
    dtype: DType,
    //,
    size: Int,
    *,
    fill: Optional[Scalar[dtype]] = None,
    bypass_L1_16B: Bool = True,
    l2_prefetch: Optional[Int] = None,
    eviction_policy: _CacheEviction = _CacheEviction.EVICT_NORMAL,
](
    src: Pointer[mut=_, Scalar[dtype], _, address_space=_],
    dst: Pointer[mut=True, Scalar[dtype], _, address_space=_],
    src_size: Int32 = Int32(size),
    predicate: Bool = False,
):
    comptime assert size == 4 or size == 8 or size == 16, "async_copy copies 4, 8 or 16 bytes"
    comptime elem = size_of[dtype]()
    comptime n = size // elem
    comptime assert n >= 1 and n * elem == size, "async_copy's size must be a whole number of elements"
    comptime assert (
        not fill or elem <= 4
    ), "if the fill value is specified, then the dtype must be 32bit or less"
    comptime zero_fill = Bool(fill) and fill.value() == 0
    comptime value_fill = Bool(fill) and not zero_fill
    comptime assert not value_fill or size == 16, "Non zero filling is supported only for 16B access."
    var at = call_location()
    var file = at.file_name()
    comptime if not value_fill:
        if predicate:
            var message = String(
                "async_copy with predicate=True and no fill value (line ", at.line(), ") is not simulated: ",
                "max's own code asserts it is False"
            )
            external_call["wbsim_misuse", NoneType](Int(message.unsafe_ptr()), message.byte_length())
    # What lies past the bytes read from src: zeros, or the fill value.
    var v = SIMD[dtype, n](0)
    comptime if fill:
        v = SIMD[dtype, n](fill.value())
    var have = size  # no fill: src_size is never passed on
    comptime if zero_fill:
        have = min(max(Int(src_size), 0), size)
    comptime if value_fill:
        have = size if predicate else 0
    # The fill store (a value fill, predicate False) lands at once, as the GPU's st.shared.
    var now = 1 if value_fill and not predicate else 0
    var me = external_call["wbsim_linear", Int]()
    var slot = _slot[dtype, n](me)
    slot[] = v
    external_call["wbsim_async_copy", NoneType](
        Int(dst), Int(src), Int(slot), size, have, now,
        Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column(),
    )


@always_inline
def async_copy_commit_group():
    """The copies this thread issued since its last commit become one group."""
    external_call["wbsim_async_commit", NoneType]()


@always_inline
def async_copy_wait_group(n: Int32):
    """Every group of this thread but the newest n lands."""
    external_call["wbsim_async_wait", NoneType](Int(n), 0)


@always_inline
def async_copy_wait_all():
    """Every copy of this thread lands."""
    external_call["wbsim_async_wait", NoneType](0, 1)


# ---------------------------------------------------------------------------
# mbarriers: `from max.gpu.sync import mbarrier_init, mbarrier_arrive,
# mbarrier_test_wait, mbarrier_try_wait_parity_shared`.
# ---------------------------------------------------------------------------
# The same signatures as max 26.7's (the token is an Int, the count an Int32).
# wbsim.c keeps each barrier's count, arrivals and phase, parks a thread whose
# wait can't complete yet so that the others run, and names misuse by its line.


@always_inline
def mbarrier_init[type: AnyType](shared_mem: Pointer[mut=True, type, _, address_space=_], num_threads: Int32):
    """Phase 0 of the barrier at shared_mem needs num_threads arrivals."""
    var at = call_location()
    var file = at.file_name()
    external_call["wbsim_mbar_init", NoneType](
        Int(shared_mem), Int(num_threads), Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column()
    )


@always_inline
def mbarrier_arrive[type: AnyType](shared_mem: Pointer[mut=True, type, _, address_space=_]) -> Int:
    """One arrival; the token names the phase it arrived in."""
    var at = call_location()
    var file = at.file_name()
    return external_call["wbsim_mbar_arrive", Int](
        Int(shared_mem), Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column()
    )


@always_inline
def mbarrier_test_wait[type: AnyType](shared_mem: Pointer[mut=True, type, _, address_space=_], state: Int) -> Bool:
    """Whether the phase the token names has completed (never blocks: spin on it)."""
    var at = call_location()
    var file = at.file_name()
    return external_call["wbsim_mbar_test_wait", Int](
        Int(shared_mem), state, Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column()
    ) != 0


@always_inline
def mbarrier_try_wait_parity_shared[type: AnyType](
    addr: Pointer[mut=True, type, _, address_space=_], phase: Int32, ticks: Int32
):
    """Blocks until the phase of this parity has completed (as the real one loops on try_wait)."""
    var at = call_location()
    var file = at.file_name()
    external_call["wbsim_mbar_wait_parity", NoneType](
        Int(addr), Int(phase), Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column()
    )


# ---------------------------------------------------------------------------
# Block-wide primitives: `from max.gpu.primitives import block`.
# ---------------------------------------------------------------------------
# Each is what the GPU does, said plainly: every thread puts its value in the
# block's scratch, barrier, every thread reads what it needs, barrier. A thread
# that skips the call is a barrier some threads never reach. With
# broadcast=False only thread 0 gets the result: the others get NaN (floats),
# so a kernel that uses it elsewhere shows it.

comptime _SLOT = 64


@always_inline
def _slot[dtype: DType, width: SIMDLength](thread: Int) -> Pointer[SIMD[dtype, width], MutUntrackedOrigin]:
    comptime assert size_of[SIMD[dtype, width]]() <= _SLOT, "a value this wide can't go through block.*"
    return Pointer[SIMD[dtype, width], MutUntrackedOrigin](
        unsafe_from_address=external_call["wbsim_slot", Int](thread, _SLOT)
    )


@always_inline
def _check_size(name: StaticString, block_size: Int):
    var threads = external_call["wbsim_threads", Int]()
    if block_size != threads:
        var message = String(
            "block.", name, "[block_size=", block_size, "] in a block of ", threads,
            " threads: block_size must be the number of threads in the block",
        )
        external_call["wbsim_misuse", NoneType](Int(message.unsafe_ptr()), message.byte_length())


@always_inline
def _fold[dtype: DType, width: SIMDLength](op: Int, upto: Int) -> SIMD[dtype, width]:
    """0 sum, 1 max, 2 min of the first `upto` values in the scratch, in thread order."""
    var acc = _slot[dtype, width](0)[]
    for k in range(1, upto):
        var v = _slot[dtype, width](k)[]
        if op == 0:
            acc = acc + v
        elif op == 1:
            acc = max(acc, v)
        else:
            acc = min(acc, v)
    return acc


@always_inline
def _only_thread_zero[dtype: DType, width: SIMDLength](
    me: Int, result: SIMD[dtype, width], own: SIMD[dtype, width]
) -> SIMD[dtype, width]:
    if me == 0:
        return result
    comptime if dtype.is_floating_point():
        return SIMD[dtype, width](nan[dtype]())
    else:
        return own


@always_inline
def _reduce[dtype: DType, width: SIMDLength, //, op: Int, block_size: Int, broadcast: Bool](
    name: StaticString, val: SIMD[dtype, width]
) -> SIMD[dtype, width]:
    _check_size(name, block_size)
    # The GPU's shuffles, counted for the method rules (wbsim_block_reduce says why).
    var at = call_location[inline_count=2]()
    var file = at.file_name()
    external_call["wbsim_block_reduce", NoneType](Int(file.unsafe_ptr()), file.byte_length(), at.line(), at.column())
    var me = external_call["wbsim_linear", Int]()
    _slot[dtype, width](me)[] = val
    _sync[3]()
    var found = _fold[dtype, width](op, block_size)
    _sync[3]()
    comptime if broadcast:
        return found
    else:
        return _only_thread_zero(me, found, val)


@fieldwise_init
struct block(ImplicitlyCopyable):
    """block.sum, block.max, block.min, block.prefix_sum and block.broadcast, on the simulator."""

    @always_inline
    @staticmethod
    def sum[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        return _reduce[0, block_size, broadcast]("sum", val)

    @always_inline
    @staticmethod
    def max[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        return _reduce[1, block_size, broadcast]("max", val)

    @always_inline
    @staticmethod
    def min[dtype: DType, width: SIMDLength, //, *, block_size: Int, broadcast: Bool = True](
        val: SIMD[dtype, width]
    ) -> SIMD[dtype, width]:
        return _reduce[2, block_size, broadcast]("min", val)

    @always_inline
    @staticmethod
    def prefix_sum[dtype: DType, //, *, block_size: Int, exclusive: Bool = False](val: Scalar[dtype]) -> Scalar[dtype]:
        _check_size("prefix_sum", block_size)
        var me = external_call["wbsim_linear", Int]()
        _slot[dtype, 1](me)[] = val
        _sync[2]()
        var total = Scalar[dtype](0)
        for k in range(me if exclusive else me + 1):
            total += _slot[dtype, 1](k)[]
        _sync[2]()
        return total

    @always_inline
    @staticmethod
    def broadcast[dtype: DType, width: SIMDLength, //, *, block_size: Int](
        val: SIMD[dtype, width], src_thread: Int = 0
    ) -> SIMD[dtype, width]:
        _check_size("broadcast", block_size)
        var me = external_call["wbsim_linear", Int]()
        _slot[dtype, width](me)[] = val
        _sync[2]()
        var got = _slot[dtype, width](src_thread)[]
        _sync[2]()
        return got


# ---------------------------------------------------------------------------
# For the generated host launcher (workbook/compile/launcher.py)
# ---------------------------------------------------------------------------


trait Kernel(ImplicitlyCopyable):
    """A kernel and its arguments, as the generated launcher holds them."""

    def run(self):
        ...


def _entry[K: Kernel](kbox: Int) abi("C"):
    """Where every simulated thread starts."""
    Pointer[K, MutUntrackedOrigin](unsafe_from_address=kbox)[].run()


@fieldwise_init
struct Dim3(ImplicitlyCopyable):
    var x: Int
    var y: Int
    var z: Int


def launch[K: Kernel](
    kernel: K, grid: Dim3, block: Dim3, reverse: Bool, label: StaticString, cluster: Dim3 = Dim3(1, 1, 1)
) -> Bool:
    """Run every block of one launch, the blocks of each cluster together (threads,
    blocks and clusters in reverse order if asked). False when the launch could not
    finish: the case stops there."""
    var kbox = unsafe_alloc[K](1)
    kbox.unsafe_write(copy=kernel)
    var entry = external_call["wbsim_address", Int](_entry[K])
    var stopped = external_call["wbsim_launch", Int](
        entry, Int(kbox), grid.x, grid.y, grid.z, block.x, block.y, block.z, cluster.x, cluster.y, cluster.z,
        1 if reverse else 0, Int(label.unsafe_ptr()), label.byte_length(),
    )
    return stopped == 0


def tile_mut[dtype: DType, L: TensorLayout](address: Int, layout: L) -> TileTensor[mut=True, dtype, L, MutAnyOrigin]:
    """A writable tensor over memory at `address`."""
    return TileTensor[mut=True, dtype, L, MutAnyOrigin](
        ptr=Pointer[Scalar[dtype], MutAnyOrigin](unsafe_from_address=address), layout=layout
    )


def tile[dtype: DType, L: TensorLayout](address: Int, layout: L) -> TileTensor[mut=False, dtype, L, ImmutAnyOrigin]:
    """A read-only tensor over memory at `address`."""
    return TileTensor[mut=False, dtype, L, ImmutAnyOrigin](
        ptr=Pointer[Scalar[dtype], ImmutAnyOrigin](unsafe_from_address=address), layout=layout
    )


@fieldwise_init
struct wb(ImplicitlyCopyable):
    """The harness, in wbsim.c: cases, buffers, repeats, outputs."""

    @staticmethod
    def begin():
        external_call["wb_begin", NoneType]()

    @staticmethod
    def cpu_mode() -> Bool:
        return external_call["wb_mode", Int]() == 0

    @staticmethod
    def repeats() -> Int:
        return external_call["wb_repeats", Int]()

    @staticmethod
    def wants(index: Int) -> Bool:
        return external_call["wb_wants", Int](index) != 0

    @staticmethod
    def case_begin(index: Int, total: Int):
        external_call["wb_case_begin", NoneType](index, total)

    @staticmethod
    def input(name: StaticString, offset: Int, count: Int, elem: Int, rank: Int, d0: Int, d1: Int, d2: Int) -> Int:
        return external_call["wb_input", Int](
            Int(name.unsafe_ptr()), name.byte_length(), offset, count, elem, rank, d0, d1, d2
        )

    @staticmethod
    def output(name: StaticString, count: Int, elem: Int, zero: Bool, rank: Int, d0: Int, d1: Int, d2: Int) -> Int:
        return external_call["wb_output", Int](
            Int(name.unsafe_ptr()), name.byte_length(), count, elem, 1 if zero else 0, rank, d0, d1, d2
        )

    @staticmethod
    def scratch(name: StaticString, count: Int, elem: Int, rank: Int, d0: Int, d1: Int, d2: Int) -> Int:
        return external_call["wb_scratch", Int](
            Int(name.unsafe_ptr()), name.byte_length(), count, elem, rank, d0, d1, d2
        )

    @staticmethod
    def rep_begin(rep: Int):
        external_call["wb_rep_begin", NoneType](rep)

    @staticmethod
    def rep_end(rep: Int):
        external_call["wb_rep_end", NoneType](rep)

    @staticmethod
    def cpu_begin():
        external_call["wb_cpu_begin", NoneType]()

    @staticmethod
    def cpu_end():
        external_call["wb_cpu_end", NoneType]()

    @staticmethod
    def finish():
        external_call["wb_finish", NoneType]()
