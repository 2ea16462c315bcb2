"""Puzzle 14 reference: inclusive prefix sums, output[i] = a[0] + ... + a[i].

Part `block`: one block of TPB = 64 threads, size <= 64.
Part `any`: any size; kernel 1 scans each block of 64 and writes its total
to the scratch buffer `totals`, kernel 2 adds totals[0] + ... + totals[b-1]
to every element of block b.

The expected sums are computed in float64 (exact for the 1/8 grid below).

Term by term, and the input that makes each one decide the answer:
- a[i] itself (inclusive, not exclusive): any a[i] != 0; every |a[i]| is at
  least 0.25, so leaving out its own element (an exclusive scan) is off by
  0.25 or more, far over the tolerance;
- a[j] for each j < i (every round of the scan): values that all differ,
  with both signs, so a skipped term, a term counted twice (an in-place
  update that reads a neighbour who already added) or a term taken from the
  right (a scan in the wrong direction) all change the sum;
- the zeros past the end: sizes that leave threads without an element
  (37, 1, and the partial last blocks 150 and 300), so a thread that loads
  past the end instead of 0 changes the block total, and a thread that
  writes past the end writes outside `output`;
- totals[b] (kernel 1's last thread): several blocks; each block total is
  at least 2 from zero (the signs are drawn again until it is), so adding
  it to its own block, or not at all, shows;
- totals[0] + ... + totals[b-1] (kernel 2): 5 blocks (size 300), so adding
  only the previous block's total misses totals[0..b-2], at least 2 from 0
  as well;
- one block exactly (size 64): the second kernel must add nothing there;
- the last block holding a single element (size 129);
- unrounded float32 values (one case per part), the only case where the
  order of additions changes the last bits: the tolerance covers that. They
  are off the float16 and bfloat16 grids: a scan kept in 16 bits fails there;
- more blocks than a block has threads: '70 blocks, 4470' (part `any`). A
  kernel 2 that gathers the earlier totals into its block's threads, one
  total per thread, only sees 64 of them: the blocks from 65 on show it;
- the method: a scan in rounds reads at most two slots per round, and a
  thread adding up all the slots to its left (a serial scan) reads up to 64:
  the parts' access budgets say so on the simulator, as they do for kernel 2
  when the block's offset does not go through shared memory;
- a block total of exactly 0: in 'a block sums to 0, 192' the middle
  block's values cancel in pairs (and some values are 0), so totals[1] is 0:
  a kernel 1 that writes a total only when it is not 0 leaves that slot as
  the launch found it (NaN);
- an index past 16 bits: '65600, past a 16-bit index' (1025 blocks) has
  elements a 16-bit index cannot count to, so an index kept in Int16 or
  UInt16 wraps around; its values are positive multiples of 1/8 up to 2, so
  every prefix sum (below 2^17) stays exact in float32 and every block total
  and offset is far from 0;
- a size drawn from the seed among a few in each part ("random size n").
Part `block` cannot outgrow its one block (its manifest says so).
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: a single value, a partial block, a full
block (part `block`); less than a block, exactly one block, a last block of
one element, a partial last block, a block total of 0, more blocks than a
block has threads and an index past 2^16 (part `any`); each has a case
named for it.
"""

import numpy as np

TPB = 64
# Magnitudes: the multiples of 1/8 from 0.25 to 40, 319 of them; drawn without
# repeats and given random signs, the values all differ (longer vectors draw
# them again). Every prefix sum of at most 5000 of them is a multiple of 1/8
# below 2^18, which float32 holds exactly (21 bits), so any order of additions
# gives the exact answer.
_GRID = np.arange(2, 321) / 8.0
PAST_16_BITS = 65600  # elements: more than a 16-bit index counts (65536)


def _blocks_ok(a: np.ndarray) -> bool:
    """Every block total, and every sum of the totals before a block, at least 2 from 0."""
    totals = np.array([a[s:s + TPB].sum() for s in range(0, a.size, TPB)], dtype=np.float64)
    return bool(np.all(np.abs(totals) >= 2) and np.all(np.abs(np.cumsum(totals)) >= 2))


def _signed(rng: np.random.Generator, n: int, magnitudes) -> np.ndarray:
    """n values of random sign, drawn again until every block total is well
    away from 0 (a block of one value needs a magnitude of 2 or more)."""
    while True:
        a = magnitudes(n) * rng.choice([-1.0, 1.0], n)
        if _blocks_ok(a):
            return a.astype(np.float32)


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values that all differ (for more than the grid holds, values drawn from it again)."""
    return _signed(rng, n, lambda k: _GRID[rng.choice(_GRID.size, k, replace=k > _GRID.size)])


def _unrounded(rng: np.random.Generator, n: int) -> np.ndarray:
    return _signed(rng, n, lambda k: rng.uniform(0.25, 4.0, k))


# The seeded cases' sizes: a few per part, so that a run of another seed reuses a build.
SEEDED_SIZES = {"block": (5, 17, 40, 63), "any": (130, 700, 1500, 3000, 5000)}


def _zero_total(rng: np.random.Generator) -> np.ndarray:
    """192 values, 3 blocks: the middle block holds 28 values and their negatives, in a
    random order, and 8 zeros, so its total is exactly 0; the other blocks as usual."""
    while True:
        half = _GRID[rng.choice(_GRID.size, 28, replace=False)] * rng.choice([-1.0, 1.0], 28)
        middle = rng.permutation(np.concatenate([half, -half, np.zeros(8)]))
        a = np.concatenate([_distinct(rng, TPB), middle, _distinct(rng, TPB)])
        totals = np.array([a[s:s + TPB].sum() for s in range(0, a.size, TPB)])
        if abs(totals[0]) >= 2 and abs(totals[2]) >= 2 and abs(totals[0] + totals[2]) >= 2:
            return a.astype(np.float32)


def _past_16_bits(rng: np.random.Generator) -> np.ndarray:
    """Positive multiples of 1/8 up to 2: every prefix sum of PAST_16_BITS of them is below
    2^17, exact in float32, and every block total is at least 16."""
    return (rng.integers(2, 17, PAST_16_BITS) / 8).astype(np.float32)


def _case(name: str, ko: str, a: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": np.asarray(a, dtype=np.float32)}, "seeded": seeded, "special": special}


def _random(rng: np.random.Generator, part: str) -> dict:
    n = int(rng.choice(SEEDED_SIZES[part]))
    return _case(f"random size {n}", f"무작위 크기 {n}", _distinct(rng, n), seeded=True)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "block":
        return [
            _case("8 values, as pictured", "그림과 같은 값 8개",
                  np.array([3, -1, 4, 2, -5, 6, 1, 1], dtype=np.float32) * rng.choice([1, -1])),
            _case("one full block, 64", "꽉 찬 블록 하나, 64개", _distinct(rng, 64), special=("full_block",)),
            _case("part of a block, 37", "블록 일부, 37개", _distinct(rng, 37), special=("partial_block",)),
            _case("a single value", "값 하나", _distinct(rng, 1), special=("single_value",)),
            _case("unrounded floats, 64", "반올림되는 실수 64개", _unrounded(rng, 64)),
            _random(rng, part),
        ]
    return [
        _case("less than a block, 20", "블록보다 적게, 20개", _distinct(rng, 20), special=("less_than_a_block",)),
        _case("exactly one block, 64", "정확히 블록 하나, 64개", _distinct(rng, 64), special=("exactly_one_block",)),
        _case("last block has 1, 129", "마지막 블록에 1개, 129개", _distinct(rng, 129), special=("block_of_one",)),
        _case("partial last block, 150", "마지막 블록이 일부, 150개", _distinct(rng, 150),
              special=("partial_last_block",)),
        _case("five blocks, 300", "블록 다섯 개, 300개", _distinct(rng, 300)),
        _case("a block sums to 0, 192", "합이 0인 블록, 192개", _zero_total(rng), special=("zero_total",)),
        _case("unrounded floats, 256", "반올림되는 실수 256개", _unrounded(rng, 256)),
        _case("70 blocks, 4470", "블록 70개, 4470개", _distinct(rng, 4470), special=("more_blocks_than_threads",)),
        _case(f"{PAST_16_BITS}, past a 16-bit index", f"{PAST_16_BITS}개, 16비트 인덱스를 넘음", _past_16_bits(rng),
              special=("index_past_16_bits",)),
        _random(rng, part),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    return {"output": np.cumsum(a)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    size = a.size
    blocks = -(-size // TPB)
    found = set()
    if part == "block":
        if size == 1:
            found.add("single_value")
        elif size < TPB:
            found.add("partial_block")
        else:
            found.add("full_block")
        return found
    if size < TPB:
        found.add("less_than_a_block")
    if size == TPB:
        found.add("exactly_one_block")
    if blocks > 1 and size % TPB == 1:
        found.add("block_of_one")
    if blocks > 1 and size % TPB > 1:
        found.add("partial_last_block")
    totals = [a[s:s + TPB].sum() for s in range(0, size, TPB)]
    if blocks > 1 and any(t == 0 for t in totals[:-1]):
        found.add("zero_total")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
