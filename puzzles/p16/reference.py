"""Puzzle 16 reference: output = a @ b, a is m x k, b is k x n,
output[row, col] = sum over j < k of a[row, j] * b[j, col].

Blocks of TILE x TILE = 8 x 8 threads (x: column, y: row). Parts `naive`
and `tiled` launch a grid of ceildiv(n, 8) x ceildiv(m, 8) blocks; part
`shared` one block, with m, k, n <= 8. The expected products are computed
in float64 (exact for the 1/8 grid below).

Term by term, and the input that makes each one decide the answer:
- a[row, j] and b[j, col]: m, k and n all different in every case but the
  one-tile ones, and values that all differ, so a swapped index (b[col, j],
  a[j, row], a guard that bounds a's columns by n) reads the wrong element,
  leaves one out (n < k), or reads past the end of a matrix (the simulator
  stops at that read; compute-sanitizer's memcheck names it on a GPU);
- every j < k: |v| >= 0.25 everywhere, so leaving out one product (a tile
  loop that stops at k // TILE, a loop over n instead of k) changes an
  element by 1/16 or more;
- the last, partial tile along k: k = 22, 9 (one element in the last
  tile), 5 (less than one tile) and 21, so a tile that is not zero-filled
  past k adds values from the next row of a, from past the end of b, or
  stale values of the previous tile;
- rows and columns past m and n: m and n that are not multiples of 8 (19,
  13, 17, 10, 23, ...), so threads outside the output still copy their
  share of the tiles (others need it) but write nothing;
- several tiles along k (k = 16, 22, 24): the barrier between using a tile
  and overwriting it with the next one matters only there;
- 64 threads per block and several blocks in every `tiled` case but one:
  where a missing barrier races between warps on a real GPU;
- k = 1 (an outer product) and m = n = 1 (a dot product) for `naive`;
- unrounded float32 values (one case per part): the only case where the
  order of the additions changes the last bits; the tolerance covers that.
  They are off the float16 and bfloat16 grids: tiles, products or sums kept
  in 16 bits fail there;
- more blocks than a block has threads: '72x5x65, 81 blocks' (naive and
  tiled); many tiles along k: '8x90x8, 12 tiles' (tiled), so a tile loop
  with a fixed trip count, or one that only works for a few tiles, fails;
  part `shared` cannot outgrow its one block (its manifest says so);
- shared memory: the text has `shared` and `tiled` copy each element once
  per tile; a kernel that reads a and b from global memory in the product
  loop gets the right values, and breaks the parts' access budgets on the
  simulator. Threads past the edge that clamp their row and column instead
  of skipping the write write an edge element again, with the right value:
  a race the simulator names;
- a shape drawn from the seed among a few in every part ("random shape
  m x k x n").
"""

import numpy as np

# Magnitudes: the multiples of 1/8 from 0.25 to 50; with a random sign, 798
# different values, drawn without repeats within a matrix. Products are
# multiples of 1/64 below 2500, and a sum of at most 90 of them stays below
# 2^18: float32 holds every partial sum exactly (24 bits), in any order.
_SIGNED = np.concatenate([np.arange(2, 401), -np.arange(2, 401)]) / 8.0


def _distinct(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    return rng.choice(_SIGNED, rows * cols, replace=False).reshape(rows, cols).astype(np.float32)


def _unrounded(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    n = rows * cols
    values = rng.uniform(0.25, 2.0, n) * rng.choice([-1.0, 1.0], n)
    return values.reshape(rows, cols).astype(np.float32)


# The seeded cases' shapes (m, k, n): a few per part, so that builds are reused. No k
# beyond 90: the tiled part's budget counts the reads of 12 tiles at most.
SEEDED_SHAPES = {
    "naive": ((10, 30, 12), (33, 8, 17), (5, 50, 12), (24, 16, 9)),
    "shared": ((3, 5, 7), (8, 2, 6), (6, 7, 4), (1, 8, 8)),
    "tiled": ((10, 30, 12), (33, 8, 17), (5, 50, 12), (40, 17, 24)),
}


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False) -> dict:
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"m": m, "k": k, "n": n},
            "inputs": {"a": np.ascontiguousarray(a, dtype=np.float32),
                       "b": np.ascontiguousarray(b, dtype=np.float32)}, "seeded": seeded}


def _random(rng: np.random.Generator, part: str) -> dict:
    shapes = SEEDED_SHAPES[part]
    m, k, n = shapes[rng.integers(len(shapes))]
    return _case(f"random shape {m}x{k}x{n}", f"무작위 모양 {m}x{k}x{n}", *_pair(rng, m, k, n), seeded=True)


def _pair(rng, m, k, n, values=_distinct):
    return values(rng, m, k), values(rng, k, n)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "naive":
        return [
            _case("small, 2x3 times 3x4", "작은 행렬, 2x3 곱하기 3x4", *_pair(rng, 2, 3, 4)),
            _case("ragged edges, 19x22x13", "타일에 안 맞는 가장자리, 19x22x13", *_pair(rng, 19, 22, 13)),
            _case("dot product, 1x20x1", "내적, 1x20x1", *_pair(rng, 1, 20, 1)),
            _case("outer product, 9x1x7", "외적, 9x1x7", *_pair(rng, 9, 1, 7)),
            _case("unrounded, 17x21x10", "반올림되는 값, 17x21x10", *_pair(rng, 17, 21, 10, _unrounded)),
            _case("72x5x65, 81 blocks", "72x5x65, 블록 81개", *_pair(rng, 72, 5, 65)),
            _random(rng, part),
        ]
    if part == "shared":
        return [
            _case("small, 2x3 times 3x4", "작은 행렬, 2x3 곱하기 3x4", *_pair(rng, 2, 3, 4)),
            _case("one full tile, 8x8x8", "꽉 찬 타일 하나, 8x8x8", *_pair(rng, 8, 8, 8)),
            _case("k > n, 5x7 times 7x3", "k > n, 5x7 곱하기 7x3", *_pair(rng, 5, 7, 3)),
            _case("k < n, 7x3 times 3x6", "k < n, 7x3 곱하기 3x6", *_pair(rng, 7, 3, 6)),
            _case("unrounded, 6x8x5", "반올림되는 값, 6x8x5", *_pair(rng, 6, 8, 5, _unrounded)),
            _random(rng, part),
        ]
    return [
        _case("one tile, 8x8x8", "타일 하나, 8x8x8", *_pair(rng, 8, 8, 8)),
        _case("whole tiles, 16x24x16", "딱 맞는 타일, 16x24x16", *_pair(rng, 16, 24, 16)),
        _case("ragged edges, 19x22x13", "타일에 안 맞는 가장자리, 19x22x13", *_pair(rng, 19, 22, 13)),
        _case("k = 9, one past a tile", "k = 9, 타일보다 하나 많음", *_pair(rng, 17, 9, 10)),
        _case("k = 5, under one tile", "k = 5, 타일 하나보다 작음", *_pair(rng, 20, 5, 12)),
        _case("unrounded, 23x21x18", "반올림되는 값, 23x21x18", *_pair(rng, 23, 21, 18, _unrounded)),
        _case("72x5x65, 81 blocks", "72x5x65, 블록 81개", *_pair(rng, 72, 5, 65)),
        _case("8x90x8, 12 tiles", "8x90x8, 타일 12개", *_pair(rng, 8, 90, 8)),
        _random(rng, part),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    return {"output": a @ b}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged nor run on the simulator ([parts.speed] in the
    manifest): 1024 x 1024 x 1024, 2 GFLOP, long enough that the launch itself is a
    small part of the time."""
    return _case("timing, 1024x1024x1024", "시간 재기, 1024x1024x1024", *_pair(rng, 1024, 1024, 1024, _unrounded))
