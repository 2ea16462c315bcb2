"""SASS memory instructions per learner's source line, from `nvdisasm -g` (or -gi) output.

tools/ncu_sass.sh runs it on each disassembly. With -gi, nvdisasm writes the whole inline
chain above an instruction, innermost first ('line 193 inlined at ..., line 137', then
'line 137'); the line that matters is the innermost one in the learner's file, so within a
run of '//##' comments the first learner's location wins (taking the last, the kernel's
own line, put every instruction of a kernel on one line: the H200 run's first sass.log).
An instruction predicated `@!PT` never runs (ncu counts none of them) and is left out.

    python3 tools/ncu_sass_lines.py NAME.sass [NAME]
"""

from __future__ import annotations

import re
import sys
from collections import Counter

LOC = re.compile(r'//## File "([^"]*)", line (\d+)(?:.*?inlined at "([^"]*)", line (\d+))?')
OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s*(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
NEVER = "@!PT"  # a predicate that is always false: ptxas's padding (`@!PT LDS RZ, [RZ]` before an LDGSTS), never run
WANTED = re.compile(
    r"^(LDS|STS|LDG|STG|LDGSTS|LDSM|STSM|ATOMS|ATOMG|ATOM|RED|REDG|LD|ST|LDL|STL|LDGDEPBAR|UBLKCP|UTMALDG)(\.|$)"
)
KEPT = ("128", "64", "U8", "S8", "U16", "S16", "E", "CONSTANT")


def is_library(path: str | None) -> bool:
    """The standard library's and MAX's files (relative paths in the line table), not the learner's."""
    return path is None or "/kernels/" in path or path.startswith(("max/", "Mojo/", "std/", "layout/"))


def short_name(ins: str) -> str:
    """LDS.U.128 -> LDS.128: the opcode with the suffixes that say width and path."""
    head, *rest = ins.split(".")
    return ".".join([head] + [p for p in rest if p in KEPT or p.startswith("X")])


def lines_of(text: str) -> dict[tuple[str, int], Counter[str]]:
    """(file, line) -> memory instructions there, by short name."""
    per_line: dict[tuple[str, int], Counter[str]] = {}
    where: tuple[str, int] = ("?", 0)
    in_chain = False  # inside a run of '//##' comments whose learner's line is already taken
    for text_line in text.splitlines():
        m = LOC.search(text_line)
        if m:
            f, line, f2, line2 = m.groups()
            if in_chain:
                continue
            if not is_library(f):
                where, in_chain = (f, int(line)), True
            elif f2 and not is_library(f2):
                where, in_chain = (f2, int(line2)), True
            continue
        in_chain = False
        m = OP.match(text_line)
        if m and WANTED.match(m.group(2)) and (m.group(1) or "").strip() != NEVER:
            per_line.setdefault(where, Counter())[short_name(m.group(2))] += 1
    return per_line


def report(name: str, per_line: dict[tuple[str, int], Counter[str]]) -> str:
    """The per-line table tools/ncu_sass.sh prints: '== NAME', then 'file:line: 2 LDS, 1 LDS.128'."""
    out = [f"== {name}"]
    for (f, line), c in sorted(per_line.items()):
        out.append(f"  {f.split('/')[-1]}:{line}: " + ", ".join(f"{n} {k}" for k, n in sorted(c.items())))
    return "\n".join(out)


def main(argv: list[str]) -> int:
    path = argv[1]
    name = argv[2] if len(argv) > 2 else path.rsplit("/", 1)[-1].removesuffix(".sass")
    with open(path, errors="replace") as fh:
        print(report(name, lines_of(fh.read())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
