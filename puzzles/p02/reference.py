"""Puzzle 2 reference: output = a + b, one thread per element.

Which input makes each part of the kernel decide the answer:
- `a[i]` and `b[i]` with the same `i`: every value of `a` differs from every
  other, and so does every value of `b`, so reading either one at a shifted
  index (i + 1, or 0 everywhere) gives a wrong sum somewhere; reading one
  past the end gives NaN on the simulator;
- both inputs, not one twice: `a` and `b` never hold the same value (but
  the pairs of zeros), so
  `a[i] + a[i]` or `b[i] + b[i]` is wrong everywhere. In "a units, b
  thousands" the sum shows which input each digit came from: 3004.5 is
  3000 from b and 4.5 from a;
- `+`, not `-`: in "b almost cancels a" the sum is small and a - b is about
  twice a, so a wrong sign is far off;
- one thread per element: the block is exactly `size` wide, so a thread that
  writes another's element leaves one unwritten (NaN);
- a block of 100 threads ("100 values, several warps"): threads 32 and up
  belong to other warps than thread 0, and must still find their own element;
- float32: the reference adds in float32, as the kernel does, so the check is
  exact. In "big a + small b rounds" most sums round (the spacing of float32
  near 2e7 is 2), the same way in both. "100 values, several warps" is off
  the float16 and bfloat16 grids: adding in 16 bits is wrong there;
- one thread per element at every size: "1024 values, the largest block" has
  as many threads as a GPU block may hold; one thread doing two elements (or
  all of them) gives the right sums, and breaks the part's access budget of
  one write per thread on the simulator;
- exact zeros: in "zeros and exact cancels, 9" some positions hold 0 in
  both inputs and others a value and its negative, so their sums are exactly
  0: a kernel that writes only where a sum (or an input) is not 0 leaves
  those elements unwritten (NaN);
- a size drawn from the seed among a few ("random size n"), so repeated runs
  meet more sizes than a fixed list.
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): a pair of zeros, a sum of exactly 0 from a value and its
negative, b almost cancelling a, a sum below 0, sums past float16's largest
value, and the largest block; each has a case named for it.
"""

import numpy as np

# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (31, 255, 500, 769, 1023)
FLOAT16_MAX = 65504.0
LARGEST_BLOCK = 1024


def _case(name: str, ko: str, a, b, seeded: bool = False, special: tuple = ()) -> dict:
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    assert a.shape == b.shape
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": special}


def _zeros_and_cancels(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """9 positions: 2 where a and b are both 0, 3 where b is -a, 4 with sums that are not 0
    (one of them 0 in a only, one 0 in b only), in a random order."""
    x = rng.permutation(np.arange(1, 20))[:9] * 0.75 * rng.choice([-1.0, 1.0], 9)
    a = np.array([0, 0, x[0], x[1], x[2], 0, x[3], x[4], x[5]])
    b = np.array([0, 0, -x[0], -x[1], -x[2], x[6], 0, x[7], x[8]])
    order = rng.permutation(9)
    return a[order], b[order]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    # a cancel case: b is -a plus a small offset, all offsets different
    big = rng.uniform(100, 1000, 7) * rng.choice([-1.0, 1.0], 7)
    offsets = rng.permutation(np.arange(1, 8)) * 0.125 * rng.choice([-1.0, 1.0], 7)
    return [
        _case("4 values", "값 4개", rng.uniform(-5, 5, 4).round(2), rng.uniform(-5, 5, 4).round(2)),
        _case("a units, b thousands, 10", "a는 일의 자리, b는 천 단위, 10개",
              rng.permutation(10) + 0.5, (rng.permutation(10) + 1) * 1000.0),
        _case("b almost cancels a, 7", "b가 a를 거의 상쇄, 7개", big, -big.astype(np.float32) + offsets,
              special=("b_almost_cancels_a",)),
        _case("zeros and exact cancels, 9", "0과 정확한 상쇄, 9개", *_zeros_and_cancels(rng),
              special=("both_zero", "exact_cancel")),
        _case("big a + small b rounds, 13", "큰 a + 작은 b가 반올림됨, 13개",
              rng.uniform(1e7, 3e7, 13), rng.uniform(0.1, 4, 13), special=("beyond_float16",)),
        _case("100 values, several warps", "값 100개, 워프 여러 개", rng.normal(0, 100, 100), rng.normal(0, 100, 100),
              special=("sum_below_zero",)),
        _case("1024 values, the largest block", "값 1024개, 가장 큰 블록",
              rng.normal(0, 100, 1024), rng.normal(0, 100, 1024), special=("largest_block",)),
        _case(f"random size {n}", f"무작위 크기 {n}", rng.normal(0, 100, n), rng.normal(0, 100, n), seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    return {"output": (a + b).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    total = a + b
    found = set()
    if np.any((a == 0) & (b == 0)):
        found.add("both_zero")
    if np.any((total == 0) & (a != 0)):
        found.add("exact_cancel")
    if np.all(np.abs(total) * 100 < np.abs(a)):
        found.add("b_almost_cancels_a")
    if np.any(total < 0):
        found.add("sum_below_zero")
    if np.any(np.abs(total) > FLOAT16_MAX):
        found.add("beyond_float16")
    if case["params"]["size"] == LARGEST_BLOCK:
        found.add("largest_block")
    return found
