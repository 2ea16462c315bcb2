"""Puzzle 24 reference: dot products with warp.sum.

Part `warps` runs one block of 128 threads (4 warps) over at most 128
elements and wants one sum per warp: sums[w] = sum of a[i] * b[i] over
i = 32*w .. 32*w + 31 (i < size). Part `blocks` runs the same kernel over
ceildiv(size, 128) blocks, then one warp adds the warp sums: output[0] is
the whole dot product.

Which input makes each part of the kernels decide the answer:
- every lane's product: no input is 0 (but b in the 'only lane' cases), so leaving out any product (a lane
  that skips warp.sum, a guard that drops the last element) changes a sum;
  'only lane 31 counts' makes the top lane of every warp the only one that
  is not 0 (a sum that never reaches lane 31 gives 0), 'only lane 0 counts'
  the bottom one;
- the lanes past the end: 1, 31, 33 and 100 elements leave a partial last
  warp (and warps with no data at all): a lane that brings garbage (NaN on
  the simulator) instead of 0 spoils its warp's sum; 33 gives a second warp
  of one lane;
- which warp a lane belongs to, over the grid: part blocks has many blocks,
  and a warp number counted inside the block (thread_idx.x // 32) sends
  every block's warps to the same few slots;
- step 2 adds every warp sum: 'one block and 1, 129' has a warp sum that
  holds one product; '33 warps, 1056' has more warp sums than a warp has
  lanes (a lane that takes only sums[lane] misses sums[32]); 'halves cancel,
  256' is 0 only if both blocks are added; '129 blocks, 16500' has more
  blocks than a block has threads (and 516 warp sums); '70000, past a
  16-bit index' has elements a 16-bit index cannot count to, 547 blocks
  and 2188 warp sums;
- float32, not 16 bits: in 'finer than 16 bits' every a is an odd multiple
  of 2^-12 between 1 and 2 in size (13 significant bits) and every b a
  multiple of 1/2 up to 3/2, so a product or a sum kept in 16 bits is
  rounded;
- no shared memory: a tree in shared memory (p12's) gets the same sums and
  breaks the part's access budget on the simulator, as does one lane adding
  up all the warp sums in step 2;
- a size drawn from the seed among a few ("random size n").

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: a partial last warp, a last warp of one
lane, warps with no data, one lane's product alone in every warp, a partial
last block, blocks that cancel, more warp sums than lanes, more blocks than
a block has threads, an index past 2^16; each has a case named for it.

Exact comparison: every input is a nonzero multiple of 1/4 in [-4, 4], so
products are multiples of 1/16 and every partial sum (at most 16500 * 16 <
2^18) is exact in float32, whatever order the additions come in. In the
70000 case the inputs are in [-2, 2]: products are at most 4 and every
partial sum (at most 70000 * 4 < 2^19) a multiple of 1/16 float32 holds. In 'finer
than 16 bits' products are multiples of 2^-13 below 3, and every partial
sum of at most 500 of them (below 2^11) needs at most 24 bits: exact too.
"""

import numpy as np

_STEPS = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])  # 4 * the values
_SMALL_STEPS = np.concatenate([np.arange(-8, 0), np.arange(1, 9)])  # 4 * the values in [-2, 2]
WARP = 32
TPB = 128
PAST_16_BITS = 70000  # elements: more than a 16-bit index counts (65536)


def _values(rng: np.random.Generator, size: int, steps: np.ndarray = _STEPS) -> np.ndarray:
    return (rng.choice(steps, size=size) / 4).astype(np.float32)


def _fine(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """a: odd multiples of 2^-12 between 1 and 2 in size, either sign (off the 16-bit grids);
    b: nonzero multiples of 1/2 up to 3/2. Every product is a multiple of 2^-13 below 3."""
    a = rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096
    b = rng.choice(np.array([-3, -2, -1, 1, 2, 3]), size) / 2
    return a.astype(np.float32), b.astype(np.float32)


def _one_lane(rng: np.random.Generator, size: int, lane: int) -> tuple[np.ndarray, np.ndarray]:
    """Products that are 0 but at one lane of every warp (a stays nonzero: b is 0 there)."""
    a, b = _values(rng, size), _values(rng, size)
    b[np.arange(size) % WARP != lane] = 0
    return a, b


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (60, 300, 1000, 5000, 9000)


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": special}


# The special points each case of a size is there for, by part.
_SIZE_POINTS = {
    "warps": {1: ("warp_of_one", "warps_without_data"), 31: ("partial_warp",),
              33: ("warp_of_one", "warps_without_data"), 100: ("partial_warp",)},
    "blocks": {1: ("warp_of_one",), 33: ("warp_of_one",)},
}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    out = []
    sizes = [("1 element", "원소 1개", 1), ("31 elements, one lane short", "원소 31개, 레인 하나 모자람", 31),
             ("one warp, 32", "워프 하나, 32", 32), ("33 elements, a warp of one", "원소 33개, 원소 하나짜리 워프", 33),
             ("100 elements, last warp of 4", "원소 100개, 마지막 워프는 4개", 100),
             ("four full warps, 128", "꽉 찬 워프 4개, 128", 128)]
    if part == "blocks":
        sizes = [s for s in sizes if s[2] in (1, 33, 128)]
    for name, ko, size in sizes:
        out.append(_case(name, ko, _values(rng, size), _values(rng, size), special=_SIZE_POINTS[part].get(size, ())))
    out.append(_case("only lane 31 counts, 128", "레인 31만 셈, 128", *_one_lane(rng, 128, 31),
                     special=("only_top_lane",)))
    out.append(_case("only lane 0 counts, 128", "레인 0만 셈, 128", *_one_lane(rng, 128, 0),
                     special=("only_lane_zero",)))
    if part == "warps":
        out.append(_case("finer than 16 bits, 128", "16비트보다 정밀한 값, 128", *_fine(rng, 128)))
        return out
    out.append(_case("one block and 1, 129", "블록 하나와 1개, 129", _values(rng, 129), _values(rng, 129),
                     special=("partial_block",)))
    # The second block holds the first one's products negated, in another order.
    a, b = _values(rng, 128), _values(rng, 128)
    order = rng.permutation(128)
    out.append(_case("halves cancel, 256", "두 블록이 상쇄, 256", np.concatenate([a, a[order]]),
                     np.concatenate([b, -b[order]]), special=("blocks_cancel",)))
    out.append(_case("33 warps, 1056", "워프 33개, 1056", _values(rng, 1056), _values(rng, 1056),
                     special=("more_warp_sums_than_lanes",)))
    out.append(_case("24 blocks, 3000", "블록 24개, 3000", _values(rng, 3000), _values(rng, 3000)))
    out.append(_case("129 blocks, 16500", "블록 129개, 16500", _values(rng, 16500), _values(rng, 16500),
                     special=("more_blocks_than_threads",)))
    n = PAST_16_BITS
    out.append(_case(f"{n}, past a 16-bit index", f"{n}, 16비트 인덱스를 넘음", _values(rng, n, _SMALL_STEPS),
                     _values(rng, n, _SMALL_STEPS), special=("index_past_16_bits",)))
    out.append(_case("finer than 16 bits, 500", "16비트보다 정밀한 값, 500", *_fine(rng, 500)))
    n = int(rng.choice(SEEDED_SIZES))
    out.append(_case(f"random size {n}", f"무작위 크기 {n}", _values(rng, n), _values(rng, n), seeded=True))
    return out


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    if part == "warps":
        products = a * b
        warps = -(-a.size // WARP)
        padded = np.zeros(warps * WARP)
        padded[:a.size] = products
        return {"sums": padded.reshape(warps, WARP).sum(axis=1)}
    return {"output": np.array([np.dot(a, b)])}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    size = a.size
    products = a * b
    lanes = np.arange(size) % WARP
    found = set()
    if size % WARP == 1:
        found.add("warp_of_one")
    elif size % WARP and part == "warps":
        found.add("partial_warp")
    if part == "warps" and -(-size // WARP) < TPB // WARP:
        found.add("warps_without_data")
    for lane, point in ((WARP - 1, "only_top_lane"), (0, "only_lane_zero")):
        if np.all(products[lanes != lane] == 0) and np.all(products[lanes == lane] != 0):
            found.add(point)
    if part == "warps":
        return found
    blocks = -(-size // TPB)
    if blocks > 1 and size % TPB:
        found.add("partial_block")
    if blocks > 1 and products.sum() == 0 and products[:TPB].sum() != 0:
        found.add("blocks_cancel")
    if -(-size // WARP) > WARP:
        found.add("more_warp_sums_than_lanes")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
