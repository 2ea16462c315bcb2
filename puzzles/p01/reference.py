"""Puzzle 1 reference: output = a + 10, one thread per element.

Which input makes each part of the kernel decide the answer:
- `a[i]`: values that all differ (an index slip, or reading a[0] everywhere,
  gives the wrong value somewhere), negative ones and zero among them;
- `+ 10`: any value (forgetting it, or adding the thread number, shows);
- `i = thread_idx.x`: the threads are exactly the elements, so a thread that
  writes another's element leaves one unwritten (NaN) and one written twice;
- float32: the sum is computed in float32, as the kernel does, so the check
  can be exact (large values round; the reference rounds the same way).
  "random, 100 values" holds values off the float16 and bfloat16 grids: a
  kernel that adds in 16 bits is wrong there;
- one thread per element: "1024 values, the largest block" has as many
  threads as a GPU block may hold, 32 warps; a kernel written for a few
  elements (one thread looping over all of them, say) shows there, and the
  part's access budget (one write per thread) says so on the simulator.
The special points of the math (the manifest's [[parts.special]], found in a
case's inputs by `hits`): an element that is 0, a sum below 0, a sum past
float16's largest value, and the largest block; each has a case named for it.
The block is as wide as the vector: 4 elements as in the text, then sizes
that are not powers of two, and one size drawn from the seed among a few
("random size n"), so that repeated runs meet more sizes than a fixed list.
"""

import numpy as np


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (33, 250, 517, 777, 1000)


FLOAT16_MAX = 65504.0
LARGEST_BLOCK = 1024


def _case(name: str, ko: str, values, seeded: bool = False, special: tuple[str, ...] = ()) -> dict:
    a = np.asarray(values, dtype=np.float32)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a},
            "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    distinct = rng.permutation(np.arange(-13, 19)).astype(np.float32) * 0.5 + 0.25  # 32 different values
    return [
        _case("4 values", "값 4개", rng.uniform(-5, 5, 4).round(2)),
        _case("32 different values", "서로 다른 값 32개", distinct),
        _case("zeros and negatives, 7 values", "0과 음수, 값 7개", [0.0, -10.0, -0.5, 0.0, -1e-3, -42.0, -10.0],
              special=("zero", "sum_below_zero")),
        _case("large values round in float32, 13", "float32에서 반올림되는 큰 값, 13개",
              rng.uniform(1e7, 3e7, 13), special=("beyond_float16",)),
        _case("random, 100 values", "무작위 값 100개", rng.normal(0, 100, 100)),
        _case("1024 values, the largest block", "값 1024개, 가장 큰 블록", rng.normal(0, 100, 1024),
              special=("largest_block",)),
        _case(f"random size {n}", f"무작위 크기 {n}", rng.normal(0, 100, n), seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a + np.float32(10)).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    found = set()
    if np.any(a == 0):
        found.add("zero")
    if np.any(a + 10 < 0):
        found.add("sum_below_zero")
    if np.any(np.abs(a + 10) > FLOAT16_MAX):
        found.add("beyond_float16")
    if case["params"]["size"] == LARGEST_BLOCK:
        found.add("largest_block")
    return found
