"""Grading's sandbox (bubblewrap), started for real: what code inside it can and cannot do.

Each test runs a small Python program in the sandbox, through `Children` as a
kernel launcher would be, doing what a hostile submission would try."""

from __future__ import annotations

import json
import os
import sys
import time

import psutil
import pytest

from workbook.child import sandbox
from workbook.child.limits import Limits
from workbook.child.processes import Children

pytestmark = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")


def inside(tmp_path, code: str, *args: str, limits: Limits | None = None, timeout: float = 60):
    """Run `code` in a sandbox with `tmp_path/run` as its run folder; (outcome, its output)."""
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    box = sandbox.Sandbox.create(limits or Limits(memory_mb=1024, file_mb=8, processes=64))
    with Children(sandbox=box, limits=box.limits) as children:
        outcome = children.run([sys.executable, "-c", code, *args], timeout=timeout, log=tmp_path / "log",
                               cwd=run, learner=True)
    return outcome, (tmp_path / "log").read_text(errors="replace")


def test_the_sandbox_starts_here():
    """Grading depends on it: on this machine (and in CI, which installs bubblewrap) it must start."""
    assert sandbox.probe() is None


def test_no_network(tmp_path):
    code = ("import socket, json\n"
            "s = socket.socket(); s.settimeout(3)\n"
            "try:\n    s.connect(('1.1.1.1', 53)); print('CONNECTED')\n"
            "except OSError as e:\n    print('refused', e)\n"
            "print(json.dumps(sorted(n for _, n in socket.if_nameindex())))\n")
    outcome, out = inside(tmp_path, code)
    assert outcome.returncode == 0, out
    assert "CONNECTED" not in out and json.loads(out.strip().splitlines()[-1]) == ["lo"]


def test_the_filesystem_is_read_only_but_for_the_run_folder(tmp_path):
    secret = tmp_path / "secret.txt"  # the grader's file, outside the run folder
    secret.write_text("the grader's secret")
    outside = tmp_path / "written-from-inside"
    targets = [str(outside), os.path.expanduser("~/.workbook-sandbox-probe")]
    code = ("import sys, os\n"  # the paths are in the code, as a submission would have them
            f"for target in {targets!r}:\n"
            "    try:\n        open(target, 'w').write('x'); print('WROTE', target)\n"
            "    except OSError as e:\n        print('refused', target, e.errno)\n"
            f"try:\n    print('READ', open({str(secret)!r}).read())\n"
            "except OSError as e:\n    print('unreadable', e.errno)\n"
            "open('mine.txt', 'w').write('fine'); print('run folder ok')\n")
    outcome, out = inside(tmp_path, code)
    assert outcome.returncode == 0, out
    assert "WROTE" not in out and not outside.exists()
    assert not os.path.exists(os.path.expanduser("~/.workbook-sandbox-probe"))
    assert "READ" not in out and "the grader's secret" not in out
    assert "run folder ok" in out and (tmp_path / "run" / "mine.txt").read_text() == "fine"


def test_the_graders_environment_stays_out(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_TOKEN", "s3cr3t")
    outcome, out = inside(tmp_path, "import os; print(sorted(os.environ)); print(os.environ.get('GRADER_TOKEN'))")
    assert outcome.returncode == 0 and "s3cr3t" not in out and "GRADER_TOKEN" not in out


def test_a_process_started_in_the_background_dies_with_the_run(tmp_path):
    """`setsid sleep &` leaves the group and the parent: the PID namespace still ends it."""
    marker = f"{time.time_ns() % 100000 + 400000}"
    code = (f"import subprocess\nsubprocess.Popen(['setsid', 'sleep', '{marker}'], start_new_session=True)\n"
            "print('started')\n")
    outcome, out = inside(tmp_path, code)
    assert outcome.returncode == 0 and "started" in out, out
    time.sleep(0.5)
    left = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and marker in p.info["cmdline"]
            and p.status() != psutil.STATUS_ZOMBIE]
    assert not left


def test_the_process_limit_holds(tmp_path):
    """A fork bomb stops at the limit (as root too: the sandbox runs as a user of its own)."""
    code = ("import os, time\nn = 0\n"
            "for i in range(200):\n"
            "    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
            "    if pid == 0:\n        time.sleep(5); os._exit(0)\n"
            "    n += 1\n"
            "print('forked', n)\n")
    outcome, out = inside(tmp_path, code, limits=Limits(processes=20))
    assert "forked" in out, out
    assert int(out.split("forked")[1].split()[0]) < 20


def test_memory_and_file_limits_hold_inside(tmp_path):
    outcome, out = inside(tmp_path, "b = bytearray(2 << 30); print('allocated')", limits=Limits(memory_mb=256))
    assert outcome.limit is not None and outcome.limit.key == "limits.memory" and "allocated" not in out
    outcome, out = inside(tmp_path, "import sys\nfor i in range(10000): sys.stdout.write('y' * 10000)\n",
                          limits=Limits(file_mb=2))
    assert outcome.limit is not None and outcome.limit.key == "limits.file"
    assert (tmp_path / "log").stat().st_size <= 2 << 20


def test_a_signal_inside_is_reported_as_that_signal(tmp_path):
    """bwrap reports a death by signal N as exit code 128 + N; the launcher's timeout
    (SIGALRM) and fault handling rely on seeing the signal itself."""
    outcome, _ = inside(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert outcome.returncode == -11


def test_descriptors_the_workbook_opened_reach_the_program_and_nothing_else_does(tmp_path):
    """The verdict channel through _exec.py and bwrap: what the program writes to a descriptor
    it was handed lands in the workbook's nameless file (also when it opens it again through
    /proc/self/fd, as compute-sanitizer's report is written), its output in the log sink, and
    what it leaves in its run folder under the old names is never what the workbook reads."""
    from workbook.child.channel import Sink

    run = tmp_path / "run"
    run.mkdir()
    sink, log = Sink(), Sink()
    code = ("import os, sys\n"
            "fd = int(sys.argv[1])\n"
            "os.write(fd, b'through the descriptor;')\n"
            "with open(f'/proc/self/fd/{fd}', 'a') as again: again.write(' and again')\n"
            "open('result.json', 'w').write('forged')\n"
            "print('to the log')\n")
    box = sandbox.Sandbox.create(Limits(memory_mb=1024, file_mb=8, processes=64))
    try:
        with Children(sandbox=box, limits=box.limits) as children:
            child = children.start([sys.executable, "-c", code, str(sink.fd)], log=log, cwd=run, learner=True,
                                   pass_fds=(sink.fd,))
            outcome = children.wait(child, 60)
            assert outcome.returncode == 0, child.log_text()
            assert child.log_text().strip() == "to the log"
        assert sink.read(1000) == b"through the descriptor; and again"
        assert (run / "result.json").read_text() == "forged"  # there, and read by no one
    finally:
        sink.close()
        log.close()


def test_what_a_program_writes_through_its_descriptors_counts_against_its_file_limit(tmp_path):
    from workbook.child.channel import Sink

    run = tmp_path / "run"
    run.mkdir()
    sink, log = Sink(), Sink()
    code = "import os, sys\nfd = int(sys.argv[1])\nfor i in range(100): os.write(fd, b'x' * (1 << 20))\n"
    box = sandbox.Sandbox.create(Limits(memory_mb=1024, file_mb=2, processes=64))
    try:
        with Children(sandbox=box, limits=box.limits) as children:
            child = children.start([sys.executable, "-c", code, str(sink.fd)], log=log, cwd=run, learner=True,
                                   pass_fds=(sink.fd,))
            outcome = children.wait(child, 60)
        assert outcome.limit is not None and outcome.limit.key == "limits.file"
        assert sink.size() <= 2 << 20
    finally:
        sink.close()
        log.close()
