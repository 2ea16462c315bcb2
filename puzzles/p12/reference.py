"""Puzzle 12 reference: output[0] = sum of a[i] * b[i].

Step 1 runs ceildiv(size, 128) blocks of 128 threads, each reducing its
products to one partial sum in shared memory; step 2 adds the partial sums.
Which input makes each part of the kernels decide the answer:
- every product a[i] * b[i]: no input is 0 (but in 'zero products'), so no
  product is 0, and leaving any one out (a tree that stops one level early,
  a guard that drops the last element) changes the sum; products of the wrong pair (a[i] * b[i+1])
  change it too, since neighbouring values differ in most places;
- the zeros past the end: sizes that leave a partial last block (1, 7, 129,
  434, 3000): a slot that is not zeroed holds garbage (NaN on the
  simulator) that the tree adds in; exactly full blocks (128, 256) too;
- the tree's levels: 128 slots fold in 7 levels; each level matters once a
  block holds more than one element;
- slot 0 as the block's sum (not thread 0's own product): every case with
  more than one element in a block;
- step 2 adds every block: 'one block and 1, 129' has a second block that
  holds one product, 'halves cancel, 256' sums to exactly 0 only if both
  blocks are added (the second block's products are the first one's,
  negated and shuffled, so a block that drops products doesn't cancel),
  and '24 blocks, 3000' has the most blocks and threads, where a missing
  barrier is likeliest to show on a real GPU.

- more blocks than a block has threads: '129 blocks, 16500' (its block
  sums are more than step 2 could hold in one block's worth of anything);
- float32, not 16 bits: in 'finer than 16 bits, 500' every a is an odd
  multiple of 2^-12 between 1 and 2 in size (13 significant bits: float16
  keeps 11, bfloat16 8) and every b a multiple of 1/2 up to 3/2, so a
  product kept in 16 bits, or a block sum, is rounded there;
- the tree: thread 0 adding the block's 128 products one by one gets the
  same sum, and breaks the part's access budget (a tree reads at most two
  slots per level, 16 in all; one product per thread, two global reads) on
  the simulator;
- exact zeros: in 'zero products, 300' some a[i] and some b[i] are 0, and
  every product of the second block is 0, so its partial sum is exactly 0. A
  kernel that stores only the products that are not 0 (as if the slot held 0
  already), or writes a block's partial only when it is not 0, leaves a slot
  or a partial unwritten: NaN on the simulator, where shared memory and
  `partial` start as NaN;
- an index past 16 bits: '70000, past a 16-bit index' has elements a 16-bit
  index cannot count to (547 blocks): an index kept in Int16 or UInt16 wraps
  and reads the first elements again;
- a size drawn from the seed among a few ("random size n").
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: a single element, a last block of one
product, a partial last block, blocks that cancel, zero products, a block
whose products are all 0, more blocks than a block has threads, and an
index past 2^16; each has a case named for it.

Exact comparison: every input is a nonzero multiple of 1/4 in [-4, 4], so
products are multiples of 1/16 and every partial sum (at most 16500 * 16 <
2^18) is exact in float32, whatever order the additions come in. In
'finer than 16 bits, 500' products are multiples of 2^-13 below 3, and every
partial sum of at most 500 of them (below 2^11) needs at most 24 bits: exact
too. In the 70000 case the inputs are in [-2, 2]: products are at most 4
and every partial sum (at most 70000 * 4 < 2^19) a multiple of 1/16, which
float32 holds.
"""

import numpy as np

_STEPS = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])  # 4 * the values
_SMALL_STEPS = np.concatenate([np.arange(-8, 0), np.arange(1, 9)])  # 4 * the values in [-2, 2]
TPB = 128
PAST_16_BITS = 70000  # elements: more than a 16-bit index counts (65536)


def _values(rng: np.random.Generator, size: int, steps: np.ndarray = _STEPS) -> np.ndarray:
    return (rng.choice(steps, size=size) / 4).astype(np.float32)


def _zeros(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """300 elements, 3 blocks: a few zeros in a and in b in blocks 0 and 2 (products 0 among
    others that are not), and block 1 with every product 0 (a is 0 in its first half, b in
    its second), so that its partial sum is exactly 0."""
    a, b = _values(rng, 300), _values(rng, 300)
    for lo, hi in ((0, TPB), (2 * TPB, 300)):
        at = lo + rng.choice(hi - lo, 8, replace=False)
        a[at[:4]] = 0
        b[at[4:]] = 0
    a[TPB:TPB + 64] = 0
    b[TPB + 64:2 * TPB] = 0
    return a, b


def _fine(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """a: odd multiples of 2^-12 between 1 and 2 in size, either sign (off the 16-bit grids);
    b: nonzero multiples of 1/2 up to 3/2. Every product is a multiple of 2^-13 below 3."""
    a = rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096
    b = rng.choice(np.array([-3, -2, -1, 1, 2, 3]), size) / 2
    return a.astype(np.float32), b.astype(np.float32)


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (60, 300, 1000, 5000, 9000)


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded, "special": special}


# The special points each case of a size is there for.
_SIZE_POINTS = {1: ("one_element",), 129: ("block_of_one",), 434: ("partial_last_block",)}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    out = []
    for name, ko, size in [("1 element", "원소 1개", 1), ("7 elements", "원소 7개", 7),
                           ("one full block, 128", "꽉 찬 블록 하나, 128", 128),
                           ("one block and 1, 129", "블록 하나와 1개, 129", 129)]:
        out.append(_case(name, ko, _values(rng, size), _values(rng, size), special=_SIZE_POINTS.get(size, ())))
    # The second block holds the first one's products negated, in another order: the answer
    # is 0, but a block that drops some of its products drops different ones in each block.
    a, b = _values(rng, 128), _values(rng, 128)
    order = rng.permutation(128)
    out.append(_case("halves cancel, 256", "두 블록이 상쇄, 256", np.concatenate([a, a[order]]),
                     np.concatenate([b, -b[order]]), special=("blocks_cancel",)))
    out.append(_case("zero products, 300", "곱이 0인 원소들, 300", *_zeros(rng),
                     special=("zero_products", "zero_block")))
    for name, ko, size in [("3 blocks and 50, 434", "블록 3개와 50개, 434", 434),
                           ("24 blocks, 3000", "블록 24개, 3000", 3000)]:
        out.append(_case(name, ko, _values(rng, size), _values(rng, size), special=_SIZE_POINTS.get(size, ())))
    out.append(_case("129 blocks, 16500", "블록 129개, 16500개", _values(rng, 16500), _values(rng, 16500),
                     special=("more_blocks_than_threads",)))
    n16 = PAST_16_BITS
    out.append(_case(f"{n16}, past a 16-bit index", f"{n16}, 16비트 인덱스를 넘음", _values(rng, n16, _SMALL_STEPS),
                     _values(rng, n16, _SMALL_STEPS), special=("index_past_16_bits",)))
    out.append(_case("finer than 16 bits, 500", "16비트보다 정밀한 값, 500개", *_fine(rng, 500)))
    out.append(_case(f"random size {n}", f"무작위 크기 {n}", _values(rng, n), _values(rng, n), seeded=True))
    return out


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    return {"output": np.array([np.dot(a, b)])}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    size = a.size
    products = a * b
    blocks = -(-size // TPB)
    found = set()
    if size == 1:
        found.add("one_element")
    if blocks > 1 and size % TPB == 1:
        found.add("block_of_one")
    if blocks > 1 and size % TPB > 1:
        found.add("partial_last_block")
    if blocks > 1 and products.sum() == 0 and products[:TPB].sum() != 0:
        found.add("blocks_cancel")
    if np.any(products == 0) and np.any(products != 0):
        found.add("zero_products")
    sums = [products[s:s + TPB] for s in range(0, size, TPB)]
    if blocks > 1 and any(np.all(p == 0) for p in sums):
        found.add("zero_block")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
