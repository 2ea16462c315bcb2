"""Cache upkeep: what no command has used for a month goes, looked for once a day.

Every edit a learner runs makes a build folder (about half a megabyte) and a kept
verdict; without upkeep the cache only grows. An entry's last use is the time
stamp of its `.complete` marker (build/ and py/, touched by build.py on every use)
or of the file itself (verdicts/, touched by verdicts.py when read). Entries still
being built have no marker yet and are never touched here; one in use was touched
when its command began, so it is weeks away from going.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from . import settings
from .sweep import due

KEEP_DAYS = 30  # an entry unused for this long is removed
PRUNED = ".pruned"  # in the cache: touched when it was last looked through
EVERY = 24 * 3600  # seconds between two looks


def _unused(folder: Path, cutoff: float) -> list[Path]:
    """Finished entries of a content-addressed folder whose marker is older than `cutoff`."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if "." in entry.name or not entry.is_dir(follow_symlinks=False):
                continue  # staging names (.tmp, .gone) are the sweep's
            with contextlib.suppress(OSError):
                if os.stat(os.path.join(entry.path, ".complete")).st_mtime < cutoff:
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
        old = [*_unused(cache / "build", cutoff), *_unused(cache / "py", cutoff)]
        if old:
            from .build import discard  # moved aside first: no reader sees one half removed

            for folder in old:
                discard(folder)
                removed.append(folder)
        with contextlib.suppress(OSError), os.scandir(cache / "verdicts") as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.name.endswith(".pickle") and entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
                        removed.append(Path(entry.path))
        (cache / PRUNED).touch()
    return removed
