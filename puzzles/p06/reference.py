"""Puzzle 6 reference: output = a + 10, over ceildiv(size, TPB) blocks of TPB = 4 threads.

Which input makes each part of the kernel decide the answer:
- `block_idx.x * block_dim.x`: any size above one block. Without it every
  block writes the first TPB elements again and the rest stay NaN; with
  grid_dim.x in place of block_dim.x the blocks overlap or leave gaps
  whenever the number of blocks is not TPB ("six full blocks" has 6,
  "ten blocks" has 10);
- `+ thread_idx.x`: values that all differ, so reading a[thread_idx.x]
  instead of a[i] gives wrong values from the second block on;
- the guard `i < size`: sizes that leave a partial last block (10, 37, 1).
  Without it, or with `<=`, the spare threads read past the end of `a`
  and write past the end of `output`; the simulator stops at the read and
  names the thread. A size that fills its blocks
  exactly (4, 24) shows that the guard does not drop a real element;
- `+ 10` in float32: computed as the kernel does, so the check is exact.
  "ten blocks, last holds 1" is off the float16 and bfloat16 grids: adding
  in 16 bits is wrong there;
- a grid far beyond the block: "1001 blocks, 4001" has hundreds of times
  more blocks than a block has threads, so nothing that only works for a
  few blocks (a grid_dim mix-up, a block number taken modulo something)
  passes;
- one thread per element: a kernel where one block loops over the whole
  vector gets the right values, and breaks the part's access budget of one
  write per thread on the simulator.
- an index past 16 bits: '65540, past a 16-bit index' (16385 blocks) has
  elements a 16-bit index cannot count to: an index kept in Int16 or UInt16
  wraps around, and the threads from element 65536 on write the first
  elements again and leave their own NaN.
One size is drawn from the seed among a few ("random size n"), so repeated
runs meet more sizes than a fixed list.
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): one element, exactly one block, a partial last block, a
last block of one element, full blocks only, more blocks than a block has
threads and an index past 2^16; each has a case named for it.
"""

import numpy as np

TPB = 4
PAST_16_BITS = 65540  # elements: more than a 16-bit index counts (65536), 16385 blocks


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (45, 130, 513, 999, 2050)


def _case(name: str, ko: str, values, seeded: bool = False, special: tuple = ()) -> dict:
    a = np.asarray(values, dtype=np.float32)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a},
            "seeded": seeded, "special": special}


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """n values that all differ (quarters, some negative), in a random order."""
    return rng.permutation(np.arange(n) - n // 3).astype(np.float32) * 0.25 + 0.125


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    return [
        _case("partial last block, 10", "마지막 블록이 덜 찬 10개", _distinct(rng, 10),
              special=("partial_last_block",)),
        _case("exactly one block, 4", "딱 한 블록, 4개", _distinct(rng, 4), special=("exactly_one_block",)),
        _case("six full blocks, 24", "꽉 찬 블록 6개, 24개", _distinct(rng, 24), special=("full_blocks_only",)),
        _case("one element, 3 threads idle", "원소 1개, 스레드 3개는 쉼", rng.uniform(-5, 5, 1).round(2),
              special=("one_element",)),
        _case("ten blocks, last holds 1", "블록 10개, 마지막 블록엔 1개", rng.normal(0, 100, 37),
              special=("block_of_one",)),
        _case("1001 blocks, 4001", "블록 1001개, 4001개", rng.normal(0, 100, 4001),
              special=("more_blocks_than_threads",)),
        _case(f"{PAST_16_BITS}, past a 16-bit index", f"{PAST_16_BITS}개, 16비트 인덱스를 넘음",
              rng.normal(0, 100, PAST_16_BITS), special=("index_past_16_bits",)),
        _case(f"random size {n}", f"무작위 크기 {n}", _distinct(rng, n), seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a + np.float32(10)).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    size = case["inputs"]["a"].size
    blocks = -(-size // TPB)
    found = set()
    if size == 1:
        found.add("one_element")
    if size == TPB:
        found.add("exactly_one_block")
    if blocks > 1 and size % TPB == 1:
        found.add("block_of_one")
    if blocks > 1 and size % TPB > 1:
        found.add("partial_last_block")
    if blocks > 1 and size % TPB == 0:
        found.add("full_blocks_only")
    if blocks > TPB * TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
