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

Both parts go beyond the block: memcheck's "66 blocks, 4200" and
racecheck's "70 rows" have more blocks than a block has threads. Their
values are off the float16 and bfloat16 grids (random float32; the code
around the bug is given, so the reference adds in the kernel's own order
and the check stays exact): a kernel that computes in 16 bits fails there.
Racecheck's text has each thread copy its value to shared memory once:
reading the neighbours from `a` again avoids the race and gives the right
values, and breaks the part's access budget (one global read per thread) on
the simulator. Each part also has a size drawn from the seed among a few
("random size n", "random rows n").
The code around each bug is given, its index included, so no case goes
past 2^16 elements: the learner writes no index there.

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`), the boundaries the text names: memcheck: a single output,
values that fill a block (its last thread is the first with no output), more
blocks than a block has threads; racecheck: a single row, more rows (blocks)
than a block has threads. Each has a case named for it.
"""

import numpy as np

TPB = 64


# The special points each case is there for, by part and name.
_POINTS = {
    "memcheck": {"2 values, 1 output": ("one_output",), "64 values, 1 full block": ("values_fill_a_block",),
                 "66 blocks, 4200": ("more_blocks_than_threads",)},
    "racecheck": {"1 row": ("single_row",), "70 rows": ("more_blocks_than_threads",)},
}


def _label(en: str, ko: str) -> dict:
    return {"name": en, "label": {"en": en, "ko": ko}}


# The seeded cases' sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (20, 100, 700, 1500, 3000)
SEEDED_ROWS = (2, 7, 12, 40)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "memcheck":
        n = int(rng.choice(SEEDED_SIZES))
        found = []
        for size, en, ko in ((33, "33 values, 2 blocks", "값 33개, 블록 2개"),
                             (64, "64 values, 1 full block", "값 64개, 꽉 찬 블록 1개"),
                             (2, "2 values, 1 output", "값 2개, 출력 1개"),
                             (150, "150 values, 3 blocks", "값 150개, 블록 3개"),
                             (n, f"random size {n}", f"무작위 크기 {n}")):
            a = rng.permutation(np.arange(-size, size, 2)).astype(np.float32) * 0.75
            found.append({**_label(en, ko), "params": {"size": size}, "inputs": {"a": a}, "seeded": size == n})
        found.append({**_label("66 blocks, 4200", "블록 66개, 4200개"), "params": {"size": 4200},
                      "inputs": {"a": rng.normal(0, 100, 4200).astype(np.float32)}})
        return [{**case, "special": _POINTS[part].get(case["name"], ())} for case in found]
    n = int(rng.choice(SEEDED_ROWS))
    found = []
    for rows, en, ko in ((1, "1 row", "1행"), (3, "3 rows", "3행"), (5, "5 rows", "5행"),
                         (n, f"random rows {n}", f"무작위 행 {n}")):
        a = rng.permutation(rows * TPB).reshape(rows, TPB).astype(np.float32) - 100
        found.append({**_label(en, ko), "params": {"rows": rows}, "inputs": {"a": a}, "seeded": rows == n})
    found.append({**_label("70 rows", "70행"), "params": {"rows": 70},
                  "inputs": {"a": rng.normal(0, 100, (70, TPB)).astype(np.float32)}})
    return [{**case, "special": _POINTS[part].get(case["name"], ())} for case in found]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    if part == "memcheck":
        return {"output": (a[1:] - a[:-1]).astype(np.float64)}
    left = np.pad(a, ((0, 0), (1, 0)))[:, :-1]
    right = np.pad(a, ((0, 0), (0, 1)))[:, 1:]
    return {"output": ((left + a) + right).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    found = set()
    if part == "memcheck":
        size = case["params"]["size"]
        if size == 2:
            found.add("one_output")
        if size % TPB == 0:
            found.add("values_fill_a_block")
        if -(-size // TPB) > TPB:
            found.add("more_blocks_than_threads")
        return found
    rows = case["params"]["rows"]
    if rows == 1:
        found.add("single_row")
    if rows > TPB:
        found.add("more_blocks_than_threads")
    return found
