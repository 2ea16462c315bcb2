"""Every command through the real entry point, as a learner or an author types it:
exit codes, messages, --json documents (errors too), and 80-column views."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from conftest import PYTHONPATH, REPO, has_gpu, put_solution, put_wrong
from rich.cells import cell_len

from workbook.cli import app as cli
from workbook.core import exitcodes
from workbook.course import catalog


def invoke(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


def test_list_shows_chapters_and_progress(root, capsys):
    code, out, _ = invoke(capsys, "list")
    assert code == 0
    assert "Chapter 1 · Threads and indexing" in out and "p01" in out and "p18" in out
    assert "0 of" in out


def test_list_json(root, capsys):
    code, out, _ = invoke(capsys, "list", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == exitcodes.JSON_SCHEMA
    first = doc["puzzles"][0]
    assert first["id"] == "p01" and first["progress"] == "not_started" and first["chapter"] == 1


def test_show_renders_the_text_and_files(root, capsys):
    code, out, _ = invoke(capsys, "show", "p18")
    assert code == 0
    assert "puzzles/p18/op/softmax.mojo" in out and "puzzles/p18/softmax_graph.py" in out


def test_show_in_korean(root, capsys):
    code, out, _ = invoke(capsys, "--lang", "ko", "show", "p01")
    assert code == 0 and "수정할 파일" in out and "스레드" in out


@pytest.mark.parametrize("args", [
    ("run", "p20"), ("show", "p99"), ("check", "nope"), ("hint", "puzzles/p18"), ("reveal", "p18/op/softmax.mojo"),
    ("run", "p18", "--part", "nope"), ("check",), ("check", "p18", "--all"), ("--lang", "fr", "list"),
    ("restore", "no-such-backup"), ("run", "p01", "--device", "tpu"), ("run", "--no-such-option"),
])
def test_bad_input_is_a_clear_message_and_exit_2(root, capsys, args):
    code, out, err = invoke(capsys, *args)
    assert code == exitcodes.BAD_INPUT, (out, err)
    assert "Traceback" not in out + err and "Error:" in err


@pytest.mark.parametrize("args", [("run", "p20", "--json"), ("check", "nope", "--json"), ("list", "--json"),
                                  ("run", "--json", "--no-such-option")])
def test_every_json_exit_prints_one_json_document(root, capsys, args):
    (root / "puzzles/p27/puzzle.toml").write_text("id = [")  # a broken manifest, for list
    code, out, _ = invoke(capsys, *args)
    doc = json.loads(out)
    assert doc["schema"] == exitcodes.JSON_SCHEMA
    assert code == exitcodes.BAD_INPUT and doc["error"]["exit_code"] == code and doc["error"]["message"]


def test_an_internal_error_has_its_own_exit_code_and_a_log(root, capsys, monkeypatch):
    from workbook.cli.commands import list_

    monkeypatch.setattr(list_, "main", lambda ctx: 1 / 0)
    code, _, err = invoke(capsys, "list")
    assert code == exitcodes.INTERNAL and "ZeroDivisionError" in err and "Traceback" not in err
    logs = list((root / ".workbook" / "logs").glob("crash-*.log"))
    assert logs and "Traceback" in logs[0].read_text() and str(logs[0]) in " ".join(err.split()).replace(" ", "")\
        or str(logs[0].name) in err.replace("\n", "")
    code, out, _ = invoke(capsys, "list", "--json")
    doc = json.loads(out)
    assert code == exitcodes.INTERNAL and doc["error"]["key"] == "error.internal" and doc["error"]["log"]


def test_unknown_id_suggests_close_ids_in_korean_too(root, capsys):
    _, _, err = invoke(capsys, "--lang", "ko", "run", "p37")
    assert "퍼즐은 없습니다" in err and "가장 가까운 퍼즐: " in err
    # The closest ids: which ones depends on the puzzles there are, but each is one of them.
    close = " ".join(err.split("가장 가까운 퍼즐: ", 1)[1].split(".", 1)[0].split()).split(", ")
    assert close and set(close) <= set(catalog.puzzle_ids()), close


def test_hints_come_one_at_a_time_in_order(root, capsys):
    from workbook.course import catalog

    hints = catalog.load("p18").hints
    n = len(hints)
    _, first, _ = invoke(capsys, "hint", "p18")
    assert f"Hint 1 of {n}" in first and hints[0]["en"].split()[0] in first
    _, second, _ = invoke(capsys, "hint", "p18")
    assert f"Hint 2 of {n}" in second
    _, everything, _ = invoke(capsys, "hint", "p18", "--all", "--yes")
    assert f"Hint {n} of {n}" in everything


def test_reveal_asks_and_never_changes_files_without_apply(root, capsys):
    learner = root / "puzzles/p18/op/softmax.mojo"
    before = learner.read_text()
    _, refused, _ = invoke(capsys, "reveal", "p18")  # no terminal: the answer is no
    assert "block_max = shared[0][0]" not in refused
    code, shown, _ = invoke(capsys, "reveal", "p18", "--yes")
    assert code == 0 and "block_max = shared[0][0]" in shown and "#|" not in shown
    assert learner.read_text() == before


def test_reveal_apply_keeps_a_backup(root, capsys):
    learner = root / "puzzles/p18/op/softmax.mojo"
    learner.write_text(learner.read_text() + "\n# my notes\n")
    code, _, _ = invoke(capsys, "reveal", "p18", "--yes", "--apply")
    assert code == 0 and "block_max = shared[0][0]" in learner.read_text()
    saved = list((root / ".workbook/backups").glob("*-p18-reveal-apply/op/softmax.mojo"))
    assert len(saved) == 1 and "# my notes" in saved[0].read_text()


def test_reset_restores_the_skeleton_and_backups_can_undo_it(root, capsys):
    learner = root / "puzzles/p18/op/softmax.mojo"
    skeleton = learner.read_text()
    learner.write_text(skeleton + "\n# half done\n")
    assert invoke(capsys, "reset", "p18", "--yes")[0] == 0
    assert learner.read_text() == skeleton
    assert "reset" in invoke(capsys, "backups", "p18")[1]
    from workbook.course.backups import all_backups

    (made,) = all_backups("p18")
    assert invoke(capsys, "restore", made.id[:17])[0] == 0  # a unique prefix is enough
    assert learner.read_text().endswith("# half done\n")


def test_a_deleted_learner_file_is_bad_input_and_reset_brings_it_back(root, capsys):
    learner = root / "puzzles/p18/op/softmax.mojo"
    learner.unlink()
    code, _, err = invoke(capsys, "run", "p18")
    assert code == exitcodes.BAD_INPUT and "workbook reset p18" in " ".join(err.split())
    assert invoke(capsys, "check", "p18")[0] == exitcodes.BAD_INPUT
    assert invoke(capsys, "reset", "p18", "--yes")[0] == 0 and learner.exists()


def test_doctor_reports_toolchain_gpu_and_simulator(root, capsys):
    code, out, _ = invoke(capsys, "doctor")
    assert "mojo" in out and "1.2.0" in out and "GPU" in out and "simulator" in out
    assert code in (exitcodes.OK, exitcodes.TOOLCHAIN)


def test_korean_help_text():
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBOOK_LANG", "LANG", "LC_ALL")}
    out = subprocess.run([sys.executable, "-m", "workbook", "--lang", "ko", "--help"],
                         capture_output=True, text=True, env={**env, "COLUMNS": "100"}, cwd=REPO)
    assert "퍼즐" in out.stdout


def test_author_verify_passes_on_a_clean_checkout(root, capsys):
    code, out, _ = invoke(capsys, "author", "verify", "p01", "p18")
    assert code == 0, out


def test_check_all_on_untouched_skeletons_is_not_started(root, capsys):
    code, out, _ = invoke(capsys, "check", "--all", "--json")
    doc = json.loads(out)
    from workbook.course import catalog

    # p09, p10: their skeletons are buggy code that runs; p32: right values, bank conflicts
    debugging = {p.id for p in catalog.all_puzzles() if p.skeleton_runs}
    assert code == exitcodes.FAILED and debugging == {"p09", "p10", "p32"}
    assert {p["status"] for p in doc["puzzles"] if p["id"] not in debugging} == {"not_started"}
    assert {p["status"] for p in doc["puzzles"] if p["id"] in debugging} == {"fail"}
    for p in doc["puzzles"]:
        if p["id"] in debugging:
            continue
        for part in p["parts"]:
            for device in part["kernels"].values():
                assert device["status"] == "not_run" and device["reason"] == "the skeleton is untouched"


def test_views_fit_in_80_columns(root, monkeypatch):
    """Every line of `list`, `check` and the run report fits 80 columns, titles on one line."""
    from rich.console import Console

    from workbook.cli.commands import list_
    from workbook.cli.commands.common import Context
    from workbook.core.results import DeviceResult, PartResult, PuzzleResult, Status
    from workbook.view import report

    console = Console(width=80, record=True, force_terminal=False)
    list_.main(Context(out=console))
    results = [PuzzleResult(p, "A very long title that would wrap over several lines of a narrow table", s)
               for p, s in (("p01", Status.PASS), ("p18", Status.COMPILE_ERROR))]
    for r in results:
        r.parts.append(PartResult("x", r.status, {"cpu": DeviceResult("cpu", Status.PASS),
                                                  "sim": DeviceResult("sim", Status.FAIL),
                                                  "gpu": DeviceResult("gpu", Status.COMPILED)}, 0, 0))
    console.print(report.summary_table(results, {}))
    text = console.export_text()
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    assert sum("A very long title" in line for line in text.splitlines()) == 2  # one line each


@pytest.mark.slow
def test_check_json_shape_and_one_part(root, capsys):
    code, out, _ = invoke(capsys, "check", "p01", "p27.broadcast", "--solutions", "--json", "--seed", "1")
    doc = json.loads(out)
    assert code == 0, out
    p01, p27 = doc["puzzles"]
    assert p01["id"] == "p01" and p01["status"] == "pass"
    assert [part["id"] for part in p27["parts"]] == ["broadcast"]  # the part named in the id, only
    assert "startup" not in p01["stages"] and "startup" not in p27["stages"]  # `run`'s alone: one process, one puzzle
    if not has_gpu():
        assert p01["devices"] == {"sim": "pass", "gpu": "compiled"}
        assert p01["parts"][0]["kernels"]["sim"]["cases"]
        # The simulator's verdict counts; what was not run is said, not hidden.
        assert p27["status"] == "pass" and p27["devices"] == {"sim": "pass", "gpu": "compiled"}
        assert p27["parts"][0]["kernels"]["gpu"]["reason"]
        assert p27["parts"][0]["graph"]["gpu"]["status"] == "not_run"


@pytest.mark.slow
def test_run_reports_a_wrong_kernel_with_an_error_map_and_who_wrote_what(root, capsys):
    put_wrong(root, "p01", "writes_next")
    code, out, _ = invoke(capsys, "run", "p01", "--seed", "3", "--device", "sim")
    assert code == exitcodes.FAILED
    assert "X wrong" in out and "? NaN/Inf" in out and "Who wrote each element" in out
    assert "wrote output[4], outside `output` (4 elements)" in " ".join(out.split())
    from workbook.course import state

    assert state.load().of("p01").last_run is None  # a run limited to one device is no verdict on the puzzle


@pytest.mark.slow
def test_run_records_progress_and_run_goes_on_to_the_next(root, capsys):
    put_solution(root, "p01")
    code, out, _ = invoke(capsys, "run", "p01", "--json", "--seed", "2")
    assert code == 0
    doc = json.loads(out)
    assert doc["status"] == "pass" and doc["schema"] == exitcodes.JSON_SCHEMA
    # The process's seconds before the engine began, first of the stages (benchmarks/bench.py shows them).
    assert list(doc["stages"])[0] == "startup" and doc["stages"]["startup"] >= 0
    _, listing, _ = invoke(capsys, "list")
    assert ("✔ done" if has_gpu() else "◐ passed on the simulator") in listing
    code, nxt, _ = invoke(capsys, "run", "--json", "--quick")
    assert json.loads(nxt)["id"] != "p01"


def test_reset_writes_the_skeleton_in_the_learners_language_and_it_is_still_not_started(root, capsys):
    learner = root / "puzzles/p04/map_2d.mojo"
    assert invoke(capsys, "--lang", "ko", "reset", "p04", "--yes")[0] == 0
    text = learner.read_text()
    assert "# FILL IN: 이 스레드의 행과 열을 구하세요" in text and "# 퍼즐 4:" in text and "#ko" not in text
    assert "# 가로 스레드 수" in text  # trailing comments too
    code, out, _ = invoke(capsys, "run", "p04", "--json")  # a Korean skeleton is a skeleton: nothing compiles
    assert json.loads(out)["status"] == "not_started"
    _, shown, _ = invoke(capsys, "--lang", "ko", "reveal", "p04", "--yes")
    assert "output[row, col] = a[row, col] * 10" in shown and "퍼즐 4:" in shown and "#ko" not in shown


def workbook_process(*args: str, lang_env: str | None = None, columns: int = 80, cwd=REPO, extra_env=None):
    """The real command in a fresh process: help texts are chosen at import, by language."""
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBOOK_LANG", "LANG", "LC_ALL", "LC_MESSAGES")}
    env.update({"COLUMNS": str(columns), "PYTHONPATH": PYTHONPATH, **(extra_env or {})})
    if lang_env is not None:
        env["WORKBOOK_LANG"] = lang_env
    return subprocess.run([sys.executable, "-m", "workbook", *args], capture_output=True, text=True, env=env, cwd=cwd)


HELP_KEYS = {(): ["help.app", "help.opt.lang", "help.list", "help.run", "help.watch", "help.check"],
             ("run",): ["help.run", "help.opt.seed", "help.opt.sanitize", "help.opt.quick", "help.opt.device"],
             ("check",): ["help.check", "help.arg.puzzles", "help.opt.all", "help.opt.solutions"],
             ("watch",): ["help.watch", "help.opt.sanitize", "help.opt.device", "help.opt.quick"]}


@pytest.mark.parametrize("command", list(HELP_KEYS), ids=lambda c: " ".join(c) or "workbook")
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_help_wraps_at_80_columns_without_cutting_a_word_in_the_learners_words(command, lang):
    from workbook.core import i18n

    done = workbook_process("--lang", lang, *command, "--help")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and max(cell_len(line) for line in lines) <= 80
    assert "…" not in done.stdout
    shown = {word.strip("│") for word in done.stdout.split()}
    for key in HELP_KEYS[command]:
        for word in i18n.t(key, lang).split():
            assert word in shown, (key, word)
    usage, options, help_line = (i18n.t(k, lang) for k in ("help.usage", "help.options", "help.opt.help"))
    assert usage in done.stdout and options in done.stdout and help_line in " ".join(done.stdout.split())
    if lang == "ko":
        for english in ("Usage", "Options", "Show this message", "Arguments", "Commands"):
            assert english not in done.stdout


def test_workbook_alone_is_the_help_in_any_language_not_an_empty_error():
    for args in ((), ("--lang", "ko")):
        done = workbook_process(*args)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert ("사용법:" if args else "Usage:") in done.stdout


@pytest.mark.parametrize("args,said", [
    (("rn",), "'rn'이라는 명령은 없습니다. 'run'을 뜻했나요?"),
    (("run", "--sed"), "--sed 옵션은 없습니다. --seed를 뜻했나요?"),
    (("show",), "PUZZLE이 빠졌습니다"),
    (("run", "--seed", "abc"), "--seed 옵션에는 정수가 필요합니다"),
])
def test_usage_errors_in_korean_name_the_help_of_that_command(args, said):
    done = workbook_process("--lang", "ko", *args)
    err = " ".join(done.stderr.split())
    assert done.returncode == exitcodes.BAD_INPUT and said in err, err
    assert f"`workbook {args[0]} --help`" in err or args == ("rn",)
    assert "No such" not in err and "Missing" not in err


def test_a_required_argument_says_so_in_korean():
    done = workbook_process("--lang", "ko", "show", "--help")
    assert "[필수]" in done.stdout and "[required]" not in done.stdout


def test_lang_after_the_command_works_as_the_readme_says(root, capsys):
    code, out, _ = invoke(capsys, "list", "--lang", "ko")
    assert code == 0 and "1장" in out
    code, out, _ = invoke(capsys, "list", "--lang=en")
    assert code == 0 and "Chapter 1" in out


def test_an_unknown_language_setting_is_said_not_silently_english(root):
    done = workbook_process("list", lang_env="kr", extra_env={"WORKBOOK_ROOT": str(root)})
    assert done.returncode == 0
    assert "WORKBOOK_LANG=kr" in done.stderr and "ko" in done.stderr
    assert workbook_process("list", lang_env="ko_KR.UTF-8", extra_env={"WORKBOOK_ROOT": str(root)}).stderr == ""


def test_all_hints_ask_first_and_a_hint_seen_can_be_read_again(root, capsys):
    from workbook.course import catalog, state

    hints = catalog.load("p12").hints
    code, out, err = invoke(capsys, "hint", "p12", "--all")  # no terminal to ask: nothing shown, and said
    assert code == exitcodes.BAD_INPUT and "Hint 1 of" not in out and "--yes" in err
    assert state.load().of("p12").hints_shown == 0
    code, _, err = invoke(capsys, "hint", "p12", "2")  # not seen yet: hint 1 comes first
    assert code == exitcodes.BAD_INPUT and "hint 1" in " ".join(err.split())
    invoke(capsys, "hint", "p12")
    invoke(capsys, "hint", "p12")
    code, again, _ = invoke(capsys, "hint", "p12", "1")
    assert code == 0 and f"Hint 1 of {len(hints)}" in again and "Hint 2 of" not in again
    assert hints[0]["en"].split()[0] in again and state.load().of("p12").hints_shown == 2  # re-reading counts nothing
    assert invoke(capsys, "hint", "p12", str(len(hints) + 1))[0] == exitcodes.BAD_INPUT
    code, everything, _ = invoke(capsys, "hint", "p12", "--all", "--yes")
    assert code == 0 and f"Hint {len(hints)} of {len(hints)}" in everything
    code, again, _ = invoke(capsys, "hint", "p12", "--all")  # all seen: nothing left to spoil, no question
    assert code == 0 and f"Hint {len(hints)} of {len(hints)}" in again


def test_reveal_apply_leaves_a_trace_in_progress(root, capsys):
    from workbook.course import state

    assert invoke(capsys, "reveal", "p18", "--yes", "--apply")[0] == 0
    assert state.load().of("p18").solution_applied
    _, listing, _ = invoke(capsys, "list")
    line = next(line for line in listing.splitlines() if "p18" in line)
    assert "solution applied" in line
    doc = json.loads(invoke(capsys, "list", "--json")[1])
    assert next(p for p in doc["puzzles"] if p["id"] == "p18")["solution_applied"]


def test_progress_counts_gpu_and_simulator_passes_apart(root, capsys):
    from workbook.course import catalog, state

    total = len(catalog.all_puzzles())
    chapter = sum(p.chapter == 1 for p in catalog.all_puzzles())
    state.remember("p01", "pass", {"gpu": "compiled", "sim": "pass"})
    state.remember("p02", "pass", {"gpu": "pass", "sim": "pass"})
    _, listing, _ = invoke(capsys, "list")
    assert f"passed on a GPU: 1 of {total}" in listing and f"passed on the simulator: 1 of {total}" in listing
    assert "half" not in listing and f"✔1 ◐1 /{chapter}" in listing
    doc = json.loads(invoke(capsys, "list", "--json")[1])
    assert doc["passed"] == {"gpu": 1, "sim": 1, "total": total}


def test_the_skeleton_message_names_the_file_and_says_show_once(root, capsys):
    code, out, _ = invoke(capsys, "run", "p01")
    said = " ".join(out.split())
    assert code == exitcodes.FAILED and "puzzles/p01/map.mojo is still the skeleton" in said
    assert said.count("workbook show p01") == 1


def test_python_without_the_workbooks_packages_says_so():
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    done = subprocess.run([sys.executable, "-S", "-m", "workbook", "list"], capture_output=True, text=True, env=env,
                          cwd=REPO)  # -S: no site-packages, as from a Python outside the virtual environment
    assert done.returncode == exitcodes.TOOLCHAIN and "Traceback" not in done.stderr
    assert "'typer'" in done.stderr and sys.executable in done.stderr and "pip install" in done.stderr


def test_show_pages_a_long_text_on_a_terminal_only(root, monkeypatch):
    from rich.console import Console

    from workbook.cli.commands import show
    from workbook.cli.commands.common import Context

    paged = []
    monkeypatch.setattr(Console, "pager", lambda self, **kw: paged.append(kw) or __import__("contextlib").nullcontext())
    tall = Console(force_terminal=True, width=80, height=24, file=io.StringIO())
    assert show.main(Context(out=tall), puzzle="p18") == 0 and paged == [{"styles": True}]
    assert "puzzles/p18/op/softmax.mojo" in tall.file.getvalue()
    piped = Console(force_terminal=False, width=80, height=24, file=io.StringIO())
    assert show.main(Context(out=piped), puzzle="p18") == 0 and len(paged) == 1  # a pipe: no pager
    huge = Console(force_terminal=True, width=80, height=500, file=io.StringIO())
    assert show.main(Context(out=huge), puzzle="p01") == 0 and len(paged) == 1  # it fits: no pager


def test_help_shows_option_values_with_a_typer_that_has_no_words_of_its_own_for_them(capsys, monkeypatch):
    """Typer 0.27 (within the range pyproject.toml allows) has no display_type_rich:
    --help crashed there with an internal error. Click's metavar stands in."""
    import typer.core

    for cls in typer.core.TyperOption.__mro__:
        if "display_type_rich" in vars(cls):
            monkeypatch.delattr(cls, "display_type_rich")
    assert not hasattr(typer.core.TyperOption, "display_type_rich")
    with pytest.raises(SystemExit) as exited:
        cli.main(["--lang", "en", "run", "--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0 and "--device" in out and "--seed" in out
