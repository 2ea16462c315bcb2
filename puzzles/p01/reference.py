"""Puzzle 1 reference: output = a + 10, one thread per element.

Which input makes each part of the kernel decide the answer:
- `a[i]`: values that all differ (an index slip, or reading a[0] everywhere,
  gives the wrong value somewhere), negative ones and zero among them;
- `+ 10`: any value (forgetting it, or adding the thread number, shows);
- `i = thread_idx.x`: the threads are exactly the elements, so a thread that
  writes another's element leaves one unwritten (NaN) and one written twice;
- float32: the sum is computed in float32, as the kernel does, so the check
  can be exact (large values round; the reference rounds the same way).
The block is as wide as the vector: 4 elements as in the text, then sizes
that are not powers of two.
"""

import numpy as np


def _case(name: str, ko: str, values) -> dict:
    a = np.asarray(values, dtype=np.float32)
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a}}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    distinct = rng.permutation(np.arange(-13, 19)).astype(np.float32) * 0.5 + 0.25  # 32 different values
    return [
        _case("4 values", "값 4개", rng.uniform(-5, 5, 4).round(2)),
        _case("32 different values", "서로 다른 값 32개", distinct),
        _case("zeros and negatives, 7 values", "0과 음수, 값 7개", [0.0, -10.0, -0.5, 0.0, -1e-3, -42.0, -10.0]),
        _case("large values round in float32, 13", "float32에서 반올림되는 큰 값, 13개",
              rng.uniform(1e7, 3e7, 13)),
        _case("random, 100 values", "무작위 값 100개", rng.normal(0, 100, 100)),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a + np.float32(10)).astype(np.float64)}
