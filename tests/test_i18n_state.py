"""Translations are complete; the learner's state survives corruption; backups restore."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from workbook.core import i18n
from workbook.course import backups, catalog, state

PACKAGE = Path(i18n.__file__).parent.parent  # workbook/, every layer


def test_english_and_korean_have_the_same_messages():
    assert set(i18n.catalog("en")) == set(i18n.catalog("ko"))
    for key, text in i18n.catalog("ko").items():
        assert text.strip(), key
        assert set(re.findall(r"{(\w+)}", text)) == set(re.findall(r"{(\w+)}", i18n.catalog("en")[key])), key


def test_every_message_the_code_uses_exists():
    """Every key written in the code (t, msg, Msg, explain, errors, reasons) is in the catalog;
    keys built from a prefix (status., device., progress.) have an entry for every value."""
    keys = set(i18n.catalog("en"))
    prefixes = "|".join(sorted({k.split(".")[0] for k in keys}))
    pattern = re.compile(r"[\"']((?:" + prefixes + r")\.[a-z_.0-9-]+)[\"']")
    used = set()
    for path in PACKAGE.rglob("*.py"):
        files = (".json", ".toml", ".md", ".py", ".txt")
        used |= {k for k in pattern.findall(path.read_text()) if not k.endswith(files)}
    assert {"reason.race", "reason.no_gpu", "finding.divergent_barrier", "catalog.unknown_puzzle"} <= used
    for key in used:
        if key.endswith((".", "_")):
            assert any(k.startswith(key) for k in keys), key
        else:
            assert key in keys, key
    from workbook.core.results import Status
    from workbook.course.state import Progress

    for status in Status:
        assert f"status.{status.value}" in keys
    for progress in Progress:
        assert f"progress.{progress.value}" in keys
    for device in ("cpu", "gpu", "sim"):
        assert f"device.{device}" in keys and f"device_short.{device}" in keys


def test_a_message_renders_in_both_languages_with_nested_messages():
    inner = i18n.msg("sim.thread_in_block", t="3", b="1")
    outer = i18n.msg("finding.sim_write_outside", who=inner, buffer="output", element="output[9]", size=9)
    assert outer.text("en") == "thread 3 of block 1 wrote output[9], outside `output` (9 elements)"
    assert "블록 1의 스레드 3" in outer.text("ko")
    several = i18n.msg("finding.barrier_mismatch", block="0",
                       where=[i18n.msg("sim.waits_at", n=2, line=40), i18n.msg("sim.waits_at", n=6, line=44)])
    assert "(2 at line 40, 6 at line 44)" in several.text("en") and "줄 40에서 2개, 줄 44에서 6개" in several.text("ko")
    assert str(outer) == outer.text("en")


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


@pytest.mark.parametrize("status,devices,progress", [
    ("pass", {"cpu": "pass", "gpu": "pass"}, state.Progress.DONE),
    ("pass", {"gpu": "compiled", "sim": "pass"}, state.Progress.PASSED_SIM),
    ("pass", {"cpu": "pass", "gpu": "compiled", "sim": "not_run"}, state.Progress.PASSED_CPU),
    ("compiled", {"gpu": "compiled", "sim": "not_run"}, state.Progress.COMPILED),
    ("fail", {"gpu": "compiled", "sim": "fail"}, state.Progress.FAILED),
    ("not_started", {"gpu": "not_run"}, state.Progress.NOT_STARTED),
])
def test_progress_is_one_type_derived_in_one_place(root, status, devices, progress):
    state.remember("p18", status, devices)
    assert state.load().of("p18").progress == progress
    assert state.State().of("p01").progress == state.Progress.NOT_STARTED


def test_next_pending_follows_the_course_and_wraps_around(root):
    puzzles = catalog.all_puzzles()
    ids = [p.id for p in puzzles]
    state.remember(ids[0], "pass", {"gpu": "compiled", "sim": "pass"})
    current = state.load()
    assert current.next_pending(puzzles).id == ids[1]
    assert current.next_pending(puzzles, after=ids[-1]).id == ids[1]  # wraps, skips the finished one
    assert current.next_pending(puzzles, after=ids[1]).id == ids[2]  # never the one being watched


def test_state_round_trip(root):
    state.remember("p18", "pass", {"cpu": "pass", "gpu": "compiled"})
    assert state.show_hints("p18", 5, False) == (1, None) and state.show_hints("p18", 5, False) == (2, None)
    again = state.load()
    assert again.of("p18").status == "pass" and again.of("p18").hints_shown == 2 and again.of("p18").passed_at


def test_corrupt_state_is_reported_and_rebuilt(root):
    state.state_file().parent.mkdir(parents=True, exist_ok=True)
    state.state_file().write_text("{not json")
    s = state.load()
    assert s.warning and s.puzzles == {}
    assert list(state.state_file().parent.glob("state.corrupt-*.json"))  # kept for inspection
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


@pytest.mark.parametrize("word,subject,objective,towards", [
    ("스레드 3", "이", "을", "으로"), ("스레드 2", "가", "를", "로"), ("p18", "이", "을", "로"),
    ("p12", "가", "를", "로"), ("블록 0", "이", "을", "으로"), ("'run'", "이", "을", "으로"),
    ("--seed", "가", "를", "로"), ("값", "이", "을", "으로"), ("파일", "이", "을", "로"),
    ("output", "이", "을", "으로"), ("PUZZLE", "이", "을", "로"), ("10", "이", "을", "으로"),
])
def test_korean_particles_follow_the_last_syllable(word, subject, objective, towards):
    assert i18n.particle(word, "이(가)") == subject
    assert i18n.particle(word, "을(를)") == objective
    assert i18n.particle(word, "(으)로") == towards


def test_messages_choose_their_particles():
    assert i18n.t("watch.changed", "ko", id="p18").startswith("p18이 바뀌었습니다")
    assert i18n.t("watch.changed", "ko", id="p12").startswith("p12가 바뀌었습니다")
    assert "'output'이 틀린 곳" in i18n.t("report.first_failure", "ko", case="x", output="output")
    assert "'buffer'가 틀린 곳" in i18n.t("report.first_failure", "ko", case="x", output="buffer")
    assert i18n.t("reset.ask", "ko", id="p12").startswith("p12를") and "(를)" not in i18n.t("reset.ask", "ko", id="p12")


def test_no_korean_message_leaves_a_particle_undecided():
    """Every `{name}이(가)` in ko.toml resolves once a value fills it: no `스레드 3이(가)`."""
    for key, text in i18n.catalog("ko").items():
        values = {name: "p18" for name in re.findall(r"{(\w+)}", text)}
        said = i18n.t(key, "ko", **values)
        assert not re.search(r"이\(가\)|을\(를\)|은\(는\)|\(으\)로|과\(와\)|\(이\)라는", said), (key, said)


def test_a_field_a_newer_workbook_added_does_not_cost_the_progress(root):
    state.state_file().parent.mkdir(parents=True, exist_ok=True)
    state.state_file().write_text(json.dumps({"version": state.VERSION, "puzzles": {
        "p01": {"status": "pass", "hints_shown": 2, "last_run": "x", "from_the_future": True}}}))
    loaded = state.load()
    assert not loaded.warning and loaded.of("p01").hints_shown == 2
