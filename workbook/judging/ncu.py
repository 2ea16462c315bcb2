"""Nsight Compute's counters beside the simulator's: the proof behind the traffic tables.

The simulator prices each warp's request by NVIDIA's rules (wbsim_parts/traffic.c, "Memory traffic");
Nsight Compute (ncu) reads the same quantities from the GPU's own counters. This module
holds the pieces that put the two side by side: the ncu metric each of our numbers
stands for, the command that runs a GPU launcher under ncu, the reader of its report,
the naming of each profiled kernel by the puzzle's launches, the simulator's per-site
counts summed into the same shape, and the comparison. tools/ncu_table.py drives it over
the course; docs/ncu.md holds what it wrote on a GPU.

The quantities, per kernel and access kind (global load, global store, shared load,
shared store):
- requests: warp-wide memory instructions (ncu: L1TEX requests for global memory, and
  executed shared-memory instructions for shared memory);
- sectors (global): 32-byte sectors those requests touched;
- wavefronts (shared): passes through the 32 banks, and conflicts: the wavefronts past
  the fewest the access width allows (ncu's bank conflicts; a 128-bit load of a whole
  warp takes 4 wavefronts and has none).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..compile import ptx
from ..core import settings
from ..core.i18n import Msg, msg

KINDS = ("global_load", "global_store", "shared_load", "shared_store")
QUANTITIES = {"global": ("requests", "sectors"), "shared": ("requests", "wavefronts", "conflicts")}

# Our number -> the ncu metric it stands for (names as Nsight Compute 2025.3 gives them for
# sm_70 and later; the Kernel Profiling Guide's metrics reference and its L1TEX model).
METRICS: dict[str, str] = {
    "global_load.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global_load.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global_store.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "global_store.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "shared_load.requests": "smsp__sass_inst_executed_op_shared_ld.sum",
    "shared_load.wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_load.conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_store.requests": "smsp__sass_inst_executed_op_shared_st.sum",
    "shared_store.wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "shared_store.conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}
# Read beside them, to explain a difference: the instructions behind the requests (a warp
# whose lanes are all switched off executes the instruction and makes no request), atomics
# and reductions (the simulator counts an atomic as a store), async copies (cp.async,
# which the simulator does not price: its source site carries no traffic), ldmatrix (a
# tensor core's fragments read from shared memory, which the simulator's stand-in reads
# element by element). A metric this ncu does not know is left out (tools/ncu_table.py
# asks it first) and said so in the table.
EXTRA: dict[str, str] = {
    "global_load.instructions": "smsp__sass_inst_executed_op_global_ld.sum",
    "global_store.instructions": "smsp__sass_inst_executed_op_global_st.sum",
    "global_atomic.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "global_atomic.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "global_reduction.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "global_reduction.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "async_copy.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "async_copy.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "ldmatrix.requests": "smsp__sass_inst_executed_op_ldsm.sum",
    "ldmatrix.wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "shared_atomic.requests": "smsp__sass_inst_executed_op_shared_atom.sum",
}
ALL_METRICS = {**METRICS, **EXTRA}

# Within this, a count that is not equal is "close" (the bar for rows a kernel's
# data-dependent control flow may move); past it, it "differs" and needs its explanation.
CLOSE = 0.05

# What the last run of tools/ncu_table.py on a GPU found, in short: the traffic table's note
# says it to the learner (view/devices.py, render_traffic). Written by the tool with --record.
RECORD = Path(__file__).with_name("ncu_record.json")

# result.json's sites: [pc, caller, kernel, global reads, global writes, shared reads, shared
# writes, global requests, sectors, ideal sectors, shared requests, wavefronts, ideal wavefronts]
SITE_TRAFFIC = 7


def record() -> dict | None:
    """The recorded comparison ({gpu, date, kernels, kernels_equal, ...}), None if there is none."""
    try:
        found = json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not found.get("gpu") or not isinstance(found.get("kernels"), int):
        return None
    return found


def counted() -> Msg:
    """What the traffic table says of its counts: Nsight Compute's definitions, and how the
    recorded run on a GPU compared (the course's kernels, every count equal)."""
    found = record()
    if found is None:
        return msg("report.traffic_ncu_none")
    return msg("report.traffic_ncu", gpu=found["gpu"], date=found.get("date", ""),
               equal=found.get("kernels_equal", 0), kernels=found["kernels"])


def locate() -> Path | None:
    """ncu on PATH, else where the CUDA toolkit puts it."""
    found = shutil.which("ncu")
    if found:
        return Path(found)
    for base in settings.cuda_homes():
        if (Path(base) / "bin" / "ncu").exists():
            return Path(base) / "bin" / "ncu"
    return None


def command(tool: Path, metrics: list[str], log_fd: int) -> list[str]:
    """The prefix that runs a launcher under ncu (`tool`), its report (one CSV row per kernel
    and metric, in base units) written to the descriptor `log_fd` the launcher inherits.
    Every kernel of the process is profiled: the run holds only the chosen cases."""
    return [str(tool), "--target-processes", "all", "--metrics", ",".join(metrics), "--csv",
            "--print-units", "base", "--log-file", f"/proc/self/fd/{log_fd}"]


ENVIRONMENT = {
    # Every device buffer its own allocation (cuMemAlloc: 256-byte aligned), as the simulator's
    # start on pages: a buffer that starts inside a sector would move every sector count.
    "MODULAR_DEVICE_CONTEXT_MEMORY_MANAGER_SIZE": "0",
    "LC_ALL": "C",  # numbers as 1,234.5 whatever the host's locale
}


def known_metrics(query_text: str, wanted: list[str]) -> list[str]:
    """Of `wanted`, those `ncu --query-metrics` lists (by their base name, before the roll-up)."""
    names = set(re.findall(r"[a-z0-9_]+__[a-z0-9_]+", query_text))
    return [m for m in wanted if m.rsplit(".", 1)[0] in names]


@dataclass
class Profiled:
    """One kernel launch as ncu saw it: its position in the process, its name, its metrics."""

    id: int
    name: str
    values: dict[str, float] = field(default_factory=dict)  # ncu metric -> value


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def parse(text: str) -> list[Profiled]:
    """ncu's --csv report (its default page: one row per kernel and metric, "ID", "Kernel
    Name", "Metric Name", "Metric Value"; or the raw page: one row per kernel, a column per
    metric), in the order the kernels ran. Lines that are not the report (==PROF== ...) are
    left out."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header_at = next((n for n, row in enumerate(rows) if "ID" in row and "Kernel Name" in row), None)
    if header_at is None:
        return []
    header = rows[header_at]
    col = {name: k for k, name in enumerate(header)}
    found: dict[int, Profiled] = {}
    for row in rows[header_at + 1:]:
        if len(row) != len(header) or row == header:
            continue
        ident = _number(row[col["ID"]])
        if ident is None:
            continue  # the raw page's units row
        launch = found.setdefault(int(ident), Profiled(int(ident), row[col["Kernel Name"]].split("(")[0].strip()))
        if "Metric Name" in col:
            value = _number(row[col["Metric Value"]])
            if value is not None:
                launch.values[row[col["Metric Name"]]] = value
        else:
            for name, k in col.items():
                if "__" in name:
                    value = _number(row[k])
                    if value is not None:
                        launch.values[name] = value
    return [found[k] for k in sorted(found)]


def ours(profiled: Profiled) -> dict[str, float]:
    """A profiled kernel's metrics under our names (global_load.requests, ...)."""
    return {key: profiled.values[metric] for key, metric in ALL_METRICS.items() if metric in profiled.values}


@dataclass
class Expected:
    """A launch the run makes: its case, its number within the case, its kernel's name, and
    whether it is a host function that launches kernels of its own (their names are not its)."""

    case: int
    launch: int
    kernel: str
    host: bool = False


def assign(expected: list[Expected], profiled: list[Profiled],
           module: str) -> tuple[dict[tuple[int, int], list[Profiled]], list[Profiled]]:
    """Each profiled kernel to the launch it was, walking both in the order they ran. A
    kernel's compiled name starts with `<module>_<kernel>_` (workbook/compile/ptx.py): it is the next
    launch of that kernel. Any other kernel of the puzzle's module that comes while a host
    function's launch is next belongs to that function. Returns (case, launch) -> its
    kernels, and the kernels no launch explains (the runtime's own: a fill, a copy)."""
    names = sorted({e.kernel for e in expected if not e.host})
    prefix = module.replace(".", "_") + "_"
    matched: dict[tuple[int, int], list[Profiled]] = {}
    other: list[Profiled] = []
    at = 0  # the next launch not yet passed
    for p in profiled:
        kernel = ptx.kernel_of(p.name, module, names)
        found = next((n for n in range(at, len(expected)) if not expected[n].host and expected[n].kernel == kernel),
                     None) if kernel else None
        if found is not None:
            e = expected[found]
            matched.setdefault((e.case, e.launch), []).append(p)
            at = found + 1
        elif at < len(expected) and expected[at].host and p.name.startswith(prefix):
            e = expected[at]
            matched.setdefault((e.case, e.launch), []).append(p)
        else:
            other.append(p)
    return matched, other


def sim_counts(sites: list, kernel: str) -> dict[str, float]:
    """The simulator's traffic of one kernel (sites labelled with its launch's name), in
    the same shape as `ours`: each site is one instruction, a load or a store by which it
    made more of (an atomic is a store)."""
    total: dict[str, float] = {}

    def add(key: str, value: float) -> None:
        total[key] = total.get(key, 0.0) + value

    for site in sites:
        if len(site) < SITE_TRAFFIC + 6 or site[2] != kernel:
            continue
        g_req, g_sec, _, s_req, s_wave, s_ideal = (float(v) for v in site[SITE_TRAFFIC:SITE_TRAFFIC + 6])
        if g_req:
            kind = "global_load" if site[3] >= site[4] else "global_store"
            add(f"{kind}.requests", g_req)
            add(f"{kind}.sectors", g_sec)
        if s_req:
            kind = "shared_load" if site[5] >= site[6] else "shared_store"
            add(f"{kind}.requests", s_req)
            add(f"{kind}.wavefronts", s_wave)
            add(f"{kind}.conflicts", s_wave - s_ideal)
    return total


@dataclass
class Row:
    """One quantity of one kernel, both ways counted."""

    kernel: str
    kind: str  # global_load, ...
    quantity: str  # requests, sectors, wavefronts, conflicts
    sim: float | None
    ncu: float | None
    metric: str

    @property
    def ratio(self) -> float | None:
        """sim / ncu (1.0 for two zeros; None where either is missing)."""
        if self.sim is None or self.ncu is None:
            return None
        if self.ncu == 0:
            return 1.0 if self.sim == 0 else math.inf
        return self.sim / self.ncu

    @property
    def verdict(self) -> str:
        """equal, close (within CLOSE), differs, or missing (one side has no number)."""
        r = self.ratio
        if r is None:
            return "missing"
        if self.sim == self.ncu:
            return "equal"
        return "close" if abs(r - 1.0) <= CLOSE else "differs"


def compare(kernel: str, sim: dict[str, float] | None, gpu: dict[str, float] | None) -> list[Row]:
    """A row per quantity either side counted (a kind neither touched is left out)."""
    rows = []
    for kind in KINDS:
        space = kind.split("_")[0]
        keys = [f"{kind}.{q}" for q in QUANTITIES[space]]
        if not any((sim or {}).get(k) or (gpu or {}).get(k) for k in keys):
            continue
        for key in keys:
            quantity = key.split(".")[1]
            got_sim = None if sim is None else sim.get(key, 0.0)
            got_gpu = None if gpu is None else gpu.get(key)  # None: ncu did not read that metric
            rows.append(Row(kernel, kind, quantity, got_sim, got_gpu, METRICS[key]))
    return rows



def _whole(x: float) -> bool:
    return x >= 2 and abs(x - round(x)) < 1e-9


def hints(sim: dict[str, float] | None, gpu: dict[str, float] | None) -> list[str]:
    """Guesses at why the two counts of a kernel differ, from what ncu read beside them: a
    start for the explanation docs/ncu.md gives, never the explanation itself."""
    if not gpu:
        return []
    found = []
    atomics = gpu.get("global_atomic.requests", 0.0) + gpu.get("global_reduction.requests", 0.0)
    if atomics:
        found.append(f"{atomics:g} atomic or reduction requests on the GPU (op_atom, op_red): "
                     "the simulator counts an atomic as a global store")
    if gpu.get("ldmatrix.requests"):
        found.append(f"{gpu['ldmatrix.requests']:g} ldmatrix instructions on the GPU (op_ldsm, "
                     f"{gpu.get('ldmatrix.wavefronts', 0.0):g} wavefronts): fragments the simulator reads element "
                     "by element, counted as shared loads there")
    if gpu.get("shared_atomic.requests"):
        found.append(f"{gpu['shared_atomic.requests']:g} shared-memory atomics on the GPU (op_shared_atom): the "
                     "simulator counts an atomic as a shared store")
    if gpu.get("async_copy.requests"):
        found.append(f"{gpu['async_copy.requests']:g} async-copy requests on the GPU (op_ldgsts, cp.async, "
                     f"{gpu.get('async_copy.sectors', 0.0):g} sectors): the simulator does not price async copies")
    for kind in ("global_load", "global_store"):
        made, asked = gpu.get(f"{kind}.instructions"), gpu.get(f"{kind}.requests")
        if made is not None and asked is not None and made > asked:
            found.append(f"{kind}: {made - asked:g} of {made:g} instructions made no request (every lane "
                         "switched off): neither side counts them")
    if sim is None:
        return [*found, "the simulator did not run this kernel"]
    for kind in KINDS:
        mine, theirs = sim.get(f"{kind}.requests", 0.0), gpu.get(f"{kind}.requests")
        cost = "sectors" if kind.startswith("global") else "wavefronts"
        if theirs is None or (not mine and not theirs):
            continue
        if mine and not theirs:
            found.append(f"{kind}: only the simulator's ({mine:g} requests): the GPU build made none "
                         "(a value kept in a register, an access the compiler moved)")
        elif theirs and not mine:
            found.append(f"{kind}: only the GPU's ({theirs:g} requests): accesses the simulator does not see "
                         "(a library's own memory, a vector wider than 16 bytes)")
        elif mine != theirs and _whole(mine / theirs):
            found.append(f"{kind}: {mine / theirs:g} simulator accesses for each GPU instruction: the GPU "
                         "build moved them in wider loads or stores")
        elif mine != theirs and _whole(theirs / mine):
            found.append(f"{kind}: {theirs / mine:g} GPU instructions for each simulator access: the GPU "
                         "build split them (or the CPU build merged them)")
        elif mine == theirs and sim.get(f"{kind}.{cost}", 0.0) != gpu.get(f"{kind}.{cost}", 0.0):
            found.append(f"{kind}: the same requests, other {cost}: where a buffer or shared array "
                         "starts, or addresses that depend on the data")
    return found


def summary(puzzles: list[dict]) -> dict:
    """How the rows came out: per quantity, how many equal, close, differ; and kernels whose
    every row is equal."""
    counts: dict[str, dict[str, int]] = {}
    kernels = equal = 0
    for p in puzzles:
        for case in p.get("cases", []):
            for k in case["kernels"]:
                rows = [r for r in k["rows"] if r["verdict"] != "missing"]
                if not rows:
                    continue
                kernels += 1
                equal += all(r["verdict"] == "equal" for r in rows)
                for r in rows:
                    by = counts.setdefault(f"{r['kind'].split('_')[0]} {r['quantity']}", {})
                    by[r["verdict"]] = by.get(r["verdict"], 0) + 1
    return {"kernels": kernels, "kernels_equal": equal, "rows": counts}


def _pair(row: dict | None) -> str:
    if row is None:
        return ""
    sim = "–" if row["sim"] is None else f"{row['sim']:g}"
    gpu = "–" if row["ncu"] is None else f"{row['ncu']:g}"
    mark = {"equal": "", "close": " ≈", "differs": " ≠", "missing": ""}[row["verdict"]]
    return f"{sim} / {gpu}{mark}"


def markdown(table: dict) -> str:
    """docs/ncu.md's table from the tool's JSON."""
    out = ["# The simulator's traffic counters against Nsight Compute", ""]
    where = table.get("gpu") or "no GPU (the simulator's side alone)"
    out += [f"Written by `{table.get('command', 'python tools/ncu_table.py')}` on {where}"
            f"{' (' + table['target'] + ')' if table.get('target') else ''}, {table.get('ncu') or 'no ncu'}, "
            f"seed {table.get('seed')}, commit {table.get('commit') or '?'}, {table.get('date', '')}. "
            "Each kernel ran one case (the same inputs on both sides): the reference solution through the "
            "simulator and, once, on the GPU under `ncu`. Each cell is *simulator / ncu*; ≈ within 5 %, "
            "≠ further apart.", ""]
    out += ["| our number | Nsight Compute metric |", "|---|---|"]
    out += [f"| {key.replace('_', ' ').replace('.', ': ')} | `{metric}` |" for key, metric in table["legend"].items()]
    dropped = table.get("dropped_metrics") or []
    if dropped:
        out += ["", "Not known to this ncu, so not read: " + ", ".join(f"`{m}`" for m in dropped) + "."]
    s = table.get("summary", {})
    patterns = table.get("patterns") or {}
    out += ["", f"**The course: {s.get('kernels', 0)} kernels compared, {s.get('kernels_equal', 0)} equal in every "
            f"count.** The pinned patterns (p92, below): {patterns.get('kernels', 0)} compared, "
            f"{patterns.get('kernels_equal', 0)} equal.", ""]
    out += ["| count | equal | close | differs |", "|---|---|---|---|"]
    for name, by in sorted(s.get("rows", {}).items()):
        out.append(f"| {name} | {by.get('equal', 0)} | {by.get('close', 0)} | {by.get('differs', 0)} |")
    out += ["", "## Per kernel", "",
            "| puzzle | case | kernel | access | requests | sectors / wavefronts | bank conflicts |",
            "|---|---|---|---|---|---|---|"]
    differences = []
    for p in table.get("puzzles", []):
        if "error" in p:
            out.append(f"| {p['puzzle']} | not measured: {p['error'][:80]} | | | | | |")
            continue
        for case in p.get("cases", []):
            for k in case["kernels"]:
                by_kind: dict[str, dict[str, dict]] = {}
                for r in k["rows"]:
                    by_kind.setdefault(r["kind"], {})[r["quantity"]] = r
                    if r["verdict"] in ("differs", "close"):
                        differences.append((p["puzzle"], case, k, r))
                if not by_kind:
                    out.append(f"| {p['puzzle']} | {case['part']}: {case['name']} | `{k['kernel']}` | no traffic "
                               f"{'(the simulator did not run it)' if k['sim'] is None else ''} | | | |")
                for kind, q in by_kind.items():
                    cost = q.get("sectors") or q.get("wavefronts")
                    out.append(f"| {p['puzzle']} | {case['part']}: {case['name']} | `{k['kernel']}` | "
                               f"{kind.replace('_', ' ')} | {_pair(q.get('requests'))} | {_pair(cost)} | "
                               f"{_pair(q.get('conflicts'))} |")
    out += ["", "## Differences", ""]
    if not differences:
        out.append("None.")
    seen = set()
    why = table.get("explanations") or {}  # tools/ncu_explanations.toml: "p12.partial_dots.shared_load" -> why
    for pid, case, k, r in differences:
        out.append(f"- {pid} `{k['kernel']}` ({case['name']}), {r['kind'].replace('_', ' ')} {r['quantity']}: "
                   f"simulator {r['sim']:g}, ncu {r['ncu']:g}.")
        if (pid, k["kernel"]) not in seen:
            seen.add((pid, k["kernel"]))
            out += [f"  - hint: {h}" for h in k.get("hints", [])]
        key = f"{pid}.{k['kernel']}.{r['kind']}"
        if key in why and key not in seen:
            seen.add(key)
            told = why[key]
            out.append(f"  - why{'' if told.get('settled', True) else ' (not settled)'}: {told['why']}")
    pins = table.get("pins") or []
    if pins:
        out += ["", "## The pinned patterns (tests/data/simbook/puzzles/p92)", "",
                "Requests and sectors (global) or requests, wavefronts and conflicts (shared), one warp: what "
                "counts.toml pins (tests/test_traffic_patterns.py holds the simulator to it), what ncu counted, "
                "what the simulator counted.", "",
                "| kernel | access | pinned | ncu | simulator | |", "|---|---|---|---|---|---|"]
        for x in pins:
            mark = "" if x["ncu_agrees"] is None else ("" if x["ncu_agrees"] else "ncu differs")
            out.append(f"| `{x['kernel']}` | {x['kind'].replace('_', ' ')} | {x['pinned']} | {x['ncu'] or '–'} | "
                       f"{x['sim'] or '–'} | {mark} |")
    return "\n".join(out) + "\n"
