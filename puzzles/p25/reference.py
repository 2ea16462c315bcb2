"""Puzzle 25 reference: neighbour differences, a moving average, warp means.

Blocks of 128 threads (4 warps of 32), one thread per element.
- difference: output[i] = a[i+1] - a[i], for i < size - 1;
- moving_average: output[i] = (a[i] + a[i+1] + a[i+2]) / 3, for i < size - 2;
- broadcast: output[i] = a[i] - the mean of the values of i's warp
  (elements 32*w .. 32*w + 31 that exist).

Which input makes each term decide the answer:
- the top lanes: shuffle_down gives lane 31 (and, two lanes down, lane 30)
  its own value back. 'jumps at warp edges' holds one value per warp, a
  different one in each: every difference is 0 but at the last lane of a
  warp, every window is flat but at the top two lanes, so a top lane that
  keeps its own value (or reads the wrong neighbour) is the only thing that
  shows; random values elsewhere show it too;
- the end of the data: 'one warp, 32', '33 elements' and '34 elements' put
  the last element in the last lane or in the next warp: a guard on i < size
  instead of i + 1 < size (i + 2) writes past the end of the output, and a
  top lane that reads a[i + 1] without a guard reads past the input;
- the partial last warp of a block, and blocks: 129 and 17000 elements
  (133 blocks, more than a block has threads);
- broadcast: 'one high lane per warp' holds 1 everywhere but one lane of
  each warp (a different lane in each), so every output depends on that one
  lane through the mean: a sum that leaves a lane out, or a mean taken from
  a lane other than 0 after the shuffle-down tree (which holds only part of
  the sum), is off; '43 elements, last warp of 11' divides by 11, not 32;
- float32, not 16 bits: 'finer than 16 bits' (and every case of the other
  two parts) holds odd multiples of 2^-12, more bits than float16 keeps;
- shuffles, not memory: the access budgets count each warp's reads
  (difference, moving average) and each thread's (broadcast);
- a size drawn from the seed among a few ("random size n").

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: the smallest size, data ending at the last
lane of a warp, an output ending at lane 30 or 31 (its neighbours in the next
warp), the last element one lane into the next warp, values that change only
at the top lanes of each warp, a partial last block, more blocks than a block
has threads; for the mean one element, a partial last warp, a last warp of
one element in a second block, and one lane per warp that differs. Each has
a case named for it. No case goes past 2^16 elements: the index i is given
code, computed in Int.
"""

import numpy as np

_STEPS = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])  # 4 * the values
WARP = 32
SEEDED_SIZES = (60, 300, 1000, 5000, 9000)


def _quarters(rng: np.random.Generator, size: int) -> np.ndarray:
    return (rng.choice(_STEPS, size=size) / 4).astype(np.float32)


def _fine(rng: np.random.Generator, size: int, signed: bool = True) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size (13 significant bits)."""
    signs = rng.choice([-1, 1], size) if signed else 1
    return (rng.choice(np.arange(4097, 8192, 2), size) * signs / 4096).astype(np.float32)


def _jumps(values: np.ndarray, size: int) -> np.ndarray:
    """One value per warp: each warp's first value, repeated over the warp."""
    return np.repeat(values[::WARP][: -(-size // WARP)], WARP)[:size].astype(np.float32)


TPB = 128

# The special points each case is there for, by part (the sizes' are the same in the
# difference and moving_average parts, but what the end means differs).
_POINTS = {
    "difference": {"2 elements": ("smallest",), "one warp, 32": ("data_ends_at_warp_end",),
                   "33 elements": ("output_ends_at_lane_31",), "34 elements": ("last_element_in_next_warp",),
                   "jumps at warp edges, 256": ("changes_only_at_top_lanes", "equal_neighbours"),
                   "one block and 1, 129": ("partial_block",), "133 blocks, 17000": ("more_blocks_than_threads",)},
    "moving_average": {"3 elements": ("smallest",), "one warp, 32": ("data_ends_at_warp_end",),
                       "33 elements": ("output_ends_at_lane_30",), "34 elements": ("output_ends_at_lane_31",),
                       "jumps at warp edges, 256": ("changes_only_at_top_lanes", "equal_neighbours"),
                       "one block and 1, 129": ("partial_block",),
                       "133 blocks, 17000": ("more_blocks_than_threads",)},
    "broadcast": {"1 element": ("one_element",), "43 elements, last warp of 11": ("partial_last_warp",),
                  "one high lane per warp, 256": ("one_lane_differs",),
                  "one block and 1, 129": ("warp_of_one_in_next_block", "partial_block"),
                  "133 blocks, 17000": ("more_blocks_than_threads",)},
}


def _case(name: str, ko: str, a: np.ndarray, seeded: bool = False, part: str = "") -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)},
            "inputs": {"a": a}, "seeded": seeded, "special": _POINTS.get(part, {}).get(name, ())}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    if part == "broadcast":
        draw = lambda size: _fine(rng, size, signed=False)  # noqa: E731
        high = np.ones(256, dtype=np.float32)
        high[np.arange(0, 256, WARP) + rng.permutation(WARP)[:8]] = 2
        first = [_case("1 element", "원소 1개", draw(1), part=part),
                 _case("one warp, 32", "워프 하나, 32", draw(32), part=part),
                 _case("43 elements, last warp of 11", "원소 43개, 마지막 워프는 11개", draw(43), part=part),
                 _case("one high lane per warp, 256", "워프마다 높은 레인 하나, 256", high, part=part)]
    else:
        draw = (lambda size: _quarters(rng, size)) if part == "difference" else (lambda size: _fine(rng, size))
        smallest = 2 if part == "difference" else 3
        first = [_case(f"{smallest} elements", f"원소 {smallest}개", draw(smallest), part=part),
                 _case("one warp, 32", "워프 하나, 32", draw(32), part=part),
                 _case("33 elements", "원소 33개", draw(33), part=part),
                 _case("34 elements", "원소 34개", draw(34), part=part),
                 _case("jumps at warp edges, 256", "워프 경계에서 뛰는 값, 256", _jumps(draw(256), 256), part=part)]
    out = first + [_case("full block, 128", "꽉 찬 블록, 128", draw(128), part=part),
                   _case("one block and 1, 129", "블록 하나와 1개, 129", draw(129), part=part),
                   _case("133 blocks, 17000", "블록 133개, 17000", draw(17000), part=part)]
    if part == "difference":
        out.append(_case("finer than 16 bits, 300", "16비트보다 정밀한 값, 300", _fine(rng, 300)))
    out.append(_case(f"random size {n}", f"무작위 크기 {n}", draw(n), seeded=True))
    return out


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    if part == "difference":
        return {"output": a[1:] - a[:-1]}
    if part == "moving_average":
        return {"output": (a[:-2] + a[1:-1] + a[2:]) / 3}
    warps = -(-a.size // WARP)
    means = np.array([a[w * WARP:(w + 1) * WARP].mean() for w in range(warps)])
    return {"output": a - np.repeat(means, WARP)[:a.size]}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = np.asarray(case["inputs"]["a"], dtype=np.float64)
    size = a.size
    blocks = -(-size // TPB)
    found = set()
    if blocks > 1 and size % TPB:
        found.add("partial_block")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if part == "broadcast":
        if size == 1:
            found.add("one_element")
        elif size % WARP == 1 and blocks > 1:
            found.add("warp_of_one_in_next_block")
        elif size % WARP:
            found.add("partial_last_warp")
        warps = [a[w:w + WARP] for w in range(0, size - size % WARP, WARP)]
        if warps and all(np.count_nonzero(w != np.median(w)) == 1 for w in warps):
            found.add("one_lane_differs")
        return found
    reach = 1 if part == "difference" else 2  # how far up a window reaches
    if size == reach + 1:
        found.add("smallest")
    if size > WARP:
        last_output = size - reach - 1
        if size % WARP == 0:
            found.add("data_ends_at_warp_end")
        elif last_output % WARP == WARP - 1:
            found.add("output_ends_at_lane_31")
        elif last_output % WARP == WARP - 2:
            found.add("output_ends_at_lane_30")
        elif part == "difference" and size % WARP == 2:
            found.add("last_element_in_next_warp")
    elif size == WARP:
        found.add("data_ends_at_warp_end")
    windows = np.array([a[i:size - reach + i] for i in range(reach + 1)])
    changes = np.any(windows != windows[0], axis=0)  # a window whose values are not all equal
    if np.any(~changes):
        found.add("equal_neighbours")
    top = np.arange(size - reach) % WARP >= WARP - reach
    if np.any(changes) and not np.any(changes & ~top):
        found.add("changes_only_at_top_lanes")
    return found
