"""What a killed workbook leaves behind, swept away when the next one starts.

`kill -9` (or a power cut) gives a workbook no time to clean up: its run
folders in the temp folder and its half-built cache entries stay. So:

- each command keeps every temp folder it makes (run folders, inputs,
  sanitizer logs) under one folder of its own, `<temp>/workbook-run-<pid>-<start>`,
  removed when it ends;
- the build cache's staging names carry the pid of their writer
  (`<entry>.tmp<pid>-<thread>`, `.gone<pid>-<thread>`, `.<file>.<pid>-<thread>`,
  the last also a kept verdict being written),
  as do the partial files of state.json and of learner files
  (`.<file>.workbook-<pid>-<thread>.tmp`);
- at start-up, `sweep()` removes those whose process is gone (a folder whose
  pid now belongs to another process, started later, is gone too). A live
  workbook's folders are never touched.

Looking through the build cache costs time that grows with it (0.3 to 0.7 s at
4000 entries, before any build could start), so it is done only when a killed
workbook's run folder says there may be something to find, or a day after the
last time (a reboot empties the temp folder, not the cache): a leftover only
takes room until then.

Only this user's own leftovers are removed: a name that matches but belongs to
someone else, or is a link, is left alone and never followed (cachetrust.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

import psutil

from . import cachetrust, settings

RUN_PREFIX = "workbook-run-"
RUN_NAME = re.compile(r"^workbook-run-(\d+)-(\d+)$")
# <entry>.tmp<pid>-<tid>, .tmp<pid>-<tid>, <entry>.gone<pid>-<tid>, state.json.tmp<pid>-<tid>
STAGING = re.compile(r"(?:^|\.)(?:tmp|gone)(\d+)-\d+$")
# .<file>.<pid>-<tid> (a launcher source or a kept verdict being written, in the cache)
PARTIAL = re.compile(r"^\..+\.(\d+)-\d+$")
# .<file>.workbook-<pid>-<tid>.tmp (a learner file being replaced: a name no learner would pick)
LEARNER_PARTIAL = re.compile(r"^\..+\.workbook-(\d+)-\d+\.tmp$")
CACHE_DEPTH = 4  # build/<entry>/launch/<key>/<file>
SWEPT = ".swept"  # in the cache: touched when its staging names were last looked through
CACHE_EVERY = 24 * 3600  # seconds between two looks through the cache without a killed workbook


def _started(pid: int) -> int | None:
    """When `pid` started, in milliseconds since the epoch; None if no such process."""
    try:
        return int(psutil.Process(pid).create_time() * 1000)
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.Error:  # another user's: alive, as far as we may know
        return 0


def _gone(pid: int, started: int | None = None) -> bool:
    """Whether the process that made a folder has ended (`started`: when it started, so that
    a pid used again by a later process does not keep its folder)."""
    if pid == os.getpid():
        return False
    now = _started(pid)
    if now is None:
        return True
    return started is not None and now != 0 and abs(now - started) > 2000


def temp_root() -> Path:
    """This command's temp folder, made now: every temp folder it makes goes in it."""
    me = os.getpid()
    started = _started(me) or 0
    folder = settings.system_temp() / f"{RUN_PREFIX}{me}-{started}"
    folder.mkdir(mode=0o700, exist_ok=True)
    tempfile.tempdir = str(folder)
    return folder


def release(folder: Path) -> None:
    tempfile.tempdir = None
    shutil.rmtree(folder, ignore_errors=True)


def _remove(path: Path) -> bool:
    """Remove a leftover if it is ours through and through; a link, or anything of someone
    else's, stays where it is. Whether it went."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or info.st_uid != cachetrust.me():
        return False
    if stat.S_ISDIR(info.st_mode):
        if not cachetrust.all_ours(path):
            return False
        shutil.rmtree(path, ignore_errors=True)
        return not os.path.lexists(path)
    with contextlib.suppress(OSError):
        path.unlink()
    return not os.path.lexists(path)


def _temp_folders() -> list[Path]:
    found = []
    base = settings.system_temp()
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            m = RUN_NAME.match(entry.name)
            if not m or not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                    continue  # someone else's workbook: theirs to sweep
            if _gone(int(m.group(1)), int(m.group(2))):
                found.append(Path(entry.path))
    return found


def _staged(folder: Path, depth: int, patterns: tuple[re.Pattern, ...] = (STAGING, PARTIAL)) -> list[Path]:
    """Entries under `folder` (to `depth` levels) named by `patterns` whose writer is gone.
    A folder that is a link is not looked into (what it points at is not ours to sweep)."""
    found = []
    if os.path.islink(folder):
        return found
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            m = next((m for m in (p.search(entry.name) for p in patterns) if m), None)
            if m:
                if _gone(int(m.group(1))):
                    found.append(Path(entry.path))
            elif depth > 1 and entry.is_dir(follow_symlinks=False):
                found += _staged(Path(entry.path), depth - 1, patterns)
    return found


def due(stamp: Path, every: float) -> bool:
    """Whether `every` seconds have passed since `stamp` was last touched (or it is missing)."""
    try:
        return time.time() - stamp.stat().st_mtime > every
    except OSError:
        return True


def sweep() -> list[Path]:
    """Remove what ended workbooks left behind; returns what was removed (for tests and logs)."""
    removed = _temp_folders()
    with contextlib.suppress(OSError, settings.SettingError):
        cache = settings.cache_dir()
        if removed or due(cache / SWEPT, CACHE_EVERY):  # after a killed workbook, or once a day
            for sub in ("build", "py"):
                removed += _staged(cache / sub, CACHE_DEPTH)
            removed += _staged(cache / "verdicts", 1, (PARTIAL,))
            removed += _staged(cache / "runtime", 1) + _staged(cache, 1, (PARTIAL,))
            (cache / SWEPT).touch()
    removed += _staged(settings.state_dir(), 1, (STAGING,))
    removed += _staged(settings.root() / "puzzles", 3, (LEARNER_PARTIAL,))
    return [path for path in removed if _remove(path)]
