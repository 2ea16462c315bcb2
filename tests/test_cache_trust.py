"""Issue 38: a shared WORKBOOK_CACHE never runs one user's files as another, nor lets them
decide another's verdict.

Each attack is run for real: the other user is uid 4242, a process that drops to that
uid (os.setuid) and plants files in a lab's scratch folder (root's, 1777, like /tmp);
where only root could plant (inside a user's own 0700 folder), the entry is chowned to
4242. A planted launcher or object would create a marker file when run: the marker
must never appear, and the check must give the real verdict. Controls show the same
plant sealed as our own does run, so the tests can fail.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import REPO, WRONG
from test_cli import invoke
from test_sweep import ended_pid

from workbook.check import engine
from workbook.child.processes import Children
from workbook.compile import build
from workbook.core import cachetrust, prune, settings, sweep
from workbook.core.results import Status
from workbook.course import catalog

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="two users need root (setuid, chown)")

OTHER = 4242
OPTIONS = {"seed": 1, "quick": True, "devices": ("sim",)}

PLANT = r"""
import base64, json, os, sys
assert os.geteuid() == int(sys.argv[1]), "not the other user"
for item in json.load(sys.stdin):
    path = item["path"]
    if item.get("dir"):
        os.makedirs(path, exist_ok=True)
        os.chmod(path, item.get("mode", 0o755))
        continue
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(base64.b64decode(item["data"]))
    os.chmod(path, item.get("mode", 0o644))
"""


def _become_other() -> None:
    os.setgroups([])
    os.setgid(OTHER)
    os.setuid(OTHER)


def as_other(items: list[dict]) -> None:
    """Plant files and folders as uid 4242 (a real second user, not root pretending)."""
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one the other user may run
    done = subprocess.run([python, "-I", "-c", PLANT, str(OTHER)], input=json.dumps(items), text=True,
                          capture_output=True, preexec_fn=_become_other, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr


def file_item(path: Path, data: bytes, mode: int = 0o644) -> dict:
    return {"path": str(path), "data": base64.b64encode(data).decode(), "mode": mode}


def tree_items(source: Path, target: Path, replace: dict[str, bytes]) -> list[dict]:
    """A copy of `source` at `target`, as items for `as_other`, some files replaced."""
    items = [{"path": str(target), "dir": True, "mode": 0o755}]
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        if path.is_dir():
            items.append({"path": str(target / rel), "dir": True, "mode": 0o755})
        else:
            items.append(file_item(target / rel, replace.get(rel, path.read_bytes()), path.stat().st_mode & 0o777))
    return items


def record(data: bytes) -> bytes:
    """A build record (`.ok`) that matches `data`: what an attacker would write beside a plant."""
    return json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}).encode()


class Evil:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


# ---------------------------------------------------------------------------
# One real build, copied into each test's cache
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A user's cache folder holding p01's wrong kernel (forgets_ten) built for the
    simulator, and its real verdict (fail) kept: built once, copied by each test."""
    base = tmp_path_factory.mktemp("built")
    work = base / "wb"
    for name in ("puzzles", "solutions"):
        shutil.copytree(REPO / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBOOK_ROOT", str(work))
        mp.setenv("WORKBOOK_CACHE", str(base / "cache"))
        shutil.copyfile(WRONG / "p01" / "forgets_ten" / "map.mojo", work / "puzzles" / "p01" / "map.mojo")
        result = engine.check_puzzle(catalog.load("p01"), engine.Options(**OPTIONS))
        assert result.status == Status.FAIL
    return base / "cache" / f"u{os.geteuid()}"


class Kept:
    """Where the things of the built cache are, relative to a user's folder."""

    def __init__(self, built: Path):
        self.verdict = next(built.glob("verdicts/*.json")).relative_to(built).as_posix()
        self.key = Path(self.verdict).stem
        self.host = next(built.glob("build/p01-*/launch/*/host")).relative_to(built).as_posix()
        self.runtime = next(built.glob("runtime/wbsim-*.o")).relative_to(built).as_posix()
        self.fail = (built / self.verdict).read_text()
        self.forged_pass = self.fail.replace('"fail"', '"pass"')  # well formed, of the right key
        assert '"pass"' in self.forged_pass and json.loads(self.forged_pass)["key"] == self.key


@pytest.fixture
def shared(monkeypatch):
    """A lab's scratch folder: root's, writable by everyone with the sticky bit, like /tmp
    (outside pytest's own folder, which the other user can't reach)."""
    folder = Path(tempfile.mkdtemp(prefix="workbook-shared-", dir="/tmp"))
    os.chmod(folder, 0o1777)
    monkeypatch.setenv("WORKBOOK_CACHE", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """The temp folder a refused cache moves to: this test's own."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(settings, "system_temp", lambda: folder)
    return folder


@pytest.fixture
def learner(root) -> Path:
    shutil.copyfile(WRONG / "p01" / "forgets_ten" / "map.mojo", root / "puzzles" / "p01" / "map.mojo")
    return root


def mine(shared: Path, built: Path, verdicts: bool = False) -> Path:
    """This user's folder in the shared cache: a copy of the built one (as if built here)."""
    folder = shared / f"u{os.geteuid()}"
    shutil.copytree(built, folder, symlinks=True,
                    ignore=None if verdicts else lambda d, names: ["verdicts"] if Path(d) == built else [])
    os.chmod(folder, 0o700)
    return folder


def check(cache: bool = True):
    return engine.check_puzzle(catalog.load("p01"), engine.Options(cache=cache, **OPTIONS))


def evil_script(marker: Path) -> bytes:
    return f"#!/bin/sh\ntouch {marker}\nexit 0\n".encode()


# ---------------------------------------------------------------------------
# The attacks
# ---------------------------------------------------------------------------


def test_the_copied_build_is_used_as_it_is(learner, built, shared, temp):
    """The ground the other tests stand on: the copy is where a check looks, used unbuilt."""
    kept = Kept(built)
    folder = mine(shared, built)
    before = (folder / kept.host).stat().st_ino
    result = check(cache=False)
    assert result.status == Status.FAIL and settings.cache_dir() == folder
    assert (folder / kept.host).stat().st_ino == before  # not built again: this very file ran


def test_a_cache_folder_another_user_made_first_is_refused(learner, built, shared, temp, tmp_path, capsys):
    """The other user makes `u0` in the shared folder before root's first run, with a
    forged pass, a pickle that runs code, and a launcher that would run as root (with
    records that match it): root's cache goes elsewhere, and none of it is used."""
    kept = Kept(built)
    marker = tmp_path / "ran-as-root"
    script = evil_script(marker)
    plant = {kept.verdict: kept.forged_pass.encode(), kept.host: script, kept.host + ".ok": record(script),
             kept.verdict.replace(".json", ".pickle"): pickle.dumps(Evil(marker))}
    as_other(tree_items(built, shared / f"u{os.geteuid()}", plant))
    assert (shared / f"u{os.geteuid()}").stat().st_uid == OTHER
    for cache in (True, False):
        result = check(cache)
        assert result.status == Status.FAIL and not result.cached
        assert not marker.exists()
    assert settings.cache_dir().parent == temp and settings.cache_dir().stat().st_uid == os.geteuid()
    assert cachetrust.root().note.key == "cache.elsewhere"
    assert (shared / f"u{os.geteuid()}" / kept.host).read_bytes() == script  # theirs: not deleted, not run
    code, out, _ = invoke(capsys, "doctor", "--json")
    notes = json.loads(out)["cache_notes"]
    assert notes and notes[0]["key"] == "cache.elsewhere" and str(OTHER) in notes[0]["text"]
    code, out, err = invoke(capsys, "check", "p01", "--device", "sim", "--quick", "--seed", "1", "--no-cache", "--json")
    assert code != 0 and "Traceback" not in out + err and json.loads(out)["puzzles"][0]["status"] == "fail"
    assert not marker.exists()


def test_another_user_s_files_where_the_old_cache_kept_them_are_never_read(learner, built, shared, temp, tmp_path,
                                                                          capsys):
    """Before a folder per user, verdicts were pickles in <cache>/verdicts and builds in
    <cache>/build, whoever made them: the other user plants there, root checks."""
    kept = Kept(built)
    marker = tmp_path / "ran-as-root"
    script = evil_script(marker)
    old_build = shared / kept.host.split("/launch/")[0]
    items = tree_items(built / "build", shared / "build", {kept.host.removeprefix("build/"): script})
    items += [file_item(shared / "verdicts" / f"{kept.key}.pickle", pickle.dumps(Evil(marker))),
              file_item(shared / "verdicts" / f"{kept.key}.json", kept.forged_pass.encode())]
    as_other(items)
    mine(shared, built)  # root's own folder, without the verdict
    for cache in (True, False):
        result = check(cache)
        assert result.status == Status.FAIL and not result.cached
    assert not marker.exists()
    assert invoke(capsys, "list")[0] == 0  # start-up's sweep and prune: never theirs
    assert (shared / "verdicts" / f"{kept.key}.pickle").exists() and old_build.is_dir()


def test_a_launcher_planted_in_one_s_own_build_entry_is_never_run(learner, built, shared, temp, tmp_path, capsys):
    """In the user's own folder only root could plant: other bytes than recorded (ours or
    not), another owner (the file, or a folder on the way), a mode that lets others write.
    None runs, with or without the verdict cache, and the real verdict comes."""
    kept = Kept(built)
    marker = tmp_path / "ran-as-root"
    script = evil_script(marker)
    variants = ["other bytes", "another owner", "a folder of another owner", "writable by others"]
    for i, variant in enumerate(variants):
        folder = mine(shared, built)
        host = folder / kept.host
        host.write_bytes(script)
        if variant != "other bytes":  # the record matches: only who owns it (or may write it) is wrong
            (folder / (kept.host + ".ok")).write_bytes(record(script))
        if variant == "another owner":
            os.chown(host, OTHER, OTHER)
        elif variant == "a folder of another owner":
            os.chown(host.parent, OTHER, OTHER)
        elif variant == "writable by others":
            os.chmod(host, 0o777)
        if i == 0:  # through the command line's --no-cache
            code, out, err = invoke(capsys, "check", "p01", "--device", "sim", "--quick", "--seed", "1", "--no-cache")
            assert code != 0 and "Traceback" not in out + err and "fail" in out
        else:
            result = check(cache=i % 2 == 0)
            assert result.status == Status.FAIL and not result.cached, variant
        assert not marker.exists(), variant
        assert cachetrust.sealed(folder / kept.host, folder / (kept.host + ".ok")), variant  # built again
        notes = (folder / cachetrust.NOTES).read_text()
        assert ("not yours" if i else "not as built") in notes
        shutil.rmtree(folder)
    # The control: the same plant, sealed as our own build would be, does run.
    folder = mine(shared, built)
    (folder / kept.host).write_bytes(script)
    (folder / (kept.host + ".ok")).write_bytes(record(script))
    check(cache=False)
    assert marker.exists()


def test_a_planted_runtime_object_is_never_linked(learner, built, shared, temp, tmp_path):
    """The simulator's runtime object is linked into every launcher: one with other bytes
    than recorded (here the real runtime plus a constructor that runs at start) is built
    again before any launcher is linked with it."""
    kept = Kept(built)
    marker = tmp_path / "linked-and-ran"
    evil = tmp_path / "evil.c"
    evil.write_text(f'#include "wbsim.c"\n__attribute__((constructor)) static void planted(void) '
                    f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
    subprocess.run(["cc", "-O1", "-fPIC", "-I", str(settings.MOJO_SUPPORT), "-c", str(evil), "-o",
                    str(tmp_path / "evil.o")], check=True, timeout=300)
    planted = (tmp_path / "evil.o").read_bytes()
    folder = mine(shared, built)
    (folder / kept.runtime).write_bytes(planted)
    for name in ("host", "host.ok"):  # the launcher is linked again: with the planted object, were it trusted
        (folder / kept.host).with_name(name).unlink()
    result = check(cache=False)
    assert result.status == Status.FAIL and not marker.exists()
    assert (folder / kept.runtime).read_bytes() != planted
    assert cachetrust.sealed(folder / kept.runtime, folder / (kept.runtime + ".ok"))
    # The control: sealed as ours, the planted object is linked, and runs.
    (folder / kept.runtime).write_bytes(planted)
    (folder / (kept.runtime + ".ok")).write_bytes(record(planted))
    for name in ("host", "host.ok"):
        (folder / kept.host).with_name(name).unlink()
    check(cache=False)
    assert marker.exists()


def test_a_forged_verdict_in_one_s_own_folder_is_ignored(learner, built, shared, temp):
    """A well-formed "pass" of the right key, where root alone could have put it: owned by
    another user, in a folder of another user, or writable by others. The real verdict is
    computed again each time."""
    kept = Kept(built)
    for variant in ("another owner", "a folder of another owner", "writable by others"):
        folder = mine(shared, built, verdicts=True)
        verdict = folder / kept.verdict
        verdict.write_text(kept.forged_pass)
        os.chmod(verdict, 0o600)
        if variant == "another owner":
            os.chown(verdict, OTHER, OTHER)
        elif variant == "a folder of another owner":
            os.chown(verdict.parent, OTHER, OTHER)
        else:
            os.chmod(verdict, 0o666)
        result = check()
        assert result.status == Status.FAIL and not result.cached, variant
        shutil.rmtree(folder)
    # The control: our own kept verdict is used as it is (a warm check stays warm).
    folder = mine(shared, built, verdicts=True)
    result = check()
    assert result.status == Status.FAIL and result.cached


def test_a_planted_mojoc_is_never_loaded(root, shared, temp):
    """An op's package, which MAX loads into the process that runs the graph: other bytes
    than recorded, or another owner, and it is built again (never handed to MAX)."""
    puzzle = catalog.load("p18")
    children = Children()
    try:
        src = build.sources(puzzle, solutions=True)
        first = build.precompile(children, src)
        assert first.ok and not first.cached
        assert build.precompile(children, src).cached  # ours, as built: used
        good = src.mojoc.read_bytes()
        for variant in ("other bytes", "another owner"):
            src.mojoc.write_bytes(good[: len(good) // 2])
            if variant == "another owner":
                src.mojoc.with_name(src.mojoc.name + ".ok").write_bytes(record(good[: len(good) // 2]))
                os.chown(src.mojoc, OTHER, OTHER)
            again = build.precompile(children, src)
            assert again.ok and not again.cached, variant
            assert cachetrust.sealed(src.mojoc, src.mojoc.with_name(src.mojoc.name + ".ok"))
            assert src.mojoc.stat().st_uid == os.geteuid()
    finally:
        children.kill_all()


# ---------------------------------------------------------------------------
# The cache folder itself
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("setup, why", [
    ("a link to the other user's folder", "cache.not_folder"),
    ("made by the other user", "cache.not_owned"),
    ("ours, writable by others", "cache.writable"),
    ("the cache folder writable by its group, no sticky bit", "cache.writable"),
    ("the cache folder the other user's", "cache.not_owned"),
])
def test_a_user_folder_that_is_not_safe_is_refused_and_said(tmp_path, temp, monkeypatch, setup, why):
    base = tmp_path / "cache"
    base.mkdir()
    own = base / f"u{os.geteuid()}"
    if setup.startswith("a link"):
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, OTHER, OTHER)
        own.symlink_to(theirs)
    elif setup == "made by the other user":
        own.mkdir(mode=0o700)
        os.chown(own, OTHER, OTHER)
    elif setup == "ours, writable by others":
        own.mkdir()
        os.chmod(own, 0o777)
    elif setup.startswith("the cache folder writable"):
        os.chmod(base, 0o775)
    else:
        os.chown(base, OTHER, OTHER)
        os.chmod(base, 0o1777)
    monkeypatch.setenv("WORKBOOK_CACHE", str(base))
    chosen = cachetrust.root()
    assert chosen.path == temp / f"{cachetrust.FALLBACK}-{os.geteuid()}"
    assert chosen.note.key == "cache.elsewhere" and chosen.note.values["why"].key == why
    info = chosen.path.lstat()
    assert info.st_uid == os.geteuid() and info.st_mode & 0o777 == 0o700


def test_a_safe_cache_folder_is_used_and_a_squatted_temp_folder_too_is_passed_by(tmp_path, temp, monkeypatch):
    base = tmp_path / "cache"
    base.mkdir(mode=0o1777)
    os.chmod(base, 0o1777)  # root's and sticky, like /tmp: fine
    monkeypatch.setenv("WORKBOOK_CACHE", str(base))
    assert cachetrust.root() == cachetrust.Root(base / f"u{os.geteuid()}")
    own = base / f"u{os.geteuid()}"
    os.chmod(own, 0o755)  # ours, readable by others, writable by none: tightened, kept
    monkeypatch.setenv("WORKBOOK_CACHE", str(base) + "/")  # chosen afresh
    assert cachetrust.root().path == own and own.stat().st_mode & 0o777 == 0o700
    # Refused, and the temp folder's fallback already taken by the other user: a folder of this command's own.
    os.chmod(own, 0o777)
    squatted = temp / f"{cachetrust.FALLBACK}-{os.geteuid()}"
    squatted.mkdir()
    os.chown(squatted, OTHER, OTHER)
    monkeypatch.setenv("WORKBOOK_CACHE", str(base) + "//")
    chosen = cachetrust.root()
    try:
        assert chosen.path not in (own, squatted) and chosen.path.stat().st_uid == os.geteuid()
        assert chosen.path.stat().st_mode & 0o777 == 0o700 and chosen.note.key == "cache.elsewhere"
    finally:
        shutil.rmtree(chosen.path, ignore_errors=True)


# ---------------------------------------------------------------------------
# The cleaners
# ---------------------------------------------------------------------------


def test_the_cleaners_never_remove_another_user_s_entry_nor_follow_a_link(root, tmp_path, monkeypatch, capsys):
    """prune and sweep remove this user's own unused or left-over entries, in the user's
    folder and in the old shared layout; another user's stay, and a link is never followed."""
    base = tmp_path / "cache"
    base.mkdir(mode=0o755)
    monkeypatch.setenv("WORKBOOK_CACHE", str(base))
    own = settings.cache_dir()
    month_ago = time.time() - (prune.KEEP_DAYS + 1) * 24 * 3600
    outside = tmp_path / "outside"
    (outside / "src").mkdir(parents=True)
    (outside / ".complete").write_text("")
    os.utime(outside / ".complete", (month_ago, month_ago))
    dead = ended_pid()

    def entry(folder: Path, name: str, owner: int | None = None) -> Path:
        path = folder / "build" / name
        (path / "src").mkdir(parents=True)
        (path / ".complete").write_text("")
        os.utime(path / ".complete", (month_ago, month_ago))
        if owner is not None:
            for p in [path, *path.rglob("*")]:
                os.chown(p, owner, owner)
        return path

    gone = [entry(own, "p01-000000000000000a"), entry(base, "p01-000000000000000b")]
    kept = [entry(own, "p01-000000000000000c", OTHER), entry(base, "p01-000000000000000d", OTHER)]
    (own / "build" / "p01-000000000000000e").symlink_to(outside)  # a link: never followed, never removed
    (base / "verdicts").mkdir()
    for name, owner in (("old.pickle", None), ("theirs.pickle", OTHER)):
        path = base / "verdicts" / name
        path.write_bytes(b"x")
        os.utime(path, (month_ago, month_ago))
        if owner:
            os.chown(path, owner, owner)
    staged_theirs = own / "build" / f"p01-000000000000000f.tmp{dead}-1"
    staged_theirs.mkdir()
    os.chown(staged_theirs, OTHER, OTHER)
    staged_link = own / "build" / f"p01-0000000000000010.tmp{dead}-1"
    staged_link.symlink_to(outside)
    staged_mine = own / "build" / f"p01-0000000000000011.tmp{dead}-1"
    staged_mine.mkdir()
    assert invoke(capsys, "list")[0] == 0  # start-up: sweep, then prune (both due: never run here)
    assert [p for p in gone if p.exists()] == [] and not (base / "verdicts" / "old.pickle").exists()
    assert not staged_mine.exists()
    assert all(p.exists() for p in kept) and (base / "verdicts" / "theirs.pickle").exists()
    assert staged_theirs.exists() and staged_link.is_symlink()
    assert (own / "build" / "p01-000000000000000e").is_symlink()
    assert (outside / "src").is_dir() and (outside / ".complete").exists()
    assert sweep.sweep() is not None and prune.prune() == []
