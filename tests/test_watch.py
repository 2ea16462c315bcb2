"""Watch mode: runs at start, re-runs on a real change only, cancels a stale run, leaves no processes.

The Watcher runs in a thread with a fake key source; slow runs are injected commands (no MAX compile).
"""

from __future__ import annotations

import io
import queue
import sys
import threading
import time

import psutil
from rich.console import Console

from workbook.watch import Watcher

SLOW = "import time; time.sleep(30)"
# A run that starts a grandchild in a session of its own (as the device workers do), writes its pid, and waits.
SLOW_TREE = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], start_new_session=True)\n"
    "open(sys.argv[1], 'a').write(f'{child.pid}\\n')\n"
    "time.sleep(30)\n"
)


class Keys:
    """Keys pressed by the test; read_key(timeout) waits for one like select() would."""

    def __init__(self):
        self.pressed: queue.Queue[str] = queue.Queue()

    def press(self, key: str) -> None:
        self.pressed.put(key)

    def __call__(self, timeout: float) -> str | None:
        try:
            return self.pressed.get(timeout=timeout)
        except queue.Empty:
            return None


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


class Session:
    """A Watcher running in a thread, its console captured."""

    def __init__(self, puzzle_id: str | None, command=None):
        self.keys = Keys()
        self.buffer = io.StringIO()
        self.out = Console(file=self.buffer, width=100, force_terminal=False, highlight=False)
        self.watcher = Watcher(puzzle_id, self.keys, self.out, command=command, poll=0.05)
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)
        self.thread.start()

    @property
    def text(self) -> str:
        return self.buffer.getvalue()

    def finished_runs(self) -> int:
        return sum(1 for r in self.watcher.runs if r.returncode is not None)

    def quit(self) -> None:
        self.keys.press("q")
        self.thread.join(timeout=20)
        assert not self.thread.is_alive()


def quick(target: str) -> list[str]:
    return [sys.executable, "-c", f"print('ran {target}')"]


def no_children_left() -> None:
    left = [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], left


def assert_dead(pid: int) -> None:
    if psutil.pid_exists(pid):
        try:
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid
        except psutil.NoSuchProcess:
            pass


def test_runs_once_at_start_and_redraws_the_report(root):
    session = Session("p18")  # the real `workbook run`: the untouched skeleton is "not started", no compile
    wait_for(lambda: session.finished_runs() == 1)
    time.sleep(0.3)
    assert len(session.watcher.runs) == 1
    run = session.watcher.runs[0]
    assert run.target == "p18" and run.returncode == 1
    assert "not started" in run.text and "workbook show p18" in run.text
    assert "not started" in session.text
    assert "h hint" in session.text and "q quit" in session.text
    session.keys.press("h")
    wait_for(lambda: "Hint 1 of 5" in session.text)
    session.quit()
    assert "Stopped watching" in session.text
    no_children_left()


def test_a_change_runs_again_once_and_an_identical_save_does_not(root):
    learner = root / "puzzles/p18/op/softmax.mojo"
    session = Session("p18", command=quick)
    wait_for(lambda: session.finished_runs() == 1)
    learner.write_text(learner.read_text() + "\n# my change\n")
    wait_for(lambda: session.finished_runs() == 2)
    time.sleep(0.5)
    assert len(session.watcher.runs) == 2
    learner.write_text(learner.read_text())  # saved again, nothing changed
    learner.touch()
    time.sleep(0.6)
    assert len(session.watcher.runs) == 2
    session.keys.press("r")  # asked for: runs even though nothing changed
    wait_for(lambda: session.finished_runs() == 3)
    session.quit()
    assert "ran p18" in session.text
    no_children_left()


def test_a_change_during_a_run_cancels_it_and_quit_kills_the_whole_tree(root, tmp_path):
    pids = tmp_path / "grandchildren"
    learner = root / "puzzles/p18/op/softmax.mojo"
    session = Session("p18", command=lambda target: [sys.executable, "-c", SLOW_TREE, str(pids)])
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 1)
    first = session.watcher.runs[0]
    learner.write_text(learner.read_text() + "\n# first edit\n")
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
    assert first.cancelled and first.returncode is not None and first.returncode < 0
    grandchild = int(pids.read_text().split()[0])
    assert_dead(grandchild)
    assert len(session.watcher.runs) == 2
    second = session.watcher.runs[1]
    assert second.proc.poll() is None and not second.cancelled
    assert "the run in progress was stopped" in session.text
    session.quit()
    assert second.returncode is not None and second.returncode < 0
    for pid in pids.read_text().split():
        assert_dead(int(pid))
    no_children_left()


def test_next_switches_to_the_next_pending_puzzle(root):
    session = Session("p18", command=quick)
    wait_for(lambda: session.finished_runs() == 1)
    session.keys.press("n")
    wait_for(lambda: session.finished_runs() == 2)
    switched = session.watcher.runs[1].target
    assert switched != "p18" and "Now watching " + switched in session.text
    session.quit()
    no_children_left()


def test_a_pass_says_so_and_offers_the_next_puzzle(root):
    from workbook import state

    def passing(target: str) -> list[str]:  # a run that records a pass, as `workbook run` does
        code = ("from workbook import state; s = state.load(); "
                f"state.record(s, {target!r}, 'pass', {{'cpu': 'pass'}}); state.save(s)")
        return [sys.executable, "-c", code]

    session = Session(None, command=passing)
    wait_for(lambda: session.finished_runs() == 1)
    wait_for(lambda: "passed!" in session.text)
    assert state.load().of(session.watcher.runs[0].target).status == "pass"
    assert "Press n" in session.text
    session.quit()
    no_children_left()


def test_the_keys_line_is_translated(root):
    from workbook import i18n

    i18n.set_language("ko")
    session = Session("p18", command=quick)
    wait_for(lambda: session.finished_runs() == 1)
    wait_for(lambda: "h 힌트" in session.text)
    session.quit()
    assert "지켜보기를 마쳤습니다" in session.text


def test_a_stop_condition_ends_the_watch(root):
    stop = threading.Event()
    keys = Keys()
    out = Console(file=io.StringIO(), width=100, force_terminal=False)
    watcher = Watcher("p18", keys, out, stop=stop.is_set, command=lambda target: [sys.executable, "-c", SLOW],
                      poll=0.05)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    wait_for(lambda: len(watcher.runs) == 1)
    stop.set()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert watcher.runs[0].cancelled
    no_children_left()


def test_a_hint_shown_during_a_run_is_not_forgotten_when_it_ends(root):
    from workbook import state

    def slow_run(target: str) -> list[str]:  # like `workbook run`: works a while, then records its verdict
        code = ("import time; from workbook import state; time.sleep(1.0); "
                f"state.remember({target!r}, 'fail', {{'cpu': 'fail'}})")
        return [sys.executable, "-c", code]

    session = Session("p18", command=slow_run)
    wait_for(lambda: len(session.watcher.runs) == 1)
    time.sleep(0.3)
    session.keys.press("h")
    wait_for(lambda: "Hint 1 of 5" in session.text)
    wait_for(lambda: session.finished_runs() == 1)
    assert state.load().of("p18").hints_shown == 1
    session.keys.press("h")
    wait_for(lambda: "Hint 2 of 5" in session.text)
    session.quit()


def test_watch_command_rejects_an_unknown_id(root):
    from typer.testing import CliRunner

    from workbook.cli import app

    result = CliRunner().invoke(app, ["watch", "p19"])
    assert result.exit_code == 2 and "p18" in result.output


def test_watch_help_is_there():
    from typer.testing import CliRunner

    from workbook.cli import app

    result = CliRunner().invoke(app, ["watch", "--help"])
    assert result.exit_code == 0 and "save" in result.output
