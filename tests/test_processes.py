"""Nothing the workbook starts outlives it: time limits, cancels, a killed parent, Ctrl-C.

These start real processes: a real `workbook run` on a real endless-loop kernel,
interrupted with a real SIGINT."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import sigint_at_default

from workbook.child import processes
from workbook.child.processes import Children

DATA = Path(__file__).parent / "data"
SLEEPER = "import time; time.sleep(60)"
# A child that starts a grandchild in a session of its own, writes the grandchild's pid, and waits.
TREE = ("import subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        "open(sys.argv[1], 'w').write(str(g.pid))\n"
        "time.sleep(60)\n")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_time_limit_kills_the_child_and_what_it_started(tmp_path):
    pid_file = tmp_path / "grandchild"
    with Children() as children:
        outcome = children.run([sys.executable, "-c", TREE, str(pid_file)], timeout=3, log=tmp_path / "log")
    assert outcome.timed_out
    assert not alive(int(pid_file.read_text()))


def test_a_child_killed_at_its_limit_that_lingers_is_reaped_later_not_waited_for(tmp_path, monkeypatch):
    """Issue 39: a kernel deadlocked on a GPU leaves its killed process inside the driver for
    minutes; the check waited on it far past its limit. The wait returns a moment after the
    kill, and a thread of its own reaps it once it is gone. No machine here can hold a
    process in a driver: this child really is killed, and its poll hides its end for
    `held` seconds, as the driver would."""
    held = 6.0
    real_poll = processes.Child.poll
    killed_at: dict[int, float] = {}

    def lingering(self):
        code = real_poll(self)
        if code is not None:
            killed_at.setdefault(self.pid, time.monotonic())
            if time.monotonic() - killed_at[self.pid] < held:
                return None
        return code

    monkeypatch.setattr(processes.Child, "poll", lingering)
    with Children() as children:
        child = children.start([sys.executable, "-c", SLEEPER], log=tmp_path / "log")

        def slow_wait(timeout=None):  # Popen.wait on it: as long as the driver holds it
            deadline = time.monotonic() + (timeout if timeout is not None else 3600)
            while lingering(child) is None:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(child.proc.args, timeout)
                time.sleep(0.05)
            return child.proc.returncode

        child.proc.wait = slow_wait
        started = time.monotonic()
        outcome = children.wait(child, 1.0)
        took = time.monotonic() - started
        assert outcome.timed_out and took < 1.0 + processes.KILL_SETTLE + 1.0, took
        assert not alive(child.pid)  # killed; only its end is not seen yet
        reaper = [t for t in threading.enumerate() if t.name == f"reap-{child.pid}"]
        assert reaper, "nothing reaps it later"
        reaper[0].join(timeout=held + 5)
        assert not reaper[0].is_alive() and time.monotonic() - started >= held


def test_cancel_from_another_thread_stops_the_wait(tmp_path):
    children = Children()
    threading.Timer(0.5, children.cancel).start()
    started = time.monotonic()
    outcome = children.run([sys.executable, "-c", SLEEPER], timeout=60, log=tmp_path / "log")
    assert outcome.cancelled and time.monotonic() - started < 10
    with pytest.raises(processes.Cancelled):
        children.start(["true"])


def test_a_child_dies_with_a_parent_that_was_killed(tmp_path):
    """SIGKILL leaves the parent no time to clean up: the child goes by itself."""
    pid_file = tmp_path / "child"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from workbook.child.processes import Children\n"
        f"c = Children().start([sys.executable, '-c', {SLEEPER!r}])\n"
        f"Path({str(pid_file)!r}).write_text(str(c.pid))\n"
        "time.sleep(60)\n")], cwd=Path(processes.__file__).parents[2])
    wait_until(pid_file.exists)
    child = int(pid_file.read_text())
    assert alive(child)
    parent.kill()
    parent.wait()
    wait_until(lambda: not alive(child), 10)


@pytest.mark.slow
def test_ctrl_c_during_an_endless_kernel_stops_everything(root, tmp_path):
    """The real thing: `workbook run` on a kernel that never ends, and Ctrl-C."""
    shutil.copyfile(DATA / "endless" / "map.mojo", root / "puzzles/p01/map.mojo")
    # A cache of its own: no time recorded elsewhere shortens the endless run's limit (timing.py).
    env = {**os.environ, "WORKBOOK_ROOT": str(root), "WORKBOOK_RUN_TIMEOUT": "300",
           "WORKBOOK_CACHE": str(tmp_path / "cache")}
    # Ctrl-C as a terminal sends it, even where the tests started with SIGINT ignored.
    run = subprocess.Popen([sys.executable, "-m", "workbook", "run", "p01", "--quick"], env=env,
                           preexec_fn=sigint_at_default,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           cwd=Path(processes.__file__).parents[2])
    me = psutil.Process(run.pid)

    def launcher_running() -> bool:  # the kernel is running once the launcher's phase file says so
        return any(p.name() == "host" or "launch" in " ".join(p.cmdline()) for p in me.children(recursive=True)
                   if p.status() != psutil.STATUS_ZOMBIE and "mojo" not in " ".join(p.cmdline()))

    wait_until(launcher_running, 120)
    time.sleep(1.0)  # well inside the endless loop
    family = me.children(recursive=True)
    assert family
    run.send_signal(signal.SIGINT)
    output, _ = run.communicate(timeout=30)
    assert run.returncode == 130, output
    assert b"Interrupted" in output and b"Traceback" not in output
    wait_until(lambda: not any(alive(p.pid) for p in family), 10)


@pytest.mark.slow
def test_a_kernel_that_never_ends_is_a_timeout(root):
    from workbook.check import engine
    from workbook.core.results import Status
    from workbook.course import catalog

    shutil.copyfile(DATA / "endless" / "map.mojo", root / "puzzles/p01/map.mojo")
    result = engine.check_puzzle(catalog.load("p01"), engine.Options(seed=1, quick=True, devices=("sim",),
                                                                    run_timeout=3))
    sim = result.parts[0].kernels["sim"]
    assert sim.status == Status.TIMEOUT and sim.reasons[0].key == "run.timeout"
    assert not [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]


def test_each_program_s_cpu_seconds_are_counted_under_its_name(tmp_path):
    """The tally a cold check's `cpu` comes from: a child that burns half a second of CPU
    is counted under its program, one that sleeps nearly nothing, and what each is named."""
    burn = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass\n"
    with Children() as children:
        children.run([sys.executable, "-c", burn], timeout=30, log=tmp_path / "burn.log")
        children.run([sys.executable, "-c", "import time; time.sleep(0.5)"], timeout=30, log=tmp_path / "nap.log")
        children.run(["/bin/true"], timeout=30, log=tmp_path / "true.log")
        counted = children.cpu_seconds()
    assert 0.45 <= counted["python"] < 0.5 + 0.5  # the burner, plus two interpreters' start-ups
    assert counted.get("true", 0.0) < 0.1
    kind = processes.program_kind
    assert kind(["/venv/bin/mojo", "build", "-I", "x", "a.mojo"]) == "mojo build"
    assert kind(["/venv/bin/mojo", "precompile", "op"]) == "mojo precompile"
    assert kind([sys.executable, "-m", "workbook.run.worker", "/tmp/run"]) == "graph worker"
    assert kind(["/usr/local/cuda/bin/compute-sanitizer", "--tool", "racecheck", "/c/gpu-sm_90"]) == "compute-sanitizer"
    assert kind(["/c/build/p01-1/launch/2/gpu-sm_90-g1", "/tmp/run", "gpu"]) == "launcher"
    assert kind(["/c/build/p01-1/launch/2/host", "/tmp/run", "sim"]) == "launcher"
    assert kind(["/usr/bin/cc", "-O2", "-c", "wbsim.c"]) == "cc"


def test_a_process_knows_how_long_ago_it_started():
    """`run`'s startup stage: a fresh process is under a few seconds old, and half a
    second later half a second older (a wrong field of /proc's stat is no age at all)."""
    probe = ("import time; from workbook.child.processes import own_age\n"
             "first = own_age(); time.sleep(0.5); print(first, own_age())")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parent.parent)
    first, later = (float(x) for x in done.stdout.split())
    assert 0 < first < 5
    assert 0.45 < later - first < 1.5


def test_a_compile_that_can_wait_runs_at_a_lower_priority(tmp_path):
    """A child started `nice` (a compile that can wait): the program starts that much lower,
    its session's autogroup too where the kernel has them (each child has a session of its
    own, and a nice value only ranks the processes within one group); one started plainly
    keeps the workbook's priority."""
    asked = [sys.executable, "-c", "import os; print(os.nice(0))"]
    base = os.nice(0)
    with Children() as children:
        children.run(asked, timeout=30, log=tmp_path / "later.log", nice=7)
        children.run(asked, timeout=30, log=tmp_path / "plain.log")
    assert int((tmp_path / "later.log").read_text()) == min(19, base + 7)
    assert int((tmp_path / "plain.log").read_text()) == base
    group = Path("/proc/self/autogroup")
    if group.exists():  # sched_autogroup: the child's own group is lowered as well
        groups = [sys.executable, "-c", "print(open('/proc/self/autogroup').read().split()[-1])"]
        with Children() as children:
            children.run(groups, timeout=30, log=tmp_path / "group.log", nice=7)
        assert int((tmp_path / "group.log").read_text()) == 7


def test_a_learner_child_writes_through_the_descriptors_it_was_handed_and_waiting_can_stop_early(tmp_path):
    """pass_fds survive _exec.py (and its limits); a learner child's log is a sink of ours,
    read from its end; `until` returns while the child runs on, and it is waited for again."""
    from workbook.child.channel import Channel

    with Channel("out", "log") as channel, Children() as children:
        code = ("import os, sys, time\n"
                "os.write(int(sys.argv[1]), b'handed back')\n"
                "print('x' * 20000 + 'the end', flush=True)\n"
                "time.sleep(0.5)\n")
        child = children.start([sys.executable, "-c", code, str(channel["out"].fd)], log=channel["log"],
                               cwd=tmp_path, learner=True, pass_fds=(channel["out"].fd,))
        early = children.wait(child, 30, until=lambda: channel["out"].size() > 0)
        assert early.reached and child.proc.poll() is None
        done = children.wait(child, 30)
        assert done.returncode == 0 and not done.reached
        assert channel["out"].read(100) == b"handed back"
        assert child.log_text(100) == "x" * 92 + "the end\n"
    assert list(tmp_path.iterdir()) == []  # nothing of it in its folder
