"""The verdict channel: what a child hands back reaches the workbook through descriptors.

A child that runs learner code (a launcher, a graph worker) used to write its
outputs, the simulator's findings and counts, and its log into its run folder,
which it can write: a kernel could replace result.json, truncate counters.bin,
or leave a link to a secret, a FIFO or /dev/zero where the workbook would read.
So everything a verdict is made of goes through files the workbook opens before
the child starts, with no name in any folder (O_TMPFILE, or created and
unlinked at once in the workbook's own temp folder, which no sandbox binds),
handed to the child as inherited descriptors (`Children.start(pass_fds=...)`;
the launchers find theirs in WORKBOOK_FDS). Nothing the child does by path
reaches them, and the workbook reads them through its own descriptors (fstat,
then pread up to a cap), never through a path.

What the child's own code does with a descriptor it holds is another matter:
in `grade`, the source guard refuses the constructs that could (FFI, files),
and the simulator keeps its records out of the kernel's reach.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

ENV = "WORKBOOK_FDS"  # names the descriptors for the launchers: outputs:N,writers:N,...


class Sink:
    """One nameless file the workbook opened, for a child to write through its descriptor."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)  # O_TMPFILE where the system has it

    @property
    def fd(self) -> int:
        return self._file.fileno()

    def _stat(self) -> os.stat_result | None:
        try:
            return os.fstat(self.fd)
        except (OSError, ValueError):  # closed
            return None

    def size(self) -> int:
        info = self._stat()
        return info.st_size if info else 0

    def used(self) -> int:
        """Bytes it takes on disk (a file written sparse counts what it holds)."""
        info = self._stat()
        return info.st_blocks * 512 if info else 0

    def mtime(self) -> float:
        info = self._stat()
        return info.st_mtime if info else 0.0

    def read(self, cap: int) -> bytes:
        """Its bytes from the start, at most `cap` of them."""
        return self.read_at(0, min(self.size(), max(cap, 0)))

    def tail(self, limit: int) -> bytes:
        """Its last `limit` bytes."""
        size = self.size()
        start = max(0, size - limit)
        return self.read_at(start, size - start)

    def read_at(self, offset: int, count: int) -> bytes:
        chunks, done = [], 0
        with contextlib.suppress(OSError, ValueError):
            while done < count:
                got = os.pread(self.fd, min(count - done, 1 << 24), offset + done)
                if not got:
                    break
                chunks.append(got)
                done += len(got)
        return b"".join(chunks)

    def give_to(self, uid: int | None) -> None:
        """Let a sandbox's own user open it again through /proc/self/fd (compute-sanitizer's
        report is written so): a root grader's sandbox runs as another user."""
        if uid is not None:
            with contextlib.suppress(OSError):
                os.fchown(self.fd, uid, uid)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()


class Channel:
    """A child's named sinks; `env()` names their descriptors for WORKBOOK_FDS."""

    def __init__(self, *names: str) -> None:
        self.sinks: dict[str, Sink] = {}
        try:
            for name in names:
                self.sinks[name] = Sink()
        except BaseException:
            self.close()
            raise

    def __getitem__(self, name: str) -> Sink:
        return self.sinks[name]

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fds(self) -> tuple[int, ...]:
        return tuple(s.fd for s in self.sinks.values())

    def env(self) -> str:
        return ",".join(f"{name}:{sink.fd}" for name, sink in self.sinks.items())

    def close(self) -> None:
        for sink in self.sinks.values():
            sink.close()


def read_file(path: Path, cap: int) -> bytes | None:
    """A file a child could have written (its run folder), read the only safe way: not
    through a link (O_NOFOLLOW), never waiting on a FIFO or a device (O_NONBLOCK), only if
    it is a regular file, and at most `cap` bytes. None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return os.pread(fd, max(0, min(cap, info.st_size)), 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def file_mtime(path: Path) -> float:
    """When a run-folder file was last written, without following a link (0: none)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0.0
    return info.st_mtime if stat.S_ISREG(info.st_mode) else 0.0
