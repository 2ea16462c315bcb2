"""Skeletons are derived from solutions, so the two can never drift.

A solution file marks each gap:

    # FILL IN: what to write (about N lines)
    #| placeholder code for the skeleton
    ...the solution...
    # END FILL IN
"""

from __future__ import annotations

import re
from pathlib import Path

BEGIN = re.compile(r"^(\s*)# FILL IN\b")
END = re.compile(r"^\s*# END FILL IN\s*$")
PLACEHOLDER = re.compile(r"^(\s*)#\| ?(.*)$")


class MarkerError(ValueError):
    pass


def derive_skeleton(solution: str) -> str:
    """The learner's starting file: instructions and placeholders, no solution."""
    out: list[str] = []
    inside = False
    instruction = False  # still in the comment block that opens the gap
    for number, line in enumerate(solution.splitlines(keepends=True), 1):
        if END.match(line):
            if not inside:
                raise MarkerError(f"line {number}: END FILL IN without FILL IN")
            inside = instruction = False
        elif BEGIN.match(line):
            if inside:
                raise MarkerError(f"line {number}: FILL IN inside another FILL IN")
            inside = instruction = True
            out.append(line)
        elif inside:
            placeholder = PLACEHOLDER.match(line)
            if placeholder:
                instruction = False
                newline = "\n" if line.endswith("\n") else ""
                out.append(placeholder.group(1) + placeholder.group(2) + newline)
            elif instruction and line.lstrip().startswith("#"):
                out.append(line)
            else:
                instruction = False
        else:
            out.append(line)
    if inside:
        raise MarkerError("FILL IN without END FILL IN")
    return "".join(out)


def clean_solution(solution: str) -> str:
    """The solution as a learner should read it: without placeholder and END lines."""
    return "".join(
        line for line in solution.splitlines(keepends=True)
        if not PLACEHOLDER.match(line) and not END.match(line)
    )


def count_gaps(text: str) -> int:
    return sum(1 for line in text.splitlines() if BEGIN.match(line) and not END.match(line))


def skeleton_of(solution: Path) -> str:
    """The skeleton a solution file derives: what the learner starts from."""
    return derive_skeleton(solution.read_text(encoding="utf-8"))


def is_skeleton(learner: Path, text: str) -> bool:
    """True when the learner's file exists and is exactly `text` (a derived skeleton)."""
    return learner.exists() and learner.read_text(encoding="utf-8") == text
