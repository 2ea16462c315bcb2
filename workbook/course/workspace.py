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

The update runs before every command (`grade .` in a submission's folder too), so
it trusts nothing it finds there: every path workspace.json names must be a plain
relative name under puzzles/ (nothing absolute, no `..`), reached without crossing
a link; every write, replacement and deletion goes through nofollow.py. An entry
that names anything else is left alone and said in a line; a link where one of
the workbook's files goes is replaced by the file, never written through.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .. import __version__
from ..core import nofollow, settings
from ..core.i18n import LANGUAGES, Msg, WorkbookError, msg
from . import backups, catalog, skeleton, state

VERSION = 1


@dataclass
class Update:
    """What bringing the curriculum into a workspace did."""

    added: list[str] = field(default_factory=list)  # puzzles new to the workspace
    refreshed: list[str] = field(default_factory=list)  # the workbook's files written again
    kept: list[str] = field(default_factory=list)  # of those, ones the learner had changed: backed up first
    created: bool = False
    unlinked: list[str] = field(default_factory=list)  # links where the workbook's files go: replaced, not followed
    skipped: list[Msg] = field(default_factory=list)  # entries left alone, and why


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


MARKER = settings.WORKSPACE_MARKER.as_posix()  # .workbook/workspace.json


def _read(root: Path) -> dict:
    """workspace.json, read without following a link, each field of the shape it must have:
    a field of another shape is dropped (the update starts it afresh), never followed."""
    try:
        record = json.loads(nofollow.read_bytes(root, MARKER, 1 << 24).decode("utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        raise WorkbookError("workspace.broken", path=str(marker(root)), error=str(exc)) from None
    shapes = {"puzzles": list, "files": dict, "edits": dict, "language": str}
    for name, kind in shapes.items():
        if not isinstance(record.get(name), kind):
            record.pop(name, None)
    record.setdefault("puzzles", [])
    record.setdefault("files", {})
    record.setdefault("edits", {})
    record.setdefault("language", "en")
    record["puzzles"] = [p for p in record["puzzles"] if isinstance(p, str)]
    record["files"] = {k: v for k, v in record["files"].items() if isinstance(v, str)}
    record["edits"] = {k: [n for n in v if isinstance(n, str)] for k, v in record["edits"].items()
                       if isinstance(v, list)}
    if record["language"] not in LANGUAGES:
        record["language"] = "en"
    return record


def _write(root: Path, record: dict) -> None:
    data = json.dumps(record, indent=2, ensure_ascii=False).encode("utf-8")
    try:
        nofollow.write_bytes(root, MARKER, data, partial=f"workspace.json.tmp{os.getpid()}-{threading.get_ident()}")
    except nofollow.Refused as exc:
        raise WorkbookError("workspace.broken", path=str(marker(root)), error=str(exc)) from None


def _managed(rel) -> bool:
    """Whether a name in workspace.json may be one of the workbook's files: a plain
    relative name under puzzles/."""
    found = nofollow.parts(rel)
    return found is not None and len(found) >= 2 and found[0] == "puzzles"


def create(target: Path, lang: str) -> Update:
    """A new workspace in `target` (an existing workspace is brought up to date instead)."""
    target = target.expanduser().resolve()
    if is_workspace(target):
        return sync(target, force=True) or Update()
    if os.path.lexists(target / "puzzles") or os.path.lexists(target / ".workbook"):
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
            rel = f"puzzles/{puzzle.id}/{name}"
            if new or name not in known:  # never the learner's: a new file, where nothing is (not even a link)
                _guarded(update, rel, lambda rel=rel, solution=solution: nofollow.create(
                    root, rel, skeleton.skeleton_of(solution, lang).encode("utf-8")))
        record["edits"][puzzle.id] = list(puzzle.edit)
        if new:
            record["puzzles"].append(puzzle.id)
            update.added.append(puzzle.id)
    chapters = source / "puzzles" / "chapters.toml"
    wanted.add("puzzles/chapters.toml")
    _put(root, record, "puzzles/chapters.toml", chapters.read_bytes(), update, None)
    for rel in [r for r in record["files"] if r not in wanted]:  # gone from the workbook: gone here if unchanged
        recorded = record["files"].pop(rel)
        if not _managed(rel):
            update.skipped.append(msg("workspace.skipped", path=str(rel)[:200], why=msg("workspace.why_outside")))
            continue
        _guarded(update, rel, lambda rel=rel, recorded=recorded: _remove_unchanged(root, rel, recorded))
    record["curriculum"] = digest(source)
    record["workbook"] = __version__
    _write(root, record)
    return update


def given(path: Path, lang: str) -> bytes:
    """A file the puzzle gives (a graph, a package's __init__), with its comments in the
    learner's language: it is read as the learner's own files are (workbook/course/skeleton.py)."""
    data = path.read_bytes()
    if path.suffix not in (".py", ".mojo"):
        return data
    try:
        return skeleton.localize(data.decode("utf-8"), lang).encode("utf-8")
    except (UnicodeDecodeError, skeleton.MarkerError):
        return data


def _guarded(update: Update, rel: str, action) -> None:
    """Do one step of the update; a link on the way (or a folder where a file goes) leaves
    that entry alone, said in a line, and the rest of the update goes on."""
    try:
        action()
    except nofollow.Refused:
        update.skipped.append(msg("workspace.skipped", path=rel, why=msg("workspace.why_link")))
    except IsADirectoryError:
        update.skipped.append(msg("workspace.skipped", path=rel, why=msg("workspace.why_folder")))


def _remove_unchanged(root: Path, rel: str, recorded: str) -> None:
    """A file the workbook wrote and no longer has: removed if it is still exactly what was
    written (a link, a folder, or anything changed stays)."""
    info = nofollow.lstat(root, rel)
    if info is not None and stat.S_ISREG(info.st_mode) and _sha(nofollow.read_bytes(root, rel)) == recorded:
        nofollow.unlink(root, rel)


def _put(root: Path, record: dict, rel: str, data: bytes, update: Update, puzzle_id: str | None) -> None:
    """Write one of the workbook's files; one the learner changed since is backed up first."""
    _guarded(update, rel, lambda: _put_file(root, record, rel, data, update, puzzle_id))


def _put_file(root: Path, record: dict, rel: str, data: bytes, update: Update, puzzle_id: str | None) -> None:
    info = nofollow.lstat(root, rel)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory", rel)
    if info is not None and stat.S_ISLNK(info.st_mode):
        update.unlinked.append(rel)  # replaced by the file below; what it pointed at is not touched
    if info is not None and stat.S_ISREG(info.st_mode):
        current = nofollow.read_bytes(root, rel)
        if current == data:
            record["files"][rel] = _sha(data)
            return
        if _sha(current) != record["files"].get(rel):
            if puzzle_id is not None:
                backups.keep(puzzle_id, root / "puzzles" / puzzle_id, [rel.split("/", 2)[2]], "workbook-update",
                             base=root)
            else:
                backups.keep("workspace", root / "puzzles", [rel.split("/", 1)[1]], "workbook-update", base=root)
            update.kept.append(rel)
        update.refreshed.append(rel)
    nofollow.write_bytes(root, rel, data, keep_mode=False)
    record["files"][rel] = _sha(data)
