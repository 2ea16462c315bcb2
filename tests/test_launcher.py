"""The launch plan and the generated launcher, without compiling: what the manifest says
becomes exactly one launch per case, with the outputs filled before it."""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np
import pytest

from workbook.compile import launcher
from workbook.course import catalog


def plan_for(pid: str, seed: int = 1, seeded: bool = True):
    from workbook.check.engine import load_reference

    puzzle = catalog.load(pid)
    ref = load_reference(puzzle)
    rng = np.random.default_rng(seed)
    parts = []
    for part in puzzle.parts:
        cases = [c for c in ref.cases(rng, part.id) if seeded or not c.get("seeded")]
        parts.append((part, cases, [ref.expected(c, part.id) for c in cases]))
    return puzzle, parts, launcher.make_plan(puzzle, parts)


def function(text: str, name: str) -> str:
    """A generated function's text, up to the next one."""
    start = text.index(f"def {name}(")
    return text[start:text.find("\ndef ", start + 1)]


def test_every_case_gets_its_launch_dims_and_buffers(root):
    _, parts, plan = plan_for("p18")
    (part, cases, _), = parts
    assert len(plan.cases) == len(cases)
    spec = plan.cases[0]
    assert spec.launches[0].grid == (1, 1, 1) and spec.launches[0].block == (128, 1, 1)
    assert spec.buffers["x"].shape == (128,) and spec.buffers["y"].role == "output"
    assert spec.buffers["x"].offset == 0 and plan.cases[1].buffers["x"].offset == 512


def test_generated_code_fills_outputs_then_launches_each_case(root):
    _, _, plan = plan_for("p18")
    gpu = launcher.generate(plan, "gpu")
    assert "import op.softmax as puzzle" in gpu
    assert 'comptime assert puzzle.BLOCK_DIM_X == 128' in gpu
    body = function(gpu, "case_0")
    assert body.index("poison_device(v_y, False)") < body.index("puzzle.softmax_gpu_kernel[128, DType.float32]")
    assert "grid_dim=(1, 1, 1), block_dim=(128, 1, 1)" in body
    host = launcher.generate(plan, "host")
    assert "puzzle.softmax_cpu_kernel[128, DType.float32](" in host and "if not launch(Sim_" in host
    cpu = function(host, "case_0_cpu")
    assert cpu.index("wb.rep_begin(0)") < cpu.index("wb.cpu_begin()") < cpu.index("puzzle.softmax_cpu_kernel")
    assert "if not launch(Sim_" not in launcher.generate(plan, "host", with_sim=False)
    # The GPU launcher compiles the CPU kernel too (never running it there): a GPU-only call in
    # it is a compile error with its line.
    assert "def case_0_cpu_check():" in gpu and "puzzle.softmax_cpu_kernel[128, DType.float32](" in gpu


def test_the_same_case_of_several_seeds_shares_its_code(root):
    """Cases that differ only in their inputs' place in inputs.bin (the same case of several
    seeds) share one function, called under each case's own index with its own offsets:
    code per case made a launcher of 10 seeds build twice as long as one of a single seed."""
    from workbook.check.engine import load_reference

    puzzle = catalog.load("p01")
    ref, part = load_reference(puzzle), puzzle.parts[0]
    cases = [c for seed in (1, 2, 3) for c in ref.cases(np.random.default_rng(seed), part.id)]
    plan = launcher.make_plan(puzzle, [(part, cases, [ref.expected(c, part.id) for c in cases])])
    shapes = {spec.buffers["a"].shape for spec in plan.cases}
    assert len(shapes) < len(plan.cases)  # the fixed cases repeat with every seed
    for which, suffix, index in (("host", "_sim", ""), ("gpu", "", r"h, ctx, (\d+), ")):
        text = launcher.generate(plan, which)
        assert len(re.findall(rf"^def case_\d+{suffix}\(", text, re.M)) == len(shapes), which
        for spec in plan.cases:
            call = re.search(rf"wants\({spec.index}\):\n.*\({spec.index}, {len(plan.cases)}\)\n"
                             rf"\s*case_(\d+){suffix}\({index}(\d+)\)", text)
            assert call, (which, spec.index)
            owner = plan.cases[int(call.group(1))]
            assert owner.buffers["a"].shape == spec.buffers["a"].shape
            assert int(call.group(call.lastindex)) == spec.buffers["a"].offset
            if index:
                assert int(call.group(2)) == spec.index  # its outputs are saved as its own


def test_sums_are_zeroed_and_the_kernel_runs_twice(root):
    _, _, plan = plan_for("p22")
    gpu = launcher.generate(plan, "gpu")
    body = function(gpu, "case_0")
    assert "poison_device(v_grad_weight, True)" in body and "poison_device(v_output, False)" in body
    assert body.count("ctx.enqueue_function[") == 2


def test_outputs_come_back_by_name_and_sums_are_halved(root, tmp_path):
    _, _, plan = plan_for("p22")
    spec = plan.cases[0]
    raw = bytearray()
    for rep in (1, 0):  # in any order: each output comes behind a header naming it
        for k, buf in enumerate(spec.outputs()):
            raw += np.array([0, rep, k, buf.nbytes], dtype=np.int32).tobytes()
            raw += np.full(buf.shape, rep + 1.0, dtype=np.float32).tobytes()
    (tmp_path / "out.bin").write_bytes(bytes(raw))
    got = launcher.read_outputs(plan, tmp_path / "out.bin", [0], 2)
    names = [b.name for b in spec.outputs()]
    assert got[0][1][names.index("output")][0, 0, 0] == 2.0
    assert got[0][1][names.index("grad_bias")][0] == 1.0  # halved: the kernel ran twice


def test_a_case_that_stopped_keeps_no_values_and_never_another_cases(root, tmp_path):
    """The simulator stopped case 1 (a barrier some threads never reach) before it wrote
    anything: its values are missing, and case 2's stay with case 2."""
    _, _, plan = plan_for("p08")
    raw = bytearray()
    for case in (0, 2):
        for rep in range(2):
            buf = plan.cases[case].outputs()[0]
            raw += np.array([case, rep, 0, buf.nbytes], dtype=np.int32).tobytes()
            raw += np.full(buf.shape, case, dtype=np.float32).tobytes()
    (tmp_path / "out.bin").write_bytes(bytes(raw))
    got = launcher.read_outputs(plan, tmp_path / "out.bin", [0, 1, 2], 2)
    assert sorted(got) == [0, 2] and got[2][0][0][0] == 2.0


def test_kernel_parameters_that_are_sizes_become_numbers(root):
    assert launcher._kernel("scan[size, ceildiv(size, TPB)]", {"size": 13, "TPB": 4}) == "puzzle.scan[13, 4]"
    assert launcher._kernel("soft[size, DType.float32]", {"size": 8}) == "puzzle.soft[8, DType.float32]"
    assert launcher._kernel("plain", {}) == "puzzle.plain"


def test_a_reference_that_forgets_an_output_is_the_authors_mistake(root):
    puzzle, parts, _ = plan_for("p01")
    part, cases, expected = parts[0]
    with pytest.raises(launcher.PlanError, match="no expected 'output'"):
        launcher.make_plan(puzzle, [(part, cases, [{} for _ in expected])])


def test_shapes_do_not_depend_on_the_seed_but_in_seeded_cases(root):
    for puzzle in catalog.all_puzzles():
        one = launcher.generate(plan_for(puzzle.id, 1, seeded=False)[2], "gpu")
        two = launcher.generate(plan_for(puzzle.id, 2, seeded=False)[2], "gpu")
        assert one == two, puzzle.id


def test_builds_are_keyed_by_where_the_compiler_is(root, monkeypatch, tmp_path):
    """A built program loads Mojo's runtime from the environment that built it: one from a
    deleted virtual environment died with 'cannot open shared object file' (exit 127)."""
    from workbook.compile import build
    from workbook.core import toolchain

    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))
    puzzle = catalog.load("p01")
    here = build.sources(puzzle).dir
    assert build.sources(puzzle).dir == here  # the same toolchain reuses it
    other = tmp_path / "another-venv" / "bin" / "mojo"
    other.parent.mkdir(parents=True)
    other.touch()
    monkeypatch.setattr(toolchain, "mojo_binary", lambda: other)
    assert build.sources(puzzle).dir != here


def test_a_host_launch_calls_the_learners_function_with_ctx(root):
    """p23's functions launch their own kernels (elementwise): the GPU launcher calls
    them with its DeviceContext, the simulator's with a CPU one, under their name."""
    puzzle, _, plan = plan_for("p23")
    assert all(launch.host for part in puzzle.parts for launch in part.launches)
    spec = next(s for s in plan.cases if s.part.id == "simd" and s.params["size"] == 9003)
    assert spec.launches[0].block == (256, 1, 1) and spec.launches[0].grid == (9, 1, 1)
    gpu = launcher.generate(plan, "gpu")
    body = function(gpu, f"case_{spec.index}")
    assert "puzzle.simd_add[9003](" in body and ", ctx)" in body and "enqueue_function" not in body
    host = launcher.generate(plan, "host")
    sim = function(host, f"case_{spec.index}_sim")
    assert 'DeviceContext(api="cpu")' in sim and 'host_launch("simd_add")' in sim
    assert sim.index('host_launch("simd_add")') < sim.index("puzzle.simd_add[9003](")
    assert "struct Sim_" not in host


def test_cases_are_split_so_the_runs_own_files_stay_under_the_file_limit(root):
    """20 seeds of a large case once filled outputs.bin to the learner's file limit and lost
    the later cases without a word: the runs are split by what they will write."""
    from workbook.run.kernelrun import chunks, written

    _, _, plan = plan_for("p18")
    every = list(range(len(plan.cases)))
    per_case = [written(plan, i, 2, "sim") for i in every]
    outputs = sum(o.nbytes for o in plan.cases[0].outputs())
    threads = sum(np.prod(la.grid) * np.prod(la.block) for la in plan.cases[0].launches)
    assert per_case[0] >= 2 * outputs + threads * 32  # both repeats' outputs, and each thread's counters
    assert written(plan, 0, 2, "gpu") < per_case[0]
    cap = max(per_case) * 2
    runs = chunks(plan, every, 2, "sim", cap)
    assert [i for run in runs for i in run] == every  # every case, once, in order
    assert len(runs) > 1
    for run in runs:
        assert len(run) == 1 or sum(per_case[i] for i in run) <= cap
    assert chunks(plan, every, 2, "sim", 0) == [every]  # no limit: one run
    assert chunks(plan, every, 2, "sim", 1) == [[i] for i in every]  # each alone, still run

def test_a_cluster_launch_says_its_cluster_to_the_gpu_and_to_the_simulator(root):
    """p34 groups its blocks into clusters of 4: the GPU launch passes cluster_dim, the
    simulator's launch the same shape, and a grid that is not a whole number of clusters is
    the author's mistake, found before anything is built."""
    puzzle, parts, plan = plan_for("p34")
    assert all(launch.cluster == (4, 1, 1) for spec in plan.cases for launch in spec.launches)
    gpu = launcher.generate(plan, "gpu")
    assert "from max.gpu.host import DeviceContext, Dim" in gpu
    assert gpu.count("cluster_dim=Dim(4, 1, 1),") == len(plan.cases)
    host = launcher.generate(plan, "host")
    assert host.count('rep % 2 == 1, "cluster_sum", Dim3(4, 1, 1)):') == len(parts[0][1])
    # Launches without clusters are written as before (no Dim import, no cluster argument).
    _, _, plain = plan_for("p18")
    assert "Dim" not in launcher.generate(plain, "gpu").split("def ")[0]
    part = dataclasses.replace(puzzle.parts[0], launches=(dataclasses.replace(puzzle.parts[0].launches[0],
                                                                              cluster=("3",)),))
    with pytest.raises(launcher.PlanError, match="whole number of clusters"):
        launcher.make_plan(puzzle, [(part, parts[0][1], parts[0][2])])


def test_a_gpu_launcher_is_allowed_memory_for_the_buffers_it_moves(root):
    from workbook.run.kernelrun import own_memory_mb

    _, _, plan = plan_for("p21")
    every = list(range(len(plan.cases)))
    moved = plan.input_bytes + sum(b.nbytes for spec in plan.cases for b in spec.outputs())
    assert own_memory_mb(plan, every, "gpu") == 4 * moved // (1 << 20)
    assert own_memory_mb(plan, [], "gpu") == 4 * plan.input_bytes // (1 << 20)  # the whole file is read
    assert own_memory_mb(plan, every, "sim") == 0  # the simulator's buffers are the kernel's memory


def test_a_gpu_run_is_allowed_the_drivers_own_memory_and_a_tool_its_own(root):
    """The H200's driver held 1.3 GB of shared memory in a p01 launcher, which a class's
    512 MB limit stopped before its kernel ran: it is allowed on top, on the GPU only."""
    from workbook.child import limits
    from workbook.run.kernelrun import TOOL_MEMORY_MB, extra_memory_mb, own_memory_mb

    _, _, plan = plan_for("p21")
    every = list(range(len(plan.cases)))
    assert limits.GPU_RUNTIME_MB >= 1400  # what the H200 host measured (workbook/child/limits.py)
    assert extra_memory_mb(plan, every, "gpu", None) == own_memory_mb(plan, every, "gpu") + limits.GPU_RUNTIME_MB
    assert extra_memory_mb(plan, every, "gpu", ["compute-sanitizer"]) == (
        own_memory_mb(plan, every, "gpu") + limits.GPU_RUNTIME_MB + TOOL_MEMORY_MB)
    assert extra_memory_mb(plan, every, "sim", None) == 0
    assert limits.runtime_allowance_mb("cpu") == 0 and limits.runtime_allowance_mb("gpu") == limits.GPU_RUNTIME_MB


def test_bfloat16_inputs_are_stored_as_their_top_16_bits(root, tmp_path):
    """p36's a and w are bfloat16 on the device: two bytes a value in the inputs file,
    the top half of the float32 the reference gave, and a typed device buffer."""
    _, parts, plan = plan_for("p36", seeded=False)
    (part, cases, _), = parts
    spec = plan.cases[0]
    a = spec.buffers["a"]
    assert a.dtype == "bfloat16" and a.elem == 2 and a.nbytes == 64 * 16 * 2
    assert spec.buffers["output"].dtype == "float32"
    launcher.write_inputs(plan, cases, tmp_path / "inputs.bin")
    raw = (tmp_path / "inputs.bin").read_bytes()
    stored = np.frombuffer(raw, dtype=np.uint16, count=a.count, offset=a.offset)
    back = (stored.astype(np.uint32) << 16).view(np.float32).reshape(a.shape)
    assert np.array_equal(back, cases[0]["inputs"]["a"])
    assert "h.device_input[DType.bfloat16]" in launcher.generate(plan, "gpu")


def test_a_value_bfloat16_cannot_hold_is_the_references_mistake(root, tmp_path):
    _, parts, plan = plan_for("p36", seeded=False)
    (part, cases, _), = parts
    cases[0]["inputs"]["a"] = cases[0]["inputs"]["a"] + np.float32(2 ** -12)  # past bfloat16's 8 bits
    with pytest.raises(launcher.PlanError, match="'a'.*bfloat16"):
        launcher.write_inputs(plan, cases, tmp_path / "inputs.bin")


HARNESS_PROGRAM = """
from wbio import Harness

def main() raises:
    var h = Harness()
    var total = {total}
{cases}
    var times = List[Int]()
    times.append(1500)
    times.append(1250)
    if h.asked(2):
        h.record_times(2, times)
    h.finish()
"""


@pytest.mark.slow
def test_the_gpu_harness_writes_what_the_workbook_reads(tmp_path):
    """The GPU launcher's harness (wbio.c, through wbio.mojo) built for the host: each
    selected case's input saved as its output comes back where read_outputs looks, the
    phase names the last case, the timed launches reach result.json, and a launcher
    started wrongly says why and fails. (Only the device copies need a GPU.)"""
    import subprocess

    from workbook.child import protocol
    from workbook.child.processes import Children
    from workbook.compile import build
    from workbook.core import settings, toolchain

    _, parts, plan = plan_for("p01")
    (part, cases, _), = parts
    lines = []
    for spec in plan.cases:
        buf = spec.buffers["a"]
        lines += [f"    if h.wants({spec.index}):", f"        h.phase({spec.index}, total)",
                  "        for rep in range(h.repeats):",
                  f"            h.save(h.input({buf.offset}, {buf.nbytes}), {buf.nbytes}, {spec.index}, rep, 0)"]
    source = tmp_path / "harness.mojo"
    source.write_text(HARNESS_PROGRAM.format(total=len(plan.cases), cases="\n".join(lines)))
    with Children() as children:
        harness, why = build.runtime_object(children, build.GPU_HARNESS)
    assert harness is not None, why
    made = subprocess.run([str(toolchain.mojo_binary()), "build", "-I", str(settings.MOJO_SUPPORT), "-Xlinker",
                           str(harness), str(source), "-o", str(tmp_path / "harness")],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    run = tmp_path / "run"
    run.mkdir()
    launcher.write_inputs(plan, cases, run / protocol.INPUTS_BIN)
    done = subprocess.run([str(tmp_path / "harness"), str(run), "gpu", "2", "60", "0,2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = launcher.read_outputs(plan, run / protocol.OUTPUTS_BIN, [0, 2], 2)
    assert sorted(got) == [0, 2]
    for index in (0, 2):
        for rep in (0, 1):
            assert np.array_equal(got[index][rep][0], cases[index]["inputs"]["a"])
    assert protocol.read_phase(run)[:2] == ("running", [3, len(plan.cases)])
    result = protocol.read_result(run)
    assert result["status"] == "ok" and result["times_2"] == [1500, 1250] and result["seconds"] >= 0

    wrongly = subprocess.run([str(tmp_path / "harness"), str(run)], capture_output=True, text=True, timeout=60)
    assert wrongly.returncode != 0 and "usage: launcher RUN_DIR" in wrongly.stderr
    # Under the workbook: everything through the descriptors WORKBOOK_FDS names, nothing in the folder.
    from workbook.child.channel import Channel

    for name in (protocol.OUTPUTS_BIN, protocol.RESULT, protocol.PHASE):
        (run / name).unlink()
    with Channel("outputs", "result", "phase") as channel:
        handed = subprocess.run([str(tmp_path / "harness"), str(run), "gpu", "2", "60", "0,2"],
                                capture_output=True, text=True, timeout=60, pass_fds=channel.fds(),
                                env={**os.environ, "WORKBOOK_FDS": channel.env()})
        assert handed.returncode == 0, handed.stderr
        assert not any((run / n).exists() for n in (protocol.OUTPUTS_BIN, protocol.RESULT, protocol.PHASE))
        got = launcher.read_outputs(plan, channel["outputs"].read(launcher.outputs_size(plan, [0, 2], 2)), [0, 2], 2)
        assert sorted(got) == [0, 2] and np.array_equal(got[2][1][0], cases[2]["inputs"]["a"])
        assert protocol.read_phase(channel["phase"])[:2] == ("running", [3, len(plan.cases)])
        assert protocol.read_result(channel["result"])["times_2"] == [1500, 1250]
        closed = subprocess.run([str(tmp_path / "harness"), str(run), "gpu", "1", "60"], capture_output=True,
                                text=True, timeout=60, env={**os.environ, "WORKBOOK_FDS": "outputs:77"})
        assert closed.returncode != 0 and "WORKBOOK_FDS names a descriptor that is not open" in closed.stderr

    (run / protocol.INPUTS_BIN).write_bytes(b"\0" * 8)  # shorter than the plan says
    short = subprocess.run([str(tmp_path / "harness"), str(run), "gpu", "1", "60"],
                           capture_output=True, text=True, timeout=60)
    assert short.returncode != 0 and "inputs.bin is shorter than the plan says" in short.stderr
    (run / protocol.INPUTS_BIN).unlink()
    missing = subprocess.run([str(tmp_path / "harness"), str(run), "gpu", "1", "60"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and f"could not read {run / protocol.INPUTS_BIN}" in missing.stderr


def test_a_gpu_run_past_its_limit_names_the_case_it_was_in_and_its_kernels(root):
    """Issue 39: the GPU cannot say which thread hung, but the launcher's last phase says
    which case ran; the timeout names that case's kernels (kernelrun._gpu_timeout)."""
    from workbook.child import protocol
    from workbook.child.channel import Channel
    from workbook.run import kernelrun

    _, _, plan = plan_for("p29")
    stencil = next(c for c in plan.cases if c.part.id == "stencil")
    channel = Channel(*protocol.LAUNCHER_FILES, "log")
    try:
        assert kernelrun._gpu_timeout(channel, plan) is None  # it never said: nothing to name
        os.write(channel["phase"].fd, f"running {stencil.index + 1} {len(plan.cases)}".encode())
        found = kernelrun._gpu_timeout(channel, plan)
    finally:
        channel.close()
    assert found == {"case": stencil.index, "kernels": [launch.name for launch in stencil.launches]}
    assert found["kernels"] and all(found["kernels"])
