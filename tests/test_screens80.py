"""Issue 40's screens at 80 columns, in English and Korean, without colour: reveal's diff wraps
(item 3), a Korean workspace has no English left for the learner (item 9), a report ends with its
verdict and the first thing to fix and says what every part shares once (item 10), p36 without a
GPU says nothing judged it and exits 5 (item 11), `list` lines up (item 13), and an id the course
leaves out says why (item 14)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from rich.cells import cell_len
from rich.console import Console
from test_cli import invoke

from workbook.core import exitcodes, i18n
from workbook.core.i18n import msg
from workbook.core.results import CaseResult, DeviceResult, Diagnostic, PartResult, PuzzleResult, Status
from workbook.course import catalog, skeleton, workspace
from workbook.view import report, style

LANGS = ["en", "ko"]


@pytest.fixture(autouse=True)
def eighty(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")


def fits(text: str) -> None:
    assert all(cell_len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=cell_len)


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def rendered(result: PuzzleResult, lang: str) -> str:
    i18n.set_language(lang)
    console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
    report.render_result(console, result, "title")
    return console.export_text()


# --- item 3: reveal's diff ----------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_reveal_s_diff_wraps_like_the_listing(root, capsys, lang):
    """p36's lesson is on its long lines (the strides): the diff keeps every character of them."""
    solution = skeleton.clean_solution((root / "solutions/p36/tma_wgmma.mojo").read_text(), lang)
    long = next(line for line in solution.splitlines() if "WGMMADescriptor.create[128 // 16" in line)
    assert len(long) > 80
    mine = solution.replace("create[128 // 16, BM * CORE * 2 // 16]", "create[128, 1024]")
    (root / "puzzles/p36/tma_wgmma.mojo").write_text(mine)
    code, out, _ = invoke(capsys, "--lang", lang, "reveal", "p36", "--yes")
    assert code == 0
    fits(out)
    diff = out.split("tma_wgmma.mojo", 2)[-1]
    assert squeezed("+" + long) in squeezed(diff) and squeezed("-" + long.replace(
        "create[128 // 16, BM * CORE * 2 // 16]", "create[128, 1024]")) in squeezed(diff)


# --- item 9: English left in a Korean workspace -------------------------------------------


def test_a_korean_workspace_gives_its_files_in_korean(tmp_path):
    """The files a puzzle gives (graphs, packages) and the learner's skeletons: their comments, their
    asserts' messages and what were docstrings are Korean; the English workspace has no Korean."""
    i18n.set_language("ko")
    workspace.create(tmp_path / "ko", "ko")
    workspace.create(tmp_path / "en", "en")
    for puzzle in catalog.all_puzzles(REPO):
        for path in puzzle.dir.rglob("*"):
            name = path.relative_to(puzzle.dir).as_posix()
            if path.suffix not in (".py", ".mojo") or path.name == "reference.py" or "__pycache__" in name:
                continue
            korean = (tmp_path / "ko/puzzles" / puzzle.id / name).read_text()
            english = (tmp_path / "en/puzzles" / puzzle.id / name).read_text()
            assert '"""' not in korean and "#ko" not in korean and "#ko" not in english, name
            assert not re.search(r"[가-힣]", english), (puzzle.id, name)
            comments = [line for line in korean.splitlines() if line.lstrip().startswith("#")]
            english_words = [line for line in comments if re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", line)
                             and not re.search(r"[가-힣]", line) and "FILL IN" not in line]
            assert not english_words, (puzzle.id, name, english_words[:3])
            for line in korean.splitlines():
                if re.search(r"\b(assert|raise)\b", line) and '"' in line and not line.lstrip().startswith("#"):
                    assert re.search(r"[가-힣]", line), (puzzle.id, name, line)


@pytest.mark.parametrize("lang", LANGS)
def test_help_says_its_values_in_the_learner_s_language(capsys, lang):
    with pytest.raises(SystemExit):
        from workbook.cli import app as cli

        cli.main(["--lang", lang, "run", "--help"])
    out = capsys.readouterr().out
    fits(out)
    assert "<int range>" not in out and "<str>" not in out
    assert ("<정수>" if lang == "ko" else "<number>") in out and ("<파트>" if lang == "ko" else "<part>") in out


@pytest.mark.slow
def test_an_answer_out_of_range_is_a_korean_message_with_its_line(root, capsys):
    """p30's answers are asserted in range: out of range, the learner reads the assert's own message in
    Korean, and the sentence that names the line."""
    source = skeleton.clean_solution((root / "solutions/p30/profiling.mojo").read_text(), "ko")
    source = re.sub(r"comptime MOST_SECTORS = \d", "comptime MOST_SECTORS = 5", source)
    (root / "puzzles/p30/profiling.mojo").write_text(source)
    code, out, _ = invoke(capsys, "--lang", "ko", "run", "p30", "--device", "sim")
    fits(out)
    said = " ".join(out.split())
    assert code == exitcodes.FAILED and "컴파일 오류" in said
    assert "comptime assert가 성립하지 않아 컴파일되지 않습니다" in said
    assert "MOST_SECTORS에는 파트 번호를 씁니다" in said
    tail = "\n".join(out.splitlines()[-24:])
    assert "판정: ✘ 컴파일 오류" in tail and "먼저 고칠 것:" in tail


# --- item 10: the end of a report ------------------------------------------------------------


def five_parts(status: Status) -> PuzzleResult:
    """p30's shape: five parts, the GPU line alike in each; one part failing, or a compile error."""
    parts = []
    for pid in ("a", "b", "c", "fast", "explain"):
        gpu = DeviceResult("gpu", Status.COMPILED if status != Status.COMPILE_ERROR else Status.NOT_RUN)
        gpu.explain("reason.no_gpu" if status != Status.COMPILE_ERROR else "reason.compile_error", target="sm_90")
        sim = DeviceResult("sim", Status.PASS if pid != "explain" else status)
        if status == Status.COMPILE_ERROR:
            sim = DeviceResult("sim", Status.NOT_RUN)
            sim.explain("reason.compile_error")
        elif pid == "explain":
            sim.cases = [CaseResult("answers", {}, [], [({"en": "MOST_SECTORS", "ko": "MOST_SECTORS"}, False,
                                                          {"en": "part a: read the reports again",
                                                           "ko": "파트 a: 보고서를 다시 읽으세요"})],
                                    passed=False, label={"en": "your answers", "ko": "여러분의 답"})]
        else:
            sim.cases = [CaseResult("7", {}, [], [], passed=True)]
        parts.append(PartResult(pid, sim.status if status != Status.COMPILE_ERROR else status,
                                {"sim": sim, "gpu": gpu}, 0, 0))
    result = PuzzleResult("p30", "title", status, parts=parts)
    if status == Status.COMPILE_ERROR:
        result.diagnostics = [Diagnostic("puzzles/p30/profiling.mojo", 131, 5, "function instantiation failed",
                                         explanation=msg("diag.assert_failed", line=131, why="MOST_SECTORS"))]
    return result


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("status", [Status.FAIL, Status.COMPILE_ERROR])
def test_a_report_ends_with_its_verdict_and_the_first_thing_to_fix(lang, status):
    text = rendered(five_parts(status), lang)
    fits(text)
    tail = "\n".join(text.splitlines()[-24:])
    verdict = i18n.t("report.verdict", lang) + " " + style.ICON[status] + " " + i18n.t("status." + status.value, lang)
    assert verdict in tail and i18n.t("report.fix_first", lang) in tail
    first = "MOST_SECTORS" if status == Status.FAIL else "profiling.mojo:131:5"
    assert first in tail.split(i18n.t("report.fix_first", lang))[1]
    no_gpu = i18n.t("reason.no_gpu", lang, target="sm_90")
    shared = i18n.t("reason.compile_error", lang) if status == Status.COMPILE_ERROR else no_gpu
    assert " ".join(text.split()).count(" ".join(shared.split())) <= (2 if status == Status.COMPILE_ERROR else 1)
    assert i18n.t("report.every_part", lang, parts="a, b, c, fast, explain") in " ".join(text.split())


# --- item 11: p36 without a GPU ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
def test_p36_without_a_gpu_is_not_judged_and_says_what_it_could_check(root, capsys, lang):
    from workbook.core import toolchain

    if toolchain.gpu() is not None:
        pytest.skip("a GPU here judges p36")
    solution = skeleton.clean_solution((root / "solutions/p36/tma_wgmma.mojo").read_text(), lang)
    (root / "puzzles/p36/tma_wgmma.mojo").write_text(
        solution.replace("create[128 // 16, BM * CORE * 2 // 16]", "create[128, 1024]"))  # bytes, not 16-byte units
    code, out, _ = invoke(capsys, "--lang", lang, "run", "p36")
    fits(out)
    said = " ".join(out.split())
    assert code == exitcodes.NOT_JUDGED
    assert " ".join(i18n.t("report.not_judged", lang).split()) in said
    assert i18n.t("report.number_differs", lang, name="SBO", value=128, expected=8) in said
    assert i18n.t("report.number_agrees", lang, name="LBO", value=64) in said  # w's descriptor is right
    assert "4096" in said and " ".join(i18n.t("run.next_not_judged", lang).split()) in said
    code, out, _ = invoke(capsys, "--lang", lang, "check", "p36", "p01", "--solutions", "--json")
    assert code == exitcodes.NOT_JUDGED, out  # nothing failed, one only compiled (right code: the same)


# --- item 13: list ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_list_columns_line_up_over_every_chapter(root, capsys, lang):
    from workbook.course import state

    state.remember("p15", "pass", {"sim": "pass", "gpu": "compiled"})
    state.remember("p16", "fail", {"sim": "fail", "gpu": "compiled"})
    state.applied_solution("p16")
    state.remember("p36", "compiled", {"sim": "not_run", "gpu": "compiled"})
    code, out, _ = invoke(capsys, "--lang", lang, "list")
    assert code == 0
    fits(out)
    rows = [line for line in out.splitlines() if re.match(r"^  p\d\d ", line)]
    assert len(rows) == len(catalog.puzzle_ids())
    hints = {cell_len(line.rstrip()) for line in rows}  # the hints column ends every row at one place
    assert len(hints) == 1, hints
    verdict = i18n.t("progress.not_started", lang)
    starts = {cell_len(line[:line.index("· " + verdict)]) for line in rows if "· " + verdict in line}
    assert len(starts) == 1, starts  # and the verdicts start at one column in every chapter
    assert i18n.t("list.solution_applied", lang) in out


# --- item 14: an id the course leaves out -------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_p20_says_why_it_is_not_in_this_course(root, capsys, lang):
    code, _, err = invoke(capsys, "--lang", lang, "run", "p20")
    fits(err)
    said = " ".join(err.split())
    assert code == exitcodes.BAD_INPUT and "PyTorch" in said and "p17" in said and "p21" in said
    assert "p32" not in said and "Traceback" not in said
    code, out, _ = invoke(capsys, "--lang", lang, "show", "softmax")
    assert code == 0 and "p18" in out
