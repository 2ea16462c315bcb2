"""What a puzzle's manifest holds, as data: the records every layer above reads.

A puzzle's `puzzle.toml` is the single source of truth for it: its kind, its files, parts,
launches, hints, tolerances, reference and GPU needs (docs/authoring.md describes every key).
course/parsing.py reads a manifest into these records, checking each key; course/catalog.py
finds the puzzles. Here too: the size expressions a manifest may write ("ceildiv(size, TPB)"),
and the launch choices a learner's file sets.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.i18n import WorkbookError

DEVICES = ("cpu", "gpu")
KINDS = ("kernel", "op")
DTYPES = ("float32", "float64", "int32", "int64")
# What dtypes may say of an input (its dtype is otherwise the reference array's): bfloat16,
# for p36's tensor-core operands. The reference gives float32 values that bfloat16 holds
# exactly, and the launcher writes their top 16 bits. Any other dtype would be bytes of one
# type read as another.
INPUT_DTYPES = ("bfloat16",)
ID_PATTERN = re.compile(r"^p\d{1,6}$")
MAX_TOLERANCE = 1.0
MAX_ID = 40  # longer than any id with its part
NAME = re.compile(r"^[A-Za-z_]\w*$")


class CatalogError(WorkbookError):
    """A puzzle id or manifest the workbook cannot use; the message says why."""


class ManifestError(ValueError):
    """What is wrong inside a manifest (author-facing, English)."""


# ---------------------------------------------------------------------------
# The manifest, as data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """One GPU kernel launch: the kernel (a Mojo expression, e.g. "add_ten[size]"),
    its arguments (buffer names, or case parameters passed as Int32) and its
    grid and block sizes (expressions of the case parameters and constants)."""

    kernel: str
    args: tuple[str, ...]
    grid: tuple[str, ...]
    block: tuple[str, ...]
    # A host function that launches its own kernels (with `elementwise`): it is called
    # with the arguments and then `ctx`; grid and block say the launch it makes, so
    # that the simulator's findings can name its threads.
    host: bool = False
    # Thread-block clusters (sm_90): blocks per cluster in x, y, z; () for none. The grid
    # must be a whole number of clusters.
    cluster: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.kernel.split("[")[0].strip()


@dataclass(frozen=True)
class Call:
    """A CPU function called directly on host buffers (an op's CPU kernel)."""

    function: str
    args: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.function.split("[")[0].strip()


@dataclass(frozen=True)
class Scratch:
    """A buffer the launches share that is neither input nor output (filled with NaN)."""

    name: str
    shape: tuple[str, ...]
    dtype: str = "float32"


BUDGET_LIMITS = ("max_global_reads", "max_global_writes", "max_shared_reads", "max_shared_writes",
                 "min_shared_writes", "max_writes_per_element", "max_global_reads_per_warp")


@dataclass(frozen=True)
class Budget:
    """What a part's text asks of the kernel's memory traffic, checked on the simulator's
    counts: per thread at most (or, for min_shared_writes, per block at least) so many
    accesses; per element of a buffer the launch writes at most so many writes (its
    own, never another launch's); per warp (32 threads of a block in a row) at most so
    many global reads. Each limit is a number, or a size expression of the case (a
    lane's share of a count that grows with the size).
    `kernel` limits it to one launch, whose accesses alone are counted; `why` says it
    in the learner's words when it is broken."""

    kernel: str
    limits: tuple[tuple[str, int | str], ...]  # a number, or a size expression of the case
    why: dict[str, str]


TRAFFIC_LIMITS = ("max_sectors_per_request", "max_bank_conflicts")


@dataclass(frozen=True)
class TrafficLimit:
    """What a part's text asks of the cost of its memory accesses on a GPU, checked on
    the simulator's traffic counters (each line of the kernel, averaged over the warp-wide
    requests it made): global loads and stores touching at most so many 32-byte sectors
    per request (coalescing), shared accesses with at most so many bank conflicts (extra
    wavefronts) per request. `access` limits it to loads or stores; `kernel` to one
    launch; `why` says it in the learner's words when it is broken."""

    kernel: str
    access: str  # "", "load" or "store"
    limits: tuple[tuple[str, float], ...]
    why: dict[str, str]


SPEED_KEYS = ("bytes", "flops", "precision", "warmup", "launches", "max_ratio_to_solution")
# The arithmetic `flops` counts, for the GPU's peak it is set against: plain float32 on
# the CUDA cores, or the tensor cores' tensor float 32 or bfloat16 (speed.PEAKS).
PRECISIONS = ("fp32", "tf32", "bf16")


@dataclass(frozen=True)
class Speed:
    """A part whose speed is part of the lesson: timed on a GPU (never judged) on the
    reference's `speed_case`. `bytes` and `flops` are expressions of that case's
    parameters and the constants: what one run of the part's launches moves to or
    from global memory, and the floating-point operations it does."""

    bytes: str = ""
    flops: str = ""
    precision: str = "fp32"
    warmup: int = 3  # launches first, not timed
    launches: int = 20  # timed launches: the median and the fastest are reported
    # A verdict: the part fails on the GPU when its median is more than this many times the
    # reference solution's, timed in the same run on the same case (0: information only).
    max_ratio_to_solution: float = 0.0


PTX_RULES = ("v4", "v2", "scalar")  # what [[parts.ptx]] may ask of a kernel's widest global access


@dataclass(frozen=True)
class PtxRule:
    """What a part's text asks of one kernel's compiled code, checked on the PTX of the
    GPU build (every machine builds it, GPU or not): its global `loads` (or `stores`)
    must include vector accesses of that width ("v4": 4 values in one instruction), or,
    with "scalar", none wider than one value (where the addresses cannot hold a vector's
    alignment: the GPU build's default claims it, the CPU build's does not).
    `min_loads` (`min_stores`): how many accesses of that width at least, where the text
    asks for more than one (p35's two loads: one vector access alone would let the other
    stay split into scalars). `why` says it in the learner's words when the PTX has
    something else."""

    kernel: str
    loads: str
    stores: str
    why: dict[str, str]
    min_loads: int = 1
    min_stores: int = 1


# What [[parts.method]] may state (workbook/judging/methods.py checks them), and the warp
# operations a warp_ops rule may name: those the simulator and the PTX tell apart.
METHOD_KINDS = ("warp_ops", "access_width", "async_copy", "mbarrier", "writers")
WARP_OPS = ("shuffle_down", "shuffle_up", "shuffle_xor", "shuffle_idx", "vote", "mma")
METHOD_KEYS = {
    "warp_ops": ("required", "forbidden"),
    "access_width": ("min_bytes", "access", "max_narrow"),
    "async_copy": ("buffer",),
    "mbarrier": ("max_barriers",),
    "writers": ("output", "array", "threads"),
}


@dataclass(frozen=True)
class MethodRule:
    """A method a part's text states for a kernel, which right values alone do not show
    ([[parts.method]]), checked on the simulator's record of how each launch worked and,
    where the compiled code shows it, on the PTX of the GPU build (workbook/judging/methods.py):

    - warp_ops: the kernel makes warp operations of each `required` kind, and none of a
      `forbidden` one (a butterfly is shuffle_xor, p25's tree shuffle_down);
    - access_width: its global loads and/or stores (`access`) are at least `min_bytes`
      wide, but for at most `max_narrow` of them a launch (the leftovers: a size expression);
    - async_copy: `buffer` reaches the kernel through async copies only, never a plain load;
    - mbarrier: the kernel orders its steps with an mbarrier (arrivals and completed waits),
      and a block goes through at most `max_barriers` rounds of barrier();
    - writers: every element of `output` (or of the shared array named `array`, in block 0)
      that the kernel writes is written by threads `threads` = [first, last] of its block.

    `gpu = false` where the GPU build can't show what the simulator sees."""

    kind: str
    why: dict[str, str]
    kernel: str = ""  # one launch's kernel; every launch of the part without it
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    min_bytes: int = 0
    access: str = ""  # "load", "store", or both ("")
    max_narrow: int | str = 0
    buffer: str = ""
    max_barriers: int | str = 0
    output: str = ""
    array: str = ""
    threads: tuple[int | str, ...] = ()
    gpu: bool = True


@dataclass(frozen=True)
class OccupancyRule:
    """What a part's text asks of one kernel's theoretical occupancy on an sm_90 SM: at
    least `min_occupancy` of its 64 warp slots filled (workbook/compile/occupancy.py: the block size
    of the launch, the registers and shared memory the PTX compiler gives the kernel)."""

    kernel: str
    min_occupancy: float  # 0 < x <= 1
    why: dict[str, str]


@dataclass(frozen=True)
class SpecialPoint:
    """A value of a part's math where a wrong kernel can hide ([[parts.special]]): a term
    that vanishes, two branches that meet, a clamp or a shift that matters, exp past its
    range, ties, a count past every hard-coded constant. `name` is what the reference's
    `hits(case, part)` returns for a case whose inputs reach it, and what a case that is
    there for it lists under "special"; `why` says which wrong kernel it exposes."""

    name: str
    why: dict[str, str]


@dataclass(frozen=True)
class Part:
    id: str
    title: dict[str, str]
    devices: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    atol: float
    rtol: float
    tolerance: str  # why atol and rtol are what they are (the author's argument)
    launches: tuple[Launch, ...] = ()  # the GPU kernels, in order
    calls: tuple[Call, ...] = ()  # the CPU kernel (op puzzles)
    graph: str = ""  # "file.py:function" building the MAX graph (op puzzles)
    # The cases the graph stage runs through MAX (default: all). MAX compiles one graph
    # per shape, 15-30 s each; every case already ran the same kernels directly.
    graph_cases: tuple[str, ...] = ()
    # output name -> dtype (default float32); input name -> bfloat16 (INPUT_DTYPES)
    dtypes: dict[str, str] = field(default_factory=dict)
    accumulate: tuple[str, ...] = ()  # outputs the kernel adds into: zeroed, launched twice, halved
    scratch: tuple[Scratch, ...] = ()
    # Repeated GPU runs must agree bit for bit, unless the kernel sums with float
    # atomics (their order, and so the last bits, change from run to run): then
    # every repeat must match the reference within the tolerance instead.
    exact_repeats: bool = True
    sim: bool = True  # whether the simulator can run this part's GPU kernels
    ops: tuple[str, ...] = ()  # op puzzles: the custom ops this part's graph must call
    sanitizers: tuple[str, ...] = ()  # compute-sanitizer tools this part always needs on a GPU
    budgets: tuple[Budget, ...] = ()  # access budgets, checked on the simulator
    methods: tuple[MethodRule, ...] = ()  # stated methods ([[parts.method]], workbook/judging/methods.py)
    traffic: tuple[TrafficLimit, ...] = ()  # memory-traffic limits, checked on the simulator
    show_traffic: bool = False  # the report shows the traffic table without a limit to check
    ptx: tuple[PtxRule, ...] = ()  # what the GPU build's PTX must show, per kernel
    occupancy: tuple[OccupancyRule, ...] = ()  # the least occupancy a kernel must reach
    show_occupancy: bool = False  # the report shows the occupancy table without a rule to check
    # Why this part's sizes cannot go beyond the puzzle's constants (one block of TPB
    # threads, SIZE = 128): author verify then asks for no case beyond them, nor a seeded one.
    fixed_size: str = ""
    speed: Speed | None = None  # timed on a GPU ([parts.speed])
    # The special points of its math ([[parts.special]]): each one hit by a named case on
    # every seed, as the reference's hits(case, part) computes from the inputs.
    special: tuple[SpecialPoint, ...] = ()

    def output_dtype(self, name: str) -> str:
        return self.dtypes.get(name, "float32")

    def input_dtype(self, name: str, given: str) -> str:
        """How input `name` is stored on the device: its dtypes entry, else the reference's dtype."""
        return self.dtypes.get(name, given)


@dataclass(frozen=True)
class GpuNeeds:
    vendor: str | None = None
    min_compute_capability: float | None = None


@dataclass(frozen=True)
class Chapter:
    number: int
    title: dict[str, str]


@dataclass(frozen=True)
class SourceNumbers:
    """Numbers a puzzle's text fixes, read from the learner's file where nothing here can run it
    (workbook/judging/sourcenumbers.py): `code` with {NAME} where each number goes, the text's values."""

    code: str
    expect: dict[str, int]
    what: dict[str, str]
    file: str = ""  # one of the learner's files; "" for any


@dataclass(frozen=True)
class Puzzle:
    id: str
    kind: str  # "kernel" or "op"
    chapter: int
    order: int
    title: dict[str, str]
    dir: Path
    solution_dir: Path
    edit: tuple[str, ...]  # learner files, relative to dir
    module: str  # the Mojo module the launches' kernels live in ("map", "op.softmax")
    reference: str
    parts: tuple[Part, ...]
    constants: dict[str, int] = field(default_factory=dict)  # comptime values the launches rely on
    # Comptime values the learner picks (p31: the block size) and the launches use: read
    # from the learner's file at each check (the solution's at load), see read_choices.
    choices: dict[str, int] = field(default_factory=dict)
    package: str = ""  # op puzzles: the Mojo package handed to MAX
    ops: tuple[str, ...] = ()  # op puzzles: the custom ops the graph must call
    hints: tuple[dict, ...] = ()  # {"en", "ko", optional "part"}
    gpu: GpuNeeds = GpuNeeds()
    repeats: int = 3  # GPU runs per case; results that differ mean a race
    # A debugging puzzle hands out working-looking code with a bug: its skeleton runs as it is.
    skeleton_runs: bool = False
    # `workbook grade`'s source guard (workbook/grade/guard.py), [grade] in the manifest: modules this
    # puzzle's files may import beyond those every puzzle may, and constructs the guard refuses
    # elsewhere that this puzzle's solution needs.
    grade_imports: tuple[str, ...] = ()
    grade_allow: tuple[str, ...] = ()
    source_numbers: tuple[SourceNumbers, ...] = ()

    def launch_names(self) -> dict[str, int]:
        """What a launch's sizes may name besides a case's parameters."""
        return {**self.constants, **self.choices}

    def text_path(self, lang: str) -> Path:
        return self.dir / f"text.{lang}.md"

    def part(self, part_id: str) -> Part:
        for part in self.parts:
            if part.id == part_id:
                return part
        raise CatalogError("catalog.no_part", id=self.id, part=part_id, parts=", ".join(p.id for p in self.parts))

    def learner_files(self) -> list[Path]:
        return [self.dir / name for name in self.edit]

    def solution_files(self) -> list[Path]:
        return [self.solution_dir / name for name in self.edit]

    def mojo_files(self) -> list[str]:
        """The Mojo sources a build compiles, relative to the puzzle folder."""
        return sorted(p.relative_to(self.dir).as_posix() for p in self.dir.rglob("*.mojo")
                      if "__pycache__" not in p.parts) if self.dir.is_dir() else []

    def python_files(self) -> list[str]:
        """The Python files the graph stage imports (op puzzles), relative to the puzzle folder."""
        if self.kind != "op":
            return []
        return sorted(p.relative_to(self.dir).as_posix() for p in self.dir.rglob("*.py")
                      if "__pycache__" not in p.parts and p.name != self.reference)

    def needs_gpu_only(self) -> bool:
        return all(part.devices == ("gpu",) for part in self.parts)


CHOICE = r"^comptime\s+{name}\s*(?::\s*Int\s*)?=\s*(\d+)\s*(?:#.*)?$"


def read_choices(texts: list[str], names: list[str]) -> dict[str, int]:
    """The learner's values of `names`, each from its one top-level line `comptime NAME = 256`
    (a plain number: the workbook sizes the launch with it before anything compiles). A name
    written otherwise is left out; the launcher's compile-time check `NAME == value` then
    fails and says how to write it, so a value read here is always the value compiled."""
    found: dict[str, int] = {}
    for name in names:
        values = [int(m.group(1)) for text in texts
                  for m in re.finditer(CHOICE.format(name=re.escape(name)), text, re.M)]
        if len(values) == 1:
            found[name] = values[0]
    return found


def with_choices(puzzle: Puzzle, texts: list[str]) -> Puzzle:
    """The puzzle as the learner's files set its choices (those they set readably)."""
    if not puzzle.choices:
        return puzzle
    return dataclasses.replace(puzzle, choices={**puzzle.choices, **read_choices(texts, list(puzzle.choices))})


# ---------------------------------------------------------------------------
# Size expressions: "ceildiv(size, TPB)", "rows * 2 + 1"
# ---------------------------------------------------------------------------

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod}
_FUNCTIONS = {"ceildiv": lambda a, b: -(-a // b), "min": min, "max": max}


def check_expression(text: str, where: str) -> None:
    try:
        _walk(ast.parse(text, mode="eval").body, None)
    except (SyntaxError, ManifestError) as exc:
        raise ManifestError(f"{where}: '{text}' is not a size expression ({exc})") from None


def evaluate(text: str, names: dict[str, int]) -> int:
    """A launch size from case parameters and constants; only whole-number arithmetic."""
    return int(_walk(ast.parse(str(text), mode="eval").body, names))


def _walk(node, names: dict[str, int] | None):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if names is None:
            return 1
        if node.id not in names:
            raise ManifestError(f"unknown name '{node.id}'")
        return int(names[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_walk(node.left, names), _walk(node.right, names))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(_walk(a, names) for a in node.args))
    raise ManifestError("only whole numbers, names, + - * // % and ceildiv/min/max")
