"""Puzzle 11 reference: output[i] = a[i-2] + a[i-1] + a[i], terms before the start left out.

The kernel runs ceildiv(size, 64) blocks of 64 threads; each block copies its
elements and a two-element halo (the two elements before it) into shared
memory. Which input makes each part of the kernel decide the answer:
- `a[i]`, `a[i-1]`, `a[i-2]`: every value differs from every other one and
  none is 0, so a window shifted by one place (a[i-1..i+1], a[i-3..i-1]), a
  term left out or counted twice changes the sum;
- the start of `a`: output[0] = a[0] and output[1] = a[0] + a[1] in every
  case, so a halo read before index 0 (NaN on the simulator, garbage on a
  GPU) or a halo slot block 0 never zeroes shows, even with one element;
- the halo of the other blocks: the first two outputs of blocks 1, 2, ...
  need the previous block's last two elements ('one block and 1' is the
  smallest such case; '3 blocks and 7' and '16 blocks' have many);
- the guard `i < size`: sizes that leave a partial last block (1, 2, 5, 65,
  199, 1000), and exactly one full block (64), where no thread is spare;
- barrier(): every case with more than one thread; 64 threads per block
  are two warps, and '16 blocks, 1000' has the most threads and blocks,
  where a missing barrier is likeliest to show on a real GPU.

- more blocks than a block has threads: '70 blocks, 4421' (and a size drawn
  from the seed among a few, "random size n");
- float32, not 16 bits: '70 blocks, 4421' holds odd multiples of 2^-12
  between 1 and 8 in size. float16 keeps 11 significant bits and bfloat16 8,
  so neither holds any of them (a window kept in 16 bits is wrong there),
  while float32 holds every sum of three exactly (at most 17 bits);
- copying into shared memory once: a thread that reads its window from `a`
  gets the right sums, and breaks the part's access budget (at most two
  global reads per thread: its element and, for threads 0 and 1, a halo
  element) on the simulator.

Exact comparison: every value is a multiple of 1/8 between -100 and 100, or
an odd multiple of 2^-12 below 8, so a sum of three of them is exact in
float32, in any order.
"""

import numpy as np


def _values(rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` different nonzero multiples of 1/8 in [-100, 100]."""
    steps = np.concatenate([np.arange(-800, 0), np.arange(1, 801)])
    return (rng.choice(steps, size=size, replace=False) / 8).astype(np.float32)


def _fine(rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` different odd multiples of 2^-12 between 1 and 8 in size, either sign: off the
    float16 and bfloat16 grids, and every sum of three is exact in float32."""
    odd = np.arange(4097, 32768, 2)
    return (rng.choice(odd, size=size, replace=False) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (3, 150, 900, 2000, 3333)

_CASES = [
    # name, Korean label, size
    ("1 element", "원소 1개", 1),
    ("2 elements", "원소 2개", 2),
    ("5 elements", "원소 5개", 5),
    ("one full block, 64", "꽉 찬 블록 하나, 64", 64),
    ("one block and 1, 65", "블록 하나와 1개, 65", 65),
    ("3 blocks and 7, 199", "블록 3개와 7개, 199", 199),
    ("16 blocks, 1000", "블록 16개, 1000", 1000),
]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    found = [{"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size},
              "inputs": {"a": _values(rng, size)}} for name, ko, size in _CASES]
    found.append({"name": "70 blocks, 4421", "label": {"en": "70 blocks, 4421", "ko": "블록 70개, 4421개"},
                  "params": {"size": 4421}, "inputs": {"a": _fine(rng, 4421)}})
    found.append({"name": f"random size {n}", "label": {"en": f"random size {n}", "ko": f"무작위 크기 {n}"},
                  "params": {"size": n}, "inputs": {"a": _fine(rng, n)}, "seeded": True})
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    out = a.copy()
    out[1:] += a[:-1]
    out[2:] += a[:-2]
    return {"output": out}
