"""A finding and the cases it names, as the learner reads them (issue 40, items 6 and 7): a
case the simulator stopped at a finding ran, and is listed as stopped, not as not run; and
"seen in N cases" counts cases, never more than there are, however many sites, buffers or
thread orders of one case report the same line. Real kernels, the real simulator."""

from __future__ import annotations

import re

import pytest
from conftest import put_wrong
from rich.console import Console

from workbook.check import engine
from workbook.core import i18n
from workbook.core.results import Status
from workbook.course import catalog
from workbook.view import report

pytestmark = pytest.mark.slow


def sim_part(puzzle: str, part: str):
    result = engine.check_puzzle(catalog.load(puzzle), engine.Options(part=part, seed=1, devices=("sim",),
                                                                      force=True))
    assert result.status != Status.COMPILE_ERROR, result.diagnostics
    return result, result.parts[0].kernels["sim"]


def screen(result, lang: str) -> str:
    i18n.set_language(lang)
    console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
    report.render_result(console, result, "title")
    return console.export_text()


def test_a_case_stopped_at_a_finding_is_listed_as_stopped(root):
    """p35's false alignment promise stops the vector part's cases where it faults; the one
    case that does not fault runs to the end."""
    put_wrong(root, "p35", "false_alignment_claim")
    result, sim = sim_part("p35", "vector")
    stopped = [c for c in sim.cases if c.stopped]
    assert stopped and all(not c.ran and not c.outputs for c in stopped)
    named = {f.case for f in sim.findings}
    assert {c.name for c in stopped} >= named, (named, [c.name for c in stopped])
    assert not [c for c in sim.cases if not c.ran and not c.stopped]  # none left "not run"
    english, korean = screen(result, "en"), screen(result, "ko")
    assert "not run" not in english and "✘ stopped" in english and "the simulator stopped it" in english
    assert "실행 안 함" not in korean and "✘ 멈춤" in korean
    for text in (english, korean):
        assert all(len(line) <= 80 for line in text.splitlines())


def test_seen_in_n_cases_counts_cases_once(root):
    """p16's naive kernel without a guard reads past both inputs from several sites of one line in
    the same case (before issue 40 the count said 11 cases of 7)."""
    put_wrong(root, "p16", "naive_no_guard")
    result, sim = sim_part("p16", "naive")
    assert sim.findings
    ran = len(sim.cases)
    for f in sim.findings:
        assert 1 <= f.count <= ran, (f.kind, f.line, f.count, ran)
    reads = [f for f in sim.findings if f.kind == "read_out_of_bounds" and f.line]
    assert reads and max(f.count for f in reads) > 1  # seen in several cases, and said so
    for lang in ("en", "ko"):
        text = screen(result, lang)
        numbers = [int(n) for n in re.findall(r"(?:seen in|케이스) (\d+)(?: cases|개에서 보임)",
                                                                text.replace("\n", " "))]
        assert numbers and max(numbers) <= ran, numbers
