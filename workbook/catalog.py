"""The catalog of puzzles: finds puzzle folders and reads their manifests.

A puzzle's `puzzle.toml` is the single source of truth for it: its kind, its
files, parts, launches, hints, tolerances, reference and GPU needs. The
engine never names a puzzle; adding a folder adds a puzzle. docs/authoring.md
describes every key.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import math
import operator
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import settings
from .i18n import WorkbookError, pick

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

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
    `why` says it in the learner's words when the PTX has something else."""

    kernel: str
    loads: str
    stores: str
    why: dict[str, str]


# What [[parts.method]] may state (workbook/methods.py checks them), and the warp
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
    where the compiled code shows it, on the PTX of the GPU build (workbook/methods.py):

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
    least `min_occupancy` of its 64 warp slots filled (workbook/occupancy.py: the block size
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
    methods: tuple[MethodRule, ...] = ()  # stated methods ([[parts.method]], workbook/methods.py)
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
    (workbook/sourcenumbers.py): `code` with {NAME} where each number goes, the text's values."""

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
    # `workbook grade`'s source guard (workbook/guard.py), [grade] in the manifest: modules this
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


# ---------------------------------------------------------------------------
# Finding puzzles
# ---------------------------------------------------------------------------


def root() -> Path:
    return settings.root()


def puzzle_ids(base: Path | None = None) -> list[str]:
    base = base or root()
    folder = base / "puzzles"
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if p.is_dir() and (p / "puzzle.toml").exists()]
    return sorted(found, key=lambda name: int(name[1:]) if ID_PATTERN.match(name) else 10**9)


def all_puzzles(base: Path | None = None) -> list[Puzzle]:
    puzzles = [load(pid, base) for pid in puzzle_ids(base)]
    return sorted(puzzles, key=lambda p: (p.chapter, p.order, p.id))


def chapters(base: Path | None = None) -> dict[int, Chapter]:
    """The chapters in puzzles/chapters.toml: number -> title."""
    path = (base or root()) / "puzzles" / "chapters.toml"
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError("catalog.manifest_malformed", path=str(path), error=str(exc)) from None
    return {int(c["number"]): Chapter(int(c["number"]), dict(c["title"])) for c in data.get("chapters", [])}


def left_out(base: Path | None = None) -> dict[str, dict[str, str]]:
    """Ids of the upstream course this one leaves out (chapters.toml's [[left_out]]): id -> why."""
    path = (base or root()) / "puzzles" / "chapters.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    return {str(x["id"]): dict(x.get("why", {})) for x in data.get("left_out", []) if isinstance(x, dict) and "id" in x}


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s_\-:,.()/·]+", text.casefold()) if w]


def by_name(text: str, base: Path | None = None) -> list[Puzzle]:
    """The puzzles a name or words find ("softmax", "prefix sum", "소프트맥스"): each word the
    start of a word of the title (either language; "conflict" finds "conflicts", "소프트맥스"
    finds "소프트맥스로"); where no title has them all, of a part's title or id or an op's name.
    Too short a query finds nothing (a letter starts some word of every title)."""
    wanted = _words(text)
    if not wanted or sum(len(w) for w in wanted) < 3:
        return []
    in_title, elsewhere = [], []
    for pid in puzzle_ids(base):
        try:
            puzzle = load(pid, base)
        except CatalogError:
            continue  # a broken manifest is reported where it is used, not here
        title = _words(" ".join(puzzle.title.values()))
        more = title + _words(" ".join([*(v for p in puzzle.parts for v in p.title.values()),
                                        *(p.id for p in puzzle.parts), *puzzle.ops]))
        if all(any(word.startswith(w) for word in title) for w in wanted):
            in_title.append(puzzle)
        elif all(any(word.startswith(w) for word in more) for w in wanted):
            elsewhere.append(puzzle)
    return in_title or elsewhere


def resolve_id(text: str, base: Path | None = None) -> tuple[str, str | None]:
    """Turn what the user typed ("p18", "18", "P18", "p27.broadcast", or a name such as
    "softmax") into (id, part).

    Raises CatalogError with the closest ids for anything else, including a path
    typed where an id belongs, and says why an id the course leaves out is not here."""
    raw = text.strip()
    if len(raw) > MAX_ID or not raw.isprintable():  # a pasted paragraph, a 5000-digit number
        raise CatalogError("catalog.unknown_puzzle", raw=(raw[:MAX_ID] + "…") if len(raw) > MAX_ID else raw)
    if "/" in raw or "\\" in raw or raw.endswith((".mojo", ".py", ".toml")):
        guess = next((seg for seg in re.split(r"[\\/]", raw) if ID_PATTERN.match(seg.lower())), None)
        if guess:
            raise CatalogError("catalog.looks_like_path_guess", raw=raw, guess=guess)
        raise CatalogError("catalog.looks_like_path", raw=raw)
    pid, _, part = raw.partition(".")
    pid = pid.lower()
    known = puzzle_ids(base)
    number = pid[1:] if ID_PATTERN.match(pid) else pid
    if number.isdigit():  # "1", "p1", "p01" all name p01
        pid = next((c for c in (f"p{int(number):02d}", f"p{int(number)}") if c in known), f"p{int(number)}")
    if pid not in known and pid in left_out(base):
        raise CatalogError("catalog.left_out", id=pid, why=left_out(base)[pid])
    if pid not in known and not ID_PATTERN.match(pid) and not number.isdigit():
        named = by_name(raw, base)
        if len(named) == 1:
            return named[0].id, None
        if named:
            raise CatalogError("catalog.name_several", raw=raw, found=", ".join(
                f"{p.id} ({pick(p.title)})" for p in named[:6]) + (" …" if len(named) > 6 else ""))
    if pid not in known:
        close = difflib.get_close_matches(pid, known, n=3, cutoff=0.5)
        if not close and ID_PATTERN.match(pid):  # p19 -> nearest numbers
            n = int(pid[1:])
            close = sorted(known, key=lambda k: abs(int(k[1:]) - n))[:2]
        if close:
            raise CatalogError("catalog.unknown_puzzle_close", raw=raw, close=", ".join(close))
        raise CatalogError("catalog.unknown_puzzle", raw=raw)
    return pid, (part or None)


def load(puzzle_id: str, base: Path | None = None) -> Puzzle:
    """Read and validate one manifest; every problem is a CatalogError naming the file."""
    base = base or root()
    folder = base / "puzzles" / puzzle_id
    path = folder / "puzzle.toml"
    if not path.exists():
        raise CatalogError("catalog.manifest_missing", path=str(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError("catalog.manifest_malformed", path=str(path), error=str(exc)) from None
    solutions = base / "solutions" if (base / "solutions").is_dir() else settings.curriculum() / "solutions"
    try:
        return _from_dict(data, folder, solutions / puzzle_id)
    except (ManifestError, KeyError, TypeError, ValueError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise CatalogError("catalog.manifest_invalid", path=str(path), error=detail) from None


# ---------------------------------------------------------------------------
# Reading a manifest
# ---------------------------------------------------------------------------


def _require(data: dict, key: str, kind: type, where: str):
    if key not in data:
        raise ManifestError(f"missing '{key}' in {where}")
    value = data[key]
    if not isinstance(value, kind):
        raise ManifestError(f"'{key}' in {where} must be {kind.__name__}")
    return value


def _title(value, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or "en" not in value:
        raise ManifestError(f"{where} needs an English title: title.en = \"...\"")
    return {k: str(v) for k, v in value.items()}


def _names(values, where: str) -> tuple[str, ...]:
    values = tuple(values)
    for v in values:
        if not isinstance(v, str) or not NAME.match(v):
            raise ManifestError(f"{where}: '{v}' is not a name")
    return values


def _dims(value, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not 1 <= len(items) <= 3:
        raise ManifestError(f"{where} must have 1 to 3 sizes")
    dims = tuple(str(v) for v in items)
    for d in dims:
        check_expression(d, where)
    return dims


def _tools(values, where: str) -> tuple[str, ...]:
    tools = tuple(values)
    if not set(tools) <= {"memcheck", "racecheck", "initcheck"}:
        raise ManifestError(f"{where}.sanitizers must name memcheck, racecheck or initcheck")
    return tools


def _inside(name, where: str) -> str:
    """A path the manifest names, relative to the puzzle folder and inside it: no absolute
    path, no '..', no backslash (a manifest saying edit = ["../../.bashrc"] would have
    `reveal` print that file and `reset` overwrite it)."""
    if not isinstance(name, str) or not name or len(name) > 200:
        raise ManifestError(f"{where}: '{name}' is not a file name")
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(part in ("", ".", "..") for part in parts) \
            or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ManifestError(f"{where}: '{name}' must be a plain path inside the puzzle folder")
    return name


def _tolerance(value, where: str) -> float:
    """atol and rtol: finite, not negative, at most 1. A tolerance larger than the values
    it compares (atol = 1e30) passes any kernel at all."""
    number = float(value)
    if not math.isfinite(number) or not 0 <= number <= MAX_TOLERANCE:
        raise ManifestError(f"{where}: a tolerance must be between 0 and {MAX_TOLERANCE}, not {value}")
    return number


def _launch(raw: dict, where: str) -> Launch:
    launch = Launch(
        kernel=_require(raw, "kernel", str, where),
        args=tuple(_require(raw, "args", list, where)),
        grid=_dims(raw.get("grid", [1]), f"{where}.grid"),
        block=_dims(_require(raw, "block", (list, int, str), where), f"{where}.block"),
        host=bool(raw.get("host", False)),
        cluster=_dims(raw["cluster"], f"{where}.cluster") if "cluster" in raw else (),
    )
    if launch.cluster and launch.host:
        raise ManifestError(f"{where}: a host function makes its own launches: it can't be given a cluster")
    return launch


def _why(raw: dict, where: str, both: bool = False) -> dict[str, str]:
    """A limit's or rule's `why`, in the learner's words: English at least (`both`: and Korean)."""
    why = raw.get("why", {})
    if not isinstance(why, dict) or not ({"en", "ko"} if both else {"en"}) <= set(why):
        raise ManifestError(f"{where}: say why in the learner's words: why.en = \"...\" "
                            + ("and why.ko = \"...\"" if both else "(and why.ko)"))
    return {str(k): str(v) for k, v in why.items()}


def _budget(raw: dict, where: str) -> Budget:
    unknown = set(raw) - {*BUDGET_LIMITS, "kernel", "why"}
    if unknown:
        raise ManifestError(f"{where}: unknown budget keys {sorted(unknown)}; use {BUDGET_LIMITS}")
    limits = tuple((k, _budget_limit(raw[k], f"{where}.{k}")) for k in BUDGET_LIMITS if k in raw)
    if not limits:
        raise ManifestError(f"{where}: a budget needs at least one of {BUDGET_LIMITS}")
    return Budget(str(raw.get("kernel", "")), limits, _why(raw, where))


def _budget_limit(value, where: str) -> int | str:
    """A whole number, or a size expression of the case's parameters and the constants
    ("ceildiv(ceildiv(size, 32), 32)": a lane's share of the warp sums), evaluated per case."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, int) and value < 0):
        raise ManifestError(f"{where}: a whole number of at least 0, or a size expression, not {value!r}")
    if isinstance(value, str):
        check_expression(value, where)
    return value


def _traffic(raw: dict, where: str) -> TrafficLimit:
    unknown = set(raw) - {*TRAFFIC_LIMITS, "kernel", "access", "why"}
    if unknown:
        raise ManifestError(f"{where}: unknown traffic keys {sorted(unknown)}; use {TRAFFIC_LIMITS}")
    limits = []
    for key in TRAFFIC_LIMITS:
        if key in raw:
            value = raw[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ManifestError(f"{where}.{key}: a number of at least 0, not {value!r}")
            limits.append((key, float(value)))
    if not limits:
        raise ManifestError(f"{where}: a traffic limit needs at least one of {TRAFFIC_LIMITS}")
    access = str(raw.get("access", ""))
    if access not in ("", "load", "store"):
        raise ManifestError(f"{where}.access: \"load\" or \"store\", not {access!r}")
    return TrafficLimit(str(raw.get("kernel", "")), access, tuple(limits), _why(raw, where))


def _method(raw: dict, where: str, launches: tuple[Launch, ...], inputs: tuple[str, ...],
            outputs: tuple[str, ...]) -> MethodRule:
    """One [[parts.method]]: its kind, the keys that kind takes, and its why in both languages."""
    if not isinstance(raw, dict):
        raise ManifestError(f"{where} must be a table: [[parts.method]] kind = \"...\"")
    kind = raw.get("kind")
    if kind not in METHOD_KINDS:
        raise ManifestError(f"{where}.kind must be one of {METHOD_KINDS}, not {kind!r}")
    allowed = {"kind", "kernel", "why", "gpu", *METHOD_KEYS[kind]}
    unknown = set(raw) - allowed
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)} for a {kind} rule; use {sorted(allowed)}")
    kernel = str(raw.get("kernel", ""))
    names = sorted({ln.name for ln in launches})
    if kernel and kernel not in names:
        raise ManifestError(f"{where}: kernel '{kernel}' is not one this part launches ({', '.join(names) or 'none'})")
    if not isinstance(raw.get("gpu", True), bool):
        raise ManifestError(f"{where}.gpu: true or false")
    rule = {"kind": kind, "kernel": kernel, "why": _why(raw, where, both=True), "gpu": raw.get("gpu", True)}
    if kind == "warp_ops":
        for key in ("required", "forbidden"):
            ops = raw.get(key, [])
            if not isinstance(ops, list) or not all(op in WARP_OPS for op in ops):
                raise ManifestError(f"{where}.{key}: a list of {WARP_OPS}, not {ops!r}")
            rule[key] = tuple(ops)
        if not rule["required"] and not rule["forbidden"]:
            raise ManifestError(f"{where}: a warp_ops rule names required and/or forbidden operations")
        if set(rule["required"]) & set(rule["forbidden"]):
            raise ManifestError(f"{where}: an operation both required and forbidden")
    elif kind == "access_width":
        least = raw.get("min_bytes")
        if least not in (2, 4, 8, 16, 32):
            raise ManifestError(f"{where}.min_bytes: the least bytes an access moves, 2, 4, 8, 16 or 32, "
                                f"not {least!r}")
        access = raw.get("access", "")
        if access not in ("", "load", "store"):
            raise ManifestError(f"{where}.access: \"load\" or \"store\" (both when left out), not {access!r}")
        rule.update(min_bytes=least, access=access,
                    max_narrow=_budget_limit(raw.get("max_narrow", 0), f"{where}.max_narrow"))
    elif kind == "async_copy":
        buffer = _require(raw, "buffer", str, where)
        if buffer not in inputs:
            raise ManifestError(f"{where}.buffer: one of the part's inputs ({', '.join(inputs)}), not {buffer!r}")
        rule["buffer"] = buffer
    elif kind == "mbarrier":
        rule["max_barriers"] = _budget_limit(_require(raw, "max_barriers", (int, str), where),
                                             f"{where}.max_barriers")
    else:  # writers
        output, array = raw.get("output", ""), raw.get("array", "")
        if bool(output) == bool(array) or not isinstance(output, str) or not isinstance(array, str):
            raise ManifestError(f"{where}: a writers rule names one output = \"...\" or one shared array = \"...\"")
        if output and output not in outputs:
            raise ManifestError(f"{where}.output: one of the part's outputs ({', '.join(outputs)}), not {output!r}")
        threads = raw.get("threads")
        if not isinstance(threads, list) or len(threads) != 2:
            raise ManifestError(f"{where}.threads: [first, last], the block's threads that write it "
                                "(numbers or size expressions)")
        rule.update(output=output, array=array,
                    threads=tuple(_budget_limit(t, f"{where}.threads") for t in threads))
    return MethodRule(**rule)


def _launched_kernel(raw: dict, where: str, launches: tuple[Launch, ...], keys: tuple[str, ...]) -> str:
    """A per-kernel rule's kernel (PTX, occupancy): only `keys` allowed, and the kernel one
    this part launches itself."""
    unknown = set(raw) - set(keys)
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}; use {', '.join(keys)}")
    kernel = _require(raw, "kernel", str, where)
    kernels = sorted({ln.name for ln in launches if not ln.host})
    if kernel not in kernels:
        launched = ", ".join(kernels) or "none"
        raise ManifestError(f"{where}: kernel '{kernel}' is not one this part launches ({launched})")
    return kernel


def _ptx_rule(raw: dict, where: str, launches: tuple[Launch, ...]) -> PtxRule:
    kernel = _launched_kernel(raw, where, launches, ("kernel", "loads", "stores", "why"))
    rules = {k: raw.get(k, "") for k in ("loads", "stores")}
    for key, value in rules.items():
        if value and value not in PTX_RULES:
            raise ManifestError(f"{where}.{key} must be one of {PTX_RULES}, not {value!r}")
    if not any(rules.values()):
        raise ManifestError(f"{where}: say what the PTX must show: loads = \"v4\" and/or stores = \"v4\"")
    return PtxRule(kernel, rules["loads"], rules["stores"], _why(raw, where, both=True))


def _occupancy_rule(raw: dict, where: str, launches: tuple[Launch, ...]) -> OccupancyRule:
    kernel = _launched_kernel(raw, where, launches, ("kernel", "min_occupancy", "why"))
    least = raw.get("min_occupancy")
    if isinstance(least, bool) or not isinstance(least, (int, float)) or not 0 < least <= 1:
        raise ManifestError(f"{where}.min_occupancy is the share of an SM's warp slots, more than 0 and at most "
                            f"1 (0.75: 48 of 64 warps), not {least!r}")
    return OccupancyRule(kernel, float(least), _why(raw, where, both=True))


def _special(values, where: str) -> tuple[SpecialPoint, ...]:
    if not isinstance(values, list):
        raise ManifestError(f"{where} is a list of tables: [[parts.special]] name = \"...\", why.en, why.ko")
    points = []
    for i, raw in enumerate(values):
        here = f"{where}[{i}]"
        if not isinstance(raw, dict):
            raise ManifestError(f"{here} must be a table: [[parts.special]]")
        unknown = set(raw) - {"name", "why"}
        if unknown:
            raise ManifestError(f"{here}: unknown keys {sorted(unknown)}; use name and why")
        name = _require(raw, "name", str, here)
        if not NAME.match(name):
            raise ManifestError(f"{here}.name: '{name}' is not a name (letters, digits and _)")
        points.append(SpecialPoint(name, _why(raw, here, both=True)))
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise ManifestError(f"{where}: a special point is named twice")
    return tuple(points)


def _fixed_size(raw: dict, where: str) -> str:
    if "fixed_size" not in raw:
        return ""
    value = raw["fixed_size"]
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{where}.fixed_size says why the sizes are fixed: fixed_size = \"...\"")
    return value.strip()


def _speed(raw, where: str) -> Speed | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ManifestError(f"{where} must be a table: [parts.speed]")
    unknown = set(raw) - set(SPEED_KEYS)
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}; use {SPEED_KEYS}")
    if not raw.get("bytes") and not raw.get("flops"):
        raise ManifestError(f"{where} declares what one run does: bytes = \"...\" and/or flops = \"...\"")
    for key in ("bytes", "flops"):
        if key in raw:
            if not isinstance(raw[key], (str, int)) or isinstance(raw[key], bool):
                raise ManifestError(f"{where}.{key} must be a size expression, like \"2 * m * k * n\"")
            check_expression(str(raw[key]), f"{where}.{key}")
    counts = {}
    for key, low, high in (("warmup", 0, 100), ("launches", 3, 1000)):
        value = raw.get(key, getattr(Speed, key))
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ManifestError(f"{where}.{key} must be a whole number from {low} to {high}, not {value!r}")
        counts[key] = value
    precision = raw.get("precision", "fp32")
    if precision not in PRECISIONS:
        raise ManifestError(f"{where}.precision must be one of {PRECISIONS}, not {precision!r}")
    ratio = raw.get("max_ratio_to_solution", 0.0)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not (ratio == 0 or ratio >= 1):
        raise ManifestError(f"{where}.max_ratio_to_solution must be a number of at least 1 (the solution's "
                            f"own time), not {ratio!r}")
    return Speed(str(raw.get("bytes", "")), str(raw.get("flops", "")), precision, **counts,
                 max_ratio_to_solution=float(ratio))


def _part(raw: dict, where: str, kind: str, default_graph: str, defaults: dict, ops: tuple[str, ...]) -> Part:
    devices = tuple(raw.get("devices", ["gpu"] if kind == "kernel" else DEVICES))
    if not devices or any(d not in DEVICES for d in devices):
        raise ManifestError(f"{where}.devices must be a list of {DEVICES}")
    if kind == "kernel" and devices != ("gpu",):
        raise ManifestError(f"{where}: a kernel puzzle's parts run on the GPU: devices = [\"gpu\"]")
    launches = tuple(_launch(r, f"{where}.launch[{i}]") for i, r in enumerate(raw.get("launch", [])))
    calls = tuple(Call(_require(r, "function", str, f"{where}.call[{i}]"),
                       tuple(_require(r, "args", list, f"{where}.call[{i}]")))
                  for i, r in enumerate(raw.get("call", [])))
    if "gpu" in devices and not launches:
        raise ManifestError(f"{where} runs on the GPU: it needs at least one [[parts.launch]]")
    if "cpu" in devices and not calls:
        raise ManifestError(f"{where} runs on the CPU: it needs a [[parts.call]] naming the CPU kernel")
    graph = raw.get("graph", default_graph)
    if kind == "op" and ":" not in graph:
        raise ManifestError(f"{where}.graph must look like 'file.py:function'")
    if graph:
        _inside(graph.partition(":")[0], f"{where}.graph")
    graph_cases = raw.get("graph_cases", [])
    if not isinstance(graph_cases, list) or not all(isinstance(c, str) and c.strip() for c in graph_cases):
        raise ManifestError(f"{where}.graph_cases must be a list of the reference's case names")
    graph_cases = tuple(graph_cases)
    if graph_cases and kind != "op":
        raise ManifestError(f"{where}.graph_cases: only an op puzzle's part has a graph stage")
    if "speed" in raw and "gpu" not in devices:
        raise ManifestError(f"{where}.speed: only a part that runs on the GPU is timed")
    tolerance = raw.get("tolerance", defaults.get("tolerance", ""))
    if not isinstance(tolerance, str) or not tolerance.strip():
        raise ManifestError(f"{where}: say why atol and rtol are what they are: tolerance = \"...\"")
    outputs = _names(_require(raw, "outputs", list, where), f"{where}.outputs")
    dtypes = {str(k): str(v) for k, v in raw.get("dtypes", {}).items()}
    inputs_named = [str(n) for n in raw.get("inputs", [])]
    for name, dtype in dtypes.items():
        allowed = INPUT_DTYPES if name in inputs_named else DTYPES
        if dtype not in allowed:
            raise ManifestError(f"{where}.dtypes.{name} must be one of {allowed}")
    accumulate = _names(raw.get("accumulate", []), f"{where}.accumulate")
    if not set(accumulate) <= set(outputs):
        raise ManifestError(f"{where}.accumulate must name outputs")
    scratch = tuple(Scratch(_require(s, "name", str, f"{where}.scratch"),
                            _dims(_require(s, "shape", list, f"{where}.scratch"), f"{where}.scratch.shape"),
                            str(s.get("dtype", "float32")))
                    for s in raw.get("scratch", []))
    return Part(
        id=_require(raw, "id", str, where),
        title=_title(raw.get("title", {"en": raw.get("id", "")}), where),
        devices=devices,
        inputs=_names(_require(raw, "inputs", list, where), f"{where}.inputs"),
        outputs=outputs,
        atol=_tolerance(raw.get("atol", defaults.get("atol", 1e-6)), f"{where}.atol"),
        rtol=_tolerance(raw.get("rtol", defaults.get("rtol", 1e-5)), f"{where}.rtol"),
        tolerance=tolerance.strip(),
        launches=launches,
        calls=calls,
        graph=graph,
        graph_cases=graph_cases,
        dtypes=dtypes,
        accumulate=accumulate,
        scratch=scratch,
        exact_repeats=bool(raw.get("exact_repeats", True)),
        sim=bool(raw.get("sim", True)),
        ops=tuple(raw.get("ops", ops)),
        sanitizers=_tools(raw.get("sanitizers", []), where),
        budgets=tuple(_budget(b, f"{where}.budget[{i}]") for i, b in enumerate(raw.get("budget", []))),
        methods=tuple(_method(m, f"{where}.method[{i}]", launches, tuple(raw.get("inputs", [])), outputs)
                      for i, m in enumerate(raw.get("method", []))),
        traffic=tuple(_traffic(b, f"{where}.traffic[{i}]") for i, b in enumerate(raw.get("traffic", []))),
        show_traffic=bool(raw.get("show_traffic", False)),
        ptx=tuple(_ptx_rule(r, f"{where}.ptx[{i}]", launches) for i, r in enumerate(raw.get("ptx", []))),
        occupancy=tuple(_occupancy_rule(r, f"{where}.occupancy[{i}]", launches)
                        for i, r in enumerate(raw.get("occupancy", []))),
        show_occupancy=bool(raw.get("show_occupancy", False)),
        fixed_size=_fixed_size(raw, where),
        speed=_speed(raw.get("speed"), f"{where}.speed"),
        special=_special(raw.get("special", []), f"{where}.special"),
    )


def _from_dict(data: dict, folder: Path, solution_dir: Path) -> Puzzle:
    pid = _require(data, "id", str, "the manifest")
    if pid != folder.name:
        raise ManifestError(f"id '{pid}' does not match its folder '{folder.name}'")
    kind = data.get("kind", "kernel")
    if kind not in KINDS:
        raise ManifestError(f"kind must be one of {KINDS}")
    edit = tuple(_inside(name, "edit") for name in _require(data, "edit", list, "the manifest"))
    if len(set(edit)) != len(edit):
        raise ManifestError("edit names a file twice")
    for name in edit:  # the learner's copy may be missing: `workbook reset` puts it back
        solution = solution_dir / name
        if solution.is_symlink() or not solution.is_file():
            raise ManifestError(f"edit file '{name}' has no solution in {solution_dir} (a regular file)")
    package = data.get("package", "")
    if package:
        _inside(package, "package")
    if kind == "op":
        if not package or not (folder / package / "__init__.mojo").exists():
            raise ManifestError("an op puzzle needs package = \"DIR\", a folder with an __init__.mojo")
        if not data.get("ops") and not all(raw.get("ops") for raw in data.get("parts", [])):
            raise ManifestError("an op puzzle names the custom ops its graph must call: ops = [\"...\"]")
    mojo_edits = [name for name in edit if name.endswith(".mojo")]
    module = data.get("module") or (mojo_edits[0][:-5].replace("/", ".") if mojo_edits else "")
    if not module:
        raise ManifestError("name the Mojo module the kernels live in: module = \"...\"")
    constants = data.get("constants", {})
    if not all(isinstance(v, int) for v in constants.values()):
        raise ManifestError("constants must be whole numbers")
    choice_names = data.get("choices", [])
    if not isinstance(choice_names, list) or not all(isinstance(n, str) and n.isidentifier() for n in choice_names):
        raise ManifestError("choices must be a list of names: choices = [\"BLOCK\"]")
    if set(choice_names) & set(constants):
        raise ManifestError("a name is either a constant (fixed) or a choice (the learner's), not both")
    solution_texts = [(solution_dir / n).read_text(encoding="utf-8") for n in edit if n.endswith(".mojo")]
    choices = read_choices(solution_texts, choice_names)
    if len(choices) != len(choice_names):
        missing = ", ".join(n for n in choice_names if n not in choices)
        raise ManifestError(f"the solution sets no plain `comptime NAME = <number>` for the choices {missing}")
    defaults = data.get("tolerance", {}) if isinstance(data.get("tolerance"), dict) else {}
    parts = [_part(raw, f"parts[{i}]", kind, data.get("graph", ""), defaults, tuple(data.get("ops", ())))
             for i, raw in enumerate(_require(data, "parts", list, "the manifest"))]
    if not parts:
        raise ManifestError("a puzzle needs at least one part")
    if len({p.id for p in parts}) != len(parts):
        raise ManifestError("part ids must differ")
    hints_file = folder / "hints.toml"
    hints = list(data.get("hints", []))
    if hints_file.exists():
        hints += tomllib.loads(hints_file.read_text(encoding="utf-8")).get("hints", [])
    gpu = data.get("gpu", {})
    grade_imports, grade_allow = _grade(data.get("grade", {}))
    return Puzzle(
        id=pid,
        kind=kind,
        chapter=int(data.get("chapter", 0)),
        order=int(data.get("order", pid[1:] if pid[1:].isdigit() else 0)),
        title=_title(data.get("title"), "the manifest"),
        dir=folder,
        solution_dir=solution_dir,
        edit=edit,
        module=module,
        reference=_inside(data.get("reference", "reference.py"), "reference"),
        parts=tuple(parts),
        constants={str(k): int(v) for k, v in constants.items()},
        choices=choices,
        package=package,
        ops=tuple(data.get("ops", ())),
        hints=tuple(hints),
        gpu=GpuNeeds(gpu.get("vendor"), gpu.get("min_compute_capability")),
        repeats=int(data.get("repeats", 3)),
        skeleton_runs=bool(data.get("skeleton_runs", False)),
        grade_imports=grade_imports,
        grade_allow=grade_allow,
        source_numbers=tuple(_source_numbers(raw, f"source_numbers[{i}]", edit)
                             for i, raw in enumerate(data.get("source_numbers", []))),
    )


DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _grade(raw) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """[grade]: imports = ["module", ...] and allow = ["name", ...] for the source guard."""
    if not isinstance(raw, dict):
        raise ManifestError("grade must be a table: [grade]")
    unknown = set(raw) - {"imports", "allow"}
    if unknown:
        raise ManifestError(f"grade: unknown keys {sorted(unknown)}; use imports, allow")
    found = []
    for key, pattern in (("imports", DOTTED), ("allow", NAME)):
        values = raw.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and pattern.match(v) for v in values):
            raise ManifestError(f"grade.{key} must be a list of {'module names' if key == 'imports' else 'names'}")
        found.append(tuple(values))
    return found[0], found[1]


def _source_numbers(raw: dict, where: str, edit: tuple[str, ...]) -> SourceNumbers:
    code = _require(raw, "code", str, where)
    expect = _require(raw, "expect", dict, where)
    slots = re.findall(r"\{([A-Za-z_]\w*)\}", code)
    if not slots or set(slots) != set(expect) or len(slots) != len(set(slots)):
        raise ManifestError(f"{where}: the names in code ({', '.join(slots) or 'none'}) and in expect must be the same")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in expect.values()):
        raise ManifestError(f"{where}: expect gives whole numbers")
    file = raw.get("file", "")
    if file and file not in edit:
        raise ManifestError(f"{where}: file '{file}' is not one of the learner's files")
    what = raw.get("what", {})
    if not isinstance(what, dict) or not {"en", "ko"} <= set(what):
        raise ManifestError(f"{where}: say what the numbers are: what.en = \"...\" and what.ko = \"...\"")
    return SourceNumbers(code, {str(k): int(v) for k, v in expect.items()}, {str(k): str(v) for k, v in what.items()},
                         file)


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
