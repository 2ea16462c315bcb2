"""How long a puzzle's reference solution runs, so that an endless loop is stopped
after a limit that fits the puzzle, not a fixed minute.

The limit for running the kernels on the simulator or the CPU is FACTOR times the
solution's own run time on this machine, never less than FLOOR seconds. The
time comes from a record written whenever every case of a puzzle passed on that
device (the reference solution's run, or a learner's correct kernels). Without a
record, the engine measures the solution only if a run is still going after
FLOOR seconds, beside it, and the limit shrinks once the measure is in. Records
are per seed: a run that holds several seeds' cases (author verify) is given
that many times the time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..core import settings, toolchain
from ..course.manifest import Puzzle

FACTOR = 20
FLOOR = 5.0


def _path(puzzle: Puzzle, mode: str) -> Path:
    h = hashlib.sha256(toolchain.toolchain_id().encode())
    for path in sorted(puzzle.solution_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.name.encode() + path.read_bytes())
    return settings.cache_dir() / "timing" / f"{puzzle.id}-{mode}-{h.hexdigest()[:16]}.json"


def recorded(puzzle: Puzzle, mode: str) -> float | None:
    """The longest run of all the puzzle's cases that passed on `mode` (sim, cpu)."""
    try:
        value = json.loads(_path(puzzle, mode).read_text()).get("seconds")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def record(puzzle: Puzzle, mode: str, seconds: float) -> None:
    """Remember a passing run's time (the longest seen: a limit errs on the generous side)."""
    if seconds <= 0:
        return
    path = _path(puzzle, mode)
    seconds = max(seconds, recorded(puzzle, mode) or 0.0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps({"seconds": seconds}))
        os.replace(partial, path)
    except OSError:
        pass  # a cache that cannot be written only means the default limit next time


def limit_from(seconds: float | None, default: float) -> float:
    """FACTOR times the solution's time (at least FLOOR), or `default` if it is not known."""
    return default if seconds is None else max(FLOOR, FACTOR * seconds)
