"""The three sector rows of docs/ncu.md that differ by under 5 %, settled by arithmetic.

A GPU warp runs a loop's iterations together: a load inside a guard is one request per
iteration, made of the lanes the guard lets through. The simulator sees memory accesses,
not branches, so it makes a warp's request of each lane's n-th arrival at the load. Where
a guard inside a loop lets some lanes skip an iteration (the edges of p29's load group and
of p30's windows), the two groupings hold other addresses: the same number of requests,
other sectors. Counting both from the kernels' own index math must give ncu's number (the
H200's, kept in benchmarks/results) one way and the simulator's the other.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "benchmarks/results/ncu-h200-2026-11-29"


def sectors(lanes: list[list[int]], by_iteration: bool) -> tuple[int, int]:
    """Requests and 32-byte sectors of one warp's load. `lanes`: per lane, the byte address
    of each iteration (None where its guard skips it)."""
    requests = total = 0
    if by_iteration:
        groups = [[it[k] for it in lanes if k < len(it) and it[k] is not None] for k in range(max(map(len, lanes)))]
    else:
        arrivals = [[a for a in it if a is not None] for it in lanes]
        groups = [[a[k] for a in arrivals if k < len(a)] for k in range(max(map(len, arrivals)))]
    for group in groups:
        if group:
            requests += 1
            total += len({address // 32 for address in group})
    return requests, total


def counted(warps, by_iteration: bool) -> tuple[int, int]:
    found = [sectors(lanes, by_iteration) for lanes in warps]
    return sum(r for r, _ in found), sum(s for _, s in found)


def p29_pipeline(size: int = 2049, tile: int = 256, load: int = 32):
    for first in range(0, size, tile):  # one block per tile; its load group is one warp
        yield [[(first - 1 + j) * 4 if 0 <= first - 1 + j < size else None for j in range(t, tile + 2, load)]
               for t in range(load)]


def p30_box_rows(rows: int = 70, cols: int = 300, radius: int = 4):
    for r in range(rows):
        for c0 in range(0, cols, 32):  # a warp: 32 neighbouring columns of row r (ceildiv(cols, TPB) blocks)
            yield [[(r * cols + k) * 4 if 0 <= k < cols else None for k in range(c - radius, c + radius + 1)]
                   for c in range(c0, min(c0 + 32, cols))]


def p30_box_shared(rows: int = 70, cols: int = 300, tpb: int = 128, radius: int = 4):
    for r in range(rows):
        for x in range(-(-cols // tpb)):
            first = x * tpb - radius
            for w in range(tpb // 32):
                yield [[(r * cols + first + k) * 4 if 0 <= first + k < cols else None
                        for k in range(t, tpb + 2 * radius, tpb)] for t in range(32 * w, 32 * w + 32)]


def recorded(puzzle: str, kernel: str) -> dict:
    doc = json.loads((RUN / f"{puzzle}.json").read_text())

    def load_row(quantity: str) -> dict:
        (row,) = [r for case in doc["cases"] for k in case["kernels"] if k["kernel"] == kernel
                  for r in k["rows"] if r["kind"] == "global_load" and r["quantity"] == quantity]
        return row

    sector, request = load_row("sectors"), load_row("requests")
    return {"sim": sector["sim"], "ncu": sector["ncu"], "requests": request["ncu"], "sim_requests": request["sim"]}


def test_by_iteration_is_ncus_count_and_by_arrival_the_simulators():
    for puzzle, kernel, warps in (("p29", "pipeline", p29_pipeline), ("p30", "box_rows", p30_box_rows),
                                  ("p30", "box_shared", p30_box_shared)):
        got = recorded(puzzle, kernel)
        gpu, sim = counted(warps(), True), counted(warps(), False)
        assert gpu == (got["requests"], got["ncu"]), (puzzle, kernel, gpu, got)
        assert sim == (got["sim_requests"], got["sim"]), (puzzle, kernel, sim, got)
        assert gpu[1] != sim[1]  # the rows differ only by the grouping


def test_without_a_skipped_iteration_the_groupings_agree():
    """A loop whose guard no lane skips (an interior warp): both give the same sectors."""
    lanes = [[(100 + c + k) * 4 for k in range(-4, 5)] for c in range(32)]
    assert sectors(lanes, True) == sectors(lanes, False)
