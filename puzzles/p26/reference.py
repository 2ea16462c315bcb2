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
- blocks: 17000 elements (133 blocks, more than a block has threads) and a
  size drawn from the seed among a few ("random size n");
- float32, not 16 bits: odd multiples of 2^-12 between 1 and 2 in size.
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


def _case(name: str, ko: str, inputs: dict, seeded: bool = False) -> dict:
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(inputs["a"].size)},
            "inputs": inputs, "seeded": seeded}


def _extreme_lanes(rng: np.random.Generator, size: int, top: bool) -> np.ndarray:
    """Each warp's maximum in lane 31 and minimum in lane 0 (top), or both in random lanes."""
    a = _fine(rng, size)
    for w in range(0, size, WARP):
        lanes = min(WARP, size - w)
        hi, lo = (lanes - 1, 0) if top else tuple(rng.choice(lanes, 2, replace=False))
        a[w + hi], a[w + lo] = np.float32(2.5 + rng.integers(0, 8) / 4096), np.float32(-2.5 - rng.integers(0, 8) / 4096)
    return a


def _butterfly(rng: np.random.Generator) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    return [_case("1 element", "원소 1개", {"a": _fine(rng, 1)}),
            _case("the maximum in lane 31, 256", "최댓값이 레인 31에, 256", {"a": _extreme_lanes(rng, 256, True)}),
            _case("maximum in a random lane, 256", "최댓값이 아무 레인에, 256", {"a": _extreme_lanes(rng, 256, False)}),
            _case("all negative, 100", "모두 음수, 100", {"a": _fine(rng, 100, (-1,))}),
            _case("all positive, 100", "모두 양수, 100", {"a": _fine(rng, 100, (1,))}),
            _case("one block and 1, 129", "블록 하나와 1개, 129", {"a": _fine(rng, 129)}),
            _case("133 blocks, 17000", "블록 133개, 17000", {"a": _fine(rng, 17000)}),
            _case(f"random size {n}", f"무작위 크기 {n}", {"a": _fine(rng, n)}, seeded=True)]


def _scan(rng: np.random.Generator) -> list[dict]:
    n = int(rng.choice(SEEDED_SIZES))
    lane0 = np.zeros(128, dtype=np.float32)
    lane0[::WARP] = _quarters(rng, 4)
    return [_case("1 element", "원소 1개", {"a": _quarters(rng, 1)}),
            _case("ones, 96", "모두 1, 96", {"a": np.ones(96, dtype=np.float32)}),
            _case("only lane 0 is not 0, 128", "레인 0만 0이 아님, 128", {"a": lane0}),
            _case("100 elements, last warp of 4", "원소 100개, 마지막 워프는 4개", {"a": _quarters(rng, 100)}),
            _case("one block and 1, 129", "블록 하나와 1개, 129", {"a": _quarters(rng, 129)}),
            _case("133 blocks, 17000", "블록 133개, 17000", {"a": _quarters(rng, 17000)}),
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
    return [_case("1 value", "값 1개", with_pivot(_fine(rng, 1), 0.0)),
            _case("ties with the pivot, 20", "피벗과 같은 값들, 20", with_pivot(ties, p)),
            _case("9 values, pivot above 0", "값 9개, 0보다 큰 피벗", with_pivot(nine, float(np.median(nine)))),
            _case("none below, 32", "작은 값 없음, 32", with_pivot(_fine(rng, 32, (1,)), 0.5)),
            _case("all below, 32", "모두 작은 값, 32", with_pivot(_fine(rng, 32, (-1,)), 0.5)),
            _case("mixed, 32", "섞인 값, 32", with_pivot(mixed, float(np.median(mixed[:7]))))]


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
