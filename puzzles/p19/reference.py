"""Puzzle 19 reference: output = softmax(q . K^T / sqrt(d)) . V, for one query.

q is 1 x d, K and V are seq x d. The learner writes the transpose of K and the
glue that launches transpose, matmul, softmax and matmul. Which input makes
each of those decide the answer:
- the transpose: K is never square (seq != d in every case) and its values
  all differ, so a copy that does not transpose, a tile read back as
  tile[ty, tx], or a block placed at the wrong tile changes the scores;
  seq and d are rarely multiples of TILE = 8 ('13 keys of 5', '5 keys of 13'),
  so the partial tiles at both edges must be guarded, and barrier() must be
  reached by every thread;
- each launch's grid: 'keys outnumber d' and 'd outnumbers keys' swap which
  side is longer, so a grid sized by the wrong dimension misses tiles of
  K^T, of the scores or of the output; '300 keys of 24' has more transpose
  blocks (38 x 3) than a block has threads, and more keys than softmax_row
  has threads;
- the scale 1 / sqrt(d): 'one key aligned with q, d 64' has a key parallel
  to q, whose score is 8 times its scaled value without the scale: the
  weights become nearly one-hot and the output nearly that key's value row
  (1/d in place of 1/sqrt(d) flattens them instead);
- the softmax over the keys: with one query the scores are one row of seq
  values and softmax_row normalizes that row; a softmax of each single score
  (over the query axis) gives weights of 1 and the sum of V's rows, which
  every case with more than one key rejects; 'one key' (seq = 1) is the
  edge where the weight is exactly 1;
- a size drawn from the seed among a few ("random seq n", d = 16).

Tolerance: float32. A score sums d <= 64 products of normal values (|score|
below about 40 after scaling), each rounded once: its error is below
d * 2^-24 * sum |q_i k_i|, under 1e-5 here; softmax turns an error e in a
score into a relative error about e in its weight, and the output sums seq
<= 300 products of weights (adding to 1) and values below 5 in size: the
solution was off by at most 4e-7 on the CPU and the simulator (and passed 20
seeds), and atol = 1e-5, rtol = 1e-4 leave it ample room, while a missing
scale or a missed tile moves outputs by 1e-2 or more. q, K and V are normal values,
off the float16 and bfloat16 grids: inputs kept in 16 bits move the output
by about 2^-12 of a value (2.4e-4) or more, beyond the tolerance ('300 keys
of 24' first).
"""

import numpy as np

SEEDED_SEQ = (20, 33, 57, 90)

# name, Korean, seq, d
_SHAPES = [
    ("one key", "키 1개", 1, 4),
    ("13 keys of 5, keys outnumber d", "키 13개, d 5: 키가 더 많음", 13, 5),
    ("5 keys of 13, d outnumbers keys", "키 5개, d 13: d가 더 큼", 5, 13),
    ("300 keys of 24", "키 300개, d 24", 300, 24),
]


def _case(name: str, korean: str, rng: np.random.Generator, seq: int, d: int, **extra) -> dict:
    q = rng.normal(size=(1, d))
    k = rng.normal(size=(seq, d))
    v = rng.normal(size=(seq, d))
    if name.startswith("one key aligned"):
        k[seq // 3] = 0.6 * q[0]  # its score is 0.6 |q|^2: about 38 unscaled, 4.8 scaled
    return {"name": name, "label": {"en": name, "ko": korean}, "params": {"seq": seq, "d": d},
            "inputs": {"q": q.astype(np.float32), "k": k.astype(np.float32), "v": v.astype(np.float32)}, **extra}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SEQ))
    found = [_case(name, ko, rng, seq, d) for name, ko, seq, d in _SHAPES]
    found.insert(3, _case("one key aligned with q, d 64", "q와 나란한 키 하나, d 64", rng, 40, 64))
    found.append(_case(f"random seq {n}", f"무작위 seq {n}", rng, n, 16, seeded=True))
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    q, k, v = (case["inputs"][n].astype(np.float64) for n in ("q", "k", "v"))
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return {"output": weights @ v}
