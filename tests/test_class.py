"""A class graded on Ray (workbook/grade/classgrade.py): a hostile class in one command.

The class is made here, in a temporary folder, from real kernels: honest ones, wrong ones
(tests/wrong/p01), and the attacks of issue 38 (a forged verdict, leaked secrets, an endless
loop, a memory hog, a fork bomb) beside broken submissions (links, a FIFO, not UTF-8, a
binary, a huge file, a missing one). It is graded for real: real compiles, a real local Ray,
real bubblewrap. Each submission must get its right grade, nothing of the grader's may reach
grades.csv, grades.jsonl or the HTML, nothing may be left running (Ray's processes neither),
and a rerun grades nothing again.

The right grade of a hostile submission is "fail" or, once the source guard refuses its
foreign calls, "refused": never "pass".
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from conftest import PYTHONPATH, WRONG, sigint_at_default
from hostile_class import DATA, HOSTILE_NAME, SOLUTION, make_class, put

from workbook.child import sandbox
from workbook.core import exitcodes
from workbook.grade import gradestore, roster

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed (pip install -e '.[class]')")
SECRET = "TOPSECRET-" + uuid.uuid4().hex[:8]


def grade(args: list[str], env: dict[str, str], timeout: float = 900) -> tuple[int, str, str, float]:
    """`workbook grade ...` as an instructor runs it: a process of its own."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "workbook", "grade", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def environment(tmp_path: Path, marker: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, "WORKBOOK_LANG": "en", "WORKBOOK_MEMORY_LIMIT_MB": "512",
           "CLASS_TEST_RUN": marker,  # in every process the command starts, Ray's too (not in the sandbox)
           "WORKBOOK_CLASS_SECRET": SECRET + "-ENV", "MODULAR_AUTH": SECRET + "-MODULAR"}
    env.pop("RAY_ADDRESS", None)
    env.update(extra)
    return env


def left_running(marker: str, uids: set[int]) -> list[str]:
    """Processes the command left: any carrying its marker (the driver's environment, which
    Ray's processes inherit), or running as a sandbox's user."""
    found = []
    for proc in psutil.process_iter(["pid", "uids", "cmdline"]):
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            mine = proc.environ().get("CLASS_TEST_RUN") == marker
        except psutil.Error:
            mine = False
        uid = proc.info["uids"].real if proc.info.get("uids") else -1
        if mine or uid in uids:
            found.append(f"{proc.info['pid']} {' '.join(proc.info.get('cmdline') or [])[:120]}")
    return found


def settled(marker: str, uids: set[int], seconds: float = 15) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := left_running(marker, uids)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


class Seen:
    """The processes of one command that carry its marker, seen while it runs: Ray's workers
    among them. A root grader's sandboxes run as UID_BASE + their worker's pid."""

    def __init__(self, marker: str):
        self.marker, self.pids = marker, set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            for proc in psutil.process_iter(["pid"]):
                with contextlib.suppress(psutil.Error):
                    if proc.environ().get("CLASS_TEST_RUN") == self.marker:
                        self.pids.add(proc.info["pid"])

    def __enter__(self) -> Seen:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def sandbox_uids(self) -> set[int]:
        return {sandbox.UID_BASE + pid for pid in self.pids} if os.getuid() == 0 else set()


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    """grades.csv by name (a name that a spreadsheet would take for a formula is written after a ')."""
    with open(path, newline="", encoding="utf-8") as f:
        return {row["name"][1:] if row["name"].startswith("'=") else row["name"]: row for row in csv.DictReader(f)}


@needs_bwrap
@needs_ray
@pytest.mark.slow
def test_a_hostile_class_gets_the_right_grade_for_everyone_in_one_command(tmp_path):
    secret_file = tmp_path / "grader-secret.txt"
    secret_file.write_text(SECRET + "-FILE\n")
    klass, out = tmp_path / "class", tmp_path / "grades"
    expected = make_class(klass, secret_file)
    assert len(expected) >= 20
    marker = uuid.uuid4().hex
    # The source guard would refuse every hostile file here before it ran (its foreign calls):
    # with it off, the hostile ones run, and what is proven is the walls behind it: the sandbox,
    # the limits, the verdict channel (test_guard.py proves the guard's refusals).
    env = environment(tmp_path, marker, WORKBOOK_GRADE_GUARD="0")
    args = [str(klass), "-p", "p01", "-p", "p02", "--device", "sim", "--out", str(out), "--json"]

    with Seen(marker) as seen:
        code, stdout, stderr, seconds = grade(args, env)
    print(f"the class: {len(expected)} submissions, {seconds:.1f} s, {len(seen.pids)} processes of Ray's")
    assert code == exitcodes.FAILED, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]  # stdout is JSON lines alone
    assert sorted(doc["name"] for doc in lines) == sorted(expected)

    # The right grade for every one, in grades.csv, grades.jsonl and --json's lines alike.
    table = read_csv(out / "grades.csv")
    kept_lines = {doc["name"]: doc for doc in map(json.loads, (out / "grades.jsonl").read_text().splitlines())}
    wrong = {}
    for name, grades in expected.items():
        got = {pid: table[name][pid] for pid in ("p01", "p02")}
        if any(got[pid] not in grades[pid] for pid in grades):
            wrong[name] = (got, grades)
        assert kept_lines[name]["grades"] == got
        assert int(table[name]["passed"]) == sum(g == "pass" for g in got.values())
    docs = {doc["name"]: doc for doc in lines}
    leaking = docs["leaking"]["puzzles"][0]
    assert leaking["files"] == {"map.mojo": "taken"}
    hanging = docs["hanging"]["puzzles"][0]
    assert hanging["status"] == "timeout" and hanging["from"] == "task"
    assert docs["fifo"]["puzzles"][0]["problem"]["key"] == "grade.not_file"
    assert docs["missing"]["puzzles"][0]["files"] == {"map.mojo": "missing"}

    # Nothing of the grader's reached what the class run wrote.
    written = [out / "grades.csv", out / "grades.jsonl", out / "index.html", *sorted((out / "submissions").iterdir()),
               *sorted((out / "kept").iterdir())]
    texts = {path.name: path.read_text(encoding="utf-8") for path in written} | {"stdout": stdout, "stderr": stderr}
    secrets = {"a file of the grader's": SECRET + "-FILE", "WORKBOOK_CLASS_SECRET": SECRET + "-ENV",
               "MODULAR_AUTH": SECRET + "-MODULAR"}
    leaked = {which: sorted(name for name, text in texts.items() if secret in text)
              for which, secret in secrets.items() if any(secret in text for text in texts.values())}

    # A name is shown, never run; in a spreadsheet it is text, never a formula.
    index = (out / "index.html").read_text()
    assert "<img" not in index and "&lt;img src=x onerror=alert(1)&gt;" in index
    assert "'" + HOSTILE_NAME in (out / "grades.csv").read_text()
    assert index.count('class="grade ') == 2 * len(expected)
    assert all(word in index for word in ("✓ pass", "✗ fail", "⏱ timeout", "∅ missing", "⊘ refused"))

    # Nothing left running: no sandbox, no fork bomb, no Ray.
    assert seen.pids  # the watch saw Ray's processes (else it could not see them left)
    assert not settled(marker, seen.sandbox_uids())

    # A rerun grades nothing again: the same grades, no task, no Ray.
    code2, stdout2, stderr2, seconds2 = grade(args, env)
    print(f"the rerun: {seconds2:.1f} s")
    assert code2 == exitcodes.FAILED, stderr2[-3000:]
    again = [json.loads(line) for line in stdout2.splitlines() if line.strip()]
    assert {d["name"]: d["grades"] for d in again} == {d["name"]: d["grades"] for d in lines}
    assert {p["from"] for d in again for p in d["puzzles"]} <= {"kept", "grader"}
    assert read_csv(out / "grades.csv") == table
    assert seconds2 < seconds / 3
    assert not settled(marker, set())

    # Last, so that every other check above has been made: the grades and the leaks, all at once.
    assert not wrong and not leaked, f"wrong grades (got, right): {wrong}; the grader's secrets in: {leaked}"


@needs_bwrap
@needs_ray
@pytest.mark.slow
def test_a_task_past_its_deadline_is_stopped_and_the_class_goes_on(tmp_path):
    """A task that outlives WORKBOOK_TASK_TIMEOUT (here: a kernel that loops for ever while
    the check's own limits are far away) is cancelled with its worker and its sandbox, graded
    `timeout` saying so, and not kept; the rest of the class is graded."""
    klass, out = tmp_path / "class", tmp_path / "grades"
    for name, source in (("honest", SOLUTION), ("hangs-its-task", (DATA / "endless/map.mojo").read_text())):
        put(klass / name, "p01", "map.mojo", source)
    marker = uuid.uuid4().hex
    env = environment(tmp_path, marker, WORKBOOK_SIM_STRETCH="600", WORKBOOK_RUN_TIMEOUT="600",
                      WORKBOOK_TASK_TIMEOUT="40")
    with Seen(marker) as seen:
        code, stdout, stderr, seconds = grade([str(klass), "-p", "p01", "--device", "sim", "--out", str(out),
                                               "--json"], env)
    assert code == exitcodes.FAILED, stderr[-3000:]
    docs = {doc["name"]: doc for doc in map(json.loads, stdout.splitlines())}
    assert docs["honest"]["grades"] == {"p01": "pass"}
    stopped = docs["hangs-its-task"]["puzzles"][0]
    assert docs["hangs-its-task"]["grades"] == {"p01": "timeout"} and stopped["from"] == "failed"
    assert stopped["problem"]["key"] == "class.task_timeout"
    assert seconds < 120
    assert len(list((out / "kept").iterdir())) == 1  # the honest one's: a stopped task's grade is not kept
    assert not settled(marker, seen.sandbox_uids())  # the cancelled worker's sandbox went with it


@needs_bwrap
@needs_ray
@pytest.mark.slow
def test_a_task_whose_worker_dies_is_tried_again_then_graded_error_and_the_class_goes_on(tmp_path):
    """A worker killed under its task (as a node's out-of-memory killer would) is tried once
    more by Ray; killed again, its cell is graded `error`, saying so, and not kept."""
    klass, out = tmp_path / "class", tmp_path / "grades"
    put(klass / "honest", "p01", "map.mojo", SOLUTION)
    put(klass / "its-worker-dies", "p01", "map.mojo", (DATA / "endless/map.mojo").read_text())
    marker = uuid.uuid4().hex
    env = environment(tmp_path, marker, WORKBOOK_SIM_STRETCH="600", WORKBOOK_RUN_TIMEOUT="600",
                      WORKBOOK_TASK_TIMEOUT="300")
    killed: list[int] = []

    def kill_the_endless_task() -> None:  # the honest task ends within seconds; the endless one never
        deadline = time.monotonic() + 240
        while len(killed) < 2 and time.monotonic() < deadline:
            for proc in psutil.process_iter(["pid", "cmdline", "create_time"]):
                with contextlib.suppress(psutil.Error):
                    info = proc.info  # psutil leaves out what it could not read of a process going away
                    if (proc.environ().get("CLASS_TEST_RUN") == marker and info.get("pid") not in killed
                            and (info.get("cmdline") or [""])[0].startswith("ray::_task")
                            and _runs_a_kernel(proc, seconds=3)):
                        proc.kill()
                        killed.append(proc.pid)
            time.sleep(0.5)

    killer = threading.Thread(target=kill_the_endless_task, daemon=True)
    killer.start()
    with Seen(marker) as seen:
        code, stdout, stderr, seconds = grade([str(klass), "-p", "p01", "--device", "sim", "--out", str(out),
                                               "--json"], env)
    killer.join()
    print(f"killed {killed}; the class took {seconds:.1f} s")
    assert len(killed) == 2, stderr[-3000:]
    assert code == exitcodes.FAILED, stderr[-3000:]
    docs = {doc["name"]: doc for doc in map(json.loads, stdout.splitlines())}
    assert docs["honest"]["grades"] == {"p01": "pass"}
    died = docs["its-worker-dies"]["puzzles"][0]
    assert docs["its-worker-dies"]["grades"] == {"p01": "error"} and died["problem"]["key"] == "class.task_died"
    assert len(list((out / "kept").iterdir())) == 1
    assert not settled(marker, seen.sandbox_uids())


def _a_kernel_runs(pids: set[int]) -> bool:
    """Whether one of these processes has been running a kernel for two seconds."""
    for pid in list(pids):
        with contextlib.suppress(psutil.Error):
            if _runs_a_kernel(psutil.Process(pid), seconds=2):
                return True
    return False


def _runs_a_kernel(proc: psutil.Process, seconds: float) -> bool:
    """Whether a Ray worker has been running a kernel for `seconds` (a launcher among its
    descendants that long): the endless one, never the honest one, which ends at once."""
    try:
        family = proc.children(recursive=True)
    except psutil.Error:
        return False
    for child in family:
        with contextlib.suppress(psutil.Error):
            if "/launch/" in " ".join(child.cmdline()) and time.time() - child.create_time() > seconds:
                return True
    return False


@needs_bwrap
@needs_ray
@pytest.mark.slow
def test_a_class_is_graded_on_an_existing_cluster_which_it_leaves_running(tmp_path):
    """`--address`: a cluster started with Ray's own `ray start --head` runs the tasks; the
    command leaves it as it found it (running), and the roster names the class."""
    klass, out = tmp_path / "class", tmp_path / "grades"
    put(klass / "a", "p01", "map.mojo", SOLUTION)
    put(klass / "b", "p01", "map.mojo", (WRONG / "p01/forgets_ten/map.mojo").read_text())
    listing = tmp_path / "roster.csv"
    listing.write_text(f"name,path\nAda,{klass / 'a'}\nBo,class/b\n")
    marker = uuid.uuid4().hex
    env = environment(tmp_path, marker)
    port = str(20000 + os.getpid() % 20000)
    head = subprocess.Popen(["ray", "start", "--head", "--block", "--port", port, "--num-cpus", "2",
                             "--include-dashboard", "false", "--disable-usage-stats"],
                            env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        code, stdout, stderr, seconds = grade(["--roster", str(listing), "-p", "p01", "--device", "sim", "--out",
                                               str(out), "--json", "--address", f"127.0.0.1:{port}"], env)
        assert code == exitcodes.FAILED, stderr[-3000:]
        docs = {doc["name"]: doc for doc in map(json.loads, stdout.splitlines())}
        assert {name: doc["grades"] for name, doc in docs.items()} == {"Ada": {"p01": "pass"}, "Bo": {"p01": "fail"}}
        assert {doc["puzzles"][0]["from"] for doc in docs.values()} == {"task"}
        assert head.poll() is None  # the cluster is the instructor's: still running
    finally:
        os.killpg(head.pid, signal.SIGKILL)  # the processes this test started, by their group
        head.wait(timeout=60)
    assert not settled(marker, set())


@needs_bwrap
@needs_ray
@pytest.mark.slow
def test_ctrl_c_stops_the_class_and_everything_it_started(tmp_path):
    """Ctrl-C (SIGINT) in the middle of a class: exit 130, and nothing of it left running:
    not the tasks, their sandboxes, nor the Ray the command started."""
    klass, out = tmp_path / "class", tmp_path / "grades"
    put(klass / "hangs", "p01", "map.mojo", (DATA / "endless/map.mojo").read_text())
    marker = uuid.uuid4().hex
    env = environment(tmp_path, marker, WORKBOOK_SIM_STRETCH="600", WORKBOOK_RUN_TIMEOUT="600")
    with Seen(marker) as seen:
        command = subprocess.Popen([sys.executable, "-m", "workbook", "grade", str(klass), "-p", "p01", "--device",
                                    "sim", "--out", str(out), "--json"], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                                   preexec_fn=sigint_at_default)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _a_kernel_runs(seen.pids):
            time.sleep(0.5)
        command.send_signal(signal.SIGINT)
        stdout, stderr = command.communicate(timeout=120)
    assert command.returncode == exitcodes.INTERRUPTED, (stdout[-3000:], stderr[-3000:])
    (doc,) = [json.loads(line) for line in stdout.splitlines()]
    assert doc["error"]["key"] == "error.interrupted"
    assert not settled(marker, seen.sandbox_uids())


# --- the parts, without Ray ---------------------------------------------------------------


def test_a_roster_names_submissions_as_csv_or_paths(tmp_path):
    for name in ("ada", "bo", "cy"):
        (tmp_path / name / "puzzles").mkdir(parents=True)
    listing = tmp_path / "roster.csv"
    listing.write_text('name,path\n# a comment\n\n"Lee, Ada",ada\nbo\n' + f"Cy,{tmp_path / 'cy'}\n" + "Again,ada\n")
    found = roster.unique(roster.read_roster(listing))
    assert [(s.name, s.path) for s in found] == [("Lee, Ada", tmp_path / "ada"), ("bo", tmp_path / "bo"),
                                                  ("Cy", tmp_path / "cy")]
    listing.write_text("a,b,c\n")
    with pytest.raises(roster.WorkbookError) as bad:
        roster.read_roster(listing)
    assert bad.value.msg.key == "class.roster_line"
    listing.write_bytes(b"\xff\xfe")
    with pytest.raises(roster.WorkbookError):
        roster.read_roster(listing)


def test_a_class_folder_is_told_from_a_submission(tmp_path):
    klass = tmp_path / "class"
    (klass / "b" / "puzzles").mkdir(parents=True)
    (klass / "a").mkdir()
    (klass / ".git").mkdir()
    (klass / "notes.txt").write_text("not a submission")
    assert roster.is_class(klass) and not roster.is_class(klass / "b")
    assert [s.name for s in roster.members(klass)] == ["a", "b"]
    assert [s.name for s in roster.gather([str(klass), str(klass / "b")], None)] == ["a", "b"]
    assert not roster.is_class(tmp_path / "nowhere")


def test_a_kept_grade_is_used_only_when_it_is_ours_whole_and_the_one_asked_for(tmp_path):
    store = gradestore.Store(tmp_path)
    answer = {"puzzle": {"id": "p01", "status": "pass", "files": {"map.mojo": "taken"}}, "sandbox": "", "seconds": 1}
    digest = gradestore.key("p01", "defs", {"map.mojo": b"x"}, seed=None, devices=(), gpu=False, unsandboxed=False,
                            settings={})
    assert digest != gradestore.key("p01", "defs", {"map.mojo": b"y"}, seed=None, devices=(), gpu=False,
                                    unsandboxed=False, settings={})
    assert store.get(digest, "p01") is None
    store.put(digest, answer)
    assert store.get(digest, "p01") == answer
    assert store.get(digest, "p02") is None  # another puzzle's name on it
    path = tmp_path / "kept" / f"{digest}.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    path.write_text(path.read_text()[:-5])  # cut short
    assert store.get(digest, "p01") is None
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"key": digest, "answer": answer}))
    path.unlink()
    path.symlink_to(other)  # a link is never followed
    assert store.get(digest, "p01") is None
    path.unlink()
    shutil.copyfile(other, path)
    assert store.get(digest, "p01") == answer
    if os.getuid() == 0:  # a grade another user left there is not trusted
        os.chown(path, 12345, 12345)
        assert store.get(digest, "p01") is None


def test_the_class_table_shows_what_a_submission_wrote_as_text_and_every_grade_in_words(tmp_path):
    """grades.csv, grades.jsonl and the HTML from cells made by hand: a hostile name, a
    program's output with markup, each grade word; nothing of it is markup or a formula."""
    from workbook.grade import classgrade, gradebook

    output = "</pre><script>alert('out')</script>"
    crash = {"id": "p01", "title": "Map", "status": "fail", "kind": "kernel", "files": {"map.mojo": "taken"},
             "problem": None, "diagnostics": [{"file": "puzzles/p01/map.mojo", "line": 3, "column": 1,
                                               "message": "<b>bad</b>"}],
             "parts": [{"id": "map", "kernels": {"sim": {"status": "crash", "reasons": [{"key": "x", "text": "<i>"}],
                                                          "output": output, "findings": [], "cases": []}}}]}
    rows = [classgrade.Row("<script>alert(1)</script>", tmp_path / "a"), classgrade.Row("@SUM(A1)", tmp_path / "b"),
            classgrade.Row("gone", tmp_path / "c", error=gradebook_error())]
    rows[0].cells = {"p01": classgrade.Cell(0, "p01", answer={"puzzle": crash, "sandbox": "bwrap", "seconds": 2}),
                     "p02": classgrade.Cell(0, "p02", source="failed", failure="error",
                                            answer={"puzzle": {"id": "p02", "status": "not_run", "files": {}}})}
    rows[1].cells = {"p01": classgrade.Cell(1, "p01", answer={"puzzle": {**crash, "status": "pass"}}),
                     "p02": classgrade.Cell(1, "p02", answer={"puzzle": {"id": "p02", "status": "timeout",
                                                                          "files": {"zip.mojo": "taken"}}})}
    run = classgrade.ClassRun(rows, ["p01", "p02"])
    assert [gradebook.words(r, run.ids) for r in rows[:2]] == [{"p01": "fail", "p02": "error"},
                                                                {"p01": "pass", "p02": "timeout"}]
    gradebook.write_all(tmp_path / "out", run, None, {"p01": "Map", "p02": "Zip"})
    table = (tmp_path / "out/grades.csv").read_text()
    assert "'@SUM(A1)" in table and "\ngone," in table and "error,error,0,2" in table
    pages = [(tmp_path / "out/index.html").read_text(),
             *(p.read_text() for p in sorted((tmp_path / "out/submissions").iterdir()))]
    for page in pages:
        assert "<script>" not in page and "<b>bad" not in page and "<i>" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(&#x27;out&#x27;)&lt;/script&gt;" in pages[1]
    assert all(f"{gradebook.SYMBOLS[w]} {w}" in pages[0] for w in ("pass", "fail", "timeout", "error"))
    lines = [json.loads(line) for line in (tmp_path / "out/grades.jsonl").read_text().splitlines()]
    assert [d["name"] for d in lines] == ["<script>alert(1)</script>", "@SUM(A1)", "gone"]
    assert lines[2]["error"]["key"] == "grade.not_a_folder"


def gradebook_error():
    from workbook.core.i18n import msg

    return msg("grade.not_a_folder", path="c")


def test_a_task_on_a_node_with_another_workbook_says_so_instead_of_grading():
    from workbook.grade import grading

    answer = grading.grade_one({"map.mojo": SOLUTION.encode()}, "p01", {"definitions": "not this workbook"})
    assert answer["error"]["key"] == "class.other_workbook"
    json.dumps(answer)  # plain data


def test_without_ray_a_class_run_says_how_to_install_it(tmp_path):
    klass = tmp_path / "class"
    put(klass / "a", "p01", "map.mojo", SOLUTION)
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, "WORKBOOK_LANG": "en"}
    code = ("import sys; sys.modules['ray'] = None\n"  # this Python has no Ray
            "from workbook.cli import app as cli\n"
            "cli.main(['grade', sys.argv[1], '-p', 'p01', '--out', sys.argv[2], '--json'])")
    done = subprocess.run([sys.executable, "-c", code, str(klass), str(tmp_path / "out")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == exitcodes.TOOLCHAIN, done.stderr
    (doc,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert doc["error"]["key"] == "class.no_ray" and "pip install -e '.[class]'" in doc["error"]["message"]


def test_a_task_s_settings_hold_while_it_grades_only_those_a_task_may_carry(monkeypatch):
    """A node's environment is the grader's while a task grades and its own again after,
    even when grading raised; a name outside TASK_SETTINGS is never set."""
    from workbook.grade import grading

    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "77")
    monkeypatch.delenv("WORKBOOK_RUN_TIMEOUT", raising=False)
    monkeypatch.setenv("WORKBOOK_GPU_SHARE", "2")
    monkeypatch.delenv("WORKBOOK_NOT_A_TASK_SETTING", raising=False)
    wanted = {"WORKBOOK_CHECK_BUDGET": "5", "WORKBOOK_RUN_TIMEOUT": "9", "WORKBOOK_GPU_SHARE": None,
              "WORKBOOK_NOT_A_TASK_SETTING": "1"}
    with pytest.raises(RuntimeError), grading._settings_of(wanted):
        assert (os.environ["WORKBOOK_CHECK_BUDGET"], os.environ["WORKBOOK_RUN_TIMEOUT"]) == ("5", "9")
        assert "WORKBOOK_GPU_SHARE" not in os.environ and "WORKBOOK_NOT_A_TASK_SETTING" not in os.environ
        raise RuntimeError("a grade that failed")
    assert os.environ["WORKBOOK_CHECK_BUDGET"] == "77" and os.environ["WORKBOOK_GPU_SHARE"] == "2"
    assert "WORKBOOK_RUN_TIMEOUT" not in os.environ and "WORKBOOK_NOT_A_TASK_SETTING" not in os.environ
