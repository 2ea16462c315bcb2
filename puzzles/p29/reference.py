"""Puzzle 29 reference: a pipeline of thread groups, and a stencil whose steps an mbarrier separates.

Part pipeline: ceildiv(size, 256) blocks of 128 threads; in each, threads
0-31 load the block's 256 values and one either side into shared memory,
threads 32-95 blur them, threads 96-127 write output[i] = 2*a[i] - blur[i],
with blur[i] = (a[i-1] + 2*a[i] + a[i+1]) / 4 and 0 past the ends of a.
Which input makes each term decide the answer:
- each of a[i-1], a[i], a[i+1]: no a is 0 and neighbouring values differ, so
  a term left out, doubled or shifted changes every output;
- the values either side of a tile: the first and last outputs of every
  block need the neighbouring blocks' values: '257 values' (a second block of
  one value, whose left neighbour is block 0's last), '700 values' and the
  larger cases; a tile loaded without them, or from the wrong place, fails
  there, and only at the tile's edges;
- 0 past the ends of a: the first output of every case and the last one
  ('256 values, one full block' ends exactly at a tile's edge);
- the stage split: every value of a tile must be blurred and stored by some
  thread of its group. A group that strides by the block's size, or starts
  at the block's thread number instead of the group's, leaves values out: the
  simulator names the read of a blurred value nobody wrote, and the output
  stays NaN;
- the barriers between stages: the compute group reads what the load group
  wrote, the store group what both wrote. On the simulator a missing one is
  a race in every case with the line of the read and of the write;
- more blocks than a block has threads, an index past 16 bits, and float32,
  not 16 bits: '66000 values, 258 blocks', whose values are odd multiples of
  2^-12 between 1 and 2 in size (13 significant bits: float16 keeps 11,
  bfloat16 8), and whose last two tiles start past 65535: a first value kept
  in 16 bits sends them back to the start of a;
- a size drawn from the seed among a few ("random size n").

Part stencil: one block of 128 threads, `steps` steps of
x[i] <- (x[i-1] + 2*x[i] + x[i+1]) / 4 (0 past the ends), in two buffers.
- the buffer the result is in: steps odd ('1 step', '7 steps') and even
  ('2 steps', '8 steps'): a kernel that writes the output from a fixed buffer,
  or swaps the buffers the wrong way, fails one of them;
- one step against several: '1 step' is the stencil once; with more, a step
  that reads a neighbour of the wrong step (no wait, or a wait for the wrong
  phase) gets another value;
- the neighbours and the ends: values that all differ; '3 values, 4 steps'
  (both ends in one thread's neighbourhood) and sizes below 128, whose last
  value has no right neighbour although buffer slots lie past it;
- the spare threads: with fewer values than threads ('100 values, 5 steps',
  '3 values', the random sizes), threads without a value must still arrive
  every step when the mbarrier counts TPB arrivals, or every wait hangs (a
  finding on the simulator);
- more phases than any other case: '128 values, 10 steps' (a kernel that keeps
  an mbarrier, a token or a buffer per step in a fixed array, sized for the 8
  steps it saw, runs past it); its values are nonzero integers in [-15, 15],
  so that after 10 steps every value is k / 4^10 with |k| < 15 * 4^10 < 2^24:
  exact in float32;
- float32, not 16 bits: '128 values, 5 steps, finer' holds odd multiples of
  2^-12 between 1 and 2 in size;
- a size drawn from the seed among a few ("random size n", 5 steps).

The special points (the manifest's [[parts.special]], found in a case's params by
`hits`) are the ends above, the tiles' edges, the spare threads and the counts
past the constants; each has a case named for it.

Exact comparison: see the manifest's tolerance texts. In short: values are
multiples of 1/8 (or of 2^-12 in the finer cases), and every sum the kernels
make fits float32's 24 significant bits, so the answers are exact in any
order.
"""

import numpy as np


def _a(rng: np.random.Generator, size: int) -> np.ndarray:
    """Multiples of 1/8 in [-16, 16], none 0; neighbours differ."""
    steps = np.concatenate([np.arange(-128, 0), np.arange(1, 129)])  # 8 * the values
    return (rng.choice(steps, size=size, replace=size > steps.size) / 8).astype(np.float32)


def _integers(rng: np.random.Generator, size: int) -> np.ndarray:
    """Nonzero integers in [-15, 15]; neighbours differ."""
    steps = np.concatenate([np.arange(-15, 0), np.arange(1, 16)])
    x = rng.choice(steps, size=size)
    for i in range(1, size):
        while x[i] == x[i - 1]:
            x[i] = rng.choice(steps)
    return x.astype(np.float32)


def _fine_a(rng: np.random.Generator, size: int) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size, either sign: off the 16-bit grids."""
    return (rng.choice(np.arange(4097, 8192, 2), size) * rng.choice([-1, 1], size) / 4096).astype(np.float32)


# The seeded cases' sizes: a few, so that a run of another seed reuses a build.
PIPELINE_SIZES = (300, 1000, 2049, 5000)
STENCIL_SIZES = (60, 77, 101, 127)

TPB, TILE = 128, 256
PAST_16_BITS = 66000  # values: the last two tiles start past what 16 bits count (65536)
MANY_STEPS = 10  # more phases than any other case

# name, Korean name, size, the special points it is there for
_PIPELINE = [
    ("1 value", "값 1개", 1, ("tile_mostly_empty",)),
    ("256 values, one full block", "값 256개, 꽉 찬 블록 하나", 256, ("end_at_tile_edge",)),
    ("257 values, a block of one more", "값 257개, 값 하나짜리 블록이 하나 더", 257,
     ("tile_of_one", "tile_edges_inside")),
    ("700 values, 3 blocks", "값 700개, 블록 3개", 700, ("tile_edges_inside",)),
]

# name, Korean name, size, steps, the special points it is there for
_STENCIL = [
    ("128 values, 1 step", "값 128개, 1단계", 128, 1, ("one_step", "result_in_buffer_1", "end_at_buffer_end")),
    ("128 values, 2 steps", "값 128개, 2단계", 128, 2, ("result_in_buffer_0",)),
    ("128 values, 7 steps", "값 128개, 7단계", 128, 7, ("result_in_buffer_1",)),
    ("128 values, 8 steps", "값 128개, 8단계", 128, 8, ("result_in_buffer_0", "end_at_buffer_end")),
    ("100 values, 5 steps", "값 100개, 5단계", 100, 5, ("spare_threads", "end_inside_buffer")),
    ("3 values, 4 steps", "값 3개, 4단계", 3, 4, ("both_ends_in_one_window", "end_inside_buffer")),
]


def _case(name: str, ko: str, params: dict, a: np.ndarray, seeded: bool = False, special: tuple = ()) -> dict:
    case = {"name": name, "label": {"en": name, "ko": ko}, "params": params, "inputs": {"a": a}}
    if seeded:
        case["seeded"] = True
    if special:
        case["special"] = special
    return case


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "pipeline":
        n = int(rng.choice(PIPELINE_SIZES))
        found = [_case(name, ko, {"size": size}, _a(rng, size), special=special)
                 for name, ko, size, special in _PIPELINE]
        big = PAST_16_BITS
        found.append(_case(f"{big} values, 258 blocks", f"값 {big}개, 블록 258개", {"size": big},
                           _fine_a(rng, big), special=("more_blocks_than_threads", "index_past_16_bits")))
        found.append(_case(f"random size {n}", f"무작위 크기 {n}", {"size": n}, _a(rng, n), seeded=True))
        return found
    n = int(rng.choice(STENCIL_SIZES))
    found = [_case(name, ko, {"size": size, "steps": steps}, _a(rng, size), special=special)
             for name, ko, size, steps, special in _STENCIL]
    found.append(_case(f"128 values, {MANY_STEPS} steps", f"값 128개, {MANY_STEPS}단계",
                       {"size": 128, "steps": MANY_STEPS}, _integers(rng, 128), special=("many_steps",)))
    found.append(_case("128 values, 5 steps, finer", "값 128개, 5단계, 더 잘게", {"size": 128, "steps": 5},
                       _fine_a(rng, 128)))
    found.append(_case(f"random size {n}", f"무작위 크기 {n}", {"size": n, "steps": 5}, _a(rng, n), seeded=True))
    return found


def _blur(x: np.ndarray) -> np.ndarray:
    """(x[i-1] + 2*x[i] + x[i+1]) / 4, with 0 past the ends."""
    padded = np.concatenate([[0.0], x, [0.0]])
    return (padded[:-2] + 2 * padded[1:-1] + padded[2:]) / 4


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's params reach."""
    size = case["params"]["size"]
    found = set()
    if part == "pipeline":
        tiles = -(-size // TILE)
        last = size - (tiles - 1) * TILE  # values of the last tile
        if tiles > 1:
            found.add("tile_edges_inside")
        if tiles > 1 and last == 1:
            found.add("tile_of_one")
        if last == TILE:
            found.add("end_at_tile_edge")
        if size < 32:  # fewer values than the load group (and the store group) has threads
            found.add("tile_mostly_empty")
        if tiles > TPB:
            found.add("more_blocks_than_threads")
        if size > 2**16:
            found.add("index_past_16_bits")
        return found
    steps = case["params"]["steps"]
    found.add("result_in_buffer_0" if steps % 2 == 0 else "result_in_buffer_1")
    if steps == 1:
        found.add("one_step")
    if steps > 8:
        found.add("many_steps")
    if size == TPB:
        found.add("end_at_buffer_end")
    else:
        found.add("end_inside_buffer")
        found.add("spare_threads")
    if size <= 3:
        found.add("both_ends_in_one_window")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    x = case["inputs"]["a"].astype(np.float64)
    if part == "pipeline":
        return {"output": 2 * x - _blur(x)}
    for _ in range(case["params"]["steps"]):
        x = _blur(x)
    return {"output": x}
