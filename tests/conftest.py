"""Shared fixtures: a private copy of the workbook per test, and the real toolchain.

Compiled artefacts are cached by content (~/.cache/workbook and MAX's own
cache), so the same kernel is compiled once per machine, not once per test.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import psutil
import pytest

from workbook.core import toolchain

REPO = Path(__file__).resolve().parent.parent
# A child `python -m workbook` imports this checkout first, and still finds what the caller's
# PYTHONPATH holds (a `pip --target` install of the toolchain, as on the GPU host).
PYTHONPATH = os.pathsep.join([str(REPO), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)])
WRONG = REPO / "tests" / "wrong"


def has_gpu() -> bool:
    return toolchain.gpu() is not None


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A fresh copy of the puzzles and solutions, used as the workbook folder."""
    copy = tmp_path / "wb"
    for name in ("puzzles", "solutions"):
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("WORKBOOK_ROOT", str(copy))
    return copy


def put_wrong(root: Path, puzzle: str, variant: str) -> None:
    """Overwrite the learner's files with a wrong kernel from tests/wrong/."""
    source = WRONG / puzzle / variant
    assert source.is_dir(), source
    for path in source.rglob("*"):
        if path.is_file() and path.name != "wrong.toml":
            target = root / "puzzles" / puzzle / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def put_solution(root: Path, puzzle: str) -> None:
    shutil.copytree(root / "solutions" / puzzle, root / "puzzles" / puzzle, dirs_exist_ok=True)


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """Tests read English messages unless they ask for Korean."""
    from workbook.core import i18n

    monkeypatch.setenv("WORKBOOK_LANG", "en")
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def left_running() -> list[psutil.Process]:
    """What this process started and is still running (zombies aside)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


def sigint_at_default() -> None:
    """A child's preexec_fn for a test that sends it Ctrl-C as a terminal would: SIGINT at its
    default. A process started with SIGINT ignored (the tests run from `cmd &` in a script,
    where the shell ignores it) keeps ignoring it, and the child would go on to its verdict."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
