"""Run chosen wrong kernels and print each expectation's verdict, as JSON.

    python tools/run_wrong.py p10/barrier_in_branch p14/in_place_scan ...

What `workbook author verify --run` does for every kernel, for a few: handy
on a rented GPU where minutes count.
"""

from __future__ import annotations

import json
import sys

from workbook.author import curriculum
from workbook.course import catalog


def main(ids: list[str]) -> int:
    kernels = {k.id: k for p in catalog.all_puzzles() for k in curriculum.wrong_kernels(p)}
    unknown = [i for i in ids if i not in kernels]
    if unknown:
        print(f"unknown wrong kernels: {', '.join(unknown)}", file=sys.stderr)
        return 2
    checks = []
    with curriculum.Sandbox() as sandbox:
        for i in ids:
            checks += [vars(v) for v in curriculum.run_wrong(sandbox, kernels[i])[1]]
    print(json.dumps({"checks": checks, "failed": sum(not c["ok"] for c in checks)}, indent=1))
    return 1 if any(not c["ok"] for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
