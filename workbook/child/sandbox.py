"""The sandbox that runs a submission's code when an instructor grades it (bubblewrap).

A submitted kernel is code from someone else: on the simulator and the CPU it
runs on the grader's machine, as the grader. So `workbook grade` starts every
process that runs learner code (kernel launchers, compute-sanitizer around
them, MAX graph workers) inside `bwrap` (bubblewrap, a maintained, packaged
sandbox built on Linux namespaces), and the compiler outside it:

- no network: a network namespace of its own, with only a loopback;
- the filesystem read-only, and only what a run needs is there: the system
  (/usr, /etc...), this Python and its packages, the workbook's package, the
  program and its inputs. Its run folder is the one place it can write (and
  the parent watches that folder's size); /dev/shm is a small tmpfs. The
  grader's home, other submissions and the build cache are not there;
- a clean environment, built from an allow-list (`_environment`): HOME, TMPDIR
  and the caches point at the run folder, and of the grader's own environment
  only the names in PASS come in (which GPUs a run may see, where the driver's
  libraries are), never by prefix: no token or key (MODULAR_AUTH, *_TOKEN,
  AWS_*...) reaches submitted code. Mojo's runtime and MAX read no other
  variable to run (tried: the simulator, a CPU op and its MAX graph run with
  this environment alone);
- a PID namespace: every process it starts (a `setsid sleep &` too) dies when
  the run ends or the grader dies (`--die-with-parent`), and it sees no other
  process;
- the limits of workbook/child/limits.py, the process count included. The kernel
  counts processes per user and exempts root, so a grader running as root runs
  the sandbox as a user id of its own (and without capabilities); otherwise
  the count is kept in the sandbox's own user namespace.

`probe()` starts a real one; grading refuses to run without it unless told
to (`--unsandboxed`).
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core import settings
from ..core.i18n import Msg, msg
from .limits import Limits

# Where the sandbox of a root grader runs: a user id of its own per grading process, so the
# process limit counts only its sandboxes (uids this high belong to no one).
UID_BASE = 3_000_000
# What of the grader's environment a run inside may see, by exact name: which GPUs (and in
# which order) the CUDA and ROCm runtimes show it, and where the system keeps the GPU
# driver's libraries (a container's /usr/local/nvidia/lib64). Everything else stays out.
PASS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "LD_LIBRARY_PATH")
SYSTEM = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")


def bwrap() -> str | None:
    return shutil.which("bwrap")


@dataclass(frozen=True)
class Sandbox:
    """How to wrap one child that runs learner code; `wrap()` gives its command line."""

    program: str  # the bwrap binary
    limits: Limits
    uid: int | None = None  # the user the sandbox runs as (a root grader), else None: the grader's own

    @classmethod
    def create(cls, limits: Limits | None = None) -> Sandbox | None:
        found = bwrap()
        if found is None:
            return None
        uid = UID_BASE + os.getpid() if os.getuid() == 0 else None
        return cls(found, limits or Limits.from_settings(), uid)

    def prepare(self, scratch: list[Path]) -> None:
        """Hand the folders it may write to the sandbox's user (a root grader's)."""
        if self.uid is None:
            return
        for folder in scratch:
            os.chown(folder, self.uid, self.uid)

    def wrap(self, argv: list[str], *, scratch: list[Path], reads: list[Path], cwd: Path | None,
             env: dict[str, str], limits: Limits | None = None) -> list[str]:
        """`argv`, as run inside a fresh sandbox: `scratch` folders writable, `reads` readable;
        `limits`: the per-process limits to set inside (default: the sandbox's own)."""
        args = [self.program, "--die-with-parent", "--new-session"]
        if self.uid is not None:  # root: no user namespace (root in one is still exempt from the count)
            args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                     "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-all"]
        for path in SYSTEM:
            if os.path.islink(path):  # /bin -> usr/bin on a merged /usr
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        for pattern in DEVICES:
            for device in sorted(glob.glob(pattern)):
                args += ["--dev-bind", device, device]
        if self.limits.file_mb:
            args += ["--size", str(self.limits.folder_bytes)]
        args += ["--perms", "1777", "--tmpfs", "/dev/shm"]  # anyone's, as a system's is (a root grader's too)
        bound = _outermost([*_python_paths(), settings.PACKAGE, *_pythonpath(), *_toolchain_paths()])
        system = [Path(s) for s in SYSTEM]
        bound += [r for r in dict.fromkeys(reads) if not any(b == r or b in r.parents for b in bound + system)]
        for folder in _ancestors([*bound, *scratch]):  # made by bwrap: readable, or nothing below is
            args += ["--perms", "0755", "--dir", str(folder)]
        for path in bound:
            args += ["--ro-bind", str(path), str(path)]
        for folder in scratch:
            args += ["--bind", str(folder), str(folder)]
        args += ["--remount-ro", "/", "--remount-ro", "/dev"]
        if cwd is not None:
            args += ["--chdir", str(cwd)]
        home = scratch[0] if scratch else Path("/")
        args += ["--clearenv"]
        for name, value in _environment(env, home).items():
            args += ["--setenv", name, value]
        inner = [sys.executable, "-I", "-S", str(settings.EXEC), "0"]
        if self.uid is not None:
            inner.append(f"--uid={self.uid}")
        limits = limits or self.limits
        inner += limits.options(processes=limits.processes)
        return [*args, "--", *inner, "--", *argv]

    def describe(self) -> str:
        return f"bubblewrap ({self.program})" + (f", as uid {self.uid}" if self.uid is not None else "")


def _python_paths() -> list[Path]:
    """This Python, its standard library and its packages (a venv and the Python it was made
    from), where the system folders don't already hold them."""
    found = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                         Path(os.path.realpath(sys.executable)).parent.parent)}
    system = [Path(s) for s in SYSTEM if os.path.isdir(s) and not os.path.islink(s)]
    keep = [p for p in found if p.is_dir() and not any(s == p or s in p.parents for s in system)]
    return sorted(p for p in keep if not any(q in p.parents for q in keep))


def _pythonpath() -> list[Path]:
    """The grader's PYTHONPATH folders (packages installed with `pip --target`, the
    workbook's own checkout): read-only inside, and on the PYTHONPATH there too."""
    raw = os.environ.get("PYTHONPATH", "")
    return [Path(p).resolve() for p in dict.fromkeys(raw.split(os.pathsep)) if p and os.path.isdir(p)]


def _toolchain_paths() -> list[Path]:
    """Mojo's runtime libraries, which the simulator's launchers load, wherever Mojo is
    installed (a venv is bound already; a `--target` install or a system one may not be)."""
    from ..core import toolchain

    libs = toolchain.mojo_libs()
    return [libs.parent.resolve()] if libs is not None else []


def _outermost(paths: list[Path]) -> list[Path]:
    """Each folder once, none inside another (binding both would be binding twice)."""
    system = [Path(s) for s in SYSTEM]
    unique = [p for p in dict.fromkeys(paths) if not any(s == p or s in p.parents for s in system)]
    return [p for p in unique if not any(q in p.parents for q in unique)]


def _ancestors(paths: list[Path]) -> list[Path]:
    """The folders above the bound paths that the sandbox's own root must have, top first."""
    found = {parent for path in paths for parent in path.parents if parent != Path("/")}
    found -= set(paths)
    system = [Path(s) for s in SYSTEM]
    found = {f for f in found if not any(p in f.parents for p in paths + system) and f not in system}
    return sorted(found, key=lambda f: (len(f.parts), str(f)))


def _environment(extra: dict[str, str], home: Path) -> dict[str, str]:
    """The whole environment of a run inside: the allow-list's names from the grader's,
    then what the run needs set, then what the workbook itself gives this child (`extra`:
    the simulator's settings, the GPU a graded run holds)."""
    env = {name: os.environ[name] for name in PASS if name in os.environ}
    env.update({
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MODULAR_CACHE_DIR": str(home / ".modular"),  # MAX's cache: the submission's own, thrown away
    })
    if _pythonpath():
        env["PYTHONPATH"] = os.pathsep.join(map(str, _pythonpath()))
    env.update(extra)
    return env


@functools.lru_cache(maxsize=1)
def probe() -> Msg | None:
    """Start a real sandbox once, as grading will: None if it works, else why not."""
    sandbox = Sandbox.create()
    if sandbox is None:
        return msg("sandbox.no_bwrap")
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="workbook-probe-"))
    try:
        sandbox.prepare([scratch])
        argv = sandbox.wrap([sys.executable, "-I", "-c", "print('sandbox ok')"], scratch=[scratch], reads=[],
                            cwd=scratch, env={})
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return msg("sandbox.cannot_start", why=str(exc))
        if done.returncode != 0 or "sandbox ok" not in done.stdout:
            why = (done.stderr or done.stdout).strip().splitlines()
            return msg("sandbox.cannot_start", why=why[-1] if why else f"exit code {done.returncode}")
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def writable_and_readable(argv: list[str], scratch: Path | None) -> tuple[list[Path], list[Path]]:
    """What a command line needs of the filesystem: the folders it may write (its run
    folder, and the workbook's own temp folder where it is told to write a file that is not
    there yet) and the files it reads (every path it names that exists, and what the links
    in its run folder point at: the inputs). A descriptor it inherits, named by its path in
    /proc (compute-sanitizer's report: `/proc/self/fd/N`), is its own, not a path to bind."""
    writes = [scratch] if scratch else []
    reads: list[Path] = []
    for arg in argv:
        if not arg.startswith("/") or arg.startswith(("/proc/", "/dev/fd/")):
            continue
        path = Path(arg)
        if any(path == w or w in path.parents for w in writes):
            continue
        if path.exists():
            reads.append(path)
        elif path.parent.is_dir() and path.parent.name.startswith("workbook-"):
            writes.append(path.parent)
    if scratch is not None and scratch.is_dir():
        for entry in scratch.iterdir():
            if entry.is_symlink() and entry.resolve().exists():
                reads.append(entry.resolve())
    return writes, reads
