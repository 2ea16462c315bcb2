"""Every environment variable and path the workbook reads, in one place.

Each is read when asked for (not at import), so a test can set one and see
its effect. The README's "Settings" table lists the same names.

| variable                      | default                        | what it changes                                     |
|-------------------------------|--------------------------------|-----------------------------------------------------|
| WORKBOOK_ROOT                 | found from the current folder  | the workspace (or checkout): puzzles/, .workbook/   |
| WORKBOOK_CACHE                | $XDG_CACHE_HOME/workbook       | compiled puzzles, by content                        |
| WORKBOOK_LANG                 | from LANG / LC_ALL             | en or ko                                            |
| WORKBOOK_NO_GPU=1             | unset                          | behave as if there were no GPU                      |
| WORKBOOK_GPU_TARGET           | this GPU's, else sm_90         | the accelerator GPU kernels are compiled for        |
| WORKBOOK_COMPILE_TIMEOUT      | 300 s                          | one Mojo compile                                    |
| WORKBOOK_LOAD_TIMEOUT         | 600 s                          | building one MAX graph                              |
| WORKBOOK_RUN_TIMEOUT          | 60 s                           | running the kernels of one device                   |
| WORKBOOK_SIM_STRETCH          | 5 s                            | one simulated thread between two barriers           |
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


WORKSPACE_MARKER = Path(".workbook") / "workspace.json"  # written by `workbook init`


def is_checkout(folder: Path) -> bool:
    """A clone of the workbook: its puzzles next to their solutions."""
    return (folder / "puzzles" / "chapters.toml").is_file() and (folder / "solutions").is_dir()


def curriculum() -> Path:
    """Where the puzzles and solutions come from: the checkout this package sits in, or
    the copy installed inside the package (pipx install, a wheel)."""
    return PACKAGE.parent if is_checkout(PACKAGE.parent) else PACKAGE / "_curriculum"


def find_root() -> Path | None:
    """The learner's folder: WORKBOOK_ROOT; else, like git, the current folder or the
    nearest one above it that is a workspace (`workbook init`) or a checkout; else the
    checkout this package sits in; None when there is none."""
    env = os.environ.get("WORKBOOK_ROOT")
    if env:
        return Path(env).resolve()
    try:
        here = Path.cwd().resolve()
    except OSError:  # the current folder was removed
        here = None
    for folder in [here, *here.parents] if here else []:
        if (folder / WORKSPACE_MARKER).is_file() or is_checkout(folder):
            return folder
    return PACKAGE.parent if is_checkout(PACKAGE.parent) else None


def root() -> Path:
    """The learner's folder (see find_root); outside any, a clear error that says how to make one."""
    found = find_root()
    if found is None:
        from .i18n import WorkbookError

        raise WorkbookError("workspace.none")
    return found


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
    import json

    found = find_root()
    try:
        return json.loads((found / WORKSPACE_MARKER).read_text(encoding="utf-8")).get("language") if found else None
    except (OSError, ValueError, AttributeError):
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


def sim_stretch() -> float:
    """Seconds one simulated thread may run without reaching a barrier() or its end.
    A thread's stretch takes microseconds in any kernel that ends: past this, it is
    an endless loop, stopped and shown with its line."""
    return _seconds("WORKBOOK_SIM_STRETCH", 5)


def sim_watches() -> bool:
    """WORKBOOK_SIM_WATCH=0 builds the simulator without watching accesses: no findings
    but the barriers', no lines. Only for measuring what watching costs (benchmarks/)."""
    return os.environ.get("WORKBOOK_SIM_WATCH", "1") != "0"


def keep_sanitizer_logs() -> Path | None:
    value = os.environ.get("WORKBOOK_KEEP_SANITIZER_LOGS")
    return Path(value) if value else None


def progress_allowed() -> bool:
    """Live progress only for a person at a terminal: never in CI logs."""
    return not (os.environ.get("CI") or os.environ.get("WORKBOOK_NO_PROGRESS") == "1")


def cuda_homes() -> list[str]:
    return [p for p in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/opt/cuda") if p]
