"""Puzzle 8 reference: pair sums inside each block of TPB = 8, through shared memory.

    output[i] = a[i] + a[i + 1]   if i + 1 < size and i + 1 is in i's block
    output[i] = a[i]              otherwise (the last slot of a block, the last element)

Which input makes each part of the kernel decide the answer:
- the copy into shared memory and `barrier()`: every element but the last
  of a block reads a value another thread copied in. Without the barrier the
  simulator, running the threads one at a time in order, has thread 0 read
  slot 1 before thread 1 wrote it (NaN), and in reverse order gets the right
  answer: the results differ, which names the missing barrier. Every case
  with two or more elements shows it;
- `shared[local + 1]`: values that all differ (and none is zero), so adding
  the wrong slot, or its own value twice, shows;
- the block's edge (`local + 1 < TPB`): every case with a second block
  (13, 17, 24, 61). Reading across the edge would read past the shared array;
  reading a[i + 1] from global memory instead would add the next block's
  first value to the last slot of a block;
- 0 in the slots past the end: sizes with a partial last block (13, 17, 61,
  and 1). The last element's neighbour slot holds 0 there (or it must not be
  read), so output[size - 1] = a[size - 1];
- every thread reaching `barrier()`: the same partial blocks. A barrier
  inside `if i < size` is one the spare threads never reach;
- the slot `local`, not the global index `i`: every case with a second block.
  From block 1 on, `shared[i]` lies past the block's 8 slots;
- float32: one rounded addition, as the kernel does, so the check is exact.
  "8 blocks, random, 61" is off the float16 and bfloat16 grids: adding in
  16 bits is wrong there;
- more blocks than a block has threads: "20 blocks, 157", where a block's
  first element lies beyond TPB * TPB;
- the neighbour from the block's copy: reading a[i + 1] from global memory
  again gives the right values inside a block, and breaks the part's access
  budget (one global read per thread) on the simulator; so does a thread
  that copies its neighbour's element too, which is also a race (two
  threads writing one slot, with the same value).
- an index past 16 bits: '65544, past a 16-bit index' (8193 blocks) has
  elements a 16-bit index cannot count to: an index kept in Int16 or UInt16
  wraps around, and the blocks from element 65536 on copy and write the
  first elements again (its values, odd eighths below 2^14, add exactly).
One size is drawn from the seed among a few ("random size n"), so repeated
runs meet more sizes than a fixed list.
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): one element, one full block, a partial last block, a
last block of one element, full blocks only (the last element in a block's
last slot), more blocks than a block has threads and an index past 2^16;
each has a case named for it.
"""

import numpy as np

TPB = 8
PAST_16_BITS = 65544  # elements: more than a 16-bit index counts (65536), 8193 blocks


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (30, 77, 200, 511, 1000)


def _case(name: str, ko: str, values, seeded: bool = False, special: tuple = ()) -> dict:
    a = np.asarray(values, dtype=np.float32)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a},
            "seeded": seeded, "special": special}


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """n values that all differ and none is zero: odd eighths, some negative, in a random order."""
    return (rng.permutation(np.arange(n) - n // 3) * 2 + 1) * 0.125


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    return [
        _case("one full block, 8", "꽉 찬 블록 하나, 8개", _distinct(rng, 8), special=("one_full_block",)),
        _case("partial last block, 13", "마지막 블록이 덜 찬 13개", _distinct(rng, 13),
              special=("partial_last_block",)),
        _case("last block holds 1, 17", "마지막 블록엔 1개뿐, 17개", _distinct(rng, 17), special=("block_of_one",)),
        _case("three full blocks, 24", "꽉 찬 블록 셋, 24개", _distinct(rng, 24), special=("full_blocks_only",)),
        _case("one element", "원소 하나", rng.uniform(1, 5, 1).round(2), special=("one_element",)),
        _case("8 blocks, random, 61", "블록 8개, 무작위 값, 61개", rng.normal(0, 100, 61)),
        _case("20 blocks, 157", "블록 20개, 157개", _distinct(rng, 157), special=("more_blocks_than_threads",)),
        _case(f"{PAST_16_BITS}, past a 16-bit index", f"{PAST_16_BITS}개, 16비트 인덱스를 넘음",
              _distinct(rng, PAST_16_BITS), special=("index_past_16_bits",)),
        _case(f"random size {n}", f"무작위 크기 {n}", _distinct(rng, n), seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    i = np.arange(a.size)
    has_next = ((i + 1) % TPB != 0) & (i + 1 < a.size)
    nxt = np.where(has_next, np.roll(a, -1), np.float32(0))
    out = np.where(has_next, a + nxt, a)  # float32 additions, as the kernel does
    return {"output": out.astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    size = case["inputs"]["a"].size
    blocks = -(-size // TPB)
    found = set()
    if size == 1:
        found.add("one_element")
    if size == TPB:
        found.add("one_full_block")
    if blocks > 1 and size % TPB == 1:
        found.add("block_of_one")
    if blocks > 1 and size % TPB > 1:
        found.add("partial_last_block")
    if blocks > 1 and size % TPB == 0:
        found.add("full_blocks_only")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found
