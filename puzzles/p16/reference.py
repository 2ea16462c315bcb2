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
  tiled); many tiles along k: '8x90x8, 12 tiles' and '8x130x8, 17 tiles'
  (tiled), so a tile loop with a fixed trip count (the 12 the text names, or
  2 * TILE), or one that only works for a few tiles, fails ('8x130x8' holds
  values of at most 16 in size, so that its sums of 130 products, below
  2^16, stay exact in float32);
- rows, columns and outputs past narrow counts: '257x3x257, past a 16-bit
  index' (naive and tiled) has more than 256 rows and columns and 66049
  outputs, so a row or column kept in 8 bits, or an element's place in
  output kept in 16 bits, wraps around; part `shared` cannot outgrow its
  one block (its manifest says so);
- shared memory: the text has `shared` and `tiled` copy each element once
  per tile; a kernel that reads a and b from global memory in the product
  loop gets the right values, and breaks the parts' access budgets on the
  simulator. Threads past the edge that clamp their row and column instead
  of skipping the write write an edge element again, with the right value:
  a race the simulator names;
- a shape drawn from the seed among a few in every part ("random shape
  m x k x n").
The special points (the manifest's [[parts.special]], found in a case's
shape by `hits`) are those above: a dot and an outer product, ragged edges,
more blocks than a block has threads and an index past 2^16 (naive); a full
tile, k above and below n (shared); one tile, whole tiles only, ragged
edges, k one past a tile and under one tile, more tiles than the text's 12,
more blocks than a block has threads and an index past 2^16 (tiled); each
has a case named for it.
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


# The seeded cases' shapes (m, k, n): a few per part, so that builds are reused.
SEEDED_SHAPES = {
    "naive": ((10, 30, 12), (33, 8, 17), (5, 50, 12), (24, 16, 9)),
    "shared": ((3, 5, 7), (8, 2, 6), (6, 7, 4), (1, 8, 8)),
    "tiled": ((10, 30, 12), (33, 8, 17), (5, 50, 12), (40, 17, 24)),
}


TILE = 8
TEXT_TILES = 12  # the most tiles along k the text names ('k = 90 (12 tiles)')


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"m": m, "k": k, "n": n},
            "inputs": {"a": np.ascontiguousarray(a, dtype=np.float32),
                       "b": np.ascontiguousarray(b, dtype=np.float32)}, "seeded": seeded, "special": special}


# For '8x130x8, 17 tiles': the multiples of 1/8 from 0.25 to 16, either sign (254 values).
# Products are multiples of 1/64 of at most 256, and a sum of 130 of them stays below 2^16:
# exact in float32 (22 bits), in any order.
_SMALL = np.concatenate([np.arange(2, 129), -np.arange(2, 129)]) / 8.0


def _wide(rng: np.random.Generator, rows: int, cols: int, values: np.ndarray = _SIGNED) -> np.ndarray:
    """For matrices with more elements than `values` holds: values that differ along each row
    (every row a fresh draw without repeats)."""
    picks = [rng.choice(values, cols, replace=False) for _ in range(rows)]
    return np.array(picks).reshape(rows, cols).astype(np.float32)


def _many_tiles(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """8 x 130 times 130 x 8: 17 tiles along k, values of at most 16 in size."""
    return _wide(rng, 8, 130, _SMALL), _wide(rng, 8, 130, _SMALL).T.copy()


def _random(rng: np.random.Generator, part: str) -> dict:
    shapes = SEEDED_SHAPES[part]
    m, k, n = shapes[rng.integers(len(shapes))]
    return _case(f"random shape {m}x{k}x{n}", f"무작위 모양 {m}x{k}x{n}", *_pair(rng, m, k, n), seeded=True)


def _pair(rng, m, k, n, values=_distinct):
    return values(rng, m, k), values(rng, k, n)


def _past_16_bits(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """257 x 3 times 3 x 257: 66049 outputs, more rows and columns than 8 bits count. a's
    rows and b's columns differ from each other: every value of the 1/8 grid at most once."""
    return _wide(rng, 3, 257).T.copy(), _wide(rng, 3, 257)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "naive":
        return [
            _case("small, 2x3 times 3x4", "작은 행렬, 2x3 곱하기 3x4", *_pair(rng, 2, 3, 4)),
            _case("ragged edges, 19x22x13", "타일에 안 맞는 가장자리, 19x22x13", *_pair(rng, 19, 22, 13),
                  special=("ragged_edges",)),
            _case("dot product, 1x20x1", "내적, 1x20x1", *_pair(rng, 1, 20, 1), special=("dot_product",)),
            _case("outer product, 9x1x7", "외적, 9x1x7", *_pair(rng, 9, 1, 7), special=("outer_product",)),
            _case("unrounded, 17x21x10", "반올림되는 값, 17x21x10", *_pair(rng, 17, 21, 10, _unrounded)),
            _case("72x5x65, 81 blocks", "72x5x65, 블록 81개", *_pair(rng, 72, 5, 65),
                  special=("more_blocks_than_threads",)),
            _case("257x3x257, past a 16-bit index", "257x3x257, 16비트 인덱스를 넘음", *_past_16_bits(rng),
                  special=("index_past_16_bits",)),
            _random(rng, part),
        ]
    if part == "shared":
        return [
            _case("small, 2x3 times 3x4", "작은 행렬, 2x3 곱하기 3x4", *_pair(rng, 2, 3, 4)),
            _case("one full tile, 8x8x8", "꽉 찬 타일 하나, 8x8x8", *_pair(rng, 8, 8, 8), special=("full_tile",)),
            _case("k > n, 5x7 times 7x3", "k > n, 5x7 곱하기 7x3", *_pair(rng, 5, 7, 3), special=("k_above_n",)),
            _case("k < n, 7x3 times 3x6", "k < n, 7x3 곱하기 3x6", *_pair(rng, 7, 3, 6), special=("k_below_n",)),
            _case("unrounded, 6x8x5", "반올림되는 값, 6x8x5", *_pair(rng, 6, 8, 5, _unrounded)),
            _random(rng, part),
        ]
    return [
        _case("one tile, 8x8x8", "타일 하나, 8x8x8", *_pair(rng, 8, 8, 8), special=("one_tile",)),
        _case("whole tiles, 16x24x16", "딱 맞는 타일, 16x24x16", *_pair(rng, 16, 24, 16), special=("whole_tiles",)),
        _case("ragged edges, 19x22x13", "타일에 안 맞는 가장자리, 19x22x13", *_pair(rng, 19, 22, 13),
              special=("ragged_edges",)),
        _case("k = 9, one past a tile", "k = 9, 타일보다 하나 많음", *_pair(rng, 17, 9, 10),
              special=("one_past_a_tile",)),
        _case("k = 5, under one tile", "k = 5, 타일 하나보다 작음", *_pair(rng, 20, 5, 12),
              special=("under_one_tile",)),
        _case("unrounded, 23x21x18", "반올림되는 값, 23x21x18", *_pair(rng, 23, 21, 18, _unrounded)),
        _case("72x5x65, 81 blocks", "72x5x65, 블록 81개", *_pair(rng, 72, 5, 65),
              special=("more_blocks_than_threads",)),
        _case("8x90x8, 12 tiles", "8x90x8, 타일 12개", *_pair(rng, 8, 90, 8)),
        _case("8x130x8, 17 tiles", "8x130x8, 타일 17개", *_many_tiles(rng), special=("more_tiles_than_the_text",)),
        _case("257x3x257, past a 16-bit index", "257x3x257, 16비트 인덱스를 넘음", *_past_16_bits(rng),
              special=("index_past_16_bits",)),
        _random(rng, part),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    return {"output": a @ b}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's shape reaches."""
    m, k, n = (case["params"][d] for d in "mkn")
    tiles = -(-k // TILE)
    blocks = -(-m // TILE) * -(-n // TILE)
    found = set()
    if part == "shared":
        if m == k == n == TILE:
            found.add("full_tile")
        if k > n:
            found.add("k_above_n")
        if k < n:
            found.add("k_below_n")
        return found
    if m % TILE and n % TILE and k % TILE and blocks > 1:
        found.add("ragged_edges")
    if blocks > TILE * TILE:
        found.add("more_blocks_than_threads")
    if m * n > 2**16 and m > 256 and n > 256:
        found.add("index_past_16_bits")
    if part == "naive":
        if m == n == 1 and k > 1:
            found.add("dot_product")
        if k == 1 and m > 1 and n > 1:
            found.add("outer_product")
        return found
    if m == k == n == TILE:
        found.add("one_tile")
    if m % TILE == k % TILE == n % TILE == 0 and tiles > 1 and blocks > 1:
        found.add("whole_tiles")
    if k % TILE == 1 and tiles > 1:
        found.add("one_past_a_tile")
    if k < TILE:
        found.add("under_one_tile")
    if tiles > TEXT_TILES:
        found.add("more_tiles_than_the_text")
    return found


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged nor run on the simulator ([parts.speed] in the
    manifest): 1024 x 1024 x 1024, 2 GFLOP, long enough that the launch itself is a
    small part of the time."""
    return _case("timing, 1024x1024x1024", "시간 재기, 1024x1024x1024", *_pair(rng, 1024, 1024, 1024, _unrounded))
