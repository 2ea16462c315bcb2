"""Issue 17, item 7: `kill -9` leaves temp and staging folders; the next workbook sweeps
those whose process is gone, and never a live one's (nor a learner's own file)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO

from workbook.cli import app as cli

DATA = Path(__file__).parent / "data"


def ended_pid() -> int:
    """The pid of a process that has ended (and no other has taken yet, most likely)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def started_ms(pid: int) -> int:
    return int(psutil.Process(pid).create_time() * 1000)


def test_start_up_sweeps_what_ended_workbooks_left(root, capsys, monkeypatch, tmp_path):
    cache = tmp_path / "cache" / f"u{os.geteuid()}"  # the user's own folder in it
    monkeypatch.setenv("WORKBOOK_CACHE", str(cache.parent))
    temp = Path(tempfile.gettempdir())
    dead = ended_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        build = cache / "build"
        launch = build / "p01-fedcba9876543210" / "launch" / "0011223344556677"
        gone_folders = [temp / f"workbook-run-{dead}-1700000000000",
                        temp / f"workbook-run-{live.pid}-1000",  # a pid used again by a later process
                        build / f"p01-0123456789abcdef.tmp{dead}-1", build / f"p01-0123456789abcdef.gone{dead}-2",
                        launch / f".tmp{dead}-3", cache / "py" / f"p18-0123456789abcdef.tmp{dead}-5"]
        gone_files = [launch / f".launch_host.mojo.{dead}-4", root / ".workbook" / f"state.json.tmp{dead}-6",
                      root / "puzzles" / "p01" / f".map.mojo.workbook-{dead}-7.tmp"]
        kept_folders = [temp / f"workbook-run-{live.pid}-{started_ms(live.pid)}",
                        build / f"p01-0123456789abcdef.tmp{live.pid}-1"]
        kept_files = [launch / "host", root / "puzzles" / "p01" / f".map.mojo.{dead}-7",  # a learner's own
                      root / "puzzles" / "p01" / "map.mojo"]
        for folder in gone_folders + kept_folders:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "inside").write_text("x")
        for file in gone_files + kept_files:
            file.parent.mkdir(parents=True, exist_ok=True)
            if not file.exists():
                file.write_text("x")
        gone, kept = gone_folders + gone_files, kept_folders + kept_files
        code, _, err = invoke(capsys, "list")
        assert code == 0, err
        assert [p for p in gone if p.exists()] == []
        assert [p for p in kept if not p.exists()] == []
    finally:
        live.kill()
        live.wait()
        for leftover in temp.glob(f"workbook-run-{live.pid}-*"):
            shutil.rmtree(leftover, ignore_errors=True)


def invoke(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


def test_a_command_leaves_no_temp_folder(root, capsys):
    """This process's run folders only: other tests (and other workbooks) run beside it."""
    mine = f"workbook-run-{os.getpid()}-*"
    before = set(Path(tempfile.gettempdir()).glob(mine))
    assert invoke(capsys, "list")[0] == 0
    assert set(Path(tempfile.gettempdir()).glob(mine)) <= before


@pytest.mark.slow
def test_a_workbook_killed_with_sigkill_is_swept_by_the_next(root):
    """The real thing: `workbook run` on a kernel that never ends, killed with SIGKILL."""
    shutil.copyfile(DATA / "endless" / "map.mojo", root / "puzzles/p01/map.mojo")
    env = {**os.environ, "WORKBOOK_ROOT": str(root), "WORKBOOK_RUN_TIMEOUT": "300", "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-m", "workbook", "run", "p01", "--quick", "--device", "sim"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    temp = Path(tempfile.gettempdir())
    deadline = time.monotonic() + 120
    mine: list[Path] = []
    while time.monotonic() < deadline:  # its run folder exists once the launcher runs
        mine = list(temp.glob(f"workbook-run-{run.pid}-*/workbook-p01-sim-*"))
        if mine:
            break
        time.sleep(0.1)
    assert mine, "the launcher never started"
    family = psutil.Process(run.pid).children(recursive=True)
    run.send_signal(signal.SIGKILL)
    run.wait()
    for p in family:  # its children die with it (PR_SET_PDEATHSIG)
        with contextlib.suppress(psutil.Error):
            p.wait(timeout=10)
    assert mine[0].exists()  # left behind: nothing ran to remove it
    listed = subprocess.run([sys.executable, "-m", "workbook", "list"], env=env, cwd=REPO, capture_output=True)
    assert listed.returncode == 0
    assert not mine[0].parent.exists()


def test_the_cache_is_looked_through_after_a_killed_workbook_or_once_a_day(root, capsys, monkeypatch, tmp_path):
    """Looking through a big cache costs every command time before its first build: it is
    done when a killed workbook's run folder is found, or a day after the last look."""
    from workbook.core import settings, sweep

    cache, temp = tmp_path / "cache" / f"u{os.geteuid()}", tmp_path / "temp"  # the user's own folder in it
    temp.mkdir()
    monkeypatch.setenv("WORKBOOK_CACHE", str(cache.parent))
    monkeypatch.setattr(settings, "system_temp", lambda: temp)  # no other test's killed workbook in sight
    dead = ended_pid()
    leftover = cache / "build" / f"p01-0123456789abcdef.tmp{dead}-1"
    leftover.mkdir(parents=True)
    assert invoke(capsys, "list")[0] == 0
    assert not leftover.exists()  # never looked through: looked through now
    leftover.mkdir()
    assert invoke(capsys, "list")[0] == 0
    assert leftover.exists()  # looked through a moment ago, and no workbook was killed since
    (temp / f"workbook-run-{dead}-1700000000000").mkdir()  # a killed workbook's run folder
    verdict = cache / "verdicts" / f".{'ab' * 8}.pickle.{dead}-1"  # and the verdict it was writing
    verdict.parent.mkdir()
    verdict.write_bytes(b"half")
    mine = verdict.with_name(f".{'cd' * 8}.pickle.{os.getpid()}-1")  # a live workbook's: never touched
    mine.write_bytes(b"half")
    assert invoke(capsys, "list")[0] == 0
    assert not leftover.exists() and not (temp / f"workbook-run-{dead}-1700000000000").exists()
    assert not verdict.exists() and mine.exists()
    leftover.mkdir()
    a_day_ago = time.time() - sweep.CACHE_EVERY - 60
    os.utime(cache / sweep.SWEPT, (a_day_ago, a_day_ago))
    assert invoke(capsys, "list")[0] == 0
    assert not leftover.exists()


def test_what_no_command_used_for_a_month_is_pruned_once_a_day(root, capsys, monkeypatch, tmp_path):
    """Every edit run adds a build folder and a kept verdict: those unused for KEEP_DAYS go
    (a build folder's last use is its marker's time, touched on every use; a verdict's its
    own), looked for at most once a day; what is in use or being built stays."""
    from workbook.compile import build
    from workbook.core import prune

    cache = tmp_path / "cache" / f"u{os.geteuid()}"  # the user's own folder in it
    monkeypatch.setenv("WORKBOOK_CACHE", str(cache.parent))
    month_ago = time.time() - (prune.KEEP_DAYS + 1) * 24 * 3600

    def entry(name: str, used: float | None) -> Path:
        folder = cache / "build" / name
        (folder / "src").mkdir(parents=True, exist_ok=True)
        if used is not None:
            (folder / ".complete").touch()
            os.utime(folder / ".complete", (used, used))
        return folder

    old, recent, building = entry("p01-00000000000000aa", month_ago), entry("p01-00000000000000bb", None), \
        entry("p01-00000000000000cc", None)
    (recent / ".complete").touch()
    used_again = cache / "build" / "p01-00000000000000dd"
    build._materialize(used_again, lambda staging: (staging / "src").mkdir())  # a real entry, with its record
    os.utime(used_again / ".complete", (month_ago, month_ago))
    build._materialize(used_again, lambda staging: None)  # a hit: its use is now
    assert (used_again / "src").is_dir()  # used as it was, not built again
    verdicts = cache / "verdicts"
    verdicts.mkdir()
    (verdicts / "old.json").write_bytes(b"x")
    os.utime(verdicts / "old.json", (month_ago, month_ago))
    (verdicts / "new.json").write_bytes(b"x")
    assert invoke(capsys, "list")[0] == 0
    assert not old.exists() and not (verdicts / "old.json").exists()
    assert recent.exists() and building.exists() and used_again.exists() and (verdicts / "new.json").exists()
    again = entry("p01-00000000000000ee", month_ago)
    assert invoke(capsys, "list")[0] == 0
    assert again.exists()  # looked through a moment ago: not before tomorrow
    os.utime(cache / prune.PRUNED, (month_ago, month_ago))
    assert invoke(capsys, "list")[0] == 0
    assert not again.exists()


def test_a_kept_verdict_read_back_counts_as_used(tmp_path, monkeypatch):
    from workbook.check import verdicts
    from workbook.core import prune
    from workbook.core.results import PuzzleResult, Status

    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))
    digest = "ab" * 16
    verdicts.put(digest, PuzzleResult("p01", "map", Status.PASS))
    path = verdicts._path(digest)
    month_ago = time.time() - (prune.KEEP_DAYS + 1) * 24 * 3600
    os.utime(path, (month_ago, month_ago))
    assert verdicts.get(digest).status == Status.PASS
    assert path.stat().st_mtime > time.time() - 3600
