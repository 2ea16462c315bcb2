"""Issue 38: the workspace update (it runs before every command, `grade .` included) never
leaves the workspace and never writes through a link; nor do state.json, backups and
`reset`.

Each attack is made for real in a workspace made by `workbook init`: workspace.json
names files outside it (absolute, `../`, through a linked folder) with their true
hashes, so that the old update deleted them; a workbook file, a puzzle folder,
`.workbook/`, state.json and backups/ are links to folders outside. Nothing outside
is deleted or written, and each command still works or says clearly what is wrong."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from test_cli import invoke

from workbook.core import exitcodes, settings

CURRICULUM = settings.curriculum() / "puzzles"


@pytest.fixture
def ws(tmp_path, monkeypatch, capsys) -> Path:
    """A fresh workspace (workbook init), the current folder, found from there."""
    monkeypatch.delenv("WORKBOOK_ROOT", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(home)
    code, _, err = invoke(capsys, "init", "ws")
    assert code == 0, err
    monkeypatch.chdir(home / "ws")
    return home / "ws"


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def record(ws: Path) -> dict:
    return json.loads((ws / ".workbook" / "workspace.json").read_text())


def stale(ws: Path, change=None) -> None:
    """Make the next command bring the curriculum in again (as a newer workbook would)."""
    data = record(ws)
    data["curriculum"] = "an older one"
    if change:
        change(data)
    (ws / ".workbook" / "workspace.json").write_text(json.dumps(data))


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every name below `folder` and what it holds (a link: where it points)."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else (path.read_bytes() if path.is_file() else "/")
    return found


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def flat(text: str) -> str:
    """Text without its white space: the terminal wraps a long path anywhere."""
    return "".join(text.split())


def no_traceback(*texts: str) -> None:
    assert all("Traceback" not in t and "internal error" not in t.lower() for t in texts)


def test_workspace_json_naming_paths_outside_the_workspace_deletes_nothing(ws, outside, capsys, tmp_path):
    """The old update deleted each of these (their hashes are right): an absolute path,
    `../`, `..` inside a name, a folder of the workspace that links outside."""
    victims = {"absolute": outside / "victim-absolute", "dotdot": ws.parent / "victim-dotdot",
               "inner": tmp_path / "victim-inner", "deep": ws.parent / "victim-deep",
               "linked": outside / "linked" / "victim-linked"}
    for path in victims.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"not yours: {path.name}".encode())
    (ws / "puzzles" / "pzz").symlink_to(outside / "linked")
    names = {str(victims["absolute"]): victims["absolute"], "../victim-dotdot": victims["dotdot"],
             "puzzles/../../../victim-inner": victims["inner"], "puzzles/p01/../../../victim-deep": victims["deep"],
             "puzzles/pzz/victim-linked": victims["linked"]}
    before = snapshot(tmp_path / "outside"), {p: p.read_bytes() for p in victims.values()}

    def plant(data: dict) -> None:
        data["files"].update({name: sha(path.read_bytes()) for name, path in names.items()})
        data["files"]["puzzles/p01/oops"] = 12  # not a hash: dropped
        data["edits"]["p02"] = "zip.mojo"  # not a list: dropped

    stale(ws, plant)
    code, out, err = invoke(capsys, "list")
    assert code == 0, err
    no_traceback(out, err)
    assert (snapshot(tmp_path / "outside"), {p: p.read_bytes() for p in victims.values()}) == before
    for name in names:
        assert flat(f"workspace.json names {name}") in flat(err), name
    assert "left alone" in err
    assert not any(name in record(ws)["files"] for name in names)  # said once, then forgotten
    code, _, err = invoke(capsys, "list")
    assert code == 0 and "left alone" not in err


def test_a_linked_workbook_file_is_replaced_never_written_through(ws, outside, capsys):
    """text.en.md linked to the learner's notes outside (and to a learner file inside), and
    a dangling link where a new puzzle's skeleton goes: the old update wrote through each."""
    notes = outside / "notes.md"
    notes.write_text("my notes\n")
    (ws / "puzzles" / "p01" / "text.en.md").unlink()
    (ws / "puzzles" / "p01" / "text.en.md").symlink_to(notes)
    learner = ws / "puzzles" / "p02" / "zip.mojo"
    learner_text = learner.read_text()
    (ws / "puzzles" / "p02" / "text.en.md").unlink()
    (ws / "puzzles" / "p02" / "text.en.md").symlink_to(learner)
    skeleton = ws / "puzzles" / "p03" / "guard.mojo"
    skeleton.unlink()
    skeleton.symlink_to(outside / "created-through-a-link.mojo")  # dangling

    def forget_p03(data: dict) -> None:
        data["puzzles"].remove("p03")
        data["edits"].pop("p03")

    stale(ws, forget_p03)
    code, out, err = invoke(capsys, "list")
    assert code == 0, err
    no_traceback(out, err)
    assert notes.read_text() == "my notes\n" and learner.read_text() == learner_text
    assert not (outside / "created-through-a-link.mojo").exists()
    for puzzle in ("p01", "p02"):
        text = ws / "puzzles" / puzzle / "text.en.md"
        assert not text.is_symlink() and text.read_bytes() == (CURRICULUM / puzzle / "text.en.md").read_bytes()
    assert flat("Links stood where the workbook's own files go") in flat(err)


def test_a_puzzle_folder_that_links_outside_is_not_written_into(ws, outside, capsys):
    """p03's folder moved outside and linked back: the update refreshes nothing through it,
    says so, and the rest of the workspace is brought up to date."""
    shutil.move(ws / "puzzles" / "p03", outside / "p03")
    (ws / "puzzles" / "p03").symlink_to(outside / "p03")
    (outside / "p03" / "text.en.md").write_text("the learner's own copy\n")
    (ws / "puzzles" / "p04" / "text.en.md").write_text("old\n")
    before = snapshot(outside)
    stale(ws)
    code, out, err = invoke(capsys, "list")
    assert code == 0, err
    no_traceback(out, err)
    assert snapshot(outside) == before
    assert flat("workspace.json names puzzles/p03/") in flat(err) and flat("through a link") in flat(err)
    assert (ws / "puzzles" / "p04" / "text.en.md").read_bytes() == (CURRICULUM / "p04" / "text.en.md").read_bytes()


def test_a_linked_dot_workbook_is_refused_with_a_clear_message(ws, outside, capsys):
    shutil.move(ws / ".workbook", outside / "dot-workbook")
    (ws / ".workbook").symlink_to(outside / "dot-workbook")
    stale_record = outside / "dot-workbook" / "workspace.json"
    data = json.loads(stale_record.read_text())
    data["curriculum"] = "an older one"
    stale_record.write_text(json.dumps(data))
    before = snapshot(outside)
    code, out, err = invoke(capsys, "list")
    assert code == exitcodes.BAD_INPUT
    no_traceback(out, err)
    assert flat("workspace.json can't be read") in flat(err) and "link" in err
    assert snapshot(outside) == before


def test_state_json_and_its_lock_are_never_written_through_a_link(ws, outside, capsys):
    target = outside / "precious"
    target.write_text("keep me\n")
    state = ws / ".workbook" / "state.json"
    state.unlink()
    state.symlink_to(target)
    code, out, err = invoke(capsys, "hint", "p01", "--yes")
    assert code == 0, err
    no_traceback(out, err)
    assert target.read_text() == "keep me\n"
    assert not state.is_symlink() and json.loads(state.read_text())["puzzles"]["p01"]["hints_shown"] == 1
    lock = ws / ".workbook" / "state-lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(target)
    code, out, err = invoke(capsys, "hint", "p01", "--yes")
    assert code == 0, err  # the hint is shown; only its count is not saved, and that is said
    no_traceback(out, err)
    assert target.read_text() == "keep me\n" and flat("could not be saved") in flat(err) and "state-lock" in flat(err)


def test_reset_writes_neither_through_a_linked_backups_folder_nor_a_linked_puzzle_folder(ws, outside, capsys):
    mine = ws / "puzzles" / "p01" / "map.mojo"
    mine.write_text(mine.read_text() + "\n# my work\n")
    (outside / "backups").mkdir()
    backups = ws / ".workbook" / "backups"
    shutil.rmtree(backups, ignore_errors=True)
    backups.symlink_to(outside / "backups")
    code, out, err = invoke(capsys, "reset", "p01", "--yes")
    assert code == exitcodes.BAD_INPUT
    no_traceback(out, err)
    assert list((outside / "backups").iterdir()) == [] and mine.read_text().endswith("# my work\n")
    backups.unlink()
    shutil.move(ws / "puzzles" / "p02", outside / "p02")
    (ws / "puzzles" / "p02").symlink_to(outside / "p02")
    before = snapshot(outside / "p02")
    code, out, err = invoke(capsys, "reset", "p02", "--yes")
    assert code == exitcodes.BAD_INPUT
    no_traceback(out, err)
    assert snapshot(outside / "p02") == before and "link" in err
