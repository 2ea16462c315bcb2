"""Timing a part on the GPU: the arithmetic from device times to what the report shows.

The GPU launcher runs a part's timed case (the reference's `speed_case`) after the
judged cases: `warmup` runs of its launches, not timed, then `launches` runs, each
timed by the device (DeviceContext.execution_time: events around what one run
enqueues), each after 256 MB written to the GPU, not timed, so that no run finds
its data in the L2 cache the run before left there (launcher.FLUSH_BYTES). The
report gives the median, the fastest and the middle half of the runs (first to
third quartile), the bytes or FLOPs the manifest declares for that case, and what
they come to per second, as a share of the GPU's peak where this table knows the
GPU. It is information, not a verdict, unless the manifest sets
`max_ratio_to_solution`: then the reference solution is timed on the same case in
the same check, and a part more than that many times slower fails on the GPU. The
solution is built into the learner's launcher and its runs alternate with the
learner's in one process (the learner's first in even rounds, second in odd ones),
as graded kernel platforms time a submission against its reference: the same GPU,
clocks and neighbours for both. Where that can't be built, the solution is timed in
a launcher of its own, right after, and the result says which (`solution_timing`).
"""

from __future__ import annotations

import statistics

from ..compile.launcher import FLUSH_BYTES
from ..core.i18n import msg
from ..core.results import Speed
from ..course.manifest import Part, evaluate

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
    return msg("speed.method", warmup=part.speed.warmup, launches=part.speed.launches, flush=FLUSH_BYTES >> 20)


def spread(times_ns: list[int]) -> tuple[float, float, float, float]:
    """(median, fastest, first quartile, third quartile) of device times, in µs."""
    us = sorted(t / 1e3 for t in times_ns)
    if len(us) < 2:
        return us[0], us[0], us[0], us[0]
    q1, median, q3 = statistics.quantiles(us, n=4, method="inclusive")
    return median, us[0], q1, q3


def not_measured(part: Part, key: str, **values) -> Speed:
    return Speed(False, reason=msg(key, **values), warmup=part.speed.warmup, launches=part.speed.launches,
                 method=method(part))


def measure(part: Part, case: dict, names: dict[str, int], times_ns: list[int], gpu: str) -> Speed:
    """From each timed launch's device time to the part's Speed."""
    if len(times_ns) < part.speed.launches:
        return not_measured(part, "speed.no_times")
    median_us, fastest_us, q1_us, q3_us = spread(times_ns)
    median_s = median_us / 1e6
    result = Speed(True, case=case.get("name", ""), warmup=part.speed.warmup, launches=len(times_ns),
                   median_us=median_us, min_us=fastest_us, q1_us=q1_us, q3_us=q3_us, flush_bytes=FLUSH_BYTES,
                   method=method(part), gpu=gpu)
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


def against_solution(result: Speed, part: Part, solution_times_ns: list[int] | None, how: str = "") -> None:
    """The verdict a part's manifest asks for: its median over the reference solution's,
    timed on the same case in the same run, at most `max_ratio_to_solution`. Without the
    solution's times (its run failed) there is no verdict, never a guess. `how`: how the
    solution was timed (Speed.solution_timing)."""
    limit = part.speed.max_ratio_to_solution
    if not limit or not result.measured or not result.median_us:
        return
    result.max_ratio_to_solution = limit
    if not solution_times_ns or len(solution_times_ns) < part.speed.launches:
        return
    (result.solution_median_us, result.solution_min_us, result.solution_q1_us,
     result.solution_q3_us) = spread(solution_times_ns)
    result.solution_timing = how
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
