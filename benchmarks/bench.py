"""Edit to verdict: how long a learner waits after a one-line change to a kernel.

    python benchmarks/bench.py [--repeat N] [--json] [--out FILE] [--only p18,p01] [--keep]
                               [--measure quick,full,plain,compile,split,unwatched] [--baseline REV]

For each puzzle measured, in a fresh copy of the workbook with the solution
in the learner's files, after one untimed run (the learner has run it
before: Mojo's, MAX's and the workbook's caches are warm), N times:

1. edit: one new line of code in the learner's kernel, different each time
   (so every cache keyed by content misses, as after a real edit);
2. time, as a whole subprocess, from the edit to:
   - `workbook run ID --quick`: the kernels launched directly (the simulator
     and the CPU kernel without a GPU, the GPU and the simulator with one).
     Its "first verdict" column is when the first device's verdict was ready
     (what `watch` and a terminal show at once): the process's time minus
     what the engine spent after it, from `--json`;
   - `workbook run ID`: the full verdict (for p18 also the op through MAX);
   - the plain flow, the same edit, done by hand without the workbook:
     p18: `mojo precompile` + a script that builds and runs the MAX graph,
     CPU then GPU (benchmarks/floor.py); p01: `mojo run` of a standalone
     program holding the kernel and a DeviceContext launch
     (benchmarks/plain_kernel.py) where a GPU is, and where there is none the
     best a learner can do by hand, `mojo build --target-accelerator=sm_90`,
     which only compiles.

Seconds are medians of N runs (default 3); the ratio is to the plain flow
measured in the same run. Standard library only; the subprocesses use this
Python and its `mojo`.

Where the seconds go (`split`, on by default): every timed run's stages
(`startup`, the process until the engine began; the engine's own, from
`--json`; `exit`, the JSON written and the process's end); after a puzzle's
samples, each compile of its last edit built again with `--mlir-timing`
(the simulator's program, the GPU's, an op's package), split into Mojo's
front end, its MLIR passes, LLVM's code generation and the process around
them; and the report a learner reads, drawn from the last verdict for 80
columns.

Two more measurements compare the workbook with itself, sample by sample in
the same run (so under the same load):
- `unwatched`: `run --quick` with the simulator built without watching
  accesses (WORKBOOK_SIM_WATCH=0: no instrumentation, no line tables), which
  is what watching every access costs;
- `--baseline REV`: `run --quick` with the workbook of git revision REV (its
  own copy of workbook/, puzzles/ and solutions/), to compare before/after;
  REV may also be a folder holding that tree (`git archive REV | tar -x -C
  DIR`), for a machine without the repository's history (the GPU host).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
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
COPY_ITEMS = ("workbook", "puzzles", "solutions", "pyproject.toml")
TIMEOUT = 1800
# puzzle -> the kernel file the edit goes into
EDITED = {"p18": "op/softmax.mojo", "p01": "map.mojo", "p08": "shared.mojo", "p12": "dot.mojo"}
TARGETS = {  # issue 9's targets, edit to first verdict, seconds
    ("p18", True): 5.0, ("p01", True): 4.0, ("p18", False): 10.0, ("p01", False): 5.0,
}


@dataclass
class Sample:
    seconds: float
    rc: int
    cpu_seconds: float = 0.0
    load: float | None = None
    first_verdict: float | None = None  # seconds from the edit to the first device's verdict
    stages: dict[str, float] = field(default_factory=dict)  # the engine's own stage timings (--json)
    puzzles: dict[str, dict] = field(default_factory=dict)  # check --all: each puzzle's status, seconds, stages


@dataclass
class Row:
    puzzle: str
    what: str  # quick | full | plain
    label: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        return statistics.median(s.seconds for s in self.samples) if self.samples else None

    @property
    def first_verdict(self) -> float | None:
        found = [s.first_verdict for s in self.samples if s.first_verdict is not None]
        return statistics.median(found) if found else None

    @property
    def ok(self) -> bool:
        return bool(self.samples) and all(s.rc == 0 for s in self.samples)

    @property
    def stages(self) -> dict[str, float]:
        """Each engine stage's median over the samples that report it."""
        names = dict.fromkeys(n for s in self.samples for n in s.stages)
        return {n: statistics.median(s.stages[n] for s in self.samples if n in s.stages) for n in names}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        rc, out = 124, ""
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        log(f"exit code {rc} from {' '.join(cmd)}:\n{out[-1500:]}")
    doc = _document(out)
    stages = _stages(doc)
    engine = _first_puzzle(doc).get("seconds") if doc else None
    if isinstance(engine, (int, float)) and "startup" in stages:  # the report written, the interpreter's end
        stages["exit"] = max(0.0, seconds - stages["startup"] - engine)
    return Sample(seconds, rc, usage.ru_utime + usage.ru_stime - cpu, load, _first_verdict(doc, seconds),
                  stages, _puzzles(doc))


def _document(out: str) -> dict:
    """A `--json` report in a command's output, read once for every figure taken from it
    ({} when there is none: a failed run)."""
    try:
        doc = json.loads(out[out.index("{"):])
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _first_puzzle(doc: dict) -> dict:
    """The report of `run` (one puzzle), or the first puzzle's of `check`."""
    found = doc.get("puzzles") or [doc]
    return found[0] if isinstance(found[0], dict) else {}


def _stages(doc: dict) -> dict[str, float]:
    """The engine's stage timings (the first puzzle's)."""
    try:
        return {k: float(v) for k, v in (_first_puzzle(doc).get("stages") or {}).items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def _puzzles(doc: dict) -> dict[str, dict]:
    """From a `check --all` report: each puzzle's status, seconds, stages and CPU-seconds per
    program, so a cold run says which puzzles were the long poles and where the CPU went."""
    try:
        return {p["id"]: {"status": p.get("status"), "seconds": p.get("seconds"), "cached": p.get("cached"),
                          "stages": p.get("stages") or {}, "cpu": p.get("cpu") or {}}
                for p in doc.get("puzzles", [])}
    except (KeyError, TypeError, AttributeError):
        return {}


def cpu_by_program(puzzles: dict[str, dict]) -> dict[str, float]:
    """A course check's CPU-seconds summed over its puzzles per program (the engine's own
    count from its children: the Mojo compiler, the launchers, MAX's graph workers,
    compute-sanitizer), the largest first. The workbook's own Python is the rest."""
    total: dict[str, float] = {}
    for p in puzzles.values():
        for name, seconds in (p.get("cpu") or {}).items():
            total[name] = total.get(name, 0.0) + float(seconds)
    return dict(sorted(total.items(), key=lambda item: -item[1]))


def _first_verdict(doc: dict, seconds: float) -> float | None:
    """The whole run less what the engine did after its first verdict (an upper bound:
    the report's rendering is counted in)."""
    try:
        result = _first_puzzle(doc)
        return seconds - result["seconds"] + result["first_verdict"]
    except (KeyError, TypeError):
        return None


def has_gpu() -> bool:
    out = subprocess.run([sys.executable, "-c", "from max.driver import accelerator_count as a; print(a())"],
                         capture_output=True, text=True, timeout=300).stdout.strip()
    return out.isdigit() and int(out) > 0


def mojo() -> str:
    beside = Path(sys.executable).parent / "mojo"
    return str(beside) if beside.exists() else (shutil.which("mojo") or "mojo")


def add_line(kernel: Path, n: int) -> None:
    """Put `var edit_N = i * N` after the kernel's `var i = ...` line."""
    text = kernel.read_text(encoding="utf-8")
    anchor = text.index("    var i = ")
    line_end = text.index("\n", anchor) + 1
    edit = f"    var edit_{n} = i * {n}  # a learner's edit\n"
    kernel.write_text(text[:line_end] + edit + text[line_end:], encoding="utf-8")


class Copy:
    """A learner's checkout with the puzzle solved, its own caches, and an edit counter.
    `source` is the tree it is copied from: this checkout, or a baseline revision's."""

    def __init__(self, puzzle: str, keep: bool, source: Path = ROOT):
        self.puzzle, self.keep = puzzle, keep
        self.dir = Path(tempfile.mkdtemp(prefix=f"workbook-bench-{puzzle}-"))
        self.root = self.dir / "wb"
        self.root.mkdir()
        for item in COPY_ITEMS:
            src = source / item
            if src.is_dir():
                shutil.copytree(src, self.root / item, ignore=shutil.ignore_patterns("__pycache__", ".workbook"))
            else:
                shutil.copyfile(src, self.root / item)
        shutil.copytree(source / "solutions" / puzzle, self.root / "puzzles" / puzzle, dirs_exist_ok=True)
        self.edits = 0

    @property
    def kernel_file(self) -> Path:
        return self.root / "puzzles" / self.puzzle / EDITED[self.puzzle]

    def edit(self) -> None:
        """One new line of code in the kernel, different each time: every cache keyed by
        content misses, Mojo's own too (a comment alone may leave the compiled code as it
        was). The line computes something nobody uses, so the verdict stays a pass."""
        self.edits += 1
        add_line(self.kernel_file, self.edits)

    def env(self, **more: str) -> dict[str, str]:
        """The copy's own workbook folder and caches; its own package first on the path."""
        env = {k: v for k, v in os.environ.items() if k not in ("WORKBOOK_ROOT", "WORKBOOK_CACHE")}
        return dict(env, WORKBOOK_ROOT=str(self.root), WORKBOOK_CACHE=str(self.dir / "cache"), PYTHONUNBUFFERED="1",
                    WORKBOOK_NO_PROGRESS="1",
                    PYTHONPATH=os.pathsep.join(p for p in (str(self.root), env.get("PYTHONPATH", "")) if p), **more)

    def close(self) -> None:
        if self.keep:
            log(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def plain_command(copy: Copy, gpu: bool) -> tuple[list[str], Path]:
    if copy.puzzle == "p18":
        return [sys.executable, str(HERE / "floor.py"), "--work", str(copy.dir / "floor"),
                "--op", str(copy.kernel_file.parent)], ROOT
    program = copy.dir / "plain" / "p01_plain.mojo"
    subprocess.run([sys.executable, str(HERE / "plain_kernel.py"), str(copy.kernel_file), str(program)], check=True)
    if gpu:
        return [mojo(), "run", str(program)], program.parent
    return [mojo(), "build", "--target-accelerator=sm_90", str(program), "-o", str(program.with_suffix(""))], \
        program.parent


def measure(puzzle: str, repeat: int, gpu: bool, keep: bool, which: set[str], baseline: Path | None,
            revision: str) -> list[Row]:
    copy = Copy(puzzle, keep)
    old = Copy(puzzle, keep, baseline) if baseline else None
    wb = [sys.executable, "-m", "workbook", "run", puzzle, "--json"]
    rows = [Row(puzzle, "quick", f"workbook run {puzzle} --quick"),
            Row(puzzle, "unwatched", "  the same, simulator not watching accesses"),
            Row(puzzle, "baseline", f"  the same, the workbook at {revision}"),
            Row(puzzle, "full", f"workbook run {puzzle} (full verdict)"),
            Row(puzzle, "plain", f"plain flow for {puzzle}" + ("" if gpu or puzzle == "p18" else " (compile only)"))]
    rows = [r for r in rows if r.what in which or (r.what == "baseline" and old)]
    commands = {"quick": [*wb, "--quick"], "unwatched": [*wb, "--quick"], "baseline": [*wb, "--quick"], "full": wb}
    log(f"{puzzle}: warm-up run")
    timed(wb if "full" in which else commands["quick"], copy.root, copy.env())
    if "unwatched" in which:
        timed(commands["quick"], copy.root, copy.env(WORKBOOK_SIM_WATCH="0"))
    if old:
        timed(commands["quick"], old.root, old.env())
    if "plain" in which:
        plain, cwd = plain_command(copy, gpu)
        timed(plain, cwd, copy.env())
    for i in range(repeat):
        for row in rows:
            target = old if row.what == "baseline" else copy
            target.edit()
            log(f"{row.label.strip()} {i + 1}/{repeat}")
            if row.what == "plain":
                plain, cwd = plain_command(copy, gpu)
                row.samples.append(timed(plain, cwd, copy.env()))
            elif row.what == "unwatched":
                row.samples.append(timed(commands[row.what], copy.root, copy.env(WORKBOOK_SIM_WATCH="0")))
            else:
                row.samples.append(timed(commands[row.what], target.root, target.env()))
    if "split" in which:
        rows += compile_split(copy, repeat)
        rows.append(render_time(copy, repeat))
    copy.close()
    if old:
        old.close()
    return rows


def trivial_build(repeat: int) -> Row:
    """The compiler's floor: `mojo build` of a program that prints a line (the issue's yardstick
    for 'a verdict within 2x the compiler')."""
    row = Row("mojo", "trivial", "trivial `mojo build` (hello world)")
    work = Path(tempfile.mkdtemp(prefix="workbook-bench-trivial-"))
    try:
        for i in range(repeat + 1):
            program = work / f"hello_{i}.mojo"
            program.write_text(f'def main():\n    print("hello {i}")\n', encoding="utf-8")
            sample = timed([mojo(), "build", str(program), "-o", str(work / f"hello_{i}")], work, dict(os.environ))
            if i:  # the first warms the compiler's own caches
                row.samples.append(sample)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


MLIR_TIMING = re.compile(r"^  \s*[\d.]+ \([ \d.]+%\)\s+([\d.]+) \([ \d.]+%\)  (\S.*)$", re.M)


def split_seconds(stderr: str, wall: float) -> dict[str, float]:
    """One compile's seconds from its `--mlir-timing` report: Mojo's front end ("Import
    Mojo": parsing and importing), its MLIR passes (elaboration, lowering), the rest of the
    pipeline (LLVM's optimisation and code generation: MLIR's report calls it "Rest"), and
    the process around them (start-up, linking)."""
    top = {m.group(2).strip(): float(m.group(1)) for m in MLIR_TIMING.finditer(stderr)}
    total, front, rest = top.get("Total", 0.0), top.get("Import Mojo", 0.0), top.get("Rest", 0.0)
    return {"front end": front, "MLIR passes": max(0.0, total - front - rest), "LLVM and the rest": rest,
            "process": max(0.0, wall - total)}


def compile_split(copy: Copy, repeat: int) -> list[Row]:
    """Each compile the workbook ran for the copy's last edit (the simulator's program, the
    GPU's, the sanitizer's with line tables, an op's package), split like
    `compile_breakdown`: built again with `--mlir-timing`, from the arguments the workbook
    keeps beside each build (`.cmd`), in a copy of its sources with a new line in the
    kernel each time (so Mojo's own cache misses, as after an edit)."""
    builds = copy.dir / "cache" / f"u{os.geteuid()}" / "build"  # the user's own folder (cachetrust.py)
    found = list(builds.glob("*/launch/*/*.cmd")) + list(builds.glob("*/*.mojoc.cmd"))
    if not found:
        return []
    newest = max(found, key=lambda c: c.stat().st_mtime)
    folder = next(parent for parent in newest.parents if parent.parent == builds)
    commands = sorted(c for c in found if folder in c.parents)
    rows = {c: Row(copy.puzzle, f"split {c.name[:-4]}", f"  the compile of {c.name[:-4]} after an edit, split")
            for c in commands}
    work = Path(tempfile.mkdtemp(prefix="workbook-bench-split-"))
    try:
        for i in range(repeat):
            shutil.rmtree(work / "b", ignore_errors=True)
            shutil.copytree(folder, work / "b", ignore=lambda d, names: [
                n for n in names if not n.endswith(".mojo") and not Path(d, n).is_dir()])
            for sub in ("src", "sim"):
                add_line(work / "b" / sub / EDITED[copy.puzzle], 1000 + i)
            for cmd, row in rows.items():
                recorded = json.loads(cmd.read_text(encoding="utf-8"))
                args = [a.replace(str(folder), str(work / "b")) for a in recorded["args"]]
                start = time.perf_counter()
                output = work / "out" / cmd.name[:-4]  # the name built (a .mojoc's module name comes from it)
                output.parent.mkdir(exist_ok=True)
                timing = ["--mlir-timing"] if args[0] == "build" else []  # `mojo precompile` has no such option
                done = subprocess.run([mojo(), args[0], *timing, *args[1:], "-o", str(output)],
                                      cwd=work / "b", capture_output=True, text=True, timeout=TIMEOUT)
                wall = time.perf_counter() - start
                if done.returncode != 0:
                    log(f"{cmd.name}: exit code {done.returncode}:\n{(done.stdout + done.stderr)[-1500:]}")
                row.samples.append(Sample(wall, done.returncode,
                                          stages=split_seconds(done.stderr, wall) if timing else {"whole": wall}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return list(rows.values())


RENDER = """import json, os, sys, time
from workbook.core import settings
from workbook.course import catalog
from workbook.view import report, terminal
from workbook.cli.commands.common import learner_files, title
from workbook.core.results import from_dict
kept = max((settings.cache_dir() / "verdicts").glob("*.json"), key=os.path.getmtime)
result = from_dict(json.loads(kept.read_bytes())["result"])
puzzle = catalog.load(sys.argv[1])
with open(os.devnull, "w") as sink:
    console = terminal.console(file=sink, width=80, force_terminal=True)
    start = time.perf_counter()
    report.render_result(console, result, title(puzzle), learner_files(puzzle))
    print(time.perf_counter() - start)
"""


def render_time(copy: Copy, repeat: int) -> Row:
    """The Rich report a learner reads (the timed runs print JSON): the last verdict the copy
    kept, drawn for an 80-column terminal in a fresh process, timed from the first line
    drawn to the last (the imports are the start-up's)."""
    row = Row(copy.puzzle, "render", "  the last verdict's report, drawn for 80 columns")
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", RENDER, copy.puzzle], cwd=copy.root, env=copy.env(),
                              capture_output=True, text=True, timeout=300)
        try:
            row.samples.append(Sample(float(done.stdout.split()[-1]), done.returncode))
        except (ValueError, IndexError):
            log(f"drawing the report failed:\n{done.stderr[-1500:]}")
            row.samples.append(Sample(0.0, done.returncode or 1))
    return row


def compile_breakdown(repeat: int) -> Row:
    """Where one compile's seconds go: `mojo build --mlir-timing` of p01's kernel as a plain
    program (the compile a learner's edit costs), split into Mojo's front end ("Import
    Mojo": parsing and importing), its MLIR passes (elaboration, lowering), the rest of the
    pipeline (LLVM's optimisation and code generation: MLIR's report calls it "Rest"), and
    the process around them (start-up, linking)."""
    row = Row("mojo", "compile", "  p01's kernel for sm_90, split (--mlir-timing)")
    work = Path(tempfile.mkdtemp(prefix="workbook-bench-compile-"))
    try:
        program = work / "p01_plain.mojo"
        subprocess.run([sys.executable, str(HERE / "plain_kernel.py"), str(ROOT / "solutions/p01/map.mojo"),
                        str(program)], check=True)
        for i in range(repeat + 1):
            text = program.read_text(encoding="utf-8")
            program.write_text(text + f"\ncomptime BENCH_EDIT_{i} = {i}  # a new line of code: no cache hit\n",
                               encoding="utf-8")
            start = time.perf_counter()
            done = subprocess.run([mojo(), "build", "--mlir-timing", "--target-accelerator=sm_90", str(program),
                                   "-o", str(work / "p")],
                                  capture_output=True, text=True, timeout=TIMEOUT)
            wall = time.perf_counter() - start
            if i == 0:
                continue
            row.samples.append(Sample(wall, done.returncode, stages=split_seconds(done.stderr, wall)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


# The puzzles there were when issue 24 set "60 s for today's puzzles": chapters 1-2 but
# p09 (added later), and the three op puzzles of the seeds.
ISSUE_PUZZLES = [f"p{n:02d}" for n in range(1, 17) if n != 9] + ["p18", "p22", "p27"]


def check_all(jobs: str | None) -> list[Row]:
    """`check --solutions` of the issue's 18 puzzles with every cache cold, then `check --all
    --solutions` in another copy, cold, and again with nothing changed."""
    rows = []
    for puzzles, cold, warm in ((ISSUE_PUZZLES, Row("issue", "cold", f"check of the issue's {len(ISSUE_PUZZLES)} "
                                                    "puzzles, every cache cold"), None),
                                (["--all"], Row("all", "cold", "check --all --solutions, every cache cold"),
                                 Row("all", "warm", "  the same again, nothing changed"))):
        copy = Copy("p01", keep=False)
        cmd = [sys.executable, "-m", "workbook", "check", *puzzles, "--solutions", "--json", "--seed", "12"]
        if jobs:
            cmd += ["--jobs", jobs]
        env = copy.env(MODULAR_CACHE_DIR=str(copy.dir / "modular"))  # Mojo's and MAX's caches cold as well
        for row in (cold, warm):
            if row:
                log(row.label.strip())
                row.samples.append(timed(cmd, copy.root, env))
                rows.append(row)
        copy.close()
    return rows


def checkout(revision: str) -> Path:
    """The tree of a git revision, in a temp folder (removed by the caller)."""
    folder = Path(tempfile.mkdtemp(prefix="workbook-bench-baseline-"))
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def machine() -> dict:
    info: dict = {"platform": platform.platform(), "cpu_count": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60).stdout
        info["gpus"] = [line.strip() for line in out.splitlines() if line.strip()]
    info["toolchain"] = {name: _version(name) for name in ("mojo", "max", "numpy")}
    info["python"] = platform.python_version()
    return info


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


TIMED = ("quick", "unwatched", "baseline", "full")  # the rows that time a workbook command after an edit


def table(rows: list[Row], gpu: bool) -> str:
    lines = [f"{'measurement':50} {'seconds':>8} {'min-max':>11} {'x plain':>8} {'first':>6} {'x plain':>8} "
             f"{'target':>7}  load"]
    for puzzle in dict.fromkeys(r.puzzle for r in rows):
        group = {r.what: r for r in rows if r.puzzle == puzzle}
        plain = group["plain"].seconds if "plain" in group else None
        for row in group.values():
            what = row.what
            spread = f"{min(s.seconds for s in row.samples):.1f}-{max(s.seconds for s in row.samples):.1f}"
            ratio = f"{row.seconds / plain:.2f}x" if plain and row.seconds and what in TIMED else ""
            target = TARGETS.get((puzzle, gpu)) if what == "quick" else None
            loads = [s.load for s in row.samples if s.load is not None]
            label = row.label + ("" if row.ok else "  [FAILED]")
            first = row.first_verdict if what in TIMED else None
            first_ratio = f"{first / plain:.2f}x" if first and plain else ""
            lines.append(f"{label:50} {row.seconds:8.2f} {spread:>11} {ratio:>8} "
                         f"{(f'{first:.2f}' if first else ''):>6} {first_ratio:>8} "
                         f"{(f'<= {target:g}' if target else ''):>7}  {max(loads) if loads else 0:.1f}")
            if row.stages and row.puzzle not in ("all", "issue"):  # a course check's are in its puzzles, below
                lines.append("    " + "  ".join(f"{name} {sec:.2f}" for name, sec in row.stages.items()))
            checked = row.samples[0].puzzles if row.samples else {}
            if checked and not all(p.get("cached") for p in checked.values()):
                slowest = sorted(checked.items(), key=lambda item: -(item[1].get("seconds") or 0))[:8]
                lines.append(f"    {row.samples[0].cpu_seconds:.0f} CPU-seconds; the slowest: " + ", ".join(
                    f"{pid} {p.get('seconds') or 0:.0f}" for pid, p in slowest))
                programs = cpu_by_program(checked)
                if programs:
                    lines.append("    CPU-seconds by program: " + ", ".join(
                        f"{name} {sec:.0f}" for name, sec in programs.items()))
    lines.append("seconds: the whole command, median; first: until the first device's verdict (--json), median;")
    lines.append("indented: the stages, median seconds: startup (the process until the engine began), the engine's")
    lines.append("(build/link per program, run per device, judge), exit (the JSON written, the process's end); each")
    lines.append("compile split into Mojo's front end, MLIR passes, LLVM and the process; the report drawn")
    return "\n".join(lines)


def goals(rows: list[Row], cpus: int) -> list[dict]:
    """Issue 24's goals, each from rows of this one run: the edit-to-verdict ratios to a trivial
    `mojo build` on the same machine, `--quick` against the full run, and the course check cold
    (with the floor a perfect schedule could reach: its CPU-seconds over the cores) and warm."""
    found = {(r.puzzle, r.what): r for r in rows if r.samples}
    out: list[dict] = []

    def goal(what: str, value: float | None, limit: float, unit: str, note: str = "") -> None:
        if value is not None:
            out.append({"goal": what, "value": round(value, 2), "limit": limit, "unit": unit,
                        "met": value <= limit, "note": note})

    trivial = found.get(("mojo", "trivial"))
    for puzzle in ("p01", "p18"):
        quick, full = found.get((puzzle, "quick")), found.get((puzzle, "full"))
        if trivial and trivial.seconds and quick:
            goal(f"{puzzle}: edit to first verdict (--quick) / trivial build", quick.first_verdict / trivial.seconds
                 if quick.first_verdict else None, 2.0, "x")
            goal(f"{puzzle}: the whole --quick command / trivial build", quick.seconds / trivial.seconds, 3.0, "x")
        if quick and full and quick.first_verdict and full.first_verdict:
            goal(f"{puzzle}: --quick's first verdict / the full run's", quick.first_verdict / full.first_verdict,
                 1.1, "x", "--quick never slower than full (the same work up to it; medians within 10%)")
            goal(f"{puzzle}: the full run's first verdict / --quick's", full.first_verdict / quick.first_verdict,
                 1.25, "x", "sanitizers start after it, graphs (built early on 8+ cores) never delay it")
    issue, cold, warm = found.get(("issue", "cold")), found.get(("all", "cold")), found.get(("all", "warm"))
    if issue:
        sample = issue.samples[0]
        goal(f"check of the issue's {len(sample.puzzles)} puzzles, cold", sample.seconds, 60.0, "s",
             f"{sample.cpu_seconds:.0f} CPU-seconds over {cpus} cores "
             f"is {sample.cpu_seconds / cpus:.0f} s even for a perfect schedule")
    if cold:
        sample = cold.samples[0]
        goal("check --all --solutions, cold", sample.seconds, 90.0, "s",
             f"{len(sample.puzzles)} puzzles; {sample.cpu_seconds:.0f} CPU-seconds over {cpus} cores "
             f"is {sample.cpu_seconds / cpus:.0f} s even for a perfect schedule")
    if warm:
        goal("check --all --solutions, nothing changed", warm.samples[0].seconds, 5.0, "s",
             f"{sum(1 for p in warm.samples[0].puzzles.values() if p.get('cached'))} of "
             f"{len(warm.samples[0].puzzles)} verdicts from the verdict cache")
    return out


def goals_table(found: list[dict]) -> str:
    lines = ["", f"{'issue 24 goal':64} {'measured':>9} {'goal':>8}  met"]
    for g in found:
        lines.append(f"{g['goal']:64} {g['value']:>8g}{g['unit']} {'<= ' + format(g['limit'], 'g') + g['unit']:>8}  "
                     f"{'yes' if g['met'] else 'NO'}" + (f"\n    {g['note']}" if g['note'] else ""))
    if any(g["goal"].endswith("cold") for g in found):
        lines.append("(every puzzle's seconds and stages: the JSON's measurements[...].samples[0].puzzles)")
    return "\n".join(lines)


def report(meta: dict, rows: list[Row], met: list[dict]) -> str:
    """The whole printout of a run (measured now, or saved and shown again)."""
    return "\n".join([f"date {meta['date']}  GPU: {'; '.join(meta['machine'].get('gpus', [])) or 'none'}  "
                      f"CPUs: {meta['machine']['cpu_count']}", table(rows, meta["gpu"]), goals_table(met)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default="p18,p01")
    parser.add_argument("--measure", default="quick,full,plain,compile,split",
                        help="which of quick, full, plain, unwatched, compile, split")
    parser.add_argument("--baseline", help="a git revision (or a folder holding its tree) to compare `run --quick` "
                        "with, sample by sample")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--check-all", action="store_true", help="also time check --all --solutions, cold then warm")
    parser.add_argument("--jobs", help="--jobs for check --all (default: the workbook's)")
    parser.add_argument("--show", type=Path, help="print the table of a saved --out file instead of measuring")
    args = parser.parse_args()
    if args.show:
        saved = json.loads(args.show.read_text(encoding="utf-8"))
        rows = [Row(m["puzzle"], m["what"], m["label"], [Sample(**s) for s in m["samples"]])
                for m in saved["measurements"]]
        print(report(saved, rows, goals(rows, saved["machine"]["cpu_count"] or 1)))
        return 0
    given = Path(args.baseline) if args.baseline and Path(args.baseline).is_dir() else None
    baseline = given or (checkout(args.baseline) if args.baseline else None)
    gpu = has_gpu()
    meta = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "gpu": gpu, "machine": machine(),
            "repeat": args.repeat}
    rows: list[Row] = []
    for puzzle in [p.strip() for p in args.only.split(",") if p.strip()]:
        rows += measure(puzzle, args.repeat, gpu, args.keep, set(args.measure.split(",")), baseline,
                        args.baseline or "")
    if baseline and not given:
        shutil.rmtree(baseline, ignore_errors=True)
    if "plain" in args.measure:
        rows.append(trivial_build(args.repeat))
    if "compile" in args.measure:
        rows.append(compile_breakdown(args.repeat))
    if args.check_all:
        rows += check_all(args.jobs)
    met = goals(rows, meta["machine"]["cpu_count"] or 1)
    result = dict(meta, measurements=[dict(asdict(r), seconds=r.seconds, first_verdict=r.first_verdict, ok=r.ok)
                                      for r in rows], goals=met)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(report(meta, rows, met))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
