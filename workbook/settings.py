"""Every environment variable and path the workbook reads, in one place.

Each is read when asked for (not at import), so a test can set one and see
its effect. The README's "Settings" table lists the same names.

| variable                      | default                        | what it changes                                     |
|-------------------------------|--------------------------------|-----------------------------------------------------|
| WORKBOOK_ROOT                 | the checkout above this package| the folder with puzzles/, solutions/, .workbook/    |
| WORKBOOK_CACHE                | $XDG_CACHE_HOME/workbook       | compiled puzzles, by content                        |
| WORKBOOK_LANG                 | from LANG / LC_ALL             | en or ko                                            |
| WORKBOOK_NO_GPU=1             | unset                          | behave as if there were no GPU                      |
| WORKBOOK_GPU_TARGET           | this GPU's, else sm_90         | the accelerator GPU kernels are compiled for        |
| WORKBOOK_COMPILE_TIMEOUT      | 300 s                          | one Mojo compile                                    |
| WORKBOOK_LOAD_TIMEOUT         | 600 s                          | building one MAX graph                              |
| WORKBOOK_RUN_TIMEOUT          | 60 s                           | running the kernels of one device                   |
| WORKBOOK_KEEP_SANITIZER_LOGS  | unset                          | a folder to copy compute-sanitizer's logs into      |
| WORKBOOK_NO_PROGRESS=1, CI    | unset                          | no live progress display                            |
| CUDA_HOME                     | /usr/local/cuda                | where compute-sanitizer is looked for               |
| MODULAR_CACHE_DIR             | ~/.cache/modular               | MAX's own cache (read by `doctor` only)             |
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
MOJO_SUPPORT = PACKAGE / "mojo"  # wbio.mojo and wbsim.mojo, compiled into every launcher


def _seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def root() -> Path:
    """The workbook folder: WORKBOOK_ROOT, else the checkout above this package."""
    env = os.environ.get("WORKBOOK_ROOT")
    return Path(env).resolve() if env else PACKAGE.parent


def state_dir() -> Path:
    """The learner's progress, backups and logs: <root>/.workbook."""
    return root() / ".workbook"


def logs_dir() -> Path:
    return state_dir() / "logs"


def cache_dir() -> Path:
    """Compiled artefacts: WORKBOOK_CACHE, else ~/.cache/workbook."""
    env = os.environ.get("WORKBOOK_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "workbook"
    base.mkdir(parents=True, exist_ok=True)
    return base


def max_cache_dir() -> Path:
    """Where MAX keeps its compiled graphs (it manages this one itself)."""
    return Path(os.environ.get("MODULAR_CACHE_DIR", Path.home() / ".cache" / "modular"))


def language() -> str | None:
    return os.environ.get("WORKBOOK_LANG") or None


def workspace_language() -> str | None:
    """The language the workspace was made in (`workbook init`), if any."""
    return None


def locale_language() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return value
    return ""


def no_gpu() -> bool:
    return os.environ.get("WORKBOOK_NO_GPU") == "1"


def gpu_target() -> str | None:
    return os.environ.get("WORKBOOK_GPU_TARGET") or None


def compile_timeout() -> float:
    return _seconds("WORKBOOK_COMPILE_TIMEOUT", 300)


def load_timeout() -> float:
    return _seconds("WORKBOOK_LOAD_TIMEOUT", 600)


def run_timeout() -> float:
    return _seconds("WORKBOOK_RUN_TIMEOUT", 60)


def keep_sanitizer_logs() -> Path | None:
    value = os.environ.get("WORKBOOK_KEEP_SANITIZER_LOGS")
    return Path(value) if value else None


def progress_allowed() -> bool:
    """Live progress only for a person at a terminal: never in CI logs."""
    return not (os.environ.get("CI") or os.environ.get("WORKBOOK_NO_PROGRESS") == "1")


def cuda_homes() -> list[str]:
    return [p for p in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/opt/cuda") if p]
