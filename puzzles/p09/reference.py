"""Puzzle 9 reference: three small kernels, each handed out with one bug the
learner finds from the report.

Part overread, output[i] = a[i] for i < length and 0 up to size: `a` is
shorter than `output`. Which case makes each term decide:
- the padding (the zeros): every case with length < size. A kernel that
  guards on size reads a[length], a[length + 1], ... past the end of `a`
  (the simulator's read_out_of_bounds, with the thread and the element; NaN
  in the output); a guard on length alone leaves the padding unwritten
  (NaN); a clamped index repeats the last value instead of 0;
- "64 of 64, no padding": length == size, where the buggy guard is right:
  the report shows which cases fail, and this one does not;
- "1 value, 64": the smallest `a`, one value then all zeros;
- values that all differ (none 0), so a copy from the wrong place shows;
- sizes that leave a partial last block (5 of 8, 100 of 150, ...) and one
  with more blocks than a block has threads ("4000 of 4200, 66 blocks").
  Values are random float32, off the float16 and bfloat16 grids: a copy is
  exact only in 32 bits.

Part window, output[i] = a[i-3] + a[i-2] + a[i-1] + a[i] (terms before a[0]
left out):
- a spike (one value 1, every other 0) at the first position, in the
  middle, and at the last: the outputs that see the spike are exactly the
  windows that hold it, so the error map draws the window's shape. The spike
  at 0 is in the first WINDOW windows only, the ones that reach past the
  start: a window that drops a[0] fails only there; a window one too long
  or one too short fails beside the middle spike; the spike at the last
  position is in the last output only;
- values that all differ, so every term counts (a missing or extra term
  changes the sum);
- sizes smaller than the window (3), a partial last block (100), one full
  block (64) and more blocks than a block has threads (4200).
  Values are multiples of 1/8 in [-16, 16]: four of them sum exactly in
  float32 in any order, so the check is exact. "finer than 16 bits, 70" is
  off the float16 and bfloat16 grids: odd multiples of 2^-13 between 1/2
  and 1, times 1/2, 1 or 3/2 (every sum of four a multiple of 2^-14 below
  6, exact in float32), rounded in 16 bits.

Part barrier, each block's slice of a reversed, the last block's slice being
shorter (size % 64 values):
- a partial last block (67, 100, 130, 4200): its spare threads have no
  value; a barrier() inside `if i < size` is one they never reach (the
  simulator's divergent_barrier). "128, two full blocks" has no spare
  thread: a barrier in the branch goes unseen there;
- the shorter slice reversed within itself: a kernel that reverses every
  block as if it were full reads slots nobody wrote (67, 100, ...);
- "1 value": a block with one value, reversed onto itself;
- values all differ, random float32 (off the 16-bit grids).
The text has the block go through shared memory: a kernel that reads
a[first + count - 1 - t] straight from global memory gets the right values
and breaks the part's budget (at least one shared write per block).
Each part has a size drawn from the seed among a few ("random size n").
The code around each bug is given, its index included, so no case goes
past 2^16 elements: the learner writes no index there.

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`), the boundaries the text names: overread: no padding, a
single value of a, padding over more than a block, more blocks than a block
has threads; window: a spike at the first, an inside and the last place,
fewer values than the window, more blocks than a block has threads;
barrier: a single value, a partial last block, full blocks only, more
blocks than a block has threads. Each has a case named for it.
"""

import numpy as np

TPB = 64
WINDOW = 4


# The special points each case is there for, by part and name.
_POINTS = {
    "overread": {"1 value, 64": ("one_value",), "64 of 64, no padding": ("no_padding",),
                 "4000 of 4200, 66 blocks": ("padding_past_a_block", "more_blocks_than_threads")},
    "window": {"spike at 0, 100": ("spike_at_first",), "spike at 50, 100": ("spike_inside",),
               "spike at the last, 100": ("spike_at_last",), "3, shorter than the window": ("fewer_than_window",),
               "4200, 66 blocks": ("more_blocks_than_threads",)},
    "barrier": {"1 value": ("one_value",), "67, the last block holds 3": ("partial_last_block",),
                "128, two full blocks": ("full_blocks_only",), "4200, 66 blocks": ("more_blocks_than_threads",)},
}


def _label(en: str, ko: str) -> dict:
    return {"name": en, "label": {"en": en, "ko": ko}}


# The seeded cases' sizes: a few, so that a run of another seed reuses a build.
SEEDED_PADS = ((30, 90), (200, 260), (500, 777), (1000, 1100))
SEEDED_SIZES = (20, 100, 700, 1500, 3000)


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """n different multiples of 1/8 in [-16, 16], none of them 0."""
    values = rng.choice(np.concatenate([np.arange(-128, 0), np.arange(1, 129)]), size=n, replace=n > 256)
    return values.astype(np.float32) / 8


def _spike(size: int, at: int) -> np.ndarray:
    a = np.zeros(size, dtype=np.float32)
    a[at] = 1
    return a


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "overread":
        length, size = SEEDED_PADS[int(rng.integers(len(SEEDED_PADS)))]
        found = []
        for n, m, en, ko in ((5, 8, "5 of 8", "8개 중 5개"),
                             (1, 64, "1 value, 64", "값 1개, 64개"),
                             (64, 64, "64 of 64, no padding", "64개 중 64개, 채울 곳 없음"),
                             (100, 150, "100 of 150, 3 blocks", "150개 중 100개, 블록 3개"),
                             (length, size, f"random size {length} of {size}", f"무작위 크기 {size}개 중 {length}개"),
                             (4000, 4200, "4000 of 4200, 66 blocks", "4200개 중 4000개, 블록 66개")):
            a = rng.normal(0, 10, n).astype(np.float32)
            a[a == 0] = 1
            found.append({**_label(en, ko), "params": {"length": n, "size": m}, "inputs": {"a": a},
                          "seeded": en.startswith("random")})
        return _claims(found, part)
    if part == "window":
        n = int(rng.choice(SEEDED_SIZES))
        found = [{**_label("spike at 0, 100", "0번 위치의 스파이크, 100개"), "params": {"size": 100},
                  "inputs": {"a": _spike(100, 0)}},
                 {**_label("spike at 50, 100", "50번 위치의 스파이크, 100개"), "params": {"size": 100},
                  "inputs": {"a": _spike(100, 50)}},
                 {**_label("spike at the last, 100", "마지막 위치의 스파이크, 100개"), "params": {"size": 100},
                  "inputs": {"a": _spike(100, 99)}}]
        for size, en, ko in ((3, "3, shorter than the window", "3개, 창보다 짧음"),
                             (64, "64, one full block", "64개, 꽉 찬 블록 1개"),
                             (100, "100, 2 blocks", "100개, 블록 2개"),
                             (n, f"random size {n}", f"무작위 크기 {n}"),
                             (4200, "4200, 66 blocks", "4200개, 블록 66개")):
            found.append({**_label(en, ko), "params": {"size": size}, "inputs": {"a": _distinct(rng, size)},
                          "seeded": en.startswith("random")})
        odd = (2 * rng.integers(2048, 4096, 70) + 1).astype(np.float32) / 2**13
        a = (odd * rng.choice(np.array([0.5, 1.0, 1.5], dtype=np.float32), 70)).astype(np.float32)
        found.append({**_label("finer than 16 bits, 70", "16비트보다 촘촘한 값, 70개"), "params": {"size": 70},
                      "inputs": {"a": a}})
        return _claims(found, part)
    n = int(rng.choice(SEEDED_SIZES))
    found = []
    for size, en, ko in ((1, "1 value", "값 1개"),
                         (67, "67, the last block holds 3", "67개, 마지막 블록은 3개"),
                         (128, "128, two full blocks", "128개, 꽉 찬 블록 2개"),
                         (130, "130, the last block holds 2", "130개, 마지막 블록은 2개"),
                         (n, f"random size {n}", f"무작위 크기 {n}"),
                         (4200, "4200, 66 blocks", "4200개, 블록 66개")):
        found.append({**_label(en, ko), "params": {"size": size},
                      "inputs": {"a": rng.normal(0, 10, size).astype(np.float32)},
                      "seeded": en.startswith("random")})
    return _claims(found, part)


def _claims(found: list[dict], part: str) -> list[dict]:
    """Each case with the special points it is there for."""
    return [{**case, "special": _POINTS[part].get(case["name"], ())} for case in found]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    size = case["params"]["size"]
    if part == "overread":
        output = np.zeros(size)
        output[:len(a)] = a
        return {"output": output}
    if part == "window":
        padded = np.concatenate([np.zeros(WINDOW - 1), a])
        return {"output": sum(padded[k:k + size] for k in range(WINDOW))}
    return {"output": np.concatenate([a[start:start + TPB][::-1] for start in range(0, size, TPB)])}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"]
    size = case["params"]["size"]
    blocks = -(-size // TPB)
    found = set()
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if part == "overread":
        if a.size == size:
            found.add("no_padding")
        if a.size == 1:
            found.add("one_value")
        if size - a.size > TPB:
            found.add("padding_past_a_block")
        return found
    if part == "window":
        nonzero = np.flatnonzero(a)
        if nonzero.size == 1:
            at = int(nonzero[0])
            found.add("spike_at_first" if at == 0 else "spike_at_last" if at == size - 1 else "spike_inside")
        if size < WINDOW:
            found.add("fewer_than_window")
        return found
    if size == 1:
        found.add("one_value")
    if blocks > 1 and size % TPB:
        found.add("partial_last_block")
    if blocks > 1 and size % TPB == 0:
        found.add("full_blocks_only")
    return found
