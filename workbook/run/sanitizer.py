"""NVIDIA compute-sanitizer: the GPU bugs a plain run can miss, found by name.

memcheck finds out-of-bounds and misaligned accesses, racecheck finds
shared-memory hazards (a missing barrier()), initcheck finds reads of device
memory nobody wrote. The workbook runs a puzzle's GPU launcher once under a
tool, over every case (so the case with the most threads and blocks is
among them), and turns the tool's report into findings: which kernel, which
line, what kind. Warnings count: racecheck reports a race between threads of
one warp as a "Warning (Warp Level Programming)", and since Volta the threads
of a warp are not in lockstep, so that is a real race.

This module also holds the policy of when to run it (`choose`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..core import settings
from ..core.i18n import Msg, msg
from ..core.results import Finding

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
PREFIX = re.compile(r"^=+ ?")
# "at kernel_name+0x1b0 in /path/file.mojo:45" (also "at 0x1b0 in /path/file.mojo:45:kernel(...)")
LOCATION = re.compile(r"at (?P<where>.+?) in (?P<file>[^\s:]+(?:\.mojo|\.py|\.cu)?):(?P<line>\d+)")
KERNEL_ONLY = re.compile(r"at (?P<kernel>[\w:.$<>\[\], ]+?)\+0x[0-9a-f]+")
RACE = re.compile(r"Potential (RAW|WAR|WAW) hazard detected at __(shared|global)__")
SEVERITY = re.compile(r"^(?:Error|Warning|ERROR|WARNING)(?: \([^)]*\))?: (?:\([^)]*\) )?")
RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")


def locate() -> Path | None:
    """compute-sanitizer on PATH, else where the CUDA toolkit puts it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return Path(found)
    for base in settings.cuda_homes():
        if (Path(base) / "bin" / "compute-sanitizer").exists():
            return Path(base) / "bin" / "compute-sanitizer"
    return None


# What "auto" runs: a missing barrier and a write past the end both pass plain GPU runs.
AUTO = ("memcheck", "racecheck")


def barrier_in_branch(source: str) -> bool:
    """Whether a barrier() sits inside an `if`, `elif` or `else` of the kernel's code:
    then synccheck (barriers some threads of a block skip) runs by default too."""
    lines = source.splitlines()
    for n, line in enumerate(lines):
        if "barrier(" not in line or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        for above in reversed(lines[:n]):
            stripped = above.lstrip()
            if stripped and not stripped.startswith("#") and len(above) - len(stripped) < indent:
                if stripped.startswith(("if ", "elif ", "else")):
                    return True
                if stripped.startswith(("def ", "struct ")):
                    break
                indent = len(above) - len(stripped)
    return False


def choose(mode: str, gpu_runs: bool, clean_before: set[str], branches: bool = False
           ) -> tuple[tuple[str, ...], Msg | None]:
    """Which tools to run on a GPU part, and a note for the report when none runs.

    `mode`: "all" (--sanitize: every tool), "auto" (memcheck and racecheck, where
    a GPU and the tool are here, once per content: `clean_before` names the tools
    this code already passed; synccheck too where `branches`: a barrier() in an
    `if`), "off" (--no-sanitize)."""
    if mode == "off":
        return (), None
    if not gpu_runs:
        return (), msg("sanitizer.needs_gpu") if mode == "all" else None
    if locate() is None:
        return (), msg("sanitizer.missing")
    if mode == "all":
        return TOOLS, None
    tools = tuple(t for t in (*AUTO, *(("synccheck",) if branches else ())) if t not in clean_before)
    return tools, None if tools else msg("sanitizer.clean_before")


def environment(tool: str) -> dict[str, str]:
    """MAX's device context hands out memory from a pool of its own, so a write past
    the end of a buffer lands in the pool and memcheck can't see it. With no pool
    (seen on an H100 with max 26.7) every buffer is its own allocation."""
    return {"MODULAR_DEVICE_CONTEXT_MEMORY_MANAGER_SIZE": "0"} if tool in ("memcheck", "initcheck") else {}


LOG_CAP = 8 << 20  # a report past this is cut (each kind of finding is printed 20 times at most)


def wrapper(tool: str, log_fd: int) -> list[str]:
    """The command prefix that runs a program under one tool, its report written to the
    descriptor `log_fd` it inherits (workbook/child/channel.py: no path in the run folder, or
    anywhere the program could replace)."""
    binary = locate()
    assert binary is not None
    args = [str(binary), "--tool", tool, "--log-file", f"/proc/self/fd/{log_fd}", "--print-limit", "20",
            "--show-backtrace", "no", "--error-exitcode", "0"]
    if tool == "racecheck":
        args += ["--racecheck-report", "hazard"]
    return args


def parse(tool: str, text: str, learner_files: dict[str, str] | None = None) -> list[Finding]:
    """Findings from a compute-sanitizer log, merged when kind, kernel and place repeat.

    `learner_files` maps a puzzle file ("op/softmax.mojo") to the path shown to
    the learner. A kernel's compiled name starts with its module
    ("op_softmax_softmax_gpu_kernel..."), which names the learner's file when
    the tool gives no line."""
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
    findings = _merge(findings)
    reported = _summary_count(text)
    if reported and not findings:  # the tool counted problems we could not read: never pass them
        findings.append(Finding(tool, "unparsed", msg("finding.unparsed", tool=tool, n=reported)))
    return findings


def _summary_count(text: str) -> int:
    race = RACE_SUMMARY.search(text)
    if race:
        return int(race.group(2)) + int(race.group(3)) or int(race.group(1))
    errors = ERROR_SUMMARY.search(text)
    return int(errors.group(1)) if errors else 0


def _kind(line: str) -> tuple[str, Msg] | None:
    """The finding a block's first line announces, as (key, message), or None."""
    line = SEVERITY.sub("", line)
    m = RACE.match(line)
    if m:
        return f"race_{m.group(2)}", msg("finding.race_" + m.group(1).lower(), space=m.group(2))
    if line.startswith(("Invalid ", "Misaligned ", "Out-of-range ", "Illegal ")):
        return "invalid_access", msg("finding.invalid_access", what=line.split(" at ")[0].rstrip(": "))
    if line.startswith("Uninitialized "):
        return "uninitialized", msg("finding.uninitialized", what=line.split(" at ")[0].rstrip(": "))
    if line.startswith(("Barrier error", "Race reported")):
        return "barrier", msg("finding.barrier_error", what=line.split(" at ")[0].rstrip(": "))
    if line.startswith("Program hit "):
        return "launch_failed", msg("finding.launch_failed", what=line.split(" on CUDA API")[0])
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
    key, message = _kind(block[0]) or ("other", msg("finding.other", what=block[0]))
    return Finding(tool, key, message, kernel, file, line, 1, detail="; ".join(details[:2]))


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
    if any(f.kind != "launch_failed" for f in findings):
        findings = [f for f in findings if f.kind != "launch_failed"]
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.tool, f.kind, f.message.key, str(f.message.values), f.kernel, f.file, f.line)
        if key in merged:
            merged[key].count += f.count
        else:
            merged[key] = f
    return list(merged.values())
