"""The one owner of every child process the workbook starts.

Compilers, kernel launchers, MAX graph workers and compute-sanitizer all start
through `Children.start`, and every way out stops them:
- a normal end: each child is waited for, or killed at its time limit;
- Ctrl-C, SIGTERM, SIGHUP: `guard()` turns them into KeyboardInterrupt in the
  main thread, and stops every child of every `Children` before exiting;
- an exception anywhere: `Children` is a context manager that kills what is
  left on the way out;
- the workbook itself killed with SIGKILL: every child asks the kernel to kill
  it when its parent dies (PR_SET_PDEATHSIG, set by `workbook/child/_exec.py` before it
  execs the program, and by the worker and the launchers themselves), and
  enforces its own time limit.

Children run in process groups of their own, so a kill reaches everything a
child started, and the terminal's Ctrl-C reaches only the workbook, which
then stops them in order. A process that leaves its group and its parent
(`setsid sleep &`) is still found: the workbook is its children's subreaper
(PR_SET_CHILD_SUBREAPER), so such an orphan becomes the workbook's own child,
and each child's descendants carry a token in their environment that names
the child they came from; the last thing before exiting kills whatever
descendant is left.

A child that runs learner code (`learner=True`: kernel launchers, graph
workers) gets resource limits (workbook/child/limits.py), a containment of its own
that bounds its whole tree, shared memory included (workbook/child/containment.py: a
cgroup, removed when the child is reaped, or a watcher), and, where the run has
a sandbox (grading: workbook/child/sandbox.py), runs inside it. What it hands back
comes through descriptors opened here before it starts (`pass_fds`, and its
log: workbook/child/channel.py), never through a path it could replace.

A graded run's `Children` has a deadline (the check's whole budget): every wait
on a child ends by then, the compiler's too, and what is still running is
stopped.

One rule keeps PR_SET_PDEATHSIG safe: it fires when the *thread* that started
the child ends, so a child is always waited for by the thread that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import itertools
import math
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..core import settings
from ..core.i18n import Msg
from . import containment as containment_
from . import limits as limits_
from . import sandbox as sandbox_
from .channel import Sink

POLL = 0.05
SOFT_GRACE = 1.0  # seconds a child asked to stop has to say where it was
# Seconds a child killed at its time limit may take to be gone before the wait returns
# anyway (issue 39: a kernel deadlocked on a GPU kept its killed process in the driver,
# and the check waited on it far past the limit). What is still dying then is reaped by a
# thread of its own (`_reap_later`), its cgroup removed once empty or at exit.
KILL_SETTLE = 2.0
WATCH_EVERY = 0.1  # seconds between looks at a learner child's memory and run folder
TOKEN = "WORKBOOK_CHILD"  # in every child's environment: which child a process came from
_ALL: weakref.WeakSet[Children] = weakref.WeakSet()
_tokens = itertools.count(1)
PR_SET_CHILD_SUBREAPER = 36


class Cancelled(Exception):
    """The run was stopped from outside (a newer save in watch mode, or quitting)."""


@dataclass
class Outcome:
    """How a wait ended: the exit code (a signal as its negative, from a sandbox too), or a
    time limit, or a cancel; and the resource limit that stopped a learner child, if one did."""

    returncode: int | None
    timed_out: bool = False
    cancelled: bool = False
    reached: bool = False  # `until` came true while it still runs (Children.wait)
    seconds: float = 0.0
    limit: Msg | None = None


class Child:
    def __init__(self, proc: subprocess.Popen, log: Path | Sink | None, token: str = "",
                 limits: limits_.Limits | None = None, scratch: Path | None = None, sandboxed: bool = False,
                 contain: containment_.Cgroup | containment_.Watcher | None = None, graded: bool = False,
                 fds: tuple[int, ...] = ()):
        self.proc = proc
        self.log = log  # a learner child's is a sink of ours (channel.py), read through our descriptor
        self.fds = fds  # the descriptors it was handed: what it writes there counts towards its limits
        self.token = token
        self.limits = limits  # set for a child that runs learner code
        self.scratch = scratch  # the folder it writes, watched for size
        self.sandboxed = sandboxed
        self.contain = contain  # its tree's memory and processes, bounded as a whole
        self.graded = graded  # its limits are told to a grader, not a learner
        self.started = time.monotonic()
        self.peak = 0  # the most memory one of its processes was seen using
        self.folder_full = False
        self.kind = ""  # which program it is (program_kind), for the CPU tally
        self.cpu = 0.0  # CPU-seconds it (and what it waited for) used, once reaped

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self, limit: int = 4000) -> str:
        """The end of its log, read from the end (a log may be megabytes)."""
        if self.log is None:
            return ""
        if isinstance(self.log, Sink):
            return self.log.tail(4 * limit).decode("utf-8", errors="replace")[-limit:]
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 4 * limit))
                return f.read().decode("utf-8", errors="replace")[-limit:]
        except OSError:
            return ""

    def poll(self) -> int | None:
        """Its exit code once it ended, else None. It is reaped with wait4, whose count of
        the most memory it (or a process it waited for) held is exact, however fast it grew
        and died between two looks; a sampled peak alone missed such a death under load."""
        if self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (a kill from another thread)
                return self.proc.poll()
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.peak = max(self.peak, usage.ru_maxrss * 1024)
                self.cpu = usage.ru_utime + usage.ru_stime
        return self.proc.returncode

    def returncode(self) -> int | None:
        """Its exit code; a sandbox reports a death by signal N as 128 + N, told here as -N."""
        code = self.proc.returncode
        if self.sandboxed and code is not None and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    def watch(self) -> bool:
        """Look at its memory and its run folder; False when the folder is past its limit."""
        if self.limits is None:
            return True
        if self.contain is not None and self.contain.look(self.pid) is not None:
            return False  # past a limit of its whole tree: stopped, and told by outcome()
        if self.limits.memory_mb:
            self.peak = max(self.peak, limits_.peak_data(self.pid))
        if self.limits.file_mb and self.scratch is not None:
            cap = self.limits.folder_bytes
            if limits_.folder_size(self.scratch, cap) + sum(self._sizes(used=True)) > cap:
                self.folder_full = True
                return False
        return True

    def _sizes(self, used: bool = False) -> list[int]:
        """The sizes of what it writes through descriptors (its log too): in bytes, or
        (`used`) in what they take on disk."""
        found = []
        for fd in self.fds:
            with contextlib.suppress(OSError):
                info = os.fstat(fd)
                found.append(info.st_blocks * 512 if used else info.st_size)
        if isinstance(self.log, Sink):
            found.append(self.log.used() if used else self.log.size())
        return found

    def outcome(self, seconds: float) -> Outcome:
        code = self.returncode()
        limit = None
        if self.limits is not None:
            size = max([0, *self._sizes()])  # any file it wrote up to the limit (outputs too): cut short
            if isinstance(self.log, Path) and self.log.exists():
                size = max(size, self.log.stat().st_size)
            if self.scratch is not None:
                size = max(size, limits_.largest_file(self.scratch))
            stop = self.contain.stopped() if self.contain is not None else None
            limit = self.limits.why_stopped(code, self.peak, self.log_text(), self.folder_full, size, stop=stop,
                                            graded=self.graded)
        return Outcome(code, seconds=seconds, limit=limit)

    def gone(self, timeout: float) -> bool:
        """Wait until its process has ended (killed, it may linger in the driver a while:
        a GPU context is torn down first), at most `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL)
        return True

    def release(self) -> None:
        """Remove its containment (a cgroup: whatever is left in it is killed first)."""
        if self.contain is not None:
            self.contain.close()


def _reap_later(child: Child, every: float = 1.0) -> None:
    """Reap a killed child that is still dying (inside a driver), and then remove its
    containment, from a thread of its own, so that no wait hangs on it. A daemon thread:
    at exit, kill_everything() and containment.finish() take what is left, and a process
    already killed is never left running."""

    def reap() -> None:
        while child.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGKILL)
            time.sleep(every)
        child.release()

    threading.Thread(target=reap, name=f"reap-{child.pid}", daemon=True).start()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _subreaper() -> None:
    """Orphans of our children become ours, not init's: nothing escapes by leaving its parent."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)


def _carrying(token: str) -> list[psutil.Process]:
    """Our descendants whose environment names `token`: what one child started, wherever
    it went (a process that left its group and was adopted by us is among them)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if p.environ().get(TOKEN) == token:
                found.append(p)
    return found


def _reap(procs: list[psutil.Process], owned: set[int]) -> None:
    """Collect adopted orphans once they are dead (never a child a Popen waits for)."""
    me = os.getpid()
    for p in procs:
        with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
            if p.pid not in owned and p.ppid() == me:
                p.wait(timeout=1)


def kill_tree(proc: subprocess.Popen, timeout: float = 5.0, token: str = "") -> None:
    """Kill a child, its process group and everything it started, however deep (and,
    with its `token`, whatever it started that left the group), then reap it. The child
    is stopped first, so it can start nothing new."""
    family = _descendants(proc.pid)
    for p in [psutil.Process(proc.pid)] if proc.poll() is None else []:
        with contextlib.suppress(psutil.Error):
            p.suspend()
    family += [p for p in _descendants(proc.pid) if p not in family]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    strays = [p for p in _carrying(token) if p not in family and p.pid != proc.pid] if token else []
    family += strays
    for p in family:
        with contextlib.suppress(psutil.Error):
            p.kill()
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    for p in family:
        with contextlib.suppress(psutil.Error):
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
    _reap(strays, {proc.pid})



def _rlimits(limits: limits_.Limits, contain) -> limits_.Limits:
    """The per-process limits to set besides the containment. Where a cgroup holds the
    child's memory (its resident pages, shared memory included), RLIMIT_DATA stays off:
    it counts address space a process only reserved (each runtime thread's stack, a GPU
    driver's mappings), so it grows with the machine: on a 32-core GPU host a right
    kernel's launcher passed 512 MB of it at start-up (issue 38's class, 2026-11-28)."""
    if contain is not None and contain.kind == "cgroup" and contain.memory_bytes:
        return dataclasses.replace(limits, memory_mb=0)
    return limits

class Children:
    """The child processes of one run; `cancel()` (from any thread) stops them all."""

    def __init__(self, sandbox: sandbox_.Sandbox | None = None, limits: limits_.Limits | None = None,
                 graded: bool = False, budget: float | None = None) -> None:
        """`sandbox`: where learner children run (grading: workbook/child/sandbox.py);
        `limits`: theirs (default: the settings', read when one starts); `graded`: the
        run is a grader's (its limits are told in a grader's words, and its GPU runs
        own their GPU: workbook/child/gpulease.py); `budget`: seconds from now by which every
        wait ends (a graded check's whole budget), None for none."""
        self._live: list[Child] = []
        self._lock = threading.Lock()
        self._cpu: dict[str, float] = {}
        self.cancelled = threading.Event()
        self.sandbox = sandbox
        self.limits = limits
        self.graded = graded
        self.deadline = None if budget is None else time.monotonic() + budget
        _ALL.add(self)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc) -> None:
        self.kill_all()

    def left(self) -> float | None:
        """Seconds left before the deadline (None: there is none)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def start(self, argv: list[str], *, log: Path | Sink | None = None, env: dict[str, str] | None = None,
              cwd: Path | None = None, learner: bool = False, scratch: Path | None = None,
              reads: tuple[Path, ...] = (), memory_extra_mb: int = 0, nice: int = 0,
              pass_fds: tuple[int, ...] = ()) -> Child:
        """Start a program in a process group of its own, dying with this process.

        `log`: where its stdout and stderr go (a learner child's: a sink of ours, never a
        path it could replace). `learner`: it runs learner code, so it gets the resource
        limits, and runs in this run's sandbox if it has one, writing only to `scratch`
        (default: `cwd`) and reading `reads` besides what its command line names.
        `pass_fds`: descriptors it inherits under the same numbers (through _exec.py and the
        sandbox): its channel (channel.py). `memory_extra_mb`: memory the workbook's own
        data needs in it (a launcher's buffers), on top of the learner's allowance.
        `nice`: how much lower than the workbook it runs (a compile that can wait)."""
        if self.cancelled.is_set():
            raise Cancelled()
        _subreaper()
        token = f"{os.getpid()}-{next(_tokens)}"
        kind = program_kind(argv)
        options: list[str] = []
        limits = None
        contain = None
        scratch = scratch or cwd
        extra = dict(env or {})
        if learner:
            limits = self.limits or limits_.Limits.from_settings()
            if limits.memory_mb and memory_extra_mb > 0:
                limits = dataclasses.replace(limits, memory_mb=limits.memory_mb + memory_extra_mb)
            contain = containment_.create(limits.memory_mb * limits_.MB, limits.processes)
            rlimits = _rlimits(limits, contain)
            if self.sandbox is not None:
                try:
                    writes, seen = sandbox_.writable_and_readable(argv, scratch)
                    self.sandbox.prepare(writes)
                except BaseException:  # nothing started: its cgroup goes now
                    if contain is not None:
                        contain.close()
                    raise
                if self.sandbox.uid is not None:  # a root grader's: its user may reopen them (/proc/self/fd)
                    for fd in pass_fds:
                        with contextlib.suppress(OSError):
                            os.fchown(fd, self.sandbox.uid, self.sandbox.uid)
                argv = self.sandbox.wrap(argv, scratch=writes, reads=[*seen, *reads], cwd=cwd,
                                         env={**extra, TOKEN: token}, limits=rlimits)
                extra = {}
            else:
                options += rlimits.options(processes=rlimits.processes_here())
            if contain is not None:  # joined first, outside the sandbox: bwrap is inside too
                options = [*contain.options(), *options]
        if nice > 0:
            options.append(f"--nice={nice}")
        try:
            opened = isinstance(log, Path)
            out = open(log, "wb") if opened else log.fd if isinstance(log, Sink) else subprocess.DEVNULL  # noqa: SIM115
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(settings.EXEC), str(os.getpid()), *options, "--", *argv],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, pass_fds=pass_fds,
                    env={**os.environ, **extra, TOKEN: token}, cwd=str(cwd) if cwd else None,
                    start_new_session=True,
                )
            finally:
                if opened:
                    out.close()
        except BaseException:
            if contain is not None:
                contain.close()
            raise
        child = Child(proc, log, token, limits, scratch if learner else None, learner and self.sandbox is not None,
                      contain, self.graded, fds=pass_fds)
        child.kind = kind
        with self._lock:
            self._live.append(child)
        return child

    def wait(self, child: Child, limit: Callable[[], float | None] | float | None = None,
             tick: Callable[[], None] | None = None, soft: int | None = None,
             until: Callable[[], bool] | None = None) -> Outcome:
        """Wait for a child; kill it past its time limit (`limit` may be a function,
        asked again at each poll: the limit can depend on what the child is doing),
        or, for learner code, past its run folder's size limit. `soft`: a signal that
        asks the child to stop and say where it was, sent at the limit; it is killed if
        it has not ended a moment later. `until`: return (`reached`, the child still
        running, to be waited for again) as soon as it says so."""
        looked = 0.0
        while child.poll() is None:
            if until is not None and until():
                return Outcome(None, reached=True, seconds=time.monotonic() - child.started)
            if self.cancelled.is_set():
                self.kill(child)
                return Outcome(None, cancelled=True, seconds=time.monotonic() - child.started)
            seconds = limit() if callable(limit) else limit
            if self.deadline is not None:  # the run's whole budget bounds every wait
                seconds = min(seconds if seconds is not None else math.inf, self.deadline - child.started)
            if seconds is not None and time.monotonic() - child.started > seconds:
                if soft is not None:
                    with contextlib.suppress(OSError):
                        child.proc.send_signal(soft)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        child.proc.wait(SOFT_GRACE)
                self.kill(child, settle=KILL_SETTLE)
                return Outcome(child.proc.returncode, timed_out=True, seconds=time.monotonic() - child.started)
            if time.monotonic() - looked > WATCH_EVERY:
                looked = time.monotonic()
                if not child.watch():
                    self.kill(child)
                    return child.outcome(time.monotonic() - child.started)
            if tick:
                tick()
            time.sleep(POLL)
        self.kill(child)  # it ended; this reaps anything it left behind
        seconds = time.monotonic() - child.started
        if self.cancelled.is_set():  # killed by a cancel from another thread
            return Outcome(None, cancelled=True, seconds=seconds)
        child.watch()  # a last look: what it wrote after the last one counts too
        return child.outcome(seconds)

    def run(self, argv: list[str], *, timeout: float, log: Path, cwd: Path | None = None,
            env: dict[str, str] | None = None, tick: Callable[[], None] | None = None,
            learner: bool = False, nice: int = 0) -> Outcome:
        return self.wait(self.start(argv, log=log, cwd=cwd, env=env, learner=learner, nice=nice), timeout, tick)

    def kill(self, child: Child, settle: float | None = None) -> None:
        """Kill its tree and reap it. `settle`: wait at most that long for it to be gone
        (a process killed inside a GPU driver may take minutes); past it, a thread of its
        own reaps it and removes its containment, and this returns at once."""
        if settle is None:
            kill_tree(child.proc, token=child.token)
            child.release()
        else:
            kill_tree(child.proc, timeout=settle / 2, token=child.token)
            if child.gone(settle / 2):
                child.release()
            else:
                _reap_later(child)
        with self._lock:
            if child in self._live:
                self._live.remove(child)
                self._cpu[child.kind] = self._cpu.get(child.kind, 0.0) + child.cpu

    def cpu_seconds(self) -> dict[str, float]:
        """CPU-seconds per program (program_kind) of the children that ended so far: where
        a check's compute went. A child killed before it was reaped counts as 0."""
        with self._lock:
            return dict(self._cpu)

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for child in live:
            self.kill(child)

    def cancel(self) -> None:
        """Stop everything this run started, and refuse to start more."""
        self.cancelled.set()
        self.kill_all()

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()


def program_kind(argv: list[str]) -> str:
    """What a command is, in a word or two, for the CPU tally: `mojo build`, `mojo
    precompile`, `cc`, `compute-sanitizer`, `graph worker`, `graph build` (the learner's graph
    file, run: workbook/run/graphrun.py), or `launcher` (a program the
    workbook built: the simulator's or the GPU's)."""
    name = Path(argv[0]).name if argv else ""
    if name == "mojo":
        return f"mojo {argv[1]}" if len(argv) > 1 else name
    if name.startswith("python"):
        return "graph worker" if "workbook.run.worker" in argv else "graph build" if "workbook.run.graphbuild" in argv \
            else "python"
    if name in ("cc", "gcc", "clang", "compute-sanitizer", "nvidia-smi"):
        return name
    # build.py names a launcher's binary host[-unwatched][-g1] or gpu-TARGET[-g1]
    return "launcher" if name.startswith(("host", "gpu-")) else name


def own_age() -> float | None:
    """Seconds since this process was created: the interpreter's start and every import
    before the caller (the start-up a learner waits through before the first compile).
    Linux's start time, in clock ticks since boot, against the boot clock; None where
    either is missing, or where they disagree (a start after now)."""
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime; comm may hold spaces
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return age if age >= 0 else None


def kill_everything() -> None:
    """Every child of every run in this process, and whatever they started that is still
    here (one that left its group): the last thing before exiting."""
    for children in list(_ALL):
        children.cancel()
    containment_.finish()
    left = []
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if TOKEN in p.environ():
                p.kill()
                left.append(p)
    _reap(left, set())


def _interrupt(signum, frame):  # noqa: ARG001 - the signal handler signature
    raise KeyboardInterrupt


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """For the main thread of a command: SIGTERM and SIGHUP end it like Ctrl-C,
    and nothing it started outlives it, however it ends."""
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                saved[sig] = signal.signal(sig, _interrupt)
    try:
        yield
    finally:
        kill_everything()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
