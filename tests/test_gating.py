"""Capability gating: a puzzle this GPU can't run is skipped with the reason, never failed.

The GPU here is a description (name, vendor, compute capability) handed to the
gating logic; nothing is compiled or run for it."""

from __future__ import annotations

import pytest
from conftest import put_solution
from typer.testing import CliRunner

from workbook import catalog, engine, toolchain
from workbook.cli import app
from workbook.results import Status

OLD = toolchain.Gpu(name="Tesla P100", driver="535", compute_capability=6.0)
AMD = toolchain.Gpu(name="MI300X", driver="6.1", compute_capability=None, vendor="amd")
NEW = toolchain.Gpu(name="H100", driver="580", compute_capability=9.0)


def test_gate_reasons(root):
    p18 = catalog.load("p18")
    assert engine.gpu_gate(p18, None) == ""
    assert engine.gpu_gate(p18, NEW) == ""
    assert "compute capability 7.0" in engine.gpu_gate(p18, OLD) and "6.0" in engine.gpu_gate(p18, OLD)
    assert "nvidia" in engine.gpu_gate(p18, AMD)


def test_manifest_without_needs_runs_anywhere(root):
    path = root / "puzzles/p18/puzzle.toml"
    text = path.read_text()
    path.write_text(text[:text.index("[gpu]")] + text[text.index("[[parts]]"):])
    assert engine.gpu_gate(catalog.load("p18"), OLD) == ""


def test_gpu_target_follows_the_gpu():
    assert NEW.target == "sm_90" and OLD.target == "sm_60"


@pytest.mark.slow
def test_a_gated_gpu_is_skipped_not_failed(root, monkeypatch):
    monkeypatch.setattr(toolchain, "gpu", lambda: OLD)
    monkeypatch.setenv("WORKBOOK_GPU_TARGET", "sm_90")  # still compile the kernels for a GPU
    put_solution(root, "p18")
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(seed=1))
    gpu = result.devices["gpu"]
    assert gpu.status == Status.SKIPPED and "compute capability" in gpu.reason
    assert result.devices["cpu"].status == Status.PASS
    assert result.status == Status.PASS


def test_list_and_doctor_mark_puzzles_this_gpu_cannot_run(root, monkeypatch):
    monkeypatch.setattr(toolchain, "gpu", lambda: OLD)
    listing = CliRunner().invoke(app, ["list"])
    assert "can't run" in listing.output
    doctor = CliRunner().invoke(app, ["doctor"])
    assert "p18: needs compute capability 7.0" in doctor.output
