# wbhost: a learner's host code on the simulator. A host function (an op's
# launch glue, p17, p19) launches kernels itself, through elementwise or a
# DeviceContext; these stand-ins make those launches on the simulator, so
# every access the kernels make is watched as in a launch of the generated
# launcher's own. `from max.algorithm.functional import elementwise` and
# `from max.gpu.host import DeviceContext, DeviceBuffer` are pointed here
# (workbook/compile/simimports.py), and the generated launcher imports
# host_launch and host_done from here, to call around a learner's host
# function (workbook/compile/launcher.py). This module imports wbsim; wbsim
# never imports it.
#
# The kernels these launches run are the simulator's (wbsim's Kernel and
# thread ids): only the host side lives here.

from std.ffi import external_call
from std.memory.alloc import unsafe_alloc
from layout import Coord
from max.gpu.host import Dim
from wbsim import Kernel, _entry, block_idx, thread_idx


# ---------------------------------------------------------------------------
# elementwise: `from max.algorithm.functional import elementwise`.
# ---------------------------------------------------------------------------
# The learner's host function calls elementwise[W, target="gpu"](func, shape, ctx),
# and the real one launches a kernel that calls func[W] at every multiple of W
# below the packed end, and func[1] on the last size % W elements. This one makes
# the same launch on the simulator, the way max 26.7 partitions it for an NVIDIA
# GPU (ELEMENTWISE_BLOCK threads a block, as many blocks as the packed vectors
# need, a grid-stride loop of ELEMENTWISE_ELEMS steps, the tail on the first
# threads), so every access the closure makes is watched and named by its line.
# The generated launcher names the launch and says the order before it calls the
# learner's function (wbsim_host_launch).

comptime ELEMENTWISE_BLOCK = 256
comptime ELEMENTWISE_ELEMS = 4


trait _HostKernel(ImplicitlyCopyable):
    """A kernel that a library function launches with a closure inside: calling the
    closure is a capturing call, which Kernel's run does not allow."""

    def run(self) capturing:
        ...


def _host_entry[K: _HostKernel](kbox: Int) abi("C"):
    """Where every simulated thread of such a kernel starts."""
    Pointer[K, MutUntrackedOrigin](unsafe_from_address=kbox)[].run()


@always_inline
def _elementwise_thread() -> Tuple[Int, Int]:
    """This thread's place in elementwise's grid-stride loop: (first index, stride)."""
    var tid = external_call["wbsim_id", Int](0) + ELEMENTWISE_BLOCK * external_call["wbsim_id", Int](3)
    return (tid, ELEMENTWISE_BLOCK * external_call["wbsim_id", Int](9))


@fieldwise_init
struct _Elementwise[
    FuncType: ImplicitlyCopyable & RegisterPassable & def[width: Int, alignment: Int = 1](Coord) -> None,
    W: Int,
    aligned: Bool,
](_HostKernel):
    """elementwise's kernel with a closure value (the unified-closure form): one GPU
    thread's packed vectors, then its tail element."""

    var func: Self.FuncType
    var length: Int

    def run(self) capturing:
        var tid, stride = _elementwise_thread()
        var packed = self.length // Self.W
        for base in range(tid, packed, stride * ELEMENTWISE_ELEMS):
            for e in range(ELEMENTWISE_ELEMS):
                var idx = base + e * stride
                if idx < packed:
                    comptime if Self.aligned:
                        self.func[Self.W, Self.W](Coord(idx * Self.W))
                    else:
                        self.func[Self.W](Coord(idx * Self.W))
        if tid < self.length - packed * Self.W:
            self.func[1, 1](Coord(packed * Self.W + tid))


@fieldwise_init
struct _ElementwiseParam[
    func: def[width: Int, alignment: Int = 1](Coord) capturing -> None, W: Int, aligned: Bool
](_HostKernel):
    """elementwise's kernel with the closure as a parameter: the same loop."""

    var length: Int

    def run(self) capturing:
        var tid, stride = _elementwise_thread()
        var packed = self.length // Self.W
        for base in range(tid, packed, stride * ELEMENTWISE_ELEMS):
            for e in range(ELEMENTWISE_ELEMS):
                var idx = base + e * stride
                if idx < packed:
                    comptime if Self.aligned:
                        Self.func[Self.W, Self.W](Coord(idx * Self.W))
                    else:
                        Self.func[Self.W](Coord(idx * Self.W))
        if tid < self.length - packed * Self.W:
            Self.func[1, 1](Coord(packed * Self.W + tid))


def _elementwise_launch[K: _HostKernel](kernel: K, length: Int, W: Int) raises:
    """Launch as elementwise does; raises when the simulator stopped the case."""
    if length == 0:
        return
    var blocks = max(1, (length // W + ELEMENTWISE_BLOCK - 1) // ELEMENTWISE_BLOCK)
    var kbox = unsafe_alloc[K](1)
    kbox.unsafe_write(copy=kernel)
    var entry = external_call["wbsim_address", Int](_host_entry[K])
    var stopped = external_call["wbsim_host_launch", Int](entry, Int(kbox), blocks, ELEMENTWISE_BLOCK)
    if stopped != 0:
        raise Error("the simulator stopped this case (see its findings)")


def _length[rank: Int](shape: Coord) -> Int:
    comptime assert rank == 1, "the simulator runs elementwise over 1-D shapes only"
    return Int(shape[0].value())


def elementwise[
    FuncType: ImplicitlyCopyable & RegisterPassable & def[width: Int, alignment: Int = 1](Coord) -> None,
    //,
    simd_width: Int,
    *,
    target: StaticString = "cpu",
    _trace_description: StaticString = "elementwise",
](func: FuncType, shape: Coord, context: DeviceContext) raises:
    """The simulator's elementwise, with the closure as a value."""
    comptime assert target == "gpu", "the simulator runs elementwise with target=\"gpu\" only"
    var length = _length[shape.rank](shape)
    if length % simd_width == 0:
        _elementwise_launch(_Elementwise[FuncType, simd_width, True](func, length), length, simd_width)
    else:
        _elementwise_launch(_Elementwise[FuncType, simd_width, False](func, length), length, simd_width)


def elementwise[
    func: def[width: Int, alignment: Int = 1](Coord) capturing -> None,
    simd_width: Int,
    *,
    target: StaticString = "cpu",
    _trace_description: StaticString = "elementwise",
](shape: Coord, context: DeviceContext) raises:
    """The simulator's elementwise, with the closure as a parameter."""
    comptime assert target == "gpu", "the simulator runs elementwise with target=\"gpu\" only"
    var length = _length[shape.rank](shape)
    if length % simd_width == 0:
        _elementwise_launch(_ElementwiseParam[func, simd_width, True](length), length, simd_width)
    else:
        _elementwise_launch(_ElementwiseParam[func, simd_width, False](length), length, simd_width)


def elementwise[
    func: def[width: Int, alignment: Int = 1](Coord) capturing -> None,
    simd_width: Int,
    *,
    target: StaticString = "cpu",
    _trace_description: StaticString = "elementwise",
](shape: Int, context: DeviceContext) raises:
    """The simulator's elementwise, with the closure as a parameter and a length."""
    elementwise[func, simd_width, target=target](Coord(shape), context)


def host_launch(label: StaticString):
    """The generated launcher, before it calls a learner's host function: the launches it
    makes are named `label`."""
    external_call["wbsim_host_label", NoneType](Int(label.unsafe_ptr()), label.byte_length())


def host_done():
    """After the learner's host function: the host's accesses are its own again."""
    external_call["wbsim_host_done", NoneType]()


# ---------------------------------------------------------------------------
# DeviceContext: `from max.gpu.host import DeviceContext` is pointed here.
# ---------------------------------------------------------------------------
# A learner's host function (an op's launch glue, p17, p19) sizes a grid and
# calls ctx.enqueue_function[kernel](args..., grid_dim=..., block_dim=...).
# This context makes that launch on the simulator, with the grid and block the
# learner asked for, so a grid one block short or a block of the wrong size
# shows as it would on a GPU. Kernels of 1 to 6 arguments.
#
# Besides launches: synchronize, enqueue_memset and enqueue_copy between device
# memory the simulator handed out (a DeviceBuffer over an op's tensor, made with
# DeviceBuffer(ctx, ptr, size, owning=False), or plain pointers). They run as the
# GPU runs them, as launches of their own (256 threads a block, one element each),
# so their stores are watched like a kernel's. Creating buffers or host buffers is
# not simulated: workbook/compile/simimports.py refuses those calls by line, before the
# build ("needs a real GPU"), so it is never a compile error blamed on the learner.


comptime _Arg = ImplicitlyCopyable & Deinitable  # what a launch keeps of each argument


struct DeviceContext(ImplicitlyCopyable):
    """The simulator's device: launches run at once, in order, on the CPU."""

    def __init__(out self, api: StaticString = "gpu") raises:
        pass

    def synchronize(self) raises:
        pass

    def enqueue_function[
        A: _Arg, //, func: def(A) thin -> None
    ](self, a: A, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch1[A, func](a), grid_dim, block_dim)

    def enqueue_function[
        A: _Arg, B: _Arg, //, func: def(A, B) thin -> None
    ](self, a: A, b: B, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch2[A, B, func](a, b), grid_dim, block_dim)

    def enqueue_function[
        A: _Arg, B: _Arg, C: _Arg, //,
        func: def(A, B, C) thin -> None,
    ](self, a: A, b: B, c: C, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch3[A, B, C, func](a, b, c), grid_dim, block_dim)

    def enqueue_function[
        A: _Arg, B: _Arg, C: _Arg, D: _Arg, //,
        func: def(A, B, C, D) thin -> None,
    ](self, a: A, b: B, c: C, d: D, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch4[A, B, C, D, func](a, b, c, d), grid_dim, block_dim)

    def enqueue_function[
        A: _Arg, B: _Arg, C: _Arg, D: _Arg,
        E: _Arg, //,
        func: def(A, B, C, D, E) thin -> None,
    ](self, a: A, b: B, c: C, d: D, e: E, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch5[A, B, C, D, E, func](a, b, c, d, e), grid_dim, block_dim)

    def enqueue_function[
        A: _Arg, B: _Arg, C: _Arg, D: _Arg,
        E: _Arg, F: _Arg, //,
        func: def(A, B, C, D, E, F) thin -> None,
    ](self, a: A, b: B, c: C, d: D, e: E, f: F, *, grid_dim: Dim, block_dim: Dim) raises:
        _enqueue(_Launch6[A, B, C, D, E, F, func](a, b, c, d, e, f), grid_dim, block_dim)


    def enqueue_memset[dtype: DType](self, dst: DeviceBuffer[dtype], val: Scalar[dtype]) raises:
        """Every element of dst becomes val."""
        _enqueue_elements(_Fill[dtype](dst._address, val, dst._size), dst._size)

    def enqueue_copy[dtype: DType](self, dst_buf: DeviceBuffer[dtype], src_buf: DeviceBuffer[dtype]) raises:
        """All of src_buf into dst_buf (the same length, as on a GPU)."""
        if dst_buf._size != src_buf._size:
            raise Error("enqueue_copy: the buffers' lengths differ")
        _enqueue_elements(_Copy[dtype](dst_buf._address, src_buf._address, dst_buf._size), dst_buf._size)

    def enqueue_copy[dtype: DType](
        self, dst_ptr: Pointer[mut=True, Scalar[dtype], _, address_space=_],
        src_ptr: Pointer[mut=_, Scalar[dtype], _, address_space=_], size: Int,
    ) raises:
        """size elements from src_ptr to dst_ptr."""
        _enqueue_elements(_Copy[dtype](Int(dst_ptr), Int(src_ptr), size), size)

    def enqueue_copy[dtype: DType](
        self, dst_buf: DeviceBuffer[dtype], src_ptr: Pointer[mut=_, Scalar[dtype], _, address_space=_]
    ) raises:
        """dst_buf's length of elements from src_ptr."""
        _enqueue_elements(_Copy[dtype](dst_buf._address, Int(src_ptr), dst_buf._size), dst_buf._size)

    def enqueue_copy[dtype: DType](
        self, dst_ptr: Pointer[mut=True, Scalar[dtype], _, address_space=_], src_buf: DeviceBuffer[dtype]
    ) raises:
        """All of src_buf to dst_ptr."""
        _enqueue_elements(_Copy[dtype](Int(dst_ptr), src_buf._address, src_buf._size), src_buf._size)


struct DeviceBuffer[dtype: DType](ImplicitlyCopyable):
    """Device memory the simulator already handed out (an op's tensor), seen as a buffer:
    `DeviceBuffer[dtype](ctx, ptr, size, owning=False)`, as with max.gpu.host's."""

    var _address: Int
    var _size: Int

    def __init__(
        out self, ctx: DeviceContext, ptr: Pointer[mut=_, Scalar[Self.dtype], _, address_space=_], size: Int,
        *, owning: Bool,
    ):
        self._address = Int(ptr)
        self._size = size

    def unsafe_ptr(self) -> Pointer[Scalar[Self.dtype], MutUntrackedOrigin]:
        return Pointer[Scalar[Self.dtype], MutUntrackedOrigin](unsafe_from_address=self._address)

    def __len__(self) -> Int:
        return self._size

    def enqueue_fill(self, val: Scalar[Self.dtype]) raises -> Self:
        """Every element becomes val (DeviceBuffer.enqueue_fill)."""
        _enqueue_elements(_Fill[Self.dtype](self._address, val, self._size), self._size)
        return self


comptime _ELEMENTS_BLOCK = 256  # threads a block of a memset's or a copy's launch


def _enqueue_elements[K: Kernel](kernel: K, count: Int) raises:
    """A launch with one thread per element, as a GPU's memset or copy makes."""
    if count <= 0:
        return
    var blocks = (count + _ELEMENTS_BLOCK - 1) // _ELEMENTS_BLOCK
    _enqueue(kernel, Dim(blocks), Dim(_ELEMENTS_BLOCK))


@fieldwise_init
struct _Fill[dtype: DType](Kernel):
    var address: Int
    var value: Scalar[Self.dtype]
    var count: Int

    def run(self):
        var i = block_idx.x * _ELEMENTS_BLOCK + thread_idx.x
        if i < self.count:
            (Pointer[Scalar[Self.dtype], MutUntrackedOrigin](unsafe_from_address=self.address) + i)[] = self.value


@fieldwise_init
struct _Copy[dtype: DType](Kernel):
    var dst: Int
    var src: Int
    var count: Int

    def run(self):
        var i = block_idx.x * _ELEMENTS_BLOCK + thread_idx.x
        if i < self.count:
            var from_ = Pointer[Scalar[Self.dtype], MutUntrackedOrigin](unsafe_from_address=self.src) + i
            (Pointer[Scalar[Self.dtype], MutUntrackedOrigin](unsafe_from_address=self.dst) + i)[] = from_[]


def _enqueue[K: Kernel](kernel: K, grid_dim: Dim, block_dim: Dim) raises:
    """One launch inside a host function; raises when the simulator stopped the case."""
    var kbox = unsafe_alloc[K](1)
    kbox.unsafe_write(copy=kernel)
    var entry = external_call["wbsim_address", Int](_entry[K])
    var stopped = external_call["wbsim_host_launch3", Int](
        entry, Int(kbox), grid_dim.x(), grid_dim.y(), grid_dim.z(), block_dim.x(), block_dim.y(), block_dim.z()
    )
    if stopped != 0:
        raise Error("the simulator stopped this case (see its findings)")


@fieldwise_init
struct _Launch1[A: _Arg, func: def(A) thin -> None](Kernel):
    var a: Self.A

    def run(self):
        Self.func(self.a)


@fieldwise_init
struct _Launch2[A: _Arg, B: _Arg, func: def(A, B) thin -> None](Kernel):
    var a: Self.A
    var b: Self.B

    def run(self):
        Self.func(self.a, self.b)


@fieldwise_init
struct _Launch3[
    A: _Arg, B: _Arg, C: _Arg, func: def(A, B, C) thin -> None
](Kernel):
    var a: Self.A
    var b: Self.B
    var c: Self.C

    def run(self):
        Self.func(self.a, self.b, self.c)


@fieldwise_init
struct _Launch4[
    A: _Arg, B: _Arg, C: _Arg, D: _Arg,
    func: def(A, B, C, D) thin -> None,
](Kernel):
    var a: Self.A
    var b: Self.B
    var c: Self.C
    var d: Self.D

    def run(self):
        Self.func(self.a, self.b, self.c, self.d)


@fieldwise_init
struct _Launch5[
    A: _Arg, B: _Arg, C: _Arg, D: _Arg,
    E: _Arg, func: def(A, B, C, D, E) thin -> None,
](Kernel):
    var a: Self.A
    var b: Self.B
    var c: Self.C
    var d: Self.D
    var e: Self.E

    def run(self):
        Self.func(self.a, self.b, self.c, self.d, self.e)


@fieldwise_init
struct _Launch6[
    A: _Arg, B: _Arg, C: _Arg, D: _Arg,
    E: _Arg, F: _Arg, func: def(A, B, C, D, E, F) thin -> None,
](Kernel):
    var a: Self.A
    var b: Self.B
    var c: Self.C
    var d: Self.D
    var e: Self.E
    var f: Self.F

    def run(self):
        Self.func(self.a, self.b, self.c, self.d, self.e, self.f)
