"""Turns compiler output into a few diagnostics that point at the learner's lines.

The Mojo compiler prints `file:line:col: error: message`, followed by notes
that often reach deep into the standard library. A learner needs the first
errors in their own files, with the source lines around them.
"""

from __future__ import annotations

import re
from pathlib import Path

from .i18n import msg
from .results import Diagnostic

LAUNCHER = "launcher (written by the workbook)"

LINE = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|note): (?P<msg>.*)$")
MAX_DIAGNOSTICS = 5
MAX_NOTES = 2
NOISE = ("Crashpad", "failed to parse the provided Mojo source module", "MODULAR_DEBUG")


def parse(output: str, path_map: dict[str, Path], root: Path, generated: list[Path] | None = None) -> list[Diagnostic]:
    """Errors from `output`, with build paths mapped back to the files the learner edits.

    `path_map` maps a path as the compiler printed it (absolute or relative to
    the build folder) to the real file. An error reported outside the learner's
    files (an instantiation that failed deep in a library) is moved to the last
    of its notes that points into them, with the root cause as its message.
    An error left in a `generated` launcher is the workbook calling the
    learner's kernel: it is shown there, with a hint. Errors in the learner's
    files come first."""
    generated = {str(g): g for g in generated or []}
    blocks: list[list[tuple[str, Path | None, int, int, str]]] = []  # error + its notes
    for line in output.splitlines():
        m = LINE.match(line.strip())
        if not m:
            continue
        entry = (m["file"], _lookup(m["file"], path_map), int(m["line"]), int(m["col"]), m["msg"].strip())
        if m["kind"] == "error":
            blocks.append([entry])
        elif m["kind"] == "note" and blocks:
            blocks[-1].append(entry)
    found: list[tuple[bool, Diagnostic]] = []  # (in a learner file, diagnostic)
    seen: set[tuple[str, int, str]] = set()
    for block in blocks:
        printed, real, line, col, message = block[0]
        notes = block[1:]
        if real is None:
            mine = [n for n in notes if n[1] is not None]
            if mine:
                _, real, line, col, _ = mine[-1]
                message = f"{message}: {notes[-1][4]}" if notes[-1] is not mine[-1] else message
        shown = _display(real, root) if real else printed
        hint = None
        if real is None and printed in generated:
            shown, hint = LAUNCHER, msg("diag.launcher")
            real = generated[printed]
        key = (shown, line, message)
        if key in seen:
            continue
        seen.add(key)
        diag = Diagnostic(shown, line, col, message, _context(real, line, 3) if real else [], hint=hint)
        for n_printed, n_real, n_line, _, n_message in notes[-MAX_NOTES:]:
            where = _display(n_real, root) if n_real else Path(n_printed).name
            diag.notes.append(f"{where}:{n_line}: {n_message}")
        found.append((real is not None and hint is None, diag))
    found.sort(key=lambda pair: not pair[0])  # stable: the learner's errors first, in order
    return [d for _, d in found[:MAX_DIAGNOSTICS]]


def tail(output: str, lines: int = 25) -> str:
    """The end of a compiler's output without its noise, for errors no pattern matched."""
    kept = [line for line in output.splitlines() if line.strip() and not any(n in line for n in NOISE)]
    return "\n".join(kept[-lines:])


def _lookup(printed: str, path_map: dict[str, Path]) -> Path | None:
    if printed in path_map:
        return path_map[printed]
    for key, real in path_map.items():
        if printed.endswith("/" + key) or key.endswith("/" + printed):
            return real
    return None


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _context(path: Path, line: int, around: int = 2) -> list[tuple[int, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    start, stop = max(1, line - around), min(len(lines), line + around)
    return [(n, lines[n - 1]) for n in range(start, stop + 1)]
