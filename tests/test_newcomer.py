"""The newcomer's path of issue 40, replayed: a Korean student without a GPU, at 80 x 24, makes a
workspace with `workbook --lang ko init`, works a chapter-4 puzzle (p24) and a chapter-5 puzzle
(p35) with a mistake, then right. Real compiles, the real simulator; each screen at 80 columns,
and the last 24 lines of a failed run carry its verdict and the first thing to fix."""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO, WRONG
from rich.cells import cell_len
from test_cli import invoke

from workbook.core import exitcodes
from workbook.course import skeleton

pytestmark = pytest.mark.slow


@pytest.fixture
def workspace(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("WORKBOOK_ROOT", raising=False)
    monkeypatch.delenv("WORKBOOK_LANG", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(capsys, "--lang", "ko", "init", "gpu")
    assert code == 0 and "한국어" in out
    monkeypatch.chdir(tmp_path / "gpu")
    return tmp_path / "gpu"


def mistake(root, puzzle: str, variant: str) -> None:
    for path in (WRONG / puzzle / variant).iterdir():
        if path.name != "wrong.toml":
            shutil.copyfile(path, root / "puzzles" / puzzle / path.name)


def right(root, puzzle: str, name: str) -> None:
    solution = REPO / "solutions" / puzzle / name
    (root / "puzzles" / puzzle / name).write_text(skeleton.clean_solution(solution.read_text(), "ko"))


def fits(text: str) -> None:
    assert all(cell_len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=cell_len)


def last_screen(text: str) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-24:])


def test_a_korean_newcomer_works_a_chapter_4_and_a_chapter_5_puzzle(workspace, capsys):
    # Chapter 4, p24: a warp sum whose sums land past the end of `sums`.
    mistake(workspace, "p24", "no_slot_check")
    code, out, err = invoke(capsys, "run", "p24", "--device", "sim")
    fits(out)
    screen = last_screen(out)
    assert code == exitcodes.FAILED and "Traceback" not in out + err
    assert "판정: ✘ 실패" in screen and "먼저 고칠 것:" in screen and "puzzles/p24/warp_dot.mojo:" in screen
    assert "막혔나요? `workbook hint p24`" in screen
    assert "실행 안 함" not in out  # every case ran (item 6)
    code, hint, _ = invoke(capsys, "hint", "p24")
    assert code == 0 and "힌트 1/" in hint and "생각" in hint
    fits(hint)
    right(workspace, "p24", "warp_dot.mojo")
    code, out, _ = invoke(capsys, "run", "p24")
    fits(out)
    assert code == exitcodes.OK and "판정: ✔ 통과" in last_screen(out), last_screen(out)

    # Chapter 5, p35: a false alignment promise: the simulator stops the cases it faults in.
    mistake(workspace, "p35", "false_alignment_claim")
    code, out, _ = invoke(capsys, "run", "p35", "--device", "sim")
    fits(out)
    screen = last_screen(out)
    assert code == exitcodes.FAILED and "판정: ✘ 실패" in screen and "먼저 고칠 것:" in screen
    assert "puzzles/p35/alignment.mojo:" in screen
    assert "✘ 멈춤" in out and "실행 안 함" not in out
    assert out.count("측정하지 않음") <= 1  # the speed not measured: said once, not once per part (item 10)
    right(workspace, "p35", "alignment.mojo")
    code, out, _ = invoke(capsys, "run", "p35")
    fits(out)
    assert code == exitcodes.OK and "판정: ✔ 통과" in last_screen(out), out

    code, out, _ = invoke(capsys, "list")
    fits(out)
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip().startswith(("p24", "p35"))}
    assert "◐ 시뮬레이터에서 통과" in rows["p24"] and "◐ 시뮬레이터에서 통과" in rows["p35"]
