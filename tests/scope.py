"""How much of the curriculum's kernels a test run checks.

Every wrong and right kernel is a real compile and a real run (10 to 40 s each on two
cores), and there are over 500: all of them take longer than CI's 90 minutes. With
WORKBOOK_TEST_SCOPE=ci (.ci/run sets it), a run checks every kernel the commit touched
(its folder, or its puzzle's files, changed since the commit's first parent) and, of the
rest, a few per puzzle, drawn with the commit's hash as the seed: the same commit draws
the same kernels (a failure repeats), and the next commit draws others, so over the
commits every kernel comes round. Without it, everything runs (`pytest` on a machine
with time, and `workbook author verify --run` on the GPU host)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def ci() -> bool:
    return os.environ.get("WORKBOOK_TEST_SCOPE", "") == "ci"


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def changed() -> set[str]:
    """The paths the commit changed, against its first parent (a merge: the whole branch)."""
    return {line.strip() for line in _git("diff", "--name-only", "HEAD~1", "HEAD").splitlines() if line.strip()}


def touched(kernel, paths: set[str]) -> bool:
    """Whether a commit that changed `paths` may change this kernel's verdict: its own folder
    or its puzzle's manifest, reference or solution."""
    own = kernel.dir.resolve().relative_to(REPO).as_posix() + "/"
    puzzle = (f"puzzles/{kernel.puzzle}/", f"solutions/{kernel.puzzle}/")
    return any(p.startswith(own) or p.startswith(puzzle) for p in paths)


def sample(kernels: list, per_puzzle: int) -> list:
    """Every touched kernel, and `per_puzzle` of each puzzle's others, drawn with HEAD's hash."""
    seed = _git("rev-parse", "HEAD").strip() or "no-git"
    rng = random.Random(seed)
    paths = changed()
    chosen = {k.id for k in kernels if touched(k, paths)}
    by_puzzle: dict[str, list] = {}
    for k in kernels:
        if k.id not in chosen:
            by_puzzle.setdefault(k.puzzle, []).append(k)
    for rest in by_puzzle.values():
        chosen.update(k.id for k in rng.sample(rest, min(per_puzzle, len(rest))))
    return [k for k in kernels if k.id in chosen]
