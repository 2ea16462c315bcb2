"""Puzzle 7 reference: output = a + 10 on a rows x cols matrix, over a 2D grid of 4 x 4 blocks.

The grid is ceildiv(cols, 4) blocks across (x) and ceildiv(rows, 4) down (y).

Which input makes each part of the kernel decide the answer:
- x for the column, y for the row: shapes whose two directions need
  different numbers of blocks (6 x 9: 3 across, 2 down; 9 x 6, 1 x 13,
  13 x 1, 17 x 23). Swapping x and y there covers the wrong area: some
  elements are never written (NaN);
- `block_idx.y * block_dim.y` and `block_idx.x * block_dim.x`: every shape
  larger than one block in that direction; without them the first tile is
  written again and again, and the rest stays NaN;
- values that all differ: reading a[col, row], or another element, shows;
- the guard, both halves: every shape but 4 x 4 and 8 x 12 leaves the
  right-hand blocks sticking out past the last column, or the bottom blocks
  past the last row (6 x 9 does both). Guarding only the rows, a thread past
  the last column reads and writes the start of the next row, and from the
  last row past the end of `a` and `output` (the simulator stops at the
  read and names it). 4 x 4 (one
  block) and 8 x 12 (3 full blocks across, 2 down) have no spare thread,
  and show that the guard drops no element;
- `+ 10` in float32: computed as the kernel does, so the check is exact.
  "17 x 23, 30 blocks" holds values off the float16 and bfloat16 grids:
  adding in 16 bits is wrong there;
- a grid of many more blocks than a block has threads: "37 x 70, 180
  blocks" (18 across, 10 down), where a block's corner lies far from the
  start of the matrix;
- one thread per element: a thread that does a row of its block (or more)
  gets the right values, and breaks the part's access budget of one write
  per thread on the simulator; a guard on the flattened index
  (row * cols + col < rows * cols) lets a thread past the last column write
  the next row's first element, the right value but a race with its owner,
  which the simulator names.
- rows, columns and elements past narrow counts: '257 x 257, past a 16-bit
  index' has more rows and columns than a byte counts and 66049 elements,
  more than a 16-bit index does: a row or column kept in 8 bits, or an
  element's place kept in 16 bits, wraps around (65 x 65 blocks).
One shape is drawn from the seed among a few ("random shape r x c"), so
repeated runs meet more shapes than a fixed list.
The special points (the manifest's [[parts.special]], found in a case's
shape by `hits`): blocks sticking out both ways, exactly one block, full
blocks only, a single row, a single column, more blocks than a block has
threads and an index past 2^16; each has a case named for it.
"""

import numpy as np

# The seeded case's shapes (rows, cols): a few, so that builds are reused.
SEEDED_SHAPES = ((5, 31), (33, 8), (12, 50), (61, 3), (26, 19))
TPB = 4
PAST_16_BITS = (257, 257)  # 66049 elements: more than 16 bits count, more rows and columns than 8 bits


def _case(name: str, ko: str, rng: np.random.Generator, rows: int, cols: int, unrounded: bool = False,
          seeded: bool = False, special: tuple = ()) -> dict:
    n = rows * cols
    if unrounded:  # off the 16-bit grids
        a = rng.normal(0, 100, (rows, cols)).astype(np.float32)
    else:  # every value differs: quarters around zero, in a random order
        a = (rng.permutation(np.arange(n) - n // 3).astype(np.float32) * 0.25 + 0.125).reshape(rows, cols)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"rows": rows, "cols": cols},
            "inputs": {"a": a}, "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    rows, cols = SEEDED_SHAPES[rng.integers(len(SEEDED_SHAPES))]
    return [
        _case("6 x 9, partial both ways", "6 x 9, 양쪽 다 덜 찬 블록", rng, 6, 9, special=("partial_both_ways",)),
        _case("9 x 6, taller than wide", "9 x 6, 세로로 긴 행렬", rng, 9, 6),
        _case("exactly one block, 4 x 4", "딱 한 블록, 4 x 4", rng, 4, 4, special=("exactly_one_block",)),
        _case("8 x 12, full blocks only", "8 x 12, 꽉 찬 블록만", rng, 8, 12, special=("full_blocks_only",)),
        _case("one row, 1 x 13", "행 하나, 1 x 13", rng, 1, 13, special=("single_row",)),
        _case("one column, 13 x 1", "열 하나, 13 x 1", rng, 13, 1, special=("single_column",)),
        _case("17 x 23, 30 blocks", "17 x 23, 블록 30개", rng, 17, 23, unrounded=True),
        _case("37 x 70, 180 blocks", "37 x 70, 블록 180개", rng, 37, 70, special=("more_blocks_than_threads",)),
        _case("257 x 257, past a 16-bit index", "257 x 257, 16비트 인덱스를 넘음", rng, *PAST_16_BITS,
              special=("index_past_16_bits",)),
        _case(f"random shape {rows} x {cols}", f"무작위 모양 {rows} x {cols}", rng, rows, cols, seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a + np.float32(10)).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's shape reaches."""
    rows, cols = case["params"]["rows"], case["params"]["cols"]
    across, down = -(-cols // TPB), -(-rows // TPB)
    found = set()
    if rows % TPB and cols % TPB and across > 1 and down > 1:
        found.add("partial_both_ways")
    if rows == cols == TPB:
        found.add("exactly_one_block")
    if rows % TPB == cols % TPB == 0 and across > 1 and down > 1:
        found.add("full_blocks_only")
    if rows == 1 and cols > TPB:
        found.add("single_row")
    if cols == 1 and rows > TPB:
        found.add("single_column")
    if across * down > TPB * TPB:
        found.add("more_blocks_than_threads")
    if rows * cols > 2**16 and rows > 256 and cols > 256:
        found.add("index_past_16_bits")
    return found
