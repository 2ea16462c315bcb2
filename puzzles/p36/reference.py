"""Puzzle 36 reference: output = a @ w^T, a (m x k) and w (n x k) in bfloat16, on
Hopper's TMA and wgmma.

One block of 128 threads per 64 x 64 tile of the output (grid n // 64 x m // 64),
16 values of k per step. Which input makes each term decide the answer:
- each core matrix: every value of a differs in size from most of its neighbours,
  and none is 0, so a descriptor stride that is off (bytes for 16-byte units, SBO
  and LBO swapped, a second k-half never loaded) reads other values, or zeros,
  where a core matrix should be, in every case;
- each product a[i, j] * w[c, j]: |a| >= 1 and |w| >= 1/4, so a product left out
  or added twice moves an element by at least 1/4;
- the k-halves of a step: '64 x 16 x 64' has one step; a kernel that loads only
  k 0..7, or puts both halves in one place, gets half the products;
- the phases: 'along k, 64 x 128 x 64' has 8 steps, parities 0, 1, 0, ...: a wait
  on the wrong parity, or a next copy that overwrites a tile still being read,
  shows there; '16 steps, 64 x 256 x 64' has more phases than any other case: a
  kernel that keeps an mbarrier (or a phase) per step in an array sized for the
  8 steps it saw runs past it;
- the block's place: '128 x 32 x 192' (3 x 2 blocks), 'tall, 256 x 48 x 64' and
  'wide, 64 x 64 x 256': rows and columns of the grid swapped, or a box taken at
  (row, column) instead of (column, row), read the wrong tiles (or past the
  tensor, where TMA gives zeros);
- many blocks: '144 blocks, 768 x 32 x 768', more blocks than a block has threads
  and more output elements than a 16-bit index counts;
- bfloat16 in, float32 out: every output needs up to 19 significant bits, so an
  accumulator or an output kept in bfloat16 (8 bits) rounds it; 'along k' has the
  largest sums;
- a size drawn from the seed among a few ("random m x k x n").

The special points (the manifest's [[parts.special]], found in a case's shape and
values by `hits`) are those above; each has a case named for it. Only a Hopper GPU
runs this puzzle, so only there do the cases judge a kernel.

Exact comparison: a holds odd multiples of 1/64 between 1 and 2 in size (7
significant bits; bfloat16 keeps 8), w nonzero multiples of 1/4 up to 4 in size.
Every product is a multiple of 2^-8 below 8 and every sum of k <= 256 of them is
below 2048: at most 19 significant bits, exact in float32 in any order and with
any alignment of the tensor core's adder.
"""

import numpy as np

# The seeded case's sizes (m, k, n): a few, so that a run of another seed reuses a build.
SEEDED_SIZES = ((128, 64, 64), (64, 96, 128), (192, 16, 64), (64, 32, 192))


def _a(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Odd multiples of 1/64 between 1 and 2 in size, either sign: exact in bfloat16."""
    steps = rng.choice(np.arange(65, 128, 2), size=shape) * rng.choice([-1, 1], size=shape)
    return (steps / 64).astype(np.float32)


def _w(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Nonzero multiples of 1/4 up to 4 in size."""
    steps = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])
    return (rng.choice(steps, size=shape) / 4).astype(np.float32)


BM, BN, BK, THREADS = 64, 64, 16, 128
MOST_STEPS = 8  # the steps of every case but '16 steps'


def _case(rng: np.random.Generator, name: str, ko: str, m: int, k: int, n: int, **extra) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"m": m, "k": k, "n": n},
            "inputs": {"a": _a(rng, (m, k)), "w": _w(rng, (n, k))}, **extra}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    m, k, n = SEEDED_SIZES[int(rng.integers(len(SEEDED_SIZES)))]
    return [
        _case(rng, "one step, 64 x 16 x 64", "한 걸음, 64 x 16 x 64", 64, 16, 64, special=("one_step",)),
        _case(rng, "along k, 64 x 128 x 64", "k를 따라, 64 x 128 x 64", 64, 128, 64,
              special=("parities_alternate", "output_off_bfloat16")),
        _case(rng, "16 steps, 64 x 256 x 64", "16걸음, 64 x 256 x 64", 64, 256, 64, special=("many_steps",)),
        _case(rng, "128 x 32 x 192", "128 x 32 x 192", 128, 32, 192, special=("grid_not_square",)),
        _case(rng, "tall, 256 x 48 x 64", "세로로 긴, 256 x 48 x 64", 256, 48, 64, special=("grid_not_square",)),
        _case(rng, "wide, 64 x 64 x 256", "가로로 긴, 64 x 64 x 256", 64, 64, 256, special=("grid_not_square",)),
        _case(rng, "144 blocks, 768 x 32 x 768", "블록 144개, 768 x 32 x 768", 768, 32, 768,
              special=("more_blocks_than_threads", "index_past_16_bits")),
        _case(rng, f"random {m} x {k} x {n}", f"무작위 {m} x {k} x {n}", m, k, n, seeded=True),
    ]


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's shape and values reach."""
    m, k, n = (case["params"][key] for key in ("m", "k", "n"))
    steps = k // BK
    found = set()
    if steps == 1:
        found.add("one_step")
    if steps >= 3:
        found.add("parities_alternate")
    if steps > MOST_STEPS:
        found.add("many_steps")
    if m // BM != n // BN:  # the grid's rows and columns differ: swapped, they read other tiles
        found.add("grid_not_square")
    if (m // BM) * (n // BN) > THREADS:
        found.add("more_blocks_than_threads")
    if m * n > 2**16:
        found.add("index_past_16_bits")
    out = expected(case, part)["output"]
    as_bf16 = (out.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    if np.count_nonzero(as_bf16 != out) > out.size // 2:  # most outputs need more than bfloat16's 8 bits
        found.add("output_off_bfloat16")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    w = case["inputs"]["w"].astype(np.float64)
    return {"output": a @ w.T}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 2048 x 2048 x 2048."""
    size = 2048
    return _case(rng, "timing: 2048 x 2048 x 2048", "시간 재기: 2048 x 2048 x 2048", size, size, size)
