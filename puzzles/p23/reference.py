"""Puzzle 23 reference: output = a + b, written four ways with elementwise.

The four parts compute the same thing, so they share the cases; what differs
is which term of the learner's code each case makes decide the answer. With
SIMD_WIDTH = 4 and TILE = 32, and elementwise's 256 threads a block:

- the width elementwise passes, not SIMD_WIDTH (part 1): every size but "8
  values" leaves a tail of 1 to 3 elements that elementwise hands to func[1],
  so a closure that always moves SIMD_WIDTH values writes past the end there,
  one that only handles whole vectors leaves the tail unwritten (NaN), and
  "3 values, no whole vector" is all tail;
- every lane of a vector, not its first: all values differ, so writing one
  value per call leaves three of four elements unwritten;
- the partial last tile (parts 2 to 4): "37 values" ends in a tile of 5,
  "70 values" in one of 6, "9003 values" in one of 11; a missing guard, a
  loop over the whole tile or vectorize over TILE writes past the end there;
- the tile's own index: with two tiles or more (all but the three smallest
  cases) a tile taken one off is wrong everywhere; "3 values" is one tile, so
  a slip there also shows as writes past the end;
- the leftover elements of a tile (part 3): 5, 6 and 11 are not multiples of
  4, so a tile whose count % SIMD_WIDTH elements are dropped leaves NaN;
- beyond every constant: "1027 values, a whole block and 3" fills the 256
  threads of one block with vectors and leaves 3; "9003 values, several
  blocks" needs 9 blocks for its 2250 vectors and 2 for its 282 tiles, so a
  size slip that only shows past one block of threads or one tile is caught
  there;
- a size drawn from the seed among a few ("random size n": 45, 131, 262,
  999, 2050: none a multiple of 4 or of 32), so every version of the code
  meets a size of its own;
- float32: the reference adds in float32, as the kernel does, so the check is
  exact. "big a + small b rounds, 64" makes most sums round (the spacing of
  float32 near 2e7 is 2), the same way on both. The normal values with a
  spread of 100 are off the float16 and bfloat16 grids: adding in 16 bits
  fails.

The special points (the manifest's [[parts.special]], found by `hits` from
a case's size): part simd, a size with no whole vector, a tail after whole
vectors, no tail at all, and more vectors than a block has threads; parts
tiled, manual and vectorize, a single tile that is partly inside the data,
a partial last tile after whole ones, whole tiles only and more tiles than
a block has threads; parts manual and vectorize also a partial tile of
whole vectors ("8 values") and one whose count leaves elements over.
No case goes past 2^16 elements: every index here (i, t, start) is given
code, computed in Int, and the learner's lines take values at it.
"""

import numpy as np

SIMD_WIDTH = 4
TILE = 32
THREADS = 256  # a block of elementwise's launch

# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (45, 131, 262, 999, 2050)


# The special points each case is there for, by part ("tiles": tiled, manual and vectorize).
_POINTS = {
    "3 values, no whole vector": {"simd": ("all_tail",), "tiles": ("one_partial_tile",)},
    "8 values, two whole vectors": {"simd": ("no_tail",), "manual": ("partial_tile_of_whole_vectors",)},
    "37 values": {"simd": ("tail_after_vectors",), "tiles": ("partial_last_tile",),
                  "manual": ("leftover_in_last_tile",)},
    "big a + small b rounds, 64": {"tiles": ("whole_tiles",)},
    "9003 values, several blocks": {"simd": ("more_vectors_than_block",), "tiles": ("more_tiles_than_block",)},
}


def _case(name: str, ko: str, a, b, seeded: bool = False, part: str = "") -> dict:
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    assert a.shape == b.shape
    points = _POINTS.get(name, {})
    special = points.get(part, ()) + (points.get("tiles", ()) if part != "simd" else ()) + \
        (points.get("manual", ()) if part == "vectorize" else ())
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": tuple(dict.fromkeys(special))}


def _normal(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.normal(0, 100, n), rng.normal(0, 100, n)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    return [
        _case("3 values, no whole vector", "값 3개, 온전한 벡터 없음", *_normal(rng, 3), part=part),
        _case("8 values, two whole vectors", "값 8개, 온전한 벡터 둘", *_normal(rng, 8), part=part),
        _case("37 values", "값 37개", *_normal(rng, 37), part=part),
        _case("70 values", "값 70개", *_normal(rng, 70), part=part),
        _case("big a + small b rounds, 64", "큰 a + 작은 b가 반올림됨, 64개",
              rng.uniform(1e7, 3e7, 64) * rng.choice([-1.0, 1.0], 64), rng.uniform(0.1, 4, 64), part=part),
        _case("1027 values, a whole block and 3", "값 1027개, 블록 하나를 다 채우고 3개", *_normal(rng, 1027),
              part=part),
        _case("9003 values, several blocks", "값 9003개, 블록 여러 개", *_normal(rng, 9003), part=part),
        _case(f"random size {n}", f"무작위 크기 {n}", *_normal(rng, n), seeded=True),
    ]


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's size reaches."""
    size = case["params"]["size"]
    found = set()
    if part == "simd":
        if size < SIMD_WIDTH:
            found.add("all_tail")
        elif size % SIMD_WIDTH:
            found.add("tail_after_vectors")
        else:
            found.add("no_tail")
        if size // SIMD_WIDTH > THREADS:
            found.add("more_vectors_than_block")
        return found
    last = size % TILE  # elements in a partial last tile (0: none)
    if size < TILE:
        found.add("one_partial_tile")
    elif last:
        found.add("partial_last_tile")
    else:
        found.add("whole_tiles")
    if -(-size // TILE) > THREADS:
        found.add("more_tiles_than_block")
    if part in ("manual", "vectorize") and last:
        found.add("leftover_in_last_tile" if last % SIMD_WIDTH else "partial_tile_of_whole_vectors")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    return {"output": (a + b).astype(np.float64)}
