"""Puzzle 12 reference: output[0] = sum of a[i] * b[i].

Step 1 runs ceildiv(size, 128) blocks of 128 threads, each reducing its
products to one partial sum in shared memory; step 2 adds the partial sums.
Which input makes each part of the kernels decide the answer:
- every product a[i] * b[i]: no input is 0, so no product is 0, and leaving
  any one out (a tree that stops one level early, a guard that drops the
  last element) changes the sum; products of the wrong pair (a[i] * b[i+1])
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
- a size drawn from the seed among a few ("random size n").

Exact comparison: every input is a nonzero multiple of 1/4 in [-4, 4], so
products are multiples of 1/16 and every partial sum (at most 16500 * 16 <
2^18) is exact in float32, whatever order the additions come in. In
'finer than 16 bits, 500' products are multiples of 2^-13 below 3, and every
partial sum of at most 500 of them (below 2^11) needs at most 24 bits: exact
too.
"""

import numpy as np

_STEPS = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])  # 4 * the values


def _values(rng: np.random.Generator, size: int) -> np.ndarray:
    return (rng.choice(_STEPS, size=size) / 4).astype(np.float32)


def _fine(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """a: odd multiples of 2^-12 between 1 and 2 in size, either sign (off the 16-bit grids);
    b: nonzero multiples of 1/2 up to 3/2. Every product is a multiple of 2^-13 below 3."""
    a = rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096
    b = rng.choice(np.array([-3, -2, -1, 1, 2, 3]), size) / 2
    return a.astype(np.float32), b.astype(np.float32)


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (60, 300, 1000, 5000, 9000)


def _case(name: str, ko: str, a: np.ndarray, b: np.ndarray, seeded: bool = False) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a, "b": b}, "seeded": seeded}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    out = []
    for name, ko, size in [("1 element", "원소 1개", 1), ("7 elements", "원소 7개", 7),
                           ("one full block, 128", "꽉 찬 블록 하나, 128", 128),
                           ("one block and 1, 129", "블록 하나와 1개, 129", 129)]:
        out.append(_case(name, ko, _values(rng, size), _values(rng, size)))
    # The second block holds the first one's products negated, in another order: the answer
    # is 0, but a block that drops some of its products drops different ones in each block.
    a, b = _values(rng, 128), _values(rng, 128)
    order = rng.permutation(128)
    out.append(_case("halves cancel, 256", "두 블록이 상쇄, 256", np.concatenate([a, a[order]]),
                     np.concatenate([b, -b[order]])))
    for name, ko, size in [("3 blocks and 50, 434", "블록 3개와 50개, 434", 434),
                           ("24 blocks, 3000", "블록 24개, 3000", 3000)]:
        out.append(_case(name, ko, _values(rng, size), _values(rng, size)))
    out.append(_case("129 blocks, 16500", "블록 129개, 16500개", _values(rng, 16500), _values(rng, 16500)))
    out.append(_case("finer than 16 bits, 500", "16비트보다 정밀한 값, 500개", *_fine(rng, 500)))
    out.append(_case(f"random size {n}", f"무작위 크기 {n}", _values(rng, n), _values(rng, n), seeded=True))
    return out


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    return {"output": np.array([np.dot(a, b)])}
