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
HAZARDS = re.compile(r"\[(\d+) hazards?\]")


def locate() -> Path | None:
    """compute-sanitizer on PATH, else where the CUDA toolkit puts it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return Path(found)
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", "/opt/cuda"):
        if base and (Path(base) / "bin" / "compute-sanitizer").exists():
            return Path(base) / "bin" / "compute-sanitizer"
    return None


def wrapper(tool: str, log: Path) -> list[str]:
    """The command prefix that runs a process under one tool, its report in `log`."""
    binary = locate()
    assert binary is not None
    args = [str(binary), "--tool", tool, "--log-file", str(log), "--print-limit", "20",
            "--show-backtrace", "no", "--error-exitcode", "0"]
    if tool == "racecheck":
        args += ["--racecheck-report", "hazard"]
    if tool == "initcheck":
        args += ["--track-unused-memory", "no"]
    return args


def parse(tool: str, text: str, learner_files: dict[str, str] | None = None) -> list[Finding]:
    """Findings from a compute-sanitizer log, merged when kind, kernel and line repeat.

    `learner_files` maps a file name as the tool prints it (any suffix) to the
    path shown to the learner."""
    learner_files = learner_files or {}
    lines = [PREFIX.sub("", line.rstrip()) for line in text.splitlines() if line.startswith("=")]
    findings: list[Finding] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        head = _kind(tool, line)
        if head is None:
            i += 1
            continue
        block = [line]
        i += 1
        while i < len(lines) and lines[i].startswith(" ") and _kind(tool, lines[i].strip()) is None:
            block.append(lines[i].strip())
            i += 1
        findings.append(_finding(tool, head, block, learner_files))
    return _merge(findings)


def _kind(tool: str, line: str) -> str | None:
    if line.startswith(("Invalid ", "Misaligned ", "Uninitialized ", "Out-of-range ", "Program hit ",
                        "Barrier error", "Illegal ", "Malloc/Free error")):
        return line.split(" at ")[0].rstrip(":")
    m = re.match(r"(?:Error|Warning|ERROR|WARNING): Race reported between (\w+) access .* and (\w+) access", line)
    if m:
        return f"Race: {m.group(1)} / {m.group(2)} (shared memory)"
    m = re.match(r"(?:Error|Warning|ERROR|WARNING): Race reported between (\w+) access", line)
    if m:
        return f"Race: {m.group(1)} (shared memory)"
    if tool == "racecheck" and re.match(r"(?:Error|Warning): .*(?:hazard|race)", line, re.IGNORECASE):
        return line.split(":", 1)[1].strip().split(" at ")[0]
    return None


def _finding(tool: str, kind: str, block: list[str], learner_files: dict[str, str]) -> Finding:
    kernel, file, line, count = "", "", None, 1
    text = " ".join(block)
    m = LOCATION.search(text)
    if m:
        where = m.group("where")
        kernel = _kernel_name(where)
        file, line = _learner_path(m.group("file"), learner_files), int(m.group("line"))
    else:
        k = KERNEL_ONLY.search(text)
        if k:
            kernel = _kernel_name(k.group("kernel"))
    h = HAZARDS.search(text)
    if h:
        count = int(h.group(1))
    details = [b for b in block[1:] if b.startswith(("by thread", "Address", "and is"))]
    return Finding(tool, kind, kernel, file, line, count, "; ".join(details[:2]))


def _kernel_name(where: str) -> str:
    """A readable kernel name out of a mangled or decorated one."""
    name = where.split("+0x")[0].split("(")[0].strip()
    for known in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:kernel|_gpu\w*)", name):
        return known
    return name.split("::")[-1][:80]


def _learner_path(printed: str, learner_files: dict[str, str]) -> str:
    for suffix, shown in learner_files.items():
        if printed.endswith(suffix):
            return shown
    return printed


def _merge(findings: list[Finding]) -> list[Finding]:
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.tool, f.kind, f.kernel, f.file, f.line)
        if key in merged:
            merged[key].count += f.count
        else:
            merged[key] = f
    return list(merged.values())
