"""Inputs and expected results for puzzle 27 (block-wide patterns).

Three parts, each one block of 128 threads over 128 float32 values:

- sum:        dot = sum(a * b)                      inputs a, b          outputs dot[1]
- prefix_sum: the values of x whose bin is the      inputs x,            outputs packed[128],
              target bin, packed in their original         target_bin       count[1]
              order, then zeros; and how many             (int32[1])
- broadcast:  normalized = x / mean(x)              inputs x             outputs normalized

Part prefix_sum: bin(v) = floor(v * NUM_BINS) clamped to 0..NUM_BINS-1, for v
in [0, 1). `packed` is fully defined: its first `count` entries are the
matching values in the order they appear in x, the rest are 0 (the kernel
writes the zeros; the op fills the output with NaN first, so every entry is
checked). `count` is a float32 holding a whole number.

The cases aim at the usual block-level bugs: a thread left out of the
reduction (the last element carries the answer), values exactly on a bin
edge, an empty bin and a full bin, and a mean that is not 1. Part sum's
'finer than 16 bits' case makes every product 1.1, off the float16 and
bfloat16 grids in the same direction each time: a product or a sum kept in
16 bits fails it on every seed (random normal values alone let a float16
product through on about one seed in 800); part broadcast's has the mean
1.1, off those grids too (a float16 mean: about once in 20000 seeds).

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`), each with a case named for it: part sum, every product
1, a sum below 0, every product 0 but the last thread's, products that
cancel to exactly 0; part prefix_sum, values exactly on every bin edge and
just below each (the floor's edges; 0 and the float32 below 1 are the ends
of the clamp's range), an empty target bin (no thread's flag is 1), a bin
that holds all 128 (every flag is 1, no tail of zeros), and a match in the
last thread only; part broadcast, a mean far from the placeholder 1 that
threads other than 0 hold before the broadcast, one value at the last
thread that moves the mean, and values spread over three orders of
magnitude. The flags of part prefix_sum are 0 or 1, so its prefixes are
never below 0: there is no negative prefix to test.
"""

import numpy as np

SIZE = 128
NUM_BINS = 8
PARAMS = {"size": SIZE}


def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _bins(x: np.ndarray) -> np.ndarray:
    # x * 8 is exact in float32 and float64 alike (a power of two), so these
    # bins agree with the kernel's bit for bit.
    return np.clip(np.floor(x.astype(np.float64) * NUM_BINS), 0, NUM_BINS - 1).astype(np.int64)


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------


def _named(names: tuple[str, str], *special: str) -> dict:
    """A case's name (English, used as its id), its label in both languages, and the special
    points it is there for."""
    en, ko = names
    return {"name": en, "label": {"en": en, "ko": ko}, "special": special}


def _sum_cases(rng: np.random.Generator) -> list[dict]:
    def case(names, a, b, *special):
        return {**_named(names, *special), "params": PARAMS, "inputs": {"a": _f32(a), "b": _f32(b)}}

    idx = np.arange(SIZE)
    last_only = np.zeros(SIZE)
    last_only[-1] = 1.0
    halves = rng.uniform(-1.0, 1.0, size=SIZE // 2)
    return [
        case(("random normal", "정규분포 난수"), rng.normal(size=SIZE), rng.normal(size=SIZE)),
        case(("ones (every thread counts)", "모두 1 (모든 스레드가 더해져야 함)"), np.ones(SIZE), np.ones(SIZE),
             "every_product_one"),
        case(("1..8 times alternating signs (exact: -64)", "1..8 곱하기 번갈아 바뀌는 부호 (정확히 -64)"), idx % 8 + 1,
             np.where(idx % 2 == 0, 1.0, -1.0), "sum_below_zero"),
        case(("only the last pair is nonzero", "마지막 쌍만 0이 아님"), rng.uniform(1.0, 2.0, size=SIZE), last_only,
             "only_last_product"),
        case(("large positive", "큰 양수"), rng.uniform(100.0, 1000.0, size=SIZE), rng.uniform(1.0, 10.0, size=SIZE)),
        case(("cancels to 0", "합이 0으로 상쇄됨"), np.concatenate([halves, halves]),
             np.concatenate([np.ones(SIZE // 2), -np.ones(SIZE // 2)]), "sum_cancels_to_zero"),
        # Every product is 1.1, which float16 rounds 3.9e-4 down and bfloat16 1.6e-3 up: the
        # same error 128 times, 30 times the tolerance whatever the seed ('random normal'
        # lets a 16-bit product through on about one seed in 800).
        case(("finer than 16 bits: 1.1 times 1", "16비트보다 정밀한 값: 1.1 곱하기 1"), np.full(SIZE, 1.1),
             np.ones(SIZE)),
    ]


def _bin_edges(rng: np.random.Generator) -> np.ndarray:
    """Every bin edge k/8 and the float32 just below it, plus 0 and the float32 just below 1."""
    edges = _f32(np.arange(NUM_BINS) / NUM_BINS)
    below = np.nextafter(edges[1:], np.float32(0))
    special = _f32([0.0, np.nextafter(np.float32(1), np.float32(0))])
    base = np.concatenate([edges, below, special])
    x = np.resize(base, SIZE)  # repeat the pattern to fill 128 values
    return x[rng.permutation(SIZE)]


def _prefix_sum_cases(rng: np.random.Generator) -> list[dict]:
    def case(names, x, target, *special):
        return {**_named(names, *special), "params": PARAMS,
                "inputs": {"x": _f32(x), "target_bin": np.array([target], dtype=np.int32)}}

    uniform = rng.uniform(0.0, 1.0, size=SIZE)
    edges = _bin_edges(rng)
    full = rng.uniform(3 / NUM_BINS, 4 / NUM_BINS, size=SIZE)
    no_five = rng.uniform(0.0, 1.0, size=SIZE)
    no_five[_bins(_f32(no_five)) == 5] = 0.25
    last_only = rng.uniform(0.0, 1 / NUM_BINS, size=SIZE)
    last_only[-1] = 0.9
    cases = [case((f"uniform, bin {k}", f"균등분포, 구간 {k}"), uniform, k) for k in range(NUM_BINS)]
    cases += [case((f"values on bin edges, bin {k}", f"구간 경계의 값, 구간 {k}"), edges, k, "values_on_bin_edges")
              for k in range(NUM_BINS)]
    cases += [
        case(("every value in bin 3", "모든 값이 구간 3에"), full, 3, "every_flag_one"),
        case(("empty bin 5", "빈 구간 5"), no_five, 5, "no_flag_one"),
        case(("only the last value in bin 7", "마지막 값만 구간 7에"), last_only, 7, "only_last_flag"),
    ]
    return cases


def _broadcast_cases(rng: np.random.Generator) -> list[dict]:
    def case(names, x, *special):
        return {**_named(names, *special), "params": PARAMS, "inputs": {"x": _f32(x)}}

    outlier = np.ones(SIZE)
    outlier[-1] = 1000.0
    return [
        case(("1..8 repeating (mean 4.5)", "1..8 반복 (평균 4.5)"), np.arange(SIZE) % 8 + 1, "mean_far_from_one"),
        case(("random positive", "양수 난수"), rng.uniform(0.5, 2.0, size=SIZE)),
        case(("wide range (log-normal)", "넓은 범위 (로그 정규분포)"), rng.lognormal(0.0, 2.0, size=SIZE), "wide_range"),
        case(("one outlier at the end", "맨 끝에 이상값 하나"), outlier, "last_value_moves_mean"),
        case(("large values", "큰 값"), rng.uniform(1e4, 1e5, size=SIZE)),
        # 0.75, 0.85, ..., 1.45 repeating: the mean 1.1 is off the float16 grid by 3.9e-4 of
        # itself, 39 times rtol, on every seed (the other unseeded means, 4.5 and 8.8046875,
        # are on it, and the seeded ones let a float16 mean through about once in 20000 seeds).
        case(("finer than 16 bits: mean 1.1", "16비트보다 정밀한 값: 평균 1.1"), 0.75 + 0.1 * (np.arange(SIZE) % 8)),
    ]


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "sum":
        return _sum_cases(rng)
    if part == "prefix_sum":
        return _prefix_sum_cases(rng)
    if part == "broadcast":
        return _broadcast_cases(rng)
    raise ValueError(f"puzzle 27 has no part '{part}'")


# ---------------------------------------------------------------------------
# expected outputs (float64)
# ---------------------------------------------------------------------------


def _packed(x: np.ndarray, target: int) -> tuple[np.ndarray, int]:
    matches = x.astype(np.float64)[_bins(x) == target]
    packed = np.zeros(SIZE, dtype=np.float64)
    packed[: len(matches)] = matches
    return packed, len(matches)


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    inputs = case["inputs"]
    if part == "sum":
        a = inputs["a"].astype(np.float64)
        b = inputs["b"].astype(np.float64)
        return {"dot": np.array([np.dot(a, b)])}
    if part == "prefix_sum":
        packed, count = _packed(inputs["x"], int(inputs["target_bin"][0]))
        return {"packed": packed, "count": np.array([float(count)])}
    if part == "broadcast":
        x = inputs["x"].astype(np.float64)
        return {"normalized": x / x.mean()}
    raise ValueError(f"puzzle 27 has no part '{part}'")


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    inputs = case["inputs"]
    found = set()
    if part == "sum":
        products = inputs["a"].astype(np.float64) * inputs["b"].astype(np.float64)
        if np.all(products == 1):
            found.add("every_product_one")
        if products.sum() < 0:
            found.add("sum_below_zero")
        if np.all(products[:-1] == 0) and products[-1] != 0:
            found.add("only_last_product")
        if products.sum() == 0 and np.any(products != 0):
            found.add("sum_cancels_to_zero")
        return found
    if part == "prefix_sum":
        x = inputs["x"]
        flags = _bins(x) == int(inputs["target_bin"][0])
        scaled = x.astype(np.float64) * NUM_BINS
        edges = np.arange(NUM_BINS, dtype=np.float32) / NUM_BINS
        below = np.nextafter(np.append(edges[1:], np.float32(1)), np.float32(0))
        if np.all(np.isin(edges, x)) and np.all(np.isin(below, x)) and np.any(scaled == np.floor(scaled)):
            found.add("values_on_bin_edges")
        if flags.all():
            found.add("every_flag_one")
        if not flags.any():
            found.add("no_flag_one")
        if flags[-1] and not flags[:-1].any():
            found.add("only_last_flag")
        return found
    x = inputs["x"].astype(np.float64)
    if abs(x.mean() - 1) > 1:
        found.add("mean_far_from_one")
    if x[-1] - x[:-1].max() > x.mean():
        found.add("last_value_moves_mean")
    if x.max() > 1e3 * x.min():
        found.add("wide_range")
    return found


# ---------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str) -> list[tuple[dict, bool, str]]:
    if part == "broadcast":
        mean = float(np.mean(np.asarray(outputs["normalized"], dtype=np.float64)))
        ok = bool(np.isfinite(mean) and abs(mean - 1.0) <= 1e-5)
        return [({"en": "output mean is 1", "ko": "출력의 평균이 1"}, ok, f"mean = {mean:.7f}")]
    if part == "prefix_sum":
        x = case["inputs"]["x"]
        _, want = _packed(x, int(case["inputs"]["target_bin"][0]))
        got_count = float(np.asarray(outputs["count"]).reshape(-1)[0])
        count_ok = bool(np.isfinite(got_count) and got_count == want)
        packed = np.asarray(outputs["packed"], dtype=np.float64).reshape(-1)
        in_order = x.astype(np.float64)[_bins(x) == int(case["inputs"]["target_bin"][0])]
        head = packed[:want]
        order_ok = bool(np.array_equal(head, in_order))
        if order_ok:
            detail = f"the {want} matches appear in their original order"
        elif np.array_equal(np.sort(head), np.sort(in_order)):
            detail = "the right values, in the wrong order"
        else:
            wrong = int(np.sum(head != in_order))
            detail = f"{wrong} of the first {want} entries are not the matches in order"
        return [
            ({"en": "count equals NumPy's count", "ko": "count가 NumPy의 개수와 같음"}, count_ok,
             f"count = {got_count:g}, NumPy: {want}"),
            ({"en": "packed keeps the original order", "ko": "packed가 원래 순서를 지킴"}, order_ok, detail),
        ]
    return []
