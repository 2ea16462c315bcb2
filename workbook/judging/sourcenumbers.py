"""What a learner can still be told of code that nothing here runs: the numbers its text fixes.

p36 (TMA and wgmma) runs on a Hopper GPU only: the simulator does not model those units, and
without such a GPU right and wrong code alike only compile (the status `compiled`, exit code 5:
not judged). Part of what the puzzle teaches is numbers the text states and the code spells as
compile-time values: the descriptors' strides, the bytes the mbarrier waits for. The manifest
names them (`[[source_numbers]]`: a pattern of code with `{NAME}` where a number goes, and the
number the text gives), and this module finds each in the learner's file and works it out where
it can, from whole numbers, the manifest's constants, the file's own `comptime` names and
`+ - * // %`; a wrapper such as `Int32(...)` is the number inside it. What it cannot work out it
says it could not (it never guesses).

It is information beside the report, not a verdict: a number that differs from the text's is
said plainly, and the status stays `compiled`. Only numbers known when the code compiles can be
read this way; the copies' coordinates, the waits' parities and the store depend on the block and
the step, and only a GPU judges them (the report says so).
"""

from __future__ import annotations

import ast
import operator
import re

from ..core.results import Number, SourceNumber
from ..course.manifest import Puzzle, SourceNumbers

COMPTIME = re.compile(r"^\s*comptime\s+(?P<name>[A-Za-z_]\w*)\s*(?::\s*\w+\s*)?=\s*(?P<value>[^#\n]+?)\s*(?:#.*)?$")
SLOT = re.compile(r"\{([A-Za-z_]\w*)\}")
WRAPPERS = ("Int", "Int32", "UInt32", "Int64", "UInt64", "UInt")
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod}
MAX_FOUND = 6  # occurrences reported per pattern: a file that repeats one more is not a longer report


def matches(code: str, line: str) -> list[dict[str, str]]:
    """Each place in `line` that reads as the manifest's `code`: the text as it is (spaces
    optional around brackets and commas), each {NAME} a balanced expression up to the text
    that follows it. Returns the expression written for each name."""
    pieces = SLOT.split(code)  # literal, name, literal, name, ..., literal
    first = re.compile(_literal(pieces[0]))
    found = []
    for start in first.finditer(line):
        at, got = start.end(), {}
        for k in range(1, len(pieces), 2):
            after = pieces[k + 1].strip()
            end = _expression_end(line, at, after[:1])
            if end is None:
                break
            got[pieces[k]] = line[at:end].strip()
            tail = re.compile(_literal(pieces[k + 1])).match(line, end)
            if tail is None:
                break
            at = tail.end()
        else:
            found.append(got)
    return found


def _expression_end(line: str, at: int, stop: str) -> int | None:
    """Where an expression that starts at `at` ends: at `stop` outside any bracket (the end of
    the line when there is no `stop`); None when a bracket closes first."""
    depth = 0
    for i in range(at, len(line)):
        c = line[i]
        if depth == 0 and stop and c == stop:
            return i
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth < 0:
                return None
    return None if stop else len(line)


def _literal(text: str) -> str:
    return "".join(r"\s*" if c == " " else r"\s*" + re.escape(c) + r"\s*" if c in "[](),"
                   else re.escape(c) for c in text)


def names_of(text: str, constants: dict[str, int]) -> dict[str, int]:
    """The file's `comptime NAME = ...` that work out to whole numbers, with the manifest's constants."""
    known = dict(constants)
    pending = {m["name"]: m["value"] for line in text.splitlines() if (m := COMPTIME.match(line))}
    for _ in range(len(pending) + 1):  # a name may use one defined after it
        for name, value in list(pending.items()):
            found = work_out(value, known)
            if found is not None:
                known[name] = found
                del pending[name]
    return known


def work_out(text: str, names: dict[str, int]) -> int | None:
    """A whole-number expression's value, or None where it is anything else."""
    try:
        return _walk(ast.parse(text.strip(), mode="eval").body, names)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _walk(node, names: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return BINARY[type(node.op)](_walk(node.left, names), _walk(node.right, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_walk(node.operand, names)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS
            and len(node.args) == 1 and not node.keywords):
        return _walk(node.args[0], names)
    raise ValueError("not a whole number known when the code compiles")


def read(puzzle: Puzzle, files: dict[str, str]) -> list[SourceNumber]:
    """Every place in `files` (name -> text) that the manifest's [[source_numbers]] name."""
    found: list[SourceNumber] = []
    for rule in puzzle.source_numbers:
        seen = _read_rule(puzzle, rule, files)
        # Not there at all (the skeleton has no such line yet): said, with the text's numbers.
        found += seen or [SourceNumber(rule.file, 0, rule.code, rule.what,
                                       [Number(name, "", None, value) for name, value in rule.expect.items()])]
    return sorted(found, key=lambda place: (place.file, place.line or 10**9))


def attach(result, puzzle: Puzzle, solutions: bool) -> None:
    """Read the numbers into `result` when nothing here judged the code (`compiled`)."""
    from ..core.results import Status

    if not puzzle.source_numbers or result.status != Status.COMPILED:
        return
    paths = puzzle.solution_files() if solutions else puzzle.learner_files()
    files = {}
    for name, path in zip(puzzle.edit, paths):
        try:
            files[name] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    result.source_numbers = read(puzzle, files)


def _read_rule(puzzle: Puzzle, rule: SourceNumbers, files: dict[str, str]) -> list[SourceNumber]:
    shown: list[SourceNumber] = []
    for name, text in files.items():
        if rule.file and name != rule.file:
            continue
        known = names_of(text, puzzle.constants)
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#"):
                continue  # the instructions quote the pattern too
            for match in matches(rule.code, line.split("#", 1)[0]):
                place = SourceNumber(name, number, line.strip(), rule.what)
                for slot, expected in rule.expect.items():
                    written = match[slot]
                    place.numbers.append(Number(slot, written, work_out(written, known), expected))
                shown.append(place)
                if len(shown) >= MAX_FOUND:
                    return shown
    return shown
