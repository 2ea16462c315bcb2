"""Puzzle 28 reference: output[i] = sum over j < 5 of a[i+j] * b[j], terms past the end left out.

ceildiv(size, 64) blocks; each fetches its 64 elements and a halo of the 4
after them with async copies, loads the 5 weights meanwhile, waits for its
copies and meets the block at a barrier. Which input makes each term decide
the answer:
- each weight b[j]: the five weights differ and none is 0, so reversed or
  shifted weights, or one left out, change every sum;
- each a[i+j]: no a is 0 and neighbouring values differ;
- the halo at the far end of a block: the last 4 outputs of every block but
  the last need the next block's first 4 elements: 'one block and 1, 65' (a
  halo of one element, then the end), '2 blocks and 3, 131' (a last block
  smaller than the halo), '16 blocks, 1000'; a halo fetched from the wrong
  place or never fetched fails there, and only there;
- the halo past the end of a: when the last block is full ('one full block,
  64', '3 full blocks, 192') its last outputs read the halo slots, which must
  hold 0; '2 elements' has a block that is mostly past the end. A copy
  without its guard reads past the end of a (the simulator names the line of
  the copy);
- the wait and the barrier: every output reads slots that other threads'
  copies fill. On the simulator a copy lands only at its thread's wait, so
  a sum computed before the wait reads NaN in every case, in both thread
  orders, and a read of another thread's slot between the wait and a
  barrier is a race; '16 blocks, 1000' and '66 blocks, 4200' have the most
  blocks and threads (two warps a block), where a GPU is likeliest to show it;
- more blocks than a block has threads: '66 blocks, 4200';
- an index past 16 bits: '70000, past a 16-bit index' has elements (and blocks'
  first elements) that an index kept in 16 bits cannot count to: such a kernel
  reads and writes the first elements again and leaves the last ones unwritten;
- float32, not 16 bits: '66 blocks, 4200' holds a values that are odd
  multiples of 2^-12 between 1 and 2 in size (13 significant bits: float16
  keeps 11, bfloat16 8), with weights that are multiples of 1/2 up to 2;
- a size drawn from the seed among a few ("random size n").

The special points (the manifest's [[parts.special]], found in a case's params by
`hits`): a halo that lies wholly in the next block, one cut by the end of a, one
wholly past it, a block mostly past the end, more blocks than a block has
threads, and an index past 2^16; each has a case named for it.

Exact comparison: a holds multiples of 1/8 in [-16, 16], b multiples of 1/8
in [-4, 4]: every product and every sum of up to 5 of them (below 320) is
exact in float32, in any order. In the finer case every product is a
multiple of 2^-13 below 4, and every sum of up to 5 (below 20) needs at most
18 bits: exact too.
"""

import numpy as np

CONV = 5
TPB = 64
PAST_16_BITS = 70000  # elements: more than a 16-bit index counts (65536)


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
    """Five different nonzero multiples of 1/2 up to 2 in size."""
    return (rng.choice(np.array([-4, -3, -2, -1, 1, 2, 3, 4]), size=CONV, replace=False) / 2).astype(np.float32)


# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (100, 301, 999, 2500, 4001)

# name, Korean name, size, the special points the size is there for
_SIZES = [
    ("2 elements", "원소 2개", 2, ("block_mostly_past_end",)),
    ("one full block, 64", "꽉 찬 블록 하나, 64", 64, ("halo_past_end",)),
    ("one block and 1, 65", "블록 하나와 1개, 65", 65, ("halo_cut_by_end",)),
    ("2 blocks and 3, 131", "블록 2개와 3개, 131", 131, ("halo_cut_by_end",)),
    ("3 full blocks, 192", "꽉 찬 블록 3개, 192", 192, ("halo_past_end", "halo_in_next_block")),
    ("16 blocks, 1000", "블록 16개, 1000", 1000, ("halo_in_next_block",)),
]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    found = [{"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size},
              "inputs": {"a": _a(rng, size), "b": _b(rng)}, "special": special} for name, ko, size, special in _SIZES]
    found.append({"name": "66 blocks, 4200", "label": {"en": "66 blocks, 4200", "ko": "블록 66개, 4200개"},
                  "params": {"size": 4200}, "inputs": {"a": _fine_a(rng, 4200), "b": _fine_b(rng)},
                  "special": ("more_blocks_than_threads",)})
    n16 = PAST_16_BITS
    found.append({"name": f"{n16}, past a 16-bit index", "label": {"en": f"{n16}, past a 16-bit index",
                                                                  "ko": f"{n16}, 16비트 인덱스를 넘음"},
                  "params": {"size": n16}, "inputs": {"a": _a(rng, n16), "b": _b(rng)},
                  "special": ("index_past_16_bits",)})
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
    """The special points (the manifest's [[parts.special]]) a case's size reaches."""
    size = case["params"]["size"]
    blocks = -(-size // TPB)
    last = size - (blocks - 1) * TPB  # elements of the last block
    found = set()
    # Block b's halo is a[(b + 1) * TPB .. (b + 1) * TPB + CONV - 2]: wholly inside a for
    # every block but the last two, and for the one before the last when the last holds
    # CONV - 1 elements or more.
    if blocks > 2 or (blocks == 2 and last >= CONV - 1):
        found.add("halo_in_next_block")
    if blocks > 1 and last < CONV - 1:
        found.add("halo_cut_by_end")
    if last == TPB:
        found.add("halo_past_end")
    if last < CONV:
        found.add("block_mostly_past_end")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 8 Mi values, so that what a run
    moves (64 MiB) is past launch overhead."""
    size = 1 << 23
    return {"name": "timing: 8 Mi values", "label": {"en": "timing: 8 Mi values", "ko": "시간 재기: 값 8 Mi개"},
            "params": {"size": size}, "inputs": {"a": _a(rng, size), "b": _b(rng)}}
