"""NVIDIA compute-sanitizer: the GPU bugs a plain run can miss, found by name.

memcheck finds out-of-bounds and misaligned accesses, racecheck finds
shared-memory hazards (a missing barrier()), initcheck finds reads of device
memory nobody wrote. The workbook runs a GPU part once under each tool and
turns the tool's report into findings: which kernel, which line, what kind.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from .results import Finding

TOOLS = ("memcheck", "racecheck", "initcheck")
PREFIX = re.compile(r"^=+ ?")
# "at kernel_name+0x1b0 in /path/file.mojo:45" (also "at 0x1b0 in /path/file.mojo:45:kernel(...)")
LOCATION = re.compile(r"at (?P<where>.+?) in (?P<file>[^\s:]+(?:\.mojo|\.py|\.cu)?):(?P<line>\d+)")
KERNEL_ONLY = re.compile(r"at (?P<kernel>[\w:.$<>\[\], ]+?)\+0x[0-9a-f]+")


def locate() -> Path | None:
    """compute-sanitizer on PATH, else where the CUDA toolkit puts it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return Path(found)
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/opt/cuda"):
        if base and (Path(base) / "bin" / "compute-sanitizer").exists():
            return Path(base) / "bin" / "compute-sanitizer"
    return None


def environment(tool: str) -> dict[str, str]:
    """MAX hands out device memory from a pool of its own, so a write past the end of
    an output lands in the pool and memcheck can't see it. With no pool (seen on an
    H100 with max 26.7), every buffer is its own allocation and the write is caught."""
    return {"MODULAR_DEVICE_CONTEXT_MEMORY_MANAGER_SIZE": "0"} if tool in ("memcheck", "initcheck") else {}


def wrapper(tool: str, log: Path) -> list[str]:
    """The command prefix that runs a process under one tool, its report in `log`."""
    binary = locate()
    assert binary is not None
    args = [str(binary), "--tool", tool, "--log-file", str(log), "--print-limit", "20",
            "--show-backtrace", "no", "--error-exitcode", "0"]
    if tool == "racecheck":
        args += ["--racecheck-report", "hazard"]
    return args


def parse(tool: str, text: str, learner_files: dict[str, str] | None = None) -> list[Finding]:
    """Findings from a compute-sanitizer log, merged when kind, kernel and place repeat.

    `learner_files` maps a puzzle file ("op/softmax.mojo") to the path shown to
    the learner. Kernels compiled by MAX carry no line numbers, but their
    names start with their module ("op_softmax_softmax_gpu_kernel..."), which
    is enough to name the learner's file and function."""
    learner_files = learner_files or {}
    lines = [PREFIX.sub("", line.rstrip()) for line in text.splitlines() if line.startswith("=")]
    findings: list[Finding] = []
    block: list[str] = []
    for line in lines + [""]:
        if line.startswith(" ") and block:
            block.append(line.strip())
            continue
        if block:
            findings.append(_finding(tool, block, learner_files))
        block = [line.strip()] if _kind(line.strip()) else []
    return _merge(findings)


RACE = re.compile(r"Potential (RAW|WAR|WAW) hazard detected at __(shared|global)__")
RACE_MEANING = {"RAW": "a read raced a write", "WAR": "a write raced a read", "WAW": "two writes raced"}


def _kind(line: str) -> str | None:
    """The finding a block's first line announces, in plain words, or None."""
    line = re.sub(r"^(?:Error|Warning|ERROR|WARNING): ", "", line)
    m = RACE.match(line)
    if m:
        return f"{m.group(1)} hazard on {m.group(2)} memory: {RACE_MEANING[m.group(1)]}"
    if line.startswith(("Invalid ", "Misaligned ", "Uninitialized ", "Out-of-range ", "Program hit ",
                        "Barrier error", "Illegal ", "Race reported")):
        return line.split(" at ")[0].rstrip(": ")
    return None


def _finding(tool: str, block: list[str], learner_files: dict[str, str]) -> Finding:
    text = " ".join(block)
    kernel, file, line = "", "", None
    m = LOCATION.search(text)
    if m:
        kernel, file, line = m.group("where"), m.group("file"), int(m.group("line"))
    else:
        k = KERNEL_ONLY.search(text)
        kernel = k.group("kernel") if k else ""
    kernel, owner = _kernel_name(kernel, learner_files)
    file = _learner_path(file, learner_files) if file else owner
    details = [b.split(" at ")[0] for b in block[1:]
               if b.startswith(("by thread", "Address", "Write Thread", "Read Thread"))]
    return Finding(tool, _kind(block[0]) or block[0], kernel, file, line, 1, "; ".join(details[:2]))


def _kernel_name(mangled: str, learner_files: dict[str, str]) -> tuple[str, str]:
    """(readable kernel name, learner file it lives in or "") from a compiled kernel's name."""
    name = mangled.split("+0x")[0].split("(")[0].strip()
    for module, shown in learner_files.items():
        prefix = module.removesuffix(".mojo").replace("/", "_") + "_"
        if module.endswith(".mojo") and name.startswith(prefix):
            rest = name[len(prefix):]
            m = re.match(r"[A-Za-z_]*?kernel|[A-Za-z_]+?(?=\d|$)", rest)
            return (m.group(0) if m else rest), shown
    m = re.search(r"[A-Za-z_]\w*?kernel", name)
    return (m.group(0) if m else name[:80]), ""


def _learner_path(printed: str, learner_files: dict[str, str]) -> str:
    for module, shown in learner_files.items():
        if printed.endswith(module):
            return shown
    return printed


def _merge(findings: list[Finding]) -> list[Finding]:
    """One finding per kind and place. A failed CUDA call after a real error is its
    echo ("Program hit CUDA_ERROR_LAUNCH_FAILED"), dropped when the cause is there."""
    if any(not f.kind.startswith("Program hit") for f in findings):
        findings = [f for f in findings if not f.kind.startswith("Program hit")]
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.tool, f.kind, f.kernel, f.file, f.line)
        if key in merged:
            merged[key].count += f.count
        else:
            merged[key] = f
    return list(merged.values())
