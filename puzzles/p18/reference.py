"""Inputs and expected results for puzzle 18 (softmax).

softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), with m = max_j x_j. Which
input makes each term decide the answer:

- `- m` at all: inputs above 88.7, where exp overflows float32 ("large");
- `m` being the true maximum, not a start value such as 0: every input far
  below 0, where exp(x - 0) underflows to 0 for all of them and the sum is
  0 ("all below exp underflow", "all negative");
- `m` covering every element: one element 100 above the rest, at the first,
  an interior and the last position; a maximum that misses it lets
  exp(100) overflow ("spike at the first/middle/end");
- the sum covering every element, and the division: ties and a wide spread
  make every term count ("ties", "wide spread", "random normal").
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): exp overflowing, every exp underflowing, a maximum below
0, a lone maximum at the first, an inside and the last position, and a
maximum reached by several elements; each has a case named for it.
The GPU kernel runs one block of 128 threads over the 128 values, so every
case is also the largest launch (racecheck and the simulator see all of them).
The size is the op's (SIZE = 128, fixed_size in the manifest). Exps or sums
kept in 16 bits are caught by "ties" on every seed (120 exps of exp(-4.5), off
the 16-bit grids, summed to about 9.3: about 3 times rtol off), by "random
normal" on some seeds only (tests/wrong/p18/shared_in_float16). The text asks for tree reductions: one thread
going through all 128 slots gets the same answer, and breaks the part's
access budget (at most 34 shared reads per thread) on the simulator.
"""

import numpy as np
from scipy.special import softmax

SIZE = 128
# exp(x) overflows float32 above log(FLT_MAX) and is 0 below log of the smallest subnormal.
EXP_OVERFLOW = 88.72
EXP_UNDERFLOW = -103.3


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    params = {"size": SIZE}

    def case(name: str, korean: str, x: np.ndarray, *special: str) -> dict:
        return {"name": name, "label": {"en": name, "ko": korean}, "params": params,
                "inputs": {"x": x.astype(np.float32)}, "special": special}

    ties = np.full(SIZE, 3.0)
    ties[rng.choice(SIZE, 8, replace=False)] = 7.5

    def spike(position: int) -> np.ndarray:
        x = rng.normal(size=SIZE)
        x[position] = 100.0
        return x

    return [
        case("random normal", "정규분포 난수", rng.normal(size=SIZE)),
        case("large (exp overflows)", "큰 값 (exp 오버플로)", rng.uniform(80.0, 120.0, size=SIZE), "exp_overflows"),
        case("all negative", "모두 음수", rng.uniform(-120.0, -60.0, size=SIZE), "max_below_zero"),
        case("all below exp underflow", "모두 exp 언더플로 아래", rng.uniform(-250.0, -150.0, size=SIZE),
             "all_exp_underflow"),
        case("spike at the first", "맨 앞에 튀는 값", spike(0), "max_at_first"),
        case("spike in the middle", "가운데에 튀는 값", spike(77), "max_inside"),
        case("spike at the end", "맨 끝에 튀는 값", spike(SIZE - 1), "max_at_last"),
        case("ties", "같은 값 여럿", ties, "tied_maximum"),
        case("wide spread", "넓은 범위", rng.uniform(-30.0, 30.0, size=SIZE)),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    return {"y": softmax(case["inputs"]["x"].astype(np.float64))}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    x = case["inputs"]["x"].astype(np.float64)
    top = int(np.argmax(x))
    found = set()
    if x.max() > EXP_OVERFLOW:
        found.add("exp_overflows")
    if x.max() < EXP_UNDERFLOW:
        found.add("all_exp_underflow")
    if x.max() < 0:
        found.add("max_below_zero")
    if np.count_nonzero(x == x.max()) > 1:
        found.add("tied_maximum")
    elif x.max() - np.delete(x, top).max() > EXP_OVERFLOW:  # a lone maximum, far above the rest
        found.add("max_at_first" if top == 0 else "max_at_last" if top == x.size - 1 else "max_inside")
    return found


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str) -> list[tuple[str, bool, str]]:
    total = float(np.sum(outputs["y"], dtype=np.float64))
    label = {"en": "probabilities sum to 1", "ko": "확률의 합이 1"}
    return [(label, bool(abs(total - 1.0) <= 1e-4), f"{total:.7f}")]
