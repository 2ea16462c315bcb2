"""Every command through Typer's test runner, as a learner or an author types it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import has_gpu, put_wrong
from typer.testing import CliRunner

from workbook import exitcodes
from workbook.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_list_shows_every_puzzle_and_progress(root):
    result = invoke("list")
    assert result.exit_code == 0
    assert "p18" in result.output and "p27" in result.output
    assert "0 of" in result.output


def test_show_renders_the_text_and_files(root):
    result = invoke("show", "p18")
    assert result.exit_code == 0
    assert "puzzles/p18/op/softmax.mojo" in result.output
    assert "puzzles/p18/softmax_graph.py" in result.output


def test_show_in_korean(root):
    result = invoke("--lang", "ko", "show", "p18")
    assert result.exit_code == 0
    assert "수정할 파일" in result.output


@pytest.mark.parametrize("args", [
    ("run", "p19"), ("show", "p1"), ("check", "nope"), ("hint", "puzzles/p18"), ("reveal", "p18/op/softmax.mojo"),
    ("run", "p18", "--part", "nope"), ("check",), ("check", "p18", "--all"), ("--lang", "fr", "list"),
    ("restore", "no-such-backup"),
])
def test_bad_input_is_a_clear_message_and_exit_2(root, args):
    result = invoke(*args)
    assert result.exit_code == exitcodes.BAD_INPUT, result.output
    assert "Traceback" not in result.output


def test_malformed_manifest_is_exit_2(root):
    (root / "puzzles/p18/puzzle.toml").write_text("id = [")
    result = invoke("show", "p18")
    assert result.exit_code == exitcodes.BAD_INPUT
    assert "malformed manifest" in result.output


def test_unknown_id_suggests_close_ids(root):
    result = invoke("run", "p17")
    assert "p18" in result.output


def test_hints_come_one_at_a_time_in_order(root):
    from workbook import catalog

    hints = catalog.load("p18").hints
    first = invoke("hint", "p18")
    assert "1/5" in first.output or "1 of 5" in first.output
    assert hints[0]["en"].split()[0] in first.output
    second = invoke("hint", "p18")
    assert "2 of 5" in second.output
    everything = invoke("hint", "p18", "--all")
    assert "5 of 5" in everything.output


def test_reveal_asks_and_never_changes_files_without_apply(root):
    learner = root / "puzzles/p18/op/softmax.mojo"
    before = learner.read_text()
    refused = invoke("reveal", "p18")  # no terminal: the answer is no
    assert "block_max = shared[0][0]" not in refused.output
    shown = invoke("reveal", "p18", "--yes")
    assert shown.exit_code == 0
    assert "block_max = shared[0][0]" in shown.output
    assert "#|" not in shown.output  # the placeholders are for skeletons only
    assert learner.read_text() == before


def test_reveal_apply_keeps_a_backup(root):
    learner = root / "puzzles/p18/op/softmax.mojo"
    learner.write_text(learner.read_text() + "\n# my notes\n")
    result = invoke("reveal", "p18", "--yes", "--apply")
    assert result.exit_code == 0
    assert "block_max = shared[0][0]" in learner.read_text()
    backups = list((root / ".workbook/backups").glob("*-p18-reveal-apply/op/softmax.mojo"))
    assert len(backups) == 1 and "# my notes" in backups[0].read_text()


def test_reset_restores_the_skeleton_and_backups_can_undo_it(root):
    learner = root / "puzzles/p18/op/softmax.mojo"
    skeleton = learner.read_text()
    learner.write_text(skeleton + "\n# half done\n")
    assert invoke("reset", "p18", "--yes").exit_code == 0
    assert learner.read_text() == skeleton
    listed = invoke("backups", "p18")
    assert "reset" in listed.output
    from workbook.backups import all_backups

    (made,) = all_backups("p18")
    assert invoke("restore", made.id[:17]).exit_code == 0  # a unique prefix is enough
    assert learner.read_text().endswith("# half done\n")


def test_doctor_reports_toolchain_and_gpu(root):
    result = invoke("doctor")
    assert "mojo" in result.output and "1.2.0" in result.output
    assert "GPU" in result.output
    assert result.exit_code in (exitcodes.OK, exitcodes.TOOLCHAIN)


def test_korean_help_text():
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBOOK_LANG", "LANG", "LC_ALL")}
    out = subprocess.run([sys.executable, "-m", "workbook", "--lang", "ko", "--help"],
                         capture_output=True, text=True, env={**env, "COLUMNS": "100"})
    assert "퍼즐" in out.stdout


def test_author_verify_passes_on_a_clean_checkout(root):
    assert invoke("author", "verify").exit_code == 0


@pytest.mark.slow
def test_check_json_shape_for_the_solutions(root):
    result = invoke("check", "p18", "p27", "--solutions", "--json", "--seed", "1")
    doc = json.loads(result.output)
    assert result.exit_code == 0, result.output
    assert doc["summary"]["total"] == 2
    p18, p27 = doc["puzzles"]
    assert p18["id"] == "p18" and p18["status"] == "pass"
    assert p18["devices"]["cpu"]["status"] == "pass"
    assert isinstance(p18["devices"]["cpu"]["max_abs_error"], float)
    if not has_gpu():
        assert p18["devices"]["gpu"]["status"] == "compiled"
        assert p27["status"] == "compiled"
        assert p27["devices"]["gpu"]["reason"]


@pytest.mark.slow
def test_check_skeletons_fails_with_not_started(root):
    result = invoke("check", "--all", "--json")
    doc = json.loads(result.output)
    assert result.exit_code == exitcodes.FAILED
    assert {p["status"] for p in doc["puzzles"]} == {"not_started"}
    assert doc["summary"]["passed"] == 0
    for p in doc["puzzles"]:
        for device in p["devices"].values():
            assert device["status"] == "not_run" and device["reason"]


@pytest.mark.slow
def test_run_reports_a_wrong_kernel_with_an_error_map(root):
    import shutil

    shutil.copy(root / "solutions/p18/softmax_graph.py", root / "puzzles/p18/softmax_graph.py")
    put_wrong(root, "p18", "skips_last")
    result = invoke("run", "p18", "--seed", "3")
    assert result.exit_code == exitcodes.FAILED
    assert "■" in result.output  # the error map
    assert "NaN" in result.output
    state = json.loads((root / ".workbook/state.json").read_text())
    assert state["puzzles"]["p18"]["status"] == "fail"


@pytest.mark.slow
def test_run_json_and_progress_after_a_pass(root):
    from conftest import put_solution

    put_solution(root, "p18")
    result = invoke("run", "p18", "--json", "--seed", "2")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["status"] == "pass" and doc["parts"][0]["devices"]["cpu"]["cases"]
    listing = invoke("list")
    assert "p18" in listing.output
    expected = "✔ done" if has_gpu() else "◐ passed on the CPU"
    assert expected in listing.output
    # With p18 passed, `run` with no id goes on to the next pending puzzle.
    nxt = invoke("run", "--json")
    assert json.loads(nxt.output)["id"] != "p18"


def test_a_deleted_learner_file_is_bad_input_and_reset_brings_it_back(root):
    learner = root / "puzzles/p18/op/softmax.mojo"
    learner.unlink()
    result = invoke("run", "p18")
    assert result.exit_code == exitcodes.BAD_INPUT
    assert "workbook reset p18" in result.output
    assert invoke("check", "p18").exit_code == exitcodes.BAD_INPUT
    assert invoke("reset", "p18", "--yes").exit_code == 0
    assert learner.exists()
