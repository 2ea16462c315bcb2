"""Turns compiler output into a few diagnostics that point at the learner's lines.

The Mojo compiler prints `file:line:col: error: message`, followed by notes
that often reach deep into the standard library. A learner needs the first
errors in their own files, with the source lines around them. For the few
errors every beginner meets (an Int accumulator, a name without `var`, a
Float64 among Float32 tensors, a constant without `comptime`, a comptime assert
that fails: its message is the puzzle's, in the learner's language) the compiler
points at the symptom, the `+=` rather than the `var total = 0`; `explain`
adds a sentence in the learner's language that names the line that caused it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.i18n import Msg, msg
from ..core.results import Diagnostic

LAUNCHER = "launcher (written by the workbook)"

LINE = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|note): (?P<msg>.*)$")
MAX_DIAGNOSTICS = 5
MAX_NOTES = 2
ALIAS = re.compile(r"^'(.+)' is aka '([^']+)'$")
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
        aliases = [aka.groups() for n in notes if (aka := ALIAS.search(n[4]))]
        for long, short in aliases:  # the compiler's own "is aka": four lines of generics become 'Float32'
            message = message.replace(f"'{long}'", f"'{short}'")
        notes = [n for n in notes if not ALIAS.search(n[4])]
        diag = Diagnostic(shown, line, col, message, _context(real, line, 3) if real else [], hint=hint)
        for n_printed, n_real, n_line, _, n_message in notes[-MAX_NOTES:]:
            where = _display(n_real, root) if n_real else Path(n_printed).name
            diag.notes.append(f"{where}:{n_line}: {n_message}")
        if real is not None and hint is None:
            diag.explanation = explain(diag, real, [n[4] for n in notes] + [f"is aka '{b}'" for _, b in aliases])
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


# ---------------------------------------------------------------------------
# The errors every beginner meets, explained
# ---------------------------------------------------------------------------

IMPLICIT = re.compile(r"implicit declaration of '(?P<name>\w+)' is not allowed")
AT_FILE_SCOPE = ("global variables are not supported", "must not appear at file scope")
TOP_NAME = re.compile(r"^\s*(?:var\s+)?(?P<name>[A-Za-z_]\w*)\s*(?::[^=]*)?=")
AKA = re.compile(r"is aka '(?P<type>\w+)'|from '(?P<from>Float16|Float32|BFloat16)'")
CONSTRAINT = re.compile(r"constraint failed: (?P<why>.+)$")


def explain(diag: Diagnostic, path: Path, notes: list[str] | None = None) -> Msg | None:
    """A sentence on what caused one of the common errors, naming the line; None for others."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    code = lines[diag.line - 1] if 0 < diag.line <= len(lines) else ""
    said = " ".join([diag.message, *(notes or []), *diag.notes])
    failed = next((m for text in [diag.message, *(notes or []), *diag.notes] if (m := CONSTRAINT.search(text))), None)
    if failed and "assert" in code:  # the assert's own message (in the learner's language), said as the cause
        return msg("diag.assert_failed", line=diag.line, why=failed["why"].strip())
    found = IMPLICIT.search(diag.message)
    if found:
        return msg("diag.needs_var", name=found["name"], line=diag.line)
    if any(words in diag.message for words in AT_FILE_SCOPE):
        top = TOP_NAME.match(code)
        return msg("diag.needs_comptime", name=top["name"], line=diag.line) if top else None
    if "dynamic value in a parameter" in said:
        inside = " ".join(re.findall(r"\[([^\]]*)\]", code))
        cause = _declared(lines, diag.line, inside, r"var\s+{name}\b")
        if cause:
            return msg("diag.dynamic_parameter", name=cause[0], line=cause[1], use=diag.line)
    if "'Int'" in said or "'DType.int'" in said:
        cause = _declared(lines, diag.line, code, r"var\s+{name}\s*=\s*[-+]?\d+\s*(#.*)?$")
        if cause:
            return msg("diag.int_accumulator", name=cause[0], line=cause[1], use=diag.line,
                       code=lines[cause[1] - 1].strip(), type=_tensor_type(said))
    if "'Float64'" in said:
        cause = _declared(lines, diag.line, code, r"var\s+{name}\s*:\s*Float64\b")
        if cause and cause[1] != diag.line:
            return msg("diag.float64_var", name=cause[0], line=cause[1], use=diag.line,
                       code=lines[cause[1] - 1].strip(), type=_tensor_type(said))
        if "Float64" in code:
            return msg("diag.float64", line=diag.line, type=_tensor_type(said))
    return None


def _tensor_type(said: str) -> str:
    """The tensors' element type as the compiler's notes name it (Float32 unless they say)."""
    found = AKA.search(said)
    return (found["type"] or found["from"]) if found else "Float32"


def _declared(lines: list[str], before: int, code: str, pattern: str) -> tuple[str, int] | None:
    """A name used in `code` whose declaration above line `before` matches `pattern`:
    (the name, the line it was declared on), the nearest declaration first."""
    for name in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", code)):
        rule = re.compile(r"^\s*" + pattern.format(name=re.escape(name)))
        for number in range(min(before, len(lines)), 0, -1):
            if rule.search(lines[number - 1]):
                return name, number
    return None
