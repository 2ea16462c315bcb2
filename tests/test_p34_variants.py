"""p34's simulator rules fail only what is wrong: cluster kernels written another way than
the solution must pass. One splits each cluster barrier into cluster_arrive() right after
the block's total is published and cluster_wait() just before the other blocks' totals are
read, with the block's own work (block.prefix_sum and its barriers) between; the other finds
the rank from block_idx.x % CLUSTER (clusters of 4 along x) and picks the writer of the
block's total as elect_one_sync() within warp 0 only. Each runs on the simulator, in both
thread orders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import put_solution

from workbook import catalog, engine
from workbook.results import Status

DATA = Path(__file__).parent / "data" / "p34"
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("variant", ["split_arrive_wait", "leader_by_index"])
def test_a_cluster_kernel_written_another_way_passes(root, variant):
    put_solution(root, "p34")
    shutil.copyfile(DATA / variant / "clusters.mojo", root / "puzzles" / "p34" / "clusters.mojo")
    result = engine.check_puzzle(catalog.load("p34"),
                                 engine.Options(seed=5, quick=True, devices=("sim",), cache=False))
    for part in result.parts:
        sim = part.kernels["sim"]
        assert sim.status == Status.PASS, (part.id, [f.message.text("en") for f in sim.findings or []])
        assert not sim.findings
