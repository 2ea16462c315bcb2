"""How much time the workbook adds on top of running puzzle 18 through MAX by hand.

    python benchmarks/bench.py [--repeat N] [--json] [--out FILE] [--only floor,run,check] [--keep]

Measures, as full subprocess wall times on this machine (CPU, and the GPU when
MAX sees one):

- floor, cold / warm: benchmarks/floor.py, which `mojo precompile`s the p18
  solution's op and builds and runs the softmax graph through MAX directly,
  CPU then GPU. Cold: empty MAX cache, fresh .mojoc. Warm: the .mojoc kept and
  MAX's cache warm. The cold floor is also the plain sequential flow (how the
  puzzle runs without the workbook).
- workbook run p18, cold: a temp copy of the workbook with the solution's
  files copied over the learner's (the edit), empty workbook and MAX caches,
  then `python -m workbook run p18`: edit to verdict. Warm: the same again,
  unchanged.
- workbook check --all --solutions, cold and warm.

Cold means cold: every cold repetition gets new empty folders for
WORKBOOK_CACHE and MODULAR_CACHE_DIR (where MAX keeps compiled graphs, and
Mojo its own caches; it defaults to ~/.cache/modular) and a new copy of the
workbook. Warm repetitions reuse the last cold repetition's folders.

Seconds are the median of N runs: --repeat N for both kinds; by default 1
cold and 3 warm. Ratios: cold rows to the cold floor, warm rows to the warm
floor. Standard library only; the subprocesses use this Python.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FLOOR = HERE / "floor.py"
PUZZLE = "p18"
# What a learner's checkout needs for `python -m workbook`: the package, the puzzles, the solutions.
COPY_ITEMS = ("workbook", "puzzles", "solutions", "pyproject.toml")
TIMEOUT = 3600  # seconds for one subprocess; a cold `check --all` on 2 cores takes minutes
GROUPS = ("floor", "run", "check")


@dataclass
class Sample:
    seconds: float  # wall time of the whole subprocess
    rc: int
    cpu_seconds: float = 0.0  # user + system time of it and every process it waited for
    load: float | None = None  # the 1-minute load average when it started (other work on the machine)
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class Row:
    key: str
    label: str
    kind: str  # cold | warm
    samples: list[Sample] = field(default_factory=list)
    note: str = ""
    ratio_to_floor: float | None = None

    @property
    def seconds(self) -> float | None:
        return statistics.median(s.seconds for s in self.samples) if self.samples else None

    @property
    def cpu_seconds(self) -> float | None:
        return statistics.median(s.cpu_seconds for s in self.samples) if self.samples else None

    @property
    def ok(self) -> bool:
        return bool(self.samples) and all(s.rc == 0 for s in self.samples)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("WORKBOOK_ROOT", "WORKBOOK_CACHE", "MODULAR_CACHE_DIR")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[Sample, subprocess.CompletedProcess]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    cpu = _children_cpu()
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        proc = subprocess.CompletedProcess(cmd, 124, exc.stdout or "", exc.stderr or "")
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        tail = (str(proc.stdout) + str(proc.stderr))[-1500:]
        log(f"exit code {proc.returncode} from {' '.join(cmd)}:\n{tail}")
    return Sample(seconds, proc.returncode, _children_cpu() - cpu, load), proc


class Scratch:
    """Temp folders for one cold repetition (and the warm ones after it)."""

    def __init__(self, keep: bool):
        self.dir = Path(tempfile.mkdtemp(prefix="workbook-bench-"))
        self.keep = keep
        self.max_cache = self.dir / "modular"
        self.wb_cache = self.dir / "workbook-cache"
        for folder in (self.max_cache, self.wb_cache):
            folder.mkdir()

    def env(self, **extra: str) -> dict[str, str]:
        return dict(base_env(), MODULAR_CACHE_DIR=str(self.max_cache), WORKBOOK_CACHE=str(self.wb_cache), **extra)

    def close(self) -> None:
        if self.keep:
            log(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# --- the floor -------------------------------------------------------------------------------------------------

def floor_once(scratch: Scratch, warm: bool) -> Sample:
    cmd = [sys.executable, str(FLOOR), "--work", str(scratch.dir / "floor"), "--json"]
    if warm:
        cmd.append("--keep-mojoc")
    sample, proc = timed(cmd, ROOT, scratch.env())
    lines = str(proc.stdout).strip().splitlines()
    if lines:
        try:
            sample.phases = json.loads(lines[-1]).get("phases", {})
        except json.JSONDecodeError:
            pass
    return sample


def measure_floor(cold: int, warm: int, keep: bool) -> tuple[Row, Row]:
    cold_row = Row("floor_cold", "floor, cold (precompile + MAX build/run, empty caches)", "cold")
    warm_row = Row("floor_warm", "floor, warm (.mojoc kept, MAX cache warm)", "warm")
    scratch = None
    for i in range(cold):
        if scratch:
            scratch.close()
        scratch = Scratch(keep)
        log(f"floor, cold {i + 1}/{cold}")
        cold_row.samples.append(floor_once(scratch, warm=False))
    for i in range(warm):
        log(f"floor, warm {i + 1}/{warm}")
        warm_row.samples.append(floor_once(scratch, warm=True))
    scratch.close()
    return cold_row, warm_row


# --- the workbook ----------------------------------------------------------------------------------------------

def workbook_copy(scratch: Scratch, edit: bool) -> Path:
    copy = scratch.dir / "workbook-root"
    copy.mkdir()
    for item in COPY_ITEMS:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, copy / item, ignore=shutil.ignore_patterns("__pycache__", ".workbook"))
        else:
            shutil.copyfile(src, copy / item)
    if edit:  # the learner's edit: the solution's files over the skeleton's
        shutil.copytree(ROOT / "solutions" / PUZZLE, copy / "puzzles" / PUZZLE, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def measure_workbook(key: str, label: str, args: list[str], edit: bool, cold: int, warm: int,
                     keep: bool) -> tuple[Row, Row]:
    cold_row = Row(f"{key}_cold", f"{label}, cold", "cold")
    warm_row = Row(f"{key}_warm", f"{label}, warm", "warm")
    cmd = [sys.executable, "-m", "workbook", *args]
    scratch = copy = None
    for i in range(cold):
        if scratch:
            scratch.close()
        scratch = Scratch(keep)
        copy = workbook_copy(scratch, edit)
        log(f"{label}, cold {i + 1}/{cold}")
        cold_row.samples.append(timed(cmd, copy, scratch.env(WORKBOOK_ROOT=str(copy)))[0])
    for i in range(warm):
        log(f"{label}, warm {i + 1}/{warm}")
        warm_row.samples.append(timed(cmd, copy, scratch.env(WORKBOOK_ROOT=str(copy)))[0])
    scratch.close()
    return cold_row, warm_row


# --- what was measured on --------------------------------------------------------------------------------------

def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def git_commit() -> str | None:
    """`git rev-parse --short HEAD`, read from .git directly (no git needed on the machine)."""
    git = ROOT / ".git"
    if git.is_file():  # a worktree: "gitdir: PATH"
        text = _read(git).strip()
        git = (ROOT / text.split(":", 1)[1].strip()) if text.startswith("gitdir:") else git
    head = _read(git / "HEAD").strip()
    if not head:
        return None
    if not head.startswith("ref:"):
        return head[:7]
    ref = head.split(":", 1)[1].strip()
    common = Path(_read(git / "commondir").strip() or ".")
    for base in (git, git / common):
        sha = _read(base / ref).strip()
        if sha:
            return sha[:7]
        for line in _read(base / "packed-refs").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref:
                return parts[0][:7]
    return None


def machine() -> dict:
    info: dict = {"platform": platform.platform(), "cpu_count": os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        if line.startswith("model name"):
            info["cpu_model"] = line.split(":", 1)[1].strip()
            break
    for line in _read(Path("/proc/meminfo")).splitlines():
        if line.startswith("MemTotal:"):
            info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
    info["gpus"] = []
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=60).stdout
            info["gpus"] = [line.strip() for line in out.splitlines() if line.strip()]
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        out = subprocess.run([sys.executable, "-c", "from max.driver import accelerator_count as a; print(a())"],
                             capture_output=True, text=True, timeout=120).stdout.strip()
        info["max_accelerators"] = int(out) if out.isdigit() else None
    except (OSError, subprocess.TimeoutExpired):
        info["max_accelerators"] = None
    return info


def toolchain() -> dict:
    info: dict = {"python": platform.python_version()}
    for name in ("mojo", "max", "numpy", "workbook"):
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = None
    mojo = Path(sys.executable).parent / "mojo"
    binary = str(mojo) if mojo.exists() else shutil.which("mojo")
    if binary:
        try:
            info["mojo --version"] = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                                    timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return info


# --- the report ------------------------------------------------------------------------------------------------

def fmt(value: float | None, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.2f}{suffix}"


def table(rows: list[Row], plain_ratio: float | None, floor_phases: dict[str, float]) -> str:
    head = ("measurement", "seconds", "x floor", "runs", "min-max", "cpu s", "load")
    body = []
    for row in rows:
        spread = f"{min(s.seconds for s in row.samples):.1f}-{max(s.seconds for s in row.samples):.1f}" \
            if row.samples else "-"
        loads = [s.load for s in row.samples if s.load is not None]
        label = row.label + ("" if row.ok else "  [FAILED: exit code != 0]") + (f"  ({row.note})" if row.note else "")
        body.append((label, fmt(row.seconds), fmt(row.ratio_to_floor, "x"), str(len(row.samples)), spread,
                     fmt(row.cpu_seconds), f"{max(loads):.1f}" if loads else "-"))
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"workbook run {PUZZLE} cold (edit to verdict) / plain sequential flow: {fmt(plain_ratio, 'x')}")
    lines.append("seconds: median wall time of the whole subprocess; cpu s: median user+system CPU time of it "
                 "and its children; load: the highest 1-minute load average seen when a run started.")
    if floor_phases:
        lines.append("floor phases, cold (median s): "
                     + ", ".join(f"{k} {v:.2f}" for k, v in floor_phases.items()))
    return "\n".join(lines)


def median_phases(row: Row | None) -> dict[str, float]:
    if not row or not row.samples:
        return {}
    keys = [k for k in row.samples[0].phases]
    return {k: statistics.median(s.phases.get(k, 0.0) for s in row.samples) for k in keys}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="runs per measurement, cold and warm (default: 1 cold, 3 warm)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the table")
    parser.add_argument("--out", type=Path, help="also write the JSON to this file")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help="comma-separated subset of floor,run,check (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folders (their paths go to stderr)")
    args = parser.parse_args()
    cold = warm = args.repeat
    if cold is None:
        cold, warm = 1, 3
    if cold < 1:
        parser.error("--repeat must be at least 1")
    groups = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        parser.error(f"unknown --only group(s): {', '.join(unknown)}")

    started = datetime.now(timezone.utc)
    log(f"machine and toolchain; cold x{cold}, warm x{warm}")
    meta = {"date": started.isoformat(timespec="seconds"), "commit": git_commit(), "machine": machine(),
            "toolchain": toolchain(), "repeat": {"cold": cold, "warm": warm}}

    rows: list[Row] = []
    floor_cold = floor_warm = None
    if "floor" in groups:
        floor_cold, floor_warm = measure_floor(cold, warm, args.keep)
        plain = Row("plain_flow_cold", "plain sequential flow, cold", "cold", floor_cold.samples,
                    note="same runs as the cold floor")
        rows += [floor_cold, floor_warm, plain]
    if "run" in groups:
        rows += measure_workbook("workbook_run", f"workbook run {PUZZLE}", ["run", PUZZLE], True, cold, warm,
                                 args.keep)
    if "check" in groups:
        rows += measure_workbook("workbook_check_all", "workbook check --all --solutions",
                                 ["check", "--all", "--solutions"], False, cold, warm, args.keep)

    for row in rows:
        base = floor_cold if row.kind == "cold" else floor_warm
        if base is not None and base.seconds and row.seconds is not None:
            row.ratio_to_floor = row.seconds / base.seconds
    wb_cold = next((r for r in rows if r.key == "workbook_run_cold"), None)
    plain_ratio = (wb_cold.seconds / floor_cold.seconds
                   if wb_cold and floor_cold and wb_cold.seconds and floor_cold.seconds else None)
    phases = median_phases(floor_cold)

    result = dict(meta, finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  measurements=[dict(asdict(r), seconds=r.seconds, cpu_seconds=r.cpu_seconds, ok=r.ok)
                                for r in rows],
                  workbook_cold_over_plain_flow=plain_ratio, floor_phases_cold=phases,
                  floor_phases_warm=median_phases(floor_warm))
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json:
        print(text)
    else:
        m, tc = meta["machine"], meta["toolchain"]
        gpus = "; ".join(m["gpus"]) or "none"
        print(f"date {meta['date']}  commit {meta['commit'] or '?'}")
        print(f"machine: {m.get('cpu_count')} CPUs ({m.get('cpu_model', '?')}), {m.get('memory_gib', '?')} GiB, "
              f"GPU: {gpus}; MAX sees {m.get('max_accelerators')} accelerator(s)")
        print(f"toolchain: {tc.get('mojo --version') or 'mojo ' + str(tc.get('mojo'))}, max {tc.get('max')}, "
              f"Python {tc['python']}, numpy {tc.get('numpy')}")
        print()
        print(table(rows, plain_ratio, phases))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
