"""Points a learner's Mojo file at the simulator, by rewriting its import lines only.

The kernel itself is compiled unchanged by the real Mojo compiler; only the
names that make it a GPU kernel (thread ids, barrier(), shared memory) come
from workbook/mojo/wbsim.mojo instead of `max.gpu` and `layout`. Every line
keeps its number, so a compiler error points at the learner's own line.

Only the import shapes below are accepted. Anything else GPU-specific (warp
shuffles, async copies, `import max.gpu`) is refused with a message naming
the line: the simulator never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# module -> the names the simulator provides in its place
PROVIDED = {
    "max.gpu": {"thread_idx", "block_idx", "block_dim", "grid_dim", "global_idx", "barrier"},
    "max.gpu.sync": {"barrier"},
    "layout": {"stack_allocation"},
    "layout.tile_tensor": {"stack_allocation"},
    "max.gpu.primitives": {"block"},
    # Every address space is the CPU's there: accesses through a SHARED pointer would
    # escape the instrumentation that watches them.
    "max.gpu.memory": {"AddressSpace"},
}
# Modules whose other names are fine to keep on the CPU (host code, types).
KEEP = {"layout", "layout.tile_tensor", "layout.tile_layout", "max.gpu.host"}
GPU_MODULE = re.compile(r"^max\.gpu(\.|$)")
FROM = re.compile(r"^(\s*)from\s+([\w.]+)\s+import\s+(.*)$")
IMPORT = re.compile(r"^\s*import\s+([\w.]+)")


@dataclass
class Unsupported(Exception):
    """An import the simulator can't stand in for."""

    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def rewrite(source: str, sim_module: str = "wbsim") -> str:
    """The source with its GPU imports taken from `sim_module`; raises Unsupported."""
    lines = source.split("\n")
    out = list(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        plain = IMPORT.match(line)
        if plain and GPU_MODULE.match(plain.group(1)):
            raise Unsupported(i + 1, f"import {plain.group(1)}")
        m = FROM.match(line)
        if not m:
            i += 1
            continue
        indent, module, rest = m.groups()
        end, names = _statement(lines, i, rest)
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
    provided = PROVIDED.get(module, set())
    to_sim, kept = [], []
    for name, alias in names:
        spelled = f"{name} as {alias}" if alias else name
        if name == "*":
            raise Unsupported(line, f"from {module} import *")
        if name in provided:
            to_sim.append(spelled)
        elif module in KEEP:
            kept.append(spelled)
        else:
            raise Unsupported(line, f"{name} from {module}")
    statements = []
    if kept:
        statements.append(f"from {module} import {', '.join(kept)}")
    if to_sim:
        statements.append(f"from {sim_module} import {', '.join(to_sim)}")
    return [indent + "; ".join(statements)] + [""] * (count - 1)
