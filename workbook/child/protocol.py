"""The files a child run and the workbook share: one definition for both sides.

A run gets a folder of its own. The workbook writes the request and the
inputs there (the child's to read); what the child hands back (its phase as it
goes, its outputs, its result, its log) goes through descriptors the workbook
opened before it started (workbook/child/channel.py), never through the folder, which
the child can write. workbook/mojo/wbrun.h names the same things for the
launchers (WORKBOOK_FDS), and falls back to these file names in the folder for
a launcher run by hand; a folder is then read the safe way (channel.read_file).
"""

from __future__ import annotations

import json
import time
from enum import Enum
from pathlib import Path

from .channel import Sink, file_mtime, read_file

REQUEST = "request.json"  # what a graph worker should do
INPUTS_NPZ = "inputs.npz"  # a graph worker's inputs: "<case>/<name>"
INPUTS_BIN = "inputs.bin"  # a launcher's inputs, at the plan's offsets
OUTPUTS_BIN = "outputs.bin"  # a launcher's outputs, in plan order
WRITERS_BIN = "writers.bin"  # the simulator's maps of who wrote what
COUNTERS_BIN = "counters.bin"  # the simulator's counts: accesses per thread, writes per element
RESULT = "result.json"  # {"status": ..., "message": ..., ...}; its absence means the child died
PHASE = "phase"  # "loading", "waiting", "running K N", "done"

# A launcher's channel, by the names WORKBOOK_FDS gives them (wbrun.h), and its files by name
# (a launcher run by hand).
LAUNCHER_FILES = {"outputs": OUTPUTS_BIN, "writers": WRITERS_BIN, "counters": COUNTERS_BIN, "result": RESULT,
                  "phase": PHASE}

# A graph worker's control pipe (workbook/run/graphrun.py), one byte each: the first process's
# graphs are in its `built` descriptor; they are approved, build them; run them.
BUILT, BUILD, RUN = b"B", b"C", b"R"

RESULT_CAP = 8 << 20  # result.json: the simulator's is at most 1 MB; times of many timed launches
PHASE_CAP = 256

# Exit code of a simulated kernel that used the simulator outside a launch.
SIM_MISUSE = 70

Source = Path | Sink  # a run folder (a file in it, read the safe way), or a channel's sink


class Status(str, Enum):
    OK = "ok"
    FATAL = "fatal"  # the simulator stopped a launch (a barrier some threads never reach)
    COMPILE_ERROR = "compile_error"
    ERROR = "error"  # the child caught an error and said what it was


class Phase(str, Enum):
    LOADING = "loading"  # building the graph (slow when cold)
    CHECKING = "checking"  # the graphs, as MAX read them, are with the workbook, which approves them
    WAITING = "waiting"  # built, held until the workbook says go (the op's kernels passed)
    RUNNING = "running"  # running the kernels (quick, unless they never end)
    DONE = "done"


def read(source: Source, name: str, cap: int) -> bytes | None:
    """What a child handed back as `name`, at most `cap` bytes: from its sink, or from the
    file of that name in a run folder (no link followed, nothing but a regular file)."""
    if isinstance(source, Sink):
        return source.read(cap)
    return read_file(source / name, cap)


def phase_text(phase: Phase, *values: int) -> bytes:
    return " ".join([phase.value, *map(str, values)]).encode()


def read_phase(source: Source) -> tuple[str, list[int], float]:
    """(phase, its numbers, when it began); ("starting", [], 0) before the child wrote any."""
    raw = read(source, PHASE, PHASE_CAP)
    stamp = source.mtime() if isinstance(source, Sink) else file_mtime(source / PHASE)
    try:
        words = (raw or b"").decode("ascii").split()
        return words[0], [int(w) for w in words[1:] if w.isdigit()], stamp
    except (UnicodeDecodeError, IndexError):
        return "starting", [], 0.0


def read_result(source: Source) -> dict | None:
    raw = read(source, RESULT, RESULT_CAP)
    try:
        found = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def since(stamp: float) -> float:
    return time.time() - stamp if stamp else 0.0

