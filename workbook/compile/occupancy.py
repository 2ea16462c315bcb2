"""Theoretical occupancy: how many warps of a kernel an SM holds at once, by NVIDIA's rules.

An SM keeps a block resident until every thread of it ends, and takes another block
only while it has room for all of that block's warps, registers and shared memory. The
fewest blocks any one of those resources allows is the kernel's blocks per SM; its warps
over the SM's 64 warp slots is its occupancy. A latency-bound kernel (each thread waits
for loads that depend on each other) runs about as many loads at once as it has warps,
so a kernel at 50 % occupancy may take twice as long as one at 100 %.

Where the numbers come from, none of them needing a GPU:

- the block size: the part's launch in the manifest, evaluated with the case (and with
  the learner's choices, manifest.read_choices);
- registers per thread and static shared memory per block: NVIDIA's PTX compiler,
  `libNVPTX.so`, which the MAX wheel ships and which MAX itself calls to turn a kernel's
  PTX into the code the GPU runs (`nvPTXCompilerCompile` with `--gpu-name=` the PTX's
  target). With `--verbose` it says, per entry, "Used N registers, ... M bytes smem":
  the numbers the driver then sees (NUM_REGS, SHARED_SIZE_BYTES). Compiling the PTX the
  GPU launcher already embeds (workbook/compile/ptx.py) takes milliseconds per instantiation;
- the SM's limits: SM90 below, each with its source.

The arithmetic is the CUDA occupancy calculator's (cuda_occupancy.h in the CUDA toolkit,
cudaOccMaxActiveBlocksPerMultiprocessor), written again here for one architecture:
registers are handed out per warp in units of 256 and per sub-partition (four per SM),
shared memory per block in units of 128 bytes plus 1 KB the driver reserves, at most
227 KB a block. Dynamic shared memory is 0: the workbook's launches use none. (The
PTX compiler MAX ships accepts static shared arrays past the 48 KB a block gets
without opting in, so the workbook does not guess whether such a launch runs: it
counts the block against the SM's 228 KB like any other; tools/occupancy_sweep.py is
where a GPU says.)
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..core import toolchain
from ..core.results import Occupancy
from . import ptx

KB = 1024


@dataclass(frozen=True)
class Sm:
    """One architecture's per-SM limits. Sources: the CUDA C++ Programming Guide, table
    "Technical Specifications per Compute Capability" (column 9.0), and, for the allocation
    units, the occupancy calculator (cuda_occupancy.h: cudaOccRegAllocationGranularity,
    cudaOccSubPartitionsPerMultiprocessor, cudaOccSMemAllocationGranularity)."""

    name: str
    warp_size: int  # threads per warp (guide: warp size, 32)
    max_threads_per_sm: int  # guide: maximum number of resident threads per SM
    max_blocks_per_sm: int  # guide: maximum number of resident blocks per SM
    max_threads_per_block: int  # guide: maximum number of threads per block
    registers_per_sm: int  # guide: number of 32-bit registers per SM
    registers_per_block: int  # guide: maximum number of 32-bit registers per thread block
    max_registers_per_thread: int  # guide: maximum number of 32-bit registers per thread
    register_unit: int  # calculator: registers are allocated to a warp in units of this many
    sub_partitions: int  # calculator: an SM's registers are split over this many schedulers
    shared_per_sm: int  # guide: maximum amount of shared memory per SM (bytes)
    shared_per_block: int  # guide: a block's shared memory without opting in (static arrays: 48 KB)
    shared_per_block_optin: int  # guide: maximum shared memory per block, opted in (dynamic only)
    shared_reserved_per_block: int  # guide: shared memory the system reserves per block
    shared_unit: int  # calculator: shared memory is allocated to a block in units of this many bytes

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


# Compute capability 9.0: H100, H200 (the GPUs the workbook is verified on).
SM90 = Sm(
    name="sm_90",
    warp_size=32,
    max_threads_per_sm=2048,
    max_blocks_per_sm=32,
    max_threads_per_block=1024,
    registers_per_sm=64 * KB,
    registers_per_block=64 * KB,
    max_registers_per_thread=255,
    register_unit=256,
    sub_partitions=4,
    shared_per_sm=228 * KB,
    shared_per_block=48 * KB,
    shared_per_block_optin=227 * KB,
    shared_reserved_per_block=1 * KB,
    shared_unit=128,
)

RESOURCES = ("warps", "blocks", "registers", "shared")  # what can limit the blocks per SM
UNLIMITED = 1 << 30  # a resource a kernel does not use limits nothing


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def compute(kernel: str, block: int, registers: int | None, shared: int, sm: Sm = SM90) -> Occupancy:
    """The occupancy calculator's answer for a kernel launched with `block` threads a block."""
    result = Occupancy(kernel, block, registers, shared, sm.name, max_warps_per_sm=sm.max_warps_per_sm)
    warps = -(-block // sm.warp_size)
    result.warps_per_block = warps
    limits = result.limits
    limits["warps"] = sm.max_warps_per_sm // warps if 0 < block <= sm.max_threads_per_block else 0
    limits["blocks"] = sm.max_blocks_per_sm
    if registers is not None:
        per_warp = _round_up(registers * sm.warp_size, sm.register_unit)
        result.registers_per_block = per_warp * warps
        # The launch check assumes a block's warps spread over every sub-partition at once.
        assumed = per_warp * _round_up(warps, sm.sub_partitions)
        if registers > sm.max_registers_per_thread or max(assumed, result.registers_per_block) > sm.registers_per_block:
            limits["registers"] = 0
        elif per_warp == 0:
            limits["registers"] = UNLIMITED
        else:
            warps_per_partition = sm.registers_per_sm // sm.sub_partitions // per_warp
            limits["registers"] = warps_per_partition * sm.sub_partitions // warps
    result.shared_per_block = _round_up(shared + sm.shared_reserved_per_block, sm.shared_unit)
    if result.shared_per_block > sm.shared_per_block_optin + sm.shared_reserved_per_block:
        limits["shared"] = 0  # more than any block may have
    else:
        limits["shared"] = sm.shared_per_sm // result.shared_per_block
    result.blocks_per_sm = min(limits.values())
    result.limiting = [name for name in RESOURCES if limits.get(name) == result.blocks_per_sm]
    result.warps_per_sm = result.blocks_per_sm * warps
    result.occupancy = result.warps_per_sm / sm.max_warps_per_sm
    return result


# ---------------------------------------------------------------------------
# Registers and shared memory: NVIDIA's PTX compiler, as MAX runs it
# ---------------------------------------------------------------------------

USED = re.compile(r"Compiling entry function '([\w$]+)'.*?Used (\d+) registers(?:, used \d+ barriers)?"
                  r"(?:, (\d+) bytes smem)?", re.S)
SPILLS = re.compile(r"Function properties for ([\w$]+)\s*\n.*?(\d+) bytes spill stores", re.S)
TARGET = re.compile(r"^\.target\s+(\w+)", re.M)


class CompilerMissing(RuntimeError):
    """No libNVPTX.so beside Mojo's libraries: registers are not known here."""


@dataclass
class EntryResources:
    """What the PTX compiler allocated for one kernel entry (one instantiation)."""

    entry: str
    registers: int
    shared: int
    spills: int = 0


_LOCK = threading.Lock()  # one compile at a time: the library's handles are not shared, its state may be


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    libs = toolchain.mojo_libs()
    path = libs / "libNVPTX.so" if libs else None
    if path is None or not path.exists():
        raise CompilerMissing("libNVPTX.so")
    lib = ctypes.CDLL(str(path))
    handle = ctypes.POINTER(ctypes.c_void_p)
    lib.nvPTXCompilerCreate.argtypes = [handle, ctypes.c_size_t, ctypes.c_char_p]
    lib.nvPTXCompilerCompile.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.nvPTXCompilerDestroy.argtypes = [handle]
    for name in ("nvPTXCompilerGetInfoLogSize", "nvPTXCompilerGetErrorLogSize"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for name in ("nvPTXCompilerGetInfoLog", "nvPTXCompilerGetErrorLog"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib


def _log(lib: ctypes.CDLL, compiler: ctypes.c_void_p, which: str) -> str:
    size = ctypes.c_size_t()
    getattr(lib, f"nvPTXCompilerGet{which}LogSize")(compiler, ctypes.byref(size))
    text = ctypes.create_string_buffer(size.value + 1)
    getattr(lib, f"nvPTXCompilerGet{which}Log")(compiler, text)
    return text.value.decode("utf-8", errors="replace")


def compile_module(module: str) -> tuple[dict[str, EntryResources], str]:
    """Compile one PTX module for its own target, as MAX does before a launch, and read
    what each entry uses. Returns (per entry, the compiler's error text: "" when it compiled)."""
    lib = _library()
    found = TARGET.search(module)
    target = found.group(1) if found else "sm_90a"
    options = [f"--gpu-name={target}".encode(), b"--verbose"]
    source = module.encode("utf-8")
    compiler = ctypes.c_void_p()
    with _LOCK:
        if lib.nvPTXCompilerCreate(ctypes.byref(compiler), len(source), source) != 0:
            return {}, "nvPTXCompilerCreate failed"
        try:
            status = lib.nvPTXCompilerCompile(compiler, len(options), (ctypes.c_char_p * len(options))(*options))
            info = _log(lib, compiler, "Info")
            error = _log(lib, compiler, "Error") if status != 0 else ""
        finally:
            lib.nvPTXCompilerDestroy(ctypes.byref(compiler))
    return parse_info(info), error.strip() or (f"nvPTXCompilerCompile returned {status}" if status else "")


def parse_info(info: str) -> dict[str, EntryResources]:
    """The compiler's --verbose log, per entry: registers, shared bytes, spilled bytes."""
    entries = {}
    for block in re.split(r"(?=ptxas info\s*: Compiling entry function)", info):
        used = USED.search(block)
        if not used:
            continue
        spill = SPILLS.search(block)
        entries[used.group(1)] = EntryResources(used.group(1), int(used.group(2)), int(used.group(3) or 0),
                                                int(spill.group(2)) if spill else 0)
    return entries


@dataclass
class KernelResources:
    """One kernel (a manifest name) over its instantiations: the most registers and shared
    memory any of them uses (a block of any case must fit), and the compiler's complaint
    when one does not compile (too much shared memory, say)."""

    kernel: str
    registers: int
    shared: int
    spills: int
    instances: int
    error: str = ""


def kernel_resources(data: bytes, module: str, names: list[str]) -> dict[str, KernelResources]:
    """Per kernel named (without parameters), what the PTX compiler gives its instantiations."""
    found: dict[str, KernelResources] = {}
    for text in ptx.modules(data):
        wanted = {entry: name for entry in ptx.entries(text)
                  if (name := ptx.kernel_of(entry, module, names)) is not None}
        if not wanted:
            continue
        entries, error = compile_module(text)
        for entry, name in wanted.items():
            got = entries.get(entry)
            seen = found.setdefault(name, KernelResources(name, 0, 0, 0, 0))
            seen.instances += 1
            if got is None:
                seen.error = seen.error or error or "no resources reported"
                continue
            seen.registers = max(seen.registers, got.registers)
            seen.shared = max(seen.shared, got.shared)
            seen.spills = max(seen.spills, got.spills)
    return found


def read(binary: Path, module: str, names: list[str]) -> dict[str, KernelResources]:
    return kernel_resources(binary.read_bytes(), module, names)
