"""Traffic limits against the simulator's per-line counts: which line breaks which limit,
and how the finding says it. The counts themselves are tested against hand-worked costs
through the real compiler in tests/test_sim.py (test_traffic_counters)."""

from __future__ import annotations

from workbook.core.results import LineTraffic
from workbook.course import catalog, manifest
from workbook.judging import judge


def line(space: str, access: str, per_request: float, conflicts: float = 0.0, kernel: str = "k", n: int = 7):
    return LineTraffic(kernel, "puzzles/p/x.mojo", n, space, access, 10, int(per_request * 10), 40, per_request,
                       4.0, conflicts, "x = y")


def part(*limits: manifest.TrafficLimit):
    raw = catalog.load("p21").parts[0]
    return manifest.Part(**{**raw.__dict__, "traffic": limits})


def limit(kernel="", access="", **values):
    return manifest.TrafficLimit(kernel, access, tuple((k, float(v)) for k, v in values.items()),
                                {"en": "Why.", "ko": "왜."})


def test_a_line_over_the_sector_limit_is_a_finding_naming_it(root):
    found = judge.traffic_findings(part(limit(max_sectors_per_request=8)),
                                   [line("global", "load", 32.0, n=12), line("global", "store", 4.0, n=13)])
    assert [(f.kind, f.line, f.kernel) for f in found] == [("traffic", 12, "k")]
    text = found[0].message.text("en")
    assert "line 12" in text and "32 sectors" in text and "at most 8" in text and "Why." in text
    assert "12번 줄" in found[0].message.text("ko") and "왜." in found[0].message.text("ko")


def test_limits_apply_to_their_kernel_access_and_memory_only(root):
    lines = [line("global", "load", 32.0), line("shared", "store", 32.0, conflicts=31.0, n=9),
             line("global", "load", 32.0, kernel="other", n=10)]
    assert judge.traffic_findings(part(limit(kernel="k", access="store", max_sectors_per_request=8)), lines) == []
    found = judge.traffic_findings(part(limit(kernel="k", max_bank_conflicts=0)), lines)
    assert [(f.line, f.kernel) for f in found] == [(9, "k")]
    assert "31 bank conflicts" in found[0].message.text("en")


def test_at_the_limit_passes(root):
    assert judge.traffic_findings(part(limit(max_sectors_per_request=8, max_bank_conflicts=1)),
                                  [line("global", "load", 8.0), line("shared", "load", 2.0, conflicts=1.0)]) == []
