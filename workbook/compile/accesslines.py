"""Which line of the learner's source makes an access, where the compiler's line does not.

The simulator's launcher is an optimised build: where both branches of an `if` store
to the same array (`output[before] = v` / `output[lows + lane - before] = v`), or a
loop body stores to one array in each branch, the compiler merges the stores into one
instruction, and its line table gives that instruction no line of its own, or the
line of the branch (`if low:`), the loop (`for k in ...`) or the next statement
(`barrier()`). Seen in p26 and p30 (issue 40). None of those lines can make the access.

`refine` checks a place against the access the simulator counted there (a load or a
store, to global or shared memory, of a named buffer where known). A line that makes
such an access is kept. Otherwise the statement around it is searched, in the source,
for the lines that do: the body (and `else`) of the branch or loop the compiler named,
else its neighbouring statements, else its enclosing block. One line found is the
place; several (a merged store) are all named, the first as the place; none leaves the
compiler's line marked as approximate. Every moved place keeps the line the compiler
gave, so that the report can say so.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .symbols import Place

MOST = 3  # lines named for one access; past that the statement says nothing useful
SHARED_ARRAY = re.compile(r"\b(?:var\s+)?([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*stack_allocation\b")
INDEXED = re.compile(r"([A-Za-z_]\w*)\s*\[")
# Tensor and pointer methods that load or store (`a.ptr.unsafe_load[width=4](i)`: p35's vectors).
CALLS = re.compile(r"\.(load|store|unsafe_load|unsafe_store|copy_from|copy)\b|\bcopy_dram_to_sram|\basync_copy\b"
                   r"|\batomic|\.fetch_add\b")


@dataclass(frozen=True)
class Access:
    """What the simulator counted at one site: a load or a store, to global or shared memory."""

    space: str  # global | shared
    store: bool


def access_of(site: list) -> Access | None:
    """The access a site made most ([pc, caller, kernel, global reads, global writes,
    shared reads, shared writes, ...]); None where it made none."""
    try:
        global_reads, global_writes, shared_reads, shared_writes = (int(v) for v in site[3:7])
    except (TypeError, ValueError):
        return None
    if global_reads + global_writes + shared_reads + shared_writes == 0:
        return None
    shared = shared_reads + shared_writes > global_reads + global_writes
    reads, writes = (shared_reads, shared_writes) if shared else (global_reads, global_writes)
    return Access("shared" if shared else "global", writes > reads)


def _code(line: str) -> str:
    """A line without its comment."""
    return line.split("#", 1)[0].strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _assignment(code: str) -> tuple[str, str, bool] | None:
    """(target, value, augmented) of an assignment statement (`x[i] = v`, `x[i] += v`), or None."""
    depth = 0
    for i, ch in enumerate(code):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "=" and depth == 0:
            before, after = code[i - 1:i], code[i + 1:i + 2]
            if after == "=" or before in ("=", "!", "<", ">"):
                continue
            augmented = before in "+-*/%&|^" and before != ""
            return code[:i - 1 if augmented else i], code[i + 1:], augmented
    return None


def indexed(code: str) -> list[str]:
    """The names the code indexes (`a` in `a[i]`, `m` in `m[r, k][0]`), not the ones given
    compile-time parameters before a call (`prefix_sum[exclusive=True](x)`, `SIMD[dtype, 4](0)`)."""
    found = []
    for match in INDEXED.finditer(code):
        depth, k = 0, match.end() - 1
        while k < len(code):
            depth += {"[": 1, "]": -1}.get(code[k], 0)
            if depth == 0:
                break
            k += 1
        if not code[k + 1:].lstrip().startswith("("):
            found.append(match.group(1))
    return found


def makes(code: str, access: Access, names: set[str] | None, shared: set[str]) -> bool:
    """Whether a line of code (comment stripped) can make `access`: a store to, or a load of,
    an indexed array that is `names` (any array of the right memory where None)."""
    def fits(name: str) -> bool:
        if names is not None:
            return name in names
        return (name in shared) == (access.space == "shared")

    if CALLS.search(code):  # tensor methods and copies: their buffer is not told by the text
        return names is None or any(name in code for name in names)
    assigned = _assignment(code)
    declared = assigned is not None and assigned[0].lstrip().startswith(("var ", "comptime ", "alias "))
    if access.store:
        return assigned is not None and not declared and any(fits(n) for n in indexed(assigned[0])[:1])
    if assigned is None:
        read = code
    elif declared:
        read = assigned[1]
    else:  # the value, the target's own index, and the target itself where `+=` reads it
        target = assigned[0] if assigned[2] else re.sub(r"^\s*[A-Za-z_]\w*\s*\[", "", assigned[0], count=1)
        read = assigned[1] + " " + target
    return any(fits(n) for n in indexed(read))


def _statement(lines: list[str], at: int) -> list[int]:
    """The 0-based lines of the statement starting at `at`: itself, its body, and for an
    `if` or a loop the `elif`/`else` branches after it."""
    indent = _indent(lines[at])
    found = [at]
    k = at + 1
    while k < len(lines):
        code = _code(lines[k])
        if not code:
            k += 1
            continue
        if _indent(lines[k]) > indent:
            found.append(k)
        elif _indent(lines[k]) == indent and code.startswith(("elif ", "else:", "else :")):
            found.append(k)
        else:
            break
        k += 1
    return found


def _start_of(lines: list[str], at: int) -> int:
    """The line where the statement holding line `at` (an `else:` or `elif`: the whole `if`) starts."""
    indent = _indent(lines[at])
    k = at
    while _code(lines[k]).startswith(("elif ", "else:", "else :")) and k > 0:
        k -= 1
        while k > 0 and (not _code(lines[k]) or _indent(lines[k]) > indent):
            k -= 1
    return k


def _scopes(lines: list[str], at: int) -> list[list[int]]:
    """Where to look, nearest first: the statement the line heads, then the statements just
    before and after it, then the block that holds it (never past the function)."""
    indent = _indent(lines[at])
    own = _statement(lines, _start_of(lines, at))
    scopes = [own]
    neighbours: list[int] = []
    k = own[0] - 1
    while k >= 0 and (not _code(lines[k]) or _indent(lines[k]) > indent):
        k -= 1
    if k >= 0 and _indent(lines[k]) == indent and not _code(lines[k]).startswith(("def ", "fn ")):
        neighbours += _statement(lines, _start_of(lines, k))
    k = own[-1] + 1
    while k < len(lines) and not _code(lines[k]):
        k += 1
    if k < len(lines) and _indent(lines[k]) == indent:
        neighbours += _statement(lines, k)
    scopes.append(sorted(set(neighbours)))
    k = at - 1
    while k >= 0 and (not _code(lines[k]) or _indent(lines[k]) >= indent):
        k -= 1
    if k >= 0:
        scopes.append(_statement(lines, k)[1:])
    return scopes


def _shared_names(lines: list[str]) -> set[str]:
    return {m.group(1) for line in lines for m in SHARED_ARRAY.finditer(_code(line))}


def _branches(lines: list[str], at: int) -> list[int]:
    """The whole `if` (its `elif` and `else` branches too) whose branch holds line `at`; [] if
    the line is in no branch."""
    indent = _indent(lines[at])
    k = at - 1
    while k >= 0 and (not _code(lines[k]) or _indent(lines[k]) >= indent):
        k -= 1
    if k < 0 or not _code(lines[k]).startswith(("if ", "elif ", "else:", "else :")):
        return []
    return _statement(lines, _start_of(lines, k))


def refine(place: Place, lines: list[str], access: Access, name: str = "", lineless: bool = False) -> Place:
    """`place` where its line makes `access` (of the buffer `name`, where known); else the
    lines near it that do, with the compiler's line kept in `given` (see the module's words).
    `lineless`: the compiler gave the instruction no line (`place` is the nearest it gave):
    a line that makes the access is still one of those it may have merged, the same access
    in the other branches of its `if`."""
    if not 0 < place.line <= len(lines):
        return place
    shared = _shared_names(lines)
    names = {name} if name else None
    given = (place.line, place.text, not lineless)
    if makes(_code(lines[place.line - 1]), access, names, shared):
        if not lineless:
            return place
        found = [k for k in _branches(lines, place.line - 1) if makes(_code(lines[k]), access, names, shared)]
        if len(found) < 2 or len(found) > MOST:
            return place
        return dataclasses.replace(place, also=tuple((k + 1, lines[k].strip()) for k in found if k != place.line - 1),
                                   given=(0, "", False))
    for scope in _scopes(lines, place.line - 1):
        found = [k for k in scope if makes(_code(lines[k]), access, names, shared)]
        if found:
            if len(found) > MOST:
                break
            first, *rest = found
            return dataclasses.replace(place, line=first + 1, column=0, text=lines[first].strip(),
                                       also=tuple((k + 1, lines[k].strip()) for k in rest), given=given)
    return dataclasses.replace(place, given=given)
