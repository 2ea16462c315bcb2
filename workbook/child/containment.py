"""Memory and processes bounded for the whole of a learner child: every process it starts,
and the shared memory they make, counted together.

The per-process limits of workbook/child/limits.py (RLIMIT_DATA, RLIMIT_NPROC) let the issue's
submissions through: a file in /dev/shm, a memfd or an anonymous MAP_SHARED mapping is no
process's data (5.9 GB under a 512 MB limit), and eight forked processes, each under the
limit, took 2.1 GB together. So every learner child (workbook/child/processes.py) gets a
`Containment` of its own, made before it starts and removed after it ends:

- a cgroup, where this process may make one: cgroup v2 (in its own cgroup, or the nearest
  one above it that hands out the memory and pids controllers and that it may write: a
  subtree systemd delegated, or any as root), else cgroup v1's memory and pids hierarchies
  (in its own cgroups there). The limits are set (memory.max or memory.limit_in_bytes,
  swap too, pids.max) and the child joins it itself (workbook/child/_exec.py) before it becomes
  the program, so everything it starts is inside, and every page it charges (tmpfs, memfd,
  shared mappings, page tables) counts. The kernel stops it at the limit (its OOM killer,
  inside the cgroup only); the cgroup's own counters say so afterwards (memory.events,
  memory.oom_control, pids.events), so the learner reads which limit, not a bare SIGKILL;
- where no cgroup can be had: a watcher in the parent (`Watcher`), which adds up at each
  look what the child's tree holds (each process's proportional share of what it maps,
  plus shared-memory files it holds open or left in the sandbox's /dev/shm) and its tasks,
  and stops the tree past a limit. It looks every tenth of a second, so a fast allocation
  can pass the limit briefly; the per-process rlimits stay under it.

No cgroup is left behind: one is removed as its child is reaped (its processes killed
first), on Ctrl-C too (processes.kill_everything). A workbook killed by SIGKILL can't;
each cgroup's name carries its creator's pid namespace, pid and start time
(`workbook-NS-PID-START-N`), and the first containment a later workbook makes removes the
ones whose creator is gone, wherever they are in the hierarchy.

WORKBOOK_CONTAINMENT=watcher forces the watcher (to test it where cgroups exist).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import stat
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ..core import settings

MB = 1 << 20
PREFIX = "workbook-"
NAME = re.compile(r"^workbook-(\d+)-(\d+)-(\d+)-\d+$")
CGROUP2, CGROUP1, WATCHER = "cgroup2", "cgroup1", "watcher"
_count = itertools.count(1)
SWEEP_MOST = 20000  # cgroup folders a sweep looks at, at most (a big systemd host has a few thousand)


@dataclass(frozen=True)
class Support:
    """What containment this process can have: the kind, and where its cgroups are made
    (v2: one folder; v1: the memory hierarchy's, then the pids one's, if any)."""

    kind: str
    parents: tuple[Path, ...] = ()
    why: str = ""  # why no cgroup, for the watcher

    def describe(self) -> str:
        """Its kind and where, in no language (a report's JSON and table show it as it is)."""
        if self.kind == WATCHER:
            return WATCHER
        controllers = "memory, pids" if self.kind == CGROUP2 or len(self.parents) > 1 else "memory"
        return f"{self.kind} ({controllers}): {', '.join(map(str, self.parents))}"


# --- where cgroups are ------------------------------------------------------------------


@dataclass(frozen=True)
class _Mount:
    fstype: str
    point: Path
    root: str
    options: frozenset[str]


def _mounts() -> list[_Mount]:
    found = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        found.append(_Mount(tail[0], Path(point), fields[3], frozenset(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for v2's, else each v1 controller's name."""
    found: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            found[""] = path
        for name in controllers.split(","):
            if name:
                found[name] = path
    return found


def _folder(mount: _Mount, path: str) -> Path | None:
    """Where cgroup `path` lies under `mount` (a mount of a sub-tree, or a cgroup namespace,
    shows only part of the hierarchy)."""
    if mount.root != "/" and path.startswith(mount.root):
        path = path[len(mount.root):]
    elif mount.root != "/":
        return None
    folder = mount.point / path.lstrip("/")
    return folder if folder.is_dir() else None


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _v2_parent(mounts: list[_Mount], own: dict[str, str]) -> Path | None:
    """The nearest cgroup at or above this process's own that hands out memory and pids
    to the cgroups made in it, and that this process may write."""
    mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if mount is None or "" not in own:
        return None
    here = _folder(mount, own[""])
    while here is not None and (here == mount.point or mount.point in here.parents):
        try:
            handed = set((here / "cgroup.subtree_control").read_text().split())
        except OSError:
            handed = set()
        if {"memory", "pids"} <= handed and _writable(here):
            return here
        if here == mount.point:
            break
        here = here.parent
    return None


def _v1_parent(mounts: list[_Mount], own: dict[str, str], controller: str) -> Path | None:
    mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
    if mount is None or controller not in own:
        return None
    here = _folder(mount, own[controller])
    return here if here is not None and _writable(here) else None


def _candidates() -> list[Support]:
    mounts, own = _mounts(), _own_paths()
    found = []
    v2 = _v2_parent(mounts, own)
    if v2 is not None:
        found.append(Support(CGROUP2, (v2,)))
    memory = _v1_parent(mounts, own, "memory")
    if memory is not None:
        pids = _v1_parent(mounts, own, "pids")
        found.append(Support(CGROUP1, (memory,) if pids is None else (memory, pids)))
    return found


def _probe(candidate: Support) -> str:
    """Make a cgroup there and start a real child that joins it, as a run will (a shell:
    the cheapest process to start; the join is the kernel's to allow or not): "" when
    that works, else why not."""
    try:
        group = Cgroup(candidate, memory_bytes=256 * MB, tasks=16)
    except OSError as exc:
        return f"can't make a cgroup in {candidate.parents[0]}: {exc.strerror or exc}"
    join = 'for d in "$@"; do echo $$ > "$d/cgroup.procs" || exit 1; done'
    try:
        done = subprocess.run(["/bin/sh", "-c", join, "sh", *map(str, group.dirs)], capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            return lines[-1] if lines else f"exit code {done.returncode}"
        return ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        group.close()


_support_lock = threading.Lock()
_support: dict[str, Support] = {}


def support() -> Support:
    """The containment this process can have (found once, by trying; WORKBOOK_CONTAINMENT
    decides anew each time it changes). The first call also removes the cgroups that
    workbooks killed before they could left behind."""
    wanted = settings.containment()
    with _support_lock:
        if wanted in _support:
            return _support[wanted]
        if wanted == WATCHER:
            found = Support(WATCHER, why="WORKBOOK_CONTAINMENT=watcher")
        else:
            found = None
            why = []
            for candidate in _candidates():
                problem = _probe(candidate)
                if not problem:
                    found = candidate
                    break
                why.append(f"{candidate.kind}: {problem}")
            if found is None:
                found = Support(WATCHER, why="; ".join(why) or "no cgroup this process may write")
            else:
                with contextlib.suppress(OSError):
                    sweep()
        _support[wanted] = found
        return found


def create(memory_bytes: int, tasks: int) -> Cgroup | Watcher | None:
    """The containment of one learner child, with its limits (0: none); None where it has none."""
    if not memory_bytes and not tasks:
        return None
    found = support()
    if found.kind == WATCHER:
        return Watcher(memory_bytes, tasks)
    try:
        return Cgroup(found, memory_bytes, tasks)
    except OSError:  # the hierarchy changed under us (a full one, a removed parent): watch instead
        return Watcher(memory_bytes, tasks)


# --- a cgroup of one child ----------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(text: str, name: str) -> int:
    """`name N` from a flat-keyed cgroup file (memory.events, memory.oom_control, pids.events)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


def _number(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else 0


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _identity() -> tuple[int, int, int]:
    """This process, as a cgroup's name says it: pid namespace, pid, start time (ticks)."""
    ns = os.stat("/proc/self/ns/pid").st_ino
    return ns, os.getpid(), _start_time(os.getpid())


def _start_time(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return int(text.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return -1


@dataclass
class Stop:
    """Which of its limits a child was stopped by, as the containment saw it."""

    memory: bool = False
    processes: bool = False
    peak: int = 0  # the most memory the whole tree held, where known (bytes)


class Cgroup:
    """One child's cgroup (v2: one folder; v1: one in the memory hierarchy, one in pids)."""

    kind = "cgroup"

    def __init__(self, where: Support, memory_bytes: int, tasks: int):
        self.version = where.kind
        self.memory_bytes, self.tasks = memory_bytes, tasks
        name = f"{PREFIX}{'-'.join(map(str, _identity()))}-{next(_count)}"
        self.dirs = [parent / name for parent in where.parents]
        self.seen = Stop()
        self._closed = False
        self._lock = threading.Lock()
        made = []
        try:
            for folder in self.dirs:
                folder.mkdir(mode=0o755)
                made.append(folder)
            self._set_limits()
        except OSError:
            for folder in reversed(made):
                _remove(folder, time.monotonic() + 1)
            raise

    def _set_limits(self) -> None:
        if self.version == CGROUP2:
            (folder,) = self.dirs
            if self.memory_bytes:
                _write(folder / "memory.max", str(self.memory_bytes))
                if (folder / "memory.swap.max").exists():
                    _write(folder / "memory.swap.max", "0")
            if self.tasks:
                _write(folder / "pids.max", str(self.tasks))
            return
        memory = self.dirs[0]
        if self.memory_bytes:
            _write(memory / "memory.limit_in_bytes", str(self.memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # memory and swap together
                _write(memory / "memory.memsw.limit_in_bytes", str(self.memory_bytes))
        if self.tasks and len(self.dirs) > 1:
            _write(self.dirs[1] / "pids.max", str(self.tasks))

    def options(self) -> list[str]:
        """What workbook/child/_exec.py is told, so that the child joins before it becomes the program."""
        return [f"--cgroup={folder}" for folder in self.dirs]

    def describe(self) -> str:
        return f"{self.version} {', '.join(map(str, self.dirs))}"

    def look(self, pid: int) -> Stop | None:  # noqa: ARG002 - the watcher's signature
        """Whether it ran into a limit: the kernel already stopped what it could not allow
        (a fork refused, a process killed); the rest of the tree is stopped now too."""
        stop = self._events()
        return stop if stop.memory or stop.processes else None

    def _events(self) -> Stop:
        stop = Stop()
        if self.version == CGROUP2:
            (folder,) = self.dirs
            events = _read(folder / "memory.events")
            stop.memory = _counter(events, "oom_kill") > 0 or _counter(events, "oom") > 0
            stop.processes = _counter(_read(folder / "pids.events"), "max") > 0
            stop.peak = _number(_read(folder / "memory.peak"))
        else:
            memory = self.dirs[0]
            stop.memory = _counter(_read(memory / "memory.oom_control"), "oom_kill") > 0
            stop.peak = _number(_read(memory / "memory.max_usage_in_bytes"))
            if len(self.dirs) > 1:
                stop.processes = _counter(_read(self.dirs[1] / "pids.events"), "max") > 0
        return stop

    def stopped(self) -> Stop:
        """What it ran into, read before the cgroup is removed (and kept after)."""
        with self._lock:
            if not self._closed:
                self.seen = self._events()
            return self.seen

    def close(self) -> None:
        """Kill whatever is still inside, and remove the cgroup (once; from any thread)."""
        with self._lock:
            if self._closed:
                return
            self.seen = self._events()
            self._closed = True
            deadline = time.monotonic() + 5
            for folder in self.dirs:
                _empty(folder, deadline)
            for folder in self.dirs:
                if not _remove(folder, deadline):  # a process still dying (in a driver, say)
                    with _pending_lock:
                        _pending.append(folder)


_pending: list[Path] = []
_pending_lock = threading.Lock()


def finish(timeout: float = 5.0) -> None:
    """The last thing before exiting: the cgroups whose last process was still dying when
    they were closed are emptied and removed now (what is still left, the next workbook's
    sweep removes)."""
    deadline = time.monotonic() + timeout
    with _pending_lock:
        left = list(_pending)
        _pending.clear()
    for folder in left:
        _empty(folder, deadline)
        if not _remove(folder, deadline):
            with _pending_lock:
                _pending.append(folder)


def _pids(folder: Path) -> list[int]:
    return [int(p) for p in _read(folder / "cgroup.procs").split() if p.isdigit()]


def _empty(folder: Path, deadline: float) -> None:
    """Kill every process in a cgroup until none is left (a fork between two looks is
    caught at the next; v2's cgroup.kill does it at once where the kernel has it)."""
    if (folder / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            _write(folder / "cgroup.kill", "1")
    if (folder / "pids.max").exists():
        with contextlib.suppress(OSError):
            _write(folder / "pids.max", "0")  # no new process from here on
    while time.monotonic() < deadline:
        left = _pids(folder)
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _remove(folder: Path, deadline: float) -> bool:
    """rmdir, retried a moment while the last processes finish dying."""
    while True:
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY) or time.monotonic() > deadline:
                return False
        time.sleep(0.02)


def sweep() -> list[Path]:
    """Remove the cgroups of workbooks that are gone (killed before they could), in every
    hierarchy this process sees, killing what is left in them first. Only ours to judge:
    same pid namespace, a creator no longer running."""
    ns = os.stat("/proc/self/ns/pid").st_ino
    removed = []
    roots = [m.point for m in _mounts() if m.fstype == "cgroup2" or m.options & {"memory", "pids"}]
    looked = 0
    for root in roots:
        pending = [root]
        while pending and looked < SWEEP_MOST:
            here = pending.pop()
            looked += 1
            try:
                entries = list(os.scandir(here))
            except OSError:
                continue
            for entry in entries:
                with contextlib.suppress(OSError):
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    match = NAME.match(entry.name)
                    if match is None:
                        pending.append(Path(entry.path))
                        continue
                    owner_ns, pid, start = map(int, match.groups())
                    if owner_ns != ns or _start_time(pid) == start:
                        continue  # another namespace's (not ours to judge), or its creator runs
                    folder = Path(entry.path)
                    deadline = time.monotonic() + 2
                    _empty(folder, deadline)
                    if _remove(folder, deadline):
                        removed.append(folder)
    return removed


def ours() -> list[Path]:
    """The cgroups this process has now (a test's check that none is left behind)."""
    ns, pid, start = _identity()
    found = []
    for m in _mounts():
        if m.fstype != "cgroup2" and not m.options & {"memory", "pids"}:
            continue
        for folder in m.point.rglob(f"{PREFIX}{ns}-{pid}-{start}-*"):
            found.append(folder)
    return found


# --- the watcher, where no cgroup can be had ----------------------------------------------


SHARED_PATHS = ("/memfd:", "/dev/shm/", "/SYSV", "/dev/zero")


@dataclass
class Watcher:
    """A child's limits kept by looking: its tree's memory, shared memory included, and tasks."""

    memory_bytes: int
    tasks: int
    seen: Stop = field(default_factory=Stop)
    next_look: float = 0.0  # a look at a big tree costs (18 ms for 1 GB): at most a tenth of a core
    kind = WATCHER

    def options(self) -> list[str]:
        return []

    def describe(self) -> str:
        return WATCHER

    def look(self, pid: int) -> Stop | None:
        began = time.monotonic()
        if began < self.next_look:
            return None
        try:
            root = psutil.Process(pid)
            family = [root, *root.children(recursive=True)]
        except psutil.Error:
            return None
        if self.tasks:
            count = 0
            for proc in family:
                with contextlib.suppress(psutil.Error):
                    count += proc.num_threads()
            if count > self.tasks:
                self.seen.processes = True
        if self.memory_bytes:
            used = tree_memory([p.pid for p in family])
            self.seen.peak = max(self.seen.peak, used)
            if used > self.memory_bytes:
                self.seen.memory = True
        self.next_look = began + 10 * (time.monotonic() - began)
        return self.seen if self.seen.memory or self.seen.processes else None

    def stopped(self) -> Stop:
        return self.seen

    def close(self) -> None:
        return None


def tree_memory(pids: list[int]) -> int:
    """The memory a tree of processes holds: each one's proportional share of what it maps
    (Pss: private pages whole, shared ones split among those sharing them, mapped shared
    memory among them), plus the shared-memory files none of them maps but they keep: open
    (a memfd, a file in /dev/shm) or in the /dev/shm of their own (the sandbox's tmpfs)."""
    total = 0
    mapped: set[tuple[int, int]] = set()
    kept: dict[tuple[int, int], int] = {}
    shm_roots: set[int] = set()
    for pid in pids:
        total += _pss(pid)
        mapped |= _mapped_files(pid)
        _open_shared(pid, kept)
        _shm_folder(pid, kept, shm_roots)
    return total + sum(size for key, size in kept.items() if key not in mapped)


def _pss(pid: int) -> int:
    for line in _read(Path(f"/proc/{pid}/smaps_rollup")).splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def _mapped_files(pid: int) -> set[tuple[int, int]]:
    found = set()
    for line in _read(Path(f"/proc/{pid}/maps")).splitlines():
        fields = line.split(None, 5)
        if len(fields) < 5 or fields[4] == "0":
            continue
        major, _, minor = fields[3].partition(":")
        with contextlib.suppress(ValueError):
            found.add((os.makedev(int(major, 16), int(minor, 16)), int(fields[4])))
    return found


def _open_shared(pid: int, kept: dict[tuple[int, int], int]) -> None:
    folder = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(folder)
    except OSError:
        return
    for fd in fds:
        with contextlib.suppress(OSError):
            target = os.readlink(f"{folder}/{fd}")
            if not target.startswith(SHARED_PATHS):
                continue
            info = os.stat(f"{folder}/{fd}")
            if stat.S_ISREG(info.st_mode):
                kept[(info.st_dev, info.st_ino)] = info.st_blocks * 512


def _shm_folder(pid: int, kept: dict[tuple[int, int], int], seen: set[int]) -> None:
    """The files in the process's own /dev/shm (a sandbox's tmpfs, seen from outside
    through /proc/PID/root), once per tmpfs; never the machine's own /dev/shm, whose files
    are not the tree's to count."""
    base = f"/proc/{pid}/root/dev/shm"
    try:
        device = os.stat(base).st_dev
        if device in seen or device == os.stat("/dev/shm").st_dev:
            return
    except OSError:
        return
    seen.add(device)
    pending, looked = [base], 0
    while pending and looked < 10000:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            looked += 1
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
                elif stat.S_ISREG(info.st_mode):
                    kept[(info.st_dev, info.st_ino)] = info.st_blocks * 512

