"""The verdict channel (issue 38): what decides a verdict reaches the workbook through
descriptors it opened, never through a path the submitted code can write.

Each attack of the issue runs for real (real compiles, the real simulator, real MAX, real
bwrap), through the command a learner or an instructor runs, in a process of its own (so a
hang is a failed test, not a stuck one), whose memory is watched. Each test asserts the
verdict, that nothing leaked, and that nothing the run started is left running.

The attacks call the C library from the kernel (`external_call`): a learner's own `run`
allows it; `grade` may refuse such code before it is compiled (the source guard), and
then the attack fails earlier, which these tests accept where they grade.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from conftest import REPO, put_solution

from workbook.child import sandbox

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")

# A kernel of p01 that breaks its rules (thread 0 writes every element: the one-write-per-
# thread budget; thread 1 writes element 0 too: a race), then, from thread 0 on the CPU,
# COMMAND through the C library's system().
KERNEL = '''
from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major
from std.ffi import external_call
from std.sys import is_gpu

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())


def add_ten[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = thread_idx.x
    BODY
    comptime if not is_gpu():
        if i == 0:
            var command = COMMAND
            _ = external_call["system", Int32](command.unsafe_ptr())
            AFTER
'''
BREAKS_RULES = '''if i == 0:
        for j in range(size):
            output[j] = a[j] + 10
    if i == 1:
        output[0] = a[0] + 10'''
RIGHT = "output[i] = a[i] + 10"
WRONG = "output[i] = a[i] + 11"

# The forgery: once, the verdict the workbook used to read from result.json replaced by a pass
# (made read-only, so the launcher's own could not overwrite it), the counts and maps emptied;
# and in the background, the same again once the launcher wrote its own result there.
FORGE = r"""[ -e .forged ] && exit 0; touch .forged
F='{"status": "ok", "message": "", "findings": []}'
forge() { printf "$F" > result.json; chmod 444 result.json; : > counters.bin; : > writers.bin; }
forge
PROC
( i=0; while [ $i -lt 200000 ]; do
    if grep -q unpriced result.json 2>/dev/null; then chmod 644 result.json; forge; exit 0; fi; i=$((i+1))
  done ) >/dev/null 2>&1 &
"""
# The launcher's own descriptors, reached through /proc: refused to any other process of a
# user who is not root (the launcher is not dumpable), which every sandbox's user is.
THROUGH_PROC = 'for f in /proc/$PPID/fd/*; do : > "$f"; done 2>/dev/null'

# p18's graph, which first replaces the workbook's check wherever it can find it in the
# process that imports this file, then computes softmax with MAX's own op.
GRAPH_ATTACK = '''
import sys
from pathlib import Path

from max.dtype import DType
from max.graph import DeviceRef, Graph, TensorType, ops


def _nothing_wrong(text, allowed):
    return {"others": [], "missing": [], "outputs_from_op": True}


for _name, _module in list(sys.modules.items()):
    if _name == "__main__" or _name.startswith("workbook"):
        for _attr in ("graph_problems", "check_graph"):
            if hasattr(_module, _attr):
                setattr(_module, _attr, _nothing_wrong)


def load(session, device, kernels: Path, *, size: int):
    where = DeviceRef.from_device(device)
    vector = TensorType(DType.float32, shape=[size], device=where)
    with Graph("softmax", input_types=[vector], custom_extensions=[kernels]) as graph:
        graph.output(ops.softmax(graph.inputs[0]))
    return session.load(graph)
'''


def mojo_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '\\x00"'


def kernel(body: str, command: str, after: str = "") -> str:
    return KERNEL.replace("BODY", body).replace("COMMAND", mojo_string(command)).replace("AFTER", after or "pass")


@dataclass
class Ran:
    code: int
    out: str
    err: str
    seconds: float
    peak_rss: int  # the most memory the workbook's own process held, sampled
    family: list[psutil.Process] = field(default_factory=list)  # every process seen under it

    def doc(self) -> dict:
        """`run --json`'s one document, or `grade --json`'s first line."""
        assert self.out.strip(), self.err[-3000:]
        with contextlib.suppress(ValueError):
            return json.loads(self.out)
        return json.loads(self.out.splitlines()[0])

    def left_running(self) -> list[psutil.Process]:
        left = []
        for p in self.family:
            with contextlib.suppress(psutil.Error):
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(p)
        return left


def workbook(tmp_path: Path, *args: str, timeout: float = 900) -> Ran:
    """`python -m workbook ARGS` in a process of its own: killed (and the test failed) past
    `timeout`; its memory and every process under it watched as it runs."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    # These attacks call into C and open files: the source guard refuses them in `grade` before
    # they run (test_guard.py). Off here, so that the wall under test is the channel behind it.
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORKBOOK_GRADE_GUARD": "0"}
    started = time.monotonic()
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen([sys.executable, "-m", "workbook", *args], stdout=o, stderr=e, env=env,
                                cwd=tmp_path, start_new_session=True)
    me = psutil.Process(proc.pid)
    peak, family = 0, {}
    try:
        while proc.poll() is None:
            if time.monotonic() - started > timeout:
                pytest.fail(f"`workbook {' '.join(args)}` still running after {timeout} s")
            with contextlib.suppress(psutil.Error):
                peak = max(peak, me.memory_info().rss)
                for p in me.children(recursive=True):
                    family.setdefault(p.pid, p)
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            for p in [me, *family.values()]:
                with contextlib.suppress(psutil.Error):
                    p.kill()
            proc.wait()
    return Ran(proc.returncode, out.read_text(errors="replace"), err.read_text(errors="replace"),
               time.monotonic() - started, peak, list(family.values()))


def settle(ran: Ran) -> None:
    """Nothing it started is left running (given a moment: the last ones are being reaped)."""
    deadline = time.monotonic() + 10
    while ran.left_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not ran.left_running(), [p.cmdline() for p in ran.left_running()]


def submission(tmp_path: Path, puzzle: str, files: dict[str, str]) -> Path:
    folder = tmp_path / "submission"
    for name, text in files.items():
        target = folder / "puzzles" / puzzle / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


def sim_of(doc: dict) -> dict:
    puzzle = doc["puzzles"][0] if "puzzles" in doc else doc
    return puzzle["parts"][0]["kernels"]["sim"]


def kinds(device: dict) -> set[str]:
    return {f.get("kind") for f in device.get("findings") or []}


def refused_before_running(device: dict | None) -> bool:
    """The submission's code never ran: refused before its compile (grading's source guard)."""
    return device is None or device["status"] in ("not_run", "compile_error")


@pytest.mark.slow
def test_a_kernel_that_forges_its_verdict_fails_with_its_findings(root, tmp_path):
    """The learner's path (`run`, no sandbox, so also as root): the forged result.json and the
    emptied counts in the run folder are not what the workbook reads, so the budget and the
    race the simulator found stand."""
    (root / "puzzles/p01/map.mojo").write_text(kernel(BREAKS_RULES, FORGE.replace("PROC", "")))
    ran = workbook(tmp_path, "run", "p01", "--json", "--device", "sim", "--seed", "3", "--no-cache")
    sim = sim_of(ran.doc())
    assert ran.code == 1 and sim["status"] == "fail", ran.out[:2000]
    assert {"budget", "global_race"} <= kinds(sim)
    settle(ran)


@pytest.mark.slow
@needs_bwrap
def test_a_graded_kernel_that_forges_its_verdict_fails_in_the_sandbox(root, tmp_path):
    """The same attack graded, in the sandbox, and also through /proc/PID/fd (where the
    descriptors are): still a fail, with both findings where the code ran."""
    sub = submission(tmp_path, "p01", {"map.mojo": kernel(BREAKS_RULES, FORGE.replace("PROC", THROUGH_PROC))})
    ran = workbook(tmp_path, "grade", str(sub), "--json", "-p", "p01", "--device", "sim", "--seed", "3")
    doc = ran.doc()
    assert ran.code == 1 and doc["puzzles"][0]["status"] == "fail", ran.out[:2000]
    assert doc["sandbox"].startswith("bubblewrap")
    sim = doc["puzzles"][0]["parts"][0]["kernels"].get("sim")
    if not refused_before_running(sim):
        assert {"budget", "global_race"} <= kinds(sim)
    settle(ran)


@pytest.mark.slow
@needs_bwrap
def test_a_log_linked_to_a_secret_never_shows_it(root, tmp_path):
    """The launcher's log replaced by a link to a file only the grader may read, then a
    crash (whose report shows the end of the log): the secret stays out, graded or run."""
    secret = tmp_path / "secret.txt"
    marker = f"TOP-SECRET-{os.getpid()}-{time.time_ns()}"
    secret.write_text(f"{marker}\n")
    secret.chmod(0o600)
    command = f"rm -f log.txt; ln -s {secret} log.txt; echo the kernel was here"
    source = kernel(RIGHT, command, after='external_call["abort", NoneType]()')
    sub = submission(tmp_path, "p01", {"map.mojo": source})
    graded = workbook(tmp_path, "grade", str(sub), "--json", "-p", "p01", "--device", "sim", "--seed", "3")
    (root / "puzzles/p01/map.mojo").write_text(source)
    ran = workbook(tmp_path, "run", "p01", "--json", "--device", "sim", "--seed", "3", "--no-cache")
    for done in (graded, ran):
        doc = done.doc()
        puzzle = doc["puzzles"][0] if "puzzles" in doc else doc
        assert puzzle["status"] in ("fail", "crash") and marker not in done.out and marker not in done.err
        sim = puzzle["parts"][0]["kernels"].get("sim")
        if not refused_before_running(sim):
            assert sim["status"] == "crash" and "the kernel was here" in sim.get("output", ""), sim
        settle(done)


@pytest.mark.slow
@needs_bwrap
def test_a_fifo_in_place_of_the_phase_does_not_hang_grading(root, tmp_path):
    """`phase` replaced by a FIFO in each case, and time for the workbook to look at it before
    the case ends (the workbook once opened it to show progress, and after the last case no
    one ever opened it to write: it waited forever): grading ends, with the verdict the
    kernel earned."""
    sub = submission(tmp_path, "p01", {"map.mojo": kernel(RIGHT, "rm -f phase; mkfifo phase; sleep 0.3")})
    ran = workbook(tmp_path, "grade", str(sub), "--json", "-p", "p01", "--device", "sim", "--seed", "3",
                   timeout=300)
    doc = ran.doc()
    sim = doc["puzzles"][0]["parts"][0]["kernels"].get("sim")
    if not refused_before_running(sim):
        assert doc["puzzles"][0]["status"] == "pass", ran.out[:2000]
    settle(ran)


@pytest.mark.slow
@needs_bwrap
def test_outputs_linked_to_dev_zero_keep_the_grader_small(root, tmp_path):
    """outputs.bin replaced by a link to /dev/zero (which grew the grader to 3 GB in 5 s): the
    grader reads the outputs the kernel really wrote (a[i] + 11: a fail), and stays small."""
    sub = submission(tmp_path, "p01", {"map.mojo": kernel(WRONG, "rm -f outputs.bin; ln -s /dev/zero outputs.bin")})
    ran = workbook(tmp_path, "grade", str(sub), "--json", "-p", "p01", "--device", "sim", "--seed", "3",
                   timeout=300)
    doc = ran.doc()
    assert doc["puzzles"][0]["status"] == "fail" and ran.peak_rss < 1 << 30, (ran.peak_rss, ran.out[:2000])
    sim = doc["puzzles"][0]["parts"][0]["kernels"].get("sim")
    if not refused_before_running(sim):
        case = sim["cases"][0]["outputs"][0]
        assert sim["status"] == "fail" and case["first_got"][0] == pytest.approx(case["first_expected"][0] + 1)
    settle(ran)


@pytest.mark.slow
def test_a_graph_that_disables_the_check_and_calls_max_softmax_fails(root, tmp_path):
    """p18's graph replaces the workbook's graph check wherever it finds it, then computes
    MAX's own softmax: the check is not in its process, so the graph is refused, run or graded."""
    put_solution(root, "p18")
    (root / "puzzles/p18/softmax_graph.py").write_text(GRAPH_ATTACK)
    ran = workbook(tmp_path, "run", "p18", "--json", "--device", "cpu", "--seed", "1", "--no-cache")
    graph = ran.doc()["parts"][0]["graph"]["cpu"]
    assert graph["status"] == "fail" and graph["reasons"][0]["key"] == "reason.graph_bypass", graph
    assert "softmax" in json.dumps(graph["findings"]), graph
    settle(ran)
    if sandbox.bwrap() is None:
        return
    files = {p.relative_to(root / "puzzles/p18").as_posix(): p.read_text() for p in (root / "puzzles/p18").rglob("*")
             if p.is_file() and p.suffix in (".mojo", ".py") and p.name != "reference.py"}
    sub = submission(tmp_path, "p18", files)
    graded = workbook(tmp_path, "grade", str(sub), "--json", "-p", "p18", "--device", "cpu", "--seed", "1")
    puzzle = graded.doc()["puzzles"][0]
    assert puzzle["status"] == "fail"
    graph = puzzle["parts"][0]["graph"]["cpu"]  # its Mojo is the solution's: the graph stage is reached
    assert graph["status"] == "fail" and graph["reasons"][0]["key"] == "reason.graph_bypass", graph
    settle(graded)


@pytest.mark.slow
def test_a_graph_s_python_error_and_compile_error_are_reported_as_before(root, tmp_path):
    """The learner's own mistakes in the graph stage still say where: a Python error in
    load() names the line of the graph file; a graph MAX cannot compile, MAX's error."""
    put_solution(root, "p18")
    graph_file = root / "puzzles/p18/softmax_graph.py"
    good = graph_file.read_text()
    graph_file.write_text(good.replace("    where = DeviceRef.from_device(device)\n",
                                       "    where = DeviceRef.from_device(device)\n    1 / 0\n"))
    ran = workbook(tmp_path, "run", "p18", "--json", "--device", "cpu", "--seed", "1", "--no-cache")
    graph = ran.doc()["parts"][0]["graph"]["cpu"]
    assert graph["status"] == "crash" and "softmax_graph.py:" in graph["output"], graph
    assert "ZeroDivisionError" in graph["output"]
    settle(ran)
    graph_file.write_text(good.replace('"input_size": size', '"input_size": size + 1'))
    ran = workbook(tmp_path, "run", "p18", "--json", "--device", "cpu", "--seed", "1", "--no-cache")
    graph = ran.doc()["parts"][0]["graph"]["cpu"]
    assert graph["status"] in ("compile_error", "crash") and "softmax_graph.py:" in graph["output"], graph
    assert "session.load(graph)" in graph["output"]  # the line that asked for it, as before
    settle(ran)


@pytest.mark.slow
def test_the_worker_reads_graph_text_as_mlir_does_and_names_the_workbook_s_library(tmp_path):
    """Text that hides a second operation on the line of the learner's op, and names a
    kernel library of its own: MLIR's own print of it shows the hidden op to the check, and
    the library is the workbook's."""
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, ops
    from max.graph.graph import _graph, default_mlir_context

    from workbook.run import graphrun, worker

    vector = TensorType(DType.float32, shape=[8], device=DeviceRef.CPU())
    with Graph("softmax", input_types=[vector]) as graph:
        graph.output(ops.softmax(graph.inputs[0]))
    lines = str(graph).splitlines()
    forged = "\n".join([lines[0].replace("_kernel_library_paths = []", '_kernel_library_paths = ["/tmp/evil.mojoc"]'),
                        " ".join(line.strip() for line in lines[1:-1]), lines[-1]])
    assert graphrun.graph_problems(forged, ["softmax"])["others"] == []  # the line-based check, fooled by raw text
    context = default_mlir_context()
    _graph._init_and_register_max_context(context)
    with context:
        _, printed = worker.parse(forged, str(tmp_path / "op.mojoc"), context)
    found = graphrun.check_graph(printed, ["softmax"], tmp_path / "op.mojoc")
    assert found["others"] and found["missing"] == ["softmax"]
    assert graphrun.libraries(printed) == [str(tmp_path / "op.mojoc")] and "evil" not in printed
    with context, pytest.raises(Exception):  # noqa: B017, PT011 - MLIR's own error type
        worker.parse(forged + "\n" + forged.replace("@softmax", "@another"), str(tmp_path / "op.mojoc"), context)


def test_the_worker_s_outputs_are_read_only_as_numbers_of_the_size_they_say():
    import io

    import numpy as np

    from workbook.run import graphrun, worker

    out = io.BytesIO()
    worker.write_array(out, (0, 1, 2), np.arange(6, dtype=np.float32).reshape(2, 3))
    good = out.getvalue()
    assert np.array_equal(graphrun.read_arrays(good)[(0, 1, 2)], np.arange(6, dtype=np.float32).reshape(2, 3))
    lying = good.replace(b"[2, 3]", b"[2000000, 3000000]")  # a shape far past the bytes there
    assert graphrun.read_arrays(lying) == {}
    objects = good.replace(b'"<f4"', b'"|O8"')  # Python objects: never
    assert graphrun.read_arrays(objects) == {}
    assert graphrun.read_arrays(b"\n" * 10 + good) == {}


def test_a_run_folder_file_is_read_only_when_it_is_a_regular_file(tmp_path):
    from workbook.child import protocol

    (tmp_path / "secret").write_text("secret")
    (tmp_path / protocol.RESULT).symlink_to(tmp_path / "secret")
    os.mkfifo(tmp_path / protocol.PHASE)
    started = time.monotonic()
    assert protocol.read_result(tmp_path) is None and protocol.read_phase(tmp_path) == ("starting", [], 0.0)
    assert time.monotonic() - started < 1
    (tmp_path / protocol.RESULT).unlink()
    (tmp_path / protocol.RESULT).symlink_to("/dev/zero")
    assert protocol.read_result(tmp_path) is None
    (tmp_path / protocol.RESULT).unlink()
    (tmp_path / protocol.RESULT).write_text('{"status": "ok"}' + " " * (protocol.RESULT_CAP + 10))
    assert protocol.read_result(tmp_path) == {"status": "ok"}  # read up to the cap, the rest never
    shutil.rmtree(tmp_path / "secret", ignore_errors=True)


def test_a_graph_naming_another_kernel_library_is_not_the_learner_s_op(tmp_path):
    from workbook.run import graphrun

    text = ('mo.graph @softmax(%arg0: !mo.tensor<[8], f32>) -> !mo.tensor<[8], f32> attributes '
            '{_kernel_library_paths = ["LIBRARY"], argument_names = ["input0"], result_names = ["output0"]} {\n'
            '  %0 = mo.chain.create()\n'
            '  %1 = mo.custom [symbol = "softmax", parameters = {dtype = f32, input_size = 8 : index}](%arg0) : '
            '(!mo.tensor<[8], f32>) -> !mo.tensor<[8], f32>\n'
            '  mo.output %1 : !mo.tensor<[8], f32>\n}')
    ours = tmp_path / "op.mojoc"
    assert not graphrun.bypasses(graphrun.check_graph(text.replace("LIBRARY", str(ours)), ["softmax"], ours))
    theirs = graphrun.check_graph(text.replace("LIBRARY", "/tmp/theirs.mojoc"), ["softmax"], ours)
    assert graphrun.bypasses(theirs) and theirs["others"] == ["kernel library /tmp/theirs.mojoc"]
    both = graphrun.check_graph(text.replace('"LIBRARY"', f'"{ours}", "/tmp/theirs.mojoc"'), ["softmax"], ours)
    assert graphrun.bypasses(both) and both["others"] == ["kernel library /tmp/theirs.mojoc"]
    none = graphrun.check_graph(text.replace('"LIBRARY"', ""), ["softmax"], ours)
    assert none["others"] == ["kernel library (none)"]
