"""From an address in a compiled launcher to the learner's file and line.

The simulator's launcher is built with line tables (-g1). The simulator
reports where each access, barrier or endless loop was as an address in
that program (relative to where it was loaded) or, for barriers and shared
arrays, as the file and line the compiler gave (call_location). Here both
become a `Place`: the learner's file, line, column and the text of that line.

One address usually stands for a few nested places, because the compiler put
called functions inline: the tensor's indexing inside the learner's kernel
inside the generated launcher. The learner's own file is the one that counts;
when the address is in a function of the workbook that the kernel called,
the place it was called from is used instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..core import toolchain
from . import accesslines

NEAR = 64  # bytes of code looked through, either way, for a line the compiler gave


@dataclass(frozen=True)
class Place:
    file: str  # as the learner knows it (relative to the workbook folder)
    line: int
    column: int = 0
    text: str = ""  # that line of source, stripped
    before: str = ""  # the few lines above it, joined (a statement may start there)
    # Where the compiler's line for an access is not (only) a line that makes it (accesslines.py):
    # the other lines it may be on (line, text), and the line the compiler gave (line, text,
    # and whether the compiler gave it to this very instruction rather than to code near it).
    # `given` on `line` itself, with no `also`: only about.
    also: tuple[tuple[int, str], ...] = ()
    given: tuple[int, str, bool] | None = None

    @property
    def about(self) -> bool:
        return self.given is not None and self.given[0] == self.line and not self.also

    @property
    def label(self) -> str:
        """The line as a report says it: 187, 187/189 (one of them), or ≈186 (about)."""
        if self.about:
            return f"≈{self.line}"
        return "/".join(str(n) for n in (self.line, *(n for n, _ in self.also)))


def symbolizer() -> str | None:
    """llvm-symbolizer: the one that comes with Mojo (beside its binary, or in the wheel's
    bin/ next to the runtime libraries, where pip puts it), else one on PATH."""
    mojo = toolchain.mojo_binary()
    beside = [mojo.parent / "llvm-symbolizer", mojo.resolve().parent / "llvm-symbolizer"] if mojo else []
    libs = toolchain.mojo_libs()
    if libs is not None:
        beside.append(libs.parent / "bin" / "llvm-symbolizer")
    for tool in beside:
        if tool.is_file() and os.access(tool, os.X_OK):
            return str(tool)
    return shutil.which("llvm-symbolizer")


def _frames(binary: Path, addresses: list[int]) -> dict[int, list[tuple[str, int, int]]]:
    """address -> its (file, line, column) frames, innermost first."""
    tool = symbolizer()
    if tool is None or not addresses:
        return {}
    try:
        out = subprocess.run([tool, f"--obj={binary}", "--output-style=JSON", "--inlining"]
                             + [hex(a) for a in addresses], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found: dict[int, list[tuple[str, int, int]]] = {}
    for line in out.stdout.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        for item in entry if isinstance(entry, list) else [entry]:
            try:
                address = int(item["Address"], 16)
            except (KeyError, ValueError, TypeError):
                continue
            found[address] = [(s.get("FileName", ""), int(s.get("Line", 0)), int(s.get("Column", 0)))
                              for s in item.get("Symbol", [])]
    return found


HEADER = re.compile(r"^(def\s|fn\s|\)\s*(->.*)?:$|(mut\s+|owned\s+|out\s+)?\w+\s*:\s*[\w.]+(\[.*\])?\s*(=.*)?,?$)")


def _header(place: Place) -> bool:
    """Whether a place is a line of a function's signature (`def k(`, a parameter, `):`)
    rather than a statement."""
    return bool(HEADER.match(place.text)) and (place.text.startswith(("def ", "fn ")) or "def " in place.before)


def is_source(site: list) -> bool:
    """A site the compiler named ([0, 0, file, line, column, and its kernel and operations]);
    else an address ([pc, caller, kernel, and what it read and wrote])."""
    return len(site) >= 5 and site[0] == 0 and site[1] == 0 and isinstance(site[2], str)


class Resolver:
    """Turns the simulator's sites into places in the learner's files.

    `learner` maps a path as the build saw it (the build folder's copy, absolute)
    to the learner's own file, and `shown` says how to name that file."""

    def __init__(self, learner: dict[str, Path], shown):
        self.learner = learner
        self.shown = shown
        self._lines: dict[Path, list[str]] = {}

    def _place(self, file: str, line: int, column: int) -> Place | None:
        real = self._real(file)
        if real is None or line <= 0:
            return None
        return Place(self.shown(real), line, column, self._text(real, line),
                     " ".join(self._text(real, n) for n in range(max(1, line - 3), line)))

    def _real(self, file: str) -> Path | None:
        if file in self.learner:
            return self.learner[file]
        for key, real in self.learner.items():
            if file.endswith("/" + Path(key).name) and Path(file).parent.name == Path(key).parent.name:
                return real
        return None

    def _lines_of(self, real: Path) -> list[str]:
        if real not in self._lines:
            try:
                self._lines[real] = real.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self._lines[real] = []
        return self._lines[real]

    def _text(self, real: Path, line: int) -> str:
        lines = self._lines_of(real)
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def resolve(self, binary: Path, sites: list, wanted: set[int], hints: dict[int, str] | None = None
                ) -> dict[int, Place]:
        """site id (1-based, as the simulator numbers them) -> the learner's place. `hints`
        names what a site accessed (`products`), for code the compiler gave no line."""
        places: dict[int, Place] = {}
        addresses: list[int] = []
        for sid in wanted:
            if not 0 < sid <= len(sites):
                continue
            site = sites[sid - 1]
            if is_source(site):  # a place the compiler named
                place = self._place(site[2], int(site[3]), int(site[4]))
                if place is not None:
                    places[sid] = place
                continue
            pc, caller = int(site[0]), int(site[1])
            addresses += [a - 1 for a in (pc, caller) if a > 0]  # return addresses: the call is just before
        frames = _frames(binary, sorted(set(addresses)))
        unplaced: list[int] = []
        headers: dict[int, tuple[str, int, int]] = {}  # unplaced sites the compiler put on a signature
        for sid in wanted:
            if sid in places or not 0 < sid <= len(sites) or is_source(sites[sid - 1]):
                continue
            pc, caller = int(sites[sid - 1][0]), int(sites[sid - 1][1])
            for address in (pc - 1, caller - 1):
                place = next((p for p in (self._place(*f) for f in frames.get(address, [])) if p), None)
                if place is not None and _header(place):
                    # An access the compiler put on its function's signature (a load hoisted
                    # to the top of the function): no line of the learner's says that; look
                    # near it for the line that touches the array, as for code with no line.
                    unplaced.append(sid)
                    headers[sid] = next(f for f in frames.get(address, []) if self._place(*f))
                    break
                if place is not None:
                    places[sid] = place
                    break
            else:
                if any(self._real(f[0]) is not None for f in frames.get(pc - 1, [])):
                    unplaced.append(sid)
        if unplaced:
            # Code the compiler gave no line (line 0): it merged instructions of several lines, say
            # the same store in both branches of an `if`. The nearest instruction with a line that
            # touches the same array is the learner's line; failing that, the nearest one at all.
            # Nearest before it first: a merged store comes after the code that computed its value
            # and its place, and the next statement (`barrier()`, the next `if`) is not its own.
            near = {sid: [int(sites[sid - 1][0]) - 1 + k for k in (*range(-1, -NEAR, -1), *range(1, NEAR))]
                    for sid in unplaced}
            more = _frames(binary, sorted({a for addresses in near.values() for a in addresses}))
            for sid, addresses in near.items():
                found = [p for p in (next((p for p in (self._place(*f) for f in more.get(a, [])) if p), None)
                                     for a in addresses) if p is not None and not _header(p)]
                name = (hints or {}).get(sid, "")
                touching = [p for p in found if name and f"{name}[" in p.text.replace(" [", "[")]
                if not touching and name and sid in headers:
                    touching = self._first_touching(headers[sid], name)
                if touching or found:
                    places[sid] = (touching or found)[0]
        # The line the compiler gave may be one that makes no such access (an `if`, a `for`, a
        # barrier()): its stores or loads were merged across branches. Say which lines they are.
        for sid, place in list(places.items()):
            site = sites[sid - 1]
            if not is_source(site) and len(site) >= 7:
                access = accesslines.access_of(site)
                if access is not None:
                    real = self._real_of_shown(place.file)
                    source = self._lines_of(real) if real else []
                    places[sid] = accesslines.refine(place, source, access, (hints or {}).get(sid, ""),
                                                     lineless=sid in unplaced)
        return places

    def _real_of_shown(self, shown: str) -> Path | None:
        """The learner's file a place names."""
        return next((real for real in self.learner.values() if self.shown(real) == shown), None)

    def _first_touching(self, header: tuple[str, int, int], name: str) -> list[Place]:
        """The first line of the function whose signature is at `header` that indexes `name`."""
        file, at, _ = header
        real = self._real(file)
        if real is None:
            return []
        lines = self._lines_of(real)
        for n in range(at + 1, len(lines) + 1):
            text = lines[n - 1]
            if text.startswith(("def ", "fn ", "struct ")):
                break
            if f"{name}[" in text.replace(" [", "["):
                place = self._place(file, n, 0)
                return [place] if place else []
        return []
