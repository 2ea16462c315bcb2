"""Puzzle 11 reference: output[i] = a[i-2] + a[i-1] + a[i], terms before the start left out.

The kernel runs ceildiv(size, 64) blocks of 64 threads; each block copies its
elements and a two-element halo (the two elements before it) into shared
memory. Which input makes each part of the kernel decide the answer:
- `a[i]`, `a[i-1]`, `a[i-2]`: every value differs from every other one and
  none is 0 (but in 'zeros in a' and the 65600 case), so a window shifted by one place (a[i-1..i+1], a[i-3..i-1]), a
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
  where a missing barrier is likeliest to show on a real GPU;
- more blocks than a block has threads: '70 blocks, 4421' (and a size drawn
  from the seed among a few, "random size n");
- float32, not 16 bits: '70 blocks, 4421' holds odd multiples of 2^-12
  between 1 and 8 in size. float16 keeps 11 significant bits and bfloat16 8,
  so neither holds any of them (a window kept in 16 bits is wrong there),
  while float32 holds every sum of three exactly (at most 17 bits);
- copying into shared memory once: a thread that reads its window from `a`
  gets the right sums, and breaks the part's access budget (at most two
  global reads per thread: its element and, for threads 0 and 1, a halo
  element) on the simulator;
- zeros inside a window: 'zeros in a, 200' holds exact zeros, each with a
  value that is not 0 before it (one of them the last element of block 0,
  block 1's halo). A kernel that takes a 0 for the slots before the start
  of a and stops its window there leaves out the term before it; no other
  case has a 0 in a;
- an index past 16 bits: '65600, past a 16-bit index' (1025 blocks) has
  elements a 16-bit index cannot count to, so an index kept in Int16 or
  UInt16 wraps around and reads the first elements again (its values are
  drawn with repeats: there are only 1600 multiples of 1/8 to draw from).

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: fewer elements than the window, a full
block, a last block of one element, zeros inside a window, more blocks
than a block has threads and an index past 2^16; each has a case named for
it.

Exact comparison: every value is a multiple of 1/8 between -100 and 100, or
an odd multiple of 2^-12 below 8, so a sum of three of them is exact in
float32, in any order.
"""

import numpy as np

TPB = 64
WINDOW = 3
PAST_16_BITS = 65600  # elements: more than a 16-bit index counts (65536)


def _values(rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` different nonzero multiples of 1/8 in [-100, 100] (with repeats past 1600)."""
    steps = np.concatenate([np.arange(-800, 0), np.arange(1, 801)])
    return (rng.choice(steps, size=size, replace=size > steps.size) / 8).astype(np.float32)


def _with_zeros(rng: np.random.Generator, size: int) -> np.ndarray:
    """Values as usual, with exact zeros at a few odd places (never two side by side, never
    the first element), and at TPB - 1: the last element of block 0, block 1's halo."""
    a = _values(rng, size)
    a[rng.choice(np.arange(1, size - 1, 2), size // 10, replace=False)] = 0
    a[TPB - 1] = 0
    return a


def _fine(rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` different odd multiples of 2^-12 between 1 and 8 in size, either sign: off the
    float16 and bfloat16 grids, and every sum of three is exact in float32."""
    odd = np.arange(4097, 32768, 2)
    return (rng.choice(odd, size=size, replace=False) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (3, 150, 900, 2000, 3333)

_CASES = [
    # name, Korean label, size, the special points it is there for
    ("1 element", "원소 1개", 1, ("fewer_than_window",)),
    ("2 elements", "원소 2개", 2, ("fewer_than_window",)),
    ("5 elements", "원소 5개", 5, ()),
    ("one full block, 64", "꽉 찬 블록 하나, 64", 64, ("full_block",)),
    ("one block and 1, 65", "블록 하나와 1개, 65", 65, ("block_of_one",)),
    ("3 blocks and 7, 199", "블록 3개와 7개, 199", 199, ()),
    ("16 blocks, 1000", "블록 16개, 1000", 1000, ()),
]


def _case(name: str, ko: str, a: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a},
            "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    found = [_case(name, ko, _values(rng, size), special=points) for name, ko, size, points in _CASES]
    found.append(_case("zeros in a, 200", "a에 0이 있음, 200개", _with_zeros(rng, 200),
                       special=("zero_inside_window",)))
    found.append(_case("70 blocks, 4421", "블록 70개, 4421개", _fine(rng, 4421), special=("more_blocks_than_threads",)))
    found.append(_case(f"{PAST_16_BITS}, past a 16-bit index", f"{PAST_16_BITS}개, 16비트 인덱스를 넘음",
                       _values(rng, PAST_16_BITS), special=("index_past_16_bits",)))
    found.append(_case(f"random size {n}", f"무작위 크기 {n}", _fine(rng, n), seeded=True))
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    out = a.copy()
    out[1:] += a[:-1]
    out[2:] += a[:-2]
    return {"output": out}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"]
    size = a.size
    blocks = -(-size // TPB)
    found = set()
    if size < WINDOW:
        found.add("fewer_than_window")
    if size == TPB:
        found.add("full_block")
    if blocks > 1 and size % TPB == 1:
        found.add("block_of_one")
    # a 0 at j with a value that is not 0 before it, inside the window of output j + 1
    if size > 2 and np.any((a[1:-1] == 0) & (a[:-2] != 0)):
        found.add("zero_inside_window")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
