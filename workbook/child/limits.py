"""Resource limits on every process that runs learner code (kernel launchers, graph workers).

A time limit alone let a kernel take 5.4 GB of memory, or print 79 MB into
its log and pass. So each such process also gets, through setrlimit (set by
workbook/child/_exec.py just before it becomes the program, so the limits hold for
everything it starts):

- memory (RLIMIT_DATA: what a process can write into; not its address space,
  which the Mojo runtime and a GPU driver reserve by the gigabyte and never use),
  only where no cgroup holds the child's memory: it still counts each runtime
  thread's stack, reserved and mostly untouched, so it grows with the cores
  (workbook/child/processes.py, `_rlimits`);
- the size of each file it writes (RLIMIT_FSIZE), its printed output included:
  past it the process is stopped by SIGXFSZ; and its run folder in all (four
  times that, watched by the parent, which stops it past that);
- processes and threads (RLIMIT_NPROC). The kernel counts them per user, so in
  an ordinary run the limit is what this user runs now plus the allowance (and
  root, whom the kernel exempts, gets none); in grading's sandbox the count
  starts afresh (workbook/child/sandbox.py);
- no core files.

These are per process. The whole tree of a learner child, shared memory
included, is bounded besides by its containment (workbook/child/containment.py: a
cgroup, or a watcher), with the same memory and process limits.

The Mojo compiler is not limited: it runs no learner code, and needs more.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..core import settings
from ..core.i18n import Msg, msg
from .containment import Stop

MB = 1 << 20
# What the GPU's driver and runtime hold in a process that opens the GPU, whatever its kernel
# does: on the H200 host (driver 580), a p01 launcher's cgroup peaked at 1400 MB, 1319 MB of
# it shared memory the driver maps (memory.stat: shmem, file_mapped) and 69 MB anonymous; it
# was stopped under limits of 512 to 1152 MB before its kernel ran (2026-11-29). It is not the
# learner's: a run that opens the GPU gets it on top of WORKBOOK_MEMORY_LIMIT_MB.
GPU_RUNTIME_MB = 2048


def runtime_allowance_mb(device: str) -> int:
    """Memory a run on `device` may hold on top of the learner's, for the GPU's own runtime."""
    return GPU_RUNTIME_MB if device == "gpu" else 0
# What a program says when an allocation fails (Mojo's runtime, C++, Python, the CUDA driver).
OUT_OF_MEMORY = re.compile(r"out of memory|bad_alloc|MemoryError|Cannot allocate memory|OUT_OF_MEMORY|ENOMEM",
                           re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 0  # 0: none
    file_mb: int = 0
    processes: int = 0

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(settings.memory_limit_mb(), settings.file_limit_mb(), settings.process_limit())

    @property
    def folder_bytes(self) -> int:
        """What a run folder may hold in all."""
        return 4 * self.file_mb * MB

    def options(self, *, processes: int | None) -> list[str]:
        """The `_exec` options that set these limits; `processes` is the process limit to
        set (None: none, where the kernel would not count it usefully)."""
        found = ["--rlimit=core:0"]
        if self.memory_mb:
            found.append(f"--rlimit=data:{self.memory_mb * MB}")
        if self.file_mb:
            found.append(f"--rlimit=fsize:{self.file_mb * MB}")
        if processes:
            found.append(f"--rlimit=nproc:{processes}")
        return found

    def processes_here(self) -> int | None:
        """The process limit for an ordinary (unsandboxed) run: the kernel counts every
        process and thread of this user, so it is what runs now plus the allowance."""
        if not self.processes or os.getuid() == 0:
            return None
        return tasks_of(os.getuid()) + self.processes

    def why_stopped(self, returncode: int | None, peak_bytes: int, log: str, folder_full: bool,
                    log_bytes: int = 0, stop: Stop | None = None, graded: bool = False) -> Msg | None:
        """The limit a dead child ran into, if one explains its death: the learner (or,
        `graded`, the grader) reads that, not just a signal number. (A program that ignores
        SIGXFSZ, as Python does, gets an error writing instead, and its log ends at the
        limit.) `stop`: what its containment saw (a cgroup's OOM kill or refused fork, the
        watcher's count), which holds whatever the exit code says."""
        words = "grade.limit_" if graded else "limits."
        at_limit = bool(self.file_mb) and log_bytes >= self.file_mb * MB
        if folder_full or at_limit or returncode in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            return msg(words + "file", mb=self.file_mb)
        if stop is not None and stop.memory and self.memory_mb:
            return msg(words + "memory", mb=self.memory_mb)
        if stop is not None and stop.processes and self.processes:
            return msg(words + "processes", n=self.processes)
        if returncode in (0, None) or not self.memory_mb:
            return None
        if peak_bytes >= 0.8 * self.memory_mb * MB or OUT_OF_MEMORY.search(log[-4000:]):
            return msg(words + "memory", mb=self.memory_mb)
        return None


def tasks_of(uid: int) -> int:
    """Processes and threads this user has now (what RLIMIT_NPROC counts)."""
    total = 0
    for proc in psutil.process_iter(["uids", "num_threads"]):
        info = proc.info
        if info.get("uids") and info["uids"].real == uid:
            total += info.get("num_threads") or 1
    return total


def peak_data(pid: int) -> int:
    """The most memory (VmData) one process of a child's tree uses now."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    peak = 0
    for proc in family:
        try:
            peak = max(peak, proc.memory_info().data)
        except psutil.Error:
            continue
    return peak


# Entries looked at in a run folder, at most: a child that makes millions of empty files
# cannot make each look take seconds (a folder past this counts as past its size limit).
MOST_ENTRIES = 100_000


def largest_file(folder: Path) -> int:
    """The size of the largest file right in `folder` (a run folder is flat). Nothing in it
    is opened or followed: the child may have left links, FIFOs or devices there."""
    largest = 0
    try:
        with os.scandir(folder) as entries:
            for seen, entry in enumerate(entries):
                if seen >= MOST_ENTRIES:
                    break
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        largest = max(largest, entry.stat(follow_symlinks=False).st_size)
    except OSError:
        return 0
    return largest


def folder_size(folder: Path, stop_at: int) -> int:
    """Bytes under a folder, counted until `stop_at` is passed (a folder of a million files
    costs no more than it must: past MOST_ENTRIES entries it counts as full). Nothing in it
    is opened or followed (links, FIFOs and devices are the child's, not sizes)."""
    total = 0
    seen = 0
    pending = [folder]
    while pending and total <= stop_at:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MOST_ENTRIES:
                        return stop_at + 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total
