"""A class graded in one process against the same class on Ray: time per check and speed-up.

    python benchmarks/class_grade.py [--label NAME] [--devices sim] [--jobs N ...]
                                     [--share N ...] [--warm] [--out FILE] [--keep] [--logs DIR]

The class is issue 38's hostile class (tests/hostile_class.py: 22 submissions of p01 and
p02, honest, wrong, hostile and broken), graded on p01 and p02:

- one process: `workbook grade SUB1 SUB2 ... --json`, the submissions one after another
  (what `grade` did before Ray, and still does for a few submissions);
- Ray: `workbook grade CLASS --out DIR --json`, a local Ray started by the command, once
  per `--jobs` value (default: this machine's cores) and, where there are GPUs, once per
  `--share` value (WORKBOOK_GPU_SHARE: how many tasks share one GPU; each asks Ray for 1/N).

Every run is cold: a fresh WORKBOOK_CACHE (every kernel compiled, as a class's are the
first time), a fresh output folder (nothing kept). With `--warm`, each run is made twice
on one cache and the second is timed (the builds cached: a class graded again after a
change to the grading, say). The grades of every run must agree with the one-process run's,
cell by cell (the JSON says where they do not): parallel runs must not change a verdict.

A check is one submission x one puzzle (44 here); "tasks" are the checks that ran learner
code (the rest were refused or missing, graded by the grader at once). Time per check is
the wall time over the checks; the speed-up is the one-process time over the run's. The
CPU-seconds are those of the programs the checks ran (compiles, launchers), as each check
counts them: the same work in every run, whatever the wall time. On a machine shared with
other work the wall times say how much of the machine the run got as much as how fast it
is: the load average before and after each run is recorded beside it. The
table goes to stdout, the JSON (every run, the machine, the load) to --out. Standard
library only; the subprocesses use this Python (its mojo, max and ray).

On the GPU host (2 GPUs):
    pip install -e ".[dev,class]"
    python benchmarks/class_grade.py --label h200x2 --share 1 --share 2 --share 4 \\
        --out benchmarks/results/class-h200x2.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This checkout first, then whatever the caller had (a `pip --target` toolchain, as on the GPU host).
PYTHONPATH = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
sys.path.insert(0, str(REPO / "tests"))

from hostile_class import make_class  # noqa: E402 - tests/ is put on the path just above

PUZZLES = ("p01", "p02")
PASS = ("pass", "compiled")


def word(puzzle: dict) -> str:
    """A one-process line's puzzle as a grade word (the class run writes its own)."""
    if puzzle.get("grade"):
        return puzzle["grade"]
    files = puzzle.get("files") or {}
    if puzzle.get("status") in PASS:
        return "pass"
    if "refused" in files.values() or str((puzzle.get("problem") or {}).get("key", "")).startswith("guard."):
        return "refused"
    if "missing" in files.values():
        return "missing"
    return "timeout" if puzzle.get("status") == "timeout" else "fail"


def gpus() -> list[str]:
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line for line in done.stdout.splitlines() if line.startswith("GPU")]


def run(label: str, argv: list[str], env: dict[str, str], cache: Path, warm: bool, logs: Path | None = None) -> dict:
    """One timed `workbook grade` (twice on one cache with --warm, the second timed)."""
    env = {**env, "WORKBOOK_CACHE": str(cache)}
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    rounds = 2 if warm else 1
    for round_ in range(rounds):
        for arg in argv:  # a class run's output folder starts empty: nothing kept
            if arg.startswith("--out="):
                shutil.rmtree(arg.split("=", 1)[1], ignore_errors=True)
        load = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "workbook", "grade", *argv], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - started
        print(f"  {label}{' (warm-up)' if round_ + 1 < rounds else ''}: {seconds:.1f} s, exit {done.returncode}",
              file=sys.stderr)
    if logs is not None:  # the whole of what the run said: a grade that surprises can be read back
        logs.mkdir(parents=True, exist_ok=True)
        slug = "".join(c if c.isalnum() else "-" for c in label).strip("-")
        (logs / f"{slug}.stdout").write_text(done.stdout)
        (logs / f"{slug}.stderr").write_text(done.stderr)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip().startswith("{")]
    grades = {doc.get("name") or Path(doc["submission"]).name: {p["id"]: word(p) for p in doc.get("puzzles", [])}
              for doc in lines if "submission" in doc}  # not the error of a command that failed
    checks = sum(len(g) for g in grades.values())
    # The CPU-seconds of the programs the checks ran (compiles, launchers), as each check counts them.
    cpu = sum(sum((p.get("cpu") or {}).values()) for doc in lines for p in doc.get("puzzles", []))
    tasks = sum(1 for doc in lines for p in doc.get("puzzles", []) if p.get("from", "task") == "task"
                and not (set((p.get("files") or {}).values()) & {"missing", "refused"}))
    return {"label": label, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "exit": done.returncode,
            "checks": checks, "tasks": tasks,
            "per_check": round(seconds / checks, 2) if checks else None, "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2), "grades": grades,
            "stderr_tail": done.stderr[-2000:] if done.returncode not in (0, 1) else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default=platform.node())
    parser.add_argument("--devices", action="append", default=[], help="--device for every run (default: all here)")
    parser.add_argument("--jobs", action="append", type=int, default=[], help="--jobs of a Ray run (repeatable)")
    parser.add_argument("--share", action="append", type=int, default=[], help="WORKBOOK_GPU_SHARE of a Ray run")
    parser.add_argument("--warm", action="store_true", help="time a second run on the same cache")
    parser.add_argument("--out", type=Path, help="the JSON of every run")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--logs", type=Path, help="write each run's stdout and stderr into this folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="class-bench-"))
    secret = work / "grader-secret.txt"
    secret.write_text("TOPSECRET-BENCH-FILE\n")
    klass = work / "class"
    expected = make_class(klass, secret)
    subs = sorted(p for p in klass.iterdir() if p.is_dir() and not p.name.startswith("."))
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, "WORKBOOK_LANG": "en", "WORKBOOK_MEMORY_LIMIT_MB": "512",
           "WORKBOOK_CLASS_SECRET": "TOPSECRET-BENCH-ENV", "WORKBOOK_NO_PROGRESS": "1"}
    env.pop("RAY_ADDRESS", None)
    common = [f"--puzzle={p}" for p in PUZZLES] + [f"--device={d}" for d in args.devices] + ["--json"]
    cards = gpus()
    cores = len(os.sched_getaffinity(0))
    runs = [run("one process", [*map(str, subs), *common], env, work / "cache", args.warm, args.logs)]
    for jobs in args.jobs or [cores]:
        shares = args.share if cards and args.share else [None]
        for share in shares:
            label = f"Ray, --jobs {jobs}" + (f", {share} tasks per GPU" if share is not None else "")
            extra = {"WORKBOOK_GPU_SHARE": str(share)} if share is not None else {}
            runs.append(run(label, [str(klass), f"--out={work / 'out'}", f"--jobs={jobs}", *common], {**env, **extra},
                            work / "cache", args.warm, args.logs))
    base = runs[0]
    for r in runs:
        r["speedup"] = round(base["seconds"] / r["seconds"], 2) if r["seconds"] else None
        r["disagrees"] = {name: (g, base["grades"].get(name)) for name, g in r["grades"].items()
                          if g != base["grades"].get(name)}
        r["wrong"] = {name: g for name, g in r["grades"].items()
                      if name in expected and any(g.get(p) not in expected[name][p] for p in PUZZLES)}
    result = {"label": args.label, "date": time.strftime("%Y-%m-%d"), "host": platform.node(), "cores": cores,
              "gpus": cards, "python": sys.version.split()[0], "devices": args.devices or "all here",
              "warm": args.warm, "submissions": len(subs), "puzzles": list(PUZZLES), "runs": runs}
    print(f"\n{args.label}: {cores} cores, {len(cards)} GPUs; {len(subs)} submissions x {len(PUZZLES)} puzzles, "
          f"{'warm' if args.warm else 'cold'} builds\n")
    print("| run | seconds | CPU-seconds | checks (tasks) | per check | speed-up | load | grades differ |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['label']} | {r['seconds']} | {r['cpu_seconds']} | {r['checks']} ({r['tasks']}) | "
              f"{r['per_check']} s | {r['speedup']}x | {r['load_before']}-{r['load_after']} | "
              f"{len(r['disagrees']) or 'none'} |")
    for r in runs:
        if r["wrong"]:
            print(f"\n{r['label']}: not the right grade for {sorted(r['wrong'])}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    if args.keep:
        print(f"\nkept: {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["exit"] in (0, 1) for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
