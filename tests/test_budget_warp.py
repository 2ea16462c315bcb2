"""The per-warp read budget (max_global_reads_per_warp): it tells a warp that gets its
neighbours' values by shuffles from one that reads them again from global memory,
which a per-thread limit can't (lane 31 reads twice either way)."""

import numpy as np

from workbook.compile.launcher import LaunchSpec
from workbook.core.results import LaunchAccess
from workbook.judging import judge
from workbook.run import kernelrun

LAUNCH = LaunchSpec("k[size]", ("output", "a"), (2, 1, 1), (128, 1, 1), "k")


def _access(reads: np.ndarray) -> LaunchAccess:
    table = np.zeros((reads.size, len(kernelrun.COUNTERS)), dtype=np.int64)
    table[:, kernelrun.COUNTERS.index("global_reads")] = reads
    return LaunchAccess("case", "k", reads.size, per_thread=table)


def test_shuffles_keep_a_warp_within_its_elements_and_one_more():
    reads = np.ones(256, dtype=np.int64)
    reads[31::32] = 2  # lane 31 reads the next warp's first element
    assert judge.budget_check("max_global_reads_per_warp", 40, _access(reads), LAUNCH) is None


def test_every_lane_reading_its_neighbour_breaks_it_and_names_the_warp():
    reads = np.ones(256, dtype=np.int64)
    reads[128 + 64:128 + 96] = 2  # block 1, warp 2 reads every neighbour again
    who, count = judge.budget_check("max_global_reads_per_warp", 40, _access(reads), LAUNCH)
    assert count == 64
    assert who.values == {"w": 2, "b": "1"}
