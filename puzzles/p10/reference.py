"""Puzzle 10 reference: two kernels, each with one bug a plain run may not show.

Part memcheck, output[i] = a[i + 1] - a[i] (size - 1 outputs), on a grid of
64-thread blocks: every case leaves threads past the end, so a guard that
lets one too many through writes past the output (and reads past `a`).
Values all differ, so a subtraction the wrong way round, or from the wrong
neighbour, shows; the smallest case (2 values, one output) catches a guard
that stops one element early.

Part racecheck, output[r, c] = a[r, c-1] + a[r, c] + a[r, c+1] (missing
neighbours are 0), one 64-thread block per row: two warps, so a read of a
neighbour before it is written can happen between warps on a GPU. Values are
all different (and whole numbers, so the sum is exact in float32): reading a
neighbour too early gives a NaN or a stale value, and the first and last
columns check that the edges count their missing neighbour as 0.
"""

import numpy as np

TPB = 64


def _label(en: str, ko: str) -> dict:
    return {"name": en, "label": {"en": en, "ko": ko}}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "memcheck":
        found = []
        for size, en, ko in ((33, "33 values, 2 blocks", "값 33개, 블록 2개"),
                             (64, "64 values, 1 full block", "값 64개, 꽉 찬 블록 1개"),
                             (2, "2 values, 1 output", "값 2개, 출력 1개"),
                             (150, "150 values, 3 blocks", "값 150개, 블록 3개")):
            a = rng.permutation(np.arange(-size, size, 2)).astype(np.float32) * 0.75
            found.append({**_label(en, ko), "params": {"size": size}, "inputs": {"a": a}})
        return found
    found = []
    for rows, en, ko in ((1, "1 row", "1행"), (3, "3 rows", "3행"), (5, "5 rows", "5행")):
        a = rng.permutation(rows * TPB).reshape(rows, TPB).astype(np.float32) - 100
        found.append({**_label(en, ko), "params": {"rows": rows}, "inputs": {"a": a}})
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    if part == "memcheck":
        return {"output": (a[1:] - a[:-1]).astype(np.float64)}
    left = np.pad(a, ((0, 0), (1, 0)))[:, :-1]
    right = np.pad(a, ((0, 0), (0, 1)))[:, 1:]
    return {"output": ((left + a) + right).astype(np.float64)}
