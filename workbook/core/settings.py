"""Every environment variable and path the workbook reads, in one place.

Each is read when asked for (not at import), so a test can set one and see
its effect. The README's "Settings" table lists the same names.

| variable                      | default                        | what it changes                                     |
|-------------------------------|--------------------------------|-----------------------------------------------------|
| WORKBOOK_ROOT                 | found from the current folder  | the workspace (or checkout): puzzles/, .workbook/   |
| WORKBOOK_CACHE                | $XDG_CACHE_HOME/workbook       | compiled puzzles, by content (in u<uid>/, 0700)     |
| WORKBOOK_LANG                 | from LANG / LC_ALL             | en or ko                                            |
| WORKBOOK_NO_GPU=1             | unset                          | behave as if there were no GPU                      |
| WORKBOOK_GPU_TARGET           | this GPU's, else sm_90         | the accelerator GPU kernels are compiled for        |
| WORKBOOK_COMPILE_TIMEOUT      | 300 s                          | one Mojo compile                                    |
| WORKBOOK_LOAD_TIMEOUT         | 600 s                          | building one MAX graph                              |
| WORKBOOK_RUN_TIMEOUT          | 60 s                           | running the kernels of one device                   |
| WORKBOOK_SIM_STRETCH          | 5 s                            | one simulated thread between two barriers           |
| WORKBOOK_SIM_FENCE=1          | unset (set by `grade`)         | protection keys guard the simulator's records too   |
| WORKBOOK_MEMORY_LIMIT_MB      | 4096                           | memory of each process running learner code (0: off)|
| WORKBOOK_FILE_LIMIT_MB        | 16                             | each file it writes, its printed output too (0: off)|
| WORKBOOK_PROCESS_LIMIT        | 256 + 4 per CPU                | processes and threads it may have (0: off)          |
| WORKBOOK_CONTAINMENT          | auto                           | auto (a cgroup where one can be had) or watcher     |
| WORKBOOK_CHECK_BUDGET         | 900 s                          | one puzzle's whole check (a graded one: every wait) |
| WORKBOOK_GPU_SHARE            | 1                              | graded runs that may share one GPU at once          |
| WORKBOOK_KEEP_SANITIZER_LOGS  | unset                          | a folder to copy compute-sanitizer's logs into      |
| WORKBOOK_GRADE_GUARD=0        | unset                          | `grade` without its source guard (sandbox tests)    |
| WORKBOOK_TASK_TIMEOUT         | the check budget + 120 s       | a class run: one task, before it is stopped         |
| WORKBOOK_NO_PROGRESS=1, CI    | unset                          | no live progress display                            |
| CUDA_HOME                     | /usr/local/cuda                | where compute-sanitizer is looked for               |
| MODULAR_CACHE_DIR             | ~/.cache/modular               | MAX's own cache (read by `doctor` only)             |
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from pathlib import Path

from .i18n import WorkbookError, msg

PACKAGE = Path(__file__).resolve().parent.parent  # workbook/, above this layer
MOJO_SUPPORT = PACKAGE / "mojo"  # the launchers' support: Mojo compiled into them, C linked in
EXEC = PACKAGE / "child" / "_exec.py"  # becomes each child program (limits, death with the parent); stdlib only


class SettingError(WorkbookError):
    """An environment variable the workbook cannot use: bad input, named, with what it accepts."""


def _number(name: str, default: float, *, whole: bool = False, positive: bool = True) -> float:
    """A finite number from the environment; anything else is the user's to fix, not a crash."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < 0 or (positive and value == 0) or value > 10**9:
        raise SettingError("settings.bad_number", name=name, value=raw[:40],
                           accepts=msg("settings.whole_number" if whole else "settings.seconds"))
    return value


def _seconds(name: str, default: float) -> float:
    return _number(name, default)


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


def shown(path: Path) -> str:
    """A path as the learner knows it: relative to the workbook folder where it lies in it."""
    try:
        return str(path.relative_to(root()))
    except ValueError:
        return str(path)


def state_dir() -> Path:
    """The learner's progress, backups and logs: <root>/.workbook."""
    return root() / ".workbook"


def logs_dir() -> Path:
    return state_dir() / "logs"


def cache_dir() -> Path:
    """Compiled artefacts and kept verdicts: this user's own folder in WORKBOOK_CACHE (else
    $XDG_CACHE_HOME/workbook, else ~/.cache/workbook), `<cache>/u<uid>/`, made 0700: never
    a folder another user could have written (workbook/core/cachetrust.py says why and how). A
    cache folder that is missing and can't be made, or not safe, gives way to a folder of
    this user's own in the temp folder (`doctor` says so): the cache is only a cache. A
    WORKBOOK_CACHE that can't be made is the user's to fix, and says so."""
    from . import cachetrust

    return cachetrust.root().path


def system_temp() -> Path:
    """The temp folder itself, not this command's own folder in it (workbook/core/sweep.py)."""
    here = Path(tempfile.gettempdir())
    return here.parent if here.name.startswith("workbook-run-") else here


def private_temp(name: str) -> Path:
    """<temp>/<name>-<uid>: a folder only this user owns (never one someone else put there)
    that outlives the command."""
    folder = system_temp() / f"{name}-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
        if folder.is_symlink() or info.st_uid != os.getuid():
            raise OSError(f"{folder} belongs to someone else")
        if info.st_mode & 0o022:
            raise OSError(f"{folder} can be written by others")
    except OSError as exc:
        raise SettingError("settings.bad_folder", name="TMPDIR", value=str(folder), why=str(exc)) from None
    return folder


def max_cache_dir() -> Path:
    """Where MAX keeps its compiled graphs (it manages this one itself)."""
    env = os.environ.get("MODULAR_CACHE_DIR")
    if env:
        return Path(env)
    try:
        return Path.home() / ".cache" / "modular"
    except RuntimeError:
        return Path(tempfile.gettempdir()) / "modular"


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


# What an accelerator name looks like to the Mojo compiler (sm_90, sm_90a, nvidia:sm_80, gfx942, mi300x).
TARGET = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,39}$")


def gpu_target() -> str | None:
    value = os.environ.get("WORKBOOK_GPU_TARGET", "").strip() or None
    if value is not None and not TARGET.match(value):
        raise SettingError("settings.bad_gpu_target", value=value[:40])
    return value


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


def grade_guard() -> bool:
    """Whether `grade` reads submitted code with the source guard before compiling it
    (workbook/grade/guard.py). WORKBOOK_GRADE_GUARD=0 turns it off, only to test what stands behind
    it (the sandbox, the limits) with code the guard would refuse; `grade` then says so."""
    return os.environ.get("WORKBOOK_GRADE_GUARD", "1") != "0"


def sim_fence() -> bool:
    """WORKBOOK_SIM_FENCE=1: the simulator's records are also write-protected by the
    processor's memory protection keys while learner code runs (wbsim_parts/vault.c, "The fence"),
    which catches stores the instrumentation never reports (SIMD stores wider than 16
    bytes). It costs about a quarter more time on access-heavy kernels: `workbook grade`
    turns it on; a learner's own runs leave it off."""
    return os.environ.get("WORKBOOK_SIM_FENCE", "0") == "1"


def memory_limit_mb() -> int:
    """The memory each process running learner code may have (0: no limit)."""
    return int(_number("WORKBOOK_MEMORY_LIMIT_MB", 4096, whole=True, positive=False))


def file_limit_mb() -> int:
    """The largest file a process running learner code may write, its printed output
    included; a run folder may hold four times that in all (0: no limit)."""
    return int(_number("WORKBOOK_FILE_LIMIT_MB", 16, whole=True, positive=False))


CONTAINMENTS = ("auto", "watcher")


def containment() -> str:
    """How a learner child's memory and processes are bounded as a whole
    (workbook/child/containment.py): `auto`, a cgroup where this process can make one, else the
    watcher; `watcher`, the watcher even where a cgroup could be had (to test it)."""
    value = os.environ.get("WORKBOOK_CONTAINMENT", "").strip().lower() or "auto"
    if value not in CONTAINMENTS:
        raise SettingError("settings.bad_choice", name="WORKBOOK_CONTAINMENT", value=value[:40],
                           accepts=", ".join(CONTAINMENTS))
    return value


def gpu_share() -> int:
    """How many graded runs may use one GPU at once (workbook/child/gpulease.py). One by default:
    a graded run owns its GPU, so runs beside it never change its verdict. A class run on Ray
    asks for 1/N of a GPU per task (workbook/grade/classgrade.py): N tasks share one, their compiles
    side by side, their GPU runs taking turns through the lease."""
    return int(_number("WORKBOOK_GPU_SHARE", 1, whole=True))


def check_budget() -> float:
    """The most one puzzle's check may take in all, compiles and every device included
    (WORKBOOK_CHECK_BUDGET, seconds): what is left when it is spent is not run, and the
    report says so. Cold op puzzles take two or three minutes on two cores."""
    return _seconds("WORKBOOK_CHECK_BUDGET", 900.0)


def task_timeout() -> float:
    """Seconds one task of a class run may take before it is stopped and graded `timeout`:
    by default the check's own budget and two minutes for the task around it."""
    return _seconds("WORKBOOK_TASK_TIMEOUT", check_budget() + 120.0)


def cores() -> int:
    """The cores this process may run on (taskset or a container's cpuset may allow fewer
    than the machine has): what parallel work is sized to."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def graph_shards() -> int:
    """How many workers may build one op's graphs for one device side by side, each for
    its own shapes (MAX compiles a graph per shape): one per four cores, at least one;
    WORKBOOK_GRAPH_SHARDS sets it."""
    return max(1, int(_number("WORKBOOK_GRAPH_SHARDS", max(1, cores() // 4), whole=True)))


def graphs_early(crowded: bool = False) -> bool:
    """Whether an op's MAX graphs are built while its kernels are still being built and
    run (and run only once those pass): with eight cores or more, the graphs' compile
    leaves the op's critical path; on a laptop it would compete with the first verdict.
    Not by default when several checks run at once (`crowded`): their CPU is full anyway,
    and there one GPU graph failed MAX's compile (docs/performance.md, K).
    WORKBOOK_GRAPHS_EARLY=1 or 0 decides it everywhere."""
    if os.environ.get("WORKBOOK_GRAPHS_EARLY", "").strip():
        return _number("WORKBOOK_GRAPHS_EARLY", 0, whole=True, positive=False) > 0
    return cores() >= 8 and not crowded


def process_limit() -> int:
    """Processes and threads a run of learner code may have at once (0: no limit). Threads
    count too (the Mojo runtime starts one per core), hence the allowance per CPU."""
    return int(_number("WORKBOOK_PROCESS_LIMIT", 256 + 4 * (os.cpu_count() or 1), whole=True, positive=False))


def check_all() -> None:
    """Read every setting once, up front: a bad value stops the command before anything
    starts, with the variable's name, instead of failing halfway through a run."""
    for read in (compile_timeout, load_timeout, run_timeout, memory_limit_mb, file_limit_mb, process_limit,
                 gpu_target, graph_shards, graphs_early, containment, gpu_share, check_budget):
        read()


def keep_sanitizer_logs() -> Path | None:
    value = os.environ.get("WORKBOOK_KEEP_SANITIZER_LOGS")
    return Path(value) if value else None


def progress_allowed() -> bool:
    """Live progress only for a person at a terminal: never in CI logs."""
    return not (os.environ.get("CI") or os.environ.get("WORKBOOK_NO_PROGRESS") == "1")


def cuda_homes() -> list[str]:
    return [p for p in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/opt/cuda") if p]
