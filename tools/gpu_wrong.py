"""What each wrong kernel does on the GPU alone, plainly and under every compute-sanitizer
tool, as JSON lines: the facts a `gpu` expectation in its wrong.toml is written from.

    python tools/gpu_wrong.py OUT.jsonl [ID ...]

Without ids: every wrong kernel that has no `gpu` expectation yet. Eight at a time
(a GPU host's 16 cores); a line is written as each kernel finishes.
"""

from __future__ import annotations

import functools
import json
import sys

from workbook.author import curriculum
from workbook.check import engine, scheduler
from workbook.course import catalog


def one(kernel: curriculum.WrongKernel) -> dict[str, str]:
    with curriculum.Sandbox() as sandbox:
        puzzle = sandbox.puzzle(kernel.puzzle, kernel.dir)
        out = {"id": kernel.id}
        for label, sanitize in (("plain", "off"), ("sanitized", "all")):
            options = engine.Options(seed=5, part=kernel.part, quick=label == "plain", devices=("gpu",),
                                     sanitize=sanitize, run_timeout=kernel.run_timeout, cache=False)
            try:
                result = engine.check_puzzle(puzzle, options)
            except Exception as exc:  # noqa: BLE001 - one kernel's trouble is a line of the table
                out[label] = f"error {exc!r}"
                continue
            shown = []
            for part in result.parts:
                dev = part.kernels.get("gpu")
                if dev is None:
                    continue
                kinds = sorted({f"{f.kind}@{f.line}" for f in dev.findings or []})
                bad = [c.name for c in dev.cases if not c.passed][:3]
                shown.append(f"{part.id}:{dev.status.value}" + (f" {kinds}" if kinds else "")
                             + (f" cases={bad}" if bad else ""))
            out[label] = f"{result.status.value} | " + " ; ".join(shown)
        return out


def main(path: str, ids: list[str]) -> int:
    kernels = [k for p in catalog.all_puzzles() for k in curriculum.wrong_kernels(p)
               if k.id in ids or (not ids and not any(e.device == "gpu" for e in k.expect))]
    print(f"{len(kernels)} wrong kernels", file=sys.stderr)
    with open(path, "w", encoding="utf-8") as f:
        def done(row: dict[str, str]) -> None:
            f.write(json.dumps(row) + "\n")
            f.flush()

        scheduler.run_all([functools.partial(one, k) for k in kernels], 8, done)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
