"""p32's traffic limits fail only what the text asks: a conflict-free kernel written
another way than the solution must pass. The solution pads the transpose tile and reorders
the pair reads; these variants swizzle the tile (tile[r, c ^ r]) and store the pairs as
evens then odds, 16 words apart. Each runs on the simulator, where the counters are."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import put_solution

from workbook import catalog, engine
from workbook.results import Status

DATA = Path(__file__).parent / "data" / "p32"


@pytest.mark.parametrize("variant, part", [("transpose_swizzled", "transpose"),
                                           ("pairs_split_padded", "pairs")])
def test_a_conflict_free_kernel_written_another_way_passes(root, variant, part):
    put_solution(root, "p32")
    shutil.copyfile(DATA / variant / "banks.mojo", root / "puzzles" / "p32" / "banks.mojo")
    result = engine.check_puzzle(catalog.load("p32"),
                                 engine.Options(part=part, seed=3, quick=True, devices=("sim",), cache=False))
    sim = next(p for p in result.parts if p.id == part).kernels["sim"]
    assert sim.status == Status.PASS, [f.kind for f in sim.findings or []]
    assert not [f for f in sim.findings or [] if f.kind == "traffic"]
