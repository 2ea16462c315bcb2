"""`workbook grade` with submissions that attack its limits, graded for real (real compiles,
the real sandbox, the real MAX engine): the grader's secrets never reach submitted code,
shared memory a graph file takes is stopped as the memory limit, and one budget bounds
every wait of a puzzle's check, the compiler's too, leaving nothing running."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from pathlib import Path

import pytest
from conftest import REPO, left_running

from workbook.child import containment, sandbox
from workbook.cli import app as cli
from workbook.core import exitcodes

pytestmark = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")


@pytest.fixture(autouse=True)
def unguarded(monkeypatch):
    """These submissions attack the sandbox and its limits, behind the source guard (which
    refuses their `import os` and `mmap` before they could run): the guard is off here, so
    that what is tested is the wall behind it."""
    monkeypatch.setenv("WORKBOOK_GRADE_GUARD", "0")

# A p18 graph file that shows whatever environment it was given, in its error message: the
# message reaches the grade's JSON, and so would any secret in that environment.
SHOWS_ITS_ENVIRONMENT = '''
import json, os

def load(session, device, kernels, *, size):
    raise RuntimeError("ENVIRONMENT " + json.dumps(dict(os.environ), sort_keys=True))
'''
# A p18 graph file that fills 3 GB of an anonymous shared mapping when it is imported.
TAKES_SHARED_MEMORY = '''
import mmap
shared = mmap.mmap(-1, 3 << 30, flags=mmap.MAP_SHARED)
for at in range(0, 3 << 30, 1 << 20):
    shared[at:at + (1 << 20)] = b"x" * (1 << 20)

def load(session, device, kernels, *, size):
    raise RuntimeError("took 3 GB of shared memory and was not stopped")
'''


def invoke(capsys, *args: str) -> tuple[int, dict]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, _ = capsys.readouterr()
    (doc,) = [json.loads(line) for line in out.splitlines() if line.strip()]
    return exited.value.code, doc


def p18_with_graph(tmp_path: Path, graph: str) -> Path:
    """A submission whose p18 op is right (so its graph runs) and whose graph file is `graph`."""
    sub = tmp_path / "submission"
    shutil.copytree(REPO / "solutions/p18", sub / "puzzles/p18")
    (sub / "puzzles/p18/softmax_graph.py").write_text(graph)
    return sub


@pytest.fixture(autouse=True)
def nothing_left():
    """After each grade: nothing it started still running, none of its cgroups left."""
    yield
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (left_running() or containment.ours()):
        time.sleep(0.1)
    assert not left_running() and not containment.ours()


@pytest.mark.slow
def test_a_graded_graph_file_never_sees_the_graders_secrets(root, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MODULAR_AUTH", "secret-modular-auth")
    monkeypatch.setenv("FOO_TOKEN", "secret-foo-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-aws")
    sub = p18_with_graph(tmp_path, SHOWS_ITS_ENVIRONMENT)
    code, doc = invoke(capsys, "grade", str(sub), "--json", "-p", "p18", "--device", "cpu", "--seed", "1")
    assert code == exitcodes.FAILED
    text = json.dumps(doc)
    assert "ENVIRONMENT" in text  # the graph file ran and its message came back: the test can see a leak
    assert "secret" not in text and "MODULAR_AUTH" not in text and "FOO_TOKEN" not in text and "AWS_" not in text
    shown = doc["puzzles"][0]["parts"][0]["graph"]["cpu"]["output"]
    names = set(json.loads(shown[shown.index("{"):shown.rindex("}") + 1]))
    assert {"HOME", "PATH", "TMPDIR"} <= names  # what a run needs is there


@pytest.mark.slow
def test_shared_memory_in_a_graded_graph_file_is_stopped_as_memory(root, capsys, tmp_path, monkeypatch):
    """3 GB of MAP_SHARED under a 2 GB limit (no process's data: it passed before); the
    graph worker and MAX need about 1 GB, the rest is the submission's."""
    monkeypatch.setenv("WORKBOOK_MEMORY_LIMIT_MB", "2048")
    sub = p18_with_graph(tmp_path, TAKES_SHARED_MEMORY)
    code, doc = invoke(capsys, "grade", str(sub), "--json", "-p", "p18", "--device", "cpu", "--seed", "1")
    assert code == exitcodes.FAILED
    graph = doc["puzzles"][0]["parts"][0]["graph"]["cpu"]
    assert graph["status"] == "crash" and "not stopped" not in json.dumps(doc)
    assert [r["key"] for r in graph["reasons"]] == ["grade.limit_memory"]
    assert doc["limits"]["memory_mb"] == 2048 and doc["limits"]["containment"] == containment.support().describe()
    assert not containment.ours() and not left_running()


def test_a_graded_check_ends_at_its_budget_the_compiler_included(root, capsys, tmp_path, monkeypatch):
    """A budget of 1 s and a kernel never compiled before: the compile is stopped at the
    budget, the puzzle is a timeout that says why, and no compiler is left running. (With
    3 s a fast machine compiled p01 and ran it inside the budget, rightly a pass: a compile
    takes 2 to 10 s on the machines we know, none under 1 s.)"""
    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "1")
    marker = f"never-compiled-{uuid.uuid4().hex}"
    sub = tmp_path / "submission"
    shutil.copytree(REPO / "solutions/p01", sub / "puzzles/p01")
    kernel = sub / "puzzles/p01/map.mojo"
    kernel.write_text(kernel.read_text() + f"\n# {marker}\n")
    started = time.monotonic()
    code, doc = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "--device", "sim")
    seconds = time.monotonic() - started
    assert code == exitcodes.FAILED
    (puzzle,) = doc["puzzles"]
    assert puzzle["status"] == "timeout" and puzzle["problem"]["key"] == "check.budget_spent"
    assert seconds < 20
    assert not left_running()


def test_a_graded_kernel_that_never_ends_is_stopped_at_the_budget(root, capsys, tmp_path, monkeypatch):
    """Its own limits further away (300 s to run, 300 s for a simulated thread; once the
    solution's time is known, 20 times that, at least 5 s): the puzzle's budget of 3 s ends
    it (or its compile, where that is cold), as a timeout that says the budget was spent,
    with nothing left running."""
    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "3")
    monkeypatch.setenv("WORKBOOK_RUN_TIMEOUT", "300")
    monkeypatch.setenv("WORKBOOK_SIM_STRETCH", "300")
    sub = tmp_path / "submission"
    (sub / "puzzles/p01").mkdir(parents=True)
    shutil.copyfile(REPO / "tests/data/endless/map.mojo", sub / "puzzles/p01/map.mojo")
    started = time.monotonic()
    code, doc = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "--device", "sim", "--seed", "1")
    seconds = time.monotonic() - started
    assert code == exitcodes.FAILED
    (puzzle,) = doc["puzzles"]
    assert puzzle["status"] == "timeout" and puzzle["budget_spent"]["key"] == "check.budget_spent"
    assert seconds < 3 + 15
    assert not left_running() and not containment.ours()
