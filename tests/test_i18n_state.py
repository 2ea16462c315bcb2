"""Translations are complete; the learner's state survives corruption; backups restore."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from workbook import backups, catalog, i18n, state

PACKAGE = Path(i18n.__file__).parent
DYNAMIC = {"status.": "status", "device.": "device", "report.map.": "map", "backups.reason.": "reason"}


def test_english_and_korean_have_the_same_messages():
    assert set(i18n.catalog("en")) == set(i18n.catalog("ko"))
    for key, text in i18n.catalog("ko").items():
        assert text.strip(), key
        assert set(re.findall(r"{(\w+)}", text)) == set(re.findall(r"{(\w+)}", i18n.catalog("en")[key])), key


def test_every_message_the_code_uses_exists():
    used = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r"\bt\(\s*[\"']([a-z_.\-]+)[\"']", text))
        used |= set(re.findall(r"explain(?:ed)?\((?:[^,()]+(?:\([^()]*\))?,\s*)?[\"']([a-z_.]+)[\"']", text))
    assert "reason.race" in used and "reason.no_gpu" in used  # the patterns find reasons too
    for key in used:
        if key.endswith((".", "_")):
            assert any(k.startswith(key) for k in i18n.catalog("en")), key
        else:
            assert key in i18n.catalog("en"), key
    from workbook.results import Status

    for status in Status:
        assert f"status.{status.value}" in i18n.catalog("en")


def test_every_puzzle_text_title_and_hint_exists_in_both_languages(root):
    for puzzle in catalog.all_puzzles():
        for lang in i18n.LANGUAGES:
            assert puzzle.text_path(lang).read_text().strip(), (puzzle.id, lang)
            assert puzzle.title.get(lang), (puzzle.id, lang)
            for part in puzzle.parts:
                assert part.title.get(lang), (puzzle.id, part.id, lang)
            for h in puzzle.hints:
                assert h.get(lang, "").strip(), (puzzle.id, lang)
        assert re.search(r"[가-힣]", puzzle.text_path("ko").read_text())


@pytest.mark.parametrize("env,expected", [
    ({"WORKBOOK_LANG": "ko"}, "ko"), ({"LANG": "ko_KR.UTF-8"}, "ko"), ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "ko_KR.UTF-8", "WORKBOOK_LANG": "en"}, "en"), ({}, "en"),
])
def test_language_choice(monkeypatch, env, expected):
    for var in ("WORKBOOK_LANG", "LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert i18n.detect() == expected
    assert i18n.detect("ko") == "ko"


def test_korean_lines_up_in_tables():
    """Rich counts a Hangul syllable as two cells: every row has the same width."""
    console = Console(width=80, record=True, force_terminal=False)
    table = Table()
    table.add_column("퍼즐")
    table.add_column("상태")
    table.add_row("p18", "통과")
    table.add_row("p22", "컴파일 오류")
    console.print(table)
    lines = [line for line in console.export_text().splitlines() if line.strip()]
    widths = {cell_len(line) for line in lines}
    assert len(widths) == 1


def test_state_round_trip(root):
    s = state.load()
    state.record(s, "p18", "pass", {"cpu": "pass", "gpu": "compiled"})
    s.of("p18").hints_shown = 2
    state.save(s)
    again = state.load()
    assert again.of("p18").status == "pass" and again.of("p18").hints_shown == 2
    assert again.of("p18").done_on_cpu_only and not again.of("p18").done


def test_corrupt_state_is_reported_and_rebuilt(root):
    state.state_dir().mkdir(parents=True, exist_ok=True)
    state.state_file().write_text("{not json")
    s = state.load()
    assert s.warning and s.puzzles == {}
    assert list(state.state_dir().glob("state.corrupt-*.json"))  # kept for inspection
    state.save(s)
    assert state.load().warning == ""


def test_backup_and_restore_round_trip(root):
    puzzle = catalog.load("p18")
    target = puzzle.dir / "op/softmax.mojo"
    target.write_text("# my work\n")
    made = backups.write_files(puzzle, {"op/softmax.mojo": "# replaced\n"}, "reset")
    assert (made.dir / "op/softmax.mojo").read_text() == "# my work\n"
    assert target.read_text() == "# replaced\n"
    backups.restore(backups.find(made.id), puzzle)
    assert target.read_text() == "# my work\n"
    reasons = [b.reason for b in backups.all_backups("p18")]
    assert reasons.count("before-restore") == 1
