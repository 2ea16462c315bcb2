"""Issue 17, items 3, 4, 6 and 7: every bad input, fault and hostile file the issue found
ends in a clear message and its exit code (2 for bad input), with valid --json, never
"the workbook failed" (4) or a traceback; and nothing is read or written through a link.

Each test here failed on the code before the fix (most with exit 4, some with a silent
exit 0). Where a fault must be real (a read-only folder, a full disk), bubblewrap mounts
one: a read-only bind, a tmpfs of a few kilobytes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PYTHONPATH, REPO, put_solution

from workbook.child import sandbox
from workbook.cli import app as cli
from workbook.core import exitcodes
from workbook.course import state

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap mounts the faults")


def invoke(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


def json_error(capsys, *args: str) -> tuple[int, dict]:
    code, out, err = invoke(capsys, *args, "--json")
    assert "Traceback" not in out + err
    doc = json.loads(out)
    assert doc["schema"] == exitcodes.JSON_SCHEMA
    return code, doc


def workbook(root: Path, *args: str, env: dict[str, str | None] | None = None, prefix: list[str] | None = None,
             stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    """The real command in a process of its own (for what a process-wide setting changes)."""
    environment = {**os.environ, "WORKBOOK_ROOT": str(root), "PYTHONPATH": PYTHONPATH, **(env or {})}
    environment = {name: value for name, value in environment.items() if value is not None}  # None: unset
    return subprocess.run([*(prefix or []), sys.executable, "-m", "workbook", *args], capture_output=True,
                          text=True, env=environment, cwd=REPO, timeout=300, stdin=stdin)


def in_bwrap(*mounts: str, first: str = "") -> list[str]:
    """A command prefix: the whole filesystem as it is, with these mounts on top (and a shell
    command run in there `first`)."""
    shell = ["sh", "-c", first + ' exec "$@"', "sh"] if first else []
    return [sandbox.bwrap(), "--dev-bind", "/", "/", *mounts, "--", *shell]


# --- item 6: a learner file that is not a text file --------------------------------------------


@pytest.mark.parametrize("kind, key", [("folder", "learner.not_file"), ("binary", "learner.binary"),
                                       ("latin-1", "learner.not_utf8"), ("huge", "learner.too_big")])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_learner_file_that_is_not_text_is_bad_input(root, capsys, kind, key, command):
    learner = root / "puzzles/p01/map.mojo"
    learner.unlink()
    if kind == "folder":
        learner.mkdir()
    elif kind == "binary":
        learner.write_bytes(b"def add_ten():\n\0\0\0\x01")
    elif kind == "latin-1":
        learner.write_bytes("# café\n".encode() + "# naïve\n".encode("latin-1"))
    else:
        learner.write_bytes(b"#" * (2 << 20))
    code, doc = json_error(capsys, command, "p01")
    assert code == exitcodes.BAD_INPUT and doc["error"]["key"] == key
    assert "puzzles/p01/map.mojo" in doc["error"]["message"]
    if kind == "latin-1":
        assert "line 2" in doc["error"]["message"]


def test_a_negative_seed_is_bad_input(root, capsys):
    put_solution(root, "p01")
    code, doc = json_error(capsys, "run", "p01", "--seed", "-1")
    assert code == exitcodes.BAD_INPUT and "--seed" in doc["error"]["message"]


@pytest.mark.parametrize("command", [("show",), ("run",), ("hint",), ("check",)])
def test_a_5000_digit_id_is_an_unknown_puzzle(root, capsys, command):
    code, _, err = invoke(capsys, *command, "1" * 5000)
    assert code == exitcodes.BAD_INPUT and "No puzzle" in err and "Traceback" not in err
    assert len(err) < 400  # the id is not printed in full


@pytest.mark.parametrize("name, value", [("WORKBOOK_RUN_TIMEOUT", "nan"), ("WORKBOOK_RUN_TIMEOUT", "-5"),
                                         ("WORKBOOK_COMPILE_TIMEOUT", "inf"), ("WORKBOOK_LOAD_TIMEOUT", "soon"),
                                         ("WORKBOOK_MEMORY_LIMIT_MB", "1.5"), ("WORKBOOK_GPU_TARGET", "sm 90; x"),
                                         ("WORKBOOK_GRAPHS_EARLY", "yes"), ("WORKBOOK_GRAPH_SHARDS", "0")])
def test_a_bad_setting_is_named_before_anything_runs(root, capsys, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    code, doc = json_error(capsys, "check", "p01")
    assert code == exitcodes.BAD_INPUT and name in doc["error"]["message"]
    code, out, _ = invoke(capsys, "doctor", "--json")
    assert code == exitcodes.TOOLCHAIN and any(name in p for p in json.loads(out)["problems"])


def test_a_home_that_cannot_be_written_still_gives_json(root, tmp_path):
    """The cache falls back to a folder of this user's own; doctor (which names it) works."""
    env = {"HOME": "/dev/null", "WORKBOOK_CACHE": None, "XDG_CACHE_HOME": None}
    done = workbook(root, "doctor", "--json", env=env)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    doc = json.loads(done.stdout)
    assert done.returncode in (exitcodes.OK, exitcodes.TOOLCHAIN) and doc["schema"] == exitcodes.JSON_SCHEMA


def test_the_crash_log_is_written_without_a_home_or_a_workbook_folder(root, capsys, monkeypatch):
    """The crash logger itself failed (a traceback, non-JSON output) when no folder of the
    home or the workbook could be written; it falls back to the temp folder."""
    from workbook.cli.commands import list_

    monkeypatch.setenv("HOME", "/dev/null")
    monkeypatch.delenv("WORKBOOK_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    (root / ".workbook").write_text("not a folder")
    monkeypatch.setattr(list_, "main", lambda ctx: 1 / 0)
    code, doc = json_error(capsys, "list")
    assert code == exitcodes.INTERNAL and doc["error"]["key"] == "error.internal"
    assert Path(doc["error"]["log"]).is_file() and "ZeroDivisionError" in Path(doc["error"]["log"]).read_text()


def test_two_crashes_in_one_second_keep_two_logs(root, capsys, monkeypatch):
    from workbook.cli.commands import list_

    monkeypatch.setattr(list_, "main", lambda ctx: 1 / 0)
    logs = {json_error(capsys, "list")[1]["error"]["log"] for _ in range(3)}
    assert len(logs) == 3 and all(Path(p).is_file() for p in logs)


def test_an_output_that_is_not_utf8_gets_the_report_anyway(root):
    env = {"PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C"}
    listed = workbook(root, "list", env=env)
    assert listed.returncode == exitcodes.OK, listed.stderr
    assert "Traceback" not in listed.stderr and "p01" in listed.stdout
    korean = workbook(root, "--lang", "ko", "list", "--json", env=env)
    assert korean.returncode == exitcodes.OK and json.loads(korean.stdout)["puzzles"][0]["title"]
    assert "\\u" in korean.stdout or korean.stdout.isascii()


@needs_bwrap
def test_a_full_disk_is_said_and_nothing_is_half_done(root):
    """.workbook/ on a tmpfs of 16 KB, full: a hint is still shown (its count not saved, and
    said); a reset refuses before it changes anything (its backup could not be made)."""
    learner = root / "puzzles/p01/map.mojo"
    learner.write_text(learner.read_text() + "# mine\n")
    fill = f"head -c 1000000 /dev/zero > {root}/.workbook/fill 2>/dev/null;"
    prefix = in_bwrap("--size", "16384", "--tmpfs", str(root / ".workbook"), first=fill)
    hint = workbook(root, "hint", "p01", prefix=prefix)
    assert hint.returncode == exitcodes.OK, hint.stderr
    assert "Hint 1 of" in hint.stdout and "could not be saved" in hint.stderr
    reset = workbook(root, "reset", "p01", "--yes", prefix=prefix)
    assert reset.returncode == exitcodes.BAD_INPUT, reset.stdout + reset.stderr
    assert "Traceback" not in reset.stderr and "No space left" in reset.stderr
    assert learner.read_text().endswith("# mine\n")


# --- item 4: progress under concurrency, a read-only .workbook/, entries of the wrong type -------


def test_concurrent_hints_keep_every_count(root):
    """18 `hint` commands at once kept 4 counts: each read, changed and replaced the file."""
    hints = root / "puzzles/p01/hints.toml"
    hints.write_text(hints.read_text() + "".join(f'\n[[hints]]\nen = "extra {i}"\nko = "추가 {i}"\n'
                                                 for i in range(20)))
    env = {**os.environ, "WORKBOOK_ROOT": str(root), "PYTHONPATH": PYTHONPATH}
    runs = [subprocess.Popen([sys.executable, "-m", "workbook", "hint", "p01"], env=env, cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(18)]
    outputs = [r.communicate(timeout=120) for r in runs]
    assert all(r.returncode == 0 for r in runs), outputs
    assert state.load().of("p01").hints_shown == 18
    numbers = sorted(int(out.split("Hint ")[1].split()[0]) for out, _ in outputs)
    assert numbers == list(range(1, 19))  # each saw the next hint, none the same one twice


@needs_bwrap
def test_a_read_only_workbook_folder_keeps_the_verdict(root):
    (root / ".workbook").mkdir()
    done = workbook(root, "check", "p01", "--json", prefix=in_bwrap("--ro-bind", str(root / ".workbook"),
                                                                    str(root / ".workbook")))
    doc = json.loads(done.stdout)
    assert done.returncode == exitcodes.FAILED, done.stderr  # the untouched skeleton: not started
    assert doc["puzzles"][0]["status"] == "not_started"
    assert [w["key"] for w in doc["warnings"]] == ["state.not_saved"]


def test_state_entries_of_the_wrong_type_are_reset_not_fatal(root, capsys):
    state.state_file().parent.mkdir(parents=True, exist_ok=True)
    state.state_file().write_text(json.dumps({"version": 1, "puzzles": {
        "p01": {"status": 5, "devices": ["gpu"], "hints_shown": "3", "last_run": 7, "passed_at": None},
        "p02": "garbage",
        "p03": {"status": "pass", "devices": {"sim": "pass", "gpu": "compiled"}, "hints_shown": 1,
                "last_run": "2026-01-01", "passed_at": "2026-01-01", "unknown": True}}}))
    code, out, err = invoke(capsys, "list")
    assert code == 0 and "Traceback" not in err and "were reset: p01, p02." in " ".join(err.split())
    code, out, _ = invoke(capsys, "list", "--json")
    rows = {r["id"]: r for r in json.loads(out)["puzzles"]}
    assert code == 0 and rows["p01"]["progress"] == "not_started" and rows["p03"]["progress"] == "passed_sim"
    code, out, _ = invoke(capsys, "hint", "p01")
    assert code == 0 and "Hint 1 of" in out
    assert state.load().of("p01").hints_shown == 1 and state.load().repaired == []  # saved clean


# --- item 3: links, paths out of the puzzle, terminal escapes -------------------------------------


def test_a_learner_file_that_links_elsewhere_is_never_read(root, capsys):
    learner = root / "puzzles/p01/map.mojo"
    learner.unlink()
    learner.symlink_to("/etc/passwd")
    for command in ("run", "check"):
        code, doc = json_error(capsys, command, "p01")
        assert code == exitcodes.BAD_INPUT and doc["error"]["key"] == "learner.symlink"
        assert "root:" not in json.dumps(doc)


def test_reset_replaces_a_link_and_never_writes_through_it(root, capsys, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workbook's\n")
    learner = root / "puzzles/p01/map.mojo"
    learner.unlink()
    learner.symlink_to(outside)
    code, out, err = invoke(capsys, "reset", "p01", "--yes")
    assert code == 0, err
    assert outside.read_text() == "not the workbook's\n"
    assert not learner.is_symlink() and "FILL IN" in learner.read_text()


def test_reset_never_writes_through_a_folder_that_links_out(root, capsys, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "softmax.mojo").write_text("not the workbook's\n")
    op = root / "puzzles/p18/op"
    shutil.copyfile(op / "__init__.mojo", outside / "__init__.mojo")
    shutil.rmtree(op)
    op.symlink_to(outside, target_is_directory=True)
    code, _, err = invoke(capsys, "reset", "p18", "--yes")
    assert code == exitcodes.BAD_INPUT and "Nothing was changed" in " ".join(err.split())
    assert (outside / "softmax.mojo").read_text() == "not the workbook's\n"


@pytest.mark.parametrize("name", ["../../../outside.txt", "/OUTSIDE"])
def test_a_manifest_naming_a_file_outside_its_puzzle_is_refused(root, capsys, tmp_path, name):
    outside = tmp_path / "outside.txt"
    outside.write_text("the grader's secret\n")
    name = name.replace("/OUTSIDE", str(outside))
    manifest = root / "puzzles/p01/puzzle.toml"
    manifest.write_text(manifest.read_text().replace('edit = ["map.mojo"]', f'edit = ["map.mojo", "{name}"]'))
    for args in (("reveal", "p01", "--yes"), ("reset", "p01", "--yes"), ("show", "p01")):
        code, out, err = invoke(capsys, *args)
        assert code == exitcodes.BAD_INPUT and "inside the puzzle folder" in " ".join(err.split())
        assert "the grader's secret" not in out + err
    assert outside.read_text() == "the grader's secret\n"
    assert not list(root.glob(".workbook/backups/*"))


def test_a_tolerance_that_passes_anything_is_refused(root, capsys):
    manifest = root / "puzzles/p01/puzzle.toml"
    manifest.write_text(manifest.read_text().replace("atol = 0.0", "atol = 1e30"))
    code, doc = json_error(capsys, "check", "p01")
    assert code == exitcodes.BAD_INPUT and "tolerance" in doc["error"]["message"]


HOSTILE_TEXT = "\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b31m"
IN_TOML = "".join(f"\\u{ord(c):04x}" if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F else c for c in HOSTILE_TEXT)


def test_escape_sequences_in_titles_texts_and_hints_never_reach_the_terminal(root, capsys):
    manifest = root / "puzzles/p01/puzzle.toml"
    manifest.write_text(manifest.read_text().replace('title.en = "Map: one thread for each element"',
                                                     f'title.en = "Map{IN_TOML}"'))
    text = root / "puzzles/p01/text.en.md"
    text.write_text(text.read_text() + "\n" + HOSTILE_TEXT + "\n")
    hints = root / "puzzles/p01/hints.toml"
    hints.write_text(hints.read_text().replace("Each thread does one element",
                                               "Each" + IN_TOML + " thread"))
    for args in (("show", "p01"), ("list",), ("hint", "p01"), ("run", "p01")):
        code, out, err = invoke(capsys, *args)
        assert code in (0, 1), err
        assert "\x1b" not in out + err and "\x9b" not in out + err and "\x07" not in out + err
    assert "␛]0;pwned" in invoke(capsys, "show", "p01")[1]  # shown, as text
    code, out, _ = invoke(capsys, "list", "--json")
    assert "\x1b" not in out and "\x9b" not in out and json.loads(out)["puzzles"][0]["title"].startswith("Map\x1b")


def test_a_real_terminal_gets_colour_but_no_sequence_from_content():
    import io

    from rich.text import Text

    from workbook.view import terminal

    buffer = io.StringIO()
    console = terminal.console(file=buffer, force_terminal=True, width=80)
    console.print(Text(HOSTILE_TEXT, style="bold"), "[bold]fine[/]")
    shown = buffer.getvalue()
    assert "\x1b[1m" in shown  # Rich's own styling
    assert "[bold]fine[/]" in shown  # and no markup read in content: brackets are text
    assert "\x1b]" not in shown and "\x1b[2J" not in shown and "\x9b" not in shown and "␛" in shown


# --- item 7: quieter wrongs -----------------------------------------------------------------------


def test_check_all_that_finds_no_puzzle_fails(root, capsys):
    shutil.rmtree(root / "puzzles")
    (root / "puzzles").mkdir()
    code, doc = json_error(capsys, "check", "--all")
    assert code == exitcodes.BAD_INPUT and doc["error"]["key"] == "check.no_puzzles"


@pytest.mark.parametrize("command", ["reset", "reveal"])
def test_without_a_terminal_and_without_yes_nothing_happens_and_it_fails(root, capsys, command):
    learner = root / "puzzles/p01/map.mojo"
    learner.write_text(learner.read_text() + "# mine\n")
    code, out, err = invoke(capsys, command, "p01")
    assert code == exitcodes.BAD_INPUT and "--yes" in err
    assert learner.read_text().endswith("# mine\n") and "output[i] = a[i] + 10" not in out


def test_reset_of_a_file_made_read_only_changes_nothing_and_says_so(root, capsys):
    learner = root / "puzzles/p01/map.mojo"
    learner.write_text(learner.read_text() + "# mine\n")
    learner.chmod(0o444)
    code, _, err = invoke(capsys, "reset", "p01", "--yes")
    assert code == exitcodes.BAD_INPUT and "Nothing was changed" in " ".join(err.split())
    assert learner.read_text().endswith("# mine\n") and not list(root.glob(".workbook/backups/*"))


@needs_bwrap
def test_reset_in_a_read_only_folder_changes_nothing_and_says_so(root):
    learner = root / "puzzles/p01/map.mojo"
    learner.write_text(learner.read_text() + "# mine\n")
    folder = str(root / "puzzles/p01")
    done = workbook(root, "reset", "p01", "--yes", prefix=in_bwrap("--ro-bind", folder, folder))
    assert done.returncode == exitcodes.BAD_INPUT, done.stdout + done.stderr
    assert "Nothing was changed" in " ".join(done.stderr.split()) and "Traceback" not in done.stderr
    assert learner.read_text().endswith("# mine\n")


@needs_bwrap
def test_a_half_done_reset_says_what_it_changed(root, tmp_path):
    """p18's second file lives on a full disk: the first is replaced, the second is not.
    The old message said "Nothing you wrote was changed"."""
    p18 = root / "puzzles/p18"
    for name in ("op/softmax.mojo", "softmax_graph.py"):
        (p18 / name).write_text((p18 / name).read_text() + "# mine\n")
    saved = tmp_path / "p18"
    shutil.copytree(p18, saved)
    top = " ".join(f"'{f}'" for f in saved.iterdir() if f.is_file())
    script = f"cp {top} {p18}/ && head -c 1000000 /dev/zero > {p18}/fill 2>/dev/null;"
    prefix = in_bwrap("--size", "65536", "--tmpfs", str(p18), "--bind", str(saved / "op"), str(p18 / "op"),
                      first=script)
    done = workbook(root, "reset", "p18", "--yes", prefix=prefix)
    message = " ".join(done.stderr.split())
    assert done.returncode == exitcodes.BAD_INPUT, done.stdout + done.stderr
    assert "Only part of it was done: op/softmax.mojo replaced, softmax_graph.py not" in message
    assert "Nothing you wrote was changed" not in message and "workbook restore" in message
    assert not (saved / "op/softmax.mojo").read_text().endswith("# mine\n")  # the first was replaced
    backups = list(root.glob(".workbook/backups/*-p18-reset/op/softmax.mojo"))
    assert len(backups) == 1 and backups[0].read_text().endswith("# mine\n")  # and kept


def test_a_gpu_target_that_is_no_name_at_all_is_a_setting_problem(root, capsys, monkeypatch):
    monkeypatch.setenv("WORKBOOK_GPU_TARGET", "$(reboot)")
    code, doc = json_error(capsys, "run", "p01")
    assert code == exitcodes.BAD_INPUT and doc["error"]["key"] == "settings.bad_gpu_target"


@pytest.mark.slow
def test_a_gpu_target_the_compiler_does_not_know_is_a_setting_problem(root, capsys, monkeypatch):
    """Well-formed but unknown: the compiler says so, and the report blamed the learner's code."""
    put_solution(root, "p01")
    monkeypatch.setenv("WORKBOOK_GPU_TARGET", "sm_bogus")
    code, doc = json_error(capsys, "run", "p01", "--device", "gpu")
    assert code == exitcodes.BAD_INPUT and doc["error"]["key"] == "settings.bad_gpu_target"
    assert "WORKBOOK_GPU_TARGET" in doc["error"]["message"]
