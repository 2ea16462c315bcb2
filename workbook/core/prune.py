"""Cache upkeep: what no command has used for a month goes, looked for once a day.

Every edit a learner runs makes a build folder (about half a megabyte) and a kept
verdict; without upkeep the cache only grows. An entry's last use is the time
stamp of its `.complete` marker (build/ and py/, touched by build.py on every use)
or of the file itself (verdicts/, touched by verdicts.py when read). Entries still
being built have no marker yet and are never touched here; one in use was touched
when its command began, so it is weeks away from going.

Only this user's own entries are ever removed (cachetrust.py): an entry that is
not all ours, or a link, is left where it is, never followed. The same rules
clear what the workbook kept before each user had a folder of their own (the
cache folder's build/, py/ and verdicts/ themselves): never read again, this
user's entries there go once unused for a month.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from . import cachetrust, settings
from .sweep import due

KEEP_DAYS = 30  # an entry unused for this long is removed
PRUNED = ".pruned"  # in the cache: touched when it was last looked through
EVERY = 24 * 3600  # seconds between two looks


def _unused(folder: Path, cutoff: float) -> list[Path]:
    """Finished entries of ours in a content-addressed folder whose marker is older than `cutoff`."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if "." in entry.name or not entry.is_dir(follow_symlinks=False):
                continue  # staging names (.tmp, .gone) are the sweep's, .foreign ones nobody's
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid != cachetrust.me():
                    continue  # another user's: theirs to keep
                marker = os.lstat(os.path.join(entry.path, ".complete"))
                if stat.S_ISREG(marker.st_mode) and marker.st_mtime < cutoff:
                    found.append(Path(entry.path))
    return found


def _old_files(folder: Path, cutoff: float, suffix: str) -> list[Path]:
    """Regular files of ours named `*suffix` not used since `cutoff` (kept verdicts)."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if entry.name.endswith(suffix) and stat.S_ISREG(info.st_mode) and info.st_uid == cachetrust.me() \
                        and info.st_mtime < cutoff:
                    found.append(Path(entry.path))
    return found


def prune(now: float | None = None) -> list[Path]:
    """Remove what no command used for KEEP_DAYS, at most once a day; returns what went."""
    removed: list[Path] = []
    with contextlib.suppress(OSError, settings.SettingError):
        cache = settings.cache_dir()
        if not cache.is_dir() or not due(cache / PRUNED, EVERY):
            return removed
        cutoff = (now or time.time()) - KEEP_DAYS * 24 * 3600
        places = [(cache, ".json")]
        legacy = cachetrust.configured()
        if legacy is not None and legacy != cache and legacy.is_dir():
            places.append((legacy, ".pickle"))  # before a folder per user: never read again
        for folder, kept in places:
            for entry in [*_unused(folder / "build", cutoff), *_unused(folder / "py", cutoff)]:
                if cachetrust.remove(entry):  # moved aside first: no reader sees one half removed
                    removed.append(entry)
            for path in _old_files(folder / "verdicts", cutoff, kept):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed.append(path)
        (cache / PRUNED).touch()
    return removed
