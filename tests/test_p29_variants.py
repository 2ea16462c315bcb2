"""p29's checks fail only what the text asks: right kernels written another way than the
solution must pass on the simulator. The solution strides each group over its tile and
spins on mbarrier_test_wait with every thread arriving; these variants give each thread
of a group a run of neighbouring values, block on the phase's parity instead of spinning,
and count only the threads that have a value (size arrivals a phase, not TPB)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import put_solution

from workbook import catalog, engine
from workbook.results import Status

DATA = Path(__file__).parent / "data" / "p29"


@pytest.mark.parametrize("variant, part", [("pipeline_chunks", "pipeline"),
                                           ("stencil_parity_wait", "stencil"),
                                           ("stencil_count_of_values", "stencil")])
def test_a_right_kernel_written_another_way_passes(root, variant, part):
    put_solution(root, "p29")
    shutil.copyfile(DATA / variant / "sync.mojo", root / "puzzles" / "p29" / "sync.mojo")
    result = engine.check_puzzle(catalog.load("p29"),
                                 engine.Options(part=part, seed=3, quick=True, devices=("sim",), cache=False))
    sim = next(p for p in result.parts if p.id == part).kernels["sim"]
    assert sim.status == Status.PASS, [(f.kind, f.message.text("en")) for f in sim.findings or []]
    assert not sim.findings
