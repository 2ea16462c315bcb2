"""An access rule is fair: it counts only the kernel it names, and when it is broken it says,
in the learner's language and within 80 columns, that the values were right, which stated
rule the kernel breaks, the kernel and the line. p24 is the case in point: its one-write-
per-element rule is warp_dots' (each warp's sum written once), and add_warp_sums, the
part's other kernel, may write output[0] twice. The real compiler and the real simulator."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, put_solution
from rich.console import Console

from workbook.author import curriculum
from workbook.check import engine
from workbook.compile import launcher
from workbook.core import i18n
from workbook.core.results import LaunchAccess, Status
from workbook.course import catalog, manifest
from workbook.judging import judge
from workbook.view import report

P24 = next(p for p in catalog.all_puzzles(REPO) if p.id == "p24")


def _kernel(kind: str, name: str):
    found = curriculum.wrong_kernels(P24, REPO) if kind == "wrong" else curriculum.right_kernels(P24, REPO)
    return next(k for k in found if k.name == name)


def test_a_size_expression_limit_follows_the_case():
    """add_warp_sums' read budget is a lane's share of the warp sums: 17 for 16500 elements,
    69 for 70000; a plain number stays itself."""
    spec = launcher.CaseSpec(0, P24.part("blocks"), {"size": 16500}, {}, constants={"TPB": 128})
    budget = next(b for b in P24.part("blocks").budgets if b.kernel == "add_warp_sums")
    limit = dict(budget.limits)["max_global_reads"]
    assert limit == "ceildiv(ceildiv(size, 32), 32)"
    assert judge.budget_limit(limit, spec) == 17
    spec.params["size"] = 70000
    assert judge.budget_limit(limit, spec) == 69
    assert judge.budget_limit(2, None) == 2


def test_a_budget_limit_must_be_a_number_or_a_size_expression(root):
    path = root / "puzzles/p24/puzzle.toml"
    path.write_text(path.read_text().replace('max_global_reads = "ceildiv(ceildiv(size, 32), 32)"',
                                             'max_global_reads = "import os"'))
    with pytest.raises(manifest.CatalogError):
        catalog.load("p24", root)


def test_author_verify_evaluates_every_size_expression_limit_on_the_cases(root):
    """A limit naming what no case has (a typo) is caught by author verify, not by a
    learner's check."""
    path = root / "puzzles/p24/puzzle.toml"
    path.write_text(path.read_text().replace('"ceildiv(ceildiv(size, 32), 32)"', '"ceildiv(ceildiv(sise, 32), 32)"'))
    verdict, = curriculum._budget_sizes(catalog.load("p24", root))
    assert not verdict.ok and "unknown name 'sise'" in verdict.detail
    assert curriculum._budget_sizes(catalog.load("p24", REPO))[0].ok


def test_writes_per_element_names_the_buffer_and_element_of_its_own_launch():
    access = LaunchAccess("case", "warp_dots", 128, per_thread=np.zeros((128, 8), dtype=np.uint32),
                          writes_per_element={"sums": 2}, busiest_element={"sums": 5})
    who, count = judge.budget_check("max_writes_per_element", 1, access, None, {"sums": (8,)})
    assert (who, count) == ("sums[5]", 2)
    assert judge.budget_check("max_writes_per_element", 2, access, None, {"sums": (8,)}) is None
    grid = LaunchAccess("case", "k", 4, per_thread=np.zeros((4, 8), dtype=np.uint32),
                        writes_per_element={"output": 3}, busiest_element={"output": 7})
    assert judge.budget_check("max_writes_per_element", 1, grid, None, {"output": (2, 4)})[0] == "output[1, 3]"


def _findings(result, part: str):
    return next(p for p in result.parts if p.id == part).kernels["sim"].findings or []


def test_the_one_write_rule_counts_only_its_kernel_and_names_its_line(tmp_path):
    """A right kernel whose add_warp_sums writes output[0] twice passes (the rule once counted
    every kernel's writes to the case's outputs, and blamed warp_dots' line for them); a
    wrong one whose lane 0 writes each warp's slot twice fails in both parts, the finding
    naming warp_dots, sums[...], the values being right, the rule, and line 79, the first of
    the two writes; said in English and Korean, each line within 80 columns."""
    with curriculum.Sandbox(REPO) as sandbox:
        right, verdicts = curriculum.run_right(sandbox, _kernel("right", "output_zeroed_first"))
        assert all(v.ok for v in verdicts), [v.detail for v in verdicts]
        blocks = next(p for p in right.parts if p.id == "blocks").kernels["sim"]
        assert blocks.status == Status.PASS and not blocks.findings
        writes = {(a.kernel, a.case): a.writes_per_element for a in blocks.access}
        assert writes[("add_warp_sums", "33 warps, 1056")] == {"output": 2}
        assert writes[("warp_dots", "33 warps, 1056")] == {"sums": 1}

        wrong, verdicts = curriculum.run_wrong(sandbox, _kernel("wrong", "sum_written_twice"))
        assert all(v.ok for v in verdicts), [v.detail for v in verdicts]
    for part in ("warps", "blocks"):
        found = [f for f in _findings(wrong, part) if f.kind == "budget"]
        assert len(found) == 1, part
        finding = found[0]
        assert finding.kernel == "warp_dots" and finding.line == 79 and "sums[w] = product" in finding.source
        values = finding.message.values
        assert values["kernel"] == "warp_dots" and values["who"].startswith("sums[") and values["count"] == 2
        assert values["values"].key == "budget.values_right"
        english = finding.message.text("en")
        assert english.startswith("The values were right, but warp_dots breaks a rule the puzzle states:")
        assert "one lane writes each warp's sum once" in english and "(lines 79, 89)" in english
        assert "add_warp_sums" not in english
        korean = finding.message.text("ko")
        assert korean.startswith("값은 맞았지만 warp_dots는 퍼즐이 밝힌 규칙을 어깁니다:") and "79, 89번 줄" in korean
        for lang in ("en", "ko"):
            i18n.set_language(lang)
            console = Console(width=80, record=True, force_terminal=False)
            console.print(report.finding_line(finding))
            shown = console.export_text()
            assert max(console.measure(line).maximum for line in shown.splitlines()) <= 80, shown
    i18n.set_language("en")


def test_a_broken_rule_with_wrong_values_does_not_say_they_were_right(root):
    """The same two writes, the second of twice the sum: the values are wrong too, and the
    rule's finding says only which rule is broken, where."""
    wrong = (REPO / "tests/wrong/p24/sum_written_twice/warp_dot.mojo").read_text()
    put_solution(root, "p24")
    (root / "puzzles/p24/warp_dot.mojo").write_text(wrong.replace("        sums[w] = total\n",
                                                                  "        sums[w] = total * 2\n"))
    result = engine.check_puzzle(catalog.load("p24", root), engine.Options(part="warps", seed=3, quick=True,
                                                                           devices=("sim",), cache=False))
    sim = next(p for p in result.parts if p.id == "warps").kernels["sim"]
    assert sim.status == Status.FAIL and not all(c.passed for c in sim.cases)
    finding = next(f for f in sim.findings if f.kind == "budget")
    assert finding.message.text("en").startswith("warp_dots breaks a rule the puzzle states:")
    assert finding.message.text("ko").startswith("warp_dots는 퍼즐이 밝힌 규칙을 어깁니다:")
    assert finding.line == 79
