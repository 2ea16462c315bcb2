"""Puzzle 17 reference: output[i] = sum over j < conv of a[i+j] * b[j], terms past the end left out.

The kernels are given; the learner writes the launch (grid and block), the
registration, execute's choice of code per target, and the graph's call. Which
input makes each of those decide the answer:
- the number of blocks: 'a block and 1, 33' needs a second block for one
  element (size // TPB blocks leave it NaN), '3 blocks and 5, 101' a partial
  third; one block only fails every case above 32; 'one full block, 32'
  needs exactly one;
- more blocks than a block has threads: '40 blocks, 1250' (a grid computed
  from a fixed bound, or capped at TPB blocks, fails there);
- the block size: the kernel computes TPB outputs a block with TPB threads;
  fewer threads leave outputs NaN in every case, more write past its shared
  array (the simulator stops there);
- the sizes passed as parameters, not constants: `conv` is 1, 3, 4, 5, 7 and
  8 across the cases and `size` 1 to 1250: a graph or op with a fixed conv or
  size fails, or does not compile, for the other shapes;
- the order of the inputs: b differs from a in length and values; 'last tap
  only, 101' has a single nonzero weight at the end, so output[i] is
  a[i+6] * b[6]: weights taken in the wrong order shift the whole output;
- the ends: every case's last conv - 1 outputs leave terms out; 'one
  element, 3 taps' leaves out all but one;
- execute's two targets: every case runs through the graph on the CPU and
  (on a GPU machine) the GPU; the output starts as NaN on both, so a target
  that runs nothing fails all of them;
- a size drawn from the seed among a few ("random size n", 5 taps).
Seven shapes in all (the op is compiled once per shape, for each device).
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: a signal shorter than the kernel, one
tap, weights that are 0, exactly one block, a block of one element, a
partial last block, a halo that crosses into the next block's elements, and
more blocks than a block has threads; each has a case named for it. The
kernels and their indices are given (Int), so no case goes past 2^16
elements: the learner's launch only counts blocks.

Exact comparison: a holds odd multiples of 2^-12 between 1 and 2 in size
(13 significant bits, so off the float16 and bfloat16 grids in every case),
b nonzero multiples of 1/2 up to 2 in size: every product is a multiple of
2^-13 below 4, and every sum of up to 8 of them (below 32) needs at most 18
bits: exact in float32 in any order, and rounded in 16 bits.
"""

import numpy as np

TPB = 32
SEEDED_SIZES = (70, 200, 333, 517, 1100)

# name, Korean, size, conv, the special points it is there for
_SHAPES = [
    ("one element, 3 taps", "원소 1개, 가중치 3개", 1, 3, ("signal_shorter_than_kernel",)),
    ("one tap, 40", "가중치 1개, 40", 40, 1, ("one_tap",)),
    ("one full block, 32", "꽉 찬 블록 하나, 32", 32, 4, ("exactly_one_block",)),
    ("a block and 1, 33", "블록 하나와 1개, 33", 33, 4, ("block_of_one",)),
    ("3 blocks and 5, 101", "블록 3개와 5개, 101", 101, 7, ("partial_block", "halo_crosses_blocks")),
    ("40 blocks, 1250", "블록 40개, 1250", 1250, 8, ("more_blocks_than_threads",)),
]


def _a(rng: np.random.Generator, size: int) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size, either sign: off the 16-bit grids."""
    return (rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


def _b(rng: np.random.Generator, conv: int) -> np.ndarray:
    """conv different nonzero multiples of 1/2 up to 2 in size."""
    return (rng.choice(np.array([-4, -3, -2, -1, 1, 2, 3, 4]), size=conv, replace=False) / 2).astype(np.float32)


def _case(name: str, korean: str, a: np.ndarray, b: np.ndarray, **extra) -> dict:
    return {"name": name, "label": {"en": name, "ko": korean}, "params": {"size": a.size, "conv": b.size},
            "inputs": {"a": a, "b": b}, **extra}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    found = [_case(name, ko, _a(rng, size), _b(rng, conv), special=special)
             for name, ko, size, conv, special in _SHAPES]
    last_tap = np.zeros(7, np.float32)
    last_tap[6] = rng.choice([-1.5, 1.5, 2.0])
    found.insert(2, _case("last tap only, 101", "마지막 가중치만, 101", _a(rng, 101), last_tap, special=("zero_taps",)))
    found.append(_case(f"random size {n}", f"무작위 크기 {n}", _a(rng, n), _b(rng, 5), seeded=True))
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    out = np.zeros(a.size)
    for j in range(b.size):
        out[: max(a.size - j, 0)] += a[j:] * b[j]
    return {"output": out}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    size, conv = case["params"]["size"], case["params"]["conv"]
    b = np.asarray(case["inputs"]["b"])
    blocks = -(-size // TPB)
    found = set()
    if size < conv:
        found.add("signal_shorter_than_kernel")
    if conv == 1:
        found.add("one_tap")
    if np.any(b == 0):
        found.add("zero_taps")
    if size == TPB:
        found.add("exactly_one_block")
    if size > TPB and size % TPB == 1:
        found.add("block_of_one")
    elif size > TPB and size % TPB:
        found.add("partial_block")
    if conv > 1 and size > TPB:
        found.add("halo_crosses_blocks")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    return found
