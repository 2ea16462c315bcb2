"""Puzzle 13 reference: output[i] = sum over j < 4 of a[i+j] * b[j], terms past the end left out.

Part `simple` runs one block of 64 threads (size <= 64); part `blocks` runs
ceildiv(size, 64) blocks, each copying its 64 elements and a halo of the 3
elements after it. Which input makes each term decide the answer:
- each weight b[j]: the four weights differ and none is 0, so reversed
  weights (b[3-j]), a window that runs backwards (a[i-j]) or a weight left
  out changes the sum, already for one element (output[0] = a[0]*b[0]);
- each a[i+j]: no a is 0 and neighbouring values differ;
- the end of a: in every case the last 3 outputs leave terms out; sizes
  below CONV (1, 2, 3 elements) leave out terms for every output, so a
  kernel that reads past the end or computes only full windows fails;
- the halo (part `blocks`): the last 3 outputs of every block but the last
  need the next block's first 3 elements: 'one block and 1, 65' (a halo of
  one element, then the end), '2 blocks and 2, 130' (a last block smaller
  than the halo), '16 blocks, 1000'; a halo copied from the wrong place or
  never copied fails there, and only there;
- the halo past the end: when the last block is full ('one full block, 64',
  '3 full blocks, 192'), its last outputs read the halo slots, which must
  hold 0: an unguarded halo read shows there in the values (and the
  simulator stops at any read past the end of `a`, in every case);
- barrier(): every case has several threads reading slots others wrote;
  '16 blocks, 1000' has the most blocks and threads (64 threads are two
  warps), where a missing barrier is likeliest to show on a real GPU.

Exact comparison: a holds multiples of 1/8 in [-16, 16], b multiples of 1/8
in [-4, 4]: every product and every sum of up to 4 of them is exact in
float32, in any order.
"""

import numpy as np

CONV = 4


def _a(rng: np.random.Generator, size: int) -> np.ndarray:
    steps = np.concatenate([np.arange(-128, 0), np.arange(1, 129)])  # 8 * the values
    return (rng.choice(steps, size=size, replace=size > steps.size) / 8).astype(np.float32)


def _b(rng: np.random.Generator) -> np.ndarray:
    steps = np.concatenate([np.arange(-32, 0), np.arange(1, 33)])
    return (rng.choice(steps, size=CONV, replace=False) / 8).astype(np.float32)


_SIZES = {
    "simple": [
        ("1 element", "원소 1개", 1),
        ("3 elements", "원소 3개", 3),
        ("4 elements, as many as b", "원소 4개, b와 같은 길이", 4),
        ("21 elements", "원소 21개", 21),
        ("one full block, 64", "꽉 찬 블록 하나, 64", 64),
    ],
    "blocks": [
        ("2 elements", "원소 2개", 2),
        ("one full block, 64", "꽉 찬 블록 하나, 64", 64),
        ("one block and 1, 65", "블록 하나와 1개, 65", 65),
        ("2 blocks and 2, 130", "블록 2개와 2개, 130", 130),
        ("3 full blocks, 192", "꽉 찬 블록 3개, 192", 192),
        ("16 blocks, 1000", "블록 16개, 1000", 1000),
    ],
}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    return [{"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size},
             "inputs": {"a": _a(rng, size), "b": _b(rng)}} for name, ko, size in _SIZES[part]]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"].astype(np.float64)
    b = case["inputs"]["b"].astype(np.float64)
    size = a.size
    out = np.zeros(size)
    for j in range(CONV):
        out[: max(size - j, 0)] += a[j:] * b[j]
    return {"output": out}
