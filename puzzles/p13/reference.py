"""Puzzle 13 reference: output[i] = sum over j < 4 of a[i+j] * b[j], terms past the end left out.

Part `simple` runs one block of 64 threads (size <= 64); part `blocks` runs
ceildiv(size, 64) blocks, each copying its 64 elements and a halo of the 3
elements after it. Which input makes each term decide the answer:
- each weight b[j]: the four weights differ and none is 0, so reversed
  weights (b[3-j]), a window that runs backwards (a[i-j]) or a weight left
  out changes the sum, already for one element (output[0] = a[0]*b[0]);
- each a[i+j]: no a is 0 (but in 'zeros in a') and neighbouring values differ;
- the end of a: in every case the last 3 outputs leave terms out; sizes
  below CONV (1, 2, 3 elements) leave out terms for every output, so a
  kernel that reads past the end or computes only full windows fails;
- the halo (part `blocks`): the last 3 outputs of every block but the last
  need the next block's first 3 elements: 'one block and 1, 65' (a halo of
  one element, then the end), '2 blocks and 2, 130' (a last block smaller
  than the halo), '16 blocks, 1000'; a halo copied from the wrong place or
  never copied fails there, and only there;
- the halo past the end: when the last block is full ('one full block, 64',
  '3 full blocks, 192'), its last outputs read the halo slots, which must
  hold 0: an unguarded halo read shows there in the values (and the
  simulator stops at any read past the end of `a`, in every case);
- barrier(): every case has several threads reading slots others wrote;
  '16 blocks, 1000' has the most blocks and threads (64 threads are two
  warps), where a missing barrier is likeliest to show on a real GPU.

- more blocks than a block has threads (part `blocks`): '66 blocks, 4200';
  part `simple` cannot outgrow its one block (its manifest says so);
- float32, not 16 bits: 'finer than 16 bits, 50' (simple) and '66 blocks,
  4200' (blocks) hold a values that are odd multiples of 2^-12 between 1
  and 2 in size (13 significant bits: float16 keeps 11, bfloat16 8), with
  weights that are multiples of 1/2 up to 2: a value, product or sum kept
  in 16 bits is rounded there;
- shared memory: the text has a and b copied once; a thread that reads its
  weights (or its window) from global memory gets the right sums, and
  breaks the part's access budget on the simulator (simple: a[i] and, for
  threads below CONV, b[i]; blocks: also one halo element);
- zeros inside a window: 'zeros in a, 21' (simple) and 'zeros in a, 200'
  (blocks) hold exact zeros in a, each followed by values that are not 0. A
  kernel that takes a 0 slot for the padding past the end, and stops its
  window there, leaves out the terms after it; no other case has a 0 in a;
- an index past 16 bits (part `blocks`): '65600, past a 16-bit index' (1025
  blocks) has elements a 16-bit index cannot count to, so an index kept in
  Int16 or UInt16 wraps around and reads the first elements again;
- a size drawn from the seed among a few in each part ("random size n").
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: fewer elements than weights, exactly as
many, a full block and zeros inside a window (simple); fewer elements than
weights, a full last block whose halo lies wholly past the end, a halo cut
short by the end, zeros inside a window, more blocks than a block has
threads and an index past 2^16 (blocks); each has a case named for it.

Exact comparison: a holds multiples of 1/8 in [-16, 16], b multiples of 1/8
in [-4, 4]: every product and every sum of up to 4 of them is exact in
float32, in any order. In the finer cases every product is a multiple of
2^-13 below 4, and every sum of up to 4 (below 16) needs at most 17 bits:
exact too.
"""

import numpy as np

CONV = 4
TPB = 64
PAST_16_BITS = 65600  # elements: more than a 16-bit index counts (65536)


def _a(rng: np.random.Generator, size: int) -> np.ndarray:
    steps = np.concatenate([np.arange(-128, 0), np.arange(1, 129)])  # 8 * the values
    return (rng.choice(steps, size=size, replace=size > steps.size) / 8).astype(np.float32)


def _b(rng: np.random.Generator) -> np.ndarray:
    steps = np.concatenate([np.arange(-32, 0), np.arange(1, 33)])
    return (rng.choice(steps, size=CONV, replace=False) / 8).astype(np.float32)


def _fine_a(rng: np.random.Generator, size: int) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size, either sign: off the 16-bit grids."""
    return (rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


def _fine_b(rng: np.random.Generator) -> np.ndarray:
    """Four different nonzero multiples of 1/2 up to 2 in size."""
    return (rng.choice(np.array([-4, -3, -2, -1, 1, 2, 3, 4]), size=CONV, replace=False) / 2).astype(np.float32)


def _with_zeros(rng: np.random.Generator, size: int) -> np.ndarray:
    """a as usual, with exact zeros at a few places that are neither the last element nor
    next to one another: every 0 has a value that is not 0 right after it."""
    a = _a(rng, size)
    at = rng.choice(np.arange(0, size - 1, 2), size // 8, replace=False)
    a[at] = 0
    if size > TPB:
        a[TPB] = 0  # the first element of block 1's halo, seen by block 0
    return a


# The seeded cases' sizes: a few per part, so that a run of another seed reuses a build.
SEEDED_SIZES = {"simple": (7, 30, 50, 63), "blocks": (100, 300, 999, 2500, 4000)}

_SIZES = {
    "simple": [
        ("1 element", "원소 1개", 1),
        ("3 elements", "원소 3개", 3),
        ("4 elements, as many as b", "원소 4개, b와 같은 길이", 4),
        ("21 elements", "원소 21개", 21),
        ("one full block, 64", "꽉 찬 블록 하나, 64", 64),
    ],
    "blocks": [
        ("2 elements", "원소 2개", 2),
        ("one full block, 64", "꽉 찬 블록 하나, 64", 64),
        ("one block and 1, 65", "블록 하나와 1개, 65", 65),
        ("2 blocks and 2, 130", "블록 2개와 2개, 130", 130),
        ("3 full blocks, 192", "꽉 찬 블록 3개, 192", 192),
        ("16 blocks, 1000", "블록 16개, 1000", 1000),
    ],
}


# The special points each case of a size is there for, by part.
_SIZE_POINTS = {
    "simple": {1: ("fewer_than_conv",), 3: ("fewer_than_conv",), 4: ("exactly_conv",), 64: ("full_block",)},
    "blocks": {2: ("fewer_than_conv",), 64: ("halo_past_end",), 65: ("halo_cut_short",),
               130: ("halo_cut_short",), 192: ("halo_past_end",)},
}


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES[part]))
    found = [_case(name, ko, _a(rng, size), _b(rng), special=_SIZE_POINTS[part].get(size, ()))
             for name, ko, size in _SIZES[part]]
    zeros = 21 if part == "simple" else 200
    found.append(_case(f"zeros in a, {zeros}", f"a에 0이 있음, {zeros}개", _with_zeros(rng, zeros), _b(rng),
                       special=("zero_inside_window",)))
    fine = (50, "finer than 16 bits, 50", "16비트보다 정밀한 값, 50개") if part == "simple" else \
        (4200, "66 blocks, 4200", "블록 66개, 4200개")
    found.append(_case(fine[1], fine[2], _fine_a(rng, fine[0]), _fine_b(rng),
                       special=("more_blocks_than_threads",) if part == "blocks" else ()))
    if part == "blocks":
        found.append(_case(f"{PAST_16_BITS}, past a 16-bit index", f"{PAST_16_BITS}개, 16비트 인덱스를 넘음",
                           _a(rng, PAST_16_BITS), _b(rng), special=("index_past_16_bits",)))
    found.append({"name": f"random size {n}", "label": {"en": f"random size {n}", "ko": f"무작위 크기 {n}"},
                  "params": {"size": n}, "inputs": {"a": _a(rng, n), "b": _b(rng)}, "seeded": True})
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    size = a.size
    out = np.zeros(size)
    for j in range(CONV):
        out[: max(size - j, 0)] += a[j:] * b[j]
    return {"output": out}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"]
    size = a.size
    blocks = -(-size // TPB)
    found = set()
    if size < CONV:
        found.add("fewer_than_conv")
    if np.any((a[:-1] == 0) & (a[1:] != 0)):
        found.add("zero_inside_window")
    if part == "simple":
        if size == CONV:
            found.add("exactly_conv")
        if size == TPB:
            found.add("full_block")
        return found
    if size % TPB == 0:
        found.add("halo_past_end")
    if blocks > 1 and 0 < size % TPB < CONV - 1:
        found.add("halo_cut_short")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
