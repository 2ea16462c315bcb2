"""The build cache never holds one kernel under another kernel's name.

A learner's editor may save while `run` or `watch` starts; a temp cleaner may
thin out a cache entry; a crash may leave a half-written launcher source. None
of these may ever turn into a verdict on code other than what was hashed, or
blame the learner for a compile error in a file the workbook wrote."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import put_solution, put_wrong

from workbook.check import engine
from workbook.child.processes import Children
from workbook.compile import build, launcher
from workbook.core import settings
from workbook.core.results import Status
from workbook.course import catalog


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of this test's own: the user's folder in it (cachetrust.py)."""
    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"u{os.geteuid()}"


def test_a_save_while_the_cache_entry_is_written_does_not_poison_it(root, cache, monkeypatch):
    """The old code hashed the file, then read it again to fill the folder: a save in
    between left the right kernel in the wrong kernel's folder, trusted for good."""
    put_wrong(root, "p01", "forgets_ten")
    puzzle = catalog.load("p01")
    learner = puzzle.learner_files()[0]
    hashed = learner.read_bytes()
    fixed = (root / "solutions" / "p01" / "map.mojo").read_bytes()
    real_materialize = build._materialize

    def save_meanwhile(*args, **kwargs):  # the editor saves after the hash, before the folder is filled
        learner.write_bytes(fixed)
        return real_materialize(*args, **kwargs)

    monkeypatch.setattr(build, "_materialize", save_meanwhile)
    src = build.sources(puzzle)
    monkeypatch.setattr(build, "_materialize", real_materialize)
    assert (src.src / "map.mojo").read_bytes() == hashed
    # The next run sees the saved file: a different folder, holding the saved bytes.
    again = build.sources(puzzle)
    assert again.digest != src.digest and (again.src / "map.mojo").read_bytes() == fixed


def test_an_entry_holding_other_bytes_than_its_name_is_rebuilt(root, cache):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    src = build.sources(puzzle)
    (src.src / "map.mojo").write_text("# poisoned\n")  # what the old race left behind
    (src.dir / "launch").mkdir(exist_ok=True)
    (src.dir / "launch" / "stale").write_text("")
    again = build.sources(puzzle)
    assert again.dir == src.dir
    assert (again.src / "map.mojo").read_bytes() == puzzle.learner_files()[0].read_bytes()
    assert not (again.dir / "launch" / "stale").exists()  # what was built from the wrong bytes is gone


def test_an_entry_a_temp_cleaner_thinned_out_is_rebuilt(root, cache):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    src = build.sources(puzzle)
    (src.src / "map.mojo").unlink()
    again = build.sources(puzzle)
    assert (again.src / "map.mojo").exists()


@pytest.mark.slow
def test_a_damaged_launcher_source_is_rebuilt_not_blamed_on_the_learner(root, cache):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    first = engine.check_puzzle(puzzle, engine.Options(seed=1, quick=True, devices=("sim",)))
    assert first.status == Status.PASS
    # Truncate every generated launcher and drop its binary, as a crash mid-write would.
    for folder in (cache / "build").glob("p01-*/launch/*"):
        for source in folder.glob("launch_*.mojo"):
            source.write_text(source.read_text()[:200])
        for marker in folder.glob("*.ok"):
            marker.unlink()
    again = engine.check_puzzle(puzzle, engine.Options(seed=1, quick=True, devices=("sim",), cache=False))
    assert again.status == Status.PASS and not again.cached, again.diagnostics


@pytest.mark.slow
def test_a_compile_error_outside_the_learner_files_is_tried_once_more(root, cache, monkeypatch):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    src = build.sources(puzzle)
    reference = engine.load_reference(puzzle)
    part = puzzle.parts[0]
    cases = list(reference.cases(__import__("numpy").random.default_rng(1), part.id))
    plan = launcher.make_plan(puzzle, [(part, cases, [reference.expected(c, part.id) for c in cases])])
    calls = []
    real = build._compile

    def damaged_once(children, src_, args, output, tick=None, link=None, nice=0):
        calls.append(args)
        if len(calls) == 1:  # the first compile meets a damaged launcher source
            source = __import__("pathlib").Path(args[-1])
            source.write_text("this is not mojo\n")
        return real(children, src_, args, output, tick, link, nice)

    monkeypatch.setattr(build, "_compile", damaged_once)
    with Children() as children:
        built = build.launcher(children, src, plan, "host")
    assert built.ok and len(calls) == 2


def test_builds_start_the_real_compiler_not_the_wheels_script(tmp_path, monkeypatch):
    """The wheel's `mojo` is a Python script that sets four variables and becomes the
    real driver: builds start the driver itself (a Python start-up less before every
    verdict), with the same variables, the ambient ones winning as in the script."""
    from workbook.core import toolchain

    toolchain.mojo_driver.cache_clear()
    try:
        driver, env = toolchain.mojo_driver()
        assert toolchain.mojo_binary().read_bytes()[:2] == b"#!"  # the wheel's script...
        assert driver.read_bytes()[:4] == b"\x7fELF"  # ...is not what a build starts
        assert env["MODULAR_MOJO_MAX_DRIVER_PATH"] == str(driver)
        assert env["MODULAR_MOJO_MAX_IMPORT_PATH"].endswith("lib/mojo")

        monkeypatch.setenv("MODULAR_MOJO_MAX_IMPORT_PATH", str(tmp_path))
        toolchain.mojo_driver.cache_clear()
        assert "MODULAR_MOJO_MAX_IMPORT_PATH" not in toolchain.mojo_driver()[1]

        native = tmp_path / "bin" / "mojo"  # a compiler installed another way: started as it is
        native.parent.mkdir()
        native.write_bytes(b"\x7fELF\x02\x01\x01")
        monkeypatch.setattr(toolchain, "mojo_binary", lambda: native)
        toolchain.mojo_driver.cache_clear()
        assert toolchain.mojo_driver() == (native, {})
    finally:
        toolchain.mojo_driver.cache_clear()


def test_an_edit_to_a_part_of_the_runtime_is_compiled_not_served_from_the_cache(cache, tmp_path, monkeypatch):
    """wbsim.c #includes its parts (wbsim_parts/*.c): the runtime object's key and the support
    digest cover them, so an edit to a part alone builds the runtime again, never links
    the object built before it."""
    support = tmp_path / "mojo"
    shutil.copytree(settings.MOJO_SUPPORT, support)
    monkeypatch.setattr(settings, "MOJO_SUPPORT", support)
    part = support / "wbsim_parts" / "threads.c"
    digest = build.support_digest()
    with Children() as children:
        before, why = build.runtime_object(children, support / "wbsim.c")
        assert before, why
        part.write_text(part.read_text() + "\nint wbsim_part_probe(void) { return 42; }\n")
        after, why = build.runtime_object(children, support / "wbsim.c")
        assert after, why
    assert after != before and before.exists()
    assert b"wbsim_part_probe" in after.read_bytes() and b"wbsim_part_probe" not in before.read_bytes()
    assert build.support_digest() != digest
