"""The verdict cache: a puzzle checked again with nothing changed gives its verdict at once.

A verdict is reused only when every input of it is the same: the learner's files
(the very bytes that were built: hashed as build.sources reads them), every file
of the puzzle and its solution, the workbook's own code, the toolchain, the
seed, the options, the devices here (the GPU, compute-sanitizer) and every
setting that changes a run. Anything that may come out otherwise next time (a
crash, a timeout, a problem of the machine) is never kept. The report says when
a verdict came from here; `--no-cache` runs afresh.

A kept verdict is data, never code: JSON (results.to_dict, read back by
results.from_dict), in the user's own cache folder (cachetrust.py), read only if
it is ours, a regular file, of a sane size, of this format and for this very key.
Anything else (a pickle, a forged file, a damaged one) is a verdict computed
again, never a traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
from pathlib import Path

from ..core import cachetrust, settings, toolchain
from ..core.results import Malformed, PuzzleResult, Status, from_dict, to_dict
from ..course.manifest import Puzzle

KEPT = (Status.PASS, Status.FAIL, Status.COMPILE_ERROR, Status.COMPILED, Status.NOT_STARTED)
PACKAGE = settings.PACKAGE  # every layer of it
# Settings that change what a run does or finds (not where it shows it).
SETTINGS = ("WORKBOOK_GPU_TARGET", "WORKBOOK_NO_GPU", "WORKBOOK_RUN_TIMEOUT", "WORKBOOK_LOAD_TIMEOUT",
            "WORKBOOK_COMPILE_TIMEOUT", "WORKBOOK_CHECK_BUDGET", "WORKBOOK_SIM_STRETCH", "WORKBOOK_SIM_WATCH",
            "WORKBOOK_SIM_FENCE",
            "WORKBOOK_MEMORY_LIMIT_MB", "WORKBOOK_FILE_LIMIT_MB", "WORKBOOK_PROCESS_LIMIT", "CUDA_HOME", "PATH")


@functools.lru_cache(maxsize=1)
def workbook_digest() -> str:
    """The workbook's own code (its Python, Mojo and C): another version may judge otherwise."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".mojo", ".c", ".h", ".toml") and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
        if folder.is_dir() else []


def key(puzzle: Puzzle, learner: dict[str, bytes], options, seed: int, devices: str) -> str:
    """Everything a verdict depends on, hashed. `learner`: the learner's files as built;
    `options`: engine.Options; `devices`: what runs here (the GPU and its tools)."""
    h = hashlib.sha256()
    h.update(workbook_digest().encode() + toolchain.toolchain_id().encode() + devices.encode())
    for name in SETTINGS:
        h.update(f"{name}={os.environ.get(name, '')}\0".encode())
    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options) if f.name != "cache"}
    h.update(repr(sorted(fields.items())).encode() + f"seed={seed}".encode())
    for folder in (puzzle.dir, puzzle.solution_dir):
        for path in _files(folder):
            relative = path.relative_to(folder).as_posix()
            if folder == puzzle.dir and relative in puzzle.edit:
                continue  # the learner's files are hashed as they were built, below
            h.update(f"{folder.name}/{relative}\0".encode() + path.read_bytes())
    for name in sorted(learner):
        h.update(name.encode() + b"\0" + learner[name] + b"\0")
    return h.hexdigest()[:32]


FORMAT = "workbook-verdict/1"


def _path(digest: str) -> Path:
    return settings.cache_dir() / "verdicts" / f"{digest}.json"


def get(digest: str) -> PuzzleResult | None:
    path = _path(digest)
    raw = cachetrust.read(path)
    if raw is None:
        return None
    try:
        kept = json.loads(raw)
        if not isinstance(kept, dict) or kept.get("format") != FORMAT or kept.get("key") != digest:
            raise Malformed("not a verdict of this format, or of another key")
        result = from_dict(kept["result"])
    except (ValueError, KeyError, RecursionError):  # Malformed and json's errors are ValueErrors
        cachetrust.ignore(path, "malformed verdict")
        return None
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)  # its last use: prune.py keeps what was used this month
    result.cached = True
    return result


def _lean(result: PuzzleResult) -> PuzzleResult:
    """A copy without the simulator's per-thread counts: they served the judging (access
    budgets), which a kept verdict never repeats, and they were nearly all of its bytes
    (89 MB for p30's seeds, against under 1 MB without: read back on every warm check)."""
    parts = []
    for part in result.parts:
        kernels = {name: dataclasses.replace(dev, access=[dataclasses.replace(a, per_thread=None) for a in dev.access])
                   for name, dev in part.kernels.items()}
        parts.append(dataclasses.replace(part, kernels=kernels))
    return dataclasses.replace(result, parts=parts)


def put(digest: str, result: PuzzleResult) -> None:
    if result.status not in KEPT or result.problem is not None or result.budget_spent is not None:
        return
    path = _path(digest)
    try:
        text = json.dumps({"format": FORMAT, "key": digest, "result": to_dict(_lean(result))})
        cachetrust.make_dirs(path.parent)
        cachetrust.write(path, text.encode())
    except (OSError, TypeError, ValueError):
        pass  # a verdict not kept is only a verdict computed again
