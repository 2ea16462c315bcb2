"""Running a built launcher on one device, and reading back what it left.

The launcher is a child process (workbook/processes.py) in a folder of its
own (workbook/protocol.py): inputs.bin in, outputs.bin, writers.bin and
result.json out. Nothing it does can hang or crash the workbook: a crash, a
fault or an endless loop becomes a status.
"""

from __future__ import annotations

import shutil
import signal
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import protocol, settings
from .i18n import Msg, msg
from .launcher import Plan, read_outputs
from .processes import Children

SIGNALS = {signal.SIGSEGV: "SIGSEGV", signal.SIGBUS: "SIGBUS", signal.SIGABRT: "SIGABRT", signal.SIGFPE: "SIGFPE",
           signal.SIGILL: "SIGILL", signal.SIGKILL: "SIGKILL", signal.SIGALRM: "SIGALRM"}


@dataclass
class KernelRun:
    """What came back from one launcher run."""

    status: str  # ok | fatal | crash | timeout | cancelled
    message: Msg | None = None
    output: str = ""  # the child's own words, for a crash
    outputs: dict[int, list[list[np.ndarray]]] = field(default_factory=dict)  # case -> repeats -> outputs
    findings: list[dict] = field(default_factory=list)  # the simulator's (and a faulting read), as JSON
    writers: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (case, output) -> thread ids
    shared: dict[int, list[tuple[int, np.ndarray]]] = field(default_factory=dict)  # case -> (allocation, ids)
    seconds: float = 0.0


def run(children: Children, binary: Path, plan: Plan, inputs: Path, mode: str, repeats: int,
        cases: list[int], prefix: list[str] | None = None, env: dict[str, str] | None = None,
        limit: float | None = None, tick=None) -> KernelRun:
    """Run `binary` in `mode` (gpu, cpu, sim) on `cases`, `repeats` times each.

    A read outside memory ends the process at that read (see wbsim): the case it
    happened in is reported, and the launcher runs again for the cases after it,
    so one faulting case does not hide the others."""
    total = KernelRun("ok")
    remaining = list(cases)
    while remaining:
        got, faulted = _run_once(children, binary, plan, inputs, mode, repeats, remaining, prefix, env, limit, tick)
        total.seconds += got.seconds
        total.outputs.update(got.outputs)
        total.findings += got.findings
        total.writers.update(got.writers)
        total.shared.update(got.shared)
        if got.status not in ("ok", "fatal") or faulted is None:
            total.status = got.status if got.status != "ok" else total.status
            total.message, total.output = got.message or total.message, got.output or total.output
            return total
        total.status = "fatal"
        remaining = remaining[remaining.index(faulted) + 1:] if faulted in remaining else []
    return total


def _run_once(children: Children, binary: Path, plan: Plan, inputs: Path, mode: str, repeats: int,
              cases: list[int], prefix, env, limit, tick) -> tuple[KernelRun, int | None]:
    """One process over `cases`; the case a faulting read stopped it in, if one did."""
    folder = Path(tempfile.mkdtemp(prefix=f"workbook-{plan.puzzle.id}-{mode}-"))
    try:
        (folder / protocol.INPUTS_BIN).symlink_to(inputs)
        limit = limit or settings.run_timeout()
        argv = [*(prefix or []), str(binary), str(folder), mode, str(repeats), str(int(limit) + 1),
                ",".join(map(str, cases))]
        child = children.start(argv, log=folder / protocol.LOG, env=env, cwd=folder, learner=True)
        outcome = children.wait(child, limit, (lambda: tick(folder)) if tick else None)
        if outcome.cancelled:
            return KernelRun("cancelled", seconds=outcome.seconds), None
        result = protocol.read_result(folder)
        log = child.log_text()
        if outcome.timed_out or (result is None and outcome.returncode == -signal.SIGALRM):
            return KernelRun("timeout", msg("run.timeout", seconds=int(limit)), seconds=outcome.seconds), None
        fault = _fault(folder, cases) if outcome.returncode in (FAULT_EXIT, -signal.SIGSEGV, -signal.SIGBUS) \
            else None
        if fault is not None:  # a read outside memory, stopped at that read
            got = KernelRun("fatal", seconds=outcome.seconds, findings=[fault])
            done = cases[:cases.index(fault["case"])] if fault["case"] in cases else []
            got.outputs = read_outputs(plan, folder / protocol.OUTPUTS_BIN, done, repeats)
            _read_writers(folder / protocol.WRITERS_BIN, got)
            return got, fault["case"]
        if result is None or outcome.limit is not None:
            return KernelRun("crash", outcome.limit or _death(outcome.returncode, log), _tail(log),
                             seconds=outcome.seconds), None
        got = KernelRun(result.get("status", "ok"), seconds=outcome.seconds)
        got.outputs = read_outputs(plan, folder / protocol.OUTPUTS_BIN, cases, repeats)
        got.findings = result.get("findings", [])
        _read_writers(folder / protocol.WRITERS_BIN, got)
        return got, None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


FAULT_EXIT = 71  # wbsim's fault handler: the process read outside memory


def _fault(folder: Path, cases: list[int]) -> dict | None:
    """What fault.bin says (the faulting address and simulated thread), placed in the
    input whose guard page it hit: a read past the end of that input."""
    try:
        record = struct.unpack("<8q", (folder / "fault.bin").read_bytes()[:64])
    except (OSError, struct.error):
        return None
    _sig, address, thread, block = record[:4]
    _, numbers, _ = protocol.read_phase(folder)
    case = numbers[0] - 1 if numbers else (cases[0] if cases else -1)
    for line in (folder / "buffers.txt").read_text().splitlines() if (folder / "buffers.txt").exists() else []:
        name, start, count, elem = line.split()
        start, count, elem = int(start), int(count), int(elem)
        if start - 64 * elem <= address < start + count * elem + 4096:
            return {"case": case, "kind": "read_out_of_bounds", "buffer": name, "index": (address - start) // elem,
                    "size": count, "thread": thread, "block": block}
    return {"case": case, "kind": "read_out_of_bounds", "buffer": "", "index": -1, "size": 0,
            "thread": thread, "block": block}


def _death(code: int | None, log: str) -> Msg:
    if code == protocol.SIM_MISUSE:
        return msg("run.sim_misuse")
    if code is not None and code < 0:
        return msg("run.died_signal", signal=SIGNALS.get(-code, str(-code)))
    return msg("run.died_code", code=code)


def _tail(log: str) -> str:
    lines = [line for line in log.splitlines() if line.strip() and "Crashpad" not in line]
    return "\n".join(lines[-30:])


def _read_writers(path: Path, run: KernelRun) -> None:
    """writers.bin: records of four Int32 (kind, case, index, count), then count Int32."""
    try:
        raw = path.read_bytes()
    except OSError:
        return
    pos = 0
    while pos + 16 <= len(raw):
        kind, case, index, count = struct.unpack_from("<4i", raw, pos)
        pos += 16
        ids = np.frombuffer(raw, dtype=np.int32, count=count, offset=pos).copy()
        pos += 4 * count
        if kind == 1:
            run.writers[(case, index)] = ids
        else:
            run.shared.setdefault(case, []).append((index, ids))


