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
- the sizes: hidden 8 and 12 (fewer than the 64 threads of a block) and 100
  (more, so a kernel that does not stride over the row leaves part of it).
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


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    def case(name: str, korean: str, params: dict, inputs: dict) -> dict:
        return {"name": name, "label": {"en": name, "ko": korean}, "params": dict(params),
                "inputs": inputs}

    first, *others = SHAPES
    result = [
        case("random", "무작위", first, _inputs(rng, first, 1.0, 0.0)),
        # LayerNorm's output ignores the scale of x, but grad_input shrinks
        # with it (here to about 4e-3): a missing factor of inv_std shows.
        case("large x", "큰 x", first, _inputs(rng, first, 1000.0, 0.0)),
        # Rows whose mean (50) is far larger than their spread (1): in
        # float32, E[x^2] - mean^2 subtracts two numbers near 2500 and keeps
        # only a few digits of the variance; the mean of (x - mean)^2 keeps
        # them all. (Measured with the CPU op: the shortcut misses by up to
        # 5e-3, the two passes by 3.5e-5.)
        case("shifted x", "평균이 먼 x", first, _inputs(rng, first, 1.0, 50.0)),
        # Variance about 1e-8, a thousand times below EPS: EPS decides inv_std.
        # (Around 0, not around a constant: float32 keeps every digit of values that small.)
        case("almost-zero rows", "거의 0인 행", first, _inputs(rng, first, 1e-4, 0.0)),
        # The same at scale 1e-3 (variance 1e-6): EPS still counts for a tenth.
        case("tiny x", "아주 작은 x", first, _inputs(rng, first, 1e-3, 0.0)),
    ]
    for params in others:
        name = "{batch}x{seq}x{hidden} -> {out_dim}".format(**params)
        result.append(case(name, name, params, _inputs(rng, params, 1.0, 0.0)))
    return result


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


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str):
    """Two facts about LayerNorm's input gradient, whatever the inputs.

    Shifting a row of x by a constant leaves xhat unchanged, so each row of
    grad_input sums to 0 (the mean term sees to that). Scaling the centred
    row leaves xhat unchanged too, so each row of grad_input is orthogonal
    to xhat (the variance term sees to that).
    """
    x = np.asarray(case["inputs"]["x"], dtype=np.float64)
    gx = np.asarray(outputs["grad_input"], dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + EPS)
    # Relative to the size of the gradient, so the check does not depend on scale.
    scale = np.abs(gx).sum(axis=-1).max() if np.all(np.isfinite(gx)) else np.inf
    scale = max(scale, 1e-30)
    row_sum = np.abs(gx.sum(axis=-1)).max() / scale
    # Orthogonality holds exactly only where EPS is negligible: sum(gx * xhat) is
    # inv_std * sum(dxhat * xhat) * EPS / (var + EPS). Rows near EPS are left out.
    big = (var > 1e3 * EPS)[..., 0]
    row_dot = float(np.abs((gx * xhat).sum(axis=-1))[big].max() / scale) if big.any() else 0.0
    return [
        ({"en": "rows of grad_input sum to 0", "ko": "grad_input의 각 행의 합이 0"},
         bool(row_sum < 1e-4), f"{row_sum:.1e}"),
        ({"en": "rows of grad_input are orthogonal to xhat", "ko": "grad_input의 각 행이 xhat와 직교"},
         bool(row_dot < 1e-4), f"{row_dot:.1e}"),
    ]
