"""Plain result records: computed once, rendered by report.py (Rich) or as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Status(str, Enum):
    """Statuses of a puzzle, a part or a device run, as the JSON report names them."""

    PASS = "pass"
    FAIL = "fail"
    NOT_STARTED = "not_started"
    COMPILE_ERROR = "compile_error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    NOT_RUN = "not_run"  # this device could not run it: see `reason`
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


def worst(statuses: list[Status]) -> Status:
    return min(statuses, key=SEVERITY.index) if statuses else Status.NOT_RUN


@dataclass
class Diagnostic:
    """One compiler error, pointed at the learner's file where possible."""

    file: str
    line: int
    column: int
    message: str
    source: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)
    notes: list[str] = field(default_factory=list)


@dataclass
class Finding:
    """One kind of error compute-sanitizer reported, in the learner's terms."""

    tool: str  # memcheck, racecheck, initcheck
    kind: str
    kernel: str
    file: str
    line: int | None
    count: int = 1
    detail: str = ""


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


@dataclass
class CaseResult:
    name: str
    params: dict
    outputs: list[OutputCheck]
    invariants: list[tuple[str | dict[str, str], bool, str]]  # label (str or per language), ok, detail
    nondeterministic: bool = False  # repeated runs disagreed: a race
    passed: bool = False
    label: dict[str, str] = field(default_factory=dict)  # the case's name per language, if the reference gives one


@dataclass
class DeviceResult:
    device: str  # "cpu" or "gpu"
    status: Status
    reason: str = ""  # why not_run / skipped / crash / timeout, in words
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    cases: list[CaseResult] = field(default_factory=list)
    repeats: int = 1
    seconds: float = 0.0
    device_name: str = ""
    sanitizer: list[Finding] | None = None  # None: not run under compute-sanitizer
    sanitizer_note: str = ""  # why it was not run, or which tools ran
    # The reason as message keys and values, so the report can say it in the learner's language.
    reason_keys: list[tuple[str, dict]] = field(default_factory=list)

    def explain(self, key: str, **values) -> None:
        """Add a reason: kept as a key for the report, and in English for JSON."""
        from .i18n import catalog

        self.reason_keys.append((key, values))
        text = catalog("en")[key].format(**values)
        self.reason = f"{self.reason}; {text}" if self.reason else text


@dataclass
class PartResult:
    id: str
    status: Status
    devices: dict[str, DeviceResult]
    atol: float
    rtol: float


@dataclass
class PuzzleResult:
    id: str
    title: str
    status: Status
    parts: list[PartResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compiler_output: str = ""  # raw compiler text when no diagnostic could be parsed
    seed: int = 0
    solutions: bool = False
    seconds: float = 0.0

    @property
    def devices(self) -> dict[str, DeviceResult]:
        """Per device, over all parts: the worst status and the largest error."""
        merged: dict[str, DeviceResult] = {}
        for part in self.parts:
            for name, result in part.devices.items():
                if name not in merged:
                    merged[name] = DeviceResult(name, result.status, result.reason,
                                                result.max_abs_error, result.max_rel_error,
                                                device_name=result.device_name)
                    continue
                m = merged[name]
                m.status = worst([m.status, result.status])
                m.reason = m.reason or result.reason
                m.max_abs_error = _max(m.max_abs_error, result.max_abs_error)
                m.max_rel_error = _max(m.max_rel_error, result.max_rel_error)
        return merged


def _max(a: float | None, b: float | None) -> float | None:
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None


def to_dict(result: PuzzleResult) -> dict:
    """The JSON form of a puzzle result (the `--json` schema). Statuses are str enums,
    so they serialize as their plain values ("pass", "compiled", ...)."""
    data = asdict(result)
    data["devices"] = {
        name: {k: v for k, v in asdict(d).items() if k not in ("cases", "repeats", "seconds", "reason_keys")}
        for name, d in result.devices.items()
    }
    return data
