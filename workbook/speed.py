"""Timing a part on the GPU: the arithmetic from device times to what the report shows.

The GPU launcher runs a part's timed case (the reference's `speed_case`) after the
judged cases: `warmup` runs of its launches, not timed, then `launches` runs, each
timed by the device (DeviceContext.execution_time: events around what one run
enqueues). The report gives the median and the fastest, the bytes or FLOPs the
manifest declares for that case, and what they come to per second, as a share of
the GPU's peak where this table knows the GPU. It is information, not a verdict,
unless the manifest sets `max_ratio_to_solution`: then the reference solution is
timed on the same case in the same check, and a part more than that many times
slower fails on the GPU.
"""

from __future__ import annotations

import statistics

from .catalog import Part, evaluate
from .i18n import msg
from .results import Speed

# The GPU's name as the driver gives it -> (memory bandwidth in bytes/s, FLOP/s per
# precision, where the numbers come from). SXM parts. Tensor-core figures are dense: the
# datasheets print twice these "with sparsity", which a dense matrix multiply never gets.
PEAKS: dict[str, tuple[float, dict[str, float], str]] = {
    "NVIDIA H100 80GB HBM3": (3.35e12, {"fp32": 67e12, "tf32": 494.5e12, "bf16": 989.5e12},
                              "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 3.35 TB/s HBM3, 67 TFLOPS FP32, "
                              "tensor cores 494.5 TFLOPS TF32 and 989.5 TFLOPS BF16 dense"),
    "NVIDIA H200": (4.8e12, {"fp32": 67e12, "tf32": 494.5e12, "bf16": 989.5e12},
                    "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 4.8 TB/s HBM3e, 67 TFLOPS FP32, "
                    "tensor cores 494.5 TFLOPS TF32 and 989.5 TFLOPS BF16 dense"),
}


def method(part: Part):
    return msg("speed.method", warmup=part.speed.warmup, launches=part.speed.launches)


def not_measured(part: Part, key: str, **values) -> Speed:
    return Speed(False, reason=msg(key, **values), warmup=part.speed.warmup, launches=part.speed.launches,
                 method=method(part))


def measure(part: Part, case: dict, names: dict[str, int], times_ns: list[int], gpu: str) -> Speed:
    """From each timed launch's device time to the part's Speed."""
    if len(times_ns) < part.speed.launches:
        return not_measured(part, "speed.no_times")
    median_s = statistics.median(times_ns) / 1e9
    fastest_s = min(times_ns) / 1e9
    result = Speed(True, case=case.get("name", ""), warmup=part.speed.warmup, launches=len(times_ns),
                   median_us=median_s * 1e6, min_us=fastest_s * 1e6, method=method(part), gpu=gpu)
    peak = PEAKS.get(gpu)
    if peak is not None:
        result.peak_gb_per_s, result.peak_source = peak[0] / 1e9, peak[2]
        result.peak_gflop_per_s = peak[1][part.speed.precision] / 1e9
    result.precision = part.speed.precision
    if part.speed.bytes:
        result.bytes = evaluate(part.speed.bytes, names)
        result.gb_per_s = result.bytes / median_s / 1e9
        if peak is not None:
            result.percent_of_peak_bandwidth = 100 * result.gb_per_s / result.peak_gb_per_s
    if part.speed.flops:
        result.flops = evaluate(part.speed.flops, names)
        result.gflop_per_s = result.flops / median_s / 1e9
        if peak is not None:
            result.percent_of_peak_flops = 100 * result.gflop_per_s / result.peak_gflop_per_s
    return result


def against_solution(result: Speed, part: Part, solution_times_ns: list[int] | None) -> None:
    """The verdict a part's manifest asks for: its median over the reference solution's,
    timed on the same case in the same run, at most `max_ratio_to_solution`. Without the
    solution's times (its run failed) there is no verdict, never a guess."""
    limit = part.speed.max_ratio_to_solution
    if not limit or not result.measured or not result.median_us:
        return
    result.max_ratio_to_solution = limit
    if not solution_times_ns or len(solution_times_ns) < part.speed.launches:
        return
    result.solution_median_us = statistics.median(solution_times_ns) / 1e3
    result.ratio_to_solution = result.median_us / result.solution_median_us
    result.too_slow = result.ratio_to_solution > limit


def compare(speeds: list[Speed]) -> None:
    """With several measured parts: each one's median over the fastest's (1.0 for it)."""
    measured = [s for s in speeds if s.measured and s.median_us]
    if len(measured) < 2:
        return
    fastest = min(s.median_us for s in measured)
    for s in measured:
        s.ratio_to_fastest = s.median_us / fastest
