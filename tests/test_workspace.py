"""A workspace of one's own: `workbook init DIR` writes the puzzles with the learner's files in
the learner's language and the state file; every command finds it from the current folder
upwards; a newer workbook adds puzzles without touching the learner's files. The last test
installs a built wheel into a fresh virtual environment and works from a fresh folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from test_cli import invoke

from workbook.core import exitcodes, settings
from workbook.course import catalog, skeleton, workspace


@pytest.fixture
def away(tmp_path, monkeypatch) -> Path:
    """A folder outside any checkout, with no WORKBOOK_ROOT: found from the current folder alone."""
    monkeypatch.delenv("WORKBOOK_ROOT", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(home)
    return home


def test_init_writes_a_korean_workspace_and_commands_find_it_from_below(away, capsys, monkeypatch):
    code, out, _ = invoke(capsys, "--lang", "ko", "init", "gpu")
    root = away / "gpu"
    assert code == 0 and "퍼즐" in out and "cd gpu && workbook run" in out
    assert json.loads((root / ".workbook" / "state.json").read_text())["puzzles"] == {}
    record = json.loads((root / ".workbook" / "workspace.json").read_text())
    assert record["language"] == "ko" and set(record["puzzles"]) == set(catalog.puzzle_ids(REPO))
    learner = root / "puzzles" / "p04" / "map_2d.mojo"
    assert "# FILL IN: 이 스레드의 행과 열을 구하세요" in learner.read_text() and "#ko" not in learner.read_text()
    assert (root / "puzzles" / "p18" / "op" / "__init__.mojo").exists()  # the puzzle's own files too
    assert not (root / "solutions").exists()  # the solutions stay in the installation
    monkeypatch.chdir(root / "puzzles" / "p04")  # like git: from a folder below
    monkeypatch.delenv("WORKBOOK_LANG")
    assert settings.find_root() == root
    code, out, _ = invoke(capsys, "list", "--lang", "ko")
    assert code == 0 and "1장" in out
    code, out, _ = invoke(capsys, "run", "p04", "--json")
    assert json.loads(out)["status"] == "not_started"  # the Korean skeleton is the skeleton
    code, out, _ = invoke(capsys, "reveal", "p04", "--yes")
    assert code == 0 and "output[row, col] = a[row, col] * 10" in out  # from the installation's solutions
    assert invoke(capsys, "hint", "p04")[0] == 0
    assert json.loads((root / ".workbook" / "state.json").read_text())["puzzles"]["p04"]["hints_shown"] == 1


def test_init_never_writes_over_a_checkout_or_learner_files(away, capsys):
    shutil.copytree(REPO / "puzzles", away / "clone" / "puzzles")
    code, _, err = invoke(capsys, "init", "clone")
    assert code == exitcodes.BAD_INPUT and "not a workspace" in " ".join(err.split())
    assert invoke(capsys, "init", "ws")[0] == 0
    mine = away / "ws" / "puzzles" / "p01" / "map.mojo"
    mine.write_text("# my work\n")
    code, out, _ = invoke(capsys, "init", "ws")  # again: brought up to date, nothing of theirs touched
    assert code == 0 and "already" in out and mine.read_text() == "# my work\n"


def test_a_newer_workbook_adds_its_puzzles_and_leaves_the_learners_files(away, capsys):
    assert invoke(capsys, "init", "ws")[0] == 0
    root = away / "ws"
    # As an older workbook left it: no p27 yet, and another curriculum.
    record = json.loads(workspace.marker(root).read_text())
    record["puzzles"].remove("p27")
    record["edits"].pop("p27")
    record["files"] = {k: v for k, v in record["files"].items() if not k.startswith("puzzles/p27/")}
    record["curriculum"] = "older"
    workspace.marker(root).write_text(json.dumps(record))
    shutil.rmtree(root / "puzzles" / "p27")
    mine = root / "puzzles" / "p01" / "map.mojo"
    mine.write_text(mine.read_text() + "\n# my work\n")
    skeleton_before = (root / "puzzles" / "p02" / "zip.mojo").read_text()
    hints = root / "puzzles" / "p03" / "hints.toml"
    hints.write_text(hints.read_text() + "\n# my note\n")  # a workbook file the learner changed
    os.chdir(root)
    code, _, err = invoke(capsys, "list")
    said = " ".join(err.split())
    assert code == 0 and "new puzzles" in said and "p27" in said and "puzzles/p03/hints.toml" in said
    assert (root / "puzzles" / "p27" / "op" / "block_patterns.mojo").exists()
    assert mine.read_text().endswith("# my work\n")  # never touched
    assert (root / "puzzles" / "p02" / "zip.mojo").read_text() == skeleton_before
    assert "# my note" not in hints.read_text()  # the workbook's file is the workbook's again...
    kept = list((root / ".workbook" / "backups").glob("*-p03-workbook-update/hints.toml"))
    assert kept and "# my note" in kept[0].read_text()  # ...after a backup
    assert json.loads(workspace.marker(root).read_text())["curriculum"] == workspace.digest(settings.curriculum())
    _, _, again = invoke(capsys, "list")
    assert "new puzzles" not in again  # once


def test_skeletons_of_a_workspace_match_the_solutions_in_its_language(away, capsys):
    assert invoke(capsys, "--lang", "ko", "init", "ws")[0] == 0
    for puzzle in catalog.all_puzzles(REPO):
        for name, solution in zip(puzzle.edit, puzzle.solution_files()):
            written = away / "ws" / "puzzles" / puzzle.id / name
            assert skeleton.language_of(written, solution) == "ko", written


@pytest.mark.slow
def test_an_installed_wheel_makes_a_workspace_from_a_fresh_folder(tmp_path):
    """pipx-style: the wheel built from this checkout, in a venv of its own (its dependencies
    borrowed from this environment, so nothing is downloaded but the build backend), used
    from a folder that is no checkout. Puzzles, solutions and the simulator come from the wheel."""
    started = time.monotonic()
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("workbook", "puzzles", "solutions"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "-q"]
    built = subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("workbook-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index",
                                str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    site = next((venv / "lib").glob("python*/site-packages"))
    borrowed = subprocess.run([sys.executable, "-c", "import site; print('\\n'.join(site.getsitepackages()))"],
                              capture_output=True, text=True, check=True).stdout
    (site / "borrowed.pth").write_text(borrowed)  # typer, rich, numpy, mojo, max: this environment's
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WORKBOOK_ROOT", "WORKBOOK_LANG", "LANG")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # where `mojo` is
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    workbook = str(venv / "bin" / "workbook")

    def use(*args: str, cwd: Path = fresh) -> subprocess.CompletedProcess:
        return subprocess.run([workbook, *args], capture_output=True, text=True, env=env, cwd=cwd)

    where = json.loads(use("doctor", "--json").stdout)
    assert where["curriculum"] == str((site / "workbook" / "_curriculum").resolve()) and where["root"] is None
    nowhere = use("list")
    assert nowhere.returncode == exitcodes.BAD_INPUT and "workbook init DIR" in " ".join(nowhere.stderr.split())
    made = use("--lang", "ko", "init", "gpu-puzzles")
    assert made.returncode == 0, made.stderr
    root = fresh / "gpu-puzzles"
    assert "퍼즐 1:" in (root / "puzzles" / "p01" / "map.mojo").read_text()
    listed = use("list", cwd=root / "puzzles")
    assert listed.returncode == 0 and "1장" in listed.stdout, listed.stderr  # Korean: the workspace's language
    applied = use("reveal", "p01", "--yes", "--apply", cwd=root)
    assert applied.returncode == 0, applied.stderr
    ran = use("run", "p01", "--json", "--device", "sim", cwd=root)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
    assert json.loads(ran.stdout)["devices"]["sim"] == "pass"
    assert time.monotonic() - started < 90
