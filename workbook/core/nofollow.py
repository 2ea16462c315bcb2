"""Files below a folder, reached without crossing a link.

The workspace is the learner's, and in `workbook grade` a submission's: any file
or folder in it may be a link, and `.workbook/workspace.json` may name any path.
Whatever the workbook writes, replaces or deletes there (the workspace update,
state.json, backups, `reset`, `init`) goes through here: a name is taken apart
into plain parts (no absolute path, no `..`), each folder on the way is opened
with O_NOFOLLOW relative to the one before (so a link anywhere on the way is
refused, and nothing can be swapped between a check and a use), and the file
itself is written beside its final name and renamed over it (a link there is
replaced, never written through) or removed with unlink (which never follows).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Refused(OSError):
    """A name that leaves its folder, or a link (or a file) where a folder should be."""

    def __init__(self, path: str, why: str):
        super().__init__(errno.ELOOP, why, path)
        self.why = why


def parts(name: str) -> list[str] | None:
    """The parts of a relative name inside a folder ('puzzles/p01/text.en.md'), or None
    when it is not one: absolute, `..`, `.`, empty parts, backslashes or NUL."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name or name.startswith("/"):
        return None
    found = name.split("/")
    if any(p in ("", ".", "..") for p in found) or PurePosixPath(name).is_absolute():
        return None
    return found


def _split(name: str) -> list[str]:
    found = parts(name)
    if found is None:
        raise Refused(name, "not a plain relative name")
    return found


@contextlib.contextmanager
def folder(base: Path, names: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of base/names[0]/names[1]/..., each opened without following a link
    (made if missing and `create`). `base` itself is followed: it is the workspace."""
    fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for i, name in enumerate(names):
            where = str(Path(base, *names[:i + 1]))
            try:
                step = os.open(name, DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                step = _open_step(name, fd, where)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise Refused(where, "a link or a file where a folder should be") from None
                raise
            os.close(fd)
            fd = step
        yield fd
    finally:
        os.close(fd)


def _open_step(name: str, fd: int, where: str) -> int:
    try:
        return os.open(name, DIRECTORY, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise Refused(where, "a link or a file where a folder should be") from None
        raise


def lstat(base: Path, name: str) -> os.stat_result | None:
    """What is at base/name, not followed (None: nothing); Refused if a folder on the way
    is a link or not a folder."""
    *above, last = _split(name)
    try:
        with folder(base, above) as fd:
            return os.stat(last, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_bytes(base: Path, name: str, cap: int = 1 << 24) -> bytes:
    """A regular file's bytes, no link followed anywhere on the way, at most `cap` of them
    (IsADirectoryError for anything but a regular file, EFBIG past the cap)."""
    *above, last = _split(name)
    with folder(base, above) as dfd:
        try:
            fd = os.open(last, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0),
                         dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(str(Path(base, name)), "a link") from None
            raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(Path(base, name)))
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
        if len(data) > cap:
            raise OSError(errno.EFBIG, "too large", str(Path(base, name)))
        return data
    finally:
        os.close(fd)


def write_bytes(base: Path, name: str, data: bytes, *, mode: int | None = None, keep_mode: bool = True,
                partial: str | None = None) -> None:
    """Replace base/name with `data`, whole: written beside it (O_EXCL, O_NOFOLLOW), then
    renamed over it, so a link there is replaced, never written through; missing folders
    are made, a link on the way is refused. The file's mode is kept (`keep_mode`), else
    `mode` (0o644 for a new one); a regular file its owner made read-only is not replaced.
    `partial`: the temporary name (sweep.py knows the patterns)."""
    *above, last = _split(name)
    temp = partial or f".{last}.workbook-{os.getpid()}-{threading.get_ident()}.tmp"
    with folder(base, above, create=True) as dfd:
        try:
            info = os.stat(last, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(Path(base, name)))
        if info is not None and stat.S_ISREG(info.st_mode):
            if not info.st_mode & stat.S_IWUSR:  # made read-only by its owner: not ours to replace (root or not)
                raise PermissionError(errno.EACCES, "Permission denied", str(Path(base, name)))
            if keep_mode:
                mode = stat.S_IMODE(info.st_mode)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o644 if mode is None else mode, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temp, last, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dfd)


def create(base: Path, name: str, data: bytes, mode: int = 0o644) -> bool:
    """Write base/name only if nothing is there (not even a link); whether it was written."""
    *above, last = _split(name)
    with folder(base, above, create=True) as dfd:
        try:
            fd = os.open(last, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         mode, dir_fd=dfd)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    return True


def unlink(base: Path, name: str) -> None:
    """Remove the regular file base/name (a link on the way is refused; one at the name is
    not a file of ours to remove: refused too)."""
    *above, last = _split(name)
    with folder(base, above) as dfd:
        info = os.stat(last, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(str(Path(base, name)), "not a regular file")
        os.unlink(last, dir_fd=dfd)


def make_folders(base: Path, name: str) -> None:
    """base/name and the folders above it, made where missing, none reached through a link."""
    with folder(base, _split(name), create=True):
        pass


def inside(base: Path, path: Path) -> str | None:
    """`path` as a name relative to `base` ('puzzles/p01/map.mojo'), or None if it is not
    below it (compared as written, both made absolute: nothing is resolved)."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(base))
    except ValueError:
        return None
    name = rel.as_posix()
    return name if parts(name) is not None else None
