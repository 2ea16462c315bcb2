"""Whatever the input, a verdict or a clean error: never a traceback, never "the workbook
failed" (exit 4), and under --json exactly one JSON document whose error (if any) carries
the exit code the command exits with.

Hypothesis draws the inputs: puzzle ids (numbers of any length, paths, control characters,
unicode), options (seeds out of range, unknown devices, parts), the progress file (any JSON,
any bytes) and the learner's file (any bytes, a folder, a link, nothing). Compiles are cut
short (WORKBOOK_COMPILE_TIMEOUT), so a file that is text gets its verdict in a moment: a
compile that ran out of time is a verdict too."""

from __future__ import annotations

import json
import shutil

import pytest
import scope
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from workbook.cli import app as cli
from workbook.core import exitcodes

OTHER_IDS = st.one_of(
    st.sampled_from(["p01", "1", "P01", "p01.map", "p27.broadcast", "p01.nope", "p99", "puzzles/p01", "p01/map.mojo",
                     "", " ", "..", "/etc/passwd", "p-1", "p1e3", "p01\x1b]0;x\x07"]),
    st.text(min_size=0, max_size=30),
    st.integers(min_value=0, max_value=10**60).map(str),
    st.just("9" * 5000),
)
# Mostly a real puzzle, so that the learner's file and the options matter; often anything at all.
IDS = st.integers(0, 9).flatmap(lambda n: st.just("p01") if n < 6 else OTHER_IDS)
SEEDS = st.one_of(st.none(), st.none(), st.integers(min_value=-(2**70), max_value=2**70).map(str),
                  st.sampled_from(["nan", "1.5", "", "0x10"]))
DEVICES = st.lists(st.sampled_from(["cpu", "gpu", "sim", "tpu", "", "SIM"]), max_size=2)
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=12)
STATES = st.one_of(
    st.none(),
    st.binary(max_size=64),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["p01", "p02", "x"]), JSON_VALUES, max_size=3).map(
        lambda p: json.dumps({"version": 1, "puzzles": p}).encode()),
)
LEARNER = st.one_of(
    st.sampled_from(["skeleton", "missing", "folder", "link", "solution"]),
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
)
COMMANDS = st.sampled_from(["run", "check", "hint", "show", "list", "reset", "reveal"])


@pytest.fixture
def workbook_folder(root, monkeypatch):
    monkeypatch.setenv("WORKBOOK_COMPILE_TIMEOUT", "0.05")
    skeleton = (root / "puzzles/p01/map.mojo").read_bytes()
    return root, skeleton


def _set_up(root, skeleton: bytes, state: bytes | None, learner) -> None:
    folder = root / ".workbook"
    shutil.rmtree(folder, ignore_errors=True)
    if state is not None:
        folder.mkdir()
        (folder / "state.json").write_bytes(state)
    path = root / "puzzles/p01/map.mojo"
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if learner == "skeleton":
        path.write_bytes(skeleton)
    elif learner == "solution":
        path.write_bytes((root / "solutions/p01/map.mojo").read_bytes())
    elif learner == "folder":
        path.mkdir()
    elif learner == "link":
        path.symlink_to("/etc/hostname")
    elif isinstance(learner, bytes):
        path.write_bytes(learner)


@settings(max_examples=60 if scope.ci() else 150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=COMMANDS, pid=IDS, seed=SEEDS, devices=DEVICES, state=STATES, learner=LEARNER,
       as_json=st.booleans(), yes=st.booleans())
def test_every_input_ends_in_a_verdict_or_a_clean_error(workbook_folder, capsys, command, pid, seed, devices, state,
                                                        learner, as_json, yes):
    root, skeleton = workbook_folder
    _set_up(root, skeleton, state, learner)
    args = [command] if command == "list" else [command, pid]
    if command in ("run", "check"):
        args += (["--seed", seed] if seed is not None else []) + [a for d in devices for a in ("--device", d)]
    if command in ("reset", "reveal") and yes:
        args.append("--yes")
    json_ok = command in ("run", "check", "list")
    if as_json and json_ok:
        args.append("--json")
    with pytest.raises(SystemExit) as exited:
        cli.main(args)
    code = exited.value.code
    out, err = capsys.readouterr()
    event(f"{command} exit {code}")
    assert code in (exitcodes.OK, exitcodes.FAILED, exitcodes.BAD_INPUT), (args, code, out[-2000:], err[-2000:])
    assert "Traceback" not in out + err
    if as_json and json_ok:
        doc = json.loads(out)  # one document, and nothing else on stdout
        assert doc["schema"] == exitcodes.JSON_SCHEMA
        if "error" in doc:
            assert doc["error"]["exit_code"] == code != exitcodes.OK
        else:
            assert code in (exitcodes.OK, exitcodes.FAILED)
    elif code == exitcodes.BAD_INPUT:
        assert "Error:" in err
