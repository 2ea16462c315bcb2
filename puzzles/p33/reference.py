"""Puzzle 33 reference: output = a @ b, on tensor cores (tensor float 32).

Both parts compute the same product; part `fragments` with one warp per 16 x 8
tile of the output (grid ceildiv(n, 8) x ceildiv(m, 16)), part `tensor_core`
with blocks of 4 warps per 32 x 32 tile (grid ceildiv(n, 32) x ceildiv(m, 32)).
Which input makes each term decide the answer:
- each fragment slot: every value of a differs from its neighbours, and no a
  or b is 0, so a value loaded into the wrong slot of a fragment (a row and a
  column mixed up, a[1] and a[2] swapped, B read transposed) changes the sum
  of the elements that slot stands for, in every case;
- each product a[i, j] * b[j, c]: |a| >= 1 and |b| >= 1/4, so a product left
  out or added twice moves an element by at least 1/4, five times atol;
- the last, partial step along k: '16 x 40 x 8' (5 whole steps of 8, and a
  partial slice of 16 in part `tensor_core`), 'ragged 19 x 13 x 11' and
  '33 x 90 x 17' (12 steps, the last partial; 6 slices): a loop that stops at
  k // MMA_K or k // BK steps leaves products out there;
- the edges of the output: sizes that are not multiples of 16 and 8 (or 32)
  leave partial tiles: a store without its guard writes past the output, a
  load without at_or_zero reads past a or b;
- C carried from step to step: every case with k > 8 (k > 16 for the
  staged part) fails a kernel that starts each step from the first C;
- the barriers of part `tensor_core`: every slice is read by 4 warps that did
  not copy it all; '144 blocks' and '33 x 90 x 17' have the most slices
  and blocks;
- more blocks than a block has threads (and sizes beyond every constant):
  '40 tiles, 80 x 12 x 64' (40 warps of 32 lanes) and '144 blocks, 384 x 8 x 384'
  (blocks of 128 threads);
- float32 inputs, tf32 inside: 'float32 range' holds values of a near 2^17,
  past float16's largest (65504), with 11 significant bits (float16 keeps 11,
  bfloat16 8, tf32 11), and sums near 2^24: a kernel that keeps a or the
  sums in 16 bits fails there; 'b in float32 range' is the same for b (its
  values near 2^17, a's the multiples of 1/4 that b holds elsewhere). Every
  other case's b has at most 5 significant bits below 4, which float16 and
  bfloat16 hold: before it, a kernel that rounded b's fragments through
  bfloat16 passed every case (the red team's b_fragments_in_bfloat16);
- what tf32 drops: 'unrounded float32' holds values with all 24 bits, which
  the tensor core reads with 11 (see the tolerance); 'tf32 drops the most'
  holds positive values between 7/8 and 1 whose 13 low bits are all set, so
  every operand loses almost 2^-11 and every product loses in the same
  direction: each element comes out about 0.022 below the exact answer on a
  tensor core that truncates (half that where it rounds), on every seed. It
  shows the tolerance holds where the rounding shows most; operands truncated
  to 16 bits are far outside it there, but operands a cast rounds to 16 bits
  lose in both directions and stay inside it (a or b in bfloat16: up to 0.04
  over 200 seeds): 'float32 range' and 'b in float32 range' catch those;
- past 16 bits: part `fragments`' '264 x 8 x 264, past 16 bits' (and part
  `tensor_core`'s '144 blocks') have more output elements than a 16-bit index
  counts: a flat index kept in 16 bits writes over the first elements;
- a size drawn from the seed among a few ("random m x k x n").

The special points (the manifest's [[parts.special]], found in a case's shape and
values by `hits`) are those above; each has a case named for it.

Exact comparison where the values allow it: a holds odd multiples of 2^-10
between 1 and 2 in size (11 significant bits: exact in tf32), b multiples of
1/4 between 1/4 and 4 in size; every product is a multiple of 2^-12 below 8,
every sum of k <= 90 of them below 720: at most 22 significant bits, exact in
float32 in any order and with any alignment of the adder's terms. In
'float32 range', a is the same times 2^17: products multiples of 2^5 below
2^20, sums of 24 below 2^25, at most 20 significant bits: exact too; in 'b in
float32 range' a and b swap their kinds of value, with the same products.
"""

import numpy as np

MMA_M, MMA_N, MMA_K, BM, BN, BK = 16, 8, 8, 32, 32, 16
TF32_SHOWS = 0.02  # the least error truncation to tf32 leaves in 'tf32 drops the most'

# The seeded case's sizes (m, k, n): a few, so that a run of another seed reuses a build.
SEEDED_SIZES = ((40, 24, 24), (33, 17, 40), (64, 48, 16), (25, 72, 9), (48, 8, 56))


def _a(rng: np.random.Generator, shape: tuple[int, int], scale: float = 1.0) -> np.ndarray:
    """Odd multiples of 2^-10 between 1 and 2 in size, either sign: 11 significant bits."""
    steps = rng.choice(np.arange(1025, 2048, 2), size=shape) * rng.choice([-1, 1], size=shape)
    return (steps / 1024 * scale).astype(np.float32)


def _b(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Nonzero multiples of 1/4 up to 4 in size."""
    steps = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])
    return (rng.choice(steps, size=shape) / 4).astype(np.float32)


def _unrounded(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """float32 values with all their bits, between 1/2 and 1 in size."""
    return (rng.uniform(0.5, 1.0, size=shape) * rng.choice([-1, 1], size=shape)).astype(np.float32)


def _tf32_worst(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Positive float32 values in [7/8, 1) whose 13 low bits are all set: truncated to tf32,
    each loses (2^13 - 1) * 2^-24, almost 2^-11."""
    top = rng.integers(768, 1024, size=shape)  # the 10 fraction bits tf32 keeps
    return (((1 << 23) + (top << 13) + (1 << 13) - 1) * 2.0 ** -24).astype(np.float32)


def _tf32(x: np.ndarray) -> np.ndarray:
    """What a tensor core that truncates reads of float32 values: their top 19 bits."""
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


def _case(name: str, ko: str, m: int, k: int, n: int, a: np.ndarray, b: np.ndarray, **extra) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"m": m, "k": k, "n": n},
            "inputs": {"a": a, "b": b}, **extra}


def _plain(rng: np.random.Generator, name: str, ko: str, m: int, k: int, n: int, **extra) -> dict:
    return _case(name, ko, m, k, n, _a(rng, (m, k)), _b(rng, (k, n)), **extra)


# name, Korean name, m, k, n, the special points it is there for, by part
_PLAIN = [
    ("one MMA tile, 16 x 8 x 8", "MMA 타일 하나, 16 x 8 x 8", 16, 8, 8,
     {"fragments": ("one_tile",), "tensor_core": ("one_tile",)}),
    ("along k, 16 x 40 x 8", "k를 따라, 16 x 40 x 8", 16, 40, 8,
     {"fragments": ("c_carried",), "tensor_core": ("c_carried", "partial_k_step")}),
    ("ragged 19 x 13 x 11", "들쭉날쭉 19 x 13 x 11", 19, 13, 11,
     {"fragments": ("partial_k_step", "partial_tiles"), "tensor_core": ("partial_k_step", "partial_tiles")}),
    ("one row, 1 x 9 x 30", "행 하나, 1 x 9 x 30", 1, 9, 30, {"fragments": ("one_row",), "tensor_core": ("one_row",)}),
    ("33 x 90 x 17", "33 x 90 x 17", 33, 90, 17,
     {"fragments": ("partial_k_step",), "tensor_core": ("partial_k_step",)}),
]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    m, k, n = SEEDED_SIZES[int(rng.integers(len(SEEDED_SIZES)))]
    found = [_plain(rng, name, ko, m_, k_, n_, special=special[part]) for name, ko, m_, k_, n_, special in _PLAIN]
    if part == "fragments":
        found.append(_plain(rng, "40 tiles, 80 x 12 x 64", "타일 40개, 80 x 12 x 64", 80, 12, 64,
                            special=("more_blocks_than_threads",)))
        found.append(_plain(rng, "264 x 8 x 264, past 16 bits", "264 x 8 x 264, 16비트를 넘음", 264, 8, 264,
                            special=("index_past_16_bits",)))
    else:
        found.append(_plain(rng, "144 blocks, 384 x 8 x 384", "블록 144개, 384 x 8 x 384", 384, 8, 384,
                            special=("more_blocks_than_threads", "index_past_16_bits")))
    found.append(_case("float32 range, 24 x 24 x 16", "float32 범위, 24 x 24 x 16", 24, 24, 16,
                       _a(rng, (24, 24), 2.0 ** 17), _b(rng, (24, 16)), special=("beyond_float16",)))
    found.append(_case("unrounded float32, 20 x 24 x 12", "반올림 안 된 float32, 20 x 24 x 12", 20, 24, 12,
                       _unrounded(rng, (20, 24)), _unrounded(rng, (24, 12))))
    found.append(_case("tf32 drops the most, 16 x 24 x 8", "tf32가 가장 많이 버림, 16 x 24 x 8", 16, 24, 8,
                       _tf32_worst(rng, (16, 24)), _tf32_worst(rng, (24, 8)), special=("tf32_rounding_shows",)))
    found.append(_plain(rng, f"random {m} x {k} x {n}", f"무작위 {m} x {k} x {n}", m, k, n, seeded=True))
    # Last, so that the cases above keep their values on every seed.
    found.append(_case("b in float32 range, 24 x 24 x 16", "float32 범위의 b, 24 x 24 x 16", 24, 24, 16,
                       _b(rng, (24, 24)), _a(rng, (24, 16), 2.0 ** 17), special=("beyond_float16",)))
    return found


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's shape and values reach."""
    m, k, n = (case["params"][key] for key in ("m", "k", "n"))
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    tile_m, tile_n, step = (MMA_M, MMA_N, MMA_K) if part == "fragments" else (BM, BN, BK)
    found = set()
    if m == MMA_M and n == MMA_N and k == MMA_K:
        found.add("one_tile")
    if k > step:
        found.add("c_carried")
    if k % step:
        found.add("partial_k_step")
    if m % tile_m and n % tile_n:
        found.add("partial_tiles")
    if m == 1:
        found.add("one_row")
    threads = 32 if part == "fragments" else 128
    if -(-m // tile_m) * -(-n // tile_n) > threads:
        found.add("more_blocks_than_threads")
    if m * n > 2**16:
        found.add("index_past_16_bits")
    if max(np.abs(a).max(), np.abs(b).max()) > 65504:
        found.add("beyond_float16")
    exact = a.astype(np.float64) @ b.astype(np.float64)
    if np.abs(exact - _tf32(a) @ _tf32(b)).min() > TF32_SHOWS:
        found.add("tf32_rounding_shows")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    return {"output": a @ b}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 1024 x 1024 x 1024."""
    size = 1024
    return _plain(rng, "timing: 1024 x 1024 x 1024", "시간 재기: 1024 x 1024 x 1024", size, size, size)
