"""The files a child run and the workbook share: one definition for both sides.

A run gets a folder of its own. The workbook writes the request and the
inputs; the child (a generated Mojo launcher, or `python -m workbook.worker`
for a MAX graph) writes its phase as it goes, its outputs, and a result.
workbook/mojo/wbio.c and wbsim.c write the same names from the launchers.
"""

from __future__ import annotations

import json
import time
from enum import Enum
from pathlib import Path

REQUEST = "request.json"  # what a graph worker should do
INPUTS_NPZ = "inputs.npz"  # a graph worker's inputs: "<case>/<name>"
OUTPUTS_NPZ = "outputs.npz"  # a graph worker's outputs: "<case>/<repeat>/<k>"
INPUTS_BIN = "inputs.bin"  # a launcher's inputs, at the plan's offsets
OUTPUTS_BIN = "outputs.bin"  # a launcher's outputs, in plan order
WRITERS_BIN = "writers.bin"  # the simulator's maps of who wrote what
COUNTERS_BIN = "counters.bin"  # the simulator's counts: accesses per thread, writes per element
RESULT = "result.json"  # {"status": ..., "message": ..., ...}; its absence means the child died
PHASE = "phase"  # "loading", "waiting", "running K N", "done"
GO = "go"  # written by the workbook: a graph worker holding its built graphs may run them
LOG = "log.txt"  # the child's stdout and stderr

# Exit code of a simulated kernel that used the simulator outside a launch.
SIM_MISUSE = 70


class Status(str, Enum):
    OK = "ok"
    FATAL = "fatal"  # the simulator stopped a launch (a barrier some threads never reach)
    COMPILE_ERROR = "compile_error"
    ERROR = "error"  # the child caught an error and said what it was


class Phase(str, Enum):
    LOADING = "loading"  # building the graph (slow when cold)
    WAITING = "waiting"  # built, held until the workbook says go (the op's kernels passed)
    RUNNING = "running"  # running the kernels (quick, unless they never end)
    DONE = "done"


def write_phase(folder: Path, phase: Phase, *values: int) -> None:
    (folder / PHASE).write_text(" ".join([phase.value, *map(str, values)]))


def read_phase(folder: Path) -> tuple[str, list[int], float]:
    """(phase, its numbers, when it began); ("starting", [], 0) before the child wrote any."""
    path = folder / PHASE
    try:
        words = path.read_text().split()
        return words[0], [int(w) for w in words[1:] if w.isdigit()], path.stat().st_mtime
    except (OSError, IndexError, ValueError):
        return "starting", [], 0.0


def write_result(folder: Path, status: Status, message: str = "", **extra) -> None:
    (folder / RESULT).write_text(json.dumps({"status": status.value, "message": message, **extra}))


def read_result(folder: Path) -> dict | None:
    try:
        return json.loads((folder / RESULT).read_text())
    except (OSError, ValueError):
        return None


def since(stamp: float) -> float:
    return time.time() - stamp if stamp else 0.0
