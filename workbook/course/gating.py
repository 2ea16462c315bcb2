"""What a puzzle needs of a GPU, and whether the GPU here has it.

A puzzle whose needs this GPU lacks is never failed: its GPU parts are
`skipped` with the reason, and `list`, `doctor` and `run` say so.
"""

from __future__ import annotations

from ..core.i18n import Msg, msg
from ..core.toolchain import Gpu
from .manifest import Puzzle


def gate(puzzle: Puzzle, gpu: Gpu | None) -> Msg | None:
    """Why this GPU can't run the puzzle, or None when it can (or there is no GPU)."""
    if gpu is None:
        return None
    needs = puzzle.gpu
    if needs.vendor and gpu.vendor not in ("unknown", needs.vendor):
        return msg("gate.vendor", need=needs.vendor, have=gpu.vendor)
    cc = gpu.compute_capability
    if needs.min_compute_capability and cc is not None and cc < needs.min_compute_capability:
        return msg("gate.compute_capability", need=needs.min_compute_capability, name=gpu.name, have=cc)
    return None
