"""Nsight Compute's counters beside the simulator's: the proof behind the traffic tables.

The simulator prices each warp's request by NVIDIA's rules (wbsim.c, "Memory traffic");
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
import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import ptx, settings

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
# which the simulator does not price: its source site carries no traffic).
EXTRA: dict[str, str] = {
    "global_load.instructions": "smsp__sass_inst_executed_op_global_ld.sum",
    "global_store.instructions": "smsp__sass_inst_executed_op_global_st.sum",
    "global_atomic.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "global_atomic.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "global_reduction.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "global_reduction.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "async_copy.requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "async_copy.sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
}
ALL_METRICS = {**METRICS, **EXTRA}

# Within this, a count that is not equal is "close" (the bar for rows a kernel's
# data-dependent control flow may move); past it, it "differs" and needs its explanation.
CLOSE = 0.05

# result.json's sites: [pc, caller, kernel, global reads, global writes, shared reads, shared
# writes, global requests, sectors, ideal sectors, shared requests, wavefronts, ideal wavefronts]
SITE_TRAFFIC = 7


def locate() -> Path | None:
    """ncu on PATH, else where the CUDA toolkit puts it."""
    found = shutil.which("ncu")
    if found:
        return Path(found)
    for base in settings.cuda_homes():
        if (Path(base) / "bin" / "ncu").exists():
            return Path(base) / "bin" / "ncu"
    return None


def command(binary: Path, metrics: list[str], log_fd: int) -> list[str]:
    """The prefix that runs a launcher under ncu, its report (one CSV row per kernel and
    metric, in base units) written to the descriptor `log_fd` the launcher inherits.
    Every kernel of the process is profiled: the run holds only the chosen cases."""
    return [str(binary), "--target-processes", "all", "--metrics", ",".join(metrics), "--csv",
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
    """A launch the run makes: its case, its number within the case, its kernel's name."""

    case: int
    launch: int
    kernel: str


def assign(expected: list[Expected], profiled: list[Profiled], module: str) -> tuple[dict[tuple[int, int], Profiled],
                                                                                     list[Profiled]]:
    """Each profiled kernel to the launch it was, in order: its compiled name starts with
    `<module>_<kernel>_` (workbook/ptx.py), and the k-th launch of a kernel is the k-th
    profiled kernel of that name. Returns (case, launch) -> profiled, and the kernels no
    launch of the puzzle explains (the runtime's own, a fill)."""
    names = sorted({e.kernel for e in expected})
    waiting = list(expected)
    matched: dict[tuple[int, int], Profiled] = {}
    other: list[Profiled] = []
    for p in profiled:
        kernel = ptx.kernel_of(p.name, module, names)
        at = next((n for n, e in enumerate(waiting) if e.kernel == kernel), None) if kernel else None
        if at is None:
            other.append(p)
            continue
        e = waiting.pop(at)
        matched[(e.case, e.launch)] = p
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

