"""The compute-sanitizer parser, on output recorded from the real tool on an H100
(tests/data/sanitizer/), its policy, and the sanitizer run on a real GPU where there is one."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import put_solution, put_wrong

from workbook.check import engine
from workbook.core.results import Status
from workbook.course import catalog
from workbook.run import sanitizer

DATA = Path(__file__).parent / "data" / "sanitizer"
LEARNER = {"op/softmax.mojo": "puzzles/p18/op/softmax.mojo", "softmax_graph.py": "puzzles/p18/softmax_graph.py"}


def test_racecheck_of_a_missing_barrier_names_the_kernel_and_file():
    findings = sanitizer.parse("racecheck", (DATA / "racecheck_missing_barrier.log").read_text(), LEARNER)
    assert len(findings) == 1
    (race,) = findings
    assert race.kind == "race_shared" and race.message.key == "finding.race_raw"
    assert race.kernel == "softmax_gpu_kernel"
    assert race.file == "puzzles/p18/op/softmax.mojo"
    assert race.count == 2
    assert race.detail == "Write Thread (32,0,0); Read Thread (0,0,0)"


def test_a_warp_level_warning_is_a_race_like_an_error():
    """Threads of one warp are not in lockstep since Volta: racecheck's warning is a real race."""
    log = (DATA / "racecheck_warp_warning.log").read_text()
    (race,) = sanitizer.parse("racecheck", log, LEARNER)
    assert race.kind == "race_shared" and race.kernel == "softmax_gpu_kernel" and race.count == 2


def test_a_summary_that_counts_problems_never_passes_unread():
    log = "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n"
    (found,) = sanitizer.parse("racecheck", log, LEARNER)
    assert found.kind == "unparsed" and found.message.values["n"] == 3


def test_clean_logs_have_no_findings():
    for name in ("memcheck_clean.log", "racecheck_clean.log"):
        assert sanitizer.parse(name.split("_")[0], (DATA / name).read_text(), LEARNER) == []


def test_memcheck_out_of_bounds_write_with_line_numbers():
    """A CUDA C++ kernel built with -lineinfo: memcheck gives the file and line."""
    log = (DATA / "memcheck_out_of_bounds.log").read_text()
    (finding,) = sanitizer.parse("memcheck", log, {"oob.cu": "oob.cu"})
    assert finding.kind == "invalid_access"
    assert finding.message.values["what"] == "Invalid __global__ write of size 4 bytes"
    assert (finding.kernel, finding.file, finding.line) == ("write_past_end", "oob.cu", 4)
    assert finding.detail == "by thread (128,0,0) in block (0,0,0)"


def test_memcheck_of_p18_writing_past_the_end():
    """The failed CUDA calls that follow the bad write are its echoes and are dropped."""
    log = (DATA / "memcheck_mojo_past_end.log").read_text()
    (finding,) = sanitizer.parse("memcheck", log, LEARNER)
    assert finding.kind == "invalid_access"
    assert (finding.kernel, finding.file) == ("softmax_gpu_kernel", "puzzles/p18/op/softmax.mojo")
    assert "by thread (127,0,0)" in finding.detail


def test_memcheck_runs_without_maxs_memory_pool():
    assert sanitizer.environment("memcheck") == {"MODULAR_DEVICE_CONTEXT_MEMORY_MANAGER_SIZE": "0"}
    assert sanitizer.environment("racecheck") == {}


def test_kernel_names_map_to_the_learners_module():
    name, file = sanitizer._kernel_name("op_softmax_softmax_gpu_kernel6A6A6A6AcB_062c+0x1a0", LEARNER)
    assert (name, file) == ("softmax_gpu_kernel", "puzzles/p18/op/softmax.mojo")
    assert sanitizer._kernel_name("other_kernel+0x10", LEARNER) == ("other_kernel", "")


def test_the_policy(monkeypatch):
    monkeypatch.setattr(sanitizer, "locate", lambda: Path("/cuda/bin/compute-sanitizer"))
    assert sanitizer.choose("off", True, set()) == ((), None)
    assert sanitizer.choose("auto", True, set())[0] == ("memcheck", "racecheck")  # both pass plain runs
    assert sanitizer.choose("auto", True, {"memcheck"})[0] == ("racecheck",)  # once per content
    assert sanitizer.choose("auto", True, {"memcheck", "racecheck"})[1].key == "sanitizer.clean_before"
    assert sanitizer.choose("all", True, {"memcheck", "racecheck"})[0] == sanitizer.TOOLS
    assert sanitizer.choose("all", False, set())[1].key == "sanitizer.needs_gpu"
    assert sanitizer.choose("auto", False, set()) == ((), None)
    monkeypatch.setattr(sanitizer, "locate", lambda: None)
    assert sanitizer.choose("auto", True, set())[1].key == "sanitizer.missing"


def _check_sanitized(root, variant: str | None):
    put_solution(root, "p18")
    if variant:
        put_wrong(root, "p18", variant)
    return engine.check_puzzle(catalog.load("p18"), engine.Options(sanitize="all", seed=4))


@pytest.mark.gpu
@pytest.mark.skipif(sanitizer.locate() is None, reason="needs compute-sanitizer")
def test_sanitizer_reports_a_missing_barrier_and_passes_the_solution(root):
    clean = _check_sanitized(root, None).parts[0].kernels["gpu"]
    assert clean.status == Status.PASS and clean.findings == []
    racy = _check_sanitized(root, "missing_barrier").parts[0].kernels["gpu"]
    assert racy.status == Status.FAIL
    assert any(f.tool == "racecheck" and f.kind == "race_shared" for f in racy.findings)


@pytest.mark.gpu
@pytest.mark.skipif(sanitizer.locate() is None, reason="needs compute-sanitizer")
def test_sanitizer_reports_a_write_past_the_end(root):
    past_end = _check_sanitized(root, "writes_past_end").parts[0].kernels["gpu"]
    assert past_end.status == Status.FAIL
    assert any(f.tool == "memcheck" and f.kind == "invalid_access" for f in past_end.findings)
