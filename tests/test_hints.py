"""Hints climb, and say so before they show code (issue 40, item 12).

Every part's hints go from the idea, to where to look, to what to write (hints.toml's `level`);
no hint below "what" holds a line of the answer that the puzzle's text and skeleton do not
already show; a hint with code of the answer in it is announced by the hint before it and again
above its own panel. Rendered at 80 columns, in English and Korean."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from rich.cells import cell_len

from workbook.cli.commands.hint import LEVELS, shows_code
from workbook.course import catalog, skeleton

PUZZLES = catalog.all_puzzles(REPO)
ORDER = {level: n for n, level in enumerate(LEVELS)}


def ladders(puzzle) -> dict[str | None, list[tuple[int, dict]]]:
    """Each part's hints as `workbook hint --part` shows them: its own and the puzzle's general ones."""
    parts = {h.get("part") for h in puzzle.hints} - {None}
    numbered = list(enumerate(puzzle.hints, 1))
    if not parts:
        return {None: numbered}
    return {part: [(n, h) for n, h in numbered if h.get("part") in (None, part)] for part in sorted(parts)}


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def answer_lines(puzzle) -> list[str]:
    """The solution's lines inside its gaps that the text and the skeleton do not show already."""
    shown = squeezed("".join(puzzle.text_path(lang).read_text() for lang in ("en", "ko"))
                     + "".join(skeleton.skeleton_of(path, lang) for path in puzzle.solution_files()
                               for lang in ("en", "ko")))
    found = []
    for path in puzzle.solution_files():
        inside = False
        for line in path.read_text().splitlines():
            if skeleton.BEGIN.match(line):
                inside = True
            elif skeleton.END.match(line):
                inside = False
            elif inside and not line.lstrip().startswith("#"):
                code = squeezed(line.split("#", 1)[0])
                if len(code) >= 10 and code not in shown:
                    found.append(code)
    return found


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_each_part_s_hints_climb_from_the_idea_to_what_to_write(puzzle):
    assert all(h.get("level") in LEVELS for h in puzzle.hints), [h.get("level") for h in puzzle.hints]
    for part, ladder in ladders(puzzle).items():
        levels = [h["level"] for _, h in ladder]
        assert len(ladder) >= 3, (part, levels)
        assert levels[0] == "idea" and levels[-1] == "what" and "where" in levels, (part, levels)
        assert levels == sorted(levels, key=ORDER.get), (part, levels)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_no_hint_before_what_to_write_gives_the_answer_away(puzzle):
    lines = answer_lines(puzzle)
    for n, hint in enumerate(puzzle.hints, 1):
        assert set(hint) <= {"en", "ko", "part", "level"}, (n, set(hint))
        assert hint["en"].count("```") == hint["ko"].count("```"), n  # the same code in both languages
        if hint["level"] == "what":
            continue
        assert not shows_code(hint), (n, hint["level"])
        for lang in ("en", "ko"):
            leaked = [line for line in lines if line in squeezed(hint[lang])]
            assert not leaked, (n, lang, leaked)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_hint_with_code_is_announced_before_it_is_shown(root, capsys, lang, monkeypatch):
    """p01's third hint is code: the second ends by saying so, and the third says it above its
    panel. Every line fits 80 columns."""
    from test_cli import invoke

    monkeypatch.setenv("COLUMNS", "80")
    says = {"en": ("The next hint shows code from the answer.", "This hint shows code from the answer.",
                   "where to look"),
            "ko": ("다음 힌트는 정답의 코드를 보여 줍니다.", "이 힌트는 정답의 코드를 보여 줍니다.", "볼 곳")}[lang]
    screens = [invoke(capsys, "--lang", lang, "hint", "p01")[1] for _ in range(3)]
    assert says[0] not in screens[0] and says[0] in " ".join(screens[1].split()) and says[2] in screens[1]
    third = screens[2].splitlines()
    warned = next(k for k, line in enumerate(third) if says[1] in line)
    panel = next(k for k, line in enumerate(third) if line.startswith("╭"))
    assert warned < panel and "output[i] = a[i] + 10" in screens[2]
    assert all(cell_len(line) <= 80 for screen in screens for line in screen.splitlines())


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_question_before_every_hint_breaks_between_words(lang):
    from workbook.cli.commands.common import PROMPT_TAIL, wrapped
    from workbook.core import i18n

    question = i18n.t("hint.ask_all", lang, id="p18", n=4)
    for width in (80, 60):
        lines = wrapped(question, width).split("\n")
        assert " ".join(lines) == " ".join(question.split())  # broken only where there was a space
        assert all(cell_len(line) <= width for line in lines) and cell_len(lines[-1]) + PROMPT_TAIL <= width
