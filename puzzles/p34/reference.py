"""Puzzle 34 reference: sums over clusters of 4 blocks of 64 threads, and prefix sums
that start again at every cluster.

Cluster c holds elements 256 c to 256 c + 255 of a (0 past the end). Part sum:
sums[c] is their total. Part scan: output[i] = a[f] + ... + a[i], f the first
element of i's cluster. Which input makes each term decide the answer:
- every block's total: no a is 0 and they all differ, so a block's total left
  out, or counted twice, changes the answer;
- the cluster barrier: every sum (part sum) and every output of a block of
  rank 1 to 3 (part scan) needs totals other blocks wrote. On the simulator
  the blocks of a cluster run interleaved in both orders, and a read of
  another block's slot that no cluster barrier orders is a race, in every
  case;
- the rank: '2 clusters, 512' and bigger have blocks whose block_idx.x is not
  their rank; a kernel that takes block_idx.x for the rank writes only
  cluster 0's sum, or adds the wrong blocks' totals, there;
- the cluster's first slot: clusters after the first start at
  partial[4 c]; '2 clusters, 512' fails a kernel that always starts at 0;
- a cluster cut short by the end of a: '70, one cluster mostly past the end'
  (blocks 1 to 3 have one element or none), '3 clusters and 40, 808';
- more blocks than a block has threads: '68 blocks, 4200';
- an index past 16 bits, part sum: '66000, past a 16-bit index' (258 clusters,
  1032 blocks, more clusters than a block has threads): an element index kept in
  16 bits wraps around, and the last blocks add the first elements again. Part
  scan reads its element with the same given line, and the case costs the
  simulator seconds a part (every block of a cluster runs interleaved), so only
  part sum has it;
- float32, not 16 bits: '68 blocks, 4200' holds odd multiples of 2^-12
  between 1 and 2 in size (13 significant bits: float16 keeps 11, bfloat16 8);
- a size drawn from the seed among a few ("random size n").

The special points (the manifest's [[parts.special]], found in a case's size by
`hits`) are those above; each has a case named for it.

Exact comparison: a holds multiples of 1/8 in [-16, 16]; every partial sum of
up to 256 of them is below 4096, a multiple of 1/8, exact in float32 in any
order. In the finer case, every partial sum is below 512 and a multiple of
2^-12: 21 bits, exact too.
"""

import numpy as np

TPB, CLUSTER = 64, 4
SPAN = TPB * CLUSTER

# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (300, 1000, 1500, 2600, 3333)

PAST_16_BITS = 66000  # elements: more than a 16-bit index counts (65536)

# name, Korean name, size, the special points it is there for
_SIZES = [
    ("70, one cluster mostly past the end", "70, 클러스터 하나, 대부분 끝 너머", 70,
     ("empty_blocks", "block_partly_past_end")),
    ("one full cluster, 256", "꽉 찬 클러스터 하나, 256", 256, ("one_full_cluster",)),
    ("2 clusters, 512", "클러스터 2개, 512", 512, ("rank_not_block_index",)),
    ("3 clusters and 40, 808", "클러스터 3개와 40개, 808", 808, ("last_cluster_cut_short",)),
]


def _a(rng: np.random.Generator, size: int) -> np.ndarray:
    steps = np.concatenate([np.arange(-128, 0), np.arange(1, 129)])  # 8 * the values
    return (rng.choice(steps, size=size, replace=size > steps.size) / 8).astype(np.float32)


def _fine_a(rng: np.random.Generator, size: int) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size, either sign: off the 16-bit grids."""
    return (rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    found = [{"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size},
              "inputs": {"a": _a(rng, size)}, "special": special} for name, ko, size, special in _SIZES]
    found.append({"name": "68 blocks, 4200", "label": {"en": "68 blocks, 4200", "ko": "블록 68개, 4200"},
                  "params": {"size": 4200}, "inputs": {"a": _fine_a(rng, 4200)},
                  "special": ("more_blocks_than_threads",)})
    big = PAST_16_BITS
    if part == "sum":  # 1032 blocks cost seconds of the simulator; part scan's index is the same given line
        found.append({"name": f"{big}, past a 16-bit index", "label": {"en": f"{big}, past a 16-bit index",
                                                                       "ko": f"{big}, 16비트 인덱스를 넘음"},
                      "params": {"size": big}, "inputs": {"a": _a(rng, big)},
                      "special": ("index_past_16_bits", "more_clusters_than_threads")})
    found.append({"name": f"random size {n}", "label": {"en": f"random size {n}", "ko": f"무작위 크기 {n}"},
                  "params": {"size": n}, "inputs": {"a": _a(rng, n)}, "seeded": True})
    return found


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's size reaches."""
    size = case["params"]["size"]
    clusters = -(-size // SPAN)
    blocks = clusters * CLUSTER
    last = size - (clusters - 1) * SPAN  # elements of the last cluster
    found = set()
    if clusters == 1 and last == SPAN:
        found.add("one_full_cluster")
    if clusters > 1:
        found.add("rank_not_block_index")
    if last < SPAN - TPB:  # the last cluster has a block without any element
        found.add("empty_blocks")
    if size % TPB:
        found.add("block_partly_past_end")
    if clusters > 1 and last < SPAN:
        found.add("last_cluster_cut_short")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if clusters > TPB and part == "sum":
        found.add("more_clusters_than_threads")
    if size > 2**16 and part == "sum":
        found.add("index_past_16_bits")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    clusters = -(-a.size // SPAN)
    padded = np.zeros(clusters * SPAN)
    padded[:a.size] = a
    rows = padded.reshape(clusters, SPAN)
    if part == "sum":
        return {"sums": rows.sum(axis=1)}
    return {"output": np.cumsum(rows, axis=1).reshape(-1)[:a.size]}
