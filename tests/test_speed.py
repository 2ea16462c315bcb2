"""GPU timing of the parts that care about speed ([parts.speed]): the arithmetic from
device times to bandwidth and FLOP/s, the manifest's key and its errors, the report
and the JSON in both languages, and the timed launcher compiled for sm_90."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import put_solution
from rich.console import Console

from workbook.core import i18n
from workbook.core.results import PartResult, PuzzleResult, Status, to_dict
from workbook.course import catalog, manifest, parsing
from workbook.course.manifest import ManifestError
from workbook.judging import speed
from workbook.view import report

P21_NAMES = {"batch": 16, "seq": 2048, "vocab": 8192, "dim": 1024}
P21_BYTES = 16 * 2048 * (4 + 8 * 1024)


def p21_part(root, part_id="coalesced"):
    return catalog.load("p21").part(part_id)


def test_the_median_and_the_fastest_come_from_the_device_times(root):
    part = p21_part(root)
    times = [100_000] * 9 + [90_000] + [200_000] * 10  # ns; median of 20: (100 + 200) / 2 µs
    s = speed.measure(part, {"name": "timing"}, P21_NAMES, times, "NVIDIA H200")
    assert s.measured and s.launches == 20 and s.warmup == 3
    assert s.median_us == pytest.approx(150.0) and s.min_us == pytest.approx(90.0)
    assert s.bytes == P21_BYTES
    assert s.gb_per_s == pytest.approx(P21_BYTES / 150e-6 / 1e9)
    assert s.peak_gb_per_s == 4800 and "datasheet" in s.peak_source
    assert s.percent_of_peak_bandwidth == pytest.approx(100 * s.gb_per_s / 4800)
    assert s.flops is None and s.gflop_per_s is None and s.percent_of_peak_flops is None


def test_flops_against_the_gpus_fp32_peak(root):
    part = catalog.load("p16").part("tiled")
    s = speed.measure(part, {"name": "t"}, {"m": 1024, "k": 1024, "n": 1024, "TILE": 8}, [1_000_000] * 20,
                      "NVIDIA H100 80GB HBM3")
    assert s.flops == 2 * 1024 ** 3 and s.gflop_per_s == pytest.approx(2 * 1024 ** 3 / 1e-3 / 1e9)
    assert s.percent_of_peak_flops == pytest.approx(100 * s.gflop_per_s / 67_000)
    assert s.bytes is None and s.percent_of_peak_bandwidth is None


def test_tensor_core_flops_against_the_peak_of_their_precision(root):
    """p33 counts tensor float 32 FLOPs and p36 bfloat16 ones: each is set against the
    tensor cores' dense peak for that precision, not the CUDA cores' float32."""
    names = {"m": 2048, "k": 2048, "n": 2048}
    for pid, part_id, precision, peak in (("p33", "tensor_core", "tf32", 494_500), ("p36", "gemm", "bf16", 989_500)):
        part = catalog.load(pid).part(part_id)
        assert part.speed.precision == precision
        s = speed.measure(part, {"name": "t"}, names, [1_000_000] * 20, "NVIDIA H200")
        assert s.precision == precision and s.peak_gflop_per_s == peak
        assert s.percent_of_peak_flops == pytest.approx(100 * s.gflop_per_s / peak)


def test_an_unknown_gpu_gets_no_percentage(root):
    s = speed.measure(p21_part(root), {"name": "t"}, P21_NAMES, [50_000] * 20, "Some Other GPU")
    assert s.measured and s.gb_per_s is not None
    assert s.peak_gb_per_s is None and s.percent_of_peak_bandwidth is None and s.peak_source == ""


def test_too_few_times_is_not_a_measure(root):
    s = speed.measure(p21_part(root), {"name": "t"}, P21_NAMES, [50_000] * 5, "NVIDIA H200")
    assert not s.measured and s.reason.key == "speed.no_times" and s.median_us is None


def test_the_ratio_is_each_median_over_the_fastest(root):
    fast = speed.measure(p21_part(root), {"name": "t"}, P21_NAMES, [100_000] * 20, "NVIDIA H200")
    slow = speed.measure(p21_part(root, "2d"), {"name": "t"}, P21_NAMES, [850_000] * 20, "NVIDIA H200")
    missing = speed.not_measured(p21_part(root), "speed.no_gpu")
    speed.compare([fast, slow, missing])
    assert fast.ratio_to_fastest == 1.0 and slow.ratio_to_fastest == pytest.approx(8.5)
    assert missing.ratio_to_fastest is None


# --- the manifest ---------------------------------------------------------------------


def test_the_manifests_declare_p21_and_p16(root):
    p21 = catalog.load("p21")
    assert [p.speed.bytes for p in p21.parts] == ["batch * seq * (4 + 8 * dim)"] * 2
    p16 = catalog.load("p16")
    assert p16.part("tiled").speed.flops == "2 * m * k * n" and p16.part("naive").speed is None


@pytest.mark.parametrize("raw, words", [
    ({}, "bytes = \"...\" and/or flops"),
    ({"bytes": "n * 4", "sped": 1}, "unknown keys ['sped']"),
    ({"bytes": "n ** 2"}, "is not a size expression"),
    ({"flops": True}, "must be a size expression"),
    ({"bytes": "n", "launches": 1}, "launches must be a whole number from 3 to 1000"),
    ({"bytes": "n", "warmup": -1}, "warmup must be a whole number from 0 to 100"),
    ({"flops": "n", "precision": "fp16"}, "precision must be one of ('fp32', 'tf32', 'bf16')"),
    ("fast", "must be a table"),
])
def test_a_bad_speed_table_says_what_is_wrong(raw, words):
    with pytest.raises(ManifestError, match=None) as info:
        parsing._speed(raw, "parts[0].speed")
    assert words in str(info.value) and "parts[0].speed" in str(info.value)


def test_a_bad_speed_table_in_a_manifest_names_the_file(root):
    path = root / "puzzles" / "p21" / "puzzle.toml"
    path.write_text(path.read_text().replace('bytes = "batch * seq * (4 + 8 * dim)"', 'bytes = "batch ^ 2"', 1))
    with pytest.raises(manifest.CatalogError) as info:
        catalog.load("p21")
    assert "puzzle.toml" in str(info.value) and "parts[0].speed.bytes" in str(info.value)


# --- the report and the JSON ----------------------------------------------------------


def p21_result(root, measured: bool) -> PuzzleResult:
    result = PuzzleResult("p21", "Embedding lookup", Status.PASS, "op")
    for part_id, ns in (("coalesced", 100_000), ("2d", 850_000)):
        part = p21_part(root, part_id)
        s = speed.measure(part, {"name": "timing: 16 x 2048 positions, dim 1024"}, P21_NAMES, [ns] * 20,
                          "NVIDIA H200") if measured else speed.not_measured(part, "speed.no_gpu")
        result.parts.append(PartResult(part_id, Status.PASS, {}, 0.0, 0.0, speed=s))
    speed.compare([p.speed for p in result.parts])
    return result


def rendered(result: PuzzleResult, lang: str) -> str:
    i18n.set_language(lang)
    console = Console(width=80, record=True, color_system=None)
    report.render_speed(console, result)
    return " ".join(console.export_text().split())  # lines wrap at 80 columns


def test_the_report_shows_times_bandwidth_peak_and_ratio_in_english(root):
    text = rendered(p21_result(root, True), "en")
    assert "Speed on the GPU (information, not a verdict)" in text
    assert "100.0" in text and "850.0" in text  # the medians in µs
    assert "269 MB" in text and "2.69 TB/s" in text and "56%" in text  # 268.6 MB / 100 µs of 4.8 TB/s
    assert "8.50" in text and "Part 2d takes 8.5x the time of part coalesced." in text
    assert "3 warm-up runs, then 20 runs" in text and "median" in text
    assert "H200 SXM: 4.8 TB/s" in text


def test_the_report_in_korean(root):
    text = rendered(p21_result(root, True), "ko")
    assert "GPU에서의 속도" in text and "파트 2d는 파트 coalesced보다 8.5배" in text and "워밍업 실행 3번" in text
    text = rendered(p21_result(root, False), "ko")
    assert "측정하지 않음: 여기에는 GPU가 없습니다" in text


def test_without_a_gpu_the_report_says_so_and_gives_no_number(root):
    text = rendered(p21_result(root, False), "en")
    assert "not measured: there is no GPU here" in text
    assert "µs" not in text and "B/s" not in text and "%" not in text


def test_the_json_carries_the_same_facts(root):
    doc = json.loads(json.dumps(to_dict(p21_result(root, True))))
    s = doc["parts"][1]["speed"]
    assert s["measured"] is True and s["median_us"] == pytest.approx(850.0) and s["launches"] == 20
    assert s["bytes"] == P21_BYTES and s["ratio_to_fastest"] == pytest.approx(8.5)
    assert s["percent_of_peak_bandwidth"] == pytest.approx(100 * P21_BYTES / 850e-6 / 4.8e12)
    assert s["method"]["key"] == "speed.method" and "20 runs" in s["method"]["text"]
    assert s["gpu"] == "NVIDIA H200" and "datasheet" in s["peak_source"]
    doc = json.loads(json.dumps(to_dict(p21_result(root, False))))
    s = doc["parts"][0]["speed"]
    assert s["measured"] is False and s["reason"]["key"] == "speed.no_gpu" and s["median_us"] is None


# --- the launcher ----------------------------------------------------------------------


def timed_plan(pid: str, texts: list[str] | None = None):
    """A plan with every case and the timed ones; `texts`: the learner's files, for their choices."""
    from workbook.check.engine import load_reference
    from workbook.compile import launcher

    puzzle = manifest.with_choices(catalog.load(pid), texts or [])
    ref = load_reference(puzzle)
    rng = np.random.default_rng(1)
    parts, timed = [], []
    for part in puzzle.parts:
        cases = ref.cases(rng, part.id)
        parts.append((part, cases, [ref.expected(c, part.id) for c in cases]))
        if part.speed:
            case = ref.speed_case(rng, part.id)
            timed.append((part, case, ref.expected(case, part.id)))
    return puzzle, launcher.make_plan(puzzle, parts, timed)


def test_timed_cases_come_after_the_judged_ones_and_only_the_gpu_launcher_has_them(root):
    from workbook.compile import launcher

    _, plan = timed_plan("p21")
    assert [s.index for s in plan.timed] == [len(plan.cases), len(plan.cases) + 1]
    assert plan.timed[0].buffers["weights"].offset >= plan.cases[-1].buffers["weights"].offset
    gpu = launcher.generate(plan, "gpu")
    body = gpu[gpu.index(f"def timed_{len(plan.cases)}("):gpu.index("def main(")]
    assert body.index("for _ in range(3):") < body.index("ctx.execution_time(run_once, 1)")
    assert "for r in range(20):" in body and "_ = v_weights" in body
    assert f"if h.asked({len(plan.cases)}):" in gpu  # never in a run that did not name it
    assert "timed_" not in launcher.generate(plan, "host")


def test_every_timed_run_starts_after_the_l2_cache_is_flushed(root):
    """256 MB written before each timed run, outside the timed closure: no run finds its
    data in the L2 cache the one before left there."""
    from workbook.compile import launcher

    _, plan = timed_plan("p21")
    gpu = launcher.generate(plan, "gpu")
    body = gpu[gpu.index(f"def timed_{len(plan.cases)}("):gpu.index(f"def timed_{len(plan.cases) + 1}(")]
    assert f"var flush = ctx.enqueue_create_buffer[DType.uint8]({launcher.FLUSH_BYTES})" in body
    assert launcher.FLUSH_BYTES >= 2 * 60 * 10 ** 6  # twice an H200's L2
    timed = body.index("times.append(ctx.execution_time(run_once, 1))")
    assert body.rindex("flush.enqueue_fill(0)", 0, timed) > body.index("for r in range(20):")
    closure = body[body.index("def run_once("):body.index("for _ in range(3):")]
    assert "flush" not in closure  # the flush is never part of the time
    assert "run_solution" not in body  # no solution attached: the learner's kernels alone
    from workbook.run.kernelrun import own_memory_mb

    timed_case = [len(plan.cases)]
    assert own_memory_mb(plan, timed_case, "gpu") - own_memory_mb(plan, [], "gpu") >= launcher.FLUSH_BYTES >> 20


def solution_plan(root, pid: str, learner_text=None):
    from workbook.compile import build, launcher

    puzzle, plan = timed_plan(pid)
    module, folder, digest, texts = build.solution_package(puzzle)
    launcher.attach_solution(plan, manifest.with_choices(puzzle, texts), module, folder, digest)
    return puzzle, plan


def test_the_solution_is_timed_beside_the_learners_kernels_in_turn(root):
    """p21's coalesced part has a speed verdict: the solution's kernel is built into the same
    launcher, imported from a package of its own, and timed on the same buffers, its runs
    alternating with the learner's (ABBA); its times go under SOLUTION_TIMES + the index.
    Part 2d has no verdict and times the learner's kernel alone."""
    from workbook.compile import launcher

    puzzle, plan = solution_plan(root, "p21")
    coalesced, two_d = plan.timed
    assert plan.solution.module == "wb_solution.op.embedding" and list(plan.solution.launches) == [coalesced.index]
    assert (plan.solution.folder / "wb_solution" / "op" / "embedding.mojo").read_text() == \
        (puzzle.solution_dir / "op" / "embedding.mojo").read_text()
    gpu = launcher.generate(plan, "gpu")
    assert f"import wb_solution.op.embedding as solution  # the reference solution ({plan.solution.digest})" in gpu
    body = gpu[gpu.index(f"def timed_{coalesced.index}("):gpu.index(f"def timed_{two_d.index}(")]
    assert "ctx.enqueue_function[solution.embedding_coalesced[16, 2048, 8192, 1024]](" in body
    assert "ctx.enqueue_function[puzzle.embedding_coalesced[16, 2048, 8192, 1024]](" in body
    warm = body[body.index("for _ in range(3):"):body.index("ctx.synchronize()")]
    assert "run_once(ctx)" in warm and "run_solution(ctx)" in warm
    rounds = body[body.index("for r in range(20):"):]
    first, mine, second = (rounds.index("if r % 2 == 1:"), rounds.index("times.append(ctx.execution_time(run_once"),
                           rounds.index("if r % 2 == 0:"))
    assert first < mine < second and rounds.count("solution_times.append(ctx.execution_time(run_solution, 1))") == 2
    assert rounds.count("flush.enqueue_fill(0)") == 3  # before every timed run, the solution's too
    assert f"h.record_times({launcher.SOLUTION_TIMES + coalesced.index}, solution_times)" in body
    rest = gpu[gpu.index(f"def timed_{two_d.index}("):gpu.index("def main(")]
    assert "run_solution" not in rest and "record_times(1" not in rest.replace(f"({two_d.index},", "")


def test_the_solution_is_launched_with_its_own_choices(root):
    """p31's learner picks HUB_BLOCK; the solution's kernel is timed with the solution's own
    (512), its grid sized by it, whatever the learner chose (256 in the skeleton)."""
    from workbook.compile import build, launcher

    text = (root / "puzzles" / "p31" / "walks.mojo").read_text()
    assert "comptime HUB_BLOCK = 256" in text
    puzzle, plan = timed_plan("p31", [text])
    hub = next(s for s in plan.timed if s.part.id == "hub")
    assert hub.launches[0].block == (256, 1, 1)  # the learner's
    module, folder, digest, texts = build.solution_package(puzzle)
    launcher.attach_solution(plan, manifest.with_choices(puzzle, texts), module, folder, digest)
    (theirs,) = plan.solution.launches[hub.index]
    walkers = hub.params["walkers"]
    assert theirs.block == (512, 1, 1) and theirs.grid == (-(-walkers // 512), 1, 1)
    assert plan.solution.names[hub.index]["HUB_BLOCK"] == 512
    walk = next(s for s in plan.timed if s.part.id == "walk")
    assert not plan.timed_against_solution(walk)  # information only: no verdict, no solution beside it


def test_a_build_that_fails_for_the_solutions_sake_is_built_again_without_it():
    from workbook.compile import build
    from workbook.core.results import Diagnostic

    in_solution = build.Built(False, diagnostics=[Diagnostic("/cache/p21-solution-x/wb_solution/op/embedding.mojo",
                                                             3, 1, "error: no such thing")])
    learners = build.Built(False, diagnostics=[Diagnostic("puzzles/p21/op/embedding.mojo", 3, 1, "error: oops")])
    assert build.solution_failed(in_solution) and not build.solution_failed(learners)
    assert build.solution_failed(build.Built(False, output="LLVM ERROR: something in the launcher"))


def test_the_spread_and_the_solutions_are_stated(root):
    part = p21_part(root)
    times = [100_000 + 1_000 * k for k in range(20)]  # 100 .. 119 µs
    s = speed.measure(part, {"name": "t"}, P21_NAMES, times, "NVIDIA H200")
    assert s.median_us == pytest.approx(109.5) and s.min_us == pytest.approx(100.0)
    assert (s.q1_us, s.q3_us) == (pytest.approx(104.75), pytest.approx(114.25)) and s.flush_bytes == 256 << 20
    speed.against_solution(s, part, [50_000] * 19 + [40_000], "alternated")
    assert s.solution_median_us == pytest.approx(50.0) and s.solution_min_us == pytest.approx(40.0)
    assert s.solution_timing == "alternated" and s.ratio_to_solution == pytest.approx(109.5 / 50)


@pytest.mark.slow
def test_the_timed_gpu_launcher_compiles_for_sm_90(root):
    """With the reference solution beside the learner's kernels (p21's op registers the same
    op names twice then: in the learner's package and in wb_solution's)."""
    from workbook.child.processes import Children
    from workbook.compile import build

    put_solution(root, "p21")
    puzzle, plan = solution_plan(root, "p21")
    assert plan.solution is not None
    src = build.sources(puzzle)
    with Children() as children:
        built = build.launcher(children, src, plan, "gpu", "sm_90")
    assert built.ok, (built.diagnostics, built.output)


@pytest.mark.gpu
def test_p21_on_a_gpu_times_both_parts_and_coalesced_is_faster(root):
    from workbook.check import engine

    result = engine.check_puzzle(catalog.load("p21"), engine.Options(solutions=True, quick=False, cache=False))
    speeds = {p.id: p.speed for p in result.parts}
    assert all(s.measured for s in speeds.values()), [s.reason for s in speeds.values()]
    assert speeds["2d"].median_us > speeds["coalesced"].median_us
    assert speeds["coalesced"].ratio_to_fastest == 1.0 and speeds["2d"].ratio_to_fastest > 1.0


@pytest.mark.gpu
def test_on_a_gpu_the_solution_runs_beside_the_learner_s_kernel_in_turn(root):
    """The learner's files are the solution's (not --solutions): the verdict's reference is
    timed in the same process, alternately, and the two medians are close (the same kernel)."""
    from workbook.check import engine

    put_solution(root, "p21")
    result = engine.check_puzzle(catalog.load("p21"), engine.Options(part="coalesced", devices=("gpu",),
                                                                    sanitize="off", cache=False))
    s = result.parts[0].speed
    assert s.measured and s.solution_timing == "alternated", (s.reason, s.solution_timing)
    assert s.q1_us <= s.median_us <= s.q3_us and s.solution_q1_us <= s.solution_median_us <= s.solution_q3_us
    assert 0.8 < s.ratio_to_solution < 1.25 and not s.too_slow


# --- the verdict against the reference solution (max_ratio_to_solution) ----------------


def test_a_part_slower_than_its_limit_over_the_solution_is_too_slow(root):
    part = p21_part(root)
    assert part.speed.max_ratio_to_solution == 2.0
    slow = speed.measure(part, {"name": "t"}, P21_NAMES, [420_000] * 20, "NVIDIA H200")
    speed.against_solution(slow, part, [100_000] * 20)
    assert slow.solution_median_us == pytest.approx(100.0) and slow.ratio_to_solution == pytest.approx(4.2)
    assert slow.too_slow and slow.max_ratio_to_solution == 2.0
    near = speed.measure(part, {"name": "t"}, P21_NAMES, [200_000] * 20, "NVIDIA H200")
    speed.against_solution(near, part, [100_000] * 20)
    assert near.ratio_to_solution == pytest.approx(2.0) and not near.too_slow  # at the limit passes


def test_without_the_solutions_times_there_is_no_speed_verdict(root):
    part = p21_part(root)
    s = speed.measure(part, {"name": "t"}, P21_NAMES, [420_000] * 20, "NVIDIA H200")
    speed.against_solution(s, part, None)
    assert not s.too_slow and s.ratio_to_solution is None and s.max_ratio_to_solution == 2.0
    two_d = p21_part(root, "2d")  # information only: no limit, no verdict
    s = speed.measure(two_d, {"name": "t"}, P21_NAMES, [420_000] * 20, "NVIDIA H200")
    speed.against_solution(s, two_d, [100_000] * 20)
    assert not s.too_slow and s.ratio_to_solution is None


@pytest.mark.parametrize("value", [0.5, True, "2"])
def test_a_ratio_below_the_solutions_own_time_is_refused(value):
    with pytest.raises(ManifestError, match="max_ratio_to_solution must be a number of at least 1"):
        parsing._speed({"bytes": "n", "max_ratio_to_solution": value}, "parts[0].speed")


def test_the_report_says_the_ratio_to_the_solution_in_both_languages(root):
    result = p21_result(root, True)
    coalesced = result.parts[0]
    speed.against_solution(coalesced.speed, p21_part(root), [25_000] * 20)  # 100 µs against 25 µs
    text = rendered(result, "en")
    assert "Part coalesced: 4.00x the reference solution's time" in text and "at most 2x" in text
    assert "참고 해답 시간(25.0 µs)의 4.00배" in rendered(result, "ko")


def test_the_report_says_the_spread_and_how_the_solution_ran(root):
    result = p21_result(root, True)
    speed.against_solution(result.parts[0].speed, p21_part(root), [25_000] * 20, "alternated")
    text = rendered(result, "en")
    assert "Middle half of the runs (first to third quartile): coalesced 100.0–100.0 µs; 2d 850.0–850.0 µs" in text
    assert "ran in the same process, its runs alternating with yours: median 25.0 µs" in text
    assert "256 MB written to the GPU (not timed)" in text
    ko = rendered(result, "ko")
    assert "같은 프로세스에서 여러분의 실행과 번갈아" in ko and "256 MB" in ko and "가운데 절반" in ko
