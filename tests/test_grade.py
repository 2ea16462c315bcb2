"""`workbook grade`: a submission decides nothing but its own learner files, and its code
runs in the sandbox. The hostile submission of issue 17 (a forged tolerance, a reference.py
that runs on import, a kernel calling system() and leaving `setsid sleep` behind, links,
paths out of its folder) is graded here for real: real compiles, a real sandbox.

Since issue 38 the source guard (workbook/grade/guard.py) refuses that kernel before it is compiled
(tests/test_guard.py); to test the sandbox that stands behind the guard, the hostile run here
turns the guard off (WORKBOOK_GRADE_GUARD=0), as only a test should."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO

from workbook.child import sandbox
from workbook.cli import app as cli
from workbook.core import exitcodes, toolchain

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")

# p01 done wrong on purpose (a[i] + 11), and hostile: thread 0 runs a shell command that starts
# a process in a session of its own and tries to create a file outside its run folder; the
# command's status (0 where the file was made) is what thread 0 writes to output[0].
HOSTILE_KERNEL = '''
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
    output[i] = a[i] + 11
    comptime if not is_gpu():
        if i == 0:
            var command = "setsid sleep SLEEP >/dev/null 2>&1 & touch MARKER 2>/dev/null\\x00"
            output[0] = Float32(Int(external_call["system", Int32](command.unsafe_ptr())))
'''
# What a submission's own reference.py would do if it ran: leave a mark, and pass anything.
HOSTILE_REFERENCE = '''
open("MARKER", "w").write("the submission's reference.py ran")
def cases(rng, part):
    return []
def expected(case, part):
    return {}
'''


def invoke(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


def lines(out: str) -> list[dict]:
    """One JSON object per submission, each on a line of its own."""
    found = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert all(doc["schema"] == exitcodes.JSON_SCHEMA for doc in found)
    return found


def submission(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    (folder / "puzzles").mkdir(parents=True)
    return folder


def statuses(doc: dict) -> dict[str, str]:
    return {p["id"]: p["status"] for p in doc["puzzles"]}


def sleepers(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] and marker in p.info["cmdline"] and p.status() != psutil.STATUS_ZOMBIE]


@needs_bwrap
def test_every_expected_puzzle_is_graded_and_a_missing_one_fails(root, capsys, tmp_path):
    empty = submission(tmp_path, "empty")
    code, out, err = invoke(capsys, "grade", str(empty), str(tmp_path / "no-such-folder"), "--json",
                            "-p", "p01", "-p", "p02")
    assert code == exitcodes.BAD_INPUT, err  # one submission is not a folder: the worst exit wins
    graded, missing = lines(out)
    assert statuses(graded) == {"p01": "fail", "p02": "fail"}
    assert graded["puzzles"][0]["problem"]["key"] == "grade.missing_file"
    assert graded["puzzles"][0]["files"] == {"map.mojo": "missing"}
    assert graded["summary"] == {"passed": 0, "not_judged": 0, "failed": 2, "total": 2, "ok": False}
    assert missing["error"]["key"] == "grade.not_a_folder"


@needs_bwrap
@pytest.mark.skipif(toolchain.gpu() is not None, reason="a GPU here judges p36 (or gates it): this is the no-GPU grade")
def test_code_that_only_compiled_is_not_judged_and_not_counted_as_passed(root, capsys, tmp_path):
    """p36 runs on a Hopper GPU only (the simulator refuses TMA and wgmma): graded where none is,
    its solution only compiles. That is no pass: a wrong kernel would compile as well."""
    sub = submission(tmp_path, "hopper")
    shutil.copytree(REPO / "solutions" / "p36", sub / "puzzles" / "p36")
    code, out, _ = invoke(capsys, "grade", str(sub), "--json", "-p", "p36")
    (graded,) = lines(out)
    assert statuses(graded) == {"p36": "compiled"}
    assert graded["summary"] == {"passed": 0, "not_judged": 1, "failed": 0, "total": 1, "ok": False}
    assert code == exitcodes.NOT_JUDGED


def test_a_compiler_that_cannot_start_stops_grading_before_anyone_fails(root, capsys, monkeypatch, tmp_path):
    """A `pip --target` install run without its folder on PYTHONPATH: the wheel's own `mojo`
    script starts, then cannot import its package. Grading would fail every honest submission
    as a compile error; it stops first, with exit 3 and the compiler's last line."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None or not (Path(sys.executable).parent / "mojo").exists():
        pytest.skip("needs a system python3 and the wheel's mojo script beside this Python")
    script = (Path(sys.executable).parent / "mojo").read_text().split("\n", 1)[1]
    broken = tmp_path / "mojo"
    broken.write_text(f"#!{python} -I\n{script}")  # the wheel's script, run by a Python without the wheel
    broken.chmod(0o755)
    monkeypatch.setattr(toolchain, "mojo_driver", lambda: (broken, {}))
    toolchain.compiler_problem.cache_clear()
    try:
        sub = submission(tmp_path, "honest")
        shutil.copytree(REPO / "solutions" / "p01", sub / "puzzles" / "p01")
        code, out, err = invoke(capsys, "grade", str(sub), "-p", "p01")
    finally:
        toolchain.compiler_problem.cache_clear()
    assert code == exitcodes.TOOLCHAIN
    assert "ModuleNotFoundError" in err and "does not start" in err
    assert "fail" not in out.lower()  # nobody was graded


def test_without_a_sandbox_grading_refuses_unless_told(root, capsys, monkeypatch, tmp_path):
    empty = submission(tmp_path, "empty")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))
    sandbox.probe.cache_clear()
    try:
        code, out, _ = invoke(capsys, "grade", str(empty), "--json", "-p", "p01")
        (doc,) = lines(out)  # an error is a line too
        assert code == exitcodes.TOOLCHAIN and doc["error"]["key"] == "sandbox.no_bwrap"
        code, out, err = invoke(capsys, "grade", str(empty), "--json", "-p", "p01", "--unsandboxed")
        (doc,) = lines(out)
        assert code == exitcodes.FAILED and doc["sandbox"] == "none (--unsandboxed)"
    finally:
        sandbox.probe.cache_clear()


@needs_bwrap
def test_links_and_paths_out_of_the_submission_are_never_taken(root, capsys, tmp_path):
    secret = tmp_path / "secret.mojo"
    secret.write_text("# the grader's secret\n")
    sub = submission(tmp_path, "links")
    (sub / "puzzles/p01").mkdir()
    (sub / "puzzles/p01/map.mojo").symlink_to(secret)  # a link to a file
    real = tmp_path / "elsewhere"
    real.mkdir()
    shutil.copyfile(REPO / "solutions/p02/zip.mojo", real / "zip.mojo")
    (sub / "puzzles/p02").symlink_to(real, target_is_directory=True)  # a link on the way
    (sub / "puzzles/p03").mkdir()  # a manifest of its own that reaches out: never read
    (sub / "puzzles/p03/puzzle.toml").write_text('id = "p03"\nedit = ["../../../secret.mojo"]\n')
    code, out, _ = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "-p", "p02", "-p", "p03")
    (doc,) = lines(out)
    assert code == exitcodes.FAILED and statuses(doc) == {"p01": "fail", "p02": "fail", "p03": "fail"}
    files = {p["id"]: p["files"] for p in doc["puzzles"]}
    assert files == {"p01": {"map.mojo": "refused"}, "p02": {"zip.mojo": "refused"}, "p03": {"guard.mojo": "missing"}}
    assert "the grader's secret" not in out


@needs_bwrap
@pytest.mark.slow
def test_a_hostile_submission_is_contained(root, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBOOK_GRADE_GUARD", "0")  # the sandbox alone: the guard would refuse p01
    outside = tmp_path / "outside"  # the grader's folder: nothing of the submission may land here
    outside.mkdir()
    marker, reference_marker = outside / "PWNED", outside / "REFERENCE-RAN"
    sleep = str(700000 + time.time_ns() % 99999)
    sub = submission(tmp_path, "hostile")
    p01 = sub / "puzzles/p01"
    p01.mkdir()
    (p01 / "map.mojo").write_text(HOSTILE_KERNEL.replace("MARKER", str(marker)).replace("SLEEP", sleep))
    manifest = (REPO / "puzzles/p01/puzzle.toml").read_text()
    (p01 / "puzzle.toml").write_text(manifest.replace("atol = 0.0", "atol = 1e30").replace("rtol = 0.0", "rtol = 1e30"))
    (p01 / "reference.py").write_text(HOSTILE_REFERENCE.replace("MARKER", str(reference_marker)))
    (sub / "puzzles/p02").mkdir()
    shutil.copyfile(REPO / "solutions/p02/zip.mojo", sub / "puzzles/p02/zip.mojo")  # honest work passes

    code, out, err = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "-p", "p02", "--seed", "3",
                            "--device", "sim")
    (doc,) = lines(out)
    assert code == exitcodes.FAILED, err
    assert statuses(doc) == {"p01": "fail", "p02": "pass"}  # the forged tolerance counted for nothing
    assert doc["sandbox"].startswith("bubblewrap") and doc["guard"] is False
    assert doc["puzzles"][0]["refusals"] == []
    sim = doc["puzzles"][0]["parts"][0]["kernels"]["sim"]
    status = sim["cases"][0]["outputs"][0]["first_got"][0]
    assert status == 256  # the shell ran, in the sandbox, and its `touch` failed there (exit code 1)
    assert not marker.exists() and not reference_marker.exists()
    assert not sleepers(sleep)  # the PID namespace ended the process that left its session

    # The same submission as the grader, unsandboxed: the command really runs (and makes the file);
    # the tolerance is still the workbook's, and the escaped process still dies with the run.
    code, out, err = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "--seed", "3", "--device", "sim",
                            "--unsandboxed")
    (doc,) = lines(out)
    assert statuses(doc) == {"p01": "fail"} and marker.exists() and not reference_marker.exists()
    assert doc["puzzles"][0]["parts"][0]["kernels"]["sim"]["cases"][0]["outputs"][0]["first_got"][0] == 0
    deadline = time.monotonic() + 10
    while sleepers(sleep) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sleepers(sleep)
    assert not os.path.exists(REPO / "puzzles/p01/PWNED")
