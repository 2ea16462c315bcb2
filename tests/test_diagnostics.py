"""The compile errors every beginner meets, explained in the learner's language, naming the
line that caused them. The fast tests read what the real Mojo compiler printed for each
mistake (tests/data/compile_errors/<name>.log, from the learner file beside it); the slow
one makes the mistake and compiles it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

from workbook.compile import diagnostics
from workbook.core import i18n

DATA = REPO / "tests" / "data" / "compile_errors"
PRINTED = re.compile(r"^(/\S+?/(?:sim|src)/(\w+\.mojo)):\d+:\d+: error:", re.M)

# mistake -> (the key of its explanation, the line that caused it, found by its text)
CASES = {
    "int_accumulator": ("diag.int_accumulator", "    var total = 0"),
    "needs_var": ("diag.needs_var", "    i = thread_idx.x"),
    "float64": ("diag.float64", "    var x: Float64 = a[i] + b[i]"),
    "float64_accumulator": ("diag.float64_var", "        var acc: Float64 = 0"),
    "global_var": ("diag.needs_comptime", "var TPB = 8"),
    "file_scope": ("diag.needs_comptime", "THREADS = 8"),
    "dynamic_parameter": ("diag.dynamic_parameter", "    var n = TPB"),
}


def parsed(name: str, tmp_path: Path):
    output = (DATA / f"{name}.log").read_text()
    printed, file = PRINTED.search(output).groups()
    learner = tmp_path / "puzzles" / "pXX" / file
    learner.parent.mkdir(parents=True)
    learner.write_text((DATA / f"{name}.mojo").read_text())
    return diagnostics.parse(output, {printed: learner}, tmp_path), learner


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_compilers_error_gets_an_explanation_naming_the_cause(name, tmp_path):
    found, learner = parsed(name, tmp_path)
    key, cause = CASES[name]
    first = found[0]
    assert first.explanation is not None and first.explanation.key == key, (first.message, first.explanation)
    lines = learner.read_text().splitlines()
    named = first.explanation.values.get("line")
    assert lines[named - 1] == cause
    for lang in ("en", "ko"):
        said = first.explanation.text(lang)
        assert str(named) in said and "{" not in said
    assert re.search(r"[가-힣]", first.explanation.text("ko"))


def test_the_int_accumulator_is_blamed_on_its_declaration_not_the_add(tmp_path):
    found, learner = parsed("int_accumulator", tmp_path)
    add = found[0]
    assert learner.read_text().splitlines()[add.line - 1].strip() == "total += partial[k]"  # the compiler's line
    assert add.explanation.values["line"] == add.line - 2 and add.explanation.values["use"] == add.line
    assert "원인은" in add.explanation.text("ko") and "`var total = 0`" in add.explanation.text("ko")


def test_the_compilers_own_alias_replaces_four_lines_of_generics(tmp_path):
    found, _ = parsed("int_accumulator", tmp_path)
    assert found[0].message.endswith("cannot be converted from 'Float32' to 'Int'"), found[0].message
    assert not any("is aka" in note for note in found[0].notes)
    assert "TileTensor[" in (DATA / "int_accumulator.log").read_text()  # it was there in what the compiler said


def test_other_errors_get_no_explanation(tmp_path):
    found, _ = parsed("global_var", tmp_path)
    assert found[-1].explanation is None  # the launcher's "no declaration 'TPB'" is a consequence, not a cause


@pytest.mark.slow
def test_a_learner_sees_the_explanation_in_korean(root, capsys):
    from test_cli import invoke

    learner = root / "puzzles" / "p12" / "dot.mojo"
    learner.write_text((DATA / "int_accumulator.mojo").read_text())
    cause = learner.read_text().splitlines().index("    var total = 0") + 1
    i18n.set_language("ko")
    code, out, _ = invoke(capsys, "--lang", "ko", "run", "p12", "--quick", "--device", "sim")
    said = " ".join(out.split())
    assert code == 1 and f"원인은 {cause}번 줄입니다: `var total = 0`으로 `total`이 정수(Int)가 되어" in said, out
    assert "invalid call to '__iadd__'" in said  # next to the compiler's own words
