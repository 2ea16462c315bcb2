"""Puzzle 5 reference: output[row, col] = a[0, col] + b[row, 0], one block of TPB x TPB = 8 x 8 threads.

`a` has shape (1, size), `b` has shape (size, 1), `output` (size, size).

Which input makes each part of the kernel decide the answer:
- `a[0, col]`: a's values all differ, so a column taken from the wrong
  thread id (or b's index used for both) shows;
- `b[row, 0]`: b's values all differ, and differ from a's by more than a
  constant, so the answer is never symmetric: swapping a and b, or writing
  output[col, row], gives its transpose, which is wrong off the diagonal.
  In "the text's example" a is 1, 2, 3 and b is 10, 20, 30, so the tens
  digit names the row and the units digit the column;
- the index order of the vectors: a[col, 0] reads past a's end, not a's
  values (every case but 1 x 1; the simulator stops at that read);
- the guard `row < size and col < size`: every size but 8 leaves threads of
  the 8 x 8 block outside the matrix, and without the guard they read past
  the end of `a` and write past the end of `output` (the simulator stops at
  the read and names it); "full block, 8 x 8" has no
  spare thread, and shows the guard drops no element;
- float32: the sum is computed in float32 as the kernel does, so the check
  is exact; "far apart" adds values a million times apart, which round; they
  are off the float16 and bfloat16 grids (a million does not even fit in
  float16), so adding in 16 bits is wrong there;
- one thread per element: a thread that fills a whole column (or more) gets
  the right values, and breaks the part's access budget of one write per
  thread on the simulator.
- exact zeros: in "zeros and cancels, 4 x 4" a and b each hold a 0, and
  some a[0, col] + b[row, 0] are exactly 0 (b holds the negatives of two of
  a's values): a kernel that writes only where a value, or the sum, is not 0
  leaves those elements unwritten (NaN).
The matrix never outgrows the block of 8 x 8 (the text says so): one size is
drawn from the seed ("random size n"), the others are fixed.
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): one element, the full block, sums past float16's largest
value, a 0 in a or b, and a sum of exactly 0; each has a case named for it.
"""

import numpy as np

TPB = 8
FLOAT16_MAX = 65504.0


def _case(name: str, ko: str, a, b, seeded: bool = False, special: tuple = ()) -> dict:
    a = np.asarray(a, dtype=np.float32).reshape(1, -1)
    b = np.asarray(b, dtype=np.float32).reshape(-1, 1)
    assert a.size == b.size
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": special}


def _distinct(rng: np.random.Generator, n: int, scale: float, shift: float) -> np.ndarray:
    """n values that all differ, in a random order."""
    return rng.permutation(np.arange(n)) * scale + shift + rng.uniform(0, scale / 2)


def _zeros_and_cancels(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """a: 0 and three values; b: 0, the negatives of two of a's values, and one more; in a
    random order each. All values are multiples of 1/4, so the sums are exact."""
    x = rng.permutation(np.arange(1, 30))[:4] * 0.25 * rng.choice([-1.0, 1.0], 4)
    return rng.permutation([0.0, x[0], x[1], x[2]]), rng.permutation([0.0, -x[0], -x[1], x[3] + 40])


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice((2, 4, 6)))
    return [
        _case("3 x 3, the text's example", "3 x 3, 본문의 예", [1, 2, 3], [10, 20, 30]),
        _case("5 x 5, all values differ", "5 x 5, 값이 모두 다름",
              _distinct(rng, 5, 1.0, -2.0), _distinct(rng, 5, 100.0, -250.0)),
        _case("full block, 8 x 8", "블록을 꽉 채우는 8 x 8",
              _distinct(rng, 8, 0.5, 0.0), _distinct(rng, 8, 3.0, -10.0), special=("full_block",)),
        _case("1 x 1, one value each", "1 x 1, 값 하나씩", rng.uniform(-5, 5, 1), rng.uniform(-5, 5, 1),
              special=("one_element",)),
        _case("7 x 7, far apart, rounds", "7 x 7, 크기 차가 커서 반올림됨",
              rng.uniform(1e6, 2e6, 7), rng.uniform(-1, 1, 7), special=("beyond_float16",)),
        _case("zeros and cancels, 4 x 4", "0과 상쇄, 4 x 4", *_zeros_and_cancels(rng), special=("zero", "sum_zero")),
        _case(f"random size {n}", f"무작위 크기 {n}", _distinct(rng, n, 1.5, -3.0), _distinct(rng, n, 40.0, -90.0),
              seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    return {"output": (a + b).astype(np.float64)}  # (1, n) + (n, 1) broadcasts to (n, n), in float32


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    total = a + b
    found = set()
    if a.size == 1:
        found.add("one_element")
    if a.size == TPB:
        found.add("full_block")
    if np.any(np.abs(total) > FLOAT16_MAX):
        found.add("beyond_float16")
    if np.any(a == 0) and np.any(b == 0):
        found.add("zero")
    if np.any((total == 0) & (a != 0)):
        found.add("sum_zero")
    return found
