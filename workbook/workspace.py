"""A workspace of one's own: the learner's files apart from the workbook's installation.

`workbook init DIR` writes DIR/puzzles/ (every puzzle's folder, the files the
learner edits as skeletons in the learner's language, and the files a puzzle
gives with their comments in that language) and DIR/.workbook/ (an
empty progress file, and workspace.json: the language, and what the workbook
wrote there). Every command finds the workspace from the current folder
upwards (settings.find_root). When a newer workbook runs in an old workspace,
its curriculum comes in before the command: new puzzles are added, the
workbook's own files (manifests, texts, hints, references) are refreshed, and
the learner's files are never touched; a workbook file the learner changed is
backed up first. The solutions stay in the installation, for `reveal`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from . import __version__, backups, catalog, settings, skeleton, state
from .i18n import WorkbookError

VERSION = 1


@dataclass
class Update:
    """What bringing the curriculum into a workspace did."""

    added: list[str] = field(default_factory=list)  # puzzles new to the workspace
    refreshed: list[str] = field(default_factory=list)  # the workbook's files written again
    kept: list[str] = field(default_factory=list)  # of those, ones the learner had changed: backed up first
    created: bool = False


def marker(root: Path) -> Path:
    return root / settings.WORKSPACE_MARKER


def is_workspace(folder: Path) -> bool:
    return marker(folder).is_file()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def digest(source: Path) -> str:
    """The installed curriculum's content: a workspace that has it is up to date."""
    h = hashlib.sha256()
    for sub in ("puzzles", "solutions"):
        for path in _files(source / sub):
            h.update(path.relative_to(source).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _read(root: Path) -> dict:
    try:
        record = json.loads(marker(root).read_text(encoding="utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        raise WorkbookError("workspace.broken", path=str(marker(root)), error=str(exc)) from None
    record.setdefault("puzzles", [])
    record.setdefault("files", {})
    record.setdefault("edits", {})
    record.setdefault("language", "en")
    return record


def _write(root: Path, record: dict) -> None:
    path = marker(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def create(target: Path, lang: str) -> Update:
    """A new workspace in `target` (an existing workspace is brought up to date instead)."""
    target = target.expanduser().resolve()
    if is_workspace(target):
        return sync(target, force=True) or Update()
    if (target / "puzzles").exists() or (target / ".workbook").exists():
        raise WorkbookError("init.not_empty", dir=str(target))
    target.mkdir(parents=True, exist_ok=True)
    record = {"version": VERSION, "language": lang, "created": datetime.now().isoformat(timespec="seconds"),
              "puzzles": [], "files": {}, "edits": {}}
    update = _bring(target, record)
    state.initial(target / ".workbook")
    update.created = True
    return update


def sync(root: Path, force: bool = False) -> Update | None:
    """Bring the installed curriculum into the workspace at `root`; None when it has it already."""
    record = _read(root)
    if not force and record.get("curriculum") == digest(settings.curriculum()):
        return None
    return _bring(root, record)


def _bring(root: Path, record: dict) -> Update:
    source = settings.curriculum()
    update = Update()
    lang = record["language"]
    wanted: set[str] = set()
    for puzzle in catalog.all_puzzles(source):
        new = puzzle.id not in record["puzzles"]
        learner = set(puzzle.edit)
        for path in _files(puzzle.dir):
            name = path.relative_to(puzzle.dir).as_posix()
            if name not in learner:
                rel = f"puzzles/{puzzle.id}/{name}"
                wanted.add(rel)
                _put(root, record, rel, given(path, lang), update, puzzle.id)
        known = record["edits"].get(puzzle.id, [])
        for name, solution in zip(puzzle.edit, puzzle.solution_files()):
            target = root / "puzzles" / puzzle.id / name
            if not target.exists() and (new or name not in known):  # never the learner's: a new file
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(skeleton.skeleton_of(solution, lang), encoding="utf-8")
        record["edits"][puzzle.id] = list(puzzle.edit)
        if new:
            record["puzzles"].append(puzzle.id)
            update.added.append(puzzle.id)
    chapters = source / "puzzles" / "chapters.toml"
    wanted.add("puzzles/chapters.toml")
    _put(root, record, "puzzles/chapters.toml", chapters.read_bytes(), update, None)
    for rel in [r for r in record["files"] if r not in wanted]:  # gone from the workbook: gone here if unchanged
        path = root / rel
        if path.is_file() and _sha(path.read_bytes()) == record["files"][rel]:
            path.unlink()
        record["files"].pop(rel)
    record["curriculum"] = digest(source)
    record["workbook"] = __version__
    _write(root, record)
    return update


def given(path: Path, lang: str) -> bytes:
    """A file the puzzle gives (a graph, a package's __init__), with its comments in the
    learner's language: it is read as the learner's own files are (workbook/skeleton.py)."""
    data = path.read_bytes()
    if path.suffix not in (".py", ".mojo"):
        return data
    try:
        return skeleton.localize(data.decode("utf-8"), lang).encode("utf-8")
    except (UnicodeDecodeError, skeleton.MarkerError):
        return data


def _put(root: Path, record: dict, rel: str, data: bytes, update: Update, puzzle_id: str | None) -> None:
    """Write one of the workbook's files; one the learner changed since is backed up first."""
    target = root / rel
    if target.is_file():
        current = target.read_bytes()
        if current == data:
            record["files"][rel] = _sha(data)
            return
        if _sha(current) != record["files"].get(rel):
            if puzzle_id is not None:
                backups.keep(puzzle_id, root / "puzzles" / puzzle_id, [rel.split("/", 2)[2]], "workbook-update")
            else:
                backups.keep("workspace", root / "puzzles", [rel.split("/", 1)[1]], "workbook-update")
            update.kept.append(rel)
        update.refreshed.append(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    record["files"][rel] = _sha(data)
