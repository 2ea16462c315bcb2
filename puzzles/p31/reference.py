"""Puzzle 31 reference: walks through a table. end[w] is where walker w stands after
`hops` hops from start[w], each hop at = table[at]. Part `walk` on any table; part `hub`
on a table whose hub (entries 0 .. HUB - 1) every other hop lands in.

The values are integers, compared exactly; the lesson is the occupancy rule (the block
sizes the learner picks). Which input makes each part of the kernel decide the answer:
- the hop count: no hops at all (end = start: a loop that always makes one hop fails),
  and odd and even counts (in `hub`, the last hop lands in the hub or outside it);
- the walker index: a partial last block (1000 walkers), one walker, and 70000 walkers
  in 274 blocks of 256 (more blocks than a block has threads: an index that forgets
  block_idx, or a guard on the wrong size, shows there);
- tables whose entries all differ in where they lead (drawn at random over the whole
  table): a walker that takes a hop too many or too few ends elsewhere;
- `hub`: positions below HUB are read from the block's copy and the rest from global
  memory, so a copy that misses entries (a stride that is not the block's size) or is
  read before the barrier gives wrong positions; tables beyond the hub of 5 to 40000
  entries; 20000 walkers in 40 blocks of 512 (not more blocks than a block has threads:
  the manifest's fixed_size says why).
One walker count per part is drawn from the seed among a few ("random size ...").
"""

import numpy as np

HUB = 8192
WALK_SEEDED = (3001, 4099, 5003, 6007)
HUB_SEEDED = (1500, 2600, 3700, 4800)


def _case(name: str, ko: str, table: np.ndarray, start: np.ndarray, hops: int, seeded: bool = False) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko},
            "params": {"n": int(table.size), "walkers": int(start.size), "hops": hops},
            "inputs": {"table": table.astype(np.int32), "start": start.astype(np.int32)}, "seeded": seeded}


def _walk(rng: np.random.Generator, name: str, ko: str, n: int, walkers: int, hops: int,
          seeded: bool = False) -> dict:
    return _case(name, ko, rng.integers(0, n, n), rng.integers(0, n, walkers), hops, seeded)


def _hub(rng: np.random.Generator, name: str, ko: str, beyond: int, walkers: int, hops: int,
         seeded: bool = False) -> dict:
    """A table of HUB + beyond entries: the hub leads outside it, everything else into it."""
    n = HUB + beyond
    table = np.concatenate([rng.integers(HUB, n, HUB), rng.integers(0, HUB, beyond)])
    return _case(name, ko, table, rng.integers(0, n, walkers), hops, seeded)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "walk":
        w = int(rng.choice(WALK_SEEDED))
        return [
            _walk(rng, "one walker, 3 hops", "워커 하나, 3걸음", 17, 1, 3),
            _walk(rng, "no hops: end = start", "걸음 없음: end = start", 1000, 300, 0),
            _walk(rng, "partial last block, 1000 walkers", "마지막 블록이 덜 참, 워커 1000개", 5000, 1000, 7),
            _walk(rng, "70000 walkers, 274 blocks", "워커 70000개, 블록 274개", 100003, 70000, 4),
            _walk(rng, f"random size {w}", f"무작위 크기 {w}", 20011, w, 6, seeded=True),
        ]
    w = int(rng.choice(HUB_SEEDED))
    return [
        _hub(rng, "one walker, 3 hops", "워커 하나, 3걸음", 5, 1, 3),
        _hub(rng, "no hops: end = start", "걸음 없음: end = start", 100, 300, 0),
        _hub(rng, "partial last block, 1000 walkers, 9 hops", "마지막 블록이 덜 참, 워커 1000개, 9걸음",
             3001, 1000, 9),
        _hub(rng, "20000 walkers, 40 blocks", "워커 20000개, 블록 40개", 40000, 20000, 4),
        _hub(rng, f"random size {w}", f"무작위 크기 {w}", 12345, w, 8, seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    table = case["inputs"]["table"]
    at = case["inputs"]["start"].copy()
    for _ in range(case["params"]["hops"]):
        at = table[at]
    return {"end": at.astype(np.int32)}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged: a table of 64 Mi entries (256 MiB, more than an
    H200's 50 MB L2, so a hop waits for memory), 4 Mi walkers (about 15 SMs' worth of
    full waves on 132 SMs), 64 hops each."""
    walkers, hops = 1 << 22, 64
    if part == "walk":
        return _walk(rng, "timing: 4 Mi walkers, 64 hops", "시간 재기: 워커 4 Mi개, 64걸음", 1 << 26, walkers, hops)
    return _hub(rng, "timing: 4 Mi walkers, 64 hops", "시간 재기: 워커 4 Mi개, 64걸음", 1 << 26, walkers, hops)
