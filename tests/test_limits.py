"""Learner code runs within limits: memory, file size, its run folder, and nothing it
starts outlives it, not even a process that left its group (`setsid sleep &`).

Real processes, real rlimits: each child here is a Python program doing what a
runaway kernel would."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import psutil
import pytest

from workbook.child.limits import Limits
from workbook.child.processes import Children

DATA = Path(__file__).parent / "data"
GREEDY = "b = bytearray(2 << 30); print('allocated')"  # 2 GB, written to
CHATTY = "import sys\nfor i in range(100000): sys.stdout.write('x' * 1000 + '\\n')\nprint('done')"
FILES = ("import sys\nfor i in range(64):\n    open(f'f{i}', 'wb').write(b'x' * (1 << 20))\n"
         "print('wrote everything')")
# A child that starts a process in a session of its own (as `setsid sleep &` does), says its pid, and ends.
ESCAPE = ("import subprocess, sys\n"
          "g = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
          "open(sys.argv[1], 'w').write(str(g.pid))\n")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_child_past_its_memory_limit_is_stopped_and_says_why(tmp_path):
    with Children(limits=Limits(memory_mb=256)) as children:
        outcome = children.run([sys.executable, "-c", GREEDY], timeout=60, log=tmp_path / "log",
                               cwd=tmp_path, learner=True)
    assert outcome.returncode != 0 and "allocated" not in (tmp_path / "log").read_text()
    assert outcome.limit is not None and outcome.limit.key == "limits.memory"


def test_a_child_that_dies_of_its_limit_between_two_looks_still_says_why(tmp_path, monkeypatch):
    """A kernel that fills 400 MB and aborts at once (a failed malloc) is told as the memory
    limit, never as a bare signal: no look at its memory comes in time (the looks are turned
    off here), and a bigger child before it (a compiler, in a test worker) must not hide it.
    Under load in CI this came back as run.died_signal."""
    import workbook.child.processes as processes

    with Children() as children:  # not learner code: no limit; 600 MB, then it ends well
        children.run([sys.executable, "-c", "b = b'x' * (600 << 20)"], timeout=60, log=tmp_path / "big",
                     cwd=tmp_path)
    monkeypatch.setattr(processes, "WATCH_EVERY", 3600.0)
    hog = "import os\nb = b'x' * (400 << 20)\nos.abort()"
    with Children(limits=Limits(memory_mb=450)) as children:
        outcome = children.run([sys.executable, "-c", hog], timeout=60, log=tmp_path / "log", cwd=tmp_path,
                               learner=True)
    assert outcome.returncode == -6
    assert outcome.limit is not None and outcome.limit.key == "limits.memory"


def test_a_child_that_prints_too_much_is_stopped_and_its_log_stays_small(tmp_path):
    """The issue's kernel printed 79 MB and passed; its log now ends at the limit."""
    with Children(limits=Limits(file_mb=4)) as children:
        outcome = children.run([sys.executable, "-c", CHATTY], timeout=60, log=tmp_path / "log",
                               cwd=tmp_path, learner=True)
    assert outcome.limit is not None and outcome.limit.key == "limits.file"
    assert (tmp_path / "log").stat().st_size <= 4 << 20
    assert "done" not in (tmp_path / "log").read_text()


def test_a_child_that_fills_its_run_folder_is_stopped_or_failed(tmp_path):
    """Each file is under the file limit; together they are not (watched by the parent, so
    a fast writer may finish first: then its run fails all the same)."""
    with Children(limits=Limits(file_mb=2)) as children:  # 2 MB a file, 8 MB a folder
        outcome = children.run([sys.executable, "-c", FILES], timeout=60, log=tmp_path / "log",
                               cwd=tmp_path, learner=True)
    assert outcome.limit is not None and outcome.limit.key == "limits.file"


def test_other_children_get_no_limits(tmp_path):
    """The compiler is not learner code: it keeps what it needs."""
    with Children(limits=Limits(memory_mb=256)) as children:
        outcome = children.run([sys.executable, "-c", GREEDY], timeout=60, log=tmp_path / "log")
    assert outcome.returncode == 0 and outcome.limit is None


def test_a_process_that_left_its_group_dies_with_the_run(tmp_path):
    """It is adopted by the workbook (a subreaper) and carries its child's token: found, killed."""
    pid_file = tmp_path / "escaped"
    with Children() as children:
        outcome = children.run([sys.executable, "-c", ESCAPE, str(pid_file)], timeout=30, log=tmp_path / "log",
                               learner=True)
        assert outcome.returncode == 0
        escaped = int(pid_file.read_text())
        deadline = time.monotonic() + 10
        while alive(escaped) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(escaped)


@pytest.mark.slow
@pytest.mark.parametrize("kernel, setting, key", [("prints", "WORKBOOK_FILE_LIMIT_MB", "limits.file"),
                                                  ("hogs", "WORKBOOK_MEMORY_LIMIT_MB", "limits.memory"),
                                                  ("shares", "WORKBOOK_MEMORY_LIMIT_MB", "limits.memory")])
def test_a_right_kernel_that_breaks_a_limit_fails_saying_which(root, monkeypatch, kernel, setting, key):
    """A right kernel that prints 20 MB, or takes 4 GB, passed before (issue 17: 79 MB of log,
    5.4 GB of memory), and so did one that fills 1 GB of shared memory through external_call
    (issue 38: no process's data); now it is stopped at the limit, and the report says which."""
    from conftest import put_wrong

    from workbook.check import engine
    from workbook.core.results import Status
    from workbook.course import catalog

    put_wrong(root, "p01", "forgets_ten")  # any learner file; replaced next
    shutil.copyfile(DATA / "limits" / kernel / "map.mojo", root / "puzzles/p01/map.mojo")
    monkeypatch.setenv(setting, "2" if kernel == "prints" else "512")
    result = engine.check_puzzle(catalog.load("p01"), engine.Options(seed=1, quick=True, devices=("sim",)))
    sim = result.parts[0].kernels["sim"]
    assert sim.status == Status.CRASH and [m.key for m in sim.reasons] == [key]


def test_a_file_cut_at_the_limit_is_told_even_when_the_child_carries_on(tmp_path):
    """A program that ignores SIGXFSZ (as Mojo's runtime does) gets a failed write and may
    end well: the file it wrote up to the limit still says which limit cut it."""
    quiet = ("try:\n    open('outputs.bin', 'wb').write(b'x' * (3 << 20))\nexcept OSError:\n    pass\n"
             "print('ended well')")
    with Children(limits=Limits(file_mb=1)) as children:
        outcome = children.run([sys.executable, "-c", quiet], timeout=60, log=tmp_path / "log",
                               cwd=tmp_path, learner=True)
    assert outcome.returncode == 0 and "ended well" in (tmp_path / "log").read_text()
    assert outcome.limit is not None and outcome.limit.key == "limits.file"


def test_the_workbooks_own_data_is_allowed_on_top_of_the_learners_memory(tmp_path):
    """A GPU launcher's buffers are the workbook's: a 2 GB need passes with them allowed beside a
    256 MB allowance, and the same child alone is stopped at the allowance."""
    with Children(limits=Limits(memory_mb=256)) as children:
        child = children.start([sys.executable, "-c", GREEDY], log=tmp_path / "log", cwd=tmp_path, learner=True,
                               memory_extra_mb=3072)
        outcome = children.wait(child, 60)
    assert outcome.returncode == 0 and outcome.limit is None and "allocated" in (tmp_path / "log").read_text()
