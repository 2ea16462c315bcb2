"""Puzzle 22 reference: inputs, and the expected forward output and gradients.

Everything is computed in float64 NumPy from the float32 inputs the op sees.
Which input makes each term decide the answer:

- the mean: every row has its own; "shifted x" moves it far (50) from 0, where
  E[x^2] - mean^2 loses the variance's digits in float32;
- EPS inside the square root: rows whose variance is far below EPS = 1e-5
  ("almost-zero rows", "tiny x"), where 1/sqrt(var + EPS) is about
  1/sqrt(EPS), while 1/(sqrt(var) + EPS) or no EPS at all is 10 to 1000 times
  larger;
- inv_std in grad_input: "large x" (grad_input shrinks with the scale);
- the mean term and the variance term of grad_input: present in every case
  (the invariants check both: rows of grad_input sum to 0 and are orthogonal
  to xhat);
- gamma and beta: drawn away from 1 and 0, so forgetting either shows;
- the parameter gradients are sums over every position: batch * seq > 1 in
  every case, so a kernel that writes instead of adding keeps one position's
  share only;
- the sizes: hidden 8 and 12 (fewer than the 64 threads of a block), 100
  (more, so a kernel that does not stride over the row leaves part of it)
  and 130 (three strides), over 5 x 13 = 65 positions, more blocks than a
  block has threads; and one shape drawn from the seed among a few ("random
  shape b x s x h -> o");
- float32, not 16 bits: every case holds random float32 values, off the
  float16 and bfloat16 grids ("random" is the one the tolerance note names).

The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`), each with a case there for it:
- a constant row ("constant rows": every row one multiple of 1/4, so the
  mean is exact and var = 0): EPS alone decides inv_std = 1/sqrt(EPS), about
  316, and every xhat is exactly 0; a kernel that skips a position's
  LayerNorm gradients where xhat is 0 (dln * xhat adds nothing) loses its
  share of grad_ln_bias there (tests/wrong/p22/skips_zero_xhat);
- a zero gradient row ("zero gradient rows": four positions whose
  grad_output is 0): grad_input is exactly 0 there, and a kernel that skips
  the output features whose gradient is 0 never writes y for them
  (skips_zero_gradient);
- a zero weight column ("a zero weight column": W[:, 2] = W[:, 7] = 0):
  dln and dxhat are exactly 0 there, and a kernel that skips an h whose dln
  is 0 leaves dxhat[h] unwritten in shared memory (skips_zero_dln);
- means far from 0, above and below ("shifted x", "shifted below zero"),
  the variance far below EPS ("almost-zero rows"), a large scale ("large x");
- the sizes: hidden below the block (8), three strides of the block over the
  row (130) and over the output features ("2x1x20 -> 140": a loop that
  takes at most two strides of out_dim leaves y's last 12 NaN,
  tests/wrong/p22/two_output_strides), and more blocks than a block has
  threads (65 positions).

The invariants, and how far a correct float32 kernel may miss them
-------------------------------------------------------------------
Per position, with exact (float64) mean, var, s = 1/sqrt(var + EPS),
xhat = (x - mean) s, d = dxhat, m1 = mean(d), m2 = mean(d xhat),
eta = EPS / (var + EPS), and gx = s (d - m1 - xhat m2):

    sum_h gx_h         = 0                  (sum xhat = 0)
    sum_h gx_h xhat_h  = s H m2 eta         (sum xhat^2 = H (1 - eta))

The second is 0 only where EPS is negligible: a row of variance 0.15 has
eta = 6.7e-5, and its sum is then about 2e-3 against a row sum of |gx| of 15;
the old check (that sum below 1e-4 of the largest row sum of |gx|, for rows
of variance above 1e3 EPS) failed a correct kernel on such rows (seed
1140832775, "shifted x"). So both checks compare with the exact value, and
allow what float32 rounding allows, derived like a tolerance.

A correct kernel computes every quantity in float32 (u = 2^-24, and
g(n) = n u / (1 - n u) bounds n roundings, in any order of summation), from
the float32 inputs. To first order in u, per position:
- mean:  |mean' - mean| <= e_mu = g(H + 2) mean(|x|); a shift of every
  centred value by it is a shift of xhat by delta = s e_mu;
- var:   var' = (var + e_mu^2)(1 + phi), |phi| <= g(H + 5) (squares of
  positive terms, their sum, a division);
- s:     s' = s (1 + sigma), |sigma| <= psi / 2 + 4u, with
  psi = (g(H + 5)(var + e_mu^2) + e_mu^2 + u EPS) / (var + EPS) + u (the
  sqrt and the division, or an approximate rsqrt: 4u);
- xhat:  xhat'_h = (xhat_h - delta)(1 + sigma)(1 + tau_h), |tau_h| <= g(2);
- d:     |d'_h - d_h| <= e_d = g(O + 1) |gamma_h| sum_o |g_o W_oh|;
- m1:    |m1' - m1| <= e_1 = mean(e_d) + g(H + 2) mean(|d|);
- m2:    m2' = (1 + sigma)(m2 - delta m1) + r_2,
         |r_2| <= mean(e_d |xhat|) + g(H + 5) mean(|d xhat|);
- gx:    four more roundings, g(6) of |d| + |m1| + |xhat m2| with room.
The systematic parts (sigma, delta: the same for the whole row) cancel in
most of the sums; what they leave, with sum xhat = 0, sum xhat^2 = H(1 - eta):

    |sum gx' xhat - s H m2 eta| <= s H (2 |sigma| |m2| + |delta| |m1|) + sum_h |xhat_h| E_h
    |sum gx'|                   <= s H |delta| |m2|                     + sum_h E_h

with E_h = s (e_d,h + e_1 + |xhat_h| (|r_2| + g(4) |m2|) + g(6) (|d_h| + |m1| + |xhat_h m2|)).
The checks allow twice these bounds, for the second-order terms left out.
In "shifted x" (mean 50, spread 1, H = 8) e_mu is about 2.4e-5: the bound on
the orthogonality sum is then near 3e-4 of a row's sum of |gx|, over the 2e-5
correct kernels reach; a left-out variance term is off by s H |m2| (1 - eta),
about 10, and a left-out mean term by s H |m1|, both far outside.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-5

INPUTS = ("x", "ln_weight", "ln_bias", "weight", "bias", "grad_output")
OUTPUTS = (
    "output",
    "grad_input",
    "grad_ln_weight",
    "grad_ln_bias",
    "grad_weight",
    "grad_bias",
)

# The puzzle's own shape first, then shapes that are not powers of two. The
# last one is wider than a block of threads (64), so a GPU kernel that does
# not stride over the row leaves part of it unwritten.
SHAPES = (
    {"batch": 4, "seq": 4, "hidden": 8, "out_dim": 16},
    {"batch": 2, "seq": 3, "hidden": 12, "out_dim": 20},
    {"batch": 2, "seq": 2, "hidden": 100, "out_dim": 70},
    # three strides over the row, and 65 positions: more blocks than a block has threads
    # (a small out_dim keeps the simulator's run short; every shape costs the graph a build)
    {"batch": 5, "seq": 13, "hidden": 130, "out_dim": 2},
)
# Three strides of the block over the output features (140 > 2 * 64): run through the
# kernels directly, not through the graph (graph_cases in the manifest), so it costs no
# graph build.
OUT_STRIDES = {"batch": 2, "seq": 1, "hidden": 20, "out_dim": 140}
TPB = 64
# The seeded case's shapes: a few, so that a run of another seed reuses a build.
SEEDED_SHAPES = (
    {"batch": 3, "seq": 5, "hidden": 24, "out_dim": 10},
    {"batch": 2, "seq": 7, "hidden": 40, "out_dim": 33},
    {"batch": 4, "seq": 2, "hidden": 90, "out_dim": 16},
    {"batch": 1, "seq": 9, "hidden": 17, "out_dim": 65},
)


def _inputs(rng: np.random.Generator, params: dict, x_scale: float, x_shift: float) -> dict:
    b, s, h, o = params["batch"], params["seq"], params["hidden"], params["out_dim"]

    def f32(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.float32)

    return {
        "x": f32(x_shift + x_scale * rng.standard_normal((b, s, h))),
        # gamma away from 1 and beta away from 0, so that forgetting either
        # one changes the answer.
        "ln_weight": f32(1.0 + 0.5 * rng.standard_normal(h)),
        "ln_bias": f32(0.5 * rng.standard_normal(h)),
        "weight": f32(rng.standard_normal((o, h)) / np.sqrt(h)),
        "bias": f32(rng.standard_normal(o)),
        "grad_output": f32(rng.standard_normal((b, s, o))),
    }


def _constant_rows(rng: np.random.Generator, params: dict) -> dict:
    """Every row of x one nonzero multiple of 1/4 between -4 and 4: its float32 sum and mean
    are exact in any order, so x - mean is exactly 0, var = 0 and every xhat is 0."""
    inputs = _inputs(rng, params, 1.0, 0.0)
    values = rng.choice(np.concatenate([np.arange(-16, 0), np.arange(1, 17)]), (params["batch"], params["seq"], 1))
    inputs["x"] = np.ascontiguousarray(np.broadcast_to(values / 4, inputs["x"].shape), dtype=np.float32)
    return inputs


def _zero_gradient_rows(rng: np.random.Generator, params: dict) -> dict:
    """grad_output is 0 at four positions, the first and the last among them."""
    inputs = _inputs(rng, params, 1.0, 0.0)
    rows = inputs["grad_output"].reshape(-1, params["out_dim"])
    picked = rng.choice(np.arange(1, rows.shape[0] - 1), 2, replace=False)
    rows[[0, rows.shape[0] - 1, *picked]] = 0
    return inputs


def _zero_weight_columns(rng: np.random.Generator, params: dict) -> dict:
    """Columns 2 and hidden - 1 of W are 0: dln, dxhat and grad_input's direct term vanish there."""
    inputs = _inputs(rng, params, 1.0, 0.0)
    inputs["weight"][:, [2, params["hidden"] - 1]] = 0
    return inputs


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    def case(name: str, korean: str, params: dict, inputs: dict, *special: str) -> dict:
        return {"name": name, "label": {"en": name, "ko": korean}, "params": dict(params),
                "inputs": inputs, "special": special}

    first, *others = SHAPES
    result = [
        case("random", "무작위", first, _inputs(rng, first, 1.0, 0.0), "hidden_below_block"),
        # LayerNorm's output ignores the scale of x, but grad_input shrinks
        # with it (here to about 4e-3): a missing factor of inv_std shows.
        case("large x", "큰 x", first, _inputs(rng, first, 1000.0, 0.0), "large_scale"),
        # Rows whose mean (50) is far larger than their spread (1): in
        # float32, E[x^2] - mean^2 subtracts two numbers near 2500 and keeps
        # only a few digits of the variance; the mean of (x - mean)^2 keeps
        # them all. (Measured with the CPU op: the shortcut misses by up to
        # 5e-3, the two passes by 3.5e-5.)
        case("shifted x", "평균이 먼 x", first, _inputs(rng, first, 1.0, 50.0), "mean_far_from_zero"),
        # Variance about 1e-8, a thousand times below EPS: EPS decides inv_std.
        # (Around 0, not around a constant: float32 keeps every digit of values that small.)
        case("almost-zero rows", "거의 0인 행", first, _inputs(rng, first, 1e-4, 0.0), "variance_far_below_eps"),
        # The same at scale 1e-3 (variance 1e-6): EPS still counts for a tenth.
        case("tiny x", "아주 작은 x", first, _inputs(rng, first, 1e-3, 0.0)),
        # The special points where a term vanishes: run through the kernels directly (not
        # through the graph, graph_cases), in the puzzle's own shape.
        case("constant rows", "상수인 행", first, _constant_rows(rng, first), "constant_row"),
        case("zero gradient rows", "기울기가 0인 행", first, _zero_gradient_rows(rng, first), "zero_gradient_row"),
        case("a zero weight column", "0인 가중치 열", first, _zero_weight_columns(rng, first), "zero_weight_column"),
        # The mirror of "shifted x": every mean near -50.
        case("shifted below zero", "평균이 0보다 한참 아래인 x", first, _inputs(rng, first, 1.0, -50.0),
             "mean_far_from_zero", "mean_below_zero"),
    ]
    points = {130: ("hidden_three_strides", "more_blocks_than_threads")}
    for params in others:
        name = "{batch}x{seq}x{hidden} -> {out_dim}".format(**params)
        result.append(case(name, name, params, _inputs(rng, params, 1.0, 0.0), *points.get(params["hidden"], ())))
    name = "{batch}x{seq}x{hidden} -> {out_dim}".format(**OUT_STRIDES)
    result.append(case(name, name, OUT_STRIDES, _inputs(rng, OUT_STRIDES, 1.0, 0.0), "out_three_strides"))
    params = SEEDED_SHAPES[rng.integers(len(SEEDED_SHAPES))]
    shape = "{batch}x{seq}x{hidden} -> {out_dim}".format(**params)
    result.append({**case(f"random shape {shape}", f"무작위 모양 {shape}", params, _inputs(rng, params, 1.0, 0.0)),
                   "seeded": True})
    return result


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    params, inputs = case["params"], case["inputs"]
    hidden, out_dim = params["hidden"], params["out_dim"]
    rows = np.asarray(inputs["x"], dtype=np.float64).reshape(-1, hidden)
    mean, spread = rows.mean(axis=1), rows.std(axis=1)
    found = set()
    if np.any(rows.max(axis=1) == rows.min(axis=1)):
        found.add("constant_row")
    if np.any(np.all(np.asarray(inputs["grad_output"]).reshape(-1, out_dim) == 0, axis=1)):
        found.add("zero_gradient_row")
    if np.any(np.all(np.asarray(inputs["weight"]) == 0, axis=0)):
        found.add("zero_weight_column")
    far = np.abs(mean) > 10 * spread
    if np.any(far & (spread > 0)):
        found.add("mean_far_from_zero")
    if np.all(far & (mean < 0)):
        found.add("mean_below_zero")
    if np.any((spread > 0) & (spread**2 < EPS / 100)):
        found.add("variance_far_below_eps")
    if np.any(spread > 100):
        found.add("large_scale")
    if hidden < TPB:
        found.add("hidden_below_block")
    if hidden > 2 * TPB:
        found.add("hidden_three_strides")
    if out_dim > 2 * TPB:
        found.add("out_three_strides")
    if params["batch"] * params["seq"] > TPB:
        found.add("more_blocks_than_threads")
    return found


def _as64(case: dict) -> dict[str, np.ndarray]:
    return {name: np.asarray(case["inputs"][name], dtype=np.float64) for name in INPUTS}


def forward(x, ln_weight, ln_bias, weight, bias) -> np.ndarray:
    """y = Linear(LayerNorm(x)) in float64."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + EPS)
    ln = xhat * ln_weight + ln_bias
    return ln @ weight.T + bias


def gradients(x, ln_weight, ln_bias, weight, bias, grad_output) -> dict[str, np.ndarray]:
    """The forward output and the analytic gradients of L = sum(y * grad_output)."""
    hidden = x.shape[-1]
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(var + EPS)
    xhat = (x - mean) * inv_std
    ln = xhat * ln_weight + ln_bias
    y = ln @ weight.T + bias

    rows = grad_output.reshape(-1, grad_output.shape[-1])  # [positions, out]
    d_ln = grad_output @ weight  # dL/d(ln), [batch, seq, hidden]
    d_xhat = d_ln * ln_weight
    # d xhat_j / d x_i = inv_std * (delta_ij - 1/H - xhat_i xhat_j / H):
    # the direct path, the path through the mean, the path through the variance.
    grad_input = inv_std * (
        d_xhat
        - d_xhat.sum(axis=-1, keepdims=True) / hidden
        - xhat * (d_xhat * xhat).sum(axis=-1, keepdims=True) / hidden
    )
    return {
        "output": y,
        "grad_input": grad_input,
        "grad_ln_weight": (d_ln * xhat).reshape(-1, hidden).sum(axis=0),
        "grad_ln_bias": d_ln.reshape(-1, hidden).sum(axis=0),
        "grad_weight": rows.T @ ln.reshape(-1, hidden),
        "grad_bias": rows.sum(axis=0),
    }


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    return gradients(**_as64(case))


def finite_difference_gradients(
    x, ln_weight, ln_bias, weight, bias, grad_output, step: float = 1e-6
) -> dict[str, np.ndarray]:
    """Central differences of L = sum(forward(...) * grad_output), float64.

    Slow (two forward passes per element): meant for small shapes in tests.
    """
    params = {"x": x, "ln_weight": ln_weight, "ln_bias": ln_bias, "weight": weight, "bias": bias}

    def loss() -> float:
        return float((forward(**params) * grad_output).sum())

    grads = {}
    for name, value in params.items():
        value = np.array(value, dtype=np.float64)
        params[name] = value
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            original = value[index]
            value[index] = original + step
            plus = loss()
            value[index] = original - step
            minus = loss()
            value[index] = original
            grad[index] = (plus - minus) / (2 * step)
        grads[name] = grad
    names = {"x": "grad_input", "ln_weight": "grad_ln_weight", "ln_bias": "grad_ln_bias",
             "weight": "grad_weight", "bias": "grad_bias"}
    return {names[k]: v for k, v in grads.items()}


U = 2.0**-24  # float32's unit roundoff


def _g(n: int) -> float:
    """A bound on n float32 roundings in a row: n u / (1 - n u)."""
    return n * U / (1 - n * U)


def bounds(case: dict) -> dict[str, np.ndarray]:
    """Per position: the exact values of the two sums the invariants check, and how far a
    correct float32 kernel may be from each (derived in this module's docstring)."""
    i = _as64(case)
    x, gamma, grad, weight = i["x"], i["ln_weight"], i["grad_output"], i["weight"]
    hidden, out = x.shape[-1], weight.shape[0]
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    s = 1.0 / np.sqrt(var + EPS)
    xhat = (x - mean) * s
    d = (grad @ weight) * gamma
    m1 = d.mean(axis=-1, keepdims=True)
    m2 = (d * xhat).mean(axis=-1, keepdims=True)
    eta = EPS / (var + EPS)
    e_mu = _g(hidden + 2) * np.abs(x).mean(axis=-1, keepdims=True)
    delta = s * e_mu
    psi = (_g(hidden + 5) * (var + e_mu**2) + e_mu**2 + U * EPS) / (var + EPS) + U
    sigma = psi / 2 + 4 * U
    e_d = _g(out + 1) * np.abs(gamma) * (np.abs(grad) @ np.abs(weight))
    e_1 = e_d.mean(axis=-1, keepdims=True) + _g(hidden + 2) * np.abs(d).mean(axis=-1, keepdims=True)
    r_2 = (e_d * np.abs(xhat)).mean(axis=-1, keepdims=True) + \
        _g(hidden + 5) * np.abs(d * xhat).mean(axis=-1, keepdims=True)
    each = s * (e_d + e_1 + np.abs(xhat) * (r_2 + _g(4) * np.abs(m2))
                + _g(6) * (np.abs(d) + np.abs(m1) + np.abs(xhat * m2)))
    sH = (s * hidden)[..., 0]
    return {
        "xhat": xhat,
        "dot": (s * hidden * m2 * eta)[..., 0],
        "dot_bound": sH * (2 * sigma * np.abs(m2) + delta * np.abs(m1))[..., 0] + (np.abs(xhat) * each).sum(axis=-1),
        "sum_bound": sH * (delta * np.abs(m2))[..., 0] + each.sum(axis=-1),
    }


def _within(got: np.ndarray, want: np.ndarray, bound: np.ndarray) -> tuple[bool, dict]:
    """Every row's sum within twice its bound (the second-order terms left out), and the
    worst row, as a detail in both languages."""
    off = np.abs(got - want)
    # A row that is exactly right passes even where its bound is 0 (a zero gradient row:
    # every term of its sum is exactly 0, and so is what rounding could add).
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(off == 0, 0.0, np.where(np.isfinite(off), off / (2 * bound), np.inf))
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    ok = bool(np.all(ratio <= 1.0))
    en = f"off by {off[worst]:.1e}, float32 allows {2 * bound[worst]:.1e}"
    ko = f"{off[worst]:.1e}만큼 벗어남, float32 허용 {2 * bound[worst]:.1e}"
    return ok, {"en": en, "ko": ko}


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str):
    """Two facts about LayerNorm's input gradient, whatever the inputs.

    Shifting a row of x by a constant leaves xhat unchanged, so each row of
    grad_input sums to 0 (the mean term sees to that). Scaling the centred
    row leaves xhat unchanged too, so each row of grad_input is orthogonal
    to xhat (the variance term sees to that), up to EPS's share: its sum
    with xhat is s H m2 EPS / (var + EPS). Each is checked row by row,
    within what float32 rounding allows a correct kernel (see the module's
    docstring for the derivation).
    """
    gx = np.asarray(outputs["grad_input"], dtype=np.float64)
    b = bounds(case)
    with np.errstate(invalid="ignore", over="ignore"):
        sum_ok, sum_detail = _within(gx.sum(axis=-1), np.zeros(gx.shape[:-1]), b["sum_bound"])
        dot_ok, dot_detail = _within((gx * b["xhat"]).sum(axis=-1), b["dot"], b["dot_bound"])
    return [
        ({"en": "rows of grad_input sum to 0", "ko": "grad_input의 각 행의 합이 0"}, sum_ok, sum_detail),
        ({"en": "rows of grad_input are orthogonal to xhat (up to EPS's share)",
          "ko": "grad_input의 각 행이 xhat와 직교 (EPS 몫을 빼면)"}, dot_ok, dot_detail),
    ]
