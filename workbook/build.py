"""Building a puzzle: a quick Mojo compile before the slow graph build.

`prepare` copies the puzzle into a build folder named by the hash of its
contents (with the learner's or the solution's files), then:
- `mojo precompile` packages the Mojo code as a `.mojoc` that MAX loads fast,
  and surfaces parse and type errors in seconds;
- `probe` builds the puzzle's GPU probe for a GPU target, which type-checks
  every GPU kernel even on a machine with no GPU.
Both results are cached by content: an unchanged puzzle is never recompiled.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics, toolchain
from .catalog import Puzzle, root
from .results import Diagnostic

COMPILE_TIMEOUT = 300


@dataclass
class Workspace:
    """A puzzle's files as they will be compiled, in a folder of their own."""

    puzzle: Puzzle
    dir: Path
    digest: str
    sources: dict[str, Path]  # relative name in the build folder -> the real file shown to the learner

    @property
    def mojoc(self) -> Path:
        return self.dir / f"{self.puzzle.package}.mojoc"


@dataclass
class CompileResult:
    ok: bool
    seconds: float
    cached: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    output: str = ""


def edit_sources(puzzle: Puzzle, solutions: bool) -> dict[str, Path]:
    """The files that stand in for the puzzle's edit list: the learner's or the solution's."""
    base = puzzle.solution_dir if solutions else puzzle.dir
    return {name: base / name for name in puzzle.edit}


def prepare(puzzle: Puzzle, solutions: bool = False) -> Workspace:
    """Copy the puzzle and the chosen edit files into a content-addressed build folder."""
    overlay = edit_sources(puzzle, solutions)
    files: dict[str, Path] = {}
    for path in sorted(puzzle.dir.rglob("*")):
        name = path.relative_to(puzzle.dir).as_posix()
        # Text, hints, the manifest and the reference don't change what is compiled.
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".md", ".toml") \
                and name != puzzle.reference:
            files[name] = path
    files.update(overlay)
    digest = hashlib.sha256(toolchain.toolchain_id().encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes() + b"\0")
    key = digest.hexdigest()[:16]
    folder = toolchain.cache_dir() / "build" / f"{puzzle.id}-{key}"
    if not (folder / ".complete").exists():
        staging = folder.with_name(folder.name + f".tmp{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        for name, src in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        (staging / ".complete").write_text("")
        try:
            staging.rename(folder)
        except OSError:  # another process built the same folder first
            shutil.rmtree(staging, ignore_errors=True)
    return Workspace(puzzle, folder, key, files)


def _path_map(ws: Workspace) -> dict[str, Path]:
    """Build-folder paths of the learner's files -> the files themselves. Only those:
    an error reported in the puzzle's own probe is moved to the learner's line."""
    mapping: dict[str, Path] = {}
    for name, real in ws.sources.items():
        if name not in ws.puzzle.edit:
            continue
        mapping[name] = real
        mapping[str(ws.dir / name)] = real
    return mapping


def _compile(ws: Workspace, args: list[str], marker: Path) -> CompileResult:
    """Run the Mojo compiler once; a marker file remembers a success for this content."""
    if marker.exists():
        return CompileResult(True, 0.0, True)
    mojo = toolchain.mojo_binary()
    if mojo is None:
        return CompileResult(False, 0.0, False, output="The `mojo` compiler was not found: run `workbook doctor`.")
    start = time.perf_counter()
    try:
        proc = subprocess.run([str(mojo), *args], cwd=ws.dir, capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return CompileResult(False, COMPILE_TIMEOUT, False, output="The Mojo compiler timed out.")
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    if proc.returncode == 0:
        marker.write_text("")
        return CompileResult(True, seconds, False)
    return CompileResult(False, seconds, False, diagnostics.parse(output, _path_map(ws), root()),
                         diagnostics.tail(output))


def precompile(ws: Workspace) -> CompileResult:
    """Package the puzzle's Mojo code as a .mojoc (and find its errors fast)."""
    return _compile(ws, ["precompile", ws.puzzle.package, "-o", str(ws.mojoc)], ws.dir / ".precompiled")


def probe(ws: Workspace, target: str | None = None) -> CompileResult:
    """Compile the GPU probe for a GPU target: every GPU kernel type-checked, nothing run."""
    if not ws.puzzle.gpu_probe:
        return CompileResult(True, 0.0, True)
    target = target or toolchain.gpu_target()
    out = ws.dir / f"probe-{target}"
    return _compile(ws, ["build", f"--target-accelerator={target}", "-I", str(ws.dir),
                         ws.puzzle.gpu_probe, "-o", str(out)], ws.dir / f".probe-{target}")


def digest_of(files: list[Path]) -> str:
    """A hash of some files' contents (watch mode uses it to ignore saves that changed nothing)."""
    h = hashlib.sha256()
    for path in files:
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<missing>")
    return h.hexdigest()
