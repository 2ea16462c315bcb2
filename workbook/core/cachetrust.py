"""The cache is a folder of one's own: nothing another user could have written is used.

WORKBOOK_CACHE may name a lab's shared scratch folder, and the workbook runs what it
finds in its cache (launchers, the simulator's runtime objects, an op's `.mojoc`,
which MAX loads) and believes what it reads there (kept verdicts). So:

- **A folder per user.** Each user's cache is `<cache>/u<uid>/`, made 0700; one that
  is a link, someone else's, or writable by others is refused. Why a folder per user
  rather than checking the owner of each entry in one shared tree: entry names are
  content hashes anyone can compute, so in a shared tree another user can make an
  entry first, or move a checked one aside and put theirs in its place between the
  check and the use (a race no check of single paths closes). A folder only its owner
  can enter leaves nobody else anything to create, replace or rename. Sharing entries
  between users was never sound anyway: one user's build is exactly what another
  must not trust.
- **Safe folders above it.** The cache folder and every folder above it (resolved)
  must belong to root or this user, and be writable by others only with the sticky
  bit (like /tmp, or a lab folder made with `chmod 1777`): otherwise someone could
  move `u<uid>` away and put their own in its place. Refused, the cache moves to
  `<temp>/workbook-cache-<uid>`, else to a folder of this command's own; `doctor`
  says why in one line. Not an error: the cache is only a cache.
- **Each entry checked on use.** An entry is used only if it and every folder from
  the user's folder down to it belong to this user and are not writable by group or
  others (`trusted`); anything that runs or is loaded is also checked against the
  SHA-256 recorded when it was built, in a record we wrote beside it (`sealed`).
  Neither can fail in a folder only we can enter unless root, or our own hand,
  changed it: cheap (a few lstat calls, hashing half a megabyte), they catch a root's
  plant, a cache copied from elsewhere, and damage.
- **What fails is ignored and rebuilt.** Ours, it is removed; anything else (another
  user's, a link) is set aside under a name no reader looks at, never deleted and
  never followed; `doctor` shows the last such note.

Every file written here is written whole (a partial file renamed into place), with
O_NOFOLLOW, and without write bits for group or others, whatever the umask.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import settings
from .i18n import Msg, msg

FALLBACK = "workbook-cache"  # <temp>/workbook-cache-<uid>
NOTES = "ignored.txt"  # in the user's folder: the last entries ignored, one line each
NOTES_KEPT = 20
FOREIGN = ".foreign"  # <entry>.foreign<pid>-<tid>: set aside, never read, never deleted by the workbook
LOOSE = stat.S_IWGRP | stat.S_IWOTH
READ_CAP = 64 << 20  # the most a cache record is read of (a kept verdict is under a megabyte)


def me() -> int:
    return os.geteuid()


@dataclass(frozen=True)
class Root:
    path: Path
    note: Msg | None = None  # why the cache is not where it was asked to be


_chosen: dict[tuple, Root] = {}
_lock = threading.Lock()


class Unsafe(Exception):
    """A folder the cache can't be trusted in: why, as a message."""

    def __init__(self, why: Msg):
        super().__init__(why.text("en"))
        self.why = why


def configured() -> Path | None:
    """The cache folder the settings name, as named (nothing made, nothing checked)."""
    env = os.environ.get("WORKBOOK_CACHE")
    if env:
        return Path(env)
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbook"
    except RuntimeError:
        return None


def _configured() -> Path:
    """The cache folder the settings name (WORKBOOK_CACHE, else the XDG cache), made if
    missing; a WORKBOOK_CACHE that can't be made is the user's to fix, and says so."""
    env = os.environ.get("WORKBOOK_CACHE")
    if env:
        base = Path(env)
        try:
            _make_dirs(base)
        except OSError as exc:
            raise settings.SettingError("settings.bad_folder", name="WORKBOOK_CACHE", value=env,
                                        why=exc.strerror or str(exc)) from None
        return base
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbook"
        _make_dirs(base)
        return base
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home folder can be found at all
        raise Unsafe(msg("cache.unusable", path=os.environ.get("XDG_CACHE_HOME") or "~/.cache",
                         why=getattr(exc, "strerror", None) or str(exc))) from None


def _make_dirs(folder: Path) -> None:
    """Like mkdir -p, each folder made 0700 (the XDG rule for a cache), none writable by others."""
    missing = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    if not folder.is_dir():
        raise NotADirectoryError(20, "Not a directory", str(folder))


def _safe_above(base: Path) -> Path:
    """The cache folder, resolved, if it and every folder above it belong to root or us and
    can be written by others only with the sticky bit (nobody can swap what lies in them)."""
    real = base.resolve()
    for folder in [real, *real.parents]:
        info = os.lstat(folder)
        if stat.S_ISLNK(info.st_mode):  # changed since it was resolved
            raise Unsafe(msg("cache.moved", path=str(folder)))
        if info.st_uid not in (0, me()):
            raise Unsafe(msg("cache.not_owned", path=str(folder), uid=info.st_uid))
        if info.st_mode & LOOSE and not info.st_mode & stat.S_ISVTX:
            raise Unsafe(msg("cache.writable", path=str(folder), mode=f"{stat.S_IMODE(info.st_mode):o}"))
    return real


def _own_folder(folder: Path) -> Path:
    """`folder`, made 0700 if missing, if it is a folder of ours no one else can write."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise Unsafe(msg("cache.not_folder", path=str(folder)))
    if info.st_uid != me():
        raise Unsafe(msg("cache.not_owned", path=str(folder), uid=info.st_uid))
    if info.st_mode & LOOSE:
        raise Unsafe(msg("cache.writable", path=str(folder), mode=f"{stat.S_IMODE(info.st_mode):o}"))
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)  # ours and unwritten by others: only no longer readable by them
    return folder


def _choose() -> Root:
    try:
        return Root(_own_folder(_safe_above(_configured()) / f"u{me()}"))
    except (Unsafe, OSError) as exc:
        why = exc.why if isinstance(exc, Unsafe) else msg("cache.unusable", path=str(exc.filename or "?"),
                                                            why=exc.strerror or str(exc))
    try:
        path = _own_folder(_safe_above(settings.system_temp()) / f"{FALLBACK}-{me()}")
    except (Unsafe, OSError):
        path = Path(tempfile.mkdtemp(prefix=f"{FALLBACK}-"))  # this command's own (sweep.temp_root's)
    return Root(path, msg("cache.elsewhere", path=str(path), why=why))


def root() -> Root:
    """The user's cache folder (and why it is not the one asked for, if it is not). Chosen
    once per setting; chosen again if it went meanwhile."""
    key = (os.environ.get("WORKBOOK_CACHE"), os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"), me())
    with _lock:
        found = _chosen.get(key)
        if found is not None:
            try:
                info = os.lstat(found.path)
                if stat.S_ISDIR(info.st_mode) and info.st_uid == me() and not info.st_mode & LOOSE:
                    return found
            except OSError:
                pass
        found = _chosen[key] = _choose()
        return found


# ---------------------------------------------------------------------------
# Entries
# ---------------------------------------------------------------------------


def trusted(path: Path) -> bool:
    """Whether `path` and every folder from the user's cache folder down to it are ours,
    not links, and not writable by group or others. Anything outside that folder: no."""
    base = root().path
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        return False
    current = base
    for part in ("", *parts):
        current = current / part if part else base
        try:
            info = os.lstat(current)
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode) or info.st_uid != me() or info.st_mode & LOOSE:
            return False
    return True


def make_dirs(folder: Path) -> Path:
    """A folder in the cache, each missing folder made 0700."""
    _make_dirs(folder)
    return folder


def tighten(path: Path) -> None:
    """No write bits for group or others on what a compiler (or an umask of 002) made."""
    info = os.lstat(path)
    if not stat.S_ISLNK(info.st_mode) and info.st_mode & LOOSE:
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~LOOSE)


def tighten_tree(folder: Path) -> None:
    for top, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            tighten(Path(top) / name)
    tighten(folder)


def write(path: Path, data: bytes) -> None:
    """Write a file of the cache whole: a partial file (O_EXCL, O_NOFOLLOW, 0600) renamed
    over the old one, so a link there is replaced, never followed."""
    partial = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}")  # sweep.py's PARTIAL
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def read(path: Path, cap: int = READ_CAP) -> bytes | None:
    """A record of the cache if it is ours to trust (`trusted`), a regular file read
    without following a link or blocking, and no larger than `cap`; else None."""
    if not trusted(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != me() or info.st_mode & LOOSE or info.st_size > cap:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
        return data if len(data) <= cap else None
    except OSError:
        return None
    finally:
        os.close(fd)


def sha256(path: Path) -> str | None:
    """A file's SHA-256, read without following a link; None if it can't be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    h = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return h.hexdigest()


def seal(path: Path, record: Path) -> None:
    """Record what `path` (just built by us) holds, in `record`: what `sealed` checks on use."""
    tighten(path)
    digest = sha256(path)
    if digest is None:
        raise FileNotFoundError(2, "built, then gone", str(path))
    write(record, json.dumps({"sha256": digest, "size": os.lstat(path).st_size}).encode())


def sealed(path: Path, record: Path) -> bool:
    """Whether `path` is ours (`trusted`) and holds exactly what `record` (ours too) says
    it held when we built it: only then is it run or loaded."""
    raw = read(record, 4096)
    if raw is None or not trusted(path):
        return False
    try:
        kept = json.loads(raw)
        digest, size = kept["sha256"], kept["size"]
    except (ValueError, TypeError, KeyError):
        return False
    try:
        if os.lstat(path).st_size != size:
            return False
    except OSError:
        return False
    return sha256(path) == digest


def contents(folder: Path) -> dict[str, str]:
    """Every regular file below `folder` (a build entry) and its SHA-256, by relative name."""
    found = {}
    for top, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(top) / name
            digest = sha256(path)
            if digest is not None:
                found[path.relative_to(folder).as_posix()] = digest
    return found


def holds(folder: Path, record: dict) -> bool:
    """Whether every file a finished entry's record names is still ours and unchanged, and
    the folders it calls closed hold nothing else (no file added beside the sources, which
    an import or an include could pick up)."""
    files = record.get("files") if isinstance(record, dict) else None
    closed = record.get("closed", []) if isinstance(record, dict) else None
    if not isinstance(files, dict) or not isinstance(closed, list):
        return False
    for name, digest in files.items():
        path = folder / name
        if not isinstance(name, str) or ".." in Path(name).parts or not trusted(path) or sha256(path) != digest:
            return False
    for sub in closed:
        if not isinstance(sub, str) or ".." in Path(sub).parts:
            return False
        for top, dirs, names in os.walk(folder / sub):
            if "__pycache__" in dirs:  # Python's own cache of sources just checked: made again from them
                dirs.remove("__pycache__")
                if not remove(Path(top) / "__pycache__"):
                    return False
            for name in names:
                rel = (Path(top) / name).relative_to(folder).as_posix()
                if rel not in files and rel != ".complete":
                    return False
            for name in dirs:
                if os.path.islink(os.path.join(top, name)):
                    return False
    return True


# ---------------------------------------------------------------------------
# What is not to be trusted
# ---------------------------------------------------------------------------


def all_ours(path: Path) -> bool:
    """Whether `path` and everything below it is ours (links included, as links)."""
    try:
        if os.lstat(path).st_uid != me():
            return False
        if not path.is_dir() or path.is_symlink():
            return True
        for top, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                if os.lstat(os.path.join(top, name)).st_uid != me():
                    return False
    except OSError:
        return False
    return True


def remove(path: Path) -> bool:
    """Remove an entry of the cache if it is all ours (moved aside first, so no reader sees it
    half removed; a link is removed, not followed); anything else is left where it is.
    Returns whether it went."""
    if not all_ours(path):
        return False
    try:
        if path.is_dir() and not path.is_symlink():
            aside = path.with_name(path.name + f".gone{os.getpid()}-{threading.get_ident()}")
            path.rename(aside)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            path.unlink()
    except OSError:
        return False
    return True


def set_aside(path: Path) -> bool:
    """Rename an entry out of the way in our own folder (a link renamed, not followed; nothing
    deleted): nobody reads a `.foreign` name. Whether its name is free now."""
    try:
        path.rename(path.with_name(f"{path.name}{FOREIGN}{os.getpid()}-{threading.get_ident()}"))
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def ignore(path: Path, why: str) -> bool:
    """An entry that failed its checks: removed if all ours, else set aside, with a note for
    `doctor`. Whether its name is free now."""
    note(path, why)
    return remove(path) or set_aside(path)


def note(path: Path, why: str) -> None:
    """Keep a line for `doctor`: which entry was ignored, when, and why (the last few)."""
    line = f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {why}: {path}"
    with contextlib.suppress(OSError):
        record = root().path / NOTES
        old = (read(record, 1 << 16) or b"").decode(errors="replace").splitlines()
        write(record, ("\n".join([*old[-(NOTES_KEPT - 1):], line]) + "\n").encode())


def notes() -> list[Msg]:
    """What `doctor` says about the cache: where it is if not where asked, and the last
    entry ignored, with how many were."""
    found = []
    chosen = root()
    if chosen.note is not None:
        found.append(chosen.note)
    lines = (read(chosen.path / NOTES, 1 << 16) or b"").decode(errors="replace").splitlines()
    if lines:
        found.append(msg("cache.ignored", n=len(lines), last=lines[-1]))
    return found
