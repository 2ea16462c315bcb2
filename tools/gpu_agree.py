"""Whether the simulator gives a wrong kernel the same wrong answer as the GPU: run on a GPU
host, each kernel on both, with one seed, and compare case by case what each got (how many
elements are wrong, the largest error, the first wrong elements and their values).

    python tools/gpu_agree.py OUT.jsonl [ID ...]

Without ids: every wrong kernel of p33 (tensor cores) whose wrong.toml says its answer is
deterministic. A wrong fragment layout is not a race: a GPU gives the same wrong values on
every run, and the simulator, which puts the matrices together by NVIDIA's lane maps, must
give those values too. One line per kernel: {"id", "agree", "cases": [...]}.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from workbook.author import curriculum
from workbook.check import engine
from workbook.course import catalog

DETERMINISTIC = "deterministic"  # a word of a wrong.toml's comments that marks such a kernel


def _got(dev) -> dict[str, list]:
    """Per case and output: what the device got, as far as the report keeps it."""
    found = {}
    for case in dev.cases:
        for out in case.outputs:
            found[f"{case.name} / {out.name}"] = [out.mismatches, out.max_abs_error,
                                                  [list(w) for w in out.first_wrong], out.nan_count]
    return found


def _same(a: list | None, b: list | None) -> bool:
    """The same wrong answer: as many wrong elements, at the same places, with values equal up
    to the last bits (the tensor core and the simulator add a product's terms in their own
    order), NaN where the other has NaN."""
    if a is None or b is None:
        return a is b
    (count_a, _, first_a, nan_a), (count_b, _, first_b, nan_b) = a, b
    if count_a != count_b or nan_a != nan_b or [w[0] for w in first_a] != [w[0] for w in first_b]:
        return False
    got_a = np.array([w[1] for w in first_a], dtype=float)
    got_b = np.array([w[1] for w in first_b], dtype=float)
    return bool(np.allclose(got_a, got_b, rtol=1e-6, atol=1e-6, equal_nan=True))


def one(kernel: curriculum.WrongKernel) -> dict:
    with curriculum.Sandbox() as sandbox:
        puzzle = sandbox.puzzle(kernel.puzzle, kernel.dir)
        result = engine.check_puzzle(puzzle, engine.Options(seed=5, part=kernel.part, quick=True,
                                                            devices=("sim", "gpu"), sanitize="off", cache=False))
    rows = []
    agree = True
    for part in result.parts:
        sim, gpu = part.kernels.get("sim"), part.kernels.get("gpu")
        if sim is None or gpu is None:
            return {"id": kernel.id, "agree": None, "why": "the sim or the gpu did not run"}
        got_sim, got_gpu = _got(sim), _got(gpu)
        for key in sorted(set(got_sim) | set(got_gpu)):
            same = _same(got_sim.get(key), got_gpu.get(key))
            agree = agree and same
            rows.append({"case": key, "same": same, "sim": got_sim.get(key), "gpu": got_gpu.get(key)})
    return {"id": kernel.id, "agree": agree, "cases": rows}


def main(path: str, ids: list[str]) -> int:
    p33 = catalog.load("p33")
    kernels = [k for k in curriculum.wrong_kernels(p33)
               if k.id in ids or (not ids and DETERMINISTIC in (k.dir / "wrong.toml").read_text(encoding="utf-8"))]
    print(f"{len(kernels)} wrong kernels", file=sys.stderr)
    with open(path, "w", encoding="utf-8") as f:
        for kernel in kernels:
            row = one(kernel)
            print(kernel.id, "agree" if row["agree"] else "DIFFER", file=sys.stderr)
            f.write(json.dumps(row) + "\n")
            f.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
