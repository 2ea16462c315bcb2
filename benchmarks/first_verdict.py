"""When a learner sees the first verdict of `workbook run`, and when the run ends (issue 40).

For each puzzle given, several times: the reference solution with a comment of its own
(every build cold, as after an edit) is run as `workbook run ID` in a pipe, in a fresh copy
of the workbook; each line of its output is timed as it arrives. Printed per run: when the
line "First verdict after" came (the report of the first verdict, printed before the rest
of the run; where nothing was left to wait for, the end of the report), when the process
ended, the engine's own figures, and the load average when it started (the machine may be
shared: say so with the figures).

    python benchmarks/first_verdict.py p01 p12 p18 --repeat 3

Standard library only; run it from the repository root with the project's Python.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This checkout first, then whatever the caller had (a `pip --target` toolchain, as on the GPU host).
PYTHONPATH = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))


def one(root: Path, puzzle: str) -> dict:
    shutil.copytree(root / "solutions" / puzzle, root / "puzzles" / puzzle, dirs_exist_ok=True)
    edited = sorted(p for p in (root / "puzzles" / puzzle).rglob("*.mojo"))[0]
    edited.write_text(edited.read_text() + f"\n# edit {uuid.uuid4().hex}\n")
    load = os.getloadavg()[0]
    started = time.monotonic()
    env = {**os.environ, "WORKBOOK_ROOT": str(root), "WORKBOOK_LANG": "en", "PYTHONPATH": PYTHONPATH}
    child = subprocess.Popen([sys.executable, "-m", "workbook", "run", puzzle], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env=env, cwd=root)
    seen, lines = None, []
    for raw in iter(child.stdout.readline, b""):
        line = raw.decode(errors="replace")
        lines.append(line)
        if seen is None and line.startswith(("First verdict after", "done in")):
            seen = time.monotonic() - started
    child.wait()
    text = "".join(lines)
    engine = re.search(r"done in ([\d.]+) s(?: · first verdict after ([\d.]+) s)?", text)
    verdict = re.search(r"Verdict of the whole run: (.*)", text)
    return {"puzzle": puzzle, "on_screen": seen, "ended": time.monotonic() - started, "load": load,
            "engine_first": engine.group(2) if engine else None, "engine_total": engine.group(1) if engine else None,
            "exit": child.returncode, "verdict": verdict.group(1).strip() if verdict else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("puzzles", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="first-verdict-") as folder:
        root = Path(folder)
        for name in ("puzzles", "solutions"):
            shutil.copytree(REPO / name, root / name)
        for puzzle in args.puzzles:
            for n in range(args.repeat):
                r = one(root, puzzle)
                failed += r["exit"] != 0
                on_screen = f"{r['on_screen']:.1f} s" if r["on_screen"] is not None else "never"
                print(f"{puzzle} run {n + 1}: first verdict on screen {on_screen}, ended {r['ended']:.1f} s "
                      f"(engine: first {r['engine_first']} s, total {r['engine_total']} s), load {r['load']:.1f}, "
                      f"exit {r['exit']}, verdict {r['verdict'] or '-'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
