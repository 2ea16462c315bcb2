"""Inputs and expected results for puzzle 18 (softmax).

The cases are chosen to catch the classic softmax bugs: no max subtraction
(large magnitudes overflow exp), a wrong maximum (all-negative vectors), an
off-by-one (every element matters), and ties.
"""

import numpy as np
from scipy.special import softmax

SIZE = 128


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    params = {"size": SIZE}

    def case(name: str, korean: str, x: np.ndarray) -> dict:
        return {"name": name, "label": {"en": name, "ko": korean}, "params": params,
                "inputs": {"x": x.astype(np.float32)}}

    ties = np.full(SIZE, 3.0)
    ties[rng.choice(SIZE, 8, replace=False)] = 7.5
    last_is_max = rng.normal(size=SIZE)
    last_is_max[-1] = 6.0
    return [
        case("random normal", "정규분포 난수", rng.normal(size=SIZE)),
        case("large (exp overflows)", "큰 값 (exp 오버플로)", rng.uniform(80.0, 120.0, size=SIZE)),
        case("all negative", "모두 음수", rng.uniform(-120.0, -60.0, size=SIZE)),
        case("ties", "같은 값 여럿", ties),
        case("max at the end", "최댓값이 맨 끝", last_is_max),
        case("wide spread", "넓은 범위", rng.uniform(-30.0, 30.0, size=SIZE)),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    return {"y": softmax(case["inputs"]["x"].astype(np.float64))}


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str) -> list[tuple[str, bool, str]]:
    total = float(np.sum(outputs["y"], dtype=np.float64))
    label = {"en": "probabilities sum to 1", "ko": "확률의 합이 1"}
    return [(label, bool(abs(total - 1.0) <= 1e-4), f"{total:.7f}")]
