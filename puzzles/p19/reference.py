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
- scores past exp's range: in '13 keys of 5, scores past exp's range, a tie
  at the top' two equal keys score 200 after scaling (exp overflows float32
  above 88.72) and every other key at least 30 less, so the weights are 1/2,
  1/2 and nearly 0; in '13 keys of 5, every score below exp underflow' every
  scaled score is below -103.3 (exp is 0 in float32 there), the largest -150
  and the rest at least 30 less. A softmax that skips the shift by the
  largest score overflows in the first (tests/wrong/p19/softmax_without_shift),
  one whose largest score starts at 0 divides 0 by 0 in the second
  (softmax_max_from_zero); the given softmax_row handles both;
- a size drawn from the seed among a few ("random seq n", d = 16).
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): one key, keys outnumbering d and d outnumbering keys,
partial tiles both ways, more transpose tiles than a block has threads,
more keys than softmax_row has threads, a key parallel to q, scores past
exp's overflow, every score below its underflow, and a tie at the top;
each has a case named for it.

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
of 24' first). In the two cases past exp's range a score is a few hundred
and off by about 1e-4 in float32, but the next score is 30 or more below the
largest: its weight is below e^-30, and the output is the top key's value
row (or the mean of the two tied ones, whose scores round alike) within a
few 1e-7.
"""

import numpy as np

SEEDED_SEQ = (20, 33, 57, 90)
TILE = 8
SOFTMAX_TPB = 128
# exp(x) overflows float32 above log(FLT_MAX) and is 0 below log of the smallest subnormal.
EXP_OVERFLOW = 88.72
EXP_UNDERFLOW = -103.3

# name, Korean, seq, d, the special points it is there for
_SHAPES = [
    ("one key", "키 1개", 1, 4, ("single_key",)),
    ("13 keys of 5, keys outnumber d", "키 13개, d 5: 키가 더 많음", 13, 5, ("keys_outnumber_d", "partial_tiles")),
    ("5 keys of 13, d outnumbers keys", "키 5개, d 13: d가 더 큼", 5, 13, ("d_outnumbers_keys",)),
    ("300 keys of 24", "키 300개, d 24", 300, 24, ("more_tiles_than_threads", "more_keys_than_softmax_threads")),
]


def _scored(name: str, korean: str, rng: np.random.Generator, scaled: np.ndarray, d: int, *special: str) -> dict:
    """A case whose key j scores scaled[j] after the scale (up to float32 rounding): K[j] is
    scaled[j] * sqrt(d) * q / |q|^2 plus a random part orthogonal to q. Keys whose scores are
    equal are the same row, so their scores round alike."""
    seq = scaled.size
    q = rng.normal(size=d)
    noise = rng.normal(size=(seq, d))
    noise -= np.outer(noise @ q / (q @ q), q)
    k = np.outer(scaled * np.sqrt(d), q / (q @ q)) + noise
    for j in range(seq):
        first = int(np.flatnonzero(scaled == scaled[j])[0])
        k[j] = k[first]
    v = rng.normal(size=(seq, d))
    return {"name": name, "label": {"en": name, "ko": korean}, "params": {"seq": seq, "d": d},
            "inputs": {"q": q[None].astype(np.float32), "k": k.astype(np.float32), "v": v.astype(np.float32)},
            "special": special}


def _past_exp(rng: np.random.Generator, seq: int, top: float, tied: int) -> np.ndarray:
    """Scaled scores: `tied` keys at `top` (in random places), the others 30 to 300 below it."""
    scores = top - rng.uniform(30.0, 300.0, seq)
    scores[rng.choice(seq, tied, replace=False)] = top
    return scores


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
    found = [_case(name, ko, rng, seq, d, special=special) for name, ko, seq, d, special in _SHAPES]
    found.insert(3, _case("one key aligned with q, d 64", "q와 나란한 키 하나, d 64", rng, 40, 64,
                          special=("aligned_key",)))
    # Past exp's range, in the shape of '13 keys of 5' (no new build; not through the graph).
    found.append(_scored("13 keys of 5, scores past exp's range, a tie at the top",
                         "키 13개, d 5, exp 범위를 넘는 점수, 맨 위에서 같은 점수", rng, _past_exp(rng, 13, 200.0, 2), 5,
                         "scores_past_exp_overflow", "tied_top_scores"))
    found.append(_scored("13 keys of 5, every score below exp underflow", "키 13개, d 5, 모든 점수가 exp 언더플로 아래",
                         rng, _past_exp(rng, 13, -150.0, 1), 5, "scores_below_exp_underflow"))
    found.append(_case(f"random seq {n}", f"무작위 seq {n}", rng, n, 16, seeded=True))
    return found


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    seq, d = case["params"]["seq"], case["params"]["d"]
    q, k = (np.asarray(case["inputs"][n], dtype=np.float64) for n in ("q", "k"))
    scores = (q @ k.T)[0] / np.sqrt(d)
    cosines = (k @ q[0]) / (np.linalg.norm(k, axis=1) * np.linalg.norm(q) + 1e-300)
    found = set()
    if seq == 1:
        found.add("single_key")
    if seq > d:
        found.add("keys_outnumber_d")
    if d > seq:
        found.add("d_outnumbers_keys")
    if seq % TILE and d % TILE and max(seq, d) > TILE:
        found.add("partial_tiles")
    if -(-seq // TILE) * -(-d // TILE) > TILE * TILE:
        found.add("more_tiles_than_threads")
    if seq > SOFTMAX_TPB:
        found.add("more_keys_than_softmax_threads")
    if np.any(cosines > 1 - 1e-6):
        found.add("aligned_key")
    if scores.max() > EXP_OVERFLOW:
        found.add("scores_past_exp_overflow")
    if scores.max() < EXP_UNDERFLOW:
        found.add("scores_below_exp_underflow")
    if np.count_nonzero(scores == scores.max()) > 1:
        found.add("tied_top_scores")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    q, k, v = (case["inputs"][n].astype(np.float64) for n in ("q", "k", "v"))
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return {"output": weights @ v}
