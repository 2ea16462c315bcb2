"""Plain result records: computed once, rendered by report.py (Rich) or as JSON.

Every sentence in here is a `Msg` (a key and values): the view says it in the
learner's language, the JSON in English next to its key.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from enum import Enum

from .exitcodes import JSON_SCHEMA
from .i18n import Msg


class Status(str, Enum):
    """Statuses of a puzzle, a part or a device run, as the JSON report names them."""

    PASS = "pass"
    FAIL = "fail"
    NOT_STARTED = "not_started"
    COMPILE_ERROR = "compile_error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    NOT_RUN = "not_run"  # this device did not run it: see `reasons`
    COMPILED = "compiled"  # a GPU kernel compiled for a GPU target, with no GPU to run it
    SKIPPED = "skipped"  # the GPU here lacks a capability the puzzle needs


# Worst first: a puzzle's status is the worst of its parts' statuses.
SEVERITY = [
    Status.COMPILE_ERROR,
    Status.CRASH,
    Status.TIMEOUT,
    Status.FAIL,
    Status.NOT_STARTED,
    Status.NOT_RUN,
    Status.SKIPPED,
    Status.COMPILED,
    Status.PASS,
]

# Verdicts `run` and `check` accept (exit 0): passed, or compiled with no GPU to run it.
PASSING = (Status.PASS, Status.COMPILED)
# Statuses of a device that did not run the code, so do not decide a verdict.
NOT_RAN = (Status.COMPILED, Status.SKIPPED, Status.NOT_RUN)


def worst(statuses: list[Status]) -> Status:
    return min(statuses, key=SEVERITY.index) if statuses else Status.NOT_RUN


def verdict(statuses: list[Status]) -> Status:
    """Passes when every device that ran passed (and every GPU kernel compiled);
    `compiled` when nothing here could run it but it all compiled."""
    ran = [s for s in statuses if s not in NOT_RAN]
    if not ran:
        return Status.COMPILED if Status.COMPILED in statuses else worst(statuses)
    return worst(ran)


@dataclass
class Diagnostic:
    """One compiler error, pointed at the learner's file where possible."""

    file: str
    line: int
    column: int
    message: str  # the compiler's own words
    source: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)
    notes: list[str] = field(default_factory=list)
    hint: Msg | None = None  # what the workbook adds (an error in its launcher, say)
    # A common mistake recognised: what caused it, naming the line (the compiler names the symptom).
    explanation: Msg | None = None


@dataclass
class Finding:
    """One kind of bug found by a tool rather than by comparing values:
    compute-sanitizer on a GPU, or the simulator."""

    tool: str  # memcheck, racecheck, initcheck, sim
    kind: str  # a stable key: race_shared, race_global, out_of_bounds, divergent_barrier, ...
    message: Msg  # what it means, for the learner
    kernel: str = ""
    file: str = ""
    line: int | None = None
    count: int = 1  # how many times it was seen (cases, for the simulator)
    case: str = ""  # the (first) case it was seen in, if known
    detail: str = ""  # the tool's own words, or the threads and elements involved
    column: int = 0
    source: str = ""  # the text of that line
    other_file: str = ""  # a race: where the other access was
    other_line: int | None = None
    other_source: str = ""
    threads: int = 0  # the simulator: how many threads did the same (0: not counted)
    # Where the compiler merged the access with others (accesslines.py): the other lines it
    # may be on, as (line, text), and why its line is uncertain.
    also: list[tuple[int, str]] = field(default_factory=list)
    other_also: list[tuple[int, str]] = field(default_factory=list)
    line_notes: list[Msg] = field(default_factory=list)


@dataclass
class OutputCheck:
    """How one output of one case compared with the reference."""

    name: str
    shape: list[int]
    max_abs_error: float | None
    max_rel_error: float | None
    mismatches: int
    size: int
    nan_count: int
    inf_count: int
    passed: bool
    first_got: list[float]
    first_expected: list[float]
    # The first wrong elements as (index, got, expected): where to start looking.
    first_wrong: list[tuple[int, float, float]] = field(default_factory=list)
    # Per element: 0 ok, 1 close to the tolerance, 2 wrong, 3 NaN/Inf (for the error map).
    error_map: list[int] = field(default_factory=list)
    # The map's own shape: [cells] for a vector, [rows, cols] for a matrix (an output of
    # more dimensions is a matrix of its last one), and how many elements a cell stands
    # for along each (the worst of them shown).
    map_shape: list[int] = field(default_factory=list)
    map_step: list[int] = field(default_factory=list)


@dataclass
class SharedPicture:
    """Which simulated thread of block 0 wrote each element of one shared array (-1:
    nobody), in the launch that used it: its block and grid say what a thread id is."""

    name: str  # the array's variable in the learner's kernel ("" where its line does not say)
    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    shape: list[int]  # as allocated: [n], or [rows, cols]
    writers: list[int]
    number: int = 1  # its place among the launch's shared arrays (named so where `name` is "")
    file: str = ""  # where it was allocated
    line: int = 0


@dataclass
class Picture:
    """Which simulated thread wrote each element (-1: nobody), for one case."""

    block: tuple[int, int, int]  # threads per block of the launch that wrote the outputs (the last)
    grid: tuple[int, int, int]
    outputs: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)  # name -> (shape, writers)
    shared: list[SharedPicture] = field(default_factory=list)  # block 0's shared arrays, per launch


@dataclass
class CaseResult:
    name: str
    params: dict
    outputs: list[OutputCheck]
    invariants: list[tuple[dict[str, str] | str, bool, dict[str, str] | str]]  # label, ok, detail
    nondeterministic: bool = False  # repeated GPU runs disagreed: a race
    order_dependent: bool = False  # the simulator's forward and reverse orders disagreed
    passed: bool = False
    label: dict[str, str] = field(default_factory=dict)  # the case's name per language
    ran: bool = True  # False: no outputs came back (the run stopped before or inside this case)
    stopped: bool = False  # it ran, and the simulator stopped it at a finding that names it
    picture: Picture | None = None


@dataclass
class LaunchAccess:
    """What the threads of one launch did, counted by the simulator in the first repeat:
    per counter (global/shared reads/writes, in accesses and bytes) the least and most
    of any one thread and the total, and per buffer it wrote the most writes it made to one element.
    The per-thread table serves the judging (access budgets) and stays out of --json
    and of the verdict cache: it is large."""

    case: str
    kernel: str
    threads: int
    least: dict[str, int] = field(default_factory=dict)
    most: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    # buffer (output or scratch) -> the most writes this launch made to one element of it
    writes_per_element: dict[str, int] = field(default_factory=dict)
    per_thread: object = field(default=None, metadata={"json": False})  # numpy (threads, counters)
    index: int = field(default=-1, metadata={"json": False})  # the case's index in the plan
    busiest_element: dict[str, int] = field(default_factory=dict)  # buffer -> the element written most
    # How it worked (kernelrun.METHODS, those not 0): warp operations, async copies, barriers,
    # mbarriers, accesses by width; and per buffer its plain loads, stores and async copies' reads.
    methods: dict[str, int] = field(default_factory=dict)
    buffers: dict[str, dict[str, int]] = field(default_factory=dict)
    launch: int = field(default=0, metadata={"json": False})  # its number in the case


@dataclass
class LineTraffic:
    """What one line's global or shared loads (or stores) would cost a GPU, priced by the
    simulator over the warp-wide requests that line made (the first repeat of every case):
    global memory in 32-byte sectors, shared memory in wavefronts. `ideal` is the least
    the same bytes could cost; for shared memory, every wavefront past it is a bank conflict."""

    kernel: str
    file: str
    line: int
    space: str  # global | shared
    access: str  # load | store
    requests: int
    cost: int  # sectors (global) or wavefronts (shared)
    ideal: int
    per_request: float  # cost / requests
    ideal_per_request: float
    conflicts_per_request: float = 0.0  # shared: (cost - ideal) / requests
    source: str = ""  # the text of that line
    also: list[int] = field(default_factory=list)  # other lines whose accesses the compiler merged with it
    approximate: bool = False  # the compiler's nearest line, which makes no such access

    @property
    def label(self) -> str:
        """The line as the report says it: 57, 138/140 (merged: one of them), ≈135 (about)."""
        return ("≈" if self.approximate else "") + "/".join(str(n) for n in (self.line, *self.also))


# ---------------------------------------------------------------------------
# What the GPU build says without running it (compile/ptx.py and compile/occupancy.py
# compute these; the `ptx` and `occupancy` devices of a DeviceResult hold them)
# ---------------------------------------------------------------------------

WIDTHS = ("v8", "v4", "v2", "scalar")  # PTX vector widths, widest first


@dataclass
class Access:
    """One kind of access (loads or stores) of one kernel: counts per vector width
    ("v4", "v2", "scalar") and the widest in bits (0: none)."""

    counts: dict[str, int] = field(default_factory=dict)
    widest_bits: int = 0

    def add(self, lanes: int, bits: int) -> None:
        key = f"v{lanes}" if lanes > 1 else "scalar"
        self.counts[key] = self.counts.get(key, 0) + 1
        self.widest_bits = max(self.widest_bits, lanes * bits)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def widest_lanes(self) -> int:
        return max((int(k[1:]) if k != "scalar" else 1 for k, n in self.counts.items() if n), default=0)

    def summary(self) -> str:
        """'2 v4 + 3 scalar' (in counts' order, widest first)."""
        shown = [f"{self.counts[w]} {w}" for w in WIDTHS if self.counts.get(w)]
        return " + ".join(shown) or "0"


@dataclass
class KernelPtx:
    """One kernel's global accesses in the PTX (its narrowest instantiation)."""

    kernel: str
    entry: str  # the PTX entry's name
    instances: int  # how many instantiations (case shapes) were compiled
    loads: Access = field(default_factory=Access)
    stores: Access = field(default_factory=Access)



@dataclass
class Occupancy:
    """One kernel at one block size on one architecture: the blocks per SM each resource
    allows (`limits`), the fewest of them, and what that makes of the SM's warp slots.
    `registers` None: not known, and then the register limit was not checked (`limits`
    has no "registers")."""

    kernel: str
    block: int  # threads per block
    registers: int | None  # per thread
    shared: int  # static shared memory per block, bytes
    arch: str
    warps_per_block: int = 0
    limits: dict[str, int] = field(default_factory=dict)
    blocks_per_sm: int = 0
    warps_per_sm: int = 0
    max_warps_per_sm: int = 0
    occupancy: float = 0.0  # warps_per_sm / max_warps_per_sm
    limiting: list[str] = field(default_factory=list)  # the resources that give blocks_per_sm
    registers_per_block: int = 0  # allocated: per warp rounded up to the unit, times its warps
    shared_per_block: int = 0  # allocated: with the reserved KB, rounded up to the unit
    spills: int = 0  # bytes the compiler spilled to local memory (stores), for the report

    @property
    def percent(self) -> float:
        return 100.0 * self.occupancy


@dataclass
class DeviceResult:
    device: str  # cpu, gpu, sim, ptx (the GPU build's PTX, read without running it), or occupancy
    status: Status
    reasons: list[Msg] = field(default_factory=list)  # why it failed, or did not run
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    cases: list[CaseResult] = field(default_factory=list)
    repeats: int = 1
    seconds: float = 0.0
    device_name: str = ""
    findings: list[Finding] | None = None  # None: no tool looked (racecheck, the simulator's checks)
    tools: Msg | None = None  # which tools ran, or why none did
    output: str = ""  # a crash's own words (a traceback, the runtime's message), shown as they came
    access: list[LaunchAccess] = field(default_factory=list)  # the simulator: what each launch's threads did
    traffic: list[LineTraffic] = field(default_factory=list)  # the simulator: what each line would cost a GPU
    # How those counts are defined, and how they compared with Nsight Compute on a GPU (ncu.counted)
    traffic_counted: Msg | None = None
    ptx: list = field(default_factory=list)  # the `ptx` device: each kernel's global accesses (KernelPtx)
    occupancy: list = field(default_factory=list)  # the `occupancy` device: Occupancy per kernel, block

    def explain(self, key: str, **values) -> None:
        self.reasons.append(Msg(key, values))

    @property
    def reason(self) -> str:
        """The reasons in English (JSON, logs)."""
        return "; ".join(m.text("en") for m in self.reasons)


@dataclass
class Speed:
    """A part timed on a GPU: information, not a verdict. `measured` False: `reason`
    says why not (no GPU here, the kernels did not pass...), and no number is given."""

    measured: bool
    reason: Msg | None = None
    case: str = ""  # the timed case's name (the reference's speed_case)
    warmup: int = 0  # launches before the timed ones
    launches: int = 0  # timed launches
    median_us: float | None = None
    min_us: float | None = None
    q1_us: float | None = None  # the middle half of the timed runs: from the first quartile
    q3_us: float | None = None  # to the third (the spread the median is stated with)
    flush_bytes: int = 0  # written before each timed run, untimed, to push its data out of the L2 cache
    bytes: int | None = None  # what the manifest declares one run moves
    flops: int | None = None
    gb_per_s: float | None = None  # bytes / median time, 1e9 bytes per second
    gflop_per_s: float | None = None
    peak_gb_per_s: float | None = None  # the GPU's own numbers (speed.PEAKS), None: not known
    peak_gflop_per_s: float | None = None
    percent_of_peak_bandwidth: float | None = None
    percent_of_peak_flops: float | None = None
    peak_source: str = ""
    precision: str = "fp32"  # what the FLOPs are counted in, and the peak they are set against
    gpu: str = ""
    ratio_to_fastest: float | None = None  # with several timed parts: this median over the fastest's
    method: Msg | None = None
    # The verdict on speed, where the manifest asks for one (max_ratio_to_solution): the
    # reference solution's median on the same case in the same run, and this over that.
    solution_median_us: float | None = None
    solution_min_us: float | None = None
    solution_q1_us: float | None = None
    solution_q3_us: float | None = None
    # How the solution was timed: "alternated" (in the learner's launcher, its runs between
    # the learner's), "own_launcher" (a launcher of its own, run after the learner's), or
    # "same_run" (--solutions: the learner's kernels are the solution's, one set of times).
    solution_timing: str = ""
    ratio_to_solution: float | None = None
    max_ratio_to_solution: float | None = None
    too_slow: bool = False


@dataclass
class PartResult:
    id: str
    status: Status
    kernels: dict[str, DeviceResult]  # the learner's kernels launched directly, per device
    atol: float
    rtol: float
    graph: dict[str, DeviceResult] = field(default_factory=dict)  # op puzzles: the op through a MAX graph
    speed: Speed | None = None  # [parts.speed]: timed on a GPU

    def all_devices(self) -> list[DeviceResult]:
        return [*self.kernels.values(), *self.graph.values()]


@dataclass
class Number:
    """A number in the learner's code: as written, worked out (None: it could not be), and the
    number the puzzle's text gives for it (workbook/judging/sourcenumbers.py)."""

    name: str
    written: str
    value: int | None
    expected: int

    @property
    def agrees(self) -> bool | None:
        return None if self.value is None else self.value == self.expected


@dataclass
class SourceNumber:
    """A place in the learner's file where the text fixes numbers (line 0: not found there)."""

    file: str
    line: int
    source: str
    what: dict[str, str]  # what the numbers are, per language
    numbers: list[Number] = field(default_factory=list)


@dataclass
class PuzzleResult:
    id: str
    title: str
    status: Status
    kind: str = "kernel"
    parts: list[PartResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compiler_output: str = ""  # raw compiler text when no diagnostic could be parsed
    problem: Msg | None = None  # a failure that is not in the learner's code (a compile timeout, say)
    seed: int = 0
    solutions: bool = False
    quick: bool = False  # stopped after the first stage
    seconds: float = 0.0
    first_verdict: float | None = None  # seconds until the first device's verdict
    cached: bool = False  # this verdict was kept from a check with the very same inputs (verdicts.py)
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage (build.host, run.sim, ...)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU-seconds per program run (mojo build, launcher, ...)
    budget_spent: Msg | None = None  # the check's total budget ran out: what was left was not run
    # Nothing here judged the code (`compiled`): the numbers its text fixes, read from the source.
    source_numbers: list[SourceNumber] = field(default_factory=list)

    def device_statuses(self) -> dict[str, Status]:
        """Per device over all parts and stages: its worst status ("cpu", "gpu", "sim")."""
        merged: dict[str, list[Status]] = {}
        for part in self.parts:
            for dev in part.all_devices():
                merged.setdefault(dev.device, []).append(dev.status)
        return {name: verdict(statuses) for name, statuses in merged.items()}

    def max_abs_error(self) -> float | None:
        errors = [d.max_abs_error for p in self.parts for d in p.all_devices() if d.max_abs_error is not None]
        return max(errors) if errors else None


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------


def _plain(value):
    """Dataclasses, enums and messages as JSON values (messages: English text and key)."""
    if isinstance(value, Msg):
        return {"key": value.key, "text": value.text("en"),
                "values": {k: _plain(v) for k, v in value.values.items()}}
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if f.metadata.get("json", True)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_data(value):
    """Any result (a device's, a part's) as the JSON value --json writes for it: what two
    results are compared by, to say whether they differ."""
    return _plain(value)


def to_dict(result: PuzzleResult) -> dict:
    """The JSON form of a puzzle result (see the README's --json section)."""
    data = _plain(result)
    for part, raw in zip(result.parts, data["parts"]):
        for stage in ("kernels", "graph"):
            for name, dev in getattr(part, stage).items():
                raw[stage][name]["reason"] = dev.reason
    data["devices"] = {name: status.value for name, status in result.device_statuses().items()}
    data["max_abs_error"] = result.max_abs_error()
    return data


def document(**content) -> dict:
    """A --json document: the schema version first."""
    return {"schema": JSON_SCHEMA, **content}


# ---------------------------------------------------------------------------
# From JSON: the verdict cache keeps results as JSON (data, never code: verdicts.py)
# ---------------------------------------------------------------------------


class Malformed(ValueError):
    """A JSON document that is not a result of this shape: where, and what was wrong."""


def from_dict(data: dict) -> PuzzleResult:
    """The inverse of `to_dict`: a result read back renders as the one computed. Every
    value is checked against its field's type (a field missing takes its default; what
    to_dict derives, `devices` and `reason`, is computed again); anything else raises
    Malformed, never another exception."""
    try:
        return _reader(PuzzleResult)(data, "result")
    except Malformed:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise Malformed(f"result: {exc}") from None


# Fields typed as a bare `list` of records (the `ptx` and `occupancy` devices'): their element type.
_ELEMENTS: dict[tuple[type, str], type] = {(DeviceResult, "ptx"): KernelPtx, (DeviceResult, "occupancy"): Occupancy}


_PLAIN = (int, float, str, bool)


@functools.cache
def _reader(tp):
    """A function (value, where) -> the value as `tp`, or Malformed; made once per type (a kept
    verdict holds thousands of values, read on every warm check)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        nullable = type(None) in args
        options = [_reader(a) for a in args if a is not type(None)]

        def union(value, where):
            if value is None and nullable:
                return None
            for option in options:
                try:
                    return option(value, where)
                except Malformed:
                    continue
            raise Malformed(f"{where}: {type(value).__name__} is none of {tp}")
        return union
    if tp is Msg:
        return _message
    if isinstance(tp, type) and issubclass(tp, Enum):
        def enum(value, where):
            try:
                return tp(value)
            except ValueError:
                raise Malformed(f"{where}: {value!r} is no {tp.__name__}") from None
        return enum
    if isinstance(tp, type) and is_dataclass(tp):
        return lambda value, where: _record(tp, value, where)
    if origin is list or tp is list:
        if not args:
            return lambda value, where: list(_expect(value, list, where))
        if args[0] in _PLAIN:
            return lambda value, where: _plain_list(args[0], _expect(value, list, where), where)
        item = _reader(args[0])
        return lambda value, where: [item(v, f"{where}[]") for v in _expect(value, list, where)]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _reader(args[0])
            return lambda value, where: tuple(item(v, f"{where}[]") for v in _expect(value, list, where))
        items = [_reader(a) for a in args]

        def fixed(value, where):
            if len(_expect(value, list, where)) != len(items):
                raise Malformed(f"{where}: {len(value)} values, not {len(items)}")
            return tuple(read(v, f"{where}[{i}]") for i, (read, v) in enumerate(zip(items, value)))
        return fixed
    if origin is dict or tp is dict:
        if not args:
            return lambda value, where: _expect(value, dict, where)
        number_keys, item = args[0] is int, _reader(args[1])
        return lambda value, where: {(_number_key(k, where) if number_keys else k): item(v, f"{where}.{k}")
                                     for k, v in _expect(value, dict, where).items()}
    if tp is float:
        def number(value, where):
            if type(value) is float or type(value) is int:
                return float(value)
            raise Malformed(f"{where}: {value!r} is not a number")
        return number
    if tp in (int, str, bool):
        def plain(value, where):
            if type(value) is not tp:
                raise Malformed(f"{where}: {value!r} is not {tp.__name__}")
            return value
        return plain
    if tp is object:  # never kept (the per-thread table): only its absence is read back
        return lambda value, where: None
    raise Malformed(f"no reader for {tp}")


def _plain_list(kind: type, value: list, where: str) -> list:
    if kind is float:
        if all(type(v) is float or type(v) is int for v in value):
            return [float(v) for v in value]
    elif all(type(v) is kind for v in value):
        return list(value)
    raise Malformed(f"{where}: not a list of {kind.__name__}")


def _expect(value, kind: type, where: str):
    if not isinstance(value, kind):
        raise Malformed(f"{where}: {type(value).__name__}, not {kind.__name__}")
    return value


def _number_key(key: str, where: str) -> int:
    """A dict key as JSON wrote it (always text), a number again."""
    try:
        return int(key)
    except ValueError:
        raise Malformed(f"{where}: key {key!r} is not a number") from None


@functools.cache
def _fields(cls: type) -> tuple:
    """Per field of a record: its name, its reader, and whether it may be left out."""
    hints, special = typing.get_type_hints(cls), _ELEMENTS
    found = []
    for f in fields(cls):
        if not f.init:
            continue
        element = special.get((cls, f.name))
        found.append((f.name, _reader(list[element] if element is not None else hints[f.name]),
                      f.default is not MISSING or f.default_factory is not MISSING))
    return tuple(found)


def _record(cls: type, value, where: str):
    _expect(value, dict, where)
    kwargs = {}
    for name, read, optional in _fields(cls):
        if name in value:
            kwargs[name] = read(value[name], f"{where}.{name}")
        elif not optional:
            raise Malformed(f"{where}.{name}: missing")
    return cls(**kwargs)


def _message(value, where: str) -> Msg:
    _expect(value, dict, where)
    if not isinstance(value.get("key"), str) or not isinstance(value.get("values", {}), dict):
        raise Malformed(f"{where}: not a message")
    return Msg(value["key"], {str(k): _message_value(v, f"{where}.{k}") for k, v in value.get("values", {}).items()})


def _message_value(value, where: str):
    """A message's value: a message again where it was one, else plain JSON as it was."""
    if isinstance(value, dict):
        if set(value) == {"key", "text", "values"}:
            return _message(value, where)
        return {str(k): _message_value(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_message_value(v, where) for v in value]
    return value
