"""Puzzle 32 reference: part `transpose`, output[c, r] = a[r, c] for a (rows x cols);
part `pairs`, output[i] = x[2 * i] + x[2 * i + 1] for i < size.

The values are easy; the lesson is the traffic counters (bank conflicts). Which
input makes each part of the kernels decide the answer:
- transpose: rows and cols that differ (a swapped index reads the wrong element or
  past the end) and that are not multiples of TILE = 32 (45 x 70, 130 x 7, 1 x 100),
  so the last tiles are partial in both directions and the guards on the read and
  the write both matter; one exact tile (32 x 32); a single row; "150 x 170, 30
  blocks" for many full tiles at once; "8200 x 3, 257 blocks" has more blocks than a
  block has threads (TILE x ROWS = 256), cheaply: a grid of 1 x 257 tiles;
  "260 x 260, past 16 bits" has more elements than a 16-bit index counts (and edge
  tiles of 4 rows and 4 columns): a flat index kept in 16 bits writes over the first
  elements and leaves the last ones unwritten;
- pairs: sizes that leave a partial last block (100, the seeded ones), one pair, one
  exact block (64), and "4200 pairs, 66 blocks", more blocks than TPB = 64; "33000
  pairs, past 16 bits" has 66000 inputs, past what a 16-bit index counts;
- values: normal with a spread of 100, all different and off the 16-bit grids. The
  transpose is a copy, exact; a pair sum is one float32 addition, the same rounding in
  either order, so both parts are checked exactly.
The traffic: every case's first run is priced per line (32 banks of 4 bytes). The
solution has no conflict; the conflicted kernels the puzzle starts from have 31 extra
wavefronts per request on the transpose's column read (27.07 averaged: a partial tile
leaves lanes idle) and 1 per request on each read of a pair.
One shape per part is drawn from the seed among a few ("random size ...").
The special points (the manifest's [[parts.special]], found in a case's shape by
`hits`) are the tiles at the edges, the shapes and the counts above; each has a case
named for it.
"""

import numpy as np

SEEDED_SHAPES = ((40, 72), (96, 33), (65, 65), (100, 50))
SEEDED_SIZES = (300, 517, 1000, 2049)
TILE, ROWS, TPB = 32, 8, 64


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.normal(0, 100, n).astype(np.float32)


def _matrix(rng: np.random.Generator, name: str, ko: str, rows: int, cols: int, seeded: bool = False,
            special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"rows": rows, "cols": cols},
            "inputs": {"a": _values(rng, rows * cols).reshape(rows, cols)}, "seeded": seeded, "special": special}


def _pairs(rng: np.random.Generator, name: str, ko: str, size: int, seeded: bool = False,
           special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size},
            "inputs": {"x": _values(rng, 2 * size)}, "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "transpose":
        r, c = SEEDED_SHAPES[int(rng.integers(len(SEEDED_SHAPES)))]
        return [
            _matrix(rng, "one tile, 32 x 32", "타일 하나, 32 x 32", 32, 32, special=("one_exact_tile",)),
            _matrix(rng, "partial tiles, 45 x 70", "덜 찬 타일, 45 x 70", 45, 70, special=("partial_corner_tile",)),
            _matrix(rng, "tall and thin, 130 x 7", "길고 좁음, 130 x 7", 130, 7, special=("narrower_than_a_tile",)),
            _matrix(rng, "one row, 1 x 100", "행 하나, 1 x 100", 1, 100, special=("one_row",)),
            _matrix(rng, "150 x 170, 30 blocks", "150 x 170, 블록 30개", 150, 170),
            _matrix(rng, "8200 x 3, 257 blocks", "8200 x 3, 블록 257개", 8200, 3,
                    special=("more_blocks_than_threads",)),
            _matrix(rng, "260 x 260, past 16 bits", "260 x 260, 16비트를 넘음", 260, 260,
                    special=("index_past_16_bits",)),
            _matrix(rng, f"random size {r} x {c}", f"무작위 크기 {r} x {c}", r, c, seeded=True),
        ]
    n = int(rng.choice(SEEDED_SIZES))
    return [
        _pairs(rng, "one pair", "쌍 하나", 1, special=("one_pair",)),
        _pairs(rng, "one block, 64 pairs", "블록 하나, 쌍 64개", 64, special=("one_exact_block",)),
        _pairs(rng, "partial last block, 100 pairs", "마지막 블록이 덜 참, 쌍 100개", 100,
               special=("partial_last_block",)),
        _pairs(rng, "4200 pairs, 66 blocks", "쌍 4200개, 블록 66개", 4200, special=("more_blocks_than_threads",)),
        _pairs(rng, "33000 pairs, past 16 bits", "쌍 33000개, 16비트를 넘음", 33000,
               special=("index_past_16_bits",)),
        _pairs(rng, f"random size {n}", f"무작위 크기 {n}", n, seeded=True),
    ]


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's shape reaches."""
    found = set()
    if part == "transpose":
        rows, cols = case["params"]["rows"], case["params"]["cols"]
        if rows == cols == TILE:
            found.add("one_exact_tile")
        if rows > TILE and cols > TILE and rows % TILE and cols % TILE:
            found.add("partial_corner_tile")
        if cols < TILE < rows:
            found.add("narrower_than_a_tile")
        if rows == 1:
            found.add("one_row")
        if -(-rows // TILE) * -(-cols // TILE) > TILE * ROWS:
            found.add("more_blocks_than_threads")
        if rows * cols > 2**16:
            found.add("index_past_16_bits")
        return found
    size = case["params"]["size"]
    if size == 1:
        found.add("one_pair")
    if size == TPB:
        found.add("one_exact_block")
    if size > TPB and size % TPB:
        found.add("partial_last_block")
    if -(-size // TPB) > TPB:
        found.add("more_blocks_than_threads")
    if 2 * size > 2**16:
        found.add("index_past_16_bits")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    if part == "transpose":
        return {"output": case["inputs"]["a"].T.astype(np.float64)}
    x = case["inputs"]["x"]
    return {"output": (x[0::2] + x[1::2]).astype(np.float64)}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 128 MiB moved per run, more than
    the L2 cache holds."""
    if part == "transpose":
        return _matrix(rng, "timing: 4096 x 4096", "시간 재기: 4096 x 4096", 4096, 4096)
    return _pairs(rng, "timing: 8 Mi pairs", "시간 재기: 쌍 8 Mi개", 1 << 23)
