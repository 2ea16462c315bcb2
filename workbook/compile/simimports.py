"""Points a learner's Mojo file at the simulator, by rewriting its import lines only.

The kernel itself is compiled unchanged by the real Mojo compiler; only the
names that make it a GPU kernel (thread ids, barrier(), shared memory) come
from workbook/mojo/wbsim.mojo (and warps from wbwarp.mojo) instead of
`max.gpu` and `layout`; `elementwise` and `DeviceContext`, which launch kernels
from host code, come from wbhost.mojo.
Every line keeps its number, so a compiler error points at the learner's own line.

Only the import shapes below are accepted. Anything else GPU-specific (the
tile-level async copy, ld_matrix and wgmma, `import max.gpu`) is refused with a message naming the
line: the simulator never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# module -> name -> the simulator's module that provides it in its place
WARP_NAMES = ("shuffle_down", "shuffle_up", "shuffle_xor", "shuffle_idx", "sum", "max", "min", "prefix_sum",
              "broadcast", "vote", "lane_group_sum", "lane_group_sum_and_broadcast", "lane_group_max",
              "lane_group_max_and_broadcast", "lane_group_min")
PROVIDED = {
    "max.gpu": {**dict.fromkeys(("thread_idx", "block_idx", "block_dim", "grid_dim", "global_idx", "barrier",
                                 "cluster_dim", "cluster_idx", "block_id_in_cluster"), "wbsim"),
                "lane_id": "wbwarp", "WARP_SIZE": "wbwarp"},
    # Clusters: the blocks of one run together on the simulator; elect_one_sync is a warp
    # operation there.
    "max.gpu.primitives.cluster": {**dict.fromkeys(("block_rank_in_cluster", "cluster_arrive", "cluster_arrive_relaxed",
                                                    "cluster_wait", "cluster_sync", "cluster_sync_relaxed"), "wbsim"),
                                   "elect_one_sync": "wbwarp"},
    "max.gpu.sync": dict.fromkeys(("barrier", "mbarrier_init", "mbarrier_arrive", "mbarrier_test_wait",
                                   "mbarrier_try_wait_parity_shared"), "wbsim"),
    "layout": {"stack_allocation": "wbsim"},
    "layout.tile_tensor": {"stack_allocation": "wbsim"},
    "max.gpu.primitives": {"block": "wbsim"},
    "max.gpu.primitives.warp": dict.fromkeys(WARP_NAMES, "wbwarp"),
    # Every address space is the CPU's there: accesses through a SHARED pointer would
    # escape the instrumentation that watches them.
    "max.gpu.memory": dict.fromkeys(("AddressSpace", "async_copy", "async_copy_commit_group", "async_copy_wait_group",
                                     "async_copy_wait_all"), "wbsim"),
    # elementwise launches a kernel from host code: the simulator's makes the same launch.
    "max.algorithm.functional": {"elementwise": "wbhost"},
    "max.algorithm": {"elementwise": "wbhost"},
    # A host function's ctx.enqueue_function launches on the simulator (p17, p19).
    # Its memset and copies run there too, on a DeviceBuffer over memory it handed out.
    "max.gpu.host": {"DeviceContext": "wbhost", "DeviceBuffer": "wbhost"},
    # Tensor cores: the warp operation, with NVIDIA's lane maps (p33).
    "max.gpu.compute.mma": {"mma": "wbmma"},
    "layout.tensor_core": {"TensorCore": "wbmma"},
}
# Names the simulator refuses even where their module is otherwise kept: the tile-level
# async copy (it would run as a plain copy, and a read before its wait would go unseen),
# and the pointer-level stack_allocation (with address_space=SHARED it would be an array
# on each simulated thread's own stack: one per thread, not one per block).
REFUSED = {("layout", "copy_dram_to_sram_async"), ("layout.layout_tensor", "copy_dram_to_sram_async"),
           ("std.memory", "stack_allocation"), ("memory", "stack_allocation"),
           ("max.gpu.host", "HostBuffer")}
# The DeviceContext and DeviceBuffer calls wbhost.mojo simulates. Any other of their calls
# (creating buffers, host buffers, mapping to the host) is refused with its line before the
# build: a compile error inside the simulator's module would be blamed on the learner.
SIMULATED_CALLS = {"enqueue_function", "enqueue_memset", "enqueue_copy", "enqueue_fill"}
CALL = re.compile(r"\.\s*(enqueue_\w+|create_buffer\w*|create_host_buffer\w*|map_to_host)\s*[\[(]")
# Modules imported as a whole: `from max.gpu.primitives import warp` -> `import wbwarp as warp`.
MODULES = {("max.gpu.primitives", "warp"): "wbwarp"}
# Modules whose other names are fine to keep on the CPU (host code, types).
KEEP = {"layout", "layout.tile_tensor", "layout.tile_layout", "max.gpu.host", "max.algorithm.functional",
        "max.algorithm"}
GPU_MODULE = re.compile(r"^max\.gpu(\.|$)")
FROM = re.compile(r"^(\s*)from\s+([\w.]+)\s+import\s+(.*)$")
IMPORT = re.compile(r"^\s*import\s+([\w.]+)")


@dataclass
class Unsupported(Exception):
    """An import the simulator can't stand in for: its line, the import as Mojo spells it (code
    reads the same in every language), and the file it is in once known."""

    line: int
    what: str
    file: str = ""

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def rewrite(source: str, sim_module: str = "wbsim") -> str:
    """The source with its GPU imports taken from `sim_module`; raises Unsupported."""
    lines = source.split("\n")
    out = list(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        call = CALL.search(line.split("#")[0])
        if call and call.group(1) not in SIMULATED_CALLS:
            raise Unsupported(i + 1, f".{call.group(1)}(...)")
        plain = IMPORT.match(line)
        if plain and GPU_MODULE.match(plain.group(1)):
            raise Unsupported(i + 1, f"import {plain.group(1)}")
        m = FROM.match(line)
        if not m:
            i += 1
            continue
        indent, module, rest = m.groups()
        end, names = _statement(lines, i, rest)
        for name, _ in names:
            if (module, name) in REFUSED:
                raise Unsupported(i + 1, f"from {module} import {name}")
        if module in PROVIDED or GPU_MODULE.match(module):
            out[i:end + 1] = _replace(indent, module, names, i + 1, sim_module, end - i + 1)
        i = end + 1
    return "\n".join(out)


def _statement(lines: list[str], start: int, rest: str) -> tuple[int, list[tuple[str, str]]]:
    """The last line of an import statement and its (name, alias) pairs."""
    text = rest.split("#")[0].strip()
    end = start
    if text.startswith("("):
        while ")" not in text and end + 1 < len(lines):
            end += 1
            text += " " + lines[end].split("#")[0].strip()
        text = text.strip("() ")
    else:
        while text.endswith("\\") and end + 1 < len(lines):
            end += 1
            text = text[:-1] + " " + lines[end].split("#")[0].strip()
    names = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, alias = item.partition(" as ")
        names.append((name.strip(), alias.strip()))
    return end, names


def _replace(indent: str, module: str, names: list[tuple[str, str]], line: int, sim_module: str,
             count: int) -> list[str]:
    provided = PROVIDED.get(module, {})
    to_sim: dict[str, list[str]] = {}
    kept, whole = [], []
    for name, alias in names:
        spelled = f"{name} as {alias}" if alias else name
        if name == "*":
            raise Unsupported(line, f"from {module} import *")
        if (module, name) in MODULES:
            whole.append(f"import {MODULES[(module, name)]} as {alias or name}")
        elif name in provided:
            target = sim_module if provided[name] == "wbsim" else provided[name]
            to_sim.setdefault(target, []).append(spelled)
        elif module in KEEP:
            kept.append(spelled)
        else:
            raise Unsupported(line, f"from {module} import {name}")
    statements = []
    if kept:
        statements.append(f"from {module} import {', '.join(kept)}")
    for target, spelled in to_sim.items():
        statements.append(f"from {target} import {', '.join(spelled)}")
    statements += whole
    return [indent + "; ".join(statements)] + [""] * (count - 1)
