"""The catalog of puzzles: finds puzzle folders and reads their manifests.

A puzzle's `puzzle.toml` is the single source of truth for it: its files,
parts, hints, tolerances, reference and GPU needs. The engine never names a
puzzle; adding a folder adds a puzzle.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEVICES = ("cpu", "gpu")
ID_PATTERN = re.compile(r"^p\d+$")


class CatalogError(Exception):
    """A puzzle id or manifest the workbook cannot use; the message says why."""


@dataclass(frozen=True)
class Part:
    id: str
    title: dict[str, str]
    devices: tuple[str, ...]
    graph: str  # "file.py:function"
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    atol: float
    rtol: float
    # Repeated GPU runs must agree bit for bit, unless the kernel sums with float
    # atomics (their order, and so the last bits, change from run to run): then
    # every repeat must match the reference within the tolerance instead.
    exact_repeats: bool = True


@dataclass(frozen=True)
class GpuNeeds:
    vendor: str | None = None
    min_compute_capability: float | None = None


@dataclass(frozen=True)
class Puzzle:
    id: str
    order: int
    title: dict[str, str]
    dir: Path
    solution_dir: Path
    edit: tuple[str, ...]  # learner files, relative to dir
    package: str  # the Mojo package folder handed to MAX
    gpu_probe: str | None
    reference: str
    parts: tuple[Part, ...]
    hints: tuple[dict, ...] = field(default=())  # {"en", "ko", optional "part"}
    gpu: GpuNeeds = GpuNeeds()
    repeats: int = 3  # GPU runs per case; results that differ mean a race

    def text_path(self, lang: str) -> Path:
        return self.dir / f"text.{lang}.md"

    def part(self, part_id: str) -> Part:
        for part in self.parts:
            if part.id == part_id:
                return part
        names = ", ".join(p.id for p in self.parts)
        raise CatalogError(f"{self.id} has no part '{part_id}' (its parts: {names})")

    def learner_files(self) -> list[Path]:
        return [self.dir / name for name in self.edit]

    def solution_files(self) -> list[Path]:
        return [self.solution_dir / name for name in self.edit]

    def needs_gpu_only(self) -> bool:
        return all(part.devices == ("gpu",) for part in self.parts)


def root() -> Path:
    """The workbook checkout: WORKBOOK_ROOT, else the folder above this package."""
    env = os.environ.get("WORKBOOK_ROOT")
    return Path(env).resolve() if env else Path(__file__).resolve().parent.parent


def puzzle_ids(base: Path | None = None) -> list[str]:
    base = base or root()
    folder = base / "puzzles"
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if p.is_dir() and (p / "puzzle.toml").exists()]
    return sorted(found, key=lambda name: int(name[1:]) if ID_PATTERN.match(name) else 10**9)


def all_puzzles(base: Path | None = None) -> list[Puzzle]:
    puzzles = [load(pid, base) for pid in puzzle_ids(base)]
    return sorted(puzzles, key=lambda p: (p.order, p.id))


def resolve_id(text: str, base: Path | None = None) -> tuple[str, str | None]:
    """Turn what the user typed ("p18", "18", "P18", "p27.broadcast") into (id, part).

    Raises CatalogError with the closest ids for anything else, including a path
    typed where an id belongs."""
    raw = text.strip()
    if "/" in raw or "\\" in raw or raw.endswith((".mojo", ".py", ".toml")):
        guess = next((seg for seg in re.split(r"[\\/]", raw) if ID_PATTERN.match(seg.lower())), None)
        hint = f" Did you mean '{guess}'?" if guess else ""
        raise CatalogError(f"'{raw}' looks like a path; give a puzzle id such as p18.{hint}")
    pid, _, part = raw.partition(".")
    pid = pid.lower()
    if pid.isdigit():
        pid = f"p{int(pid)}"
    known = puzzle_ids(base)
    if pid not in known:
        close = difflib.get_close_matches(pid, known, n=3, cutoff=0.5)
        if not close and ID_PATTERN.match(pid):  # p19 -> nearest numbers
            n = int(pid[1:])
            close = sorted(known, key=lambda k: abs(int(k[1:]) - n))[:2]
        hint = f" Closest: {', '.join(close)}." if close else ""
        raise CatalogError(f"No puzzle '{raw}'.{hint} `workbook list` shows them all.")
    return pid, (part or None)


def load(puzzle_id: str, base: Path | None = None) -> Puzzle:
    """Read and validate one manifest; every problem is a CatalogError naming the file."""
    base = base or root()
    folder = base / "puzzles" / puzzle_id
    path = folder / "puzzle.toml"
    if not path.exists():
        raise CatalogError(f"{path}: the puzzle manifest is missing.")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: malformed manifest: {exc}") from None
    try:
        return _from_dict(data, folder, base / "solutions" / puzzle_id)
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogError(f"{path}: {exc}") from None


def _require(data: dict, key: str, kind: type, where: str):
    if key not in data:
        raise KeyError(f"missing '{key}' in {where}")
    value = data[key]
    if not isinstance(value, kind):
        raise TypeError(f"'{key}' in {where} must be {kind.__name__}")
    return value


def _title(value, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or "en" not in value:
        raise ValueError(f"{where} needs an English title: title.en = \"...\"")
    return {k: str(v) for k, v in value.items()}


def _from_dict(data: dict, folder: Path, solution_dir: Path) -> Puzzle:
    pid = _require(data, "id", str, "the manifest")
    if pid != folder.name:
        raise ValueError(f"id '{pid}' does not match its folder '{folder.name}'")
    edit = tuple(_require(data, "edit", list, "the manifest"))
    for name in edit:  # the learner's copy may be missing: `workbook reset` puts it back
        if not (solution_dir / name).exists():
            raise ValueError(f"edit file '{name}' has no solution in {solution_dir}")
    package = _require(data, "package", str, "the manifest")
    if not (folder / package / "__init__.mojo").exists():
        raise ValueError(f"package '{package}' needs an __init__.mojo")
    default_graph = data.get("graph", "")
    defaults = data.get("tolerance", {})
    parts = []
    for i, raw in enumerate(_require(data, "parts", list, "the manifest")):
        where = f"parts[{i}]"
        devices = tuple(raw.get("devices", DEVICES))
        if not devices or any(d not in DEVICES for d in devices):
            raise ValueError(f"{where}.devices must be a list of {DEVICES}")
        graph = raw.get("graph", default_graph)
        if ":" not in graph:
            raise ValueError(f"{where}.graph must look like 'file.py:function'")
        parts.append(Part(
            id=_require(raw, "id", str, where),
            title=_title(raw.get("title", {"en": raw.get("id", "")}), where),
            devices=devices,
            graph=graph,
            inputs=tuple(_require(raw, "inputs", list, where)),
            outputs=tuple(_require(raw, "outputs", list, where)),
            atol=float(raw.get("atol", defaults.get("atol", 1e-6))),
            rtol=float(raw.get("rtol", defaults.get("rtol", 1e-5))),
            exact_repeats=bool(raw.get("exact_repeats", True)),
        ))
    if not parts:
        raise ValueError("a puzzle needs at least one part")
    hints_file = folder / "hints.toml"
    hints = data.get("hints", [])
    if hints_file.exists():
        hints = hints + tomllib.loads(hints_file.read_text(encoding="utf-8")).get("hints", [])
    gpu = data.get("gpu", {})
    return Puzzle(
        id=pid,
        order=int(data.get("order", pid[1:] if pid[1:].isdigit() else 0)),
        title=_title(data.get("title"), "the manifest"),
        dir=folder,
        solution_dir=solution_dir,
        edit=edit,
        package=package,
        gpu_probe=data.get("gpu_probe"),
        reference=data.get("reference", "reference.py"),
        parts=tuple(parts),
        hints=tuple(hints),
        gpu=GpuNeeds(gpu.get("vendor"), gpu.get("min_compute_capability")),
        repeats=int(data.get("repeats", 3)),
    )
