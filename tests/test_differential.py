"""The differential check (workbook/author/differential.py, tools/differential.py): each kernel on
the simulator alone and on the GPU alone, and whether the verdicts agree or the kernel
says why only one device sees it. The comparison on made-up verdicts, then the simulator's
column for p01 and p24 with the real compiler and simulator (the GPU's needs a GPU host)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import scope
from conftest import REPO

from workbook.author import curriculum, differential
from workbook.author.differential import (
    AGREE,
    CAUGHT,
    FAIL,
    GPU_ONLY,
    MISSED,
    NO_GPU,
    NOT_COMPARED,
    PASS,
    SIM_ONLY,
    Side,
)
from workbook.course import catalog

P24 = catalog.load("p24", REPO)


def _wrong(name: str) -> curriculum.WrongKernel:
    return next(k for k in curriculum.wrong_kernels(P24, REPO) if k.name == name)


def _right() -> curriculum.RightKernel:
    return curriculum.right_kernels(P24, REPO)[0]


def test_a_wrong_kernel_both_catch_agrees():
    row = differential.compare(_wrong("one_sum_per_lane"), Side(CAUGHT), Side(CAUGHT))
    assert (row.agreement, row.flag) == (AGREE, "")


def test_simulator_only_is_fine_with_a_stated_why_and_flagged_without_one():
    stated = _wrong("every_lane_writes")
    assert stated.sim_only.startswith("On a GPU the values are right")
    row = differential.compare(stated, Side(CAUGHT), Side(MISSED))
    assert (row.agreement, row.flag, row.why) == (SIM_ONLY, "", stated.sim_only)
    unstated = _wrong("one_sum_per_lane")
    row = differential.compare(unstated, Side(CAUGHT), Side(MISSED))
    assert row.agreement == SIM_ONLY and "says no why (sim_only" in row.flag
    row = differential.compare(unstated, Side(MISSED), Side(CAUGHT))
    assert row.agreement == GPU_ONLY and "gpu_only" in row.flag


def test_a_stated_why_the_run_no_longer_shows_is_flagged():
    row = differential.compare(_wrong("every_lane_writes"), Side(CAUGHT), Side(CAUGHT))
    assert row.agreement == AGREE and row.flag == "its wrong.toml says sim_only, but both devices see it"


def test_a_wrong_kernel_neither_device_catches_is_flagged():
    row = differential.compare(_wrong("one_sum_per_lane"), Side(MISSED), Side(MISSED))
    assert row.agreement == AGREE and row.flag == "neither device catches it"


def test_a_wrong_kernel_only_its_ptx_rule_catches_is_not_flagged_when_both_devices_pass_it():
    """p35/aligned_without_claim: right values everywhere, failed by the PTX rule; its
    expectations say the simulator passes it. Neither device catching it is what it says."""
    p35 = catalog.load("p35", REPO)
    kernel = next(k for k in curriculum.wrong_kernels(p35, REPO) if k.name == "aligned_without_claim")
    assert {(e.device, e.status) for e in kernel.expect} >= {("ptx", "fail"), ("sim", "pass")}
    row = differential.compare(kernel, Side(MISSED), Side(MISSED))
    assert (row.agreement, row.flag) == (AGREE, "")


def test_a_right_kernel_must_pass_on_both():
    assert differential.compare(_right(), Side(PASS), Side(PASS)).flag == ""
    row = differential.compare(_right(), Side(FAIL), Side(PASS))
    assert row.agreement == SIM_ONLY and row.flag == "a right kernel fails on the simulator"


def test_without_a_gpu_nothing_is_compared_and_nothing_flagged():
    row = differential.compare(_wrong("one_sum_per_lane"), Side(CAUGHT), Side(NO_GPU))
    assert (row.agreement, row.flag, row.why) == (NOT_COMPARED, "", "the GPU: no GPU")


def test_the_tables_round_trip_and_merge():
    rows = [differential.compare(_wrong("every_lane_writes"), Side(CAUGHT), Side(MISSED)),
            differential.compare(_wrong("one_sum_per_lane"), Side(CAUGHT), Side(MISSED))]
    one, two = differential.Table(rows[:1], "H200 (sm_90)", 10.0), differential.Table(rows[1:], "H200 (sm_90)", 12.0)
    merged = differential.merge([differential.from_json(differential.to_json(t)) for t in (two, one)])
    assert [r.id for r in merged.rows] == ["p24/every_lane_writes", "p24/one_sum_per_lane"]
    assert merged.seconds == 12.0 and len(merged.flagged()) == 1
    text = differential.to_markdown(merged)
    assert "| p24 | 2 | 0 | 2 | 0 | 0 | 1 | 2 / 0 of 2 | 0 / 0 of 0 |" in text
    assert "| p24/every_lane_writes | caught | missed | simulator only | On a GPU the values are right" in text
    assert "| p24/one_sum_per_lane | caught | missed | simulator only | **simulator only, and its wrong.toml" in text


def test_recorded_runs_merged_keep_a_kernels_latest_row_and_add_their_times():
    """--again over two runs that both hold a kernel (p35 was run on 2026-11-28 and again
    on 2026-11-29): it is counted once, with the later run's verdicts."""
    old = differential.Table([differential.compare(_wrong("every_lane_writes"), Side(CAUGHT), Side(CAUGHT))],
                             "H200 (sm_90)", 10.0)
    new = differential.Table([differential.compare(_wrong("every_lane_writes"), Side(CAUGHT), Side(MISSED)),
                              differential.compare(_wrong("one_sum_per_lane"), Side(CAUGHT), Side(MISSED))],
                             "H200 (sm_90)", 12.0)
    merged = differential.merge([old, new], one_after_another=True)
    assert [(r.id, r.gpu.verdict) for r in merged.rows] == [("p24/every_lane_writes", MISSED),
                                                            ("p24/one_sum_per_lane", MISSED)]
    assert merged.seconds == 22.0


def test_the_tool_refuses_a_name_that_is_no_puzzle_or_kernel():
    done = subprocess.run([sys.executable, str(REPO / "tools/differential.py"), "p24/no_such_kernel"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and "no such puzzle or kernel: p24/no_such_kernel" in done.stderr


@pytest.mark.slow
def test_the_simulator_column_for_p01_and_p24(tmp_path: Path):
    """Every wrong kernel of p01 and p24 is caught on the simulator and p24's right kernel
    passes there; without a GPU the GPU column says so and nothing is compared or flagged.
    Through the command line, as on a GPU host: JSON and Markdown written, exit 0. In CI,
    p24 alone (p01's wrong kernels are test_curriculum's there, a sample each commit)."""
    puzzles = ("p24",) if scope.ci() else ("p01", "p24")
    out_json, out_md = tmp_path / "d.json", tmp_path / "d.md"
    done = subprocess.run([sys.executable, str(REPO / "tools/differential.py"), *puzzles, "--gpus", "0",
                           "--json", str(out_json), "--markdown", str(out_md)],
                          capture_output=True, text=True, cwd=REPO, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out_json.read_text())
    rows = {r["id"]: r for r in data["rows"]}
    wrong = {k.id for p in puzzles for k in curriculum.wrong_kernels(catalog.load(p, REPO), REPO)}
    right = {k.id for p in puzzles for k in curriculum.right_kernels(catalog.load(p, REPO), REPO)}
    assert "p24/output_zeroed_first" in right and set(rows) == wrong | right
    assert {rows[k]["sim"]["verdict"] for k in wrong} == {CAUGHT}, [(k, rows[k]["sim"]) for k in wrong]
    assert {rows[k]["sim"]["verdict"] for k in right} == {PASS}, [(k, rows[k]["sim"]) for k in right]
    assert {r["gpu"]["verdict"] for r in rows.values()} == {NO_GPU}
    assert {r["agreement"] for r in rows.values()} == {NOT_COMPARED} and data["flagged"] == 0
    assert rows["p24/sum_written_twice"]["sim"]["detail"] == "warps: fail [budget@79]; blocks: fail [budget@79]"
    table = out_md.read_text()
    for pid in puzzles:
        n, r = (len([k for k in ids if k.startswith(pid + "/")]) for ids in (wrong, right))
        assert f"| {pid} | {n + r} | 0 | 0 | 0 | {n + r} | 0 | {n} / – of {n} | {r} / – of {r} |" in table


def test_a_check_that_does_not_end_is_stopped_at_the_limit_and_flagged():
    """A kernel that never ends, with a limit shorter than its own run limit: the check is
    stopped (children and all) and its row is an error, flagged, never a verdict."""
    endless = curriculum.WrongKernel("p01", "endless", REPO / "tests/data/endless", "never ends", [])
    side = differential.check_side(REPO, endless, "sim", "off", limit=3)
    assert side.verdict == differential.ERROR and "still going after 3 s" in side.detail
    assert side.seconds < 3 + 10
    row = differential.compare(endless, side, Side(NO_GPU))
    assert row.agreement == NOT_COMPARED and row.flag == "the simulator could not check it"


def test_a_recorded_run_is_judged_again_with_todays_expectations():
    """--again: the H200's verdicts stay, the curriculum's reasons are today's. The run of
    2026-11-28 recorded p35/vector_through_the_tensor as a right kernel failing on the GPU;
    it is a wrong kernel now, which only the GPU (and the PTX rule) catches, and says why."""
    recorded = differential.Row("p35/vector_through_the_tensor", "p35", "right", Side(PASS),
                                Side(FAIL, "fail", "vector: fail [invalid_access@113]"))
    again = differential.recompare(differential.Table([recorded], "NVIDIA H200 (sm_90)", 1.0))
    (row,) = again.rows
    assert (row.kind, row.sim.verdict, row.gpu.verdict, row.agreement) == ("wrong", MISSED, CAUGHT, GPU_ONLY)
    assert row.flag == "" and row.why.startswith("The simulator runs the CPU build")
    gone = differential.Row("p35/no_such_kernel", "p35", "wrong", Side(CAUGHT), Side(CAUGHT))
    assert differential.recompare(differential.Table([gone], "x", 1.0)).rows == []
