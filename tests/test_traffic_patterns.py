"""The simulator's traffic counters against Nsight Compute's definitions, pattern by pattern.

tests/data/simbook/puzzles/p92 holds one kernel per access pattern (4, 8, 16 and 32 bytes a
lane; unit stride, stride 2, broadcast, a start past a sector's edge, a vector whose
alignment the compiler was not told), each one warp, to global and to shared memory. Its
counts.toml says what each costs as Nsight Compute counts it: worked out by hand, and
measured on a GPU by tools/ncu_table.py (which writes ncu's numbers there with --write-pins).
Here the real compiler builds the kernels and the real simulator runs them; every kernel's
requests, sectors, wavefronts and bank conflicts must be those numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.check import engine
from workbook.core.results import Status
from workbook.course import catalog
from workbook.course.catalog import tomllib

BOOK = Path(__file__).parent / "data" / "simbook"
COUNTS = BOOK / "puzzles" / "p92" / "counts.toml"
pytestmark = pytest.mark.slow

# LLVM's ThreadSanitizer pass instruments accesses of 1, 2, 4, 8 and 16 bytes only: a
# 32-byte vector (8 floats at once) reaches no __tsan_* call, so the simulator never sees it.
UNSEEN = {"global_32b_unit", "shared_32b_unit"}


def pinned() -> dict[str, dict[str, list[int]]]:
    data = tomllib.loads(COUNTS.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if isinstance(v, dict)}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, list[int]]]:
    """Per kernel: what the simulator counted, in counts.toml's shape (from the lines the
    report shows: the learner's view of the same counters)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBOOK_ROOT", str(BOOK))
        result = engine.check_puzzle(catalog.load("p92"), engine.Options(solutions=True, seed=1, quick=True,
                                                                        devices=("sim",), cache=False))
    assert result.status != Status.COMPILE_ERROR, result.diagnostics
    found: dict[str, dict[str, list[int]]] = {}
    for part in result.parts:
        dev = part.kernels["sim"]
        assert all(c.ran for c in dev.cases), dev.reasons
        for x in dev.traffic:
            row = found.setdefault(x.kernel, {}).setdefault(f"{x.space}_{x.access}", [0, 0, 0])
            row[0] += x.requests
            row[1] += x.cost
            row[2] += x.cost - x.ideal
    return {k: {kind: v if kind.startswith("shared") else v[:2] for kind, v in kinds.items()}
            for k, kinds in found.items()}


def test_every_pattern_is_in_the_fixture():
    """counts.toml prices every kernel the fixture launches, and nothing else."""
    launched = {ln.name for part in catalog.load("p92", BOOK).parts for ln in part.launches}
    assert set(pinned()) == launched


@pytest.mark.parametrize("kernel", sorted(set(pinned()) - UNSEEN))
def test_the_simulator_counts_what_ncu_counts(measured, kernel):
    assert measured.get(kernel) == pinned()[kernel]


@pytest.mark.xfail(strict=True, reason="TSan does not instrument 32-byte accesses: the simulator sees none")
@pytest.mark.parametrize("kernel", sorted(UNSEEN))
def test_a_32_byte_vector_is_counted(measured, kernel):
    assert measured.get(kernel) == pinned()[kernel]

