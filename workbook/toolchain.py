"""What this machine offers: the Mojo compiler, the MAX version, a GPU or not.

Everything here is looked up once per command and cached in the process.
"""

from __future__ import annotations

import functools
import glob
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import settings

PINNED = {"mojo": "1.2.0", "max": "26.7.0"}
# The GPU target that kernels are compiled for when no GPU is here to ask.
DEFAULT_GPU_TARGET = "sm_90"
# On Linux a GPU that MAX can drive has one of these device nodes: NVIDIA's, AMD's (ROCm),
# or WSL2's (an NVIDIA GPU under Windows).
GPU_DEVICE_NODES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dxg")


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
    """The GPU that MAX can use, or None. WORKBOOK_NO_GPU=1 pretends there is none."""
    if settings.no_gpu() or not _device_node():
        return None
    try:
        from max.driver import accelerator_count

        if accelerator_count() == 0:
            return None
    except Exception:  # noqa: BLE001 - any failure to reach a GPU means "no GPU"
        return None
    return _nvidia_details() or Gpu(name="GPU", driver="?", compute_capability=None, vendor="unknown")


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
