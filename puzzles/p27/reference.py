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
edge, an empty bin and a full bin, and a mean that is not 1.
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


def _named(names: tuple[str, str]) -> dict:
    """A case's name (English, used as its id) and its label in both languages."""
    en, ko = names
    return {"name": en, "label": {"en": en, "ko": ko}}


def _sum_cases(rng: np.random.Generator) -> list[dict]:
    def case(names, a, b):
        return {**_named(names), "params": PARAMS, "inputs": {"a": _f32(a), "b": _f32(b)}}

    idx = np.arange(SIZE)
    last_only = np.zeros(SIZE)
    last_only[-1] = 1.0
    halves = rng.uniform(-1.0, 1.0, size=SIZE // 2)
    return [
        case(("random normal", "정규분포 난수"), rng.normal(size=SIZE), rng.normal(size=SIZE)),
        case(("ones (every thread counts)", "모두 1 (모든 스레드가 더해져야 함)"), np.ones(SIZE), np.ones(SIZE)),
        case(("1..8 times alternating signs (exact: -64)", "1..8 곱하기 번갈아 바뀌는 부호 (정확히 -64)"), idx % 8 + 1, np.where(idx % 2 == 0, 1.0, -1.0)),
        case(("only the last pair is nonzero", "마지막 쌍만 0이 아님"), rng.uniform(1.0, 2.0, size=SIZE), last_only),
        case(("large positive", "큰 양수"), rng.uniform(100.0, 1000.0, size=SIZE), rng.uniform(1.0, 10.0, size=SIZE)),
        case(("cancels to 0", "합이 0으로 상쇄됨"), np.concatenate([halves, halves]),
             np.concatenate([np.ones(SIZE // 2), -np.ones(SIZE // 2)])),
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
    def case(names, x, target):
        return {**_named(names), "params": PARAMS,
                "inputs": {"x": _f32(x), "target_bin": np.array([target], dtype=np.int32)}}

    uniform = rng.uniform(0.0, 1.0, size=SIZE)
    edges = _bin_edges(rng)
    full = rng.uniform(3 / NUM_BINS, 4 / NUM_BINS, size=SIZE)
    no_five = rng.uniform(0.0, 1.0, size=SIZE)
    no_five[_bins(_f32(no_five)) == 5] = 0.25
    last_only = rng.uniform(0.0, 1 / NUM_BINS, size=SIZE)
    last_only[-1] = 0.9
    cases = [case((f"uniform, bin {k}", f"균등분포, 구간 {k}"), uniform, k) for k in range(NUM_BINS)]
    cases += [case((f"values on bin edges, bin {k}", f"구간 경계의 값, 구간 {k}"), edges, k) for k in range(NUM_BINS)]
    cases += [
        case(("every value in bin 3", "모든 값이 구간 3에"), full, 3),
        case(("empty bin 5", "빈 구간 5"), no_five, 5),
        case(("only the last value in bin 7", "마지막 값만 구간 7에"), last_only, 7),
    ]
    return cases


def _broadcast_cases(rng: np.random.Generator) -> list[dict]:
    def case(names, x):
        return {**_named(names), "params": PARAMS, "inputs": {"x": _f32(x)}}

    outlier = np.ones(SIZE)
    outlier[-1] = 1000.0
    return [
        case(("1..8 repeating (mean 4.5)", "1..8 반복 (평균 4.5)"), np.arange(SIZE) % 8 + 1),
        case(("random positive", "양수 난수"), rng.uniform(0.5, 2.0, size=SIZE)),
        case(("wide range (log-normal)", "넓은 범위 (로그 정규분포)"), rng.lognormal(0.0, 2.0, size=SIZE)),
        case(("one outlier at the end", "맨 끝에 이상값 하나"), outlier),
        case(("large values", "큰 값"), rng.uniform(1e4, 1e5, size=SIZE)),
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
