"""The comparison rules, on arrays made here (the engine tests cover real kernels)."""

from __future__ import annotations

import numpy as np

from workbook.course.manifest import Part
from workbook.judging.compare import check_case, check_output

PART = Part("p", {"en": "p"}, ("cpu",), ("x",), ("y",), atol=1e-6, rtol=1e-5, tolerance="a test")


def test_within_tolerance_passes_and_reports_errors():
    exp = np.linspace(0, 1, 128)
    got = exp + 1e-7
    out = check_output("y", got, exp, 1e-6, 1e-5)
    assert out.passed and out.mismatches == 0
    assert abs(out.max_abs_error - 1e-7) < 1e-9


def test_nan_and_inf_never_pass_even_where_the_reference_is_nan():
    exp = np.array([1.0, np.nan, np.inf, 2.0])
    got = np.array([1.0, np.nan, np.inf, np.inf])
    out = check_output("y", got, exp, 1.0, 1.0)
    assert not out.passed
    assert out.nan_count == 1 and out.inf_count == 2
    assert out.error_map == [0, 3, 3, 3]


def test_error_map_shows_where_the_errors_are():
    exp = np.ones(64)
    got = exp.copy()
    got[1::2] = 0.0  # every other element wrong
    out = check_output("y", got, exp, 1e-6, 1e-5)
    assert out.error_map == [0, 2] * 32
    assert out.mismatches == 32


def test_large_outputs_are_summarised_keeping_the_worst():
    exp = np.zeros(4096)
    got = exp.copy()
    got[-1] = np.nan
    out = check_output("y", got, exp, 1e-6, 1e-5)
    assert len(out.error_map) == 256
    assert out.error_map[-1] == 3 and set(out.error_map[:-1]) == {0}


def test_repeats_that_differ_fail_as_a_race():
    case = {"name": "c", "params": {}, "inputs": {}}
    exp = {"y": np.ones(8)}
    same = check_case(case, PART, [[np.ones(8)], [np.ones(8)]], exp, None)
    assert same.passed and not same.nondeterministic
    racy = check_case(case, PART, [[np.ones(8)], [np.ones(8) + 1e-9]], exp, None)
    assert racy.nondeterministic and not racy.passed


def test_a_failed_invariant_fails_the_case():
    case = {"name": "c", "params": {}, "inputs": {}}
    result = check_case(case, PART, [[np.ones(8)]], {"y": np.ones(8)},
                        lambda c, outs: [("sums to 1", False, "sum = 8")])
    assert not result.passed


def test_wrong_shape_fails():
    out = check_output("y", np.ones(3), np.ones(4), 1e-6, 1e-5)
    assert not out.passed


def test_repeats_of_atomic_sums_may_differ_in_the_last_bits_but_not_beyond_tolerance():
    from dataclasses import replace

    part = replace(PART, exact_repeats=False)
    case = {"name": "c", "params": {}, "inputs": {}}
    exp = {"y": np.ones(8)}
    reordered = check_case(case, part, [[np.ones(8)], [np.ones(8) + 1e-9]], exp, None)
    assert reordered.passed and not reordered.nondeterministic
    lost_adds = check_case(case, part, [[np.ones(8)], [np.full(8, 0.5)]], exp, None)
    assert lost_adds.nondeterministic and not lost_adds.passed


def test_the_simulators_two_orders_that_differ_are_a_missing_barrier_not_a_gpu_race():
    case = {"name": "c", "params": {}, "inputs": {}}
    exp = {"y": np.ones(8)}
    forward_nan = np.ones(8)
    forward_nan[3] = np.nan
    result = check_case(case, PART, [[forward_nan], [np.ones(8)]], exp, None, orders=True)
    assert result.order_dependent and not result.nondeterministic and not result.passed
