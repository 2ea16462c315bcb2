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
  the manifest's fixed_size says why);
- `hub`, the hub's edges, on purpose: 'walkers on the hub's edges' starts walkers at 0,
  HUB - 1, HUB and the table's last entry, and its table sends HUB - 1 to HUB and HUB back
  to HUB - 1, so every seed reads the hub's first and last slots and the first entry past
  it at every hop: a test `at <= HUB` reads one past the shared array, a copy that stops
  one short leaves its last slot unwritten. Random walkers land there only by chance;
- `hub`, a table past 16 bits: 'a table of 70000, past 16 bits' has positions past 65535
  (a walker starts at 65536 on every seed): a position kept in 16 bits wraps around.
  Part `walk`'s '70000 walkers' has walkers and positions past 65535 too.

The special points (the manifest's [[parts.special]], found by `hits` from a case's
table, starts and hops: it walks them) are those above; each has a case named for it.
One walker count per part is drawn from the seed among a few ("random size ...").
"""

import numpy as np

HUB = 8192
WALK_SEEDED = (3001, 4099, 5003, 6007)
HUB_SEEDED = (1500, 2600, 3700, 4800)


PAST_16_BITS = 70000  # table entries: positions past what 16 bits count (65536)


def _case(name: str, ko: str, table: np.ndarray, start: np.ndarray, hops: int, seeded: bool = False,
          special: tuple = ()) -> dict:
    case = {"name": name, "label": {"en": name, "ko": ko},
            "params": {"n": int(table.size), "walkers": int(start.size), "hops": hops},
            "inputs": {"table": table.astype(np.int32), "start": start.astype(np.int32)}, "seeded": seeded}
    if special:
        case["special"] = special
    return case


def _walk(rng: np.random.Generator, name: str, ko: str, n: int, walkers: int, hops: int,
          seeded: bool = False, special: tuple = ()) -> dict:
    return _case(name, ko, rng.integers(0, n, n), rng.integers(0, n, walkers), hops, seeded, special)


def _hub_table(rng: np.random.Generator, beyond: int) -> np.ndarray:
    """A table of HUB + beyond entries: the hub leads outside it, everything else into it."""
    n = HUB + beyond
    return np.concatenate([rng.integers(HUB, n, HUB), rng.integers(0, HUB, beyond)])


def _hub(rng: np.random.Generator, name: str, ko: str, beyond: int, walkers: int, hops: int,
         seeded: bool = False, special: tuple = ()) -> dict:
    table = _hub_table(rng, beyond)
    return _case(name, ko, table, rng.integers(0, table.size, walkers), hops, seeded, special)


def _hub_edges(rng: np.random.Generator) -> dict:
    """Walkers that read the hub's first and last slots and the first entry past it, on
    every seed: HUB - 1 leads to HUB and HUB back to HUB - 1 (the hub still leads outside
    it, and outside into it), 0 to the table's last entry and that back to 0."""
    table = _hub_table(rng, 100)
    n = table.size
    table[HUB - 1], table[HUB], table[0], table[n - 1] = HUB, HUB - 1, n - 1, 0
    start = rng.integers(0, n, 64)
    start[:4] = (0, HUB - 1, HUB, n - 1)
    return _case("walkers on the hub's edges, 9 hops", "허브 가장자리의 워커, 9걸음", table, start, 9,
                 special=("hub_first_slot", "hub_last_slot", "first_past_hub"))


def _hub_past_16_bits(rng: np.random.Generator) -> dict:
    """A table of PAST_16_BITS entries; one walker starts at 65536, another at the last entry."""
    table = _hub_table(rng, PAST_16_BITS - HUB)
    start = rng.integers(0, table.size, 1000)
    start[:2] = (2**16, table.size - 1)
    return _case(f"a table of {PAST_16_BITS}, past 16 bits", f"항목 {PAST_16_BITS}개짜리 표, 16비트를 넘음",
                 table, start, 4, special=("index_past_16_bits",))


def _visited(case: dict) -> np.ndarray:
    """Every position a hop reads (the start and each position but the last), as a set."""
    table = case["inputs"]["table"]
    at = case["inputs"]["start"].astype(np.int64)
    seen = []
    for _ in range(case["params"]["hops"]):
        seen.append(at)
        at = table[at]
    return np.unique(np.concatenate(seen)) if seen else np.array([], dtype=np.int64)


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "walk":
        w = int(rng.choice(WALK_SEEDED))
        return [
            _walk(rng, "one walker, 3 hops", "워커 하나, 3걸음", 17, 1, 3, special=("one_walker",)),
            _walk(rng, "no hops: end = start", "걸음 없음: end = start", 1000, 300, 0, special=("no_hops",)),
            _walk(rng, "partial last block, 1000 walkers", "마지막 블록이 덜 참, 워커 1000개", 5000, 1000, 7,
                  special=("partial_last_block",)),
            _walk(rng, "70000 walkers, 274 blocks", "워커 70000개, 블록 274개", 100003, 70000, 4,
                  special=("index_past_16_bits",)),
            _walk(rng, f"random size {w}", f"무작위 크기 {w}", 20011, w, 6, seeded=True),
        ]
    w = int(rng.choice(HUB_SEEDED))
    return [
        _hub(rng, "one walker, 3 hops", "워커 하나, 3걸음", 5, 1, 3, special=("one_walker",)),
        _hub(rng, "no hops: end = start", "걸음 없음: end = start", 100, 300, 0, special=("no_hops",)),
        _hub(rng, "partial last block, 1000 walkers, 9 hops", "마지막 블록이 덜 참, 워커 1000개, 9걸음",
             3001, 1000, 9, special=("partial_last_block",)),
        _hub(rng, "20000 walkers, 40 blocks", "워커 20000개, 블록 40개", 40000, 20000, 4),
        _hub_edges(rng),
        _hub_past_16_bits(rng),
        _hub(rng, f"random size {w}", f"무작위 크기 {w}", 12345, w, 8, seeded=True),
    ]


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case reaches: it walks the
    case's walkers to find the positions their hops read."""
    walkers, hops = case["params"]["walkers"], case["params"]["hops"]
    found = set()
    if walkers == 1:
        found.add("one_walker")
    if hops == 0:
        found.add("no_hops")
    if walkers > 1 and walkers % 32:  # a partial last block for any block of whole warps
        found.add("partial_last_block")
    seen = _visited(case)
    if seen.size and seen.max() >= 2**16:
        found.add("index_past_16_bits")
    if part == "hub":
        for position, point in ((0, "hub_first_slot"), (HUB - 1, "hub_last_slot"), (HUB, "first_past_hub")):
            if np.isin(position, seen):
                found.add(point)
    return found


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
