"""The report at 80 columns, colour on and off, in English and Korean: nothing a learner
needs is cut (counts, case names, finding lines, source lines), wrapped lines stay under
their own start, and the error map's states differ by glyph, not only by colour."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rich.cells import cell_len
from rich.console import Console

from workbook.core import i18n
from workbook.core.i18n import msg
from workbook.core.results import (
    CaseResult,
    DeviceResult,
    Diagnostic,
    Finding,
    OutputCheck,
    PartResult,
    Picture,
    PuzzleResult,
    Status,
)
from workbook.judging import compare
from workbook.view import report

LONG_LABEL = {"en": "a very long case name that says which mistake it is there to catch, 17 x 23",
              "ko": "어떤 실수를 잡으려고 넣은 케이스인지 말해 주는 아주 긴 케이스 이름, 17 x 23"}


def matrix_output() -> OutputCheck:
    """A 6 x 9 output with every state of the map: ok, near the tolerance, wrong, NaN."""
    expected = np.arange(54, dtype=np.float64).reshape(6, 9) + 1
    got = expected.copy()
    got[1, 2] += 0.8  # near the tolerance of 1.0
    got[2, 3] += 5  # wrong
    got[4:, :] = np.nan  # never written
    return compare.check_output("grad_weight", got, expected, atol=1.0, rtol=0.0)


def failing_result() -> PuzzleResult:
    out = matrix_output()
    ids = [(r // 4 * 3 + c // 4) * 16 + (r % 4) * 4 + c % 4 if r < 4 else -1 for r in range(6) for c in range(9)]
    picture = Picture((4, 4, 1), (3, 2, 1), outputs={"grad_weight": ([6, 9], ids)})
    long_case = CaseResult("long", {}, [out], [], passed=False, label=LONG_LABEL, picture=picture)
    big = compare.check_output("grad_weight", np.full(391, np.nan), np.ones(391), 0.0, 0.0)
    counted = CaseResult("big", {}, [big], [], passed=False, label={"en": "391 elements", "ko": "원소 391개"})
    finding = Finding("sim", "divergent_barrier", msg("finding.divergent_barrier", block=0, finished=64, done="t64",
                                                         waiting=64, stuck="t0", line=137),
                      kernel="layernorm_linear_backward_gpu_kernel", file="puzzles/p22/op/layernorm_linear.mojo",
                      line=137, case="big", count=7)
    sim = DeviceResult("sim", Status.FAIL, cases=[long_case, counted], findings=[finding])
    sim.explain("reason.sim_findings", n=1)
    result = PuzzleResult("p22", "title", Status.FAIL, parts=[PartResult("x", Status.FAIL, {"sim": sim}, 1.0, 0.0)])
    return result


SOURCE = ("        var total_of_everything_in_this_row = some_function_with_a_long_name(x[b, s, h], "
          "weight[o, h], bias[o], ln_weight[h])")


def compile_error() -> PuzzleResult:
    diag = Diagnostic("puzzles/p22/op/layernorm_linear.mojo", 12, 49,
                      "invalid call to 'some_function_with_a_long_name': argument #2 cannot be converted from "
                      "'SIMD[DType.float32, 1]' to 'Int'", source=[(11, "    # comment"), (12, SOURCE), (13, "")],
                      notes=["puzzles/p22/op/layernorm_linear.mojo:3: function declared here with a rather long "
                             "explanation of its parameters"])
    return PuzzleResult("p22", "title", Status.COMPILE_ERROR, diagnostics=[diag])


def render(result: PuzzleResult, colour: bool) -> list[str]:
    console = Console(width=80, record=True, force_terminal=colour, color_system="truecolor" if colour else None,
                      no_color=not colour, highlight=False)
    report.render_result(console, result, "A title")
    return console.export_text().splitlines()


def words(text: str) -> list[str]:
    return text.split()


@pytest.fixture(params=["en", "ko"])
def lang(request):
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language("en")


@pytest.mark.parametrize("colour", [False, True], ids=["no colour", "colour"])
def test_a_failing_report_fits_80_columns_and_cuts_nothing(lang, colour):
    lines = render(failing_result(), colour)
    text = "\n".join(lines)
    assert max(cell_len(line) for line in lines) <= 80
    tokens = set(words(text))
    for word in words(LONG_LABEL[lang]):  # the case name wraps in its column, every word of it
        assert word.strip(",") in {t.strip(",") for t in tokens}, word
    assert "19/54" in text and "391/391" in text  # counts whole
    finding = i18n.msg("finding.divergent_barrier", block=0, finished=64, done="t64", waiting=64, stuck="t0",
                       line=137).text()
    assert "{" not in finding
    for word in words(finding):
        assert word in tokens, word
    assert "puzzles/p22/op/layernorm_linear.mojo:137" in text
    assert ("원소 391개" if lang == "ko" else "391 elements") in text  # the finding's case, in the learner's words
    opening = " ".join(finding.split()[:3])
    start = next(i for i, line in enumerate(lines) if "✘" in line and opening in line)
    column = lines[start].index(opening)
    for line in lines[start + 1:start + 3]:  # the finding's next lines wrap under its first word
        assert line[:column].strip() == "", line


def test_the_error_map_reads_without_colour_and_draws_a_matrix_as_one(lang):
    lines = render(failing_result(), colour=False)
    text = "\n".join(lines)
    legend = next(line for line in lines if "X " + i18n.t("report.map.wrong") in line)
    for glyph, key in zip(".~X?", ("ok", "close", "wrong", "nan")):
        assert f"{glyph} {i18n.t('report.map.' + key)}" in legend
    axes = next(i for i, line in enumerate(lines) if "grad_weight[row, col]" in line)
    assert re.match(r"^\s+0\s+4\s+8$", lines[axes + 1])  # column numbers
    rows = lines[axes + 2:axes + 8]
    assert [line.split()[0] for line in rows] == ["0", "1", "2", "3", "4", "5"]  # row numbers
    assert rows[1].split()[1:] == [".", ".", "~", ".", ".", ".", ".", ".", "."]
    assert rows[2].split()[1:4] == [".", ".", "."] and rows[2].split()[4] == "X"
    assert set(rows[5].split()[1:]) == {"?"}
    assert "grad_weight[2, 3]" in text  # a wrong element named as [row, col]


def test_who_wrote_what_names_its_axes_and_fits(lang):
    lines = render(failing_result(), colour=False)
    text = " ".join(" ".join(lines).split())
    assert i18n.t("report.picture_cells_matrix") in text and "x,y" in text
    header = next(i for i, line in enumerate(lines) if re.match(r"^\s+0\s+1\s+2\s+3", line))
    assert lines[header + 1].split()[1] == "0,0:0,0" and lines[header + 3].split()[4] == "0,0:3,2!"  # wrong, marked
    assert max(cell_len(line) for line in lines) <= 80


@pytest.mark.parametrize("colour", [False, True], ids=["no colour", "colour"])
def test_a_long_source_line_wraps_inside_the_code_column(lang, colour):
    lines = render(compile_error(), colour)
    assert max(cell_len(line) for line in lines) <= 80
    first = next(i for i, line in enumerate(lines) if "❯ 12 │" in line)
    code_column = lines[first].index("│") + 2
    continued = lines[first + 1]
    assert continued[:code_column].strip() == "" and continued.strip(), continued  # never over the gutter
    joined = "".join(line[code_column:].strip() for line in lines[first:first + 3])
    assert "ln_weight[h])" in joined
    assert "^" in "\n".join(lines[first + 1:first + 4])
    message = " ".join(" ".join(lines[:first]).split())
    assert "'SIMD[DType.float32, 1]' to 'Int'" in message


def test_list_show_and_hint_fit_80_columns_in_korean_without_cutting(root, lang):
    from workbook.cli.commands import hint, list_, show
    from workbook.cli.commands.common import Context

    console = Console(width=80, record=True, force_terminal=False, no_color=True)
    ctx = Context(out=console, err=console)
    list_.main(ctx)
    show.main(ctx, puzzle="p27")
    hint.main(ctx, puzzle="p27")
    text = console.export_text()
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    from workbook.course import catalog

    title = i18n.pick(catalog.load("p27").title)
    assert all(word in text.split() for word in title.split())


def test_the_check_summary_gives_way_in_its_titles_only(lang):
    results = []
    for pid in ("p01", "p27"):
        result = PuzzleResult(pid, "x", Status.PASS, seconds=12)
        result.parts.append(PartResult("x", Status.PASS, {"sim": DeviceResult("sim", Status.PASS),
                                                          "gpu": DeviceResult("gpu", Status.COMPILED)}, 0, 0))
        results.append(result)
    long = {"en": "Block-wide patterns: block.sum, block.prefix_sum, block.broadcast and a little more",
            "ko": "블록 단위 패턴: block.sum, block.prefix_sum, block.broadcast 그리고 조금 더"}[lang]
    console = Console(width=80, record=True, force_terminal=False)
    console.print(report.summary_table(results, {"p01": "Map", "p27": long}))
    lines = console.export_text().splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    for pid in ("p01", "p27"):
        row = next(line for line in lines if line.split()[:1] == [pid])  # the id whole, first
        assert i18n.t("status.pass") in row and "12s" in row  # the verdict and the time whole


@pytest.mark.parametrize("same", [True, False], ids=["the budget is the problem", "another problem"])
def test_the_budget_line_is_added_once_in_every_view_unless_it_is_the_problem(same):
    """The full report, the streamed rest and watch's compact view add one line for a spent
    budget, and none where the budget is already the puzzle's problem (said as that)."""
    spent = msg("check.budget_spent", seconds=3, what="the GPU's run")
    problem = spent if same else msg("grade.missing_file", file="puzzles/p01/map.mojo")
    line = spent.text()[:40]

    def said(budget) -> list[int]:
        result = PuzzleResult("p01", "title", Status.TIMEOUT, problem=problem, budget_spent=budget)
        console = Console(width=200, record=True, no_color=True)
        counts = []
        for show in (lambda: report.render_result(console, result, "A title"),
                     lambda: report.render_rest(console, PuzzleResult("p01", "title", Status.PASS), result),
                     lambda: console.print(*report.compact(result, "A title"))):
            show()
            counts.append(console.export_text().count(line))  # export_text clears: a count per view
        return counts

    added = [a - b for a, b in zip(said(spent), said(None))]
    assert added == [0 if same else 1] * 3


def test_square_brackets_in_what_the_compiler_or_a_run_printed_are_shown_as_they_are():
    """Rich reads `[...]` as markup and drops it: a compiler's TileTensor[mut=True, dtype] or the
    simulator's block.sum[block_size=32] must reach the learner whole, whatever the console."""
    from workbook.view import terminal

    said = "error: TileTensor[mut=True, dtype] is not block.sum[block_size=32] [bold]"
    crashed = DeviceResult("sim", Status.CRASH, output=said)
    results = [PuzzleResult("p27", "title", Status.COMPILE_ERROR, compiler_output=said),
               PuzzleResult("p27", "title", Status.CRASH, parts=[PartResult("sum", Status.CRASH, {"sim": crashed},
                                                                           1e-3, 1e-3)])]
    for result in results:
        for console in (Console(width=200, record=True), terminal.console(width=200, record=True)):
            report.render_result(console, result, "A title")
            assert said in console.export_text()
    plain = terminal.console(width=200, record=True)
    plain.print(said)  # a message's text printed as a string: no markup read either
    assert said in plain.export_text()
