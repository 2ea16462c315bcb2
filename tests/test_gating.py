"""Capability gating: a puzzle this GPU can't run is skipped with the reason, never failed.

The GPU here is a description (name, vendor, compute capability) handed to the
gating logic; nothing is compiled or run for it, except in the slow test."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import put_solution

from workbook.check import engine
from workbook.cli.app import main
from workbook.core import toolchain
from workbook.core.results import Status
from workbook.course import catalog, gating

OLD = toolchain.Gpu(name="Tesla P100", driver="535", compute_capability=6.0)
AMD = toolchain.Gpu(name="MI300X", driver="6.1", compute_capability=None, vendor="amd")
NEW = toolchain.Gpu(name="H100", driver="580", compute_capability=9.0)


def test_gate_reasons(root):
    p18 = catalog.load("p18")
    assert gating.gate(p18, None) is None and gating.gate(p18, NEW) is None
    old = gating.gate(p18, OLD)
    assert old.key == "gate.compute_capability" and old.values["need"] == 7.0 and old.values["have"] == 6.0
    assert gating.gate(p18, AMD).values["need"] == "nvidia"


def test_manifest_without_needs_runs_anywhere(root):
    path = root / "puzzles/p18/puzzle.toml"
    text = path.read_text()
    path.write_text(text[:text.index("[gpu]")] + text[text.index("[[parts]]"):])
    assert gating.gate(catalog.load("p18"), OLD) is None


def test_gpu_target_follows_the_gpu():
    assert NEW.target == "sm_90" and OLD.target == "sm_60"


@pytest.mark.slow
def test_a_gated_gpu_is_skipped_not_failed(root, monkeypatch):
    monkeypatch.setattr(toolchain, "gpu", lambda: OLD)
    monkeypatch.setenv("WORKBOOK_GPU_TARGET", "sm_90")  # still compile the kernels for a GPU
    put_solution(root, "p18")
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(seed=1, quick=True))
    kernels = result.parts[0].kernels
    assert kernels["gpu"].status == Status.SKIPPED and kernels["gpu"].reasons[0].key == "reason.gate"
    assert kernels["cpu"].status == Status.PASS and kernels["sim"].status == Status.PASS
    assert result.status == Status.PASS


def test_list_and_doctor_mark_puzzles_this_gpu_cannot_run(root, monkeypatch, capsys):
    monkeypatch.setattr(toolchain, "gpu", lambda: OLD)
    with pytest.raises(SystemExit):
        main(["list"])
    assert "can't run" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["doctor"])
    assert "p18: needs compute capability 7.0" in capsys.readouterr().out


def test_tensor_cores_need_ampere(root, monkeypatch, capsys):
    """p33's mma.sync with tf32 needs sm_80: a Turing GPU (7.5) is told so in `list`; an
    Ampere or Hopper one runs it."""
    turing = toolchain.Gpu(name="Tesla T4", driver="535", compute_capability=7.5)
    p33 = catalog.load("p33")
    assert gating.gate(p33, turing).values["need"] == 8.0 and gating.gate(p33, NEW) is None
    monkeypatch.setattr(toolchain, "gpu", lambda: turing)
    with pytest.raises(SystemExit):
        main(["list"])
    rows = [row for row in capsys.readouterr().out.splitlines() if row.strip().startswith("p33 ")]
    assert len(rows) == 1 and "can't run" in rows[0], rows

def test_clusters_need_a_hopper_gpu(root, monkeypatch, capsys):
    """p34's thread-block clusters exist from sm_90 on: an A100 (8.0) runs p28's async copies
    but not p34, and `list` says so; an H100 runs both."""
    ampere = toolchain.Gpu(name="A100", driver="580", compute_capability=8.0)
    p28, p34 = catalog.load("p28"), catalog.load("p34")
    assert gating.gate(p28, ampere) is None and gating.gate(p34, NEW) is None
    why = gating.gate(p34, ampere)
    assert why.key == "gate.compute_capability" and why.values["need"] == 9.0
    monkeypatch.setattr(toolchain, "gpu", lambda: ampere)
    with pytest.raises(SystemExit):
        main(["list", "--json"])
    rows = {row["id"]: row["gate"] for row in json.loads(capsys.readouterr().out)["puzzles"]}
    assert "9.0" in rows["p34"] and rows["p28"] == ""


ASK = ("import sys\nfrom workbook.core import toolchain\ntoolchain.GPU_DEVICE_NODES = tuple(sys.argv[1:])\n"
       "print(toolchain.gpu() is None, 'max.driver' in sys.modules)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="device nodes are Linux's")
def test_without_a_gpu_device_node_max_is_not_asked(tmp_path):
    """No NVIDIA, AMD or WSL device node: no GPU, said without importing MAX's driver (0.2 s
    warm, 0.9 s cold on a laptop, all before the build of the first verdict could start).
    With one, MAX is asked (and here, without a GPU, says there is none)."""
    env = {k: v for k, v in os.environ.items() if k != "WORKBOOK_NO_GPU"}
    absent = subprocess.run([sys.executable, "-c", ASK, str(tmp_path / "nvidia[0-9]*")], env=env,
                            capture_output=True, text=True, check=True).stdout.split()
    assert absent == ["True", "False"]
    (tmp_path / "nvidia0").touch()
    present = subprocess.run([sys.executable, "-c", ASK, str(tmp_path / "nvidia[0-9]*")], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
    assert present[1] == "True"


def test_a_gpu_max_found_is_kept_for_the_boot_and_asked_again_when_what_decides_it_changes(tmp_path, monkeypatch):
    """Asking MAX costs 0.3-0.4 s before every check's first build on a GPU host: a GPU it
    found is kept for the rest of the boot; another CUDA_VISIBLE_DEVICES, another driver or
    a damaged file means asking again; "no GPU" is never kept; doctor always asks."""
    if not toolchain.BOOT_ID.exists():
        pytest.skip("no boot id here: nothing is kept")
    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBOOK_NO_GPU", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    (tmp_path / "nvidia0").touch()
    monkeypatch.setattr(toolchain, "GPU_DEVICE_NODES", (str(tmp_path / "nvidia[0-9]*"),))
    driver = tmp_path / "version"
    driver.write_text("NVRM version: 580.1\n")
    monkeypatch.setattr(toolchain, "NVIDIA_DRIVER", driver)
    answers = [NEW]
    asked = []
    monkeypatch.setattr(toolchain, "_ask_max", lambda: asked.append(1) or answers[0])

    def look() -> toolchain.Gpu | None:
        toolchain.gpu.cache_clear()  # as a new command would
        return toolchain.gpu()

    try:
        assert look() == NEW and len(asked) == 1
        assert look() == NEW and len(asked) == 1  # kept: MAX not asked
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
        assert look() == NEW and len(asked) == 2
        driver.write_text("NVRM version: 590.2\n")
        assert look() == NEW and len(asked) == 3
        kept = max((tmp_path / "cache").rglob("gpu/*.json"), key=lambda p: p.stat().st_mtime_ns)  # this driver's
        for damaged in ("{", '{"name": "H100"}', "[]"):
            kept.write_text(damaged)
            assert look() == NEW
        assert len(asked) == 6
        answers[0] = None
        assert toolchain.ask_gpu_afresh() is None and len(asked) == 7  # doctor: asked, whatever was kept
        assert look() is None and len(asked) == 8  # and "no GPU" was not kept
    finally:
        toolchain.gpu.cache_clear()
