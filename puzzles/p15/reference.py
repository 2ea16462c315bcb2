"""Puzzle 15 reference: output[row] = a[row, 0] + ... + a[row, size - 1].

One block of TPB = 64 threads per row (grid = batch), size <= 64. The sums
are computed in float64 (exact for the 1/8 grid below).

Term by term, and the input that makes each one decide the answer:
- a[row, j] for every j: values that all differ, with both signs, and
  |a| >= 0.25, so a skipped element or one added twice is off by 0.25 or
  more (far over the tolerance);
- the last element when size is not a power of two (6, 33, 37): a fold
  that starts at size // 2 instead of TPB / 2 never adds it (33 = 32 + 1:
  exactly the last one is lost);
- the zeros past the end of the row: size < TPB in most cases, so a thread
  that loads a[row, i] for i >= size adds the next row's elements (rows
  follow each other in memory) instead of 0, and on the last row reads
  past the end of `a` (the simulator stops at that read);
- row = block_idx.x: batch != size everywhere, and every row sums to a
  different value, so reading a column, or another row, shows;
- size == TPB (5 rows of 64): every thread holds an element, 2 warps per
  block and several blocks, where a missing barrier races on a real GPU;
- size 1: only thread 0 holds an element;
- unrounded float32 values (one case): the only one where the order of the
  additions changes the last bits; the tolerance covers that. They are off
  the float16 and bfloat16 grids: a tree kept in 16 bits fails there;
- more blocks than a block has threads: '70 rows of 50' (a row itself can
  never outgrow the block: size <= TPB);
- the tree: thread 0 adding up the row's 64 slots one by one gets the same
  sum, and breaks the part's access budget (one global read per thread, at
  most two shared reads per fold) on the simulator; every thread writing
  the row's sum is the same value written 64 times, a race the simulator
  names;
- a row that sums to exactly 0: in 'rows summing to 0, 5 of 20' every row
  holds 10 values and their negatives, in a random order (and a 0 in some
  row), so every output is exactly 0: a kernel that writes a row's sum only
  when it is not 0 leaves output as the launch found it (NaN);
- an index past 16 bits: '1025 rows of 64, past a 16-bit index' has 65600
  elements, more than 65536, so an element's place in `a` kept in Int16 or
  UInt16 wraps around (rows from 1024 on read the first rows again);
- a shape drawn from the seed among a few ("random shape b x n").
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: a single column, a width one past a
power of two, a width that is no power of two, full rows, rows summing to
0, more blocks than a block has threads and an index past 2^16; each has a
case named for it.
"""

import numpy as np

# Magnitudes: the multiples of 1/8 from 0.25 to 50, 399 of them; drawn without
# repeats and given random signs, the values all differ. A row of at most 64
# of them sums to a multiple of 1/8 below 2^12, exact in float32 in any order.
_GRID = np.arange(2, 401) / 8.0
TPB = 64
PAST_16_BITS = (1025, 64)  # rows, columns: 65600 elements, more than 16 bits count (65536)


def _distinct(rng: np.random.Generator, batch: int, size: int) -> np.ndarray:
    """Values that all differ (for more than the grid holds, values that differ within each row)."""
    n = batch * size
    if n > _GRID.size:
        picks = np.concatenate([rng.choice(_GRID.size, size, replace=False) for _ in range(batch)])
    else:
        picks = rng.choice(_GRID.size, n, replace=False)
    values = _GRID[picks] * rng.choice([-1.0, 1.0], n)
    return values.reshape(batch, size).astype(np.float32)


def _unrounded(rng: np.random.Generator, batch: int, size: int) -> np.ndarray:
    n = batch * size
    values = rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)
    return values.reshape(batch, size).astype(np.float32)


# The seeded case's shapes (batch, size): a few, so that builds are reused.
SEEDED_SHAPES = ((2, 64), (9, 17), (30, 45), (100, 3), (12, 60))


def _rows_summing_to_zero(rng: np.random.Generator, batch: int, size: int) -> np.ndarray:
    """Every row: size // 2 values of the grid and their negatives, in a random order (and a 0
    when size is odd); in the first row one of the pairs is two zeros."""
    rows = []
    for row in range(batch):
        half = _GRID[rng.choice(_GRID.size, size // 2, replace=False)] * rng.choice([-1.0, 1.0], size // 2)
        if row == 0:
            half[0] = 0
        rows.append(rng.permutation(np.concatenate([half, -half, np.zeros(size % 2)])))
    return np.array(rows, dtype=np.float32)


def _case(name: str, ko: str, a: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    batch, size = a.shape
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"batch": batch, "size": size},
            "inputs": {"a": np.ascontiguousarray(a, dtype=np.float32)}, "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    batch, size = SEEDED_SHAPES[rng.integers(len(SEEDED_SHAPES))]
    pictured = np.array([[1, 2, -3, 4], [5, -1, 6, -2], [3, -8, 9, -7]], dtype=np.float32)
    return [
        _case("3 rows of 4, as pictured", "그림과 같은 3행 4열", pictured * rng.choice([1, -1])),
        _case("4 short rows of 6", "짧은 6열 4행", _distinct(rng, 4, 6)),
        _case("5 full rows of 64", "꽉 찬 64열 5행", _distinct(rng, 5, 64), special=("full_rows",)),
        _case("6 rows of 37, odd width", "홀수 너비 37열 6행", _distinct(rng, 6, 37), special=("odd_width",)),
        _case("3 rows of 33, one past 32", "32보다 하나 많은 33열 3행", _distinct(rng, 3, 33),
              special=("one_past_a_power_of_two",)),
        _case("7 rows of a single value", "값 하나짜리 7행", _distinct(rng, 7, 1), special=("single_column",)),
        _case("rows summing to 0, 5 of 20", "합이 0인 20열 5행", _rows_summing_to_zero(rng, 5, 20),
              special=("row_sums_to_zero",)),
        _case("unrounded, 4 rows of 64", "반올림되는 값, 64열 4행", _unrounded(rng, 4, 64)),
        _case("70 rows of 50", "50열 70행", _distinct(rng, 70, 50), special=("more_blocks_than_threads",)),
        _case("1025 rows of 64, past a 16-bit index", "64열 1025행, 16비트 인덱스를 넘음",
              _distinct(rng, *PAST_16_BITS), special=("index_past_16_bits",)),
        _case(f"random shape {batch} x {size}", f"무작위 모양 {batch} x {size}", _distinct(rng, batch, size),
              seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    return {"output": a.sum(axis=1)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    batch, size = a.shape
    found = set()
    if size == 1:
        found.add("single_column")
    if size & (size - 1) and size > 2:
        found.add("odd_width")
        if (size - 1) & (size - 2) == 0:
            found.add("one_past_a_power_of_two")
    if size == TPB:
        found.add("full_rows")
    if np.any(a.sum(axis=1) == 0) and np.any(a != 0):
        found.add("row_sums_to_zero")
    if batch > TPB:
        found.add("more_blocks_than_threads")
    if a.size > 2**16:
        found.add("index_past_16_bits")
    return found
