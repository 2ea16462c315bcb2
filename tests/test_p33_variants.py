"""p33 fails a wrong layout, not a right kernel written another way: the fragments built
slot by slot from the map's formulas into a fresh D (part `fragments`), and the steps of
a slice walked column by column, with load_c, mma_op and store_d in one line (part
`tensor_core`). Each runs on the simulator, whose tensor cores follow NVIDIA's lane maps."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import put_solution

from workbook import catalog, engine
from workbook.results import Status

DATA = Path(__file__).parent / "data" / "p33"
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("variant, part", [("fragments_in_a_loop", "fragments"),
                                           ("steps_inside_columns", "tensor_core")])
def test_a_tensor_core_kernel_written_another_way_passes(root, variant, part):
    put_solution(root, "p33")
    shutil.copyfile(DATA / variant / "tensor_cores.mojo", root / "puzzles" / "p33" / "tensor_cores.mojo")
    result = engine.check_puzzle(catalog.load("p33"),
                                 engine.Options(part=part, seed=3, quick=True, devices=("sim",), cache=False))
    sim = next(p for p in result.parts if p.id == part).kernels["sim"]
    failing = [c.name for c in sim.cases if not c.passed]
    assert sim.status == Status.PASS, (failing, [f.kind for f in sim.findings or []])
