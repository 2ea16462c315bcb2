"""Watch mode: runs at start, re-runs on a real change only, cancels a stale run, shows the
first stage first, and leaves no processes.

The Watcher runs in a thread with a fake key source. Most tests give it a stand-in for the
engine (`check=`) that starts real child processes through the same owner the engine uses."""

from __future__ import annotations

import io
import queue
import sys
import threading
import time

import psutil
from rich.console import Console

from workbook.check import engine
from workbook.cli.watch import Watcher
from workbook.core import i18n
from workbook.core.results import PartResult, PuzzleResult, Status
from workbook.course import state

GRANDCHILD = ("import subprocess, sys, time\n"
              "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
              "open(sys.argv[1], 'a').write(f'{g.pid}\\n')\n"
              "time.sleep(60)\n")


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


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def result_of(puzzle, status: Status = Status.FAIL) -> PuzzleResult:
    result = PuzzleResult(puzzle.id, puzzle.title["en"], status)
    result.parts.append(PartResult(puzzle.parts[0].id, status, {}, 0.0, 0.0))
    return result


class Fake:
    """A stand-in for engine.check_puzzle: counts its calls, may start a real child and wait."""

    def __init__(self, status: Status = Status.FAIL, child: list[str] | None = None):
        self.status, self.child, self.calls, self.options = status, child, [], []

    def __call__(self, puzzle, options, events=None, children=None):
        self.calls.append(puzzle.id)
        self.options.append(options)
        if self.child:
            outcome = children.wait(children.start(self.child), 120)
            if outcome.cancelled:
                raise engine.Cancelled()
        return result_of(puzzle, self.status)


class Session:
    """A Watcher running in a thread, its console captured."""

    def __init__(self, puzzle_id: str | None, check=engine.check_puzzle, options: engine.Options | None = None):
        self.keys = Keys()
        self.buffer = io.StringIO()
        self.out = Console(file=self.buffer, width=100, force_terminal=False, highlight=False)
        self.watcher = Watcher(puzzle_id, self.keys, self.out, check=check, poll=0.05, options=options)
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)
        self.thread.start()

    @property
    def text(self) -> str:
        return self.buffer.getvalue()

    def finished(self) -> int:
        return sum(1 for r in self.watcher.runs if r.result is not None)

    def quit(self) -> None:
        self.keys.press("q")
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


def no_children_left() -> None:
    left = [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], left


def dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_runs_once_at_start_and_draws_the_report(root):
    session = Session("p18")  # the real engine: the untouched skeleton is "not started", nothing compiles
    wait_for(lambda: session.finished() == 1)
    assert session.watcher.runs[0].result.status == Status.NOT_STARTED, session.text
    assert "not started" in session.text and "workbook show p18" in " ".join(session.text.split())
    assert "h hint" in session.text and "q quit" in session.text
    session.keys.press("h")
    wait_for(lambda: "Hint 1 of" in session.text)
    session.quit()
    assert "Stopped watching" in session.text
    no_children_left()


def test_a_change_runs_again_once_and_an_identical_save_does_not(root):
    learner = root / "puzzles/p01/map.mojo"
    fake = Fake()
    session = Session("p01", check=fake)
    wait_for(lambda: session.finished() == 1)
    learner.write_text(learner.read_text() + "\n# my change\n")
    wait_for(lambda: session.finished() == 2)
    learner.write_text(learner.read_text())  # saved again, nothing changed
    learner.touch()
    time.sleep(0.5)
    assert len(fake.calls) == 2
    session.keys.press("r")  # asked for: runs even though nothing changed
    wait_for(lambda: session.finished() == 3)
    session.quit()


def test_a_change_during_a_run_cancels_it_and_quitting_kills_the_whole_tree(root, tmp_path):
    pids = tmp_path / "grandchildren"
    learner = root / "puzzles/p01/map.mojo"
    session = Session("p01", check=Fake(child=[sys.executable, "-c", GRANDCHILD, str(pids)]))
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 1)
    first = session.watcher.runs[0]
    learner.write_text(learner.read_text() + "\n# first edit\n")
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
    assert first.cancelled and first.result is None
    wait_for(lambda: dead(int(pids.read_text().split()[0])), 10)
    assert "the run in progress was stopped" in session.text
    session.quit()
    for pid in pids.read_text().split():
        wait_for(lambda pid=pid: dead(int(pid)), 10)
    no_children_left()


def test_the_first_stage_is_shown_before_the_graph(root):
    release = threading.Event()

    def staged(puzzle, options, events=None, children=None):
        first = result_of(puzzle, Status.PASS)
        events(engine.Event("", "stage", i18n.msg("phase.kernels_done"), result=first))
        release.wait(30)
        return result_of(puzzle, Status.PASS)

    session = Session("p18", check=staged)
    wait_for(lambda: "now your op through a MAX graph" in session.text)
    assert session.finished() == 0
    release.set()
    wait_for(lambda: session.finished() == 1)
    session.quit()


def test_next_switches_to_the_next_pending_puzzle(root):
    fake = Fake()
    session = Session("p18", check=fake)
    wait_for(lambda: session.finished() == 1)
    session.keys.press("n")
    wait_for(lambda: session.finished() == 2)
    assert fake.calls[1] != "p18" and f"Now watching {fake.calls[1]}" in session.text
    session.quit()


def test_a_pass_is_remembered_says_so_and_offers_the_next_puzzle(root):
    session = Session(None, check=Fake(Status.PASS))
    wait_for(lambda: session.finished() == 1)
    wait_for(lambda: "passed!" in session.text)
    first = session.watcher.runs[0].target
    assert state.load().of(first).status == "pass" and "Press n" in session.text
    session.quit()


def test_a_quick_watch_runs_quick_and_its_pass_is_not_progress(root):
    fake = Fake(Status.PASS)
    session = Session("p01", check=fake, options=engine.Options(quick=True))
    wait_for(lambda: session.finished() == 1)
    assert fake.options[0].quick
    assert state.load().of("p01").status != "pass"  # the GPU compile check was not done
    session.quit()


def test_the_keys_line_is_translated(root):
    i18n.set_language("ko")
    session = Session("p01", check=Fake())
    wait_for(lambda: "h 힌트" in session.text)
    session.quit()
    assert "지켜보기를 멈췄습니다" in session.text


def test_a_stop_condition_ends_the_watch_and_its_run(root, tmp_path):
    stop = threading.Event()
    pids = tmp_path / "grandchildren"
    out = Console(file=io.StringIO(), width=100, force_terminal=False)
    watcher = Watcher("p01", Keys(), out, stop=stop.is_set, poll=0.05,
                      check=Fake(child=[sys.executable, "-c", GRANDCHILD, str(pids)]))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    wait_for(lambda: pids.exists())
    stop.set()
    thread.join(timeout=30)
    assert not thread.is_alive() and watcher.runs[0].cancelled
    wait_for(lambda: dead(int(pids.read_text().split()[0])), 10)
    no_children_left()


def test_a_hint_shown_during_a_run_is_not_forgotten_when_it_ends(root):
    release = threading.Event()

    def slow(puzzle, options, events=None, children=None):
        release.wait(30)
        return result_of(puzzle)

    session = Session("p18", check=slow)
    wait_for(lambda: len(session.watcher.runs) == 1)
    session.keys.press("h")
    wait_for(lambda: "Hint 1 of" in session.text)
    release.set()
    wait_for(lambda: session.finished() == 1)
    assert state.load().of("p18").hints_shown == 1
    session.quit()


def test_watch_command_rejects_an_unknown_id(root):
    import pytest

    from workbook.cli.app import main

    with pytest.raises(SystemExit) as exited:
        main(["watch", "p37"])
    assert exited.value.code == 2


def rich_failure(puzzle) -> PuzzleResult:
    """A failing result with a lot to say: a matrix, a finding with its line, several cases."""
    import numpy as np

    from workbook.core.results import CaseResult, DeviceResult, Finding
    from workbook.judging import compare

    expected = np.arange(54, dtype=np.float64).reshape(6, 9)
    got = expected.copy()
    got[4:, :] = np.nan
    cases = [CaseResult(f"case{k}", {}, [compare.check_output("output", got, expected, 0, 0)], [], passed=False,
                        label={"en": f"case number {k}", "ko": f"케이스 {k}"}) for k in range(8)]
    finding = Finding("sim", "out_of_bounds", i18n.msg("finding.sim_write_outside", who=i18n.msg("sim.thread", t=3),
                                                      element="output[6, 0]", buffer="output", size=54),
                      file=f"puzzles/{puzzle.id}/x.mojo", line=27, case="case0")
    sim = DeviceResult("sim", Status.FAIL, cases=cases, findings=[finding])
    result = PuzzleResult(puzzle.id, puzzle.title["en"], Status.FAIL)
    result.parts.append(PartResult(puzzle.parts[0].id, Status.FAIL, {"sim": sim}, 0.0, 0.0))
    return result


def test_watch_leads_with_a_compact_view_that_fits_24_rows_and_d_shows_the_rest(root):
    session = Session("p07", check=lambda puzzle, options, events=None, children=None: rich_failure(puzzle))
    session.out.height = 24
    session.out.width = 80
    wait_for(lambda: session.finished() == 1)
    wait_for(lambda: "q quit" in session.text)
    view = session.text[session.text.rindex("workbook watch ·"):]
    lines = view.rstrip("\n").splitlines()
    assert len(lines) <= 24, view
    assert "✘ fail" in view and "thread 3 wrote output[6, 0]" in view and "puzzles/p07/x.mojo:27" in view
    assert "First failing case 'case number 0': 18 of the 54 elements of 'output' wrong" in view
    assert "output[4, 0] is nan, expected 36" in view
    assert "Who wrote" not in view and "case number 7" not in view  # the rest is a key away
    session.keys.press("d")
    wait_for(lambda: "case number 7" in session.text)
    wait_for(lambda: "output[row, col]" in session.text)  # the whole report, printed a part at a time
    session.quit()


def test_next_goes_to_the_first_puzzle_not_passed_in_course_order(root):
    from workbook.course import catalog

    ids = [p.id for p in catalog.all_puzzles()]
    for pid in ids[:4]:  # p01..p04 passed; p05, p06, p07 not yet
        state.remember(pid, "pass", {"gpu": "compiled", "sim": "pass"})
    fake = Fake()
    session = Session("p08", check=fake)
    wait_for(lambda: session.finished() == 1)
    session.keys.press("n")
    wait_for(lambda: session.finished() == 2)
    assert fake.calls[1] == "p05", fake.calls
    session.keys.press("n")
    wait_for(lambda: session.finished() == 3)
    assert fake.calls[2] == "p06", fake.calls  # from p05, the next one not passed: not p05 again
    session.quit()


def test_the_compact_view_fits_24_rows_in_korean_too(root):
    i18n.set_language("ko")
    session = Session("p07", check=lambda puzzle, options, events=None, children=None: rich_failure(puzzle))
    session.out.height = 24
    session.out.width = 80
    wait_for(lambda: session.finished() == 1)
    wait_for(lambda: "q 종료" in session.text)
    view = session.text[session.text.rindex("workbook watch ·"):]
    assert len(view.rstrip("\n").splitlines()) <= 24, view
    assert "처음 틀린 케이스 '케이스 0'" in view and "puzzles/p07/x.mojo:27" in view and "d 보고서 전체" in view
    session.quit()
