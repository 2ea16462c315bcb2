"""Issue 38: a kept verdict is JSON, read back by results.from_dict, never a pickle.

A verdict read back must render exactly as the one computed (the Rich report, in
English and in Korean, and the --json document), for real results of several
puzzles: findings, error maps, speeds not measured, PTX and occupancy, access
counts, compiler diagnostics, a spent budget. Anything else in its place (a
pickle, damaged JSON, another key's verdict, another shape) is a verdict computed
again, never a traceback."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
from pathlib import Path

import pytest
from conftest import put_solution, put_wrong
from rich.console import Console

from workbook.check import engine, verdicts
from workbook.core import i18n
from workbook.core.results import Malformed, PuzzleResult, Status, from_dict, to_dict
from workbook.course import catalog
from workbook.view import report


def rendered(result: PuzzleResult, lang: str) -> str:
    i18n.set_language(lang)
    try:
        console = Console(record=True, width=80, color_system=None, force_terminal=False)
        report.render_result(console, result, result.title)
        return console.export_text()
    finally:
        i18n.set_language("en")


def through_the_cache(result: PuzzleResult, digest: str) -> PuzzleResult:
    """What a later check gets back for this result: written and read by the real cache."""
    verdicts.put(digest, result)
    path = verdicts._path(digest)
    assert path.is_file() and path.suffix == ".json"
    json.loads(path.read_text())  # plain JSON: data, not code
    back = verdicts.get(digest)
    assert back is not None and back.cached
    back.cached = False  # the one difference a reader is meant to see ("kept from an earlier check")
    return back


def same(result: PuzzleResult, back: PuzzleResult) -> None:
    assert json.dumps(to_dict(back), sort_keys=True) == json.dumps(to_dict(result), sort_keys=True)
    for lang in ("en", "ko"):
        assert rendered(back, lang) == rendered(result, lang)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))


def check(pid: str, **options) -> PuzzleResult:
    return engine.check_puzzle(catalog.load(pid), engine.Options(seed=1, cache=False, **options))


@pytest.mark.slow
def test_real_verdicts_read_back_render_exactly_as_computed(root, cache):
    """Error maps, simulator findings (out of bounds, an access budget), a compile error's
    diagnostics, speeds not measured without a GPU, occupancy (p31), PTX (p35), access counts."""
    seen: dict[str, set] = {"maps": set(), "findings": set(), "diagnostics": set(), "speed": set(),
                            "ptx": set(), "occupancy": set(), "access": set()}
    cases = []
    for pid, variant in (("p01", "forgets_ten"), ("p01", "writes_next"), ("p01", "one_thread_loops")):
        put_wrong(root, pid, variant)
        cases.append((f"{pid}/{variant}", check(pid)))
    put_solution(root, "p01")
    learner = root / "puzzles" / "p01" / "map.mojo"
    learner.write_text(learner.read_text().replace("def ", "def def ", 1))  # a compile error
    cases.append(("p01/compile error", check("p01")))
    for pid in ("p31", "p35"):  # occupancy; PTX (both: speed, not measured without a GPU)
        cases.append((f"{pid}/solution", check(pid, solutions=True)))
    for i, (name, result) in enumerate(cases):
        for part in result.parts:
            for dev in part.all_devices():
                if any(o.error_map for c in dev.cases for o in c.outputs):
                    seen["maps"].add(name)
                if dev.findings:
                    seen["findings"].add(name)
                if dev.ptx:
                    seen["ptx"].add(name)
                if dev.occupancy:
                    seen["occupancy"].add(name)
                if dev.access:
                    seen["access"].add(name)
            if part.speed is not None:
                seen["speed"].add(name)
        if result.diagnostics:
            seen["diagnostics"].add(name)
        if result.status in verdicts.KEPT and result.problem is None:
            same(result, through_the_cache(result, f"{i:02d}" * 16))
        else:  # not kept (a compile that ran out of time on a crowded machine): read back all the same
            same(result, from_dict(json.loads(json.dumps(to_dict(result)))))
    assert all(seen.values()), seen  # every kind of fact went through the cache at least once


def test_a_spent_budget_and_nested_messages_read_back(root, cache, monkeypatch):
    """A verdict cut by its budget is never kept, but reads back all the same (from_dict is
    the inverse of to_dict wherever it is used)."""
    put_wrong(root, "p01", "forgets_ten")
    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "0.5")
    result = check("p01", devices=("sim",))
    assert result.budget_spent is not None
    back = from_dict(json.loads(json.dumps(to_dict(result))))
    same(result, back)
    verdicts.put("ee" * 16, result)
    assert verdicts.get("ee" * 16) is None  # not kept


class Evil:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_anything_but_our_json_is_computed_again_never_run_or_trusted(root, cache, tmp_path, capsys):
    """A pickle where the verdict goes (the old format: it would run code), damaged JSON,
    another key's verdict, a verdict of another shape: each is a verdict computed again."""
    put_wrong(root, "p01", "forgets_ten")
    puzzle = catalog.load("p01")
    options = engine.Options(seed=1, quick=True, devices=("sim",))
    real = engine.check_puzzle(puzzle, options)
    assert real.status == Status.FAIL and not real.cached
    kept = sorted((verdicts._path("00" * 16).parent).glob("*.json"))
    assert len(kept) == 1
    path = kept[0]
    digest = path.stem
    good = json.loads(path.read_text())
    forged_pass = json.loads(path.read_text().replace('"fail"', '"pass"'))
    marker = tmp_path / "pickle-ran"
    variants = {
        "pickle": pickle.dumps(Evil(marker)),
        "damaged": path.read_bytes()[:100],
        "not an object": b"[1, 2, 3]",
        "another key": json.dumps({**forged_pass, "key": "ff" * 16}).encode(),
        "another format": json.dumps({**forged_pass, "format": "workbook-verdict/0"}).encode(),
        "a wrong type": json.dumps({**good, "result": {**good["result"], "parts": "everything passed"}}).encode(),
        "an unknown status": json.dumps({**good, "result": {**good["result"], "status": "excellent"}}).encode(),
        "deep": b"[" * 100000 + b"]" * 100000,
    }
    for name, data in variants.items():
        path.write_bytes(data)
        os.chmod(path, 0o600)
        assert verdicts.get(digest) is None, name
        again = engine.check_puzzle(puzzle, options)
        assert again.status == Status.FAIL and not again.cached, name
        assert verdicts.get(digest) is not None, name  # the real verdict is kept again
    assert not marker.exists()
    with pytest.raises(Malformed):
        from_dict({"id": "p01"})  # fields without defaults are required
    shutil.rmtree(path.parent)


def test_the_package_has_no_pickle_left():
    """No module of the workbook reads or writes a pickle (a cache entry is data, never code)."""
    package = Path(engine.__file__).parents[1]  # workbook/, every layer
    code = re.compile(r"^\s*(import|from)\s+(c?pickle|shelve|marshal|dill|cloudpickle)\b|pickle\.loads?\(", re.M)
    found = [p.name for p in package.rglob("*.py") if code.search(p.read_text())]
    assert found == []
