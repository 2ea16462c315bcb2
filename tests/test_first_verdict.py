"""The first verdict without waiting (issue 40, item 4): without a GPU, `run` prints the
simulator's verdict as soon as it is in, then appends what the compile for the GPU (and an
op's graph) adds, and the verdict of the whole run; `watch` shows the first verdict at
once; `--json` stays one document at the end; the exit code is the whole run's.

The drawing is checked on results made here, at 80 columns in both languages without
colour; the order in time on real runs of p01 through the real compilers, each after an
edit of its own, so that both builds are cold (a warm GPU build would have nothing left
to wait for)."""

from __future__ import annotations

import io
import json
import time
import uuid

import numpy as np
import pytest
from rich.cells import cell_len
from rich.console import Console
from test_watch import Session, no_children_left, wait_for

from workbook.check import engine
from workbook.cli.commands import run
from workbook.cli.commands.common import Context
from workbook.core import i18n
from workbook.core.i18n import msg
from workbook.core.results import CaseResult, DeviceResult, Diagnostic, PartResult, PuzzleResult, Status
from workbook.judging import compare
from workbook.view import progress, report


def sim_failure() -> DeviceResult:
    out = compare.check_output("output", np.array([1.0, 2.0, 9.0]), np.array([1.0, 2.0, 3.0]), 0.0, 0.0)
    case = CaseResult("three", {}, [out], [], passed=False, label={"en": "three elements", "ko": "원소 세 개"})
    return DeviceResult("sim", Status.FAIL, cases=[case])


def results(final_status: Status = Status.FAIL) -> tuple[PuzzleResult, PuzzleResult]:
    """The first stage (the simulator's verdict) and the whole run (and the GPU's compile)."""
    first = PuzzleResult("p01", "Map", Status.FAIL, seed=7, quick=True, first_verdict=3.2, seconds=3.3)
    first.parts.append(PartResult("map", Status.FAIL, {"sim": sim_failure()}, 0.0, 0.0))
    gpu = DeviceResult("gpu", Status.COMPILED)
    gpu.explain("reason.no_gpu", target="sm_90")
    final = PuzzleResult("p01", "Map", final_status, seed=7, first_verdict=3.2, seconds=41.0)
    final.parts.append(PartResult("map", Status.FAIL, {"sim": sim_failure(), "gpu": gpu}, 0.0, 0.0))
    return first, final


def draw(lang: str, first: PuzzleResult, final: PuzzleResult) -> list[str]:
    i18n.set_language(lang)
    try:
        console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
        report.render_first(console, first, "Map", "phase.gpu_check_next")
        console.print("<<END OF FIRST>>")
        report.render_rest(console, first, final)
        return console.export_text().splitlines()
    finally:
        i18n.set_language("en")


def said(lang: str, key: str, **values) -> str:
    i18n.set_language(lang)
    try:
        return " ".join(i18n.t(key, **values).split())
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_first_verdict_then_only_what_the_rest_added_then_the_whole_verdict(lang):
    lines = draw(lang, *results())
    assert max(cell_len(line) for line in lines) <= 80
    cut = lines.index("<<END OF FIRST>>")
    before, after = " ".join(" ".join(lines[:cut]).split()), " ".join(" ".join(lines[cut:]).split())
    assert said(lang, "report.stream.header") in before
    assert said(lang, "report.stream.pending", seconds="3.2", what=i18n.t("report.stream.gpu_check")).split()[0] \
        in before and said(lang, "report.stream.gpu_check") in before
    sim_name, gpu_name = said(lang, "device.sim"), said(lang, "device.gpu")
    case = "원소 세 개" if lang == "ko" else "three elements"
    assert sim_name in before and case in before  # the simulator's cases, at once
    # Not again: the simulator's table is not repeated (the closing may name the failing case).
    assert not any(line.lstrip().startswith((case, sim_name)) for line in lines[cut:])
    assert any(line.startswith(gpu_name) for line in lines[cut:]) and not any(
        line.startswith(gpu_name) for line in lines[:cut])  # the GPU's line comes after
    assert said(lang, "report.stream.after") in after
    verdicts = [n for n, line in enumerate(lines) if line.startswith(said(lang, "report.verdict"))]
    assert verdicts and verdicts[-1] > cut and said(lang, "status.fail") in lines[verdicts[-1]]  # the whole run's


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_compile_error_of_the_gpu_build_after_the_first_verdict_is_appended(lang):
    first, final = results(Status.COMPILE_ERROR)
    final.diagnostics = [Diagnostic("puzzles/p01/map.mojo", 12, 5, "use of unknown declaration 'thread_idy'",
                                    source=[(12, "    var i = thread_idy.x")])]
    final.parts[0].kernels["gpu"] = DeviceResult("gpu", Status.NOT_RUN, reasons=[msg("reason.compile_error")])
    lines = draw(lang, first, final)
    assert max(cell_len(line) for line in lines) <= 80
    cut = lines.index("<<END OF FIRST>>")
    after = "\n".join(lines[cut:])
    assert "thread_idy" in after and "puzzles/p01/map.mojo:12:5" in after
    verdicts = [line for line in lines if line.startswith(said(lang, "report.verdict"))]
    assert verdicts and said(lang, "status.compile_error") in verdicts[-1]
    assert "thread_idy" in lines[-1]  # the first thing to fix ends the screen


# --- real runs -----------------------------------------------------------------------------


class Stamped(io.StringIO):
    """A console's file that remembers when each line was written."""

    def __init__(self):
        super().__init__()
        self.times: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        now = time.monotonic()
        self.times += [(now, line) for line in text.splitlines() if line.strip()]
        return super().write(text)


def edit(root, puzzle: str = "p01") -> None:
    """The solution, with a comment of its own: every build of it is cold."""
    path = root / "puzzles" / puzzle / "map.mojo"
    path.write_text((root / "solutions" / puzzle / "map.mojo").read_text() + f"\n# {uuid.uuid4().hex}\n")


def test_run_prints_the_simulators_verdict_before_the_gpu_compile_ends(root, monkeypatch):
    monkeypatch.setenv("WORKBOOK_NO_GPU", "1")  # a laptop's: a GPU host runs the kernels there
    edit(root)
    out = Stamped()
    console = Console(file=out, width=80, force_terminal=False, no_color=True, highlight=False)
    code = run.main(Context(out=console, err=console), puzzle="p01")
    text = out.getvalue()
    lines = text.splitlines()
    assert code == 0, text
    assert max(cell_len(line) for line in lines) <= 80
    first = next(t for t, line in out.times if line.startswith("First verdict after"))
    gpu = next(t for t, line in out.times if line.startswith("GPU  ◆ compiled"))
    whole = next(t for t, line in out.times if line.startswith("Verdict: ✔ pass"))
    assert first < gpu <= whole, text  # on screen while the compile for the GPU was still going
    sim_lines = [n for n, line in enumerate(lines) if line.startswith("Simulator")]
    assert len(sim_lines) == 1 and sim_lines[0] < lines.index(next(x for x in lines if x.startswith("GPU  ")))
    assert "the first verdict; the rest of the run goes on below" in text


def test_run_json_is_one_document_with_the_same_facts_and_the_whole_runs_exit_code(root, monkeypatch):
    monkeypatch.setenv("WORKBOOK_NO_GPU", "1")
    edit(root)
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=False, no_color=True)
    code = run.main(Context(out=console, err=console, as_json=True), puzzle="p01")
    document = json.loads(buffer.getvalue())  # one document, nothing printed before it
    assert code == 0 and document["status"] == "pass"
    assert document["devices"] == {"sim": "pass", "gpu": "compiled"} and document["first_verdict"] > 0


def test_watch_shows_the_first_verdict_while_the_gpu_compile_runs(root, monkeypatch):
    monkeypatch.setenv("WORKBOOK_NO_GPU", "1")
    edit(root)
    session = Session("p01")
    wait_for(lambda: session.finished() == 1, 600)
    text = session.text
    session.quit()
    early = text.find("The simulator's verdict is in")
    assert early >= 0, text
    assert text.rfind("workbook watch ·") > early  # then redrawn with the whole run's verdict
    assert "p01 passed" in text[early:]
    no_children_left()


def test_a_pending_first_verdict_is_drawn_once(root):
    """The engine may post several stage events (the compile for the GPU, then the graph):
    `run` prints the first one only, the rest comes with the whole run."""
    seen = []
    console = Console(file=io.StringIO(), width=80, force_terminal=False)
    first = run.FirstVerdict(Context(out=console, err=console), "Map")
    live = progress.LiveProgress(console, "x", enabled=False, on_first=lambda e: (seen.append(e), first(e)))
    a, _ = results()
    for key in ("phase.gpu_check_next", "phase.kernels_done"):
        live(engine.Event("", "stage", msg(key), result=a))
    assert len(seen) == 1 and first.shown is a
