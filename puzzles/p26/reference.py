"""Puzzle 26 reference: butterflies, warp scans, a one-warp partition.

- butterfly: maxes[w], mins[w] = the largest and smallest of warp w's values
  (elements 32*w .. 32*w + 31 that exist), in blocks of 128 threads;
- scan: output[i] = a[32*w] + ... + a[i] for i's warp w, and totals[w] the
  sum of warp w's values;
- partition: one warp, at most 32 values: the values below pivot[0] first,
  then the others, each group in its order in a (a stable partition).

Which input makes each term decide the answer:
- butterfly: 'the maximum in lane 31' puts each warp's maximum in its last
  lane and its minimum in lane 0 (lane 0, which writes, must hear from lane
  31: a butterfly that skips a round, or stops one early, never does);
  'maximum in a random lane' moves it; 'all negative, 100' and 'all
  positive, 100' end in a partial warp, where lanes past the end that bring
  0 instead of -inf (+inf) win the maximum (minimum);
- scan: 'ones, 96' makes the inclusive scan 1, 2, ..., 32 (an exclusive one
  0, 1, ..., 31) and every total 32; 'only lane 0 is not 0' gives every
  output the same value but lane 0's an exclusive scan makes 0; '100
  elements' ends in a warp of 4, whose total sits in lane 31 (after the
  zeros past the end: lane 0 holds only a[96]);
- partition: 'ties with the pivot' holds the pivot itself several times:
  they go after the lows (v < pivot, not <=); '9 values, pivot above 0'
  leaves 23 lanes without a value, which must not count as low (their 0 is
  below the pivot); 'none below' and 'all below' put the whole warp on one
  side; 'mixed, 32' fills the warp; an exclusive scan where the inclusive
  one is used puts every low value one place too late;
- scan: 'prefix sums below zero, a warp total of 0, 64' has a warp of
  negative values only (every prefix falls below the one before) and a warp
  whose values cancel to exactly 0: a total written only where it is not 0
  stays NaN there (tests/wrong/p26/skips_zero_total; before this case only a
  random warp of '133 blocks, 17000' that happened to cancel caught it);
- blocks: 17000 elements (133 blocks, more than a block has threads) and a
  size drawn from the seed among a few ("random size n");
- float32, not 16 bits: odd multiples of 2^-12 between 1 and 2 in size.

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above, each with a case named for it. No case
goes past 2^16 elements: the index i is given code, computed in Int.
"""

import numpy as np

_STEPS = np.concatenate([np.arange(-16, 0), np.arange(1, 17)])  # 4 * the values
WARP = 32
SEEDED_SIZES = (60, 300, 1000, 5000, 9000)


def _quarters(rng: np.random.Generator, size: int) -> np.ndarray:
    return (rng.choice(_STEPS, size=size) / 4).astype(np.float32)


def _fine(rng: np.random.Generator, size: int, signs=(-1, 1)) -> np.ndarray:
    """Odd multiples of 2^-12 between 1 and 2 in size (13 significant bits)."""
    return (rng.choice(np.arange(4097, 8192, 2), size) * rng.choice(signs, size) / 4096).astype(np.float32)


TPB = 128


def _case(name: str, ko: str, inputs: dict, seeded: bool = False, special: tuple = ()) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(inputs["a"].size)},
            "inputs": inputs, "seeded": seeded, "special": special}


def _extreme_lanes(rng: np.random.Generator, size: int, top: bool) -> np.ndarray:
    """Each warp's maximum in lane 31 and minimum in lane 0 (top), or both in random lanes
    between (never lane 0 or the last: the ends are the other case's)."""
    a = _fine(rng, size)
    for w in range(0, size, WARP):
        lanes = min(WARP, size - w)
        hi, lo = (lanes - 1, 0) if top else tuple(rng.choice(np.arange(1, lanes - 1), 2, replace=False))
        a[w + hi], a[w + lo] = np.float32(2.5 + rng.integers(0, 8) / 4096), np.float32(-2.5 - rng.integers(0, 8) / 4096)
    return a


def _butterfly(rng: np.random.Generator) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    return [_case("1 element", "원소 1개", {"a": _fine(rng, 1)}, special=("warp_of_one",)),
            _case("the maximum in lane 31, 256", "최댓값이 레인 31에, 256", {"a": _extreme_lanes(rng, 256, True)},
                  special=("extremes_at_both_ends",)),
            _case("maximum in a random lane, 256", "최댓값이 아무 레인에, 256", {"a": _extreme_lanes(rng, 256, False)},
                  special=("extremes_inside",)),
            _case("all negative, 100", "모두 음수, 100", {"a": _fine(rng, 100, (-1,))},
                  special=("partial_warp_all_negative",)),
            _case("all positive, 100", "모두 양수, 100", {"a": _fine(rng, 100, (1,))},
                  special=("partial_warp_all_positive",)),
            _case("one block and 1, 129", "블록 하나와 1개, 129", {"a": _fine(rng, 129)},
                  special=("partial_block", "warp_of_one")),
            _case("133 blocks, 17000", "블록 133개, 17000", {"a": _fine(rng, 17000)},
                  special=("more_blocks_than_threads",)),
            _case(f"random size {n}", f"무작위 크기 {n}", {"a": _fine(rng, n)}, seeded=True)]


def _scan(rng: np.random.Generator) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    lane0 = np.zeros(128, dtype=np.float32)
    lane0[::WARP] = _quarters(rng, 4)
    # Warp 0 negative only; warp 1 sixteen values and their negatives, shuffled: its total is 0.
    half = _quarters(rng, WARP // 2)
    falling = np.concatenate([-np.abs(_quarters(rng, WARP)), rng.permutation(np.concatenate([half, -half]))])
    return [_case("1 element", "원소 1개", {"a": _quarters(rng, 1)}, special=("warp_of_one",)),
            _case("ones, 96", "모두 1, 96", {"a": np.ones(96, dtype=np.float32)}, special=("all_ones",)),
            _case("only lane 0 is not 0, 128", "레인 0만 0이 아님, 128", {"a": lane0}, special=("only_lane_0",)),
            _case("100 elements, last warp of 4", "원소 100개, 마지막 워프는 4개", {"a": _quarters(rng, 100)},
                  special=("partial_last_warp",)),
            _case("prefix sums below zero, a warp total of 0, 64", "0 아래로 내려가는 누적 합, 합계가 0인 워프, 64",
                  {"a": falling.astype(np.float32)}, special=("prefixes_below_zero", "warp_total_zero")),
            _case("one block and 1, 129", "블록 하나와 1개, 129", {"a": _quarters(rng, 129)},
                  special=("partial_block", "warp_of_one")),
            _case("133 blocks, 17000", "블록 133개, 17000", {"a": _quarters(rng, 17000)},
                  special=("more_blocks_than_threads",)),
            _case("finer than 16 bits, 300", "16비트보다 정밀한 값, 300", {"a": _fine(rng, 300)}),
            _case(f"random size {n}", f"무작위 크기 {n}", {"a": _quarters(rng, n)}, seeded=True)]


def _partition(rng: np.random.Generator) -> list[dict]:
    def with_pivot(a: np.ndarray, p: float) -> dict:
        return {"a": a.astype(np.float32), "pivot": np.array([p], dtype=np.float32)}

    ties = _fine(rng, 20)
    p = float(ties[3])
    ties[rng.choice(20, 5, replace=False)] = p
    nine = _fine(rng, 9, (1,))
    mixed = _fine(rng, 32)
    return [_case("1 value", "값 1개", with_pivot(_fine(rng, 1), 0.0), special=("one_value",)),
            _case("ties with the pivot, 20", "피벗과 같은 값들, 20", with_pivot(ties, p), special=("ties_with_pivot",)),
            _case("9 values, pivot above 0", "값 9개, 0보다 큰 피벗", with_pivot(nine, float(np.median(nine))),
                  special=("lanes_without_value_below_pivot",)),
            _case("none below, 32", "작은 값 없음, 32", with_pivot(_fine(rng, 32, (1,)), 0.5), special=("no_lane_low",)),
            _case("all below, 32", "모두 작은 값, 32", with_pivot(_fine(rng, 32, (-1,)), 0.5),
                  special=("every_lane_low",)),
            _case("mixed, 32", "섞인 값, 32", with_pivot(mixed, float(np.median(mixed[:7]))),
                  special=("full_warp_mixed",))]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    return {"butterfly": _butterfly, "scan": _scan, "partition": _partition}[part](rng)


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    warps = -(-a.size // WARP)
    groups = [a[w * WARP:(w + 1) * WARP] for w in range(warps)]
    if part == "butterfly":
        return {"maxes": np.array([g.max() for g in groups]), "mins": np.array([g.min() for g in groups])}
    if part == "scan":
        return {"output": np.concatenate([np.cumsum(g) for g in groups]),
                "totals": np.array([g.sum() for g in groups])}
    p = float(case["inputs"]["pivot"][0])
    return {"output": np.concatenate([a[a < p], a[~(a < p)]])}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = np.asarray(case["inputs"]["a"], dtype=np.float64)
    size = a.size
    warps = [a[w:w + WARP] for w in range(0, size, WARP)]
    found = set()
    if part == "partition":
        p = float(case["inputs"]["pivot"][0])
        low = a < p
        if size == 1:
            found.add("one_value")
        if np.count_nonzero(a == p) > 1:
            found.add("ties_with_pivot")
        if size < WARP and p > 0:
            found.add("lanes_without_value_below_pivot")
        if size == WARP:
            found.add("no_lane_low" if not low.any() else "every_lane_low" if low.all() else "full_warp_mixed")
        return found
    blocks = -(-size // TPB)
    if blocks > 1 and size % TPB:
        found.add("partial_block")
    if blocks > TPB:
        found.add("more_blocks_than_threads")
    if size % WARP == 1:
        found.add("warp_of_one")
    if part == "butterfly":
        full = [w for w in warps if w.size == WARP]
        if full and all(w.argmax() == WARP - 1 and w.argmin() == 0 for w in full):
            found.add("extremes_at_both_ends")
        if full and all(0 < w.argmax() < WARP - 1 and 0 < w.argmin() < WARP - 1 for w in full):
            found.add("extremes_inside")
        last = warps[-1]
        if 1 < last.size < WARP and np.all(last < 0):
            found.add("partial_warp_all_negative")
        if 1 < last.size < WARP and np.all(last > 0):
            found.add("partial_warp_all_positive")
        return found
    if size > 1 and np.all(a == 1):
        found.add("all_ones")
    lanes = np.arange(size) % WARP
    if size >= WARP and np.all(a[lanes != 0] == 0) and np.all(a[lanes == 0] != 0):
        found.add("only_lane_0")
    if 1 < size % WARP:
        found.add("partial_last_warp")
    if any(np.all(np.diff(np.cumsum(w)) < 0) and w[0] < 0 for w in warps if w.size == WARP):
        found.add("prefixes_below_zero")
    if any(w.sum() == 0 and np.any(w != 0) for w in warps):
        found.add("warp_total_zero")
    return found
