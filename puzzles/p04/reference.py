"""Puzzle 4 reference: output = a * 10 over a rows x cols matrix, launched with
one block of BLOCK_WIDTH = 4 by BLOCK_HEIGHT = 3 threads (x across, y down).

Which input makes each part of the kernel decide the answer:
- `row = thread_idx.y`, `col = thread_idx.x`: the block is 4 wide and 3 tall,
  so taking the row from x leaves column 3 unwritten (NaN) where the matrix
  is 4 columns wide ("3 rows x 4 cols, full block", "1 row x 4 cols");
- `t[row, col]`, not `t[col, row]`: no case is square, and on a rows x cols
  matrix with rows != cols the swapped index misses some elements (NaN) and
  lands on others twice or outside;
- `row < rows`: the rows past the end ("2 rows x 3 cols", "1 row x 4 cols")
  are past the end of the buffer, so a missing row guard (or a guard on
  block_dim) writes outside `output`: the simulator reports it;
- `col < cols`: a thread past the end of a row but not of the matrix lands
  on the start of the next row, in memory that belongs to the matrix, and
  writes the value that belongs there (a[row, col] is read through the same
  address). Only the last row's overflow leaves the buffer, so a missing
  column guard shows as a write outside `output` in every case with spare
  columns ("2 rows x 3 cols", "3 rows x 2 cols", "3 rows x 1 col");
- rows and cols not mixed up in the guard (`row < cols and col < rows`):
  "3 rows x 2 cols, tall" then skips row 2 (NaN), and "1 row x 4 cols"
  writes rows that don't exist;
- `* 10`: values that all differ, negative ones and zero among them;
- float32: the reference multiplies in float32, as the kernel does, so the
  check is exact (most products round). Every value carries a random
  fraction, off the float16 and bfloat16 grids: multiplying in 16 bits is
  wrong in every case;
- one thread per element: a thread that does its whole row (or more) gets
  the right values, and breaks the part's access budget of one write per
  thread on the simulator.
The matrix never outgrows the block of 4 x 3 (the text says so): one shape is
drawn from the seed ("random shape r x c", none of them square), the others
are fixed.
The special points (the manifest's [[parts.special]], found in a case's
shape and inputs by `hits`): the full block, spare rows and columns both,
spare columns only, spare rows only, and an element that is 0; each has a
case named for it.
"""

import numpy as np

BLOCK_WIDTH = 4
BLOCK_HEIGHT = 3


# The seeded case's shapes (rows, cols): a few, none square, so that builds are reused.
SEEDED_SHAPES = ((2, 4), (1, 3), (2, 1), (3, 2), (1, 2))


def _case(name: str, ko: str, rng: np.random.Generator, rows: int, cols: int, seeded: bool = False,
          special: tuple = ()) -> dict:
    assert rows <= BLOCK_HEIGHT and cols <= BLOCK_WIDTH
    n = rows * cols
    # values that all differ: distinct steps of 1.5 apart, each moved by a random fraction below 1
    values = (rng.permutation(n) - n // 2) * 1.5 + rng.uniform(-0.5, 0.5, n)
    if n > 2:
        values[rng.integers(n)] = 0.0
    a = values.reshape(rows, cols).astype(np.float32)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"rows": rows, "cols": cols},
            "inputs": {"a": a}, "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    rows, cols = SEEDED_SHAPES[rng.integers(len(SEEDED_SHAPES))]
    return [
        _case("3 rows x 4 cols, full block", "3행 x 4열, 블록을 꽉 채움", rng, 3, 4, special=("full_block",)),
        _case("2 rows x 3 cols, both short", "2행 x 3열, 행과 열 모두 남음", rng, 2, 3,
              special=("spare_rows_and_columns", "zero")),
        _case("3 rows x 2 cols, tall", "3행 x 2열, 세로로 긴 행렬", rng, 3, 2, special=("spare_columns_only",)),
        _case("1 row x 4 cols, 2 rows idle", "1행 x 4열, 두 줄이 쉼", rng, 1, 4, special=("spare_rows_only",)),
        _case("3 rows x 1 col, 3 cols idle", "3행 x 1열, 세 칸이 쉼", rng, 3, 1),
        _case(f"random shape {rows} x {cols}", f"무작위 모양 {rows} x {cols}", rng, rows, cols, seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a * np.float32(10)).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's shape and inputs reach."""
    rows, cols = case["params"]["rows"], case["params"]["cols"]
    found = set()
    if rows == BLOCK_HEIGHT and cols == BLOCK_WIDTH:
        found.add("full_block")
    if rows < BLOCK_HEIGHT and cols < BLOCK_WIDTH:
        found.add("spare_rows_and_columns")
    if rows == BLOCK_HEIGHT and cols < BLOCK_WIDTH:
        found.add("spare_columns_only")
    if rows < BLOCK_HEIGHT and cols == BLOCK_WIDTH:
        found.add("spare_rows_only")
    if np.any(case["inputs"]["a"] == 0):
        found.add("zero")
    return found
