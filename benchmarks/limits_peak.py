"""The most memory each run of learner code took as a whole, under its containment.

    python benchmarks/limits_peak.py [ID...] [--device D]... [--json]

Grades the reference solutions of the puzzles named (default: every puzzle) as
`workbook grade` would, sandbox and all, and prints, for each learner child
(a simulator launcher, a GPU launcher, compute-sanitizer around one, a MAX graph
worker), the most memory its whole tree held (its cgroup's peak: page cache,
shared memory and every process together), next to the limit it ran under. This
is what says whether WORKBOOK_MEMORY_LIMIT_MB's 4096 MB, and the allowances added
to it (a GPU run's buffers, compute-sanitizer's own memory: kernelrun.py), leave
right work room on a machine, a GPU's above all. It needs a cgroup
(`workbook doctor` says whether this machine gives one); the watcher keeps no peak.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbook.check import engine
from workbook.child import containment, sandbox
from workbook.child.processes import Children  # noqa: E402
from workbook.core import settings
from workbook.course import catalog  # noqa: E402
from workbook.grade import grading


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--device", action="append", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if containment.support().kind == containment.WATCHER:
        print(f"no cgroup here ({containment.support().why}): no peak to read", file=sys.stderr)
        return 3
    peaks: list[dict] = []
    closing = containment.Cgroup.close

    def close(group: containment.Cgroup) -> None:
        if not group._closed:
            peaks.append({"puzzle": current[0], "peak_mb": group.stopped().peak >> 20,
                          "limit_mb": group.memory_bytes >> 20, "oom": group.stopped().memory})
        closing(group)

    containment.Cgroup.close = close
    base = grading.definitions()
    ids = args.ids or [p.id for p in catalog.all_puzzles(base)]
    current = [""]
    box = sandbox.Sandbox.create()
    with tempfile.TemporaryDirectory(prefix="workbook-peak-") as folder:
        submission = Path(folder)
        for pid in ids:
            shutil.copytree(base / "solutions" / pid, submission / "puzzles" / pid)
        options = engine.Options(seed=1, devices=tuple(args.device), cache=False)
        for pid in ids:
            current[0] = pid
            found = grading.grade(submission, [pid], base, options=options, sandbox="bwrap",
                                  make_children=lambda: Children(sandbox=box, graded=True,
                                                                 budget=settings.check_budget()))
            status = found.puzzles[0].status.value if found.puzzles else "?"
            for peak in peaks:
                peak.setdefault("status", status)
    if args.json:
        print(json.dumps(peaks))
    else:
        for peak in peaks:
            print(f"{peak['puzzle']:5} {peak['status']:8} {peak['peak_mb']:6} MB of {peak['limit_mb']:6} MB"
                  + ("  OOM" if peak["oom"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
