"""Puzzle 22: the float64 analytic gradients agree with finite differences."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REFERENCE = Path(__file__).resolve().parents[1] / "puzzles" / "p22" / "reference.py"


def _load_reference():
    spec = importlib.util.spec_from_file_location("p22_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_reference()


@pytest.mark.parametrize("x_shift", [0.0, 3.0])
def test_analytic_gradients_match_central_differences(x_shift):
    rng = np.random.default_rng(22)
    params = {"batch": 2, "seq": 3, "hidden": 5, "out_dim": 4}
    inputs = ref._inputs(rng, params, 1.0, x_shift)
    inputs64 = {k: v.astype(np.float64) for k, v in inputs.items()}

    analytic = ref.gradients(**inputs64)
    numeric = ref.finite_difference_gradients(**inputs64)

    for name, grad in numeric.items():
        assert analytic[name].shape == grad.shape, name
        np.testing.assert_allclose(analytic[name], grad, rtol=1e-6, atol=1e-6, err_msg=name)


def test_forward_output_matches_forward():
    rng = np.random.default_rng(7)
    case = ref.cases(rng, "")[0]
    got = ref.expected(case, "")
    inputs64 = {k: np.asarray(v, dtype=np.float64) for k, v in case["inputs"].items()}
    y = ref.forward(**{k: inputs64[k] for k in ("x", "ln_weight", "ln_bias", "weight", "bias")})
    np.testing.assert_allclose(got["output"], y, rtol=1e-12, atol=1e-12)


def test_dropping_the_variance_term_is_caught():
    # The check above is only worth something if a plausible mistake fails it.
    rng = np.random.default_rng(3)
    params = {"batch": 1, "seq": 2, "hidden": 6, "out_dim": 3}
    inputs64 = {k: v.astype(np.float64) for k, v in ref._inputs(rng, params, 1.0, 0.0).items()}
    numeric = ref.finite_difference_gradients(**inputs64)["grad_input"]

    x = inputs64["x"]
    mean = x.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + ref.EPS)
    d_xhat = (inputs64["grad_output"] @ inputs64["weight"]) * inputs64["ln_weight"]
    without_variance = inv_std * (d_xhat - d_xhat.mean(axis=-1, keepdims=True))
    assert not np.allclose(without_variance, numeric, rtol=1e-4, atol=1e-4)


def test_cases_cover_the_promised_shapes():
    rng = np.random.default_rng(0)
    all_cases = ref.cases(rng, "")
    shapes = [c["params"] for c in all_cases]
    assert {"batch": 4, "seq": 4, "hidden": 8, "out_dim": 16} in shapes
    assert any(
        p["hidden"] & (p["hidden"] - 1) and p["out_dim"] & (p["out_dim"] - 1) for p in shapes
    ), "a shape with hidden and out not powers of two"
    for case in all_cases:
        p = case["params"]
        shapes_in = {k: v.shape for k, v in case["inputs"].items()}
        assert shapes_in == {
            "x": (p["batch"], p["seq"], p["hidden"]),
            "ln_weight": (p["hidden"],),
            "ln_bias": (p["hidden"],),
            "weight": (p["out_dim"], p["hidden"]),
            "bias": (p["out_dim"],),
            "grad_output": (p["batch"], p["seq"], p["out_dim"]),
        }
        assert all(v.dtype == np.float32 for v in case["inputs"].values())
