"""docs/ncu.md's differences, each explained: tools/ncu_explain.py's per-line evidence
(workbook.ptx.memory_lines on the NVPTX build, the simulator's sites on the CPU build)
and tools/ncu_explanations.toml, which tools/ncu_table.py writes under each difference."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from workbook.compile import ptx
from workbook.judging import ncu

REPO = Path(__file__).resolve().parent.parent


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_difference_in_the_docs_has_a_why() -> None:
    text = (REPO / "docs" / "ncu.md").read_text(encoding="utf-8")
    section = text.split("### Differences", 1)[1].split("### The pinned patterns", 1)[0]
    rows = re.findall(r"^- (p\d+) `(\w+)` \([^)]*\), (global load|global store|shared load|shared store) ",
                      section, re.M)
    assert len(rows) > 30
    why = _tool("ncu_table").explanations()
    missing = {f"{p}.{k}.{kind.replace(' ', '_')}" for p, k, kind in rows} - set(why)
    assert not missing
    assert section.count("  - why") == len({(p, k, kind) for p, k, kind in rows})


def test_memory_lines_of_real_ptx() -> None:
    """p12's partial_dots as mojo built it for sm_90 (tools/ncu_ptx): line 102,
    `products[t] += products[t + stride]`, is 2 shared loads and a store."""
    module = (REPO / "tools" / "ncu_ptx" / "p12-partial_dots.ptx").read_text(encoding="utf-8")
    (entry, lines), = ptx.memory_lines(module, ("dot.mojo",)).items()
    assert "partial_dots" in entry
    assert lines[102] == {"ld.shared": 2, "st.shared": 1}
    assert lines[86] == {"ld.global": 2}
    assert lines[113] == {"ld.shared": 1, "st.global": 1}


def test_memory_kind() -> None:
    assert ptx.memory_kind("ld.global.nc.v4.f32") == "ld.global.v4"
    assert ptx.memory_kind("st.shared.v2.b32") == "st.shared.v2"
    assert ptx.memory_kind("ld.param::entry.b64") is None
    assert ptx.memory_kind("cp.async.ca.shared.global") == "cp.async"
    assert ptx.memory_kind("ld.f32") == "ld.generic"


def test_markdown_writes_the_why_under_its_difference() -> None:
    row = {"kind": "shared_load", "quantity": "requests", "sim": 1.0, "ncu": 2.0, "ratio": 0.5,
           "verdict": "differs", "metric": ""}
    table = {"legend": ncu.METRICS, "puzzles": [{"puzzle": "p12", "cases": [
        {"part": "dot", "name": "a case", "kernels": [{"kernel": "partial_dots", "sim": {}, "ncu": {},
                                                      "rows": [row, {**row, "quantity": "wavefronts"}]}]}]}],
             "explanations": {"p12.partial_dots.shared_load": {"why": "TSan's read before write", "settled": True}}}
    text = ncu.markdown(table)
    assert text.count("  - why: TSan's read before write") == 1


def test_per_line_evidence_of_p15() -> None:
    """Both real builds of p15 (seed 12, the table's case): line 98 makes 2 shared loads
    in the PTX, 1 the simulator sees (TSan leaves out a read before a write to the same
    address), and the PTX's lines add up to ncu's 1300."""
    explain = _tool("ncu_explain")
    result = explain.explain("p15", 12, {}, None)
    (case,) = result["cases"]
    (kernel,) = case["kernels"]
    loads = kernel["kinds"]["shared_load"]
    line = next(r for r in loads["lines"] if r["line"] == 98)
    assert line["cpu_instructions"] == 1 and line["ptx"] == {"ld.shared": 2}
    assert loads["sim_requests"] == 700 and loads["expected"] == 1300


def test_walk_hub_shared_and_global_requests_apart(tmp_path: Path) -> None:
    """p31's walk_hub: one CPU load serves hub (shared) and table (global); the GPU
    issues an ld.shared and an ld.global for a warp whose lanes go both ways. The
    simulator now counts them as the GPU does: ncu's counts on an H200 (docs/ncu.md)."""
    import json

    assert _tool("ncu_table").main([str(tmp_path), "p31", "--sim-only", "--jobs", "1"]) == 0
    found = json.loads((tmp_path / "p31.json").read_text())
    hub = next(k for c in found["cases"] for k in c["kernels"] if k["kernel"] == "walk_hub")["sim"]
    assert hub["global_load.requests"] == 13365 and hub["global_load.sectors"] == 83341
    assert hub["shared_load.requests"] == 2500 and hub["shared_load.wavefronts"] == 5626


# nvdisasm -gi of p13's conv1d_blocks and p28's conv1d_async on the H200 host (CUDA 13.0's
# ptxas, tools/ncu_sass.sh; docs/ncu-sass-h200.txt): the inline chain, innermost first.
_SASS = '''\
\t//## File "/root/b/src/conv1d.mojo", line 169 inlined at "/root/b/src/conv1d.mojo", line 137
\t//## File "/root/b/src/conv1d.mojo", line 137
        /*00f0*/              @!P0 LDG.E.CONSTANT R11, desc[UR8][R8.64] ;
\t//## File "/root/b/src/conv1d.mojo", line 193 inlined at "/root/b/src/conv1d.mojo", line 137
\t//## File "/root/b/src/conv1d.mojo", line 137
        /*0340*/                   LDS R0, [R10] ;
        /*0360*/                   LDS R9, [UR6+0x10c] ;
        /*0370*/                   LDS.128 R4, [UR6+0x110] ;
\t//## File "max/mojo/max/gpu/primitives/block.mojo", line 776 inlined at "/root/b/src/conv1d.mojo", line 133
\t//## File "/root/b/src/conv1d.mojo", line 133 inlined at "/root/b/src/conv1d.mojo", line 117
\t//## File "/root/b/src/conv1d.mojo", line 117
        /*0380*/                   STS [R8], R9 ;
\t//## File "/root/b/src/conv1d.mojo", line 103 inlined at "/root/b/src/conv1d.mojo", line 63
\t//## File "/root/b/src/conv1d.mojo", line 63
        /*0110*/              @!PT LDS RZ, [RZ] ;
        /*0140*/                   LDGSTS.E [R9], desc[UR8][R6.64] ;
'''


def test_sass_lines_take_the_innermost_learners_line() -> None:
    """The H200 run's first sass.log put every instruction on the kernel's own line (the
    last of each chain); the line is the innermost of the learner's file, a library's
    frame gives way to the learner's line that called it, and `@!PT` padding never runs."""
    lines = _tool("ncu_sass_lines").lines_of(_SASS)
    got = {line: dict(c) for (_, line), c in lines.items()}
    assert got == {169: {"LDG.E.CONSTANT": 1}, 193: {"LDS": 2, "LDS.128": 1}, 133: {"STS": 1},
                   103: {"LDGSTS.E": 1}}


def test_the_docs_why_lines_are_the_explanations_word_for_word() -> None:
    """docs/ncu.md's generated part says what tools/ncu_table.py would write from
    tools/ncu_explanations.toml: each why under its difference, "(not settled)" where so."""
    text = (REPO / "docs" / "ncu.md").read_text(encoding="utf-8")
    section = text.split("### Differences", 1)[1].split("### The pinned patterns", 1)[0]
    why = _tool("ncu_table").explanations()
    key, seen = None, 0
    for line in section.splitlines():
        m = re.match(r"^- (p\d+) `(\w+)` \([^)]*\), (global load|global store|shared load|shared store) ", line)
        if m:
            key = f"{m.group(1)}.{m.group(2)}.{m.group(3).replace(' ', '_')}"
        elif line.startswith("  - why"):
            told = why[key]
            assert line == f"  - why{'' if told['settled'] else ' (not settled)'}: {told['why']}", key
            seen += 1
    assert seen == len(why)  # and every explanation is written under its difference
