"""A graded run's hold on a GPU, so that runs beside it never change its verdict.

With 26 checks at once on one H200, correct kernels came back as `crash`; ten at
a time they passed (issue 38), and a grader can't tell such a crash from a real
one. So while a graded run uses a GPU (a kernel launcher, compute-sanitizer
around one, an op's MAX graph running its kernels) it holds a lease on it: one
of WORKBOOK_GPU_SHARE slots of that GPU (one by default: the GPU is the run's
alone). A slot is a lock file, locked with flock through the filelock package
(opened without following a link) in a folder only this user owns, so the
threads of one grader, several grader processes and Ray tasks on one node all
wait for each other; the kernel drops a dead holder's lock, however it died.
Compiles hold nothing, and go on side by side.

The GPUs are those this process may use: CUDA_VISIBLE_DEVICES's (indices or
UUIDs), else every GPU nvidia-smi lists. A run is given the GPU it holds as its
own CUDA_VISIBLE_DEVICES (by UUID where nvidia-smi names one), so on a machine
with two GPUs two graded runs go at once, one on each, and a lock names the
same GPU whichever way a grader selected it.

Learner runs (`run`, `check`) are not leased: one learner's commands share a
GPU through kernelrun's in-process bound, as before.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import filelock

from ..core import settings

WAIT = 0.05  # seconds between two rounds of tries while every slot is held
_turn = itertools.count()


class Busy(Exception):
    """No GPU slot came free before the deadline."""


@dataclass(frozen=True)
class Gpu:
    key: str  # what its lock files are named by (a UUID where one is known)
    visible: str  # what a run is given as CUDA_VISIBLE_DEVICES to use it alone ("" : leave it as it is)


@dataclass
class Lease:
    """One slot of one GPU, held until `release()` (or the end of `hold`)."""

    gpu: Gpu
    lock: filelock.BaseFileLock | None = None
    env: dict[str, str] = field(default_factory=dict)

    def release(self) -> None:
        if self.lock is not None:
            with contextlib.suppress(OSError):
                self.lock.release(force=True)
            self.lock = None


@functools.lru_cache(maxsize=4)
def _listed(smi: str | None) -> tuple[tuple[int, str], ...]:
    """(index, UUID) of every GPU nvidia-smi sees (it ignores CUDA_VISIBLE_DEVICES)."""
    if smi is None:
        return ()
    try:
        out = subprocess.run([smi, "--query-gpu=index,uuid", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    found = []
    for line in out.stdout.splitlines():
        index, _, uuid = (part.strip() for part in line.partition(","))
        if index.isdigit() and uuid:
            found.append((int(index), uuid))
    return tuple(found)


def gpus() -> list[Gpu]:
    """The GPUs this process may use, in the order CUDA_VISIBLE_DEVICES gives them."""
    listed = _listed(shutil.which("nvidia-smi"))
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return [Gpu(uuid, uuid) for _, uuid in listed] or [Gpu("gpu", "")]
    found = []
    for token in (t.strip() for t in raw.split(",")):
        if not token or token.startswith("-"):
            break  # CUDA stops at the first entry that names no GPU
        uuid = next((u for i, u in listed if token.isdigit() and i == int(token)), None)
        found.append(Gpu(uuid or token, uuid or token))
    return found or [Gpu("none", "")]  # none visible: a run fails on its own, never waits for a lease


def folder() -> Path:
    """The lock files' folder: this user's own (settings.private_temp refuses one someone
    else owns, or a link), and no one else's to write."""
    found = settings.private_temp("workbook-gpu")
    if found.lstat().st_mode & 0o077:
        os.chmod(found, 0o700)
    return found


def _path(base: Path, gpu: Gpu, slot: int) -> Path:
    return base / f"{re.sub(r'[^A-Za-z0-9._-]', '_', gpu.key)}.{slot}.lock"


def try_hold(choices: list[Gpu] | None = None, share: int | None = None, base: Path | None = None) -> Lease | None:
    """A free slot of one of `choices` (default: every GPU), or None when all are held."""
    choices = gpus() if choices is None else choices
    share = settings.gpu_share() if share is None else share
    base = folder() if base is None else base
    start = next(_turn)  # spread runs over the GPUs: each try begins one further along
    for n in range(len(choices)):
        gpu = choices[(start + n) % len(choices)]
        for slot in range(share):
            lock = filelock.FileLock(str(_path(base, gpu, slot)), mode=0o600, thread_local=False)
            try:
                lock.acquire(blocking=False)
            except filelock.Timeout:
                continue
            except OSError:  # not a lock file (a link, say, which is never followed): not a slot
                continue
            return Lease(gpu, lock, {"CUDA_VISIBLE_DEVICES": gpu.visible} if gpu.visible else {})
    return None


@contextlib.contextmanager
def hold(deadline: float | None = None, cancelled: threading.Event | None = None, choices: list[Gpu] | None = None,
         share: int | None = None, base: Path | None = None) -> Iterator[Lease]:
    """Wait for a slot (until `deadline`, a time.monotonic(); or until `cancelled` is set),
    hold it while the block runs, and release it however the block ends."""
    while True:
        lease = try_hold(choices, share, base)
        if lease is not None:
            break
        if cancelled is not None and cancelled.is_set():
            from .processes import Cancelled

            raise Cancelled()
        if deadline is not None and time.monotonic() >= deadline:
            raise Busy()
        time.sleep(WAIT)
    try:
        yield lease
    finally:
        lease.release()


def choose(choices: list[Gpu] | None = None) -> Gpu:
    """The GPU a run that will ask for its lease later should use (a MAX graph's worker
    builds on it first): the next in turn."""
    choices = gpus() if choices is None else choices
    return choices[next(_turn) % len(choices)]
