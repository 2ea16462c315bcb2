"""The catalog of puzzles: finds the puzzle folders and loads their manifests.

The engine never names a puzzle; adding a folder adds a puzzle. What a manifest holds is
course/manifest.py's; how it is read, course/parsing.py's.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

from ..core import settings
from ..core.i18n import pick
from . import parsing
from .manifest import ID_PATTERN, MAX_ID, CatalogError, Chapter, ManifestError, Puzzle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


# ---------------------------------------------------------------------------
# Finding puzzles
# ---------------------------------------------------------------------------


def root() -> Path:
    return settings.root()


def puzzle_ids(base: Path | None = None) -> list[str]:
    base = base or root()
    folder = base / "puzzles"
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if p.is_dir() and (p / "puzzle.toml").exists()]
    return sorted(found, key=lambda name: int(name[1:]) if ID_PATTERN.match(name) else 10**9)


def all_puzzles(base: Path | None = None) -> list[Puzzle]:
    puzzles = [load(pid, base) for pid in puzzle_ids(base)]
    return sorted(puzzles, key=lambda p: (p.chapter, p.order, p.id))


def chapters(base: Path | None = None) -> dict[int, Chapter]:
    """The chapters in puzzles/chapters.toml: number -> title."""
    path = (base or root()) / "puzzles" / "chapters.toml"
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError("catalog.manifest_malformed", path=str(path), error=str(exc)) from None
    return {int(c["number"]): Chapter(int(c["number"]), dict(c["title"])) for c in data.get("chapters", [])}


def left_out(base: Path | None = None) -> dict[str, dict[str, str]]:
    """Ids of the upstream course this one leaves out (chapters.toml's [[left_out]]): id -> why."""
    path = (base or root()) / "puzzles" / "chapters.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    return {str(x["id"]): dict(x.get("why", {})) for x in data.get("left_out", []) if isinstance(x, dict) and "id" in x}


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s_\-:,.()/·]+", text.casefold()) if w]


def by_name(text: str, base: Path | None = None) -> list[Puzzle]:
    """The puzzles a name or words find ("softmax", "prefix sum", "소프트맥스"): each word the
    start of a word of the title (either language; "conflict" finds "conflicts", "소프트맥스"
    finds "소프트맥스로"); where no title has them all, of a part's title or id or an op's name.
    Too short a query finds nothing (a letter starts some word of every title)."""
    wanted = _words(text)
    if not wanted or sum(len(w) for w in wanted) < 3:
        return []
    in_title, elsewhere = [], []
    for pid in puzzle_ids(base):
        try:
            puzzle = load(pid, base)
        except CatalogError:
            continue  # a broken manifest is reported where it is used, not here
        title = _words(" ".join(puzzle.title.values()))
        more = title + _words(" ".join([*(v for p in puzzle.parts for v in p.title.values()),
                                        *(p.id for p in puzzle.parts), *puzzle.ops]))
        if all(any(word.startswith(w) for word in title) for w in wanted):
            in_title.append(puzzle)
        elif all(any(word.startswith(w) for word in more) for w in wanted):
            elsewhere.append(puzzle)
    return in_title or elsewhere


def resolve_id(text: str, base: Path | None = None) -> tuple[str, str | None]:
    """Turn what the user typed ("p18", "18", "P18", "p27.broadcast", or a name such as
    "softmax") into (id, part).

    Raises CatalogError with the closest ids for anything else, including a path
    typed where an id belongs, and says why an id the course leaves out is not here."""
    raw = text.strip()
    if len(raw) > MAX_ID or not raw.isprintable():  # a pasted paragraph, a 5000-digit number
        raise CatalogError("catalog.unknown_puzzle", raw=(raw[:MAX_ID] + "…") if len(raw) > MAX_ID else raw)
    if "/" in raw or "\\" in raw or raw.endswith((".mojo", ".py", ".toml")):
        guess = next((seg for seg in re.split(r"[\\/]", raw) if ID_PATTERN.match(seg.lower())), None)
        if guess:
            raise CatalogError("catalog.looks_like_path_guess", raw=raw, guess=guess)
        raise CatalogError("catalog.looks_like_path", raw=raw)
    pid, _, part = raw.partition(".")
    pid = pid.lower()
    known = puzzle_ids(base)
    number = pid[1:] if ID_PATTERN.match(pid) else pid
    if number.isdigit():  # "1", "p1", "p01" all name p01
        pid = next((c for c in (f"p{int(number):02d}", f"p{int(number)}") if c in known), f"p{int(number)}")
    if pid not in known and pid in left_out(base):
        raise CatalogError("catalog.left_out", id=pid, why=left_out(base)[pid])
    if pid not in known and not ID_PATTERN.match(pid) and not number.isdigit():
        named = by_name(raw, base)
        if len(named) == 1:
            return named[0].id, None
        if named:
            raise CatalogError("catalog.name_several", raw=raw, found=", ".join(
                f"{p.id} ({pick(p.title)})" for p in named[:6]) + (" …" if len(named) > 6 else ""))
    if pid not in known:
        close = difflib.get_close_matches(pid, known, n=3, cutoff=0.5)
        if not close and ID_PATTERN.match(pid):  # p19 -> nearest numbers
            n = int(pid[1:])
            close = sorted(known, key=lambda k: abs(int(k[1:]) - n))[:2]
        if close:
            raise CatalogError("catalog.unknown_puzzle_close", raw=raw, close=", ".join(close))
        raise CatalogError("catalog.unknown_puzzle", raw=raw)
    return pid, (part or None)


def load(puzzle_id: str, base: Path | None = None) -> Puzzle:
    """Read and validate one manifest; every problem is a CatalogError naming the file."""
    base = base or root()
    folder = base / "puzzles" / puzzle_id
    path = folder / "puzzle.toml"
    if not path.exists():
        raise CatalogError("catalog.manifest_missing", path=str(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError("catalog.manifest_malformed", path=str(path), error=str(exc)) from None
    solutions = base / "solutions" if (base / "solutions").is_dir() else settings.curriculum() / "solutions"
    try:
        return parsing.from_dict(data, folder, solutions / puzzle_id)
    except (ManifestError, KeyError, TypeError, ValueError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise CatalogError("catalog.manifest_invalid", path=str(path), error=detail) from None


