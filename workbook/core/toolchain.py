"""What this machine offers: the Mojo compiler, the MAX version, a GPU or not.

Everything here is looked up once per command and cached in the process; a GPU
that MAX found is also kept on disk for the rest of the boot (see gpu()).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from . import settings

PINNED = {"mojo": "1.2.0", "max": "26.7.0"}
# The GPU target that kernels are compiled for when no GPU is here to ask.
DEFAULT_GPU_TARGET = "sm_90"
# On Linux a GPU that MAX can drive has one of these device nodes: NVIDIA's, AMD's (ROCm),
# or WSL2's (an NVIDIA GPU under Windows).
GPU_DEVICE_NODES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dxg")
# What decides which GPUs a process sees, besides the boot, the driver and the device nodes.
GPU_SELECTORS = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")


@dataclass(frozen=True)
class Gpu:
    name: str
    driver: str
    compute_capability: float | None
    vendor: str = "nvidia"

    @property
    def target(self) -> str:
        cc = self.compute_capability
        return f"sm_{int(round(cc * 10))}" if cc else DEFAULT_GPU_TARGET


def mojo_binary() -> Path | None:
    """The `mojo` next to this Python (the virtual environment's), else on PATH."""
    beside = Path(sys.executable).parent / "mojo"
    if beside.exists():
        return beside
    found = shutil.which("mojo")
    return Path(found) if found else None


@functools.lru_cache(maxsize=1)
def mojo_driver() -> tuple[Path, dict[str, str]] | None:
    """The compiler to start for a build, and the environment it needs.

    The wheel's `mojo` is a Python script that imports the wheel, sets four
    MODULAR_* variables and becomes the real driver: a Python start-up (0.04 to
    0.1 s) in front of every build, on the way to the first verdict. Where it is
    that script, the real driver is started directly with the same variables (the
    ambient ones win, as in the script); anything else is started as it is."""
    mojo = mojo_binary()
    if mojo is None:
        return None
    try:
        if mojo.parent != Path(sys.executable).parent or b"mojo._entrypoints" not in mojo.read_bytes()[:4096]:
            return mojo, {}  # not this Python's wheel (its package, imported below, is this Python's)
        from mojo.run import _sdk_default_env  # the wheel's own defaults: pinned with it

        defaults = _sdk_default_env()
    except Exception:  # noqa: BLE001 - a private helper of the wheel: the script still works
        return mojo, {}
    driver = Path(defaults.get("MODULAR_MOJO_MAX_DRIVER_PATH", ""))
    if not driver.name or not os.access(driver, os.X_OK):
        return mojo, {}
    return driver, {k: v for k, v in defaults.items() if k not in os.environ}


@functools.lru_cache(maxsize=1)
def compiler_problem() -> str | None:
    """Why the Mojo compiler does not start here (its last line), or None when it does.

    A grader asks before grading anyone: a compiler that cannot start (a `--target` install
    whose folder is not on PYTHONPATH, a half-removed wheel) would otherwise fail every
    submission as a compile error, honest ones included."""
    found = mojo_driver()
    if found is None:
        return "mojo: not found"
    driver, env = found
    try:
        done = subprocess.run([str(driver), "--version"], env={**os.environ, **env}, capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{driver}: {exc}"
    if done.returncode == 0 and done.stdout.startswith("Mojo"):
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return f"{driver}: " + (lines[-1] if lines else f"exit code {done.returncode}")


@functools.lru_cache(maxsize=1)
def mojo_libs() -> Path | None:
    """The folder of Mojo's runtime libraries (libKGENCompilerRTShared.so and friends),
    which the workbook links the simulator's launcher against itself: `mojo build`
    would add a ThreadSanitizer runtime that the simulator replaces."""
    mojo = mojo_binary()
    candidates: list[Path] = []
    if mojo is not None:
        real = mojo.resolve()
        candidates += [real.parent.parent / "lib", real.parent / "lib"]
        prefix = real.parent.parent
        candidates += sorted(prefix.glob("lib/python3*/site-packages/modular/lib"))
    try:  # the wheel's Python package knows where its files are
        from mojo._package_root import get_package_root

        root = get_package_root()
        if root is not None:
            candidates.append(Path(root) / "lib")
    except Exception:  # noqa: BLE001 - a private helper of the wheel: only a fallback
        pass
    for folder in candidates:
        if (folder / "libKGENCompilerRTShared.so").exists():
            return folder
    return None


def c_compiler() -> str | None:
    """The C compiler driver Mojo itself links with (`cc`)."""
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def mojo_version() -> str | None:
    binary = mojo_binary()
    if binary is None:
        return None
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return words[1] if len(words) > 1 and words[0] == "Mojo" else None


def toolchain_id() -> str:
    """Part of every cache key: artifacts of another toolchain are never reused. Its
    location too: a built program finds Mojo's runtime libraries by absolute path, so
    one built by a since-deleted environment would not even start."""
    mojo = mojo_binary()
    where = str(mojo.resolve()) if mojo else ""
    return f"mojo={package_version('mojo')};max={package_version('max')};py={sys.version_info[:2]};at={where}"


@functools.lru_cache(maxsize=1)
def gpu() -> Gpu | None:
    """The GPU that MAX can use, or None. WORKBOOK_NO_GPU=1 pretends there is none.

    Asking MAX means importing its driver, 0.3 to 0.4 s on a GPU host, and every check
    asks before its first build. So a GPU it found is kept (the cache's gpu/) under a key
    of what could change the answer: the boot, the driver's version, the device nodes,
    the toolchain and the *_VISIBLE_DEVICES settings. "None" is never kept: a driver
    mended without a reboot is seen at once. `workbook doctor` always asks afresh."""
    if settings.no_gpu() or not _device_node():
        return None
    key = _gpu_key()
    kept = _kept_gpu(key) if key else None
    if kept is not None:
        return kept
    found = _ask_max()
    if found is not None and key:
        _keep_gpu(key, found)
    return found


def ask_gpu_afresh() -> Gpu | None:
    """gpu(), without the answer kept on disk (doctor: the place to look when in doubt)."""
    _GPU_LOOKUP.cache_clear()
    key = _gpu_key()
    if key:
        with contextlib.suppress(OSError, settings.SettingError):
            _gpu_file(key).unlink(missing_ok=True)
    return gpu()


_GPU_LOOKUP = gpu  # the cached function itself, even where a test stands another in for gpu


def _ask_max() -> Gpu | None:
    try:
        from max.driver import accelerator_count

        if accelerator_count() == 0:
            return None
    except Exception:  # noqa: BLE001 - any failure to reach a GPU means "no GPU"
        return None
    return _nvidia_details() or Gpu(name="GPU", driver="?", compute_capability=None, vendor="unknown")


def _gpu_key() -> str | None:
    """What the GPUs this process sees depend on, hashed; None where there is no boot id
    to tie an answer to (not Linux)."""
    try:
        boot = BOOT_ID.read_text().strip()
    except OSError:
        return None
    driver = ""
    with contextlib.suppress(OSError):
        driver = NVIDIA_DRIVER.read_text()
    nodes = sorted(node for pattern in GPU_DEVICE_NODES for node in glob.glob(pattern))
    selectors = [f"{name}={os.environ.get(name, '<unset>')}" for name in GPU_SELECTORS]
    text = "\0".join([boot, driver, toolchain_id(), *nodes, *selectors])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _gpu_file(key: str) -> Path:
    return settings.cache_dir() / "gpu" / f"{key}.json"


def _kept_gpu(key: str) -> Gpu | None:
    try:
        data = json.loads(_gpu_file(key).read_text())
        return Gpu(name=str(data["name"]), driver=str(data["driver"]), vendor=str(data["vendor"]),
                   compute_capability=None if data["compute_capability"] is None else float(data["compute_capability"]))
    except (OSError, ValueError, KeyError, TypeError, settings.SettingError):
        return None  # none kept, or damaged: ask


def _keep_gpu(key: str, found: Gpu) -> None:
    with contextlib.suppress(OSError, settings.SettingError):
        path = _gpu_file(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(asdict(found)))
        os.replace(partial, path)


def _device_node() -> bool:
    """Whether a GPU could be here at all. Without a device node on Linux, MAX can only say
    there is none, and asking costs importing its driver first (0.2 s warm, 0.9 s cold on a
    2-core laptop), before the build that gives the learner's first verdict can start."""
    if not sys.platform.startswith("linux"):
        return True  # ask MAX (macOS: Apple's GPUs have no device node)
    return any(glob.glob(pattern) for pattern in GPU_DEVICE_NODES)


def _nvidia_details() -> Gpu | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) < 3:
        return None
    try:
        cc = float(fields[2])
    except ValueError:
        cc = None
    return Gpu(name=fields[0], driver=fields[1], compute_capability=cc)


def gpu_target() -> str:
    """The accelerator that GPU kernels are compiled for: WORKBOOK_GPU_TARGET, this GPU, or sm_90."""
    env = settings.gpu_target()
    if env:
        return env
    found = gpu()
    return found.target if found else DEFAULT_GPU_TARGET
