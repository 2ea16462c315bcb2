"""Reading Nsight Compute's report and putting it beside the simulator's counts
(workbook/judging/ncu.py, tools/ncu_table.py). ncu needs a GPU; its report here is a sample in the
shape ncu 2025 prints with --csv (a row per kernel and metric) and --page raw (a row per
kernel). The simulator's side runs for real in test_the_tool_s_simulator_side."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from workbook.course.catalog import tomllib
from workbook.judging import ncu

REPO = Path(__file__).resolve().parent.parent
HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def row(ident: int, kernel: str, metric: str, value: str, unit: str = "") -> str:
    return (f'"{ident}","4242","launch_gpu","127.0.0.1","{kernel}","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{metric}","{unit}","{value}"')


def report(*kernels: tuple[str, dict[str, str]]) -> str:
    lines = ["==PROF== Connected to process 4242 (/tmp/x/gpu-sm_90)",
             '==PROF== Profiling "map_add_ten_SIMD_DType_int_16A6AcB_cbe1e5" - 0: 0%....50%....100% - 9 passes',
             "==PROF== Disconnected from process 4242", HEAD]
    for n, (kernel, values) in enumerate(kernels):
        lines += [row(n, kernel, ncu.ALL_METRICS[key], value) for key, value in values.items()]
    return "\n".join(lines) + "\n"


def tool():
    spec = importlib.util.spec_from_file_location("ncu_table", REPO / "tools" / "ncu_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_report_is_read_kernel_by_kernel_in_order():
    text = report(("map_add_ten_SIMD_DType_int_16A6AcB_cbe1e5", {"global_load.requests": "1,024",
                                                                  "global_load.sectors": "4,097"}),
                  ("map_add_ten_SIMD_DType_int_16A6AcB_cbe1e5", {"global_load.requests": "17"}))
    got = ncu.parse(text)
    assert [(p.id, p.name) for p in got] == [(0, "map_add_ten_SIMD_DType_int_16A6AcB_cbe1e5")] * 1 + \
        [(1, "map_add_ten_SIMD_DType_int_16A6AcB_cbe1e5")]
    assert ncu.ours(got[0]) == {"global_load.requests": 1024.0, "global_load.sectors": 4097.0}
    assert ncu.ours(got[1]) == {"global_load.requests": 17.0}


def test_the_raw_page_is_read_too():
    metrics = [ncu.METRICS["global_load.requests"], ncu.METRICS["shared_load.conflicts"]]
    text = "\n".join([
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC",' + ",".join(f'"{m}"' for m in metrics),
        '"","","","","","","","","","","","request",""',
        '"0","1","a","h","banks_transpose_x(float*)","1","7","(32, 8, 1)","(4, 4, 1)","0","9.0","65","1,984"'])
    got = ncu.parse(text)
    assert got[0].name == "banks_transpose_x" and ncu.ours(got[0]) == {"global_load.requests": 65.0,
                                                                      "shared_load.conflicts": 1984.0}


def test_no_report_is_no_kernels():
    assert ncu.parse("==ERROR== the profiler could not start\n") == []


def test_profiled_kernels_are_named_by_the_launches_in_order():
    """Two cases, the same kernel in each, a runtime kernel between, a host function's own
    kernel: each goes to its launch."""
    names = ["dot_partial_dots_SIMD_a", "fill_kernel_x", "dot_add_partials_SIMD_b", "dot_partial_dots_SIMD_c",
             "dot_helper_kernel_d", "dot_add_partials_SIMD_e"]
    profiled = [ncu.Profiled(n, name) for n, name in enumerate(names)]
    expected = [ncu.Expected(3, 0, "partial_dots"), ncu.Expected(3, 1, "add_partials"),
                ncu.Expected(7, 0, "partial_dots"), ncu.Expected(7, 1, "launch_helper", host=True),
                ncu.Expected(7, 2, "add_partials")]
    matched, other = ncu.assign(expected, profiled, "dot")
    assert {k: [p.id for p in v] for k, v in matched.items()} == {(3, 0): [0], (3, 1): [2], (7, 0): [3],
                                                                  (7, 1): [4], (7, 2): [5]}
    assert [p.name for p in other] == ["fill_kernel_x"]


def test_a_row_is_equal_close_or_differs():
    rows = ncu.compare("k", {"global_load.requests": 32, "global_load.sectors": 130,
                             "shared_store.requests": 4, "shared_store.wavefronts": 8, "shared_store.conflicts": 4},
                       {"global_load.requests": 32, "global_load.sectors": 128, "shared_store.requests": 4,
                        "shared_store.wavefronts": 16, "shared_store.conflicts": 12})
    got = {(r.kind, r.quantity): (r.verdict, r.ratio) for r in rows}
    assert got[("global_load", "requests")] == ("equal", 1.0)
    assert got[("global_load", "sectors")][0] == "close"  # 130 / 128: within 5 %
    assert got[("shared_store", "conflicts")] == ("differs", 4 / 12)
    assert ("global_store", "requests") not in got  # neither side stored to global memory
    missing = ncu.compare("k", {"global_load.requests": 1, "global_load.sectors": 4}, {"global_load.requests": 1})
    assert [r.verdict for r in missing] == ["equal", "missing"]  # ncu did not read the sectors metric
    assert all(r.verdict == "missing" for r in ncu.compare("k", {"global_load.requests": 1}, None))


def test_hints_name_what_the_simulator_does_not_price():
    gpu = {"global_store.requests": 10, "global_store.sectors": 40, "global_atomic.requests": 4,
           "async_copy.requests": 8, "async_copy.sectors": 64, "global_load.requests": 8,
           "global_load.instructions": 10, "global_load.sectors": 32}
    sim = {"global_store.requests": 14, "global_store.sectors": 44, "global_load.requests": 32,
           "global_load.sectors": 32}
    text = " | ".join(ncu.hints(sim, gpu))
    assert "4 atomic or reduction requests" in text and "async-copy" in text
    assert "2 of 10 instructions made no request" in text
    assert "4 simulator accesses for each GPU instruction" in text
    assert ncu.hints(None, gpu)[-1] == "the simulator did not run this kernel"


def test_metrics_ncu_does_not_know_are_left_out():
    listing = ("Device NVIDIA H200 (GH100)\n------\n"
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld   Counter  # of requests\n"
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld  Counter  # of sectors\n")
    wanted = [ncu.METRICS["global_load.requests"], ncu.METRICS["global_load.sectors"],
              ncu.METRICS["shared_load.conflicts"]]
    assert ncu.known_metrics(listing, wanted) == wanted[:2]


def test_the_sites_sum_per_kernel():
    """result.json's sites, summed per kernel as the tool does: each site a load or a store
    by which it made more of, a source site (no traffic) left out."""
    sites = [
        [1, 0, "k", 32, 0, 0, 0, 1, 5, 4, 0, 0, 0],
        [2, 0, "k", 0, 32, 0, 0, 1, 4, 4, 0, 0, 0],
        [3, 0, "k", 0, 0, 0, 32, 0, 0, 0, 1, 8, 4],
        [4, 0, "k", 0, 0, 64, 0, 0, 0, 0, 2, 4, 2],
        [5, 0, "other", 32, 0, 0, 0, 1, 32, 4, 0, 0, 0],
        [0, 0, "/src/x.mojo", 3, 4],
    ]
    assert ncu.sim_counts(sites, "k") == {
        "global_load.requests": 1, "global_load.sectors": 5, "global_store.requests": 1, "global_store.sectors": 4,
        "shared_store.requests": 1, "shared_store.wavefronts": 8, "shared_store.conflicts": 4,
        "shared_load.requests": 2, "shared_load.wavefronts": 4, "shared_load.conflicts": 2}


def _table(kernel: str, sim: dict, gpu: dict | None) -> dict:
    rows = [{"kind": r.kind, "quantity": r.quantity, "sim": r.sim, "ncu": r.ncu, "ratio": r.ratio,
             "verdict": r.verdict, "metric": r.metric} for r in ncu.compare(kernel, sim, gpu)]
    puzzle = {"puzzle": "p92", "cases": [{"index": 0, "part": "global", "name": "one warp", "kernels": [
        {"kernel": kernel, "sim": sim, "ncu": gpu, "rows": rows, "hints": ncu.hints(sim, gpu), "lines": []}]}]}
    return puzzle


def test_the_markdown_table_shows_both_counts_and_the_differences():
    puzzle = _table("global_4b_unit", {"global_load.requests": 1, "global_load.sectors": 4},
                    {"global_load.requests": 1, "global_load.sectors": 5, "global_load.instructions": 1})
    table = {"gpu": "NVIDIA H200", "target": "sm_90", "ncu": "Version 2025.3", "seed": 12, "commit": "abc",
             "date": "2026-11-28", "command": "python tools/ncu_table.py out", "legend": ncu.METRICS,
             "summary": ncu.summary([puzzle]), "pins": [], "puzzles": [puzzle]}
    text = ncu.markdown(table)
    assert "NVIDIA H200" in text and "`l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`" in text
    assert "| p92 | global: one warp | `global_4b_unit` | global load | 1 / 1 | 4 / 5 ≠ |  |" in text
    assert "simulator 4, ncu 5" in text and "the same requests, other sectors" in text
    assert table["summary"] == {"kernels": 1, "kernels_equal": 0,
                                "rows": {"global requests": {"equal": 1}, "global sectors": {"differs": 1}}}


def test_ncu_s_counts_of_the_patterns_can_be_pinned(tmp_path, monkeypatch):
    """--write-pins puts ncu's numbers where counts.toml had the hand-worked ones, and says so."""
    ncu_table = tool()
    fixture = tmp_path / "simbook"
    shutil.copytree(ncu_table.FIXTURE / "puzzles" / "p92", fixture / "puzzles" / "p92")
    monkeypatch.setattr(ncu_table, "FIXTURE", fixture)
    puzzle = _table("global_4b_misaligned", {"global_load.requests": 1, "global_load.sectors": 5},
                    {"global_load.requests": 1, "global_load.sectors": 6})
    pins = ncu_table.pinned_against([puzzle])
    assert pins == [{"kernel": "global_4b_misaligned", "kind": "global_load", "pinned": [1, 5], "ncu": [1, 6],
                     "sim": [1, 5], "ncu_agrees": False},
                    {"kernel": "global_4b_misaligned", "kind": "global_store", "pinned": [1, 5], "ncu": None,
                     "sim": None, "ncu_agrees": None}]
    ncu_table.write_pins([puzzle], {"ncu": "Version 2025.3", "gpu": "NVIDIA H200", "date": "2026-11-29"})
    data = tomllib.loads((fixture / "puzzles" / "p92" / "counts.toml").read_text())
    assert data["global_4b_misaligned"] == {"global_load": [1, 6], "global_store": [1, 5]}
    assert "NVIDIA H200" in data["source"] and data["global_4b_unit"]["global_load"] == [1, 4]


@pytest.mark.slow
def test_the_tool_s_simulator_side(tmp_path):
    """The tool without a GPU (--sim-only), on the pattern fixture: a case per part through the
    real simulator, its sites summed per kernel, the JSON and the table written."""
    ncu_table = tool()
    assert ncu_table.main([str(tmp_path), "p92", "--sim-only", "--jobs", "1"]) == 0
    table = json.loads((tmp_path / "ncu.json").read_text())
    (puzzle,) = table["puzzles"]
    kernels = {k["kernel"]: k for case in puzzle["cases"] for k in case["kernels"]}
    assert kernels["shared_16b_stride2"]["sim"]["shared_load.conflicts"] == 4
    assert kernels["global_4b_misaligned"]["sim"]["global_store.sectors"] == 5
    pins = {(p["kernel"], p["kind"]): p for p in table["pins"]}
    assert all(p["sim"] == p["pinned"] for key, p in pins.items() if "32b" not in key[0]), \
        [p for p in pins.values() if p["sim"] != p["pinned"]]
    assert "`shared_16b_stride2` | shared load | [1, 8, 4] | – | [1, 8, 4]" in (tmp_path / "ncu.md").read_text()


# --- what the learner reads under a traffic table ---------------------------------------------


def traffic_device(monkeypatch, record: dict | None, tmp_path):
    from workbook.core.results import DeviceResult, LineTraffic, Status

    path = tmp_path / "ncu_record.json"
    path.unlink(missing_ok=True)
    if record is not None:
        path.write_text(json.dumps(record))
    monkeypatch.setattr(ncu, "RECORD", path)
    dev = DeviceResult("sim", Status.PASS)
    dev.traffic = [LineTraffic("embedding_coalesced", "puzzles/p21/op/embedding.mojo", 104, "global", "load", 903,
                               4488, 3603, 4.97, 3.99, 0.0, "output[b, s, d] = weights[row, d]")]
    dev.traffic_counted = ncu.counted()
    return dev


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_traffic_table_says_its_counts_are_ncu_s_and_how_they_compared(monkeypatch, tmp_path, lang):
    from rich.cells import cell_len
    from rich.console import Console

    from workbook.core import i18n
    from workbook.view import devices

    i18n.set_language(lang)
    record = {"gpu": "NVIDIA H200", "date": "2026-11-29", "kernels": 44, "kernels_equal": 40}
    for given, words in ((record, {"en": "on an NVIDIA H200 (2026-11-29), ncu counted the same for 40 of 44 kernels",
                                   "ko": "커널 44개 중 40개에서 같은 수를"}),
                         (None, {"en": "follow Nsight Compute's definitions (docs/ncu.md names the counter",
                                 "ko": "Nsight Compute의 정의를 따릅니다(각 수가 어느 카운터인지는"})):
        dev = traffic_device(monkeypatch, given, tmp_path)
        console = Console(width=80, record=True, no_color=True, highlight=False)
        devices.render_traffic(console, dev)
        text = console.export_text()
        assert all(cell_len(line) <= 80 for line in text.splitlines())
        assert words[lang] in " ".join(text.split()), text
        assert "docs/ncu.md" in text


def test_the_json_says_it_too(monkeypatch, tmp_path):
    from workbook.core.results import _plain

    dev = traffic_device(monkeypatch, {"gpu": "NVIDIA H200", "date": "2026-11-29", "kernels": 44,
                                       "kernels_equal": 40}, tmp_path)
    doc = json.loads(json.dumps(_plain(dev)))
    assert doc["traffic_counted"]["key"] == "report.traffic_ncu" and "40 of 44" in doc["traffic_counted"]["text"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    monkeypatch.setattr(ncu, "RECORD", broken)
    assert ncu.counted().key == "report.traffic_ncu_none"  # a damaged record says nothing it can't back
